"""A map's hand-drawn art (pipeline.drawn_art) as an exporter writes it: its tilesets numbered
after the pack's, its layers merged with the pack's tile layers, and the pixels previews draw
it with."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from pipeline.drawn_art import clear_art, export_gids, flipped_tiles, object_art_gid
from pipeline.level.art import FLIPS, GID_MASK, Art, ArtTileset
from pipeline.errors import PipelineError
from pipeline.level import Level, Symbol
from pipeline.tiled.tileset import Tileset, sheet_grid
from pipeline.tiled.tilesheet import Atlas, BuiltTileset, indexed

# Where a pack keeps the tilesets of drawn art: apart from its own (tilesets/NAME.*), so that a
# drawn tileset named as the pack's never overwrites it.
FOLDER = "tilesets/drawn"


def stems(tilesets: list[ArtTileset]) -> list[str]:
    """A file name (without extension) per tileset: its name made safe for a path, and for a
    second tileset of one name with the start of its key."""
    out: list[str] = []
    for ts in tilesets:
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", ts.name).strip("._") or "tileset"
        out.append(stem if stem not in out else f"{stem}-{ts.key[:8]}")
    return out


def as_tileset(ts: ArtTileset, image: str) -> Tileset:
    """The tileset as the Tiled writers write one, its image at `image` (relative to the file
    the tileset is written in)."""
    _, rows = sheet_grid(*ts.image_size, ts.tile_width, ts.tile_height, ts.margin, ts.spacing)
    rows = max(rows, -(-ts.tilecount // ts.columns))
    return Tileset(
        name=ts.name, tile_width=ts.tile_width, tile_height=ts.tile_height, margin=ts.margin, spacing=ts.spacing,
        columns=ts.columns, rows=rows, image=image, image_size=ts.image_size,
        tile_properties={tid: dict(props) for tid, props in ts.tile_properties},
    )


@dataclass(frozen=True)
class MapArt:
    """What of a map's art one exported map holds."""

    tilesets: list[tuple[int, ArtTileset, str]]  # (firstgid in the map, tileset, file stem)
    layers: dict[str, np.ndarray]  # art layers as the map numbers them, flip bits kept
    cells: np.ndarray  # (h, w) bool: cells drawn with the art
    firstgid_of: dict[str, int]  # tileset key -> firstgid
    next_gid: int  # the first gid after the art's tilesets

    def merged(self, drawn: list[tuple[str, np.ndarray]]) -> list[tuple[str, np.ndarray]]:
        """The pack's tile layers with the art: a drawn cell shows its art alone (the pack's
        layers are empty there), an art layer named as one of the pack's is drawn in it, the
        others come after the pack's, in the art's order."""
        out = []
        for name, gids in drawn:
            gids = gids.copy()
            gids[self.cells] = 0
            if name in self.layers:
                gids = np.where(self.layers[name] != 0, self.layers[name], gids)
            out.append((name, gids))
        names = {name for name, _ in drawn}
        return out + [(name, gids) for name, gids in self.layers.items() if name not in names]

    def object_gids(self, level: Level, pack_gids: list[int]) -> list[int]:
        """Each object's gid: a hand-drawn tile object's art tile, else the pack's (`pack_gids`)."""
        return [
            object_art_gid(o.art, self.firstgid_of) if o.art is not None and o.art.tileset in self.firstgid_of else g
            for o, g in zip(level.objects, pack_gids)
        ]


def map_art(art: Art | None, level: Level, bound: list[tuple[ArtTileset, str]], first: int, left: frozenset[str] = frozenset()) -> MapArt | None:
    """The art of `level` (`art`: its valid part) numbered from gid `first`, with the tilesets
    the exporter knows (`bound`: each with its file stem), but for the tilesets it leaves out
    (`left`, by key: their cells are drawn with the pack's tiles); None when the map has no art."""
    if art is not None and left & {ts.key for ts in art.tilesets}:
        art = _without(art, left)
    keys = [ts.key for ts in art.tilesets] if art is not None else []
    keys += [k for k in dict.fromkeys(o.art.tileset for o in level.objects if o.art is not None) if k not in keys and k not in left]
    if not keys:
        return None
    known = {ts.key: (ts, stem) for ts, stem in bound}
    missing = [k for k in keys if k not in known]
    if missing:
        name = next((ts.name for ts in (art.tilesets if art else ()) if ts.key == missing[0]), missing[0][:12])
        raise PipelineError([
            f"the map carries art drawn with tileset {name!r} that no stage before this exporter declares"
            " (a stage that pastes art returns its tilesets from art_tilesets()), so its files are not among the pack's"
        ])
    tilesets, firstgid_of = [], {}
    for key in keys:
        ts, stem = known[key]
        firstgid_of[key] = first
        tilesets.append((first, ts, stem))
        first += as_tileset(ts, "").tilecount
    layers = export_gids(art, firstgid_of) if art is not None else {}
    cells = art.drawn() if art is not None else np.zeros(level.tiles.shape, dtype=bool)
    return MapArt(tilesets, layers, cells, firstgid_of, first)


def _without(art: Art, left: frozenset[str]) -> Art | None:
    """`art` without the cells drawn with the tilesets `left` (by key)."""
    gone = np.zeros(art.shape, dtype=bool)
    for start, ts in zip(art.firstgids(), art.tilesets):
        if ts.key in left:
            for gids in art.layers.values():
                bare = gids & np.uint32(GID_MASK)
                gone |= (bare >= start) & (bare < start + ts.tilecount)
    probe = Level(tiles=np.zeros(art.shape, dtype=np.uint8), alphabet=(Symbol("?", "?", "#000000"),), art=art)
    clear_art(probe, gone)
    return probe.art


def with_art_atlas(built: BuiltTileset, layers: list[np.ndarray], object_gids: list[int], art: MapArt) -> tuple[BuiltTileset, list[np.ndarray], list[int]]:
    """A BuiltTileset whose atlas also holds the art's tiles as the map draws them (each flip
    of a tile its own entry), and the layers and object gids numbered into it, for previews."""
    first = min(f for f, _, _ in art.tilesets)
    values = np.unique(np.concatenate([np.unique(g[g >= first]) for g in layers] + [np.array([g for g in object_gids if g >= first], dtype=np.uint32)]))
    values = values.astype(np.uint32)
    base = built.atlas.rgba
    th, tw = base.shape[1:3]
    extra = np.zeros((len(values), th, tw, 4), dtype=np.uint8)
    bare = (values & np.uint32(GID_MASK)).astype(np.int64)
    for start, ts, _ in art.tilesets:
        mine = (bare >= start) & (bare < start + ts.tilecount)
        if mine.any():
            pixels = ts.tiles()[bare[mine] - start]
            extra[mine] = flipped_tiles(pixels, (values[mine] & np.uint32(FLIPS)).astype(np.int64))
    rgba = np.concatenate([base, extra])
    index, palette = indexed(rgba)
    drawn = replace(built)
    drawn.__dict__["atlas"] = Atlas(rgba, index, palette)  # the atlas is a cached property: set it as one

    def renumber(gids: np.ndarray) -> np.ndarray:
        out = gids.astype(np.int64)
        high = out >= first
        out[high] = len(base) + np.searchsorted(values, gids[high])
        return out.astype(np.uint32)

    moved = [renumber(g) for g in layers]
    objects = [int(renumber(np.array([g], dtype=np.uint32))[0]) if g >= first else g for g in object_gids]
    return drawn, moved, objects
