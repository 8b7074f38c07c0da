"""A drawn map's art kept on its Level (pipeline.drawn_art): the tilesets its tile layers and
tile objects use, and each layer read as drawn, so that exporters draw the cells as the designer
did."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from pipeline.level.art import FLIP_D, FLIPS, Art, ArtTile, ArtTileset, art_tileset
from pipeline.level import Level
from pipeline.tiled.as_level.symbols import exported_prefix
from pipeline.tiled.read.error import MapFileError
from pipeline.tiled.read.files import ReadFile
from pipeline.tiled.read.layer_data import GID_MASK
from pipeline.tiled.read.model import TiledMap, TileLayer, Tileset, tileset_of


def keep_art(read: ReadFile, parsed: TiledMap, tilesets: list[Tileset], chosen: list[TileLayer], level: Level) -> tuple[list[str], list[ArtTileset]]:
    """Put the map's drawn tiles on `level` as its art (pipeline.drawn_art): the tilesets its
    layers and tile objects use, each read layer as drawn (flips kept), every drawn cell
    counted as drawn for the symbol it has. Returns what is not kept, and why, and the
    tilesets kept."""
    used = np.unique(np.concatenate([np.unique(lay.gids) for lay in chosen] + [np.array([o.gid for o in parsed.objects if o.gid], dtype=np.uint32)]))
    used = used[used != 0].astype(np.int64)
    flipped = np.zeros(0, dtype=np.int64)
    if chosen:
        diagonal = np.concatenate([(lay.drawn[(lay.drawn & np.uint32(FLIP_D)) != 0] & np.uint32(GID_MASK)).ravel() for lay in chosen])
        flipped = np.unique(diagonal).astype(np.int64)
    kept: dict[int, ArtTileset] = {}
    not_drawn: list[str] = []
    for ts in tilesets:
        ends = ts.firstgid + (ts.tilecount if ts.tilecount is not None else GID_MASK)
        mine = used[(used >= ts.firstgid) & (used < ends)]
        if not mine.size or exported_prefix(ts) is not None:
            # A tileset our exporters wrote draws symbols, which the pack draws again (its
            # autotiled walls then meet the cells a later stage changes): not art.
            continue
        art, problem = _art_tileset(read, ts, (parsed.tile_width, parsed.tile_height))
        if art is not None and art.tile_width != art.tile_height and ((flipped >= ts.firstgid) & (flipped < ends)).any():
            art, problem = None, f"has {art.tile_width} x {art.tile_height}-pixel tiles flipped diagonally (turned), which only square tiles can be"
        if art is None:
            not_drawn.append(f"tileset {ts.name!r} {problem}, so its tiles are drawn with the pack's tiles for their symbols")
        else:
            kept[ts.firstgid] = art
    if not kept:
        level.objects = [replace(o, art=None) if o.art else o for o in level.objects]
        return not_drawn, []
    # The tileset of each gid, and where its tiles start among the kept ones (0: not kept).
    firsts = np.array([ts.firstgid for ts in tilesets], dtype=np.int64)
    counts = np.array([ts.tilecount if ts.tilecount is not None else kept[ts.firstgid].tilecount if ts.firstgid in kept else 0 for ts in tilesets], dtype=np.int64)
    starts = np.zeros(len(tilesets), dtype=np.int64)
    art_first = 1
    for k, ts in enumerate(tilesets):
        if ts.firstgid in kept:
            starts[k] = art_first
            art_first += kept[ts.firstgid].tilecount

    layers: dict[str, np.ndarray] = {}
    for lay in chosen:
        bare = lay.gids.astype(np.int64)
        which = np.clip(np.searchsorted(firsts, bare, side="right") - 1, 0, None)
        local = bare - firsts[which]
        ok = (bare != 0) & (bare >= firsts[which]) & (starts[which] > 0) & (local < counts[which])
        gids = np.where(ok, (starts[which] + local).astype(np.uint32) | (lay.drawn & np.uint32(FLIPS)), 0).astype(np.uint32)
        name, n = lay.name, 1
        while name in layers:  # Tiled allows two layers of one name; the art keeps both
            n += 1
            name = f"{lay.name} #{n}"
        layers[name] = gids

    objects = []
    for obj in level.objects:
        if obj.art is not None:
            drawn = obj.art.tile
            ts = tileset_of(tilesets, drawn & GID_MASK)
            tile = kept.get(ts.firstgid) if ts is not None else None
            # Tiled flips a tile object left-right and upside down, never diagonally.
            obj = replace(obj, art=ArtTile(tile.key, (drawn & GID_MASK) - ts.firstgid, drawn & (FLIPS & ~FLIP_D)) if tile and ts else None)
        objects.append(obj)
    level.objects = objects
    order = [kept[ts.firstgid] for ts in tilesets if ts.firstgid in kept]
    art = Art(tuple(order), layers, level.tiles.copy(), tuple(s.name for s in level.alphabet))
    # Tile objects name their tileset by key, which exporters find among the stage's
    # `art_tilesets`: a map whose only drawn tiles are objects carries no art of cells.
    level.art = art if any(g.any() for g in layers.values()) else None
    return not_drawn, order


def _art_tileset(read: ReadFile, ts: Tileset, map_tile: tuple[int, int]) -> tuple[ArtTileset | None, str]:
    """The tileset as art, or None and why it cannot be."""
    if not ts.image or ts.collection:
        return None, "has no tilesheet image (an image collection, a picture per tile)"
    if ts.tile_size != map_tile:
        return None, f"has {ts.tile_size[0]} x {ts.tile_size[1]}-pixel tiles on a map of {map_tile[0]} x {map_tile[1]}-pixel cells"
    try:
        data = read(ts.image, f"the image of tileset {ts.name!r},")
    except MapFileError as exc:
        return None, f"cannot be drawn: {exc}"
    try:
        import io

        from PIL import Image

        with Image.open(io.BytesIO(data)) as image:
            size = image.size
            image.convert("RGBA")  # decodes it: a truncated file fails here, not in an export
    except Exception as exc:  # PIL raises many kinds for a file that is no image
        return None, f"has an image {ts.image} that cannot be read ({type(exc).__name__}: {exc})"
    tw, th = ts.tile_size
    columns = ts.columns or max(0, (size[0] - 2 * ts.margin + ts.spacing) // (tw + ts.spacing))
    rows = max(0, (size[1] - 2 * ts.margin + ts.spacing) // (th + ts.spacing))
    count = ts.tilecount if ts.tilecount is not None else columns * rows
    if columns < 1 or count < 1 or count > columns * rows:
        return None, f"has an image {ts.image} of {size[0]} x {size[1]} pixels, which holds no {count} tiles of {tw} x {th} in {columns} columns"
    return art_tileset(ts.name, ts.image, data, size, tw, th, ts.margin, ts.spacing, columns, count, ts.tiles), ""
