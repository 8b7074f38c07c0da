"""LDtk projects: one `.ldtkl` level file per map, and the `.ldtk` project of the pack."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field, field_validator, model_validator

from pipeline.errors import KeyedError, PipelineError
from pipeline.ldtk import ids
from pipeline.level.art import FLIP_D, FLIP_H, FLIP_V, GID_MASK, ArtTileset
from pipeline.ldtk.level import ArtLayer, check_layer_names, definitions, level_file, tile_rect
from pipeline.ldtk.project import is_current, project_json, sources_key
from pipeline.level import Level, PropertyValue, dangling_references
from pipeline.paths import check_plain_name, join, relative_to
from pipeline.registry import ExportContext, PackContext, stage
from pipeline.stages.export.drawn_map import DrawnMapExporter
from pipeline.tiled.drawn import MapArt, as_tileset
from pipeline.tiled.values import encode_values, int32_values


@stage("export.ldtk", version=12)
class ExportLdtk(DrawnMapExporter):
    """Write the pack as an LDtk project (format 1.5), one level per map.

    Levels are LDtk's separate level files (`DIR/PROJECT/map_000.ldtkl`), and the project
    `DIR/PROJECT.ldtk` lists them; LDtk opens it, and LDtk's importers for Godot, Unity, Bevy,
    Defold and HaxeFlixel load it.

    Every level has an IntGrid layer `symbols` (symbol i of the alphabet is value i + 1, named
    and coloured as the symbol), tile layers drawn with the pack's tileset exactly as
    `export.tmx` draws them (same tileset options, tilesheet and autotiled walls), and an
    Entities layer of the map's objects: one entity per object type (spawn, exit, room, items),
    points as one cell, rectangles with their size, properties as typed fields (Int, Float,
    Bool, String, Color; a whole number past 32 bits is a String, as in Tiled) and polylines as
    Point arrays. The map's properties (seed, as a String, stats, stage chain) are level fields,
    and so are its data layers (`region_values`: base64 of little-endian int32, row by row, as a
    TMX data layer's `values`). The project is written once the maps are, from the level files
    of every map the pack has.
    """

    dir: str = Field("ldtk", description="Folder inside the pack for the project file and its level folder.")
    project: str = Field("world", description="Project name: the project is DIR/PROJECT.ldtk, its levels DIR/PROJECT/*.ldtkl.")

    _project = field_validator("project")(classmethod(lambda cls, v: check_plain_name(v)))

    @model_validator(mode="after")
    def _check_layers(self) -> ExportLdtk:
        width, height = self._spec.tile_size
        if width != height:
            raise KeyedError("tileset", f"LDtk's tiles are square, and {self.tileset!r} has {width} x {height} pixel tiles")
        names = [layer.name for layer in self.layers] or [self.layer_name]
        if len(set(names)) < len(names):
            raise KeyedError("layers", "layer names must be unique")
        try:
            check_layer_names(names)
        except PipelineError as exc:
            raise KeyedError("layers", exc.problems[0].partition(": ")[2]) from None
        return self

    def _sheet(self) -> str:
        return f"tilesets/{self._spec.name}.png"

    def _defs(self) -> str:
        return join(self.dir, f"{self.project}/defs.json")

    def project_file(self) -> str:
        return join(self.dir, f"{self.project}.ldtk")

    def level_path(self, stem: str) -> str:
        return join(self.dir, f"{self.project}/{stem}.ldtkl")

    def shared_outputs(self) -> list[str]:
        return [self._defs(), self._sheet(), *self._art_images()]

    def bind_art(self, tilesets: list[tuple[str, ArtTileset]]) -> list[str]:
        problems = super().bind_art(tilesets)
        names = [layer.name for layer in self.layers] or [self.layer_name]
        try:
            check_layer_names(names + [_art_layer_name(stem) for _, stem in self._art_sets])
        except PipelineError as exc:
            problems.append(f"layers: {exc.problems[0].partition(': ')[2]} (a layer of the drawn maps' art has that name)")
        return problems

    def _art_layers(self, art: MapArt | None, ctx: ExportContext) -> tuple[MapArt | None, list[ArtLayer]]:
        """A Tiles layer per tileset the recipe's drawn maps may use (every map has them all,
        as the project's definitions are the pack's), this map's art in them; and the art as
        LDtk shows it. LDtk has no diagonal flip: a cell drawn with a tile turned so shows the
        pack's tile for its symbol, and the map a warning."""
        if art is not None:
            turned = np.zeros(art.cells.shape, dtype=bool)
            for gids in art.layers.values():
                turned |= (gids & np.uint32(FLIP_D)) != 0
            if turned.any():
                ctx.warnings.append(
                    f"art: {int(turned.sum())} cells of hand-drawn art are drawn with tiles turned (flipped diagonally), which LDtk cannot"
                    " show: they show the pack's tile for their symbol"
                )
                art = replace(art, cells=art.cells & ~turned, layers={n: np.where(turned, 0, g).astype(np.uint32) for n, g in art.layers.items()})
        out = []
        for k, (ts, stem) in enumerate(self._art_sets):
            tileset = as_tileset(ts, "")
            stack: tuple[np.ndarray, ...] = ()
            first = art.firstgid_of.get(ts.key) if art is not None else None
            if art is not None and first is not None:
                stack = tuple(_local(gids, first, tileset.tilecount) for gids in art.layers.values())
            out.append(ArtLayer(_art_layer_name(stem), tileset, ids.ART_TILESET_UID_BASE + k, relative_to(self._art_image(stem, ts), self.dir), stack))
        return art, out

    def _art_tile(self, layers: list[ArtLayer]) -> Any:
        by_key = {ts.key: layer for (ts, _), layer in zip(self._art_sets, layers)}
        return lambda tile: tile_rect(by_key[tile.tileset].tileset, tile.tile, by_key[tile.tileset].uid) if tile.tileset in by_key else None

    def outputs(self, stem: str) -> list[str]:
        preview = self.preview_file(stem)
        return [self.level_path(stem), *self.shared_outputs(), *([preview] if preview else [])]

    def export(self, level: Level, ctx: ExportContext) -> dict[str, bytes]:
        built, drawn, art = self._drawn_map(level, ctx)
        art, art_layers = self._art_layers(art, ctx)
        # The pack's tiles stay out of the cells the art draws, which its own layers show.
        tile_layers = [(name, np.where(art.cells, 0, gids).astype(gids.dtype)) for name, gids in drawn] if art else drawn
        ctx.warnings.extend(dangling_references(level.properties, level.objects))
        sheet = self._sheet()
        tileset_path = relative_to(sheet, self.dir)  # LDtk's paths are relative to the project file
        index = ctx.provenance.get("map", 0)
        index = index if isinstance(index, int) and not isinstance(index, bool) else 0
        pack = ctx.provenance.get("pack", "")
        level_iid = ids.level_iid(str(pack), self.project, ctx.stem)
        world_iid = ids.world_iid(str(pack), self.project)
        properties = {**level.properties, **ctx.provenance, **self._values_fields(level)}
        names = [name for name, _ in drawn]
        files = {
            self.level_path(ctx.stem): level_file(
                level, built, tile_layers, properties, ctx.stem, ids.LEVEL_UID_BASE + index, level_iid, tileset_path, world_iid,
                art_layers, self._art_tile(art_layers), _floor(level), lambda stem: ids.level_iid(str(pack), self.project, stem),
            ),
            self._defs(): definitions(level, built, names, tileset_path, art_layers),
            sheet: built.png,
        }
        for ts, stem in self._art_sets:
            files[self._art_image(stem, ts)] = ts.image
        preview = self.preview_file(ctx.stem)
        if preview:
            files[preview] = self._preview(level, built, drawn, art)
        return files

    def _values_fields(self, level: Level) -> dict[str, PropertyValue]:
        """Each data layer as a level field NAME_values: base64 of its int32 values, as a TMX
        data layer's `values` property holds them. An LDtk IntGrid would need every value
        defined in the project (labels and distances run to thousands), and LDtk drops the
        values it does not know when it saves a level."""
        fields: dict[str, PropertyValue] = {}
        for name in self._data_layer_names(level):
            field = f"{name}_values"
            if field in level.properties:
                raise PipelineError([f"data_layers: layer {name!r} would be the level field {field!r}, which the map has as a property; rename one"])
            fields[field] = encode_values(int32_values(name, level.layers[name]))
        return fields

    def pack_outputs(self) -> list[str]:
        return [self.project_file()]

    def pack_files(self, ctx: PackContext) -> dict[str, bytes]:
        defs_path = self._defs()
        levels = [(stem, self.level_path(stem)) for _, stem, files in ctx.maps if self.level_path(stem) in files]
        if not levels:
            return {}
        digests = {path: digest for _, _, files in ctx.maps for path, digest in files.items()}
        key = sources_key(self.project, [(p, digests[p]) for p in [defs_path, *(p for _, p in levels)]])
        target = self.project_file()
        if not ctx.rewrite and is_current(ctx.pack_dir / target, key):
            return {}
        defs = _read_json(ctx.pack_dir, defs_path)
        docs = [(relative_to(path, self.dir), _read_json(ctx.pack_dir, path)) for _, path in levels]
        try:
            return {target: project_json(ctx.pack, ctx.seed, self.project, defs, docs, key)}
        except (KeyError, TypeError) as exc:  # a level file edited by hand since the build
            raise PipelineError([f"{ctx.pack_dir / target}: cannot list the levels ({type(exc).__name__}: {exc}); rebuild the pack with --force"]) from None


def _floor(level: Level) -> int | None:
    """The map's floor in a dungeon of floors (`place.stairs` writes it), None for a map alone."""
    floor = level.properties.get("floor")
    return floor if isinstance(floor, int) and not isinstance(floor, bool) and "floors" in level.properties else None


def _art_layer_name(stem: str) -> str:
    return f"drawn_{stem}"


def _local(gids: np.ndarray, first: int, count: int) -> np.ndarray:
    """An art layer's gids of the tileset from `first` as its tile ids + 1, with their left-right
    and upside-down flips; 0 elsewhere."""
    bare = (gids & np.uint32(GID_MASK)).astype(np.int64)
    mine = (bare >= first) & (bare < first + count)
    return np.where(mine, (bare - first + 1).astype(np.uint32) | (gids & np.uint32(FLIP_H | FLIP_V)), 0).astype(np.uint32)


def _read_json(pack_dir: Path, rel: str) -> Any:
    try:
        return json.loads((pack_dir / rel).read_bytes())
    except ValueError as exc:
        raise PipelineError([f"{pack_dir / rel}: not the JSON this build wrote ({exc}); rebuild the pack with --force"]) from None
