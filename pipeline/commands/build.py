"""`pcg build`: make the packs of recipes, only what is stale since the last build, and say what
was done; `run_build` is the same build for the commands that build on the way (`pcg reroll
--build`, `pcg stats RECIPE`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, List, Optional

import typer

from pipeline.api import open_executor
from pipeline.commands.messages import console, fail, user_errors, warn
from pipeline.commands.options import CACHE, EXPORTS, JOBS, QUIET, TARGETS, TIMEOUT
from pipeline.output import counted

if TYPE_CHECKING:
    from rich.console import Console

    from pipeline.building.builder import Failure, PackReport
    from pipeline.building.dask_executor import DaskOptions
    from pipeline.building.plan import PackPlan
    from pipeline.building.request import BuildRequest
    from pipeline.building.workspace import Workspace
    from pipeline.recipe.model import Recipe
    from pipeline.recipe.order import Deferred

STRICT = " (a warning: not built, as --strict makes warnings errors)"


@user_errors
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
    from pipeline.building.request import BuildRequest
    from pipeline.building.workspace import Workspace

    dask = _dask_options(scheduler, dask_local, dask_results, wait_for_workers)
    request = BuildRequest.checked(targets, jobs=jobs, force=force, maps=maps, cache_max=cache_max, timeout=timeout)
    if timeout is not None and dask is not None:
        warn(["--timeout: Dask runs maps in its workers' threads, where no timer can stop them: no limit applies"])
    workspace = Workspace(out, cache)
    recipes, problems = workspace.requested(request)
    run_build(workspace, recipes, problems, request, quiet, console(), dask, strict)


def _dask_options(scheduler: str | None, local: int | None, results: str | None, wait: float | None) -> "DaskOptions | None":
    """The Dask cluster the options ask for, checked; None: the build runs in local processes."""
    from pipeline.errors import PipelineError

    if scheduler is not None and local:
        raise PipelineError(["--scheduler and --dask-local: give one (a cluster to use, or one to start)"])
    if scheduler is not None:
        from pipeline.building.dask_executor import address_problem

        wrong = address_problem(scheduler)
        if wrong:
            raise PipelineError([wrong])
    if results not in (None, "files", "bytes"):
        raise PipelineError([f"--dask-results: files or bytes (got {results!r})"])
    for option, given in (("--dask-results", results), ("--wait-for-workers", wait)):
        if given is not None and not (scheduler or local):
            raise PipelineError([f"{option}: only with --scheduler or --dask-local"])
    if not (scheduler or local):
        return None
    from pipeline.building.dask_executor import NO_WORKERS_TIMEOUT, DaskOptions

    return DaskOptions(scheduler, local or 0, results, wait or NO_WORKERS_TIMEOUT)  # type: ignore[arg-type]


def run_build(
    workspace: "Workspace", recipes: "list[Recipe] | list[Recipe | Deferred]", problems: list[str], request: "BuildRequest",
    quiet: bool, shown: "Console", dask: "DaskOptions | None" = None, strict: bool = False,
) -> None:
    """Build `recipes` as `request` asks, printing progress, each pack's report, the warnings
    and the failures; exit 1 if a map failed or there is a problem (the `problems` of loading
    among them)."""
    from pipeline.commands.pack_progress import PackProgress
    from pipeline.jit import compile_notice
    from pipeline.recipe.order import Deferred

    warned = [(r, [] if isinstance(r, Deferred) else r.warnings()) for r in recipes]
    if strict:  # a recipe with a warning is refused as one with a problem is: not built
        problems = problems + [line + STRICT for _, lines in warned for line in lines]
        recipes = [r for r, lines in warned if not lines]
    else:
        warn([line for _, lines in warned for line in lines])
    bars = PackProgress(shown, quiet)
    built_warnings: list[str] = []

    def compiling(first_run: bool) -> None:
        # Otherwise a first build sits silent while numba compiles, and looks hung.
        if not quiet:
            shown.print(compile_notice(first_run))

    def finished(plan: "PackPlan", report: "PackReport") -> None:
        bars.finished()
        warn(report.warnings)  # as the recipe's, even with -q
        built_warnings.extend(report.warnings)
        if not quiet:
            _print_report(shown, plan, report)

    waiting = (lambda what: None) if quiet else (lambda what: shown.print(f"waiting for {what} ..."))
    try:
        outcome = workspace.build(
            recipes, lambda todo: open_executor(request.jobs, todo, dask), request,
            waiting=waiting, started=bars.started, choosing=bars.choosing, finished=finished, compiling=compiling,
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
        shown.print(f"cache: removed {counted(trimmed.removed, 'least recently used Level')} ({format_size(trimmed.freed)})")
    reports = [report for _, report in outcome.reports]
    if not quiet:
        fresh = [r.name for r in reports if r.up_to_date and not r.files_removed]
        if len(fresh) == len(reports) and not problems:
            shown.print(f"Nothing to do: {counted(len(reports), 'pack')} up to date ({counted(sum(r.maps for r in reports), 'map')}).")
        elif fresh:
            shown.print(f"Up to date: {', '.join(fresh)}.")
    failures = [f for r in reports for f in r.failures]
    if failures:
        _print_failures(failures)
    if problems:
        fail(problems)
    if failures or problems:
        raise typer.Exit(1)


def _print_report(shown: "Console", plan: "PackPlan", report: "PackReport") -> None:
    removed = f"removed {counted(report.files_removed, 'file')} that no map writes any more" if report.files_removed else ""
    if report.up_to_date:
        if removed:
            shown.print(f"[bold]{report.name}[/bold]: {removed}", soft_wrap=True)
        return
    runs = report.stage_runs
    ran = ", ".join(f"{s.name} x{runs[s.name]}" for s in plan.recipe.stages if runs[s.name])
    # Runs count stages that finished: a map that failed in its first stage still ran that stage.
    did = f"ran {ran}" if ran else "no stage finished" if report.failures else "ran nothing"
    # With --map the maps planned are a few of the pack's: say so, or "1/1" reads as the whole pack.
    total = plan.recipe.pack.maps
    asked = f" asked for (the pack has {total})" if report.maps < total else ""
    redrawn = f"; {counted(len(plan.redrawn), 'map')} redrawn to stand apart (pack.distinct)" if plan.redrawn else ""
    shown.print(
        f"[bold]{report.name}[/bold]: built {report.built}/{report.maps} maps{asked} in {report.seconds:.2f} s"
        f" ({counted(report.files_written, 'file')} written; {did}{redrawn}{'; ' + removed if removed else ''})",
        soft_wrap=True,
    )


def _print_failures(failures: "list[Failure]") -> None:
    from rich.text import Text

    from pipeline.output import print_table, spans
    from pipeline.output import table as new_table

    err = console(stderr=True)
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
