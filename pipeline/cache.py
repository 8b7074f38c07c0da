"""Intermediate Levels stored under `.pcg-cache/`, addressed by their stage's cache key.

The key is computed from configuration alone (stage kind and version, params, seed, input keys),
so a hit means the stage would produce exactly this Level again.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

from pipeline.fsio import atomic_write
from pipeline.level import Level

# Bump when the stored representation of a Level changes, so old entries are ignored.
CACHE_FORMAT = 1


class LevelCache:
    def __init__(self, root: Path):
        self.root = Path(root)

    @property
    def temp_dir(self) -> Path:
        """Where files under exports/ are written before they are renamed into place."""
        return self.root / "tmp"

    def path(self, key: str) -> Path:
        return self.root / f"levels-v{CACHE_FORMAT}" / key[:2] / f"{key}.pkl"

    def has(self, key: str) -> bool:
        # os.path on strings: the plan asks this for every stage of every map.
        return os.path.isfile(os.path.join(self.root, f"levels-v{CACHE_FORMAT}", key[:2], f"{key}.pkl"))

    def load(self, key: str) -> Level | None:
        """The cached Level, or None if absent or unreadable (a damaged entry is just a miss)."""
        try:
            level = pickle.loads(self.path(key).read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError):
            return None
        return level if isinstance(level, Level) else None

    def store(self, key: str, level: Level) -> None:
        """Best effort: a full disk or an unpicklable Level only costs a recomputation later."""
        try:
            atomic_write(self.path(key), pickle.dumps(level, protocol=pickle.HIGHEST_PROTOCOL))
        except (OSError, pickle.PicklingError, TypeError, AttributeError):
            pass
