"""One build of a pack at a time: two `pcg build`s of the same pack would interleave their files
and each write a manifest that misses the other's maps."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Callable, Iterator

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; builds are not serialised there
    fcntl = None  # type: ignore[assignment]


@contextlib.contextmanager
def pack_locks(lock_dir: Path, packs: list[str], waiting: Callable[[str], None]) -> Iterator[None]:
    """Hold an exclusive lock per pack (in sorted order, so two builds cannot deadlock);
    `waiting(pack)` is called before blocking on a pack another process is building."""
    with contextlib.ExitStack() as stack:
        if fcntl is not None:
            lock_dir.mkdir(parents=True, exist_ok=True)
            for pack in sorted(set(packs)):
                fd = os.open(lock_dir / f"{pack}.lock", os.O_RDWR | os.O_CREAT, 0o644)
                stack.callback(os.close, fd)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    waiting(pack)
                    fcntl.flock(fd, fcntl.LOCK_EX)
        yield
