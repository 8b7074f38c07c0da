"""What `pcg build` shows while it works: a bar per pack at a terminal, a line now and then in a log."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

    from pipeline.building.plan import PackPlan

# A pack of this many stale maps or fewer gets its row only once it has taken SLOW seconds: most
# are done before that, and a bar that comes and goes is noise (and stopping its thread costs up
# to a refresh period). A slow one, a big rule program say, would otherwise look hung.
FEW = 4
SLOW = 1.0
# Off a terminal (a CI log) there is no bar: a line of how far a pack has got, this often, so a
# long build shows it is alive (and runners that stop a silent job do not stop it).
LOG_EVERY = 10.0


class PackProgress:
    """Bars of packs being built at a terminal; elsewhere (unless `quiet`) a line now and then."""

    def __init__(self, console: Console, quiet: bool):
        self._bar: Progress | None = None
        self._disabled = quiet or not console.is_terminal
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._console = console
        self._log = not quiet and not console.is_terminal
        self._choice: TaskID | None = None  # the row of a pack.distinct choice still open

    @property
    def bar(self) -> Progress:
        """Made when a pack has maps to build: a build with nothing to do never imports rich's
        progress module (a tenth of a no-change build's time)."""
        if self._bar is None:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            # One console for the bar and the report lines, so rich prints the lines above the bar.
            self._bar = Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
                console=self._console, disable=self._disabled, transient=True,
            )
        return self._bar

    def started(self, plan: PackPlan) -> Callable[[int], None] | None:
        """The pack's progress callback (`Workspace.build`'s `started`). Called once the executor
        is: worker processes are forked before the bar's thread exists."""
        self._cancel()  # a pack before this one that failed to write never finished
        self._chosen()
        total = len(plan.stale_maps)
        if not total:
            return None
        return self._track(plan.recipe.pack.name, total)

    def choosing(self, plan: PackPlan) -> Callable[[int], None] | None:
        """The callback of a pack's `pack.distinct` choice (`Workspace.build`'s `choosing`),
        told of each attempt made; how many it takes is not known ahead."""
        advance = self._track(f"{plan.recipe.pack.name}: choosing distinct maps", None, "attempts made")
        if self._bar is not None and self._bar.tasks and not self._log:
            self._choice = self._bar.tasks[-1].id
        return advance

    def _chosen(self) -> None:
        """The choice's row stops pulsing: its count is its total."""
        if self._choice is not None:
            row = next(row for row in self.bar.tasks if row.id == self._choice)
            self.bar.update(self._choice, total=row.completed)
            self._choice = None

    def _track(self, name: str, total: int | None, unit: str = "maps done") -> Callable[[int], None] | None:
        if self._log:
            return self._logged(name, total, unit)
        if self._disabled:  # -q
            return None
        if total is None or total > FEW:
            task = self._add(name, total, 0)
            return lambda n: self.bar.advance(task, n)
        done = 0
        shown: list[TaskID] = []
        begun = self.bar.get_time()

        def show() -> None:
            with self._lock:
                if self._timer is timer:  # not finished meanwhile
                    shown.append(self._add(name, total, done, begun))

        def advance(n: int) -> None:
            nonlocal done
            with self._lock:
                done += n
                if shown:
                    self.bar.advance(shown[0], n)

        timer = self._timer = threading.Timer(SLOW, show)
        timer.daemon = True
        timer.start()
        return advance

    def _logged(self, name: str, total: int | None, unit: str) -> Callable[[int], None]:
        # On a timer, not as maps finish: a pack of a few slow maps (a big rule program) finishes
        # none for minutes, and would say nothing until the end.
        done = 0

        def tell() -> None:
            with self._lock:
                if self._timer is not timer:  # finished meanwhile
                    return
                line = f"{name}: {done}{'' if total is None else f'/{total}'} {unit} ..."
                again()
            self._console.print(line)  # outside the lock: a slow log must not hold up the build

        def again() -> None:
            nonlocal timer
            timer = self._timer = threading.Timer(LOG_EVERY, tell)
            timer.daemon = True
            timer.start()

        def advance(n: int) -> None:
            nonlocal done
            with self._lock:
                done += n

        timer: threading.Timer | None = None
        with self._lock:
            again()
        return advance

    def finished(self) -> None:
        """The pack being built is done."""
        self._cancel()
        self._chosen()

    def stop(self) -> None:
        self._cancel()
        if self._bar is not None:
            self._bar.stop()

    def _add(self, name: str, total: int | None, done: int, begun: float | None = None) -> TaskID:
        if not self.bar.live.is_started:
            self.bar.start()
        task = self.bar.add_task(name, total=total, completed=done)
        if begun is not None:  # a row shown late counts the time from the pack's start, not its own
            next(row for row in self.bar.tasks if row.id == task).start_time = begun
        return task

    def _cancel(self) -> None:
        with self._lock:
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
