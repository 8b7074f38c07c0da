"""File stamps: the size, modification time and sha256 of each file a pack holds, kept under the
cache, so that checking a built pack costs a stat per file instead of reading every byte (as git
checks its work tree). A file whose size or time differs from its stamp is hashed again."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pipeline.fsio import atomic_write, read_regular, sha256_file


class Stamps:
    def __init__(self, path: Path):
        self.path = path
        try:
            loaded = json.loads(read_regular(path).decode("utf-8"))
            self.entries: dict[str, list[int | str]] = loaded if isinstance(loaded, dict) else {}
        except (OSError, ValueError):
            self.entries = {}
        self.changed = False

    @classmethod
    def for_pack(cls, cache_root: Path, pack: str) -> Stamps:
        return cls(cache_root / "stamps" / f"{pack}.json")

    def digest(self, file: Path, key: str) -> str | None:
        """sha256 of `file` (None if it is missing), from its stamp while that still fits."""
        try:
            st = os.stat(file)
        except FileNotFoundError:
            return None
        entry = self.entries.get(key)
        if entry and entry[0] == st.st_size and entry[1] == st.st_mtime_ns:
            return str(entry[2])
        digest = sha256_file(file)
        if digest is not None:
            self.entries[key] = [st.st_size, st.st_mtime_ns, digest]
            self.changed = True
        return digest

    def record(self, file: Path, key: str, digest: str) -> None:
        """Stamp a file just written with these bytes."""
        st = os.stat(file)
        self.entries[key] = [st.st_size, st.st_mtime_ns, digest]
        self.changed = True

    def remember(self, key: str, size: int, mtime_ns: int, digest: str) -> None:
        """Stamp a file another process wrote, as that process saw it just after writing."""
        self.entries[key] = [size, mtime_ns, digest]
        self.changed = True

    def save(self, temp_dir: Path | None = None) -> None:
        if self.changed:
            atomic_write(self.path, json.dumps(self.entries, sort_keys=True).encode("utf-8"), temp_dir)
            self.changed = False
