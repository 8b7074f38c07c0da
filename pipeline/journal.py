"""The write journal: before a build writes into a pack, it records every path it may write.

A build killed (SIGKILL, power loss) after writing some files but before its manifest names them
leaves files that no manifest claims; if the recipe then changes (fewer maps, another stem),
nothing would ever remove them. The journal outlives the build that wrote it, so the next build
of the pack knows which of the files on disk it is answerable for: whatever the journal lists and
the new manifest does not claim is removed. A build that finishes deletes its journal.
"""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.fsio import atomic_write, read_regular


class Journal:
    def __init__(self, cache_root: Path, pack: str):
        self.path = cache_root / "journal" / f"{pack}.json"

    def leftover(self) -> set[str]:
        """Paths (relative to the pack folder) an unfinished earlier build may have written."""
        try:
            data = json.loads(read_regular(self.path).decode("utf-8"))
        except (OSError, ValueError):
            return set()  # none, or not ours (it is only ever replaced whole)
        paths = data.get("paths") if isinstance(data, dict) else None
        if not isinstance(paths, list):
            return set()
        return {p for p in paths if isinstance(p, str)}

    def begin(self, paths: set[str], temp_dir: Path) -> None:
        """Record `paths` (synced to disk) before any of them is written."""
        data = json.dumps({"paths": sorted(paths)}, ensure_ascii=False).encode("utf-8")
        atomic_write(self.path, data, temp_dir, sync=True)

    def end(self) -> None:
        self.path.unlink(missing_ok=True)
