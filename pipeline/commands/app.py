"""The `pcg` application: every command registered under its name, in the order `pcg --help`
lists them, and `main`, the entry point the package installs."""

from __future__ import annotations

import typer

from pipeline.commands import (
    build,
    clean,
    explain,
    init,
    pin,
    reroll,
    schema,
    serve,
    show,
    stages,
    stats,
    unpin,
    verify,
    watch,
)
from pipeline.commands import list as list_command
from pipeline.commands.messages import terminate


def _flag_type(self: typer.core.TyperOption, ctx: typer.Context) -> str | None:
    """A flag takes no value: typer shows its type as if it did (`--force <bool>`), and a user
    then types `-q true`, read as a recipe."""
    return None if self.is_flag else _option_type(self, ctx)


# typer's own help panel (the releases that bundle click) has the hook; others show no type.
_option_type = getattr(typer.core.TyperOption, "display_type_rich", None)
if _option_type is not None:
    typer.core.TyperOption.display_type_rich = _flag_type  # type: ignore[method-assign]

app = typer.Typer(
    name="pcg",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

app.command()(build.build)
app.command()(watch.watch)
app.command()(serve.serve)
app.command()(explain.explain)
app.command()(pin.pin)
app.command()(reroll.reroll)
app.command()(unpin.unpin)
app.command()(verify.verify)
app.command()(stats.stats)
app.command("list")(list_command.list_)
app.command()(stages.stages)
app.command()(schema.schema)
app.command()(show.show)
app.command()(clean.clean)
app.command()(init.init)


def _version(value: bool) -> None:
    if value:
        from pipeline import __version__

        print(f"pcg-pipeline {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """Procedural maze and dungeon level packs: TOML recipes in, Tiled maps out."""


def main() -> None:
    import signal

    # `pcg watch` and `pcg serve` set handlers of their own.
    signal.signal(signal.SIGTERM, terminate)
    app()


if __name__ == "__main__":
    main()
