"""Two maps' alphabets made one: symbols matched by name, the first map's kept where they are
(compose.overlay paints one map onto another, place.prefabs stamps rooms drawn in Tiled)."""

from __future__ import annotations

import numpy as np

from pipeline.errors import PipelineError
from pipeline.level import SPARE_CHARS, Symbol


def merge_alphabets(base: tuple[Symbol, ...], top: tuple[Symbol, ...]) -> tuple[tuple[Symbol, ...], np.ndarray]:
    """The base's alphabet plus the top's symbols it lacks (by name), and for each top index its
    index in the merged alphabet."""
    merged = list(base)
    by_name = {s.name: i for i, s in enumerate(merged)}
    remap = np.zeros(len(top), dtype=np.uint8)
    for i, sym in enumerate(top):
        if sym.name not in by_name:
            used = {s.char for s in merged}
            char = sym.char if sym.char not in used else next((c for c in SPARE_CHARS if c not in used), "")
            if not char or len(merged) >= 256:
                raise PipelineError([f"inputs: together they have more than {len(SPARE_CHARS)} symbols"])
            by_name[sym.name] = len(merged)
            merged.append(Symbol(char, sym.name, sym.color))
        remap[i] = by_name[sym.name]
    return tuple(merged), remap
