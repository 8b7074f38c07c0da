"""`pcg serve`: `pcg watch`'s builds on a thread of their own, and the gallery on uvicorn.

The watcher is `pcg watch`'s own (same build policy, debounce and rebuild on save); it tells
the hub what it builds, and records which recipe builds which pack so that the gallery serves
those packs alone and keeps a broken recipe's last good maps on show. uvicorn runs on the main
thread, where it handles Ctrl+C and SIGTERM; stopping it stops the watcher.
"""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path
from typing import Callable

from pipeline.errors import PipelineError
from pipeline.building.executor import Executor
from pipeline.building.plan import PackPlan
from pipeline.serve.app import Site, allowed_hosts, create_app
from pipeline.serve.hub import Hub
from pipeline.building.watcher import Watcher, run
from pipeline.building.workspace import Workspace


class ServeWatcher(Watcher):
    """A Watcher whose builds are news for the gallery."""

    site: Site

    def build(self, path: Path) -> None:
        hub = self.site.hub
        hub.started(str(path))
        try:
            super().build(path)
        finally:
            recipe = self.loaded.get(path)
            if recipe is not None:
                # A pack renamed in the recipe: the old name is no longer this server's.
                for name in [n for n, p in self.site.packs.items() if p == path and n != recipe.pack.name]:
                    del self.site.packs[name]
                self.site.packs[recipe.pack.name] = path
            elif not path.is_file():
                for name in [n for n, p in self.site.packs.items() if p == path]:
                    del self.site.packs[name]
            hub.finished(str(path), recipe.pack.name if recipe else None)


def serve(
    targets: list[Path],
    workspace: Workspace,
    executor: Executor,
    echo: Callable[[str], None],
    host: str,
    port: int,
    poll: float | None = None,
    debounce: float = 0.1,
) -> None:
    """Serve the gallery until Ctrl+C (or SIGTERM); build and rebuild meanwhile."""
    import uvicorn

    # Bound here, before any build: a port in use is one clear line, not a log after the builds.
    try:
        listening = socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET)
    except OSError as exc:
        raise PipelineError([f"--port {port}: cannot listen on {host}:{port} ({os.strerror(exc.errno) if exc.errno else exc}); is another server using it? Pick another with --port"]) from None
    hub = Hub()
    site = Site(out=workspace.out, hub=hub, cache=workspace.cache)

    def told(line: str) -> None:
        hub.line(line)
        echo(line)

    def started(plan: PackPlan) -> Callable[[int], None]:
        done = [0]
        total = len(plan.stale_maps)
        hub.advanced(plan.recipe.pack.name, 0, total)

        def progress(n: int) -> None:
            done[0] += n
            hub.advanced(plan.recipe.pack.name, done[0], total)

        return progress

    watcher = ServeWatcher(targets, workspace, executor, told, debounce=debounce, started=started)
    watcher.site = site
    site.rebuild = lambda recipe: watcher.touched([str(recipe)])
    for path in watcher.recipes():
        site.packs.setdefault(_pack_name(path) or path.stem, path)

    builds = threading.Thread(target=run, args=(watcher, poll), name="pcg-serve-builds", daemon=True)
    config = uvicorn.Config(
        create_app(site, allowed_hosts(host)),
        host=host,
        port=port,
        log_level="warning",
        # Open event streams would otherwise hold the shutdown until they close.
        timeout_graceful_shutdown=1,
        lifespan="off",
    )
    server = uvicorn.Server(config)
    shown = f"[{host}]" if ":" in host else host
    echo(f"serving the gallery at http://{shown}:{port}/ (Ctrl+C to stop)")
    builds.start()
    try:
        server.run(sockets=[listening])
    finally:
        hub.close()
        watcher.stop()
        executor.abort()  # a build under way stops now: its maps keep their earlier files
        builds.join(timeout=30)


def _pack_name(path: Path) -> str | None:
    """The pack a recipe names, before it has been built (a broken recipe: None)."""
    from pipeline.errors import PipelineError
    from pipeline.recipe.load import load_recipe

    try:
        return load_recipe(path).pack.name
    except (PipelineError, OSError):
        return None
