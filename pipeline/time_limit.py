"""`pcg build --timeout`: a map that takes longer than this many seconds fails, instead of a stage
that never ends (a plugin's loop that never meets its exit) holding the build forever.

The limit is an interval timer (SIGALRM) in the process that makes the map: its handler raises
MapTimeout in the stage's Python code. Compiled kernels are not interrupted: the timeout lands
when the kernel returns; the clock stops while a kernel compiles (a first build). Where no timer
can be set (a thread other than the main one: Dask's workers, `pcg serve`'s builds; Windows),
maps run without a limit.
"""

from __future__ import annotations

import contextlib
import math
import signal
import threading
import time
from typing import Any, Iterator


class MapTimeout(BaseException):
    """A map ran past the build's time limit. A BaseException, as KeyboardInterrupt is, so that a
    stage's own `except Exception` cannot swallow it and go on."""

    def __init__(self, seconds: float):
        super().__init__(seconds)
        self.seconds = seconds

    def __str__(self) -> str:
        return f"took longer than {self.seconds:g} s, the build's timeout (a stage that never ends?)"


# Whether a limit runs in this process (set in its main thread only).
_running = False
# The longest limit (11 days): no map means more, and the OS timer's range is finite.
MOST_SECONDS = 1e6


def is_limit(seconds: object) -> bool:
    """Whether `seconds` is a time limit: a number of seconds more than 0, finite."""
    return not isinstance(seconds, bool) and isinstance(seconds, (int, float)) and 0 < seconds < math.inf


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Stop the clock for the block: compiling a kernel (a first build's tens of seconds) is not
    the map's own time."""
    if not _running or threading.current_thread() is not threading.main_thread():
        yield
        return
    left, _ = signal.setitimer(signal.ITIMER_REAL, 0)
    try:
        yield
    finally:
        if left > 0:
            signal.setitimer(signal.ITIMER_REAL, left)


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise MapTimeout in this thread once `seconds` have passed inside the block. A timer the
    caller had set (a script's own alarm) runs on afterwards, less the time the block took."""
    if seconds is None or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return
    global _running
    # None: a handler installed outside Python, which Python cannot put back; the default then.
    previous: Any = signal.getsignal(signal.SIGALRM)
    if previous is None:
        previous = signal.SIG_DFL

    def expired(signum: int, frame: Any) -> None:
        # The timer fires once: put the caller's handler back first, so that however the
        # exception unwinds (even through the finally below) nothing of ours stays installed.
        signal.signal(signal.SIGALRM, previous)
        if _running:
            raise MapTimeout(seconds)

    started = time.monotonic()
    outer = (0.0, 0.0)
    try:
        signal.signal(signal.SIGALRM, expired)
        outer = signal.setitimer(signal.ITIMER_REAL, min(seconds, MOST_SECONDS))
        _running = True
        yield
    finally:
        _running = False
        try:
            signal.setitimer(signal.ITIMER_REAL, 0)
        finally:
            signal.signal(signal.SIGALRM, previous)
            if outer[0] > 0:
                signal.setitimer(signal.ITIMER_REAL, max(outer[0] - (time.monotonic() - started), 1e-3), outer[1])
