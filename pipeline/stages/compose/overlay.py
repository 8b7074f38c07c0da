"""Overlay: paint one Level onto another, the first fan-in stage."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import Field

from pipeline.level.alphabets import merge_alphabets
from pipeline.drawn_art import paste_art
from pipeline.errors import PipelineError
from pipeline.level import Level, own_refs
from pipeline.registry import StageParams, stage
from pipeline.stages.common.walkable import WalkableStage

@stage("compose.overlay", version=4)
class Overlay(StageParams):
    """Paint one map's tiles over another's. The second input (`inputs = ["base", "top"]`) is
    painted onto the first: every tile of the top whose symbol is one of `symbols` (unset: all
    but the top's fill, its first symbol) replaces the base's tile, optionally only `where` the
    base has one of the given symbols. Both inputs must have the same size.

    Symbols merge by name: the base's alphabet comes first, then the top's symbols it lacks.
    Objects of both inputs are kept (the base's first; an object reference among the top's
    still names the top's object), and so are their layers; where both
    have a layer of one name, the top's values are taken on the tiles painted. Properties of
    both are kept (the top's win), plus `overlay_tiles`, the number of tiles painted.

    Art drawn by hand (a map from `load.tmx`) goes with the tiles: the base's where it shows,
    the top's on the tiles painted (there none of the base's, even where the top has none).
    """

    arity: ClassVar[tuple[int, int]] = (2, 2)
    adds_stats: ClassVar[tuple[str, ...] | None] = ("overlay_tiles",)

    symbols: tuple[str, ...] | None = Field(
        None, min_length=1, description="Symbols of the top input that are painted (unset: all but its fill, its first symbol)."
    )
    where: tuple[str, ...] | None = Field(
        None, min_length=1, description="Paint only where the base has one of these symbols (unset: everywhere)."
    )

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        base, top = inputs
        if base.tiles.shape != top.tiles.shape:
            raise PipelineError(
                [f"inputs: the base is {base.width} x {base.height} tiles but the top is {top.width} x {top.height}; overlay needs one size"]
            )
        alphabet, remap = merge_alphabets(base.alphabet, top.alphabet)
        painted = self.symbols or tuple(s.name for s in top.alphabet[1:])
        mask = WalkableStage.mask(top, painted, "symbols")
        if self.where:
            mask &= WalkableStage.mask(base, self.where, "where")
        tiles = base.tiles.copy()
        tiles[mask] = remap[top.tiles[mask]]
        layers = dict(base.layers)
        for name, layer in top.layers.items():
            if name in layers:
                merged = layers[name].astype(np.result_type(layers[name], layer))
                merged[mask] = layer[mask]
                layers[name] = merged
            else:
                layers[name] = layer
        # The top's refs beside the base's (two hand-made maps both number objects from 1), and
        # its map's own references to its objects with them.
        top_objects, top_properties = own_refs(top.objects, {o.ref for o in base.objects if o.ref}, "top:", top.properties)
        out = Level(
            tiles=tiles,
            alphabet=alphabet,
            layers=layers,
            objects=[*base.objects, *top_objects],
            properties={**base.properties, **top_properties, "overlay_tiles": int(mask.sum())},
            art=base.art,
        )
        paste_art(out, top, 0, 0, mask)
        return out
