"""Which tile goes where: a map's symbols drawn into one or more tile layers of global tile ids,
autotiled symbols through their Wang sets."""

from __future__ import annotations

from typing import Callable

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from pipeline.errors import PipelineError
from pipeline.level import Level, MapObject
from pipeline.tiled.tilesheet import BuiltTileset
from pipeline.tiled.variants import map_key, pick

ALL = "*"


class LayerSpec(BaseModel):
    """One tile layer: the symbols it draws (the rest of it stays empty)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, description="Layer name in Tiled.")
    symbols: tuple[str, ...] = Field((ALL,), min_length=1, description='Symbols this layer draws; "*" for all.')
    tile: str | None = Field(None, description="Draw every one of them with this name's plain tile (a floor under everything).")
    autotile: bool = Field(True, description="Draw autotiled symbols with their Wang set (false: their plain tile).")

    @field_validator("symbols")
    @classmethod
    def _all_alone(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if ALL in value and len(value) > 1:
            raise ValueError('"*" already means every symbol')
        return value


def draw_layers(level: Level, built: BuiltTileset, layers: list[LayerSpec], firstgid: int = 1, key: str = "") -> list[tuple[str, np.ndarray]]:
    """(name, uint32 H x W global tile ids, 0 where empty) for every layer. A symbol without a
    tile is an error under `key` (the tileset's), else under its layer's."""
    tileset = built.tileset
    names = [s.name for s in level.alphabet]
    key_of_map = map_key(level.tiles) if built.variants else 0
    out = []
    for spec in layers:
        wanted = range(len(names)) if spec.symbols == (ALL,) else [_symbol(level, spec, s) for s in spec.symbols]
        gids = np.zeros(level.tiles.shape, dtype=np.uint32)
        for index in wanted:
            where = level.tiles == index
            if not where.any():
                continue
            name = names[index]
            auto = built.autotiles.get(name)
            if auto is not None and spec.autotile and spec.tile is None:
                gids[where] = auto.pieces(level.tiles, index, names)[where] + firstgid
                continue
            drawn, what = (spec.tile, f"layers.{spec.name}.tile") if spec.tile is not None else (name, f"{key or f'layers.{spec.name}'}: symbol {name!r}")
            own = _tile(tileset.tile_id, drawn, what)
            variants = built.variants.get(drawn)
            gids[where] = firstgid + (pick(where, own, variants, drawn, key_of_map) if variants else own)
        out.append((spec.name, gids))
    return out


def undrawn_symbols(level: Level, layers: list[LayerSpec]) -> list[str]:
    """Warnings for the map's symbols that no layer draws with their own tile: `layers` that
    leave out `wall` make maps without walls (or their `solid` collision) in the game. A layer
    with `tile` (a floor under everything) draws them as that tile only."""
    present = np.flatnonzero(np.bincount(level.tiles.ravel(), minlength=len(level.alphabet)))
    lines = []
    for index in present.tolist():
        name = level.alphabet[index].name
        on = [spec for spec in layers if spec.symbols == (ALL,) or name in spec.symbols]
        if any(spec.tile in (None, name) for spec in on):
            continue
        where = f"only as {on[0].tile!r}, by layer {on[0].name!r}" if on else f"by none of the layers ({', '.join(s.name for s in layers)})"
        lines.append(f'layers: symbol {name!r} is drawn {where}, so the maps show no {name}: add a layer, e.g. {{ name = "{name}", symbols = ["{name}"] }}')
    return lines


def object_gid(obj: MapObject, built: BuiltTileset, firstgid: int = 1) -> int:
    try:
        return firstgid + built.tileset.tile_id(obj.tile)
    except KeyError as exc:
        raise PipelineError([f"object {obj.name!r} is drawn with tile {obj.tile!r}: {exc.args[0]}"]) from None


def _symbol(level: Level, spec: LayerSpec, name: str) -> int:
    try:
        return level.index_of(name)
    except KeyError as exc:
        raise PipelineError([f"layers.{spec.name}.symbols: {exc.args[0]}"]) from None


def _tile(lookup: Callable[[str], int], name: str, where: str) -> int:
    try:
        return lookup(name)
    except KeyError as exc:
        raise PipelineError([f"{where}: {exc.args[0]}"]) from None
