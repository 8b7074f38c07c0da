"""The `pcg` command line. Heavy modules (numpy, numba, pydantic) are imported inside commands so
that `pcg --help` starts fast."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable, List, Optional, TypeVar

import typer

from pipeline.api import open_executor as _executor
from pipeline.output import counted

if TYPE_CHECKING:
    from rich.console import Console

    from pipeline.building.builder import PackReport
    from pipeline.building.dask_executor import DaskOptions
    from pipeline.explanation import PackExplanation
    from pipeline.recipe.pins import Override, SeedChange
    from pipeline.building.plan import PackPlan
    from pipeline.recipe.model import Recipe
    from pipeline.recipe.order import Deferred
    from pipeline.registry import StageParams


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

DEFAULT_RECIPES = Path("recipes")
EXPORTS = typer.Option(Path("exports"), "--out", help="Folder that holds the packs.")
CACHE = typer.Option(Path(".pcg-cache"), "--cache", help="Folder for cached intermediate Levels.")
TARGETS = typer.Argument(None, help="Recipe files, or folders whose *.toml files are recipes (default: recipes/).")
JOBS = typer.Option(None, "--jobs", "-j", min=1, help="Worker processes (default: all cores).")
QUIET = typer.Option(False, "--quiet", "-q", help="Print only errors.")
TIMEOUT = typer.Option(
    None, "--timeout", help="A map that takes longer than this many seconds fails (a stage that never ends); the others still build. Default: no limit."
)
# `pcg watch` and `pcg serve` watch recipes alike.
POLL = typer.Option(False, "--poll", help="Poll for changes instead of OS events (network drives, container mounts).")
INTERVAL = typer.Option(0.25, "--interval", min=0.01, help="Seconds between polls, with --poll.")
DEBOUNCE = typer.Option(0.1, "--debounce", min=0.0, help="Seconds without events before a build starts.")
# Every command that takes a built pack takes it these ways (Workspace.pack_folder).
PACK_HELP = "A built pack: its name under exports/, its folder, its manifest.json, or its recipe."

F = TypeVar("F", bound=Callable[..., object])


def _console(stderr: bool = False) -> "Console":
    from pipeline.output import console

    return console(stderr)


def _fail(problems: list[str]) -> None:
    from rich.markup import escape

    err = _console(stderr=True)
    for line in problems:
        # Messages quote recipes ("[stage.maze]"): escape them so rich shows them, not reads them.
        err.print(f"[red]error:[/red] {escape(line)}", soft_wrap=True)


class Terminated(KeyboardInterrupt):
    """SIGTERM (a CI job cancelled, `kill`), handled as Ctrl+C is: the workers are stopped and
    what the build had not finished is cleaned up, rather than the process vanishing at once."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated()


def _user_errors(fn: F) -> F:
    """Report PipelineErrors as plain lines and exit 1: users see what to fix, not a traceback."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        from pipeline.errors import PipelineError

        try:
            return fn(*args, **kwargs)
        except PipelineError as exc:
            _fail(exc.problems)
            raise typer.Exit(1) from None
        except OSError as exc:  # read-only folders, a full disk, permissions: what, where, no traceback
            from pipeline.errors import os_error_line

            if isinstance(exc, BrokenPipeError) and _stdout_reader_gone():  # `pcg list | head -1`, not a worker's pipe
                from pipeline.output import leave_on_broken_pipe

                leave_on_broken_pipe()

            _fail([os_error_line(exc)])
            raise typer.Exit(1) from None
        except Terminated:
            _console(stderr=True).print("terminated")
            raise typer.Exit(143) from None
        except KeyboardInterrupt:
            _console(stderr=True).print("interrupted")
            raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]


def _stdout_reader_gone() -> bool:
    """Whether standard output is a pipe whose reader went away (`| head`), rather than a broken
    pipe of something else the command used."""
    import os
    import select
    import stat

    try:
        fd = sys.stdout.fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        if not hasattr(select, "poll"):  # no poll (Windows): a pipe, and it broke
            return True
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError):
        return False


def _load_all(targets: list[Path], out: Path, cache: Path) -> tuple[list["Recipe"], list[str]]:
    """Every recipe found under `targets` that loads now, and the problems of the others."""
    from pipeline.recipe.order import Deferred

    items, problems = _load_for_build(targets, out, cache)
    recipes = [r for r in items if not isinstance(r, Deferred)]
    waiting = [
        [*r.problems, f"{r.path}: it reads files of another pack of these recipes, which `pcg build` makes first"]
        for r in items if isinstance(r, Deferred)
    ]
    return recipes, problems + [line for lines in waiting for line in lines]


def _load_for_build(targets: list[Path], out: Path, cache: Path) -> tuple[list["Recipe | Deferred"], list[str]]:
    """Every recipe found under `targets` in the order they build (Deferred: one that loads once
    a pack it reads is built), and the problems of those that do not load."""
    from pipeline.errors import PipelineError
    from pipeline.building.workspace import Workspace

    if targets == [DEFAULT_RECIPES] and not DEFAULT_RECIPES.is_dir():
        raise PipelineError(["no recipes/ folder here: run pcg in your project folder, or name recipe files or folders"])
    return Workspace(out, cache).load(targets)


def _check_maps(recipes: "list[Recipe] | list[Recipe | Deferred]", maps: list[int] | None, key: str = "--map") -> None:
    """Refuse map indices outside any of the packs, each under `key` (the option or argument);
    a recipe not loaded yet (Deferred) is checked as it loads."""
    from pipeline.errors import PipelineError
    from pipeline.recipe.order import Deferred

    if not maps:
        return
    loaded = [r for r in recipes if not isinstance(r, Deferred)]
    bad = [f"{r.path}: {key} {i}: the pack has maps 0..{r.pack.maps - 1}" for r in loaded for i in maps if not 0 <= i < r.pack.maps]
    if bad:
        raise PipelineError(bad)


def _print_report(console: "Console", plan: "PackPlan", report: "PackReport") -> None:
    removed = f"removed {counted(report.files_removed, 'file')} that no map writes any more" if report.files_removed else ""
    if report.up_to_date:
        if removed:
            console.print(f"[bold]{report.name}[/bold]: {removed}", soft_wrap=True)
        return
    runs = report.stage_runs
    ran = ", ".join(f"{s.name} x{runs[s.name]}" for s in plan.recipe.stages if runs[s.name])
    # Runs count stages that finished: a map that failed in its first stage still ran that stage.
    did = f"ran {ran}" if ran else "no stage finished" if report.failures else "ran nothing"
    # With --map the maps planned are a few of the pack's: say so, or "1/1" reads as the whole pack.
    total = plan.recipe.pack.maps
    asked = f" asked for (the pack has {total})" if report.maps < total else ""
    redrawn = f"; {counted(len(plan.redrawn), 'map')} redrawn to stand apart (pack.distinct)" if plan.redrawn else ""
    console.print(
        f"[bold]{report.name}[/bold]: built {report.built}/{report.maps} maps{asked} in {report.seconds:.2f} s"
        f" ({counted(report.files_written, 'file')} written; {did}{redrawn}{'; ' + removed if removed else ''})",
        soft_wrap=True,
    )


@app.command()
@_user_errors
def build(
    targets: List[Path] = TARGETS,
    jobs: Optional[int] = JOBS,
    force: bool = typer.Option(False, "--force", help="Rebuild everything, ignoring the cache and existing files."),
    maps: Optional[List[int]] = typer.Option(None, "--map", help="Build only this map index (repeatable)."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="Run on this Dask cluster (tcp://HOST:PORT); needs Dask (pip install 'dask[distributed]')."),
    dask_local: Optional[int] = typer.Option(None, "--dask-local", min=1, help="Start a Dask LocalCluster of N worker processes and run there."),
    dask_results: Optional[str] = typer.Option(
        None, "--dask-results", help="files: Dask workers write into exports/ (shared disk; default for --dask-local); bytes: they send the files back (default for --scheduler)."
    ),
    wait_for_workers: Optional[float] = typer.Option(
        None, "--wait-for-workers", min=1,
        help="With Dask: give up the maps still out after this many seconds without any worker (default 15; give a cluster that starts workers on demand longer).",
    ),
    cache_max: Optional[str] = typer.Option(
        None, "--cache-max", help="Bound the cache of intermediate Levels: bytes, or K, M, G, T (500M, 2G; 0 keeps none); least recently used go first (default 2G)."
    ),
    strict: bool = typer.Option(
        False, "--strict", help="Warnings are errors (for CI): a recipe with one is not built, and one found while building makes the exit status 1."
    ),
    timeout: Optional[float] = TIMEOUT,
    out: Path = EXPORTS,
    cache: Path = CACHE,
    quiet: bool = QUIET,
) -> None:
    """Build level packs from recipes: only what is stale since the last build."""
    from pipeline.errors import PipelineError

    if scheduler is not None and dask_local:
        raise PipelineError(["--scheduler and --dask-local: give one (a cluster to use, or one to start)"])
    if scheduler is not None:
        from pipeline.building.dask_executor import address_problem

        wrong = address_problem(scheduler)
        if wrong:
            raise PipelineError([wrong])
    if dask_results not in (None, "files", "bytes"):
        raise PipelineError([f"--dask-results: files or bytes (got {dask_results!r})"])
    _check_timeout(timeout)
    if timeout is not None and (scheduler or dask_local):
        _warn(["--timeout: Dask runs maps in its workers' threads, where no timer can stop them: no limit applies"])
    for option, given in (("--dask-results", dask_results), ("--wait-for-workers", wait_for_workers)):
        if given is not None and not (scheduler or dask_local):
            raise PipelineError([f"{option}: only with --scheduler or --dask-local"])
    limit = None
    if cache_max is not None:
        from pipeline.building.cache import parse_size

        try:
            limit = parse_size(cache_max)
        except ValueError as exc:
            raise PipelineError([f"--cache-max: {exc}"]) from None
    recipes, problems = _load_for_build(targets or [DEFAULT_RECIPES], out, cache)
    try:
        _check_maps(recipes, maps)
    except PipelineError as exc:
        raise PipelineError([*exc.problems, "--map: nothing was built, as a pack lacks that map (name the recipes whose packs have it)"]) from None
    dask = None
    if scheduler or dask_local:
        from pipeline.building.dask_executor import NO_WORKERS_TIMEOUT, DaskOptions

        dask = DaskOptions(scheduler, dask_local or 0, dask_results, wait_for_workers or NO_WORKERS_TIMEOUT)  # type: ignore[arg-type]
    _build(recipes, problems, jobs, force, maps, out, cache, quiet, _console(), dask, limit, strict, timeout)


STRICT = " (a warning: not built, as --strict makes warnings errors)"


def _check_timeout(timeout: float | None) -> None:
    from pipeline.errors import PipelineError
    from pipeline.time_limit import is_limit

    if timeout is not None and not is_limit(timeout):
        raise PipelineError([f"--timeout: seconds, more than 0 (got {timeout:g})"])


def _build(
    recipes: "list[Recipe] | list[Recipe | Deferred]", problems: list[str], jobs: int | None, force: bool, maps: list[int] | None,
    out: Path, cache: Path, quiet: bool, console: "Console", dask: "DaskOptions | None" = None,
    cache_max: int | None = None, strict: bool = False, timeout: float | None = None,
) -> None:
    from pipeline.jit import compile_notice
    from pipeline.pack_progress import PackProgress
    from pipeline.recipe.order import Deferred
    from pipeline.building.workspace import Workspace

    warned = [(r, [] if isinstance(r, Deferred) else r.warnings()) for r in recipes]
    if strict:  # a recipe with a warning is refused as one with a problem is: not built
        problems = problems + [line + STRICT for _, lines in warned for line in lines]
        recipes = [r for r, lines in warned if not lines]
    else:
        _warn([line for _, lines in warned for line in lines])
    bars = PackProgress(console, quiet)
    built_warnings: list[str] = []

    def compiling(first_run: bool) -> None:
        # Otherwise a first build sits silent while numba compiles, and looks hung.
        if not quiet:
            console.print(compile_notice(first_run))

    def finished(plan: "PackPlan", report: "PackReport") -> None:
        bars.finished()
        _warn(report.warnings)  # as the recipe's, even with -q
        built_warnings.extend(report.warnings)
        if not quiet:
            _print_report(console, plan, report)

    waiting = (lambda what: None) if quiet else (lambda what: console.print(f"waiting for {what} ..."))
    try:
        outcome = Workspace(out, cache).build(
            recipes, lambda todo: _executor(jobs, todo, dask), force=force, only=sorted(set(maps)) if maps else None,
            cache_max=cache_max, waiting=waiting, started=bars.started, choosing=bars.choosing, finished=finished, compiling=compiling, timeout=timeout,
        )
    finally:
        bars.stop()
    problems = problems + outcome.problems
    if strict and built_warnings:
        n = len(built_warnings)
        problems.append(f"--strict: the {counted(n, 'warning')} above, found while building, {'counts as an error' if n == 1 else 'count as errors'}")
    if outcome.trimmed and outcome.trimmed.removed and not quiet:
        from pipeline.building.cache import format_size

        trimmed = outcome.trimmed
        console.print(f"cache: removed {counted(trimmed.removed, 'least recently used Level')} ({format_size(trimmed.freed)})")
    reports = [report for _, report in outcome.reports]
    if not quiet:
        fresh = [r.name for r in reports if r.up_to_date and not r.files_removed]
        if len(fresh) == len(reports) and not problems:
            console.print(f"Nothing to do: {counted(len(reports), 'pack')} up to date ({counted(sum(r.maps for r in reports), 'map')}).")
        elif fresh:
            console.print(f"Up to date: {', '.join(fresh)}.")
    failures = [f for r in reports for f in r.failures]
    if failures:
        from rich.text import Text

        from pipeline.output import print_table, spans
        from pipeline.output import table as new_table

        err = _console(stderr=True)
        table = new_table(err, f"{counted(len({(f.recipe, f.map) for f in failures}), 'map')} failed")
        for col in ("recipe", "map", "stage", "message"):
            table.add_column(col)
        # A mistake that every map meets (a symbol the tiles lack) is one row, not one per map.
        alike: dict[tuple[str, str, str], list[int]] = {}
        for f in failures:
            alike.setdefault((f.recipe, f.stage, f.message), []).append(f.map)
        for (recipe, stage, message), indices in alike.items():
            table.add_row(Text(recipe), spans(indices), Text(stage), Text(message))
        print_table(err, table)
    if problems:
        _fail(problems)
    if failures or problems:
        raise typer.Exit(1)


def _warn(lines: list[str]) -> None:
    from rich.markup import escape

    for line in lines:
        _console(stderr=True).print(f"[yellow]warning:[/yellow] {escape(line)}", soft_wrap=True)


def _watched(targets: list[Path]) -> list[Path]:
    """What `pcg watch` and `pcg serve` watch: the targets given (default recipes/), each a folder
    or a recipe (a recipe may not exist yet: it is built when it is saved)."""
    from pipeline.errors import PipelineError

    targets = targets or [DEFAULT_RECIPES]
    missing = [t for t in targets if not t.exists() and t.suffix != ".toml"]
    if missing:
        raise PipelineError([f"{t}: no such recipe or folder" for t in missing])
    return targets


def _stamped(console: "Console") -> Callable[[str], None]:
    """Print a watcher's lines with the time of day; `error: ...` lines in red and `warning: ...`
    lines in yellow on stderr, as `pcg build` prints them."""
    import time

    from rich.markup import escape

    def echo(line: str) -> None:
        stamp = time.strftime("%H:%M:%S")
        kind, _, rest = line.partition(": ")
        if kind in ("error", "warning"):
            colour = "red" if kind == "error" else "yellow"
            _console(stderr=True).print(f"{stamp} [{colour}]{kind}:[/{colour}] {escape(rest)}", soft_wrap=True, highlight=False)
        else:
            console.print(f"{stamp} {escape(line)}", soft_wrap=True, highlight=False)

    return echo


@app.command()
@_user_errors
def watch(
    targets: List[Path] = TARGETS,
    jobs: Optional[int] = JOBS,
    poll: bool = POLL,
    interval: float = INTERVAL,
    debounce: float = DEBOUNCE,
    show: bool = typer.Option(False, "--show", help="After each rebuild, print the pack's contact sheet as a file:// link."),
    timeout: Optional[float] = TIMEOUT,
    out: Path = EXPORTS,
    cache: Path = CACHE,
) -> None:
    """Rebuild packs as their recipes, or files they read, are saved; Ctrl+C stops."""
    import signal

    from pipeline.building.contact_sheet import CONTACT_SHEET
    from pipeline.building.executor import default_workers, make_executor
    from pipeline.watch import Watcher, run
    from pipeline.building.workspace import Workspace

    _check_timeout(timeout)
    targets = _watched(targets)
    echo = _stamped(_console())

    def shown(recipe: "Recipe") -> None:
        sheet = (out / recipe.pack.name / CONTACT_SHEET).resolve()
        if sheet.is_file():
            echo(f"{recipe.pack.name}: {sheet.as_uri()}")

    # Worker processes are forked before watchdog starts its threads.
    executor = make_executor(jobs or default_workers())
    watcher = Watcher(targets, Workspace(out, cache), executor, echo, debounce=debounce, on_built=shown if show else None, timeout=timeout)
    signal.signal(signal.SIGTERM, lambda *_: watcher.stop())
    # A shell starts background jobs with SIGINT ignored, and Python then leaves it ignored:
    # `kill -INT` (or Ctrl+C once brought to the foreground) must still stop the watcher.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        run(watcher, interval if poll else None)
    except KeyboardInterrupt:
        pass
    finally:
        executor.close()


@app.command()
@_user_errors
def serve(
    targets: List[Path] = TARGETS,
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on (0.0.0.0: every network; think first)."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="Port to listen on."),
    jobs: Optional[int] = JOBS,
    poll: bool = POLL,
    interval: float = INTERVAL,
    debounce: float = DEBOUNCE,
    out: Path = EXPORTS,
    cache: Path = CACHE,
) -> None:
    """Build and rebuild like `pcg watch`, and show every pack in a live web gallery; Ctrl+C stops."""
    import signal

    from pipeline.building.executor import default_workers, make_executor
    from pipeline.serve.server import serve as serve_gallery
    from pipeline.building.workspace import Workspace

    targets = _watched(targets)
    echo = _stamped(_console())

    # uvicorn stops gracefully on SIGTERM, then raises it again under the handler it found: the
    # default one would end the process there, leaving the worker processes running.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    # Worker processes are forked before any thread starts.
    executor = make_executor(jobs or default_workers())
    try:
        serve_gallery(targets, Workspace(out, cache), executor, echo, host, port, interval if poll else None, debounce)
    except KeyboardInterrupt:  # uvicorn re-raises the Ctrl+C (or SIGTERM) it handled: a normal stop
        pass
    finally:
        executor.close()


@app.command()
@_user_errors
def explain(
    targets: List[Path] = typer.Argument(
        None, help="Recipes or folders of them (default: recipes/), or built packs (a name under exports/, a folder or a manifest.json): the recipe each was built from."
    ),
    maps: Optional[List[int]] = typer.Option(None, "--map", help="Explain only this map index (repeatable)."),
    check: bool = typer.Option(False, "--check", help="Exit 1 if any pack is not up to date (for CI: the exports committed are what the recipes make)."),
    format_: str = typer.Option("table", "--format", help="table (for people) or json (for scripts; docs/commands.md has its shape)."),
    out: Path = EXPORTS,
    cache: Path = CACHE,
) -> None:
    """Show, per stage, whether it is fresh or stale and why, without building anything."""
    from pipeline.errors import PipelineError
    from pipeline.explanation import explain as explain_pack
    from pipeline.explanation import explanations_json
    from pipeline.building.workspace import recipe_of

    if format_ not in ("table", "json"):
        raise PipelineError([f"--format: table or json (got {format_!r})"])
    # A pack, as the other commands take one: a manifest, a pack folder, or a name that is no file.
    paths = [
        recipe_of(t, out, cache) if t.name == "manifest.json" or (t / "manifest.json").is_file() or (not t.exists() and t.suffix != ".toml") else t
        for t in targets or []
    ]
    recipes, problems = _load_all(paths or [DEFAULT_RECIPES], out, cache)
    _check_maps(recipes, maps)
    packs = []
    for k, loaded in enumerate(recipes):
        packs.append(explain_pack(loaded, maps, out, cache))
        if format_ == "table":
            if k:
                _console().print()
            _print_explanation(packs[-1])
            _print_pins(_console(), loaded, packs[-1].seeds)
    if format_ == "json":
        sys.stdout.write(explanations_json(packs))
    stale = [p.pack for p in packs if not p.up_to_date and p.owner is None]
    if check and stale:
        problems.append(f"{', '.join(stale)}: not up to date ({len(stale)} of {counted(len(packs), 'pack')}); `pcg build` makes {'it' if len(stale) == 1 else 'them'}")
    for p in packs if check else []:
        if p.owner is not None:
            problems.append(f"{p.pack}: its folder {p.pack_dir} was built from {p.owner}; `pcg build {p.recipe} --force` gives it to that recipe")
    if problems:
        _fail(problems)
        raise typer.Exit(1)


# The reasons `pcg explain` lists per stage, the commonest first.
SHOWN_REASONS = 3


def _print_explanation(pack: "PackExplanation") -> None:
    from rich.text import Text

    from pipeline.output import print_table, spans
    from pipeline.output import table as new_table

    console = _console()
    table = new_table(console, f"{pack.pack} ({pack.recipe}): {counted(pack.maps, 'map')}")
    for col in ("stage", "kind", "status", "why"):
        table.add_column(col)
    for stage in pack.stages:
        shown = stage.reasons[:SHOWN_REASONS]
        why = "; ".join(r if pack.maps == 1 else f"{r} ({counted(n, 'map')})" for r, n in shown)
        if len(stage.reasons) > SHOWN_REASONS:  # a file per map edited, say: the count tells how far it goes
            why += f"; and {counted(len(stage.reasons) - SHOWN_REASONS, 'other reason')}"
        if stage.cached_maps is not None:
            why = "; ".join(x for x in (why, f"cached for {stage.cached_maps}/{pack.maps} maps") if x)
        status = {"fresh": "[green]fresh[/green]", "stale": f"[yellow]stale[/yellow] {stage.stale_maps}/{pack.maps}"}.get(stage.status, "")
        if stage.status == "unused":
            status, why = "[yellow]unused[/yellow]", "no export stage reads it: it never runs"
        table.add_row(stage.stage, stage.kind, status, Text(why))
    print_table(console, table)
    if pack.owner is not None:
        console.print(f"{pack.pack_dir} was built from {pack.owner}: `pcg build` refuses to replace it without --force.")
    if pack.obsolete:
        shown_maps = f"map {pack.obsolete[0]}" if len(pack.obsolete) == 1 else f"maps {spans(list(pack.obsolete))}"
        console.print(f"The pack no longer has {shown_maps}: `pcg build` removes {'its' if len(pack.obsolete) == 1 else 'their'} files.")
    for rel in pack.edited:
        console.print(f"{pack.pack_dir / rel} was edited since the last build: `pcg build` makes it again.")
    if pack.sheet is not None:
        what = {
            "written": "draws it again (the recipe changed what it shows)",
            "missing": "draws it again (it is missing)",
            "edited": "draws it again (it was edited since the last build)",
            "removed": "removes it",
        }
        console.print(f"{pack.pack_dir / 'contact_sheet.png'}: `pcg build` {what[pack.sheet]}.")
    if pack.rechoose:
        console.print(f"{pack.rechoose}: `pcg build` makes attempts of them, and rebuilds those whose attempt changes.")
    if pack.rebuild:
        console.print(f"`pcg build` would rebuild {len(pack.rebuild)} of {counted(pack.maps, 'map')}.")
    elif pack.owner is None:  # else the line above says what a build would do: refuse
        removes = bool(pack.obsolete) or pack.sheet == "removed"
        remakes = bool(pack.edited) or pack.sheet in ("written", "missing", "edited")
        only = " and ".join(w for w, does in (("remove", removes), ("remake", remakes)) if does)
        if only or not pack.rechoose:
            console.print(f"No stage to run: `pcg build` would only {only} those files." if only else "Up to date: `pcg build` would run no stage.")


def _print_pins(console: "Console", recipe: "Recipe", shown: "tuple[Override, ...]") -> None:
    from pipeline.output import print_table
    from pipeline.output import table as new_table

    if not shown:
        return
    from rich.markup import escape

    # A line, not a table title: a title wraps to the width of this narrow table.
    own = "a seed of its own" if len(shown) == 1 else "seeds of their own"
    console.print(escape(f"{counted(len(shown), 'map')} with {own} in [pack.seeds] (the pack seed is {recipe.pack.seed}):"), soft_wrap=True)
    table = new_table(console)
    for col in ("map", "seed", "how"):
        table.add_column(col)
    for o in shown:
        table.add_row(str(o.map), str(o.seed), o.how + ("" if o.in_pack else f" (unused: the pack has {recipe.pack.maps} maps)"))
    print_table(console, table)


MAP_ARG = typer.Argument(..., metavar="MAP", help="The map's index in the pack (0 is the first); several for several maps.")
PACK_OR_RECIPE = typer.Argument(..., help=PACK_HELP + " A pack leads to the recipe its manifest records.")


def _maps_of(pack: Path, map_indices: list[int], out: Path, cache: Path) -> tuple[Path, list[int]]:
    """The recipe of `pack` and the maps named, each once, all checked before any is edited."""
    from pipeline.building.workspace import recipe_of
    from pipeline.recipe.load import load_recipe

    path = recipe_of(pack, out, cache)
    _check_maps([load_recipe(path)], map_indices, key="map")
    return path, list(dict.fromkeys(map_indices))


def _seed_edited(change: "SeedChange", what: str) -> None:
    from rich.markup import escape

    where = escape(change.recipe)
    if not change.written:
        if change.rerolls:
            state = f"is already re-rolled ({change.rerolls}x) to {change.seed}"
        else:
            state = f"is already pinned at {change.seed}" if change.pinned else f"already follows the pack seed ({change.seed})"
        _console().print(f"{where}: map {change.map} {state}; nothing changed", soft_wrap=True)
        return
    seeds = f"seed {change.seed}" if change.before == change.seed else f"seed {change.before} -> {change.seed}"
    _console().print(f"{where}: map {change.map} {what} ({seeds})", soft_wrap=True)


@app.command()
@_user_errors
def pin(
    pack: Path = PACK_OR_RECIPE,
    map_indices: List[int] = MAP_ARG,
    seed: Optional[int] = typer.Option(None, "--seed", help="Pin this seed rather than the map's current one."),
    out: Path = EXPORTS,
    cache: Path = CACHE,
) -> None:
    """Freeze maps' seeds into the recipe (\\[pack.seeds]), so a new pack seed leaves those maps as they are."""
    from pipeline.recipe.pins import pin as pin_map

    path, indices = _maps_of(pack, map_indices, out, cache)
    for map_index in indices:
        _seed_edited(pin_map(path, map_index, seed), "pinned")


@app.command()
@_user_errors
def reroll(
    pack: Path = PACK_OR_RECIPE,
    map_indices: List[int] = MAP_ARG,
    build_: bool = typer.Option(False, "--build", help="Then build the pack (only those maps are stale)."),
    jobs: Optional[int] = JOBS,
    out: Path = EXPORTS,
    cache: Path = CACHE,
) -> None:
    """Give maps new seeds, written into the recipe (\\[pack.seeds]); the other maps keep theirs."""
    from pipeline.recipe.pins import reroll as reroll_map
    from pipeline.recipe.load import load_recipe

    path, indices = _maps_of(pack, map_indices, out, cache)
    for map_index in indices:
        change = reroll_map(path, map_index)
        _seed_edited(change, f"re-rolled ({change.rerolls}x)")
    if build_:
        _build([load_recipe(path)], [], jobs, False, None, out, cache, False, _console())


@app.command()
@_user_errors
def unpin(
    pack: Path = PACK_OR_RECIPE,
    map_indices: List[int] = MAP_ARG,
    out: Path = EXPORTS,
    cache: Path = CACHE,
) -> None:
    """Remove maps' seeds from the recipe (\\[pack.seeds]): they follow the pack seed again."""
    from pipeline.recipe.pins import unpin as unpin_map

    path, indices = _maps_of(pack, map_indices, out, cache)
    for map_index in indices:
        _seed_edited(unpin_map(path, map_index), "unpinned")


@app.command()
@_user_errors
def verify(
    packs: List[Path] = typer.Argument(None, help=PACK_HELP + " Several, or none: every pack under --out."),
    jobs: Optional[int] = JOBS,
    quiet: bool = QUIET,
    out: Path = EXPORTS,
) -> None:
    """Rebuild packs from their manifests in a temporary folder and compare every file's sha256."""
    from pipeline.errors import PipelineError
    from pipeline.building.manifest import MANIFEST
    from pipeline.building.workspace import Workspace

    workspace = Workspace(out, CACHE.default)
    folders = [workspace.pack_folder(pack) for pack in packs or []]
    if not packs:
        folders = sorted(f.parent for f in out.glob(f"*/{MANIFEST}")) if out.is_dir() else []
        if not folders:
            raise PipelineError([f"{out}: no built pack to verify (build one with pcg build, or name a pack)"])
    folders = list(dict.fromkeys(folders))
    problems: list[str] = []
    for folder in folders:
        # Several packs' problems are printed together: each line names its pack.
        named = (lambda line: f"{folder}: {line}") if len(folders) > 1 else (lambda line: line)
        try:
            problems += _verify(folder, jobs, quiet, named)
        except PipelineError as exc:  # its recipe no longer loads, say: the other packs are still verified
            problems += [named(line) for line in exc.problems]
    if problems:
        _fail(problems)
        raise typer.Exit(1)


def _verify(folder: Path, jobs: int | None, quiet: bool, named: Callable[[str], str]) -> list[str]:
    """Verify one pack: its warnings printed here, its problems returned (the caller prints
    them with the other packs'), each line as `named` puts it."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from pipeline.building.executor import default_workers
    from pipeline.building.manifest import MANIFEST, load_manifest
    from pipeline.building.verify import verify_pack

    console = _console()
    maps = len(load_manifest(folder / MANIFEST)["maps"])
    with Progress(
        TextColumn(f"verifying {folder.name}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        # Off a terminal (logs, CI) a bar only leaves a blank line behind.
        console=console, disable=quiet or not console.is_terminal, transient=True,
    ) as bar:
        task = bar.add_task("verify", total=maps)
        result = verify_pack(folder / MANIFEST, jobs or default_workers(), lambda n: bar.advance(task, n))
    _warn([named(line) for line in result.warnings])
    if not result.problems and not quiet:
        console.print(f"[green]OK[/green]: {folder.name}: all {counted(result.files, 'file')} of {counted(result.maps, 'map')} rebuild byte for byte.")
    return [named(line) for line in result.problems]


@app.command()
@_user_errors
def stats(
    pack: Path = typer.Argument(
        ..., help="A recipe (its pack is built first if stale), or a built pack: its name under exports/, its folder or its manifest.json."
    ),
    format_: str = typer.Option("table", "--format", help="table (for people), csv or json (for scripts; docs/commands.md has their shapes)."),
    threshold: Optional[float] = typer.Option(
        None, "--threshold", min=0.0, max=1.0,
        help="Diversity: a map at least this far (share of tiles, or of the way) from every other map counts as distinct. Default: the pack's distinct, else 0.1.",
    ),
    jobs: Optional[int] = JOBS,
    out: Path = EXPORTS,
    cache: Path = CACHE,
) -> None:
    """Statistics of a pack: mean and spread per stage over its maps, and how varied its maps are.

    Stages whose Level an export stage writes are measured: their stats (dead ends, solution
    length, diameter, loops, straightness for mazes, see docs/mazes.md; critical_path and
    backtrack for locks), and their diversity: each map's distance to the nearest other map, by
    tiles and by the way from spawn to exit (docs/gameplay.md).
    """
    from pipeline.errors import PipelineError
    from pipeline.building.manifest import MANIFEST, load_manifest
    from pipeline.output import print_table
    from pipeline.output import table as new_table
    from pipeline.building.cache import LevelCache
    from pipeline.building.measures import pack_measures, threshold_of
    from pipeline.report import stage_kinds, stage_stats, stats_csv, stats_json
    from pipeline.building.workspace import Workspace

    if format_ not in ("table", "csv", "json"):
        raise PipelineError([f"--format: table, csv or json (got {format_!r})"])
    console = _console()
    if pack.suffix == ".toml":
        from pipeline.recipe.load import load_recipe

        _build([load_recipe(pack)], [], jobs, False, None, out, cache, True, console)
    folder = Workspace(out, cache).pack_folder(pack)
    manifest = load_manifest(folder / MANIFEST)
    summary = stage_stats(manifest)
    if not summary:
        raise PipelineError([f"{pack}: no stage of this pack has statistics (only stages that an export stage writes are measured)"])
    threshold = threshold_of(manifest) if threshold is None else threshold
    measured, unmeasured = pack_measures(manifest, LevelCache(cache), threshold)
    if format_ != "table":
        sys.stdout.write(stats_json(manifest, measured) if format_ == "json" else stats_csv(manifest))
        return
    keys = list(dict.fromkeys(k for table in summary.values() for k in table))
    table = new_table(console, f"{manifest['pack']['name']}: mean ± sd over {len(manifest['maps'])} maps")
    table.add_column("stage")
    table.add_column("kind")
    for key in keys:
        table.add_column(key, justify="right")
    kinds = stage_kinds(manifest)
    for name, values in summary.items():
        cells = [f"{_plain(values[k][0], 4)} ± {_plain(values[k][1], 2)}" if k in values else "" for k in keys]
        table.add_row(name, kinds.get(name, "?"), *cells)
    print_table(console, table)
    if any(m.spreads for m in measured.values()):
        table = new_table(console, f"diversity: distance to the nearest other map; distinct: >= {threshold:g} from all")
        for col in ("stage", "measure", "min", "median", "max", "distinct"):
            table.add_column(col, justify="left" if col in ("stage", "measure") else "right")
        for name, found in measured.items():
            for spread in found.spreads:
                d = spread.summary()
                table.add_row(name, spread.measure, *(f"{d[k]:.3f}" for k in ("min", "median", "max")), f"{d['distinct']:.0%}")
        print_table(console, table)
    for name, found in measured.items():
        if found.judged:
            console.print(f"{name}: {found.solvable} of {found.judged} maps can be finished (exit reached from the spawn, keys and locks respected)")
    for line in unmeasured:
        console.print(f"diversity not measured: {line}")


def _plain(x: float, digits: int) -> str:
    """`x` to about `digits` significant digits, never in exponent form (160, not 1.6e+02)."""
    import math

    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    text = f"{x:.{max(0, digits - 1 - math.floor(math.log10(abs(x))))}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


@app.command("list")
@_user_errors
def list_(
    targets: List[Path] = TARGETS,
    out: Path = EXPORTS,
    cache: Path = CACHE,
) -> None:
    """List the recipes with their pack, size, stages and build state."""
    from rich.text import Text

    from pipeline.building.builder import Builder
    from pipeline.building.cache import LevelCache
    from pipeline.output import print_table
    from pipeline.output import table as new_table

    from pipeline.recipe.order import Deferred, pack_name, upstream

    recipes, problems = _load_for_build(targets or [DEFAULT_RECIPES], out, cache)
    builder = Builder(exports_root=out, cache=LevelCache(cache))
    console = _console()
    table = new_table(console)
    for col in ("recipe", "pack", "maps", "stages", "state"):
        table.add_column(col, overflow="fold")
    after = upstream(recipes, out)
    by_path = {r.path: r for r in recipes}
    for recipe in recipes:
        # A recipe that reads other packs of the run builds after them, and loads only then.
        reads = ", ".join(pack_name(by_path[p]) for p in after[recipe.path])
        if isinstance(recipe, Deferred):
            table.add_row(Text(recipe.path), recipe.pack_name, "", "", f"[yellow]loads once {reads} is built[/yellow]")
            continue
        plan = builder.plan(recipe)
        stale = len(plan.stale_maps)
        state = "[green]up to date[/green]" if not stale else f"[yellow]{stale} stale[/yellow]"
        state += f" (builds after {reads})" if reads else ""
        table.add_row(Text(recipe.path), recipe.pack.name, str(recipe.pack.maps), ", ".join(s.name for s in recipe.stages), state)
    print_table(console, table)
    if problems:
        _fail(problems)
        raise typer.Exit(1)


@app.command()
@_user_errors
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
    from pipeline.summary import family

    kinds = dict(sorted({**registry.kinds(), **plugin_kinds_of(recipes)}.items()))
    console = _console()
    if kind is None:
        _list_kinds(console, kinds)
        return
    members = {k: c for k, c in kinds.items() if family(k) == kind.rstrip(".")}
    if kind not in kinds and members:
        _list_kinds(console, members)
        return
    if kind not in kinds:
        known = [*kinds, *dict.fromkeys(family(k) for k in kinds)]  # `pcg stages mazes`: the family meant
        raise PipelineError([unknown_kind(kind, known, "name the recipes that list its plugin: `pcg stages KIND -r recipes/`")])
    _show_kind(console, kind, kinds[kind])


def _list_kinds(console: "Console", kinds: dict[str, type["StageParams"]]) -> None:
    """One line per kind, its summary beside it, under a heading per family."""
    from rich.table import Table
    from rich.text import Text

    from pipeline.output import print_table
    from pipeline.summary import family, summary

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
    print_table(console, grid)
    console.print()
    console.print("`pcg stages KIND` shows a kind in full: what it does, its inputs and every parameter.")


def _show_kind(console: "Console", name: str, cls: type["StageParams"]) -> None:
    import inspect

    from rich.text import Text

    from pipeline import registry

    doc = inspect.cleandoc(cls.__doc__ or "")
    lo, hi = cls.arity
    takes = "no input" if hi == 0 else f"{lo}..{hi} inputs" if lo != hi else f"{lo} input{'s' if lo > 1 else ''}"
    plugin = f", from {cls.defined_in.name}" if cls.defined_in is not None else ""
    console.print(Text.assemble((name, "bold cyan"), f"  (version {cls.version}, {takes}{plugin})"))
    console.print(Text("  " + doc.replace("\n", "\n  ")), soft_wrap=True)
    for row in registry.param_rows(cls):
        bounds = f"  ({row['constraints']})" if row["constraints"] else ""
        console.print(Text.assemble("    ", (row["name"], "green"), f": {row['type']} = {row['default']}{bounds}"))
        if row["doc"]:
            console.print(Text(f"        {row['doc']}"), soft_wrap=True)
    # The names `order_by`, `where` and `contact_stats` may read after this stage.
    if cls.adds_stats:
        carried = ", and those of its input" if cls.passes_stats and hi else ""
        console.print(Text(f"  stats it adds: {', '.join(cls.adds_stats)}{carried}"), soft_wrap=True)


@app.command()
@_user_errors
def schema(
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write here instead of standard output."),
    recipes: list[Path] = typer.Option([], "--recipe", "-r", help="Also the stages of these recipes' plugins (a file or a folder)."),
) -> None:
    """Write the JSON Schema of recipes, for editors that validate and complete TOML (see docs/recipes.md)."""
    import json

    from pipeline.fsio import atomic_write
    from pipeline.recipe.load import plugin_kinds_of
    from pipeline.recipe.schema import recipe_schema

    text = json.dumps(recipe_schema(plugin_kinds_of(recipes)), indent=2) + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        atomic_write(output, text.encode("utf-8"))


@app.command()
@_user_errors
def show(
    pack: Path = typer.Argument(..., help=PACK_HELP),
    open_: Optional[bool] = typer.Option(
        None, "--open/--no-open", help="Open the contact sheet in the image viewer (default: when there is a desktop)."
    ),
    out: Path = EXPORTS,
) -> None:
    """Print where a pack's contact sheet is (a thumbnail of every map with its stats) and open it."""
    import os
    import shutil
    import subprocess
    import sys

    from pipeline.building.contact_sheet import CONTACT_SHEET
    from pipeline.errors import PipelineError
    from pipeline.building.workspace import Workspace

    folder = Workspace(out, CACHE.default).pack_folder(pack)
    sheet = folder / CONTACT_SHEET
    if not sheet.is_file():
        raise PipelineError([f"{folder}: no {CONTACT_SHEET} (the pack has no previews, or its recipe sets contact_sheet = false)"])
    _console().print(str(sheet), soft_wrap=True)
    desktop = sys.platform in ("darwin", "win32") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if not (desktop if open_ is None else open_):
        return
    if not desktop:  # --open asked for, and no screen to show it on: xdg-open would fail unseen
        _warn([f"--open: no desktop here (neither DISPLAY nor WAYLAND_DISPLAY is set), so {sheet} was not opened"])
        return
    if sys.platform == "win32":
        os.startfile(sheet)  # type: ignore[attr-defined]
        return
    viewer = shutil.which("open" if sys.platform == "darwin" else "xdg-open")
    if viewer is None:
        raise PipelineError([f"cannot open {sheet}: no {'open' if sys.platform == 'darwin' else 'xdg-open'} on this machine"])
    subprocess.Popen([viewer, str(sheet)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


@app.command()
@_user_errors
def clean(
    packs: List[Path] = typer.Argument(None, help="Also delete these packs: names under exports/, pack folders, their manifest.json or recipes."),
    all_packs: bool = typer.Option(False, "--all", help="Also delete every pack folder (those with a manifest.json)."),
    out: Path = EXPORTS,
    cache: Path = CACHE,
) -> None:
    """Delete the cache of intermediate Levels (and, if asked, built packs)."""
    from pipeline.building.workspace import Workspace

    console = _console()
    removed = Workspace(out, cache).clean(packs or [], all_packs, waiting=lambda: console.print("waiting for running builds to finish ..."))
    for path in removed:
        console.print(f"removed {path}/", soft_wrap=True)
    if not removed:
        console.print("Nothing to clean.")


@app.command()
@_user_errors
def init(
    folder: Path = typer.Argument(Path("."), help="Where the project goes (made if missing); by default here."),
    examples: bool = typer.Option(False, "--examples", help="Also every example recipe (and the maps, prefabs, rules and plugins they read)."),
) -> None:
    """Start a project: a starter recipe, tilesets, the recipe schema and a Makefile; overwrites nothing."""
    from pipeline.scaffold import init_project

    written = init_project(folder, examples)
    console = _console()
    recipes = sum(1 for name in written if name.startswith("recipes/") and name.endswith(".toml"))
    console.print(f"Made a project in {folder}/ ({len(written)} files, {recipes} recipe{'s' if recipes != 1 else ''}).", soft_wrap=True)
    where = "" if folder == Path(".") else f"cd {folder} && "
    console.print(f"Next: {where}make maps    (or: pcg build recipes/), then open exports/starter/map_000.tmx in Tiled.", soft_wrap=True)


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
    signal.signal(signal.SIGTERM, _terminate)
    app()


if __name__ == "__main__":
    main()
