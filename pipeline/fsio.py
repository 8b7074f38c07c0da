"""Atomic file output: write to a temporary name, then rename over the target.

Temporary files go to a folder of their own (under the cache) when given one, so a build killed
with SIGKILL leaves nothing half-written, nor any stray temporary file, under exports/. Where
that folder is on another file system than the target (a rename cannot cross it), the temporary
file is made beside the target under a hidden name that the next build sweeps away.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import itertools
import os
import stat
from pathlib import Path
from typing import Iterator

_counter = itertools.count()

# Temporary names: `.pcg-PID-N-NAME.tmp`, so that the process that made one can be told apart
# and a sweep never touches a file of anyone else.
_PREFIX = ".pcg-"
_SUFFIX = ".tmp"


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# The "digest" of a path that is no regular file: never equal to a real one, so a FIFO or folder
# where an output should be counts as a modified output (and is replaced), without being opened.
NOT_A_FILE = "not-a-regular-file"


def sha256_file(path: Path) -> str | None:
    """The file's sha256, or None if it does not exist."""
    try:
        return hashlib.sha256(read_regular(path)).hexdigest()
    except FileNotFoundError:
        return None
    except NotRegularFile:
        return NOT_A_FILE


def same_file_system(a: Path, b: Path) -> bool:
    """Whether files can be renamed from folder `a` into folder `b` (their nearest existing
    ancestors are on one device)."""
    return _device(a) == _device(b)


def _device(path: Path) -> int:
    path = path.absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    return os.stat(path).st_dev


def atomic_write(path: Path, data: bytes, temp_dir: Path | None = None, sync: bool = False) -> None:
    """Readers see the old file or the new one, never a half-written one. The temporary file is
    made in `temp_dir` if given and on the target's file system, else beside the target. With
    `sync`, the bytes reach the disk before the rename (for records that must survive a crash)."""
    land(stage(path, data, temp_dir, sync), path, sync)


def stage(path: Path, data: bytes, temp_dir: Path | None = None, sync: bool = False) -> Path:
    """Write `data` to a new temporary file meant for `path` (in `temp_dir` if given, else beside
    `path`) and return its name, for `land` to rename into place later: the bytes can be made in
    one process and put under their real name by another, once it has recorded them."""
    folder = temp_dir if temp_dir is not None else path.parent
    tmp = folder / f"{_PREFIX}{os.getpid()}-{next(_counter)}-{path.name}{_SUFFIX}"
    with _discarded_on_failure(tmp, path):
        _write_new(tmp, data, sync)
    return tmp


def land(tmp: Path, path: Path, sync: bool = False) -> None:
    """Rename the staged file `tmp` over `path`. Where a rename cannot reach `path` (another file
    system), its bytes are written beside it and renamed from there. A failure removes `tmp`."""
    with _discarded_on_failure(tmp, path):
        try:
            _replace(tmp, path)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            data = read_regular(tmp)
            tmp.unlink(missing_ok=True)  # another file system: a rename cannot cross it
            land(stage(path, data, None, sync), path, sync)
            return
        if sync:  # the rename itself reaches the disk with its folder
            fd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


@contextlib.contextmanager
def _discarded_on_failure(tmp: Path, path: Path) -> Iterator[None]:
    """Remove the temporary file `tmp` if the block fails. An OSError is raised naming `path`, the
    file being written, not its temporary name (nor none: a full disk's write error carries no
    name), so that the user's one line says which file."""
    try:
        yield
    except OSError as exc:
        _discard(tmp)
        if exc.filename == str(path):
            raise
        raise naming(exc, path) from exc
    except BaseException:
        _discard(tmp)
        raise


def naming(exc: OSError, path: Path | str) -> OSError:
    """The same error, naming `path`: the file the user knows of, in full (not a temporary name,
    nor a name relative to some folder), for the one line they are told."""
    return type(exc)(exc.errno, exc.strerror, str(path))


def _discard(tmp: Path) -> None:
    """Remove a temporary file, if it can be: on a read-only file system it never was made, and
    the unlink's own error would hide the one that matters (and name the temporary file)."""
    try:
        tmp.unlink(missing_ok=True)
    except OSError:
        pass


class NotRegularFile(OSError):
    """A path that names a FIFO, socket, device or folder where a file's bytes were expected."""

    def __str__(self) -> str:
        return str(self.strerror)


_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a folder"),
)


def write_if_changed(path: Path, data: bytes, temp_dir: Path | None = None) -> bool:
    """`atomic_write` unless the file holds exactly `data` already (its modification time then
    stays, and nothing is rewritten); whether it wrote. Anything but a regular file there (none
    yet, a FIFO, a folder) is not read, but replaced or refused by the write."""
    try:
        if read_regular(path) == data:
            return False
    except OSError:
        pass
    atomic_write(path, data, temp_dir)
    return True


def _write_new(tmp: Path, data: bytes, sync: bool) -> None:
    """Write `data` to a new file, making its folder if there is none yet. Folders are made on
    demand rather than checked before every write (a build writes thousands of files into a few
    folders), and the bytes go in one unbuffered write."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(tmp, flags, 0o666)
    except FileNotFoundError:
        tmp.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, flags, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def _replace(tmp: Path, path: Path) -> None:
    try:
        os.replace(tmp, path)
    except FileNotFoundError:
        if not tmp.exists():
            raise
        path.parent.mkdir(parents=True, exist_ok=True)  # the target's folder is new
        os.replace(tmp, path)


def read_regular(path: Path) -> bytes:
    """The bytes of a regular file (following symlinks). Anything else raises NotRegularFile
    before it is opened: reading a FIFO blocks until some writer comes, and a device may never end,
    so one stray path would hang the whole build."""
    check_regular(path, os.stat(path).st_mode)
    # O_NONBLOCK: were the file swapped for a FIFO since the stat, open still returns at once, and
    # the fstat below refuses it.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with open(fd, "rb") as f:
        check_regular(path, os.fstat(fd).st_mode)
        return f.read()


def check_regular(path: Path, mode: int) -> None:
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "a special file")
        raise NotRegularFile(errno.EINVAL, f"it is {kind}, not a regular file", str(path))


def is_temp_name(name: str) -> bool:
    """Whether `name` is that of a temporary file atomic_write makes."""
    return name.startswith(_PREFIX) and name.endswith(_SUFFIX)


def remove_stale_temps(folder: Path, recursive: bool = False, whoever: bool = False) -> int:
    """Delete temporary files in `folder` (and below, if `recursive`) left by processes that no
    longer run (a killed build); returns how many. Files of live processes (another build
    writing now) stay, unless `whoever`: the caller knows no one else may write there."""
    removed = 0
    if not folder.is_dir():
        return 0
    pattern = f"{_PREFIX}*{_SUFFIX}"
    for tmp in folder.rglob(pattern) if recursive else folder.glob(pattern):
        pid = tmp.name[len(_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and (whoever or not _alive(int(pid))):
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
    # A killed worker whose parent died too stays a zombie where nobody reaps orphans (PID 1 of
    # many containers): it answers signals but will never finish its file.
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in (b"Z", b"X")
