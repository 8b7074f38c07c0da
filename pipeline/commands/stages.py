"""`pcg stages`: every stage kind, one line each by family, or one kind in full (what it does,
its inputs, every parameter, the stats it adds), from the stages' own docstrings."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from pipeline.commands.messages import console, user_errors

if TYPE_CHECKING:
    from rich.console import Console

    from pipeline.registry import StageParams


@user_errors
def stages(
    kind: Optional[str] = typer.Argument(
        None, help="Show this stage kind in full: what it does, its inputs and every parameter; a family (maze, dungeon, ...) lists its kinds."
    ),
    recipes: list[Path] = typer.Option([], "--recipe", "-r", help="Also the stages of these recipes' plugins (a file or a folder)."),
) -> None:
    """List every stage kind, one line each by family (`pcg stages KIND`: one in full, FAMILY: one family)."""
    from pipeline import registry
    from pipeline.errors import PipelineError, unknown_kind
    from pipeline.recipe.load import plugin_kinds_of
    from pipeline.stage_summary import family

    kinds = dict(sorted({**registry.kinds(), **plugin_kinds_of(recipes)}.items()))
    shown = console()
    if kind is None:
        _list_kinds(shown, kinds)
        return
    members = {k: c for k, c in kinds.items() if family(k) == kind.rstrip(".")}
    if kind not in kinds and members:
        _list_kinds(shown, members)
        return
    if kind not in kinds:
        known = [*kinds, *dict.fromkeys(family(k) for k in kinds)]  # `pcg stages mazes`: the family meant
        raise PipelineError([unknown_kind(kind, known, "name the recipes that list its plugin: `pcg stages KIND -r recipes/`")])
    _show_kind(shown, kind, kinds[kind])


def _list_kinds(shown: "Console", kinds: dict[str, type["StageParams"]]) -> None:
    """One line per kind, its summary beside it, under a heading per family."""
    from rich.table import Table
    from rich.text import Text

    from pipeline.output import print_table
    from pipeline.stage_summary import family, summary

    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True)
    grid.add_column()
    last = None
    for name, cls in kinds.items():
        if family(name) != last:
            last = family(name)
            grid.add_row(Text(last, "bold"), "")
        plugin = f" (from {cls.defined_in.name})" if cls.defined_in is not None else ""
        # Docstrings are plain text: never let rich read "[w, h]" as markup.
        grid.add_row(Text("  " + name, "cyan"), Text(summary(cls.__doc__) + plugin))
    print_table(shown, grid)
    shown.print()
    shown.print("`pcg stages KIND` shows a kind in full: what it does, its inputs and every parameter.")


def _show_kind(shown: "Console", name: str, cls: type["StageParams"]) -> None:
    import inspect

    from rich.text import Text

    from pipeline import registry

    doc = inspect.cleandoc(cls.__doc__ or "")
    lo, hi = cls.arity
    takes = "no input" if hi == 0 else f"{lo}..{hi} inputs" if lo != hi else f"{lo} input{'s' if lo > 1 else ''}"
    plugin = f", from {cls.defined_in.name}" if cls.defined_in is not None else ""
    shown.print(Text.assemble((name, "bold cyan"), f"  (version {cls.version}, {takes}{plugin})"))
    shown.print(Text("  " + doc.replace("\n", "\n  ")), soft_wrap=True)
    for row in registry.param_rows(cls):
        bounds = f"  ({row['constraints']})" if row["constraints"] else ""
        shown.print(Text.assemble("    ", (row["name"], "green"), f": {row['type']} = {row['default']}{bounds}"))
        if row["doc"]:
            shown.print(Text(f"        {row['doc']}"), soft_wrap=True)
    # The names `order_by`, `where` and `contact_stats` may read after this stage.
    if cls.adds_stats:
        carried = ", and those of its input" if cls.passes_stats and hi else ""
        shown.print(Text(f"  stats it adds: {', '.join(cls.adds_stats)}{carried}"), soft_wrap=True)
