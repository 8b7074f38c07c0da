"""`pcg watch`: build the recipes, then rebuild a pack each time its recipe, or a file it reads,
is saved, until Ctrl+C."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, List, Optional

import typer

from pipeline.commands.messages import console, user_errors
from pipeline.commands.options import CACHE, DEBOUNCE, EXPORTS, INTERVAL, JOBS, POLL, TARGETS, TIMEOUT
from pipeline.commands.watching import stamped, watched

if TYPE_CHECKING:
    from pipeline.recipe.model import Recipe


@user_errors
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
    from pipeline.building.request import BuildRequest
    from pipeline.building.watcher import Watcher, run
    from pipeline.building.workspace import Workspace

    request = BuildRequest.checked(watched(targets), jobs=jobs, timeout=timeout)
    echo = stamped(console())

    def shown(recipe: "Recipe") -> None:
        sheet = (out / recipe.pack.name / CONTACT_SHEET).resolve()
        if sheet.is_file():
            echo(f"{recipe.pack.name}: {sheet.as_uri()}")

    # Worker processes are forked before watchdog starts its threads.
    executor = make_executor(request.jobs or default_workers())
    watcher = Watcher(
        list(request.targets), Workspace(out, cache), executor, echo, debounce=debounce, on_built=shown if show else None, timeout=request.timeout
    )
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
