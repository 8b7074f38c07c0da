"""Locks under the cache's `locks/` folder: one build of a pack at a time (two `pcg build`s of
the same pack would interleave their files and each write a manifest that misses the other's
maps), and no cleaning while any build uses the cache.

Every build holds the cache lock shared and its packs' locks exclusive; `pcg clean` holds the
cache lock exclusive, so it waits for running builds and builds wait for it. Lock files are
never deleted: a process blocked on a deleted lock file would go on with a lock nobody else sees.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Callable, Iterator

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; builds are not serialised there
    fcntl = None  # type: ignore[assignment]

LOCKS = "locks"
# Pack names start with a letter or digit, so no pack lock (PACK.lock) can be this one.
CACHE_LOCK = ".cache.lock"


@contextlib.contextmanager
def pack_locks(lock_dir: Path, packs: list[str], waiting: Callable[[str], None]) -> Iterator[None]:
    """Hold the cache lock shared and an exclusive lock per pack (in sorted order, so two builds
    cannot deadlock); before blocking, `waiting(what)` is told what it waits for ("another pcg
    build of PACK", "pcg clean to finish")."""
    with contextlib.ExitStack() as stack:
        if fcntl is not None:
            lock_dir.mkdir(parents=True, exist_ok=True)
            _lock(stack, lock_dir / CACHE_LOCK, fcntl.LOCK_SH, lambda: waiting("pcg clean to finish"))
            for pack in sorted(set(packs)):
                _lock(stack, lock_dir / f"{pack}.lock", fcntl.LOCK_EX, lambda pack=pack: waiting(f"another pcg build of {pack}"))  # type: ignore[misc]
        yield


@contextlib.contextmanager
def cache_lock(lock_dir: Path, waiting: Callable[[], None]) -> Iterator[None]:
    """Hold the cache lock exclusive: no build of any pack runs meanwhile."""
    with contextlib.ExitStack() as stack:
        if fcntl is not None:
            lock_dir.mkdir(parents=True, exist_ok=True)
            _lock(stack, lock_dir / CACHE_LOCK, fcntl.LOCK_EX, waiting)
        yield


def _lock(stack: contextlib.ExitStack, path: Path, mode: int, waiting: Callable[[], None]) -> None:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    stack.callback(os.close, fd)
    # Unlocked explicitly before the close: worker processes forked meanwhile (a process pool
    # restarted mid-build) hold copies of the descriptor, and would keep the lock until they exit.
    stack.callback(fcntl.flock, fd, fcntl.LOCK_UN)
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
    except BlockingIOError:
        waiting()
        fcntl.flock(fd, mode)


@contextlib.contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Hold `path` (a lock file, created if missing) exclusive; released when the block ends or
    the process dies. Without advisory locks (Windows) it holds nothing."""
    with contextlib.ExitStack() as stack:
        if fcntl is not None:
            _lock(stack, path, fcntl.LOCK_EX, lambda: None)
        yield
