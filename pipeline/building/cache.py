"""Intermediate Levels stored under `.pcg-cache/`, addressed by their stage's cache key.

The key is computed from configuration alone (stage kind and version, params, seed, input keys),
so a hit means the stage would produce exactly this Level again, in the same environment: the
store's folder is named after the NumPy and numba versions (`levels-v2-numpy2.4.6-numba0.68.1/`),
since NumPy guarantees its random streams only per version (NEP 19) and numba compiles the
kernels, so Levels made by other versions are never served. Their folders are just unused, and
`trim` removes them as the least recently used.

The store is bounded by `trim`: every hit marks its entry as used (its modification time), and
`trim(max_bytes)` deletes entries, least recently used first, until the store fits. Several
builds may share the cache, so every step tolerates entries that appear or vanish meanwhile; a
Level trimmed away under another build only costs that build a recomputation.
"""

from __future__ import annotations

import functools
import os
import pickle
import re
import stat
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

from pipeline.fsio import atomic_write
from pipeline.level import Level

# Bump when the stored representation of a Level changes, so old entries are ignored.
CACHE_FORMAT = 2

# Every level store's folder starts with this; nothing else under the cache root is ever trimmed
# (locks/, stamps/, tmp/ and the rest are not Levels, and running builds rely on them).
STORE_PREFIX = "levels-"

# 2 GiB, measured on disk: every example recipe together keeps 5.4 MB (445 Levels); the 1,000-map
# pack of bench/scale.py (41 x 41-cell mazes, then regions.label) 44 MB (7 KB + 35 KB a map); a
# 100,000-map pack of 9 x 7-cell mazes 400 MB (each 0.9 KB entry takes a 4 KiB block). So the
# bound keeps what a project's recipes use, dozens of packs of that size or 100,000 small maps,
# and stays small beside any disk that builds packs; a cache is only a speed-up, so a pack too
# big for it just recomputes the Levels it lost.
DEFAULT_MAX_BYTES = 2 * 1024**3

_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
_SIZE = re.compile(r"^(?:(\d+)|(\d+(?:\.\d+)?|\.\d+)\s*([KMGT])(?:I?B)?)$")


def parse_size(text: str) -> int:
    """Bytes from a size such as `500M`, `2G`, `1.5G` or `1048576`: a whole number of bytes, or a
    number with K, M, G or T (powers of 1024, as `du -h` counts; `500MB` and `500MiB` alike).
    0 is a bound like any other: trimming to it keeps no Level once a build ends."""
    match = _SIZE.match(text.strip().upper())
    if match is None:
        raise ValueError(f"not a size (got {text!r}): give bytes, or a number with K, M, G or T, e.g. 500M or 2G")
    if match[1] is not None:
        return int(match[1])
    # Decimal arithmetic on the digits, so that "1.1G" gives the same bytes on every machine.
    whole, _, fraction = match[2].partition(".")
    scale = 10 ** len(fraction)
    return (int(whole or "0") * scale + int(fraction or "0")) * _UNITS[match[3]] // scale


def format_size(size: int) -> str:
    """`1.5G`, `500M`, `12K` or `300B`: the form parse_size reads, to one decimal, for messages."""
    for unit in ("T", "G", "M", "K"):
        if size >= _UNITS[unit]:
            return f"{size / _UNITS[unit]:.1f}".rstrip("0").rstrip(".") + unit
    return f"{size}B"


@functools.cache
def environment_tag() -> str:
    """The versions a cached Level depends on, as a folder name part; once per process, since
    `metadata.version` reads package metadata from disk (numba is never imported for it)."""
    try:
        numba = metadata.version("numba")
    except metadata.PackageNotFoundError:
        numba = "none"
    return re.sub(r"[^A-Za-z0-9.+_-]", "_", f"numpy{np.__version__}-numba{numba}")


@dataclass(frozen=True)
class Trimmed:
    """What a trim did: entries deleted, the bytes they took, and the bytes of those kept."""

    removed: int
    freed: int
    kept: int


class LevelCache:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.store_dir = self.root / f"{STORE_PREFIX}v{CACHE_FORMAT}-{environment_tag()}"
        self._store = str(self.store_dir)  # `has` joins strings: it is asked for every stage of every map

    @property
    def temp_dir(self) -> Path:
        """Where files under exports/ and cache entries are written before they are renamed into place."""
        return self.root / "tmp"

    def path(self, key: str) -> Path:
        return self.store_dir / key[:2] / f"{key}.pkl"

    def has(self, key: str) -> bool:
        return os.path.isfile(os.path.join(self._store, key[:2], f"{key}.pkl"))

    def load(self, key: str) -> Level | None:
        """The cached Level, or None if absent or unreadable (a damaged entry is just a miss)."""
        path = self.path(key)
        try:
            level = pickle.loads(_read_entry(path))
        except Exception:  # damaged bytes fail in many ways: OverflowError, MemoryError, SystemError, ...
            return None
        if not isinstance(level, Level):
            return None
        try:
            os.utime(path)  # a use: trim keeps recently used entries
        except OSError:
            pass  # trimmed meanwhile, or a read-only cache: the Level is in hand all the same
        return level

    def store(self, key: str, level: Level) -> None:
        """Best effort: a full disk or an unpicklable Level only costs a recomputation later."""
        try:
            data = pickle.dumps(level, protocol=pickle.HIGHEST_PROTOCOL)
            # Temporary files in tmp/, where a build removes those a killed one left: the store
            # itself only ever holds whole entries.
            atomic_write(self.path(key), data, self.temp_dir)
        except (OSError, pickle.PicklingError, TypeError, AttributeError):
            pass

    def size(self) -> int:
        """Bytes the level stores take on disk (every environment's)."""
        return sum(size for _, _, size in self._entries())

    def trim(self, max_bytes: int) -> Trimmed:
        """Delete level entries, least recently used (stored or loaded) first, until all the
        stores together take at most `max_bytes`; then remove the folders of other environments
        left empty. Entries stored or loaded by other builds while it runs are kept, so the
        stores may end a little over the bound until the next trim.

        It lists every entry (about 0.1 s per 100,000 entries with the folders in the OS's cache,
        1 s without), so it belongs after builds that stored Levels, not after every no-op build;
        deleting costs what the file system asks (15 us to 3 ms an entry, with online discard)."""
        entries = self._entries()
        kept = sum(size for _, _, size in entries)
        removed = freed = 0
        # Oldest first; the path orders entries used at the same instant, so trims are repeatable.
        for mtime, path, size in sorted(entries):
            if kept <= max_bytes:
                break
            try:
                if os.stat(path).st_mtime_ns != mtime:
                    continue  # loaded or stored again since the scan: recently used after all
                os.unlink(path)
            except FileNotFoundError:
                kept -= size  # another build trimmed it
                continue
            except OSError:
                continue  # not ours to delete (permissions): it stays, and counts
            kept -= size
            freed += size
            removed += 1
        self._remove_empty_stores()
        return Trimmed(removed=removed, freed=freed, kept=kept)

    def _stores(self) -> list[str]:
        try:
            with os.scandir(self.root) as it:
                return sorted(e.path for e in it if e.name.startswith(STORE_PREFIX) and e.is_dir(follow_symlinks=False))
        except OSError:
            return []  # no cache yet

    def _entries(self) -> list[tuple[int, str, int]]:
        """(modification time, path, bytes on disk) of every entry of every level store."""
        out: list[tuple[int, str, int]] = []
        for store in self._stores():
            for shard in _listing(store):
                if not shard.is_dir(follow_symlinks=False):
                    continue
                for entry in _listing(shard.path):
                    if not entry.name.endswith(".pkl"):
                        continue
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue  # trimmed by another build since the listing
                    if stat.S_ISREG(st.st_mode):
                        out.append((st.st_mtime_ns, entry.path, _disk_bytes(st)))
        return out

    def _remove_empty_stores(self) -> None:
        """Folders of other environments and formats, once trimming has emptied them. The current
        store's shard folders stay: a build storing into one now would lose its entry."""
        for store in self._stores():
            if store == self._store:
                continue
            for shard in _listing(store):
                try:
                    os.rmdir(shard.path)
                except OSError:
                    pass  # not empty (an entry, or a stray file that is not ours to delete)
            try:
                os.rmdir(store)
            except OSError:
                pass


def _listing(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError:
        return []  # removed by another build's trim meanwhile


def _disk_bytes(st: os.stat_result) -> int:
    # What the entry takes on disk (its blocks, as `du` counts them), never less than its length:
    # small entries take a whole block each, and the bound is about disk space.
    return max(st.st_size, getattr(st, "st_blocks", 0) * 512)


def _read_entry(path: Path) -> bytes:
    # O_NONBLOCK: a FIFO put where an entry belongs must make a miss, not hang the build.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with open(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path}: not a regular file")
        return f.read()
