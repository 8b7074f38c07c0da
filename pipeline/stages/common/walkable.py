"""What stages that walk a map share: which symbols block and which can be walked on."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from pipeline.errors import PipelineError
from pipeline.level import Level
from pipeline.registry import StageParams


class WalkableStage(StageParams):
    """Base of stages that need the walkable part of a map: every symbol but `walls`."""

    walls: tuple[str, ...] = Field(("wall",), min_length=1, description="Symbols that block; every other symbol can be walked on.")

    def walkable(self, level: Level) -> np.ndarray:
        """Bool grid, True where a tile can be walked on."""
        return self.mask(level, self.walls, "walls", invert=True)

    @classmethod
    def mask(cls, level: Level, names: tuple[str, ...], key: str, invert: bool = False) -> np.ndarray:
        """Bool grid, True on the named symbols (or off them, with `invert`): a table lookup,
        several times faster than np.isin on big maps."""
        return cls.table(level, names, key, invert).view(np.bool_)[level.tiles]

    @classmethod
    def table(cls, level: Level, names: tuple[str, ...], key: str, invert: bool = False) -> np.ndarray:
        """uint8 per symbol index: 1 for the named symbols (0, with `invert`), else the other."""
        table = np.full(256, 1 if invert else 0, dtype=np.uint8)
        table[cls.indices(level, names, key)] = 0 if invert else 1
        return table

    @staticmethod
    def indices(level: Level, names: tuple[str, ...], key: str) -> np.ndarray:
        try:
            return np.array([level.index_of(n) for n in names], dtype=np.uint8)
        except KeyError as exc:
            raise PipelineError([f"{key}: {exc.args[0]}"]) from None
