"""Per-map, per-stage random streams.

Map `i`, stage `s` of a pack seeded `p` draws from `PCG64(SeedSequence([i, blake2b(s), p]))`: the
varying ids come first (never `p + i`, which makes neighbouring packs share streams), and the stage
name is hashed with blake2b because Python's `hash()` changes between processes. `p` is the
map's seed: the pack seed, unless the recipe's `[pack.seeds]` gives the map one of its own
(`PackConfig.seed_of`, written by `pcg pin` / `pcg reroll`, see pipeline/recipe/pins.py).
"""

from __future__ import annotations

import functools
import hashlib
from typing import Sequence

import numpy as np

BIT_GENERATOR = "PCG64"


@functools.cache
def name_hash(stage_name: str) -> int:
    """A stable 64-bit integer for a stage name (memoised: the planner asks once per map)."""
    return int.from_bytes(hashlib.blake2b(stage_name.encode("utf-8"), digest_size=8).digest(), "little")


def stage_seed(map_index: int, stage_name: str, pack_seed: int, attempt: int = 0) -> tuple[int, ...]:
    """The seed tuple of a stage of a map. A `filter` stage that rejects a map has it made again
    from the next attempt's seeds, (i, stage, pack seed, attempt); attempt 0 keeps the plain
    three-part tuple, so packs without filters keep their seeds."""
    if attempt:
        return (map_index, name_hash(stage_name), pack_seed, attempt)
    return (map_index, name_hash(stage_name), pack_seed)


def map_seed(seed: Sequence[int]) -> int | None:
    """The map's seed (the pack seed or its own) in a stage's seed tuple, as `stage_seed` lays
    it out; None for a tuple of another shape."""
    return seed[2] if len(seed) in (3, 4) else None


def rng_for(seed: tuple[int, ...]) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(list(seed))))
