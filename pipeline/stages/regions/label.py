"""Connected-component labeling: which tiles belong together."""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np
from pydantic import Field

from pipeline.level import Level
from pipeline.registry import stage
from pipeline.stages.regions.walkable import WalkableStage


@stage("regions.label", version=1)
class Label(WalkableStage):
    """Label the connected regions of the chosen symbols (flood fill, 4- or 8-connected) into a
    `region` layer: 0 elsewhere, 1..N by size, largest first (ties in reading order of their
    first tile). Sets `regions` (N), `region_largest` and `region_sizes` (sizes, largest first,
    comma-separated) in the map's properties.

    `symbols` names what to label; by default every symbol but `walls`.
    """

    arity: ClassVar[tuple[int, int]] = (1, 1)

    symbols: tuple[str, ...] = Field((), description="Symbols to label; empty = every symbol but `walls`.")
    connectivity: Literal[4, 8] = Field(4, description="4: regions join through edges; 8: through corners too.")
    layer: str = Field("region", min_length=1, description="Name of the label layer.")

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        level = inputs[0]
        mask = self.mask(level, self.symbols, "symbols") if self.symbols else self.walkable(level)
        labels, sizes = label_regions(mask, self.connectivity)
        props = {
            "regions": len(sizes),
            "region_largest": int(sizes[0]) if len(sizes) else 0,
            "region_sizes": ",".join(str(int(s)) for s in sizes),
        }
        return Level(
            tiles=level.tiles,
            alphabet=level.alphabet,
            layers={**level.layers, self.layer: labels},
            objects=list(level.objects),
            properties={**level.properties, **props},
        )


def label_regions(mask: np.ndarray, connectivity: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """int32 labels 1..N of the connected parts of `mask`, numbered largest first, and the sizes."""
    from scipy import ndimage

    structure = ndimage.generate_binary_structure(2, 1 if connectivity == 4 else 2)
    raw, count = ndimage.label(mask, structure=structure, output=np.int32)
    if count == 0:
        return raw, np.zeros(0, dtype=np.int64)
    sizes = np.bincount(raw.ravel(), minlength=count + 1)[1:]
    # scipy numbers regions in reading order of their first tile; a stable sort by size keeps
    # that order among equal sizes, so the numbering is deterministic.
    order = np.argsort(-sizes, kind="stable")
    relabel = np.zeros(count + 1, dtype=np.int32)
    relabel[order + 1] = np.arange(1, count + 1, dtype=np.int32)
    return relabel[raw], sizes[order]
