"""Atomic file output: write to a temporary name, then rename over the target.

Temporary files go to a folder of their own (under the cache) when given one, so a build killed
with SIGKILL leaves nothing half-written, nor any stray temporary file, under exports/.
"""

from __future__ import annotations

import errno
import hashlib
import itertools
import os
from pathlib import Path

_counter = itertools.count()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str | None:
    """The file's sha256, or None if it does not exist."""
    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except FileNotFoundError:
        return None


def atomic_write(path: Path, data: bytes, temp_dir: Path | None = None) -> None:
    """Readers see the old file or the new one, never a half-written one. The temporary file is
    made in `temp_dir` if given (it must be on the same file system), else beside the target."""
    path.parent.mkdir(parents=True, exist_ok=True)
    folder = path.parent
    if temp_dir is not None:
        temp_dir.mkdir(parents=True, exist_ok=True)
        folder = temp_dir
    tmp = folder / f"{os.getpid()}.{next(_counter)}.{path.name}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        try:
            os.replace(tmp, path)
        except OSError as exc:
            if exc.errno != errno.EXDEV or temp_dir is None:
                raise
            tmp.unlink(missing_ok=True)  # another file system: a rename cannot cross it
            atomic_write(path, data)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def remove_stale_temps(temp_dir: Path) -> int:
    """Delete temporary files left by processes that no longer run (a killed build); returns
    how many. Files of live processes (another build writing now) stay."""
    removed = 0
    for tmp in temp_dir.glob("*.tmp") if temp_dir.is_dir() else []:
        pid = tmp.name.split(".", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            tmp.unlink(missing_ok=True)
            removed += 1
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
