"""`pcg serve`: build and rebuild as `pcg watch` does, and show every pack in a live web
gallery (pipeline.serve) until Ctrl+C."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from pipeline.commands.messages import console, user_errors
from pipeline.commands.options import CACHE, DEBOUNCE, EXPORTS, INTERVAL, JOBS, POLL, TARGETS
from pipeline.commands.watching import stamped, watched


@user_errors
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
    from pipeline.building.workspace import Workspace
    from pipeline.serve.server import serve as serve_gallery

    targets = watched(targets)
    echo = stamped(console())

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
