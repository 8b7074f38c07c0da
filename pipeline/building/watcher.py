"""`pcg watch`: rebuild a pack the moment its recipe, or a file it reads, is saved.

One thread takes file-system events (watchdog: inotify and friends, or polling) and marks the
recipes they touch as dirty; the main thread waits until events have been quiet for `debounce`
seconds, then builds each dirty recipe in turn. Builds therefore never overlap, a burst of saves
becomes one build, and a save that lands during a build makes one more build after it.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import tomli

from pipeline.building.builder import Progress
from pipeline.errors import PipelineError, os_error_line
from pipeline.building.executor import Executor
from pipeline.jit import compile_notice
from pipeline.output import counted
from pipeline.building.plan import PackPlan
from pipeline.building.request import BuildRequest
from pipeline.recipe.load import find_recipes, load_recipe
from pipeline.recipe.model import Recipe
from pipeline.recipe.order import RecipeFile, dependents, ordered
from pipeline.building.workspace import Workspace, borrowed, claim_packs

# Files editors write beside the one being saved: swap, backup, lock and temporary files.
# Longest the main thread sleeps between looks for a pending Ctrl+C (see Watcher.next_batch).
SIGNAL_CHECK_S = 0.5

_IGNORED_SUFFIXES = (".swp", ".swo", ".swx", ".swpx", "~", ".tmp", ".bak", ".orig", ".part", ".crdownload", ".kate-swp")


def ignored(path: Path) -> bool:
    name = path.name
    return (
        name.endswith(_IGNORED_SUFFIXES)
        or name.startswith(".#")  # emacs lock
        or (name.startswith("#") and name.endswith("#"))  # emacs autosave
        or name == "4913"  # vim probing whether it may write in the folder
        or (name.startswith(".") and not name.endswith(".toml"))  # hidden temporaries (.foo.toml.XYZ)
    )


@dataclass
class Watcher:
    targets: list[Path]  # recipe files and folders of recipes
    workspace: Workspace
    executor: Executor
    echo: Callable[[str], None]
    debounce: float = 0.1
    on_built: Callable[[Recipe], None] | None = None
    # A progress callback per pack build (maps done so far), as `Workspace.build` takes one.
    started: Callable[[PackPlan], Progress | None] = lambda plan: None
    timeout: float | None = None  # seconds a map may take (`--timeout`)
    deps: dict[Path, set[Path]] = field(default_factory=dict)  # recipe -> files it reads
    globs: dict[Path, list[str]] = field(default_factory=dict)  # recipe -> absolute glob patterns it reads
    loaded: dict[Path, Recipe] = field(default_factory=dict)  # recipe -> its last version that loaded
    _dirty: set[Path] = field(default_factory=set)
    _last_event: float = 0.0
    _wake: threading.Condition = field(default_factory=threading.Condition)
    _stop: bool = False
    builds: int = 0

    # -- what is watched -----------------------------------------------------------------

    def recipes(self) -> list[Path]:
        """The recipe files now: those named, and the *.toml files directly in folders named."""
        return [p.resolve() for p in find_recipes(self.targets) if not ignored(p)]

    def folders(self) -> set[Path]:
        """Folders to watch: those of recipes, and of every file a recipe reads."""
        dirs = {(t if t.is_dir() else t.parent).resolve() for t in self.targets}
        for files in self.deps.values():
            dirs |= {f.parent for f in files}
        for patterns in self.globs.values():
            dirs |= {_glob_folder(p) for p in patterns}
        return {d for d in dirs if d.is_dir()}

    def _is_recipe(self, path: Path) -> bool:
        if path.suffix != ".toml" or ignored(path):
            return False
        for target in self.targets:
            target = target.resolve()
            if path == target or (path.parent == target and target.is_dir()):
                return True
        return False

    # -- events (watchdog's thread) ------------------------------------------------------

    def touched(self, paths: list[str]) -> None:
        dirty = set()
        outputs = (self.workspace.out.resolve(), self.workspace.cache.resolve())
        for raw in paths:
            path = Path(raw).resolve()
            if ignored(path) or any(path.is_relative_to(o) for o in outputs):
                continue
            if self._is_recipe(path):
                dirty.add(path)
            dirty |= {recipe for recipe, files in self.deps.items() if path in files}
            # A file that starts (or stops) matching a glob a stage reads, such as a new prefab.
            dirty |= {recipe for recipe, patterns in self.globs.items() if any(path.match(p) for p in patterns)}
        if dirty:
            with self._wake:
                self._dirty |= dirty
                self._last_event = time.monotonic()
                self._wake.notify()

    def stop(self) -> None:
        with self._wake:
            self._stop = True
            self._wake.notify()

    # -- builds (the main thread) --------------------------------------------------------

    def in_order(self, paths: list[Path]) -> list[Path]:
        """`paths` with every recipe after those whose packs it reads (a cycle's last, where its
        builds refuse them)."""
        files = [RecipeFile.read(p) for p in paths]
        placed, caught = ordered(files, self.workspace.out)
        return [Path(f.path) for f in placed] + [Path(f.path) for f in files if f.path in caught]

    def next_batch(self) -> list[Path] | None:
        """Wait for dirty recipes and `debounce` seconds without events; None once stopped."""
        with self._wake:
            while True:
                if self._stop:
                    return None
                if self._dirty:
                    quiet = time.monotonic() - self._last_event
                    if quiet >= self.debounce:
                        batch, self._dirty = sorted(self._dirty), set()
                        return batch
                    self._wake.wait(self.debounce - quiet)
                else:
                    # Never an endless wait: Ctrl+C may be delivered to one of watchdog's threads,
                    # and Python runs the handler (raising KeyboardInterrupt) only once the main
                    # thread wakes, which a wait without timeout may never do.
                    self._wake.wait(SIGNAL_CHECK_S)

    def build(self, path: Path) -> None:
        """Build one recipe's pack, as `pcg build` would; no error stops the watcher."""
        try:
            self._build(path)
        except PipelineError as exc:
            for line in exc.problems:
                self.echo(f"error: {line}")
        except OSError as exc:  # a full disk or a read-only folder: say so, keep watching
            self.echo(f"error: {_shown(path)}: {os_error_line(exc)}")

    def _build(self, path: Path) -> None:
        with self._wake:
            self._dirty.discard(path)  # built now, after what it reads (see `dependents`)
        shown = _shown(path)
        if not path.is_file():
            self.loaded.pop(path, None)
            self.globs.pop(path, None)
            if self.deps.pop(path, None) is not None:
                self.echo(f"{shown}: removed; no longer watched")
            return
        try:
            recipe = load_recipe(shown)  # named as `pcg build` names it, in messages and the manifest
        except PipelineError:
            # The last good pack stays as it is; the files it read stay watched, so fixing
            # either the recipe or one of them rebuilds.
            self.deps[path] = self.deps.get(path, set()) | _plugin_files(path)
            self.loaded.pop(path, None)
            raise
        cycle = ordered([RecipeFile.read(p) for p in dict.fromkeys([*self.recipes(), path])], self.workspace.out)[1].get(str(path))
        if cycle is not None:
            self.loaded.pop(path, None)
            raise PipelineError([cycle.replace(str(path), shown, 1)])
        plugins = {(path.parent / name).resolve() for name in recipe.pack.plugins}
        self.deps[path] = {(path.parent / f).resolve() for s in recipe.stages for f in s.params.files_read()} | plugins
        self.globs[path] = sorted({str(path.parent.resolve() / g) for s in recipe.stages for g in s.params.globs_read()})
        self.loaded[path] = recipe
        # The same pack-name rule as `pcg build` over the same recipes, in the same order.
        order = {p: i for i, p in enumerate(self.recipes())}
        others = sorted(self.loaded, key=lambda p: (order.get(p, len(order)), str(p)))
        kept, refused = claim_packs([self.loaded[p] for p in others])
        if not any(r is recipe for r in kept):
            raise PipelineError([line for line in refused if line.startswith(f"{recipe.path}:")])
        start = time.perf_counter()
        outcome = self.workspace.build(
            [recipe],
            lambda todo: borrowed(self.executor),
            BuildRequest(timeout=self.timeout),
            waiting=lambda what: self.echo(f"waiting for {what} ..."),
            started=self.started,
            compiling=lambda first_run: self.echo(compile_notice(first_run)),
        )
        self.builds += 1
        took = time.perf_counter() - start
        for line in outcome.problems:
            self.echo(f"error: {line}")
        for line in recipe.warnings() + [w for _, report in outcome.reports for w in report.warnings]:
            self.echo(f"warning: {line}")
        for plan, report in outcome.reports:
            if report.built:
                removed = f"; removed {counted(report.files_removed, 'file')} that no map writes any more" if report.files_removed else ""
                self.echo(
                    f"{recipe.pack.name}: rebuilt {report.built} of {len(plan.maps)} maps in {took:.2f} s"
                    f" ({counted(report.files_written, 'file')} written{removed})"
                )
            elif report.files_removed or report.files_written:
                done = [f"{counted(n, 'file')} {what}" for n, what in ((report.files_written, "written"), (report.files_removed, "removed")) if n]
                self.echo(f"{recipe.pack.name}: {' and '.join(done)} in {took:.2f} s")
            elif not report.failures:
                self.echo(f"{recipe.pack.name}: up to date ({took:.2f} s)")
            for failure in report.failures:
                self.echo(f"error: {failure.recipe}: map {failure.map}: stage {failure.stage}: {failure.message}")
            if self.on_built is not None and not report.failures:
                self.on_built(recipe)
            if not report.up_to_date or report.files_removed:
                self._rebuild_readers(path)

    def _rebuild_readers(self, path: Path) -> None:
        """Mark the recipes that read this recipe's pack (events under exports/ are not watched)
        to build next, after it: their stages read the files as the recipe loads."""
        readers = dependents(path, self.recipes(), self.workspace.out)
        if readers:
            with self._wake:
                self._dirty |= set(readers)
                self._wake.notify()


def run(watcher: Watcher, poll: float | None) -> None:
    """Build every recipe once, then rebuild on changes until stopped (Ctrl+C)."""
    from watchdog.events import FileSystemEvent, FileSystemEventHandler
    from watchdog.observers import Observer
    from watchdog.observers.polling import PollingObserver

    class Handler(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            if event.is_directory or event.event_type in ("opened", "closed_no_write"):
                return
            paths = [event.src_path, getattr(event, "dest_path", "") or ""]
            watcher.touched([str(p) for p in paths if p])

    observer = PollingObserver(timeout=poll) if poll else Observer()
    watched: set[Path] = set()

    def follow() -> None:
        for folder in sorted(watcher.folders() - watched):
            observer.schedule(Handler(), str(folder), recursive=False)
            watched.add(folder)

    # Watch before the first builds, so a save during them is not missed.
    follow()
    observer.start()
    try:
        for path in watcher.in_order(watcher.recipes()):
            watcher.build(path)
        follow()
        shown = ", ".join(_shown(t) for t in watcher.targets)
        count = len(watcher.deps)
        watcher.echo(f"watching {shown} ({count} recipe{'' if count == 1 else 's'}); Ctrl+C to stop")
        while (batch := watcher.next_batch()) is not None:
            for path in watcher.in_order(batch):
                watcher.build(path)
            follow()  # a recipe may now read files in another folder
    finally:
        observer.stop()
        observer.join(timeout=5)


def _plugin_files(path: Path) -> set[Path]:
    """The plugin files a recipe names, read from its TOML even when the recipe does not load (a
    plugin with a syntax error): saving the fixed plugin then rebuilds."""
    try:
        pack = tomli.loads(path.read_text(encoding="utf-8-sig")).get("pack", {})
    except (OSError, UnicodeDecodeError, tomli.TOMLDecodeError):
        return set()
    names = pack.get("plugins", []) if isinstance(pack, dict) else []
    return {(path.parent / n).resolve() for n in names if isinstance(n, str)} if isinstance(names, list) else set()


def _glob_folder(pattern: str) -> Path:
    """The deepest folder of a glob without a wildcard: where its matches appear."""
    folder = Path(pattern).parent
    while any(c in folder.name for c in "*?["):
        folder = folder.parent
    return folder


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)
