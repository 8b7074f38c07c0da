"""Hand-drawn art carried on a Level: the tiles a person drew in Tiled (a map `load.tmx` reads, a
room `place.prefabs` stamps), beside the symbols the stages work on.

A Level's `art` (an `Art`, or None for a map with none) holds the tilesets the art is drawn
with and one or more named layers of gids in Tiled's own form: per cell, 0 for nothing, else
the tile's number counted across the art's tilesets (the first from 1, each next one after the
last tile of the one before) with Tiled's flip bits on top. Exporters write these cells with
that art (its tilesets added to the map file, its layers as tile layers) and every other cell
with the pack's tile for its symbol.

The rule that keeps art and symbols agreeing: each drawn cell remembers the symbol it was
drawn for (`drawn_for`, by name). A cell whose symbol a later stage changes (a rewrite rule, a
maze carved into a loaded map, another map overlaid) loses its art, so the pack's tile for the
new symbol shows there; cells whose symbol stays keep their art. The build applies it after
every stage (`carry_art`): a stage of one input passes its input's art on without knowing of
it, a stage that changes the map's size drops it, and a stage of several inputs keeps only
what it pastes itself (`compose.overlay` pastes its top's art where it paints).

A stage that puts a drawn map, or part of one, into its output calls `paste_art`; one that
turns it (`place.prefabs`) calls `turned_art` first; and any stage whose Levels may carry art
returns the tilesets from `StageParams.art_tilesets`, so that exporters know, as the recipe
loads, which tileset files they write.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from pipeline.level.art import FLIP_D, FLIP_H, FLIP_V, FLIPS, GID_MASK, Art, ArtTile, ArtTileset, read_tileset
from pipeline.level import Level


# --------------------------------------------------------------------------------------------
# What stages call.
# --------------------------------------------------------------------------------------------


def paste_art(target: Level, source: Level, x: int, y: int, mask: np.ndarray | None = None) -> None:
    """Copy `source`'s art into `target` with `source`'s top-left cell at (x, y) of `target`,
    on the cells of `source` where `mask` ((h, w) bool; None: all of them) is true: there
    `target`'s art becomes exactly `source`'s (none where `source` has none, so the pack's tile
    shows). Tilesets merge by identity; layers by name, `target`'s first. Cells of `source`
    that fall outside `target` are left out. Sets `target.art` to a new Art (arrays are never
    written in place: they may be an input's, read-only); call it after `target.tiles` holds
    the pasted symbols, as each pasted cell's art counts as drawn for `source`'s symbol."""
    h, w = source.tiles.shape
    where = np.ones((h, w), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    if where.shape != (h, w):
        raise ValueError(f"paste_art: the mask is {where.shape[1]} x {where.shape[0]}, the source {w} x {h}")
    H, W = target.tiles.shape
    # The part of the source inside the target.
    sy0, sx0 = max(0, -y), max(0, -x)
    sy1, sx1 = min(h, H - y), min(w, W - x)
    if sy0 >= sy1 or sx0 >= sx1 or not where[sy0:sy1, sx0:sx1].any():
        return
    src_art = _aligned(source)
    dst_art = _aligned(target)
    if src_art is None and dst_art is None:
        return
    cut = where[sy0:sy1, sx0:sx1]
    ty0, tx0 = y + sy0, x + sx0
    region = (slice(ty0, ty0 + cut.shape[0]), slice(tx0, tx0 + cut.shape[1]))
    full = np.zeros((H, W), dtype=bool)
    full[region] = cut

    tilesets = list(dst_art.tilesets) if dst_art else []
    symbols = list(dst_art.symbols) if dst_art else []
    layers = {name: gids.copy() for name, gids in dst_art.layers.items()} if dst_art else {}
    drawn_for = dst_art.drawn_for.copy() if dst_art else np.zeros((H, W), dtype=np.uint8)
    for gids in layers.values():
        gids[full] = 0
    if src_art is not None:
        table = _renumber(src_art.tilesets, tilesets)
        names = _merged_names(symbols, src_art.symbols)
        sub = (slice(sy0, sy1), slice(sx0, sx1))
        for name, gids in src_art.layers.items():
            out = layers.setdefault(name, np.zeros((H, W), dtype=np.uint32))
            piece = out[region]
            piece[cut] = table(gids[sub][cut])
        drawn_for[region][cut] = names[src_art.drawn_for[sub][cut]]
    target.art = _tidy(Art(tuple(tilesets), layers, drawn_for, tuple(symbols)))


def clear_art(level: Level, mask: np.ndarray) -> None:
    """Drop `level`'s art on the cells where `mask` is true (a stage that redraws them)."""
    art = _aligned(level)
    if art is None or not mask.any():
        return
    layers = {}
    for name, gids in art.layers.items():
        gids = gids.copy()
        gids[mask] = 0
        layers[name] = gids
    level.art = _tidy(replace(art, layers=layers))


def turned_art(art: Art, rotation: int, mirrored: bool) -> Art:
    """`art` mirrored left-right (if asked), then turned `rotation` degrees clockwise (a
    multiple of 90), each tile's flip bits turned with it, as `place.prefabs` turns its rooms."""
    layers = dict(art.layers)
    drawn_for = art.drawn_for
    if mirrored:
        layers = {n: _flip_bits(np.fliplr(g), _MIRROR) for n, g in layers.items()}
        drawn_for = np.fliplr(drawn_for)
    for _ in range(rotation // 90 % 4):
        layers = {n: _flip_bits(np.rot90(g, -1), _TURN) for n, g in layers.items()}
        drawn_for = np.rot90(drawn_for, -1)
    return replace(art, layers={n: np.ascontiguousarray(g) for n, g in layers.items()}, drawn_for=np.ascontiguousarray(drawn_for))


def mirrored_tile(tile: ArtTile | None) -> ArtTile | None:
    """A tile object's tile after a left-right mirror."""
    return None if tile is None else replace(tile, flips=tile.flips ^ FLIP_H)


def settle_art(level: Level) -> None:
    """Apply the rule to `level` in place: art of another size than its tiles goes, and so does
    the art of every cell whose symbol is no longer the one it was drawn for."""
    art = level.art
    if art is None:
        return
    if art.shape != level.tiles.shape or any(g.shape != level.tiles.shape for g in art.layers.values()):
        level.art = None
        return
    stale = art.drawn() & ~_still_drawn_for(art, level)
    if stale.any():
        clear_art(level, stale)
    elif not art.layers or not any(g.any() for g in art.layers.values()):
        level.art = None


def carry_art(inputs: list[Level], made: Level) -> None:
    """What the build does with art after a stage runs: a Level returned without art by a stage
    of one input takes its input's (a stage need not know of art to pass it on), then the rule
    (`settle_art`) drops what no longer fits. A stage of several inputs carries only the art it
    pastes itself."""
    if made.art is None and len(inputs) == 1 and inputs[0].art is not None:
        made.art = inputs[0].art
    settle_art(made)


def valid_art(level: Level) -> Art | None:
    """`level`'s art with the rule applied, without changing `level` (what exporters draw)."""
    if level.art is None:
        return None
    probe = Level(tiles=level.tiles, alphabet=level.alphabet, art=level.art)
    settle_art(probe)
    return probe.art


def tilesets_of(level: Level) -> list[ArtTileset]:
    """The art tilesets `level` draws with: its art's, then its tile objects' (found among those
    this process read), once each."""
    seen: dict[str, ArtTileset] = {ts.key: ts for ts in level.art.tilesets} if level.art else {}
    for obj in level.objects:
        if obj.art is not None and obj.art.tileset not in seen and (tileset := read_tileset(obj.art.tileset)) is not None:
            seen[obj.art.tileset] = tileset
    return list(seen.values())


# --------------------------------------------------------------------------------------------
# What exporters call.
# --------------------------------------------------------------------------------------------


def export_gids(art: Art, firstgid_of: dict[str, int]) -> dict[str, np.ndarray]:
    """The art's layers with each gid numbered as the exported map numbers its tileset
    (`firstgid_of`: tileset key -> its firstgid in the map), flip bits kept."""
    table = _renumber_to(art.tilesets, firstgid_of)
    return {name: table(gids) for name, gids in art.layers.items()}


def object_art_gid(tile: ArtTile, firstgid_of: dict[str, int]) -> int:
    return (firstgid_of[tile.tileset] + tile.tile) | tile.flips


def flipped_tiles(pixels: np.ndarray, flips: np.ndarray) -> np.ndarray:
    """Tiles' pixels ((n, th, tw, 4)) as Tiled draws them with flip bits `flips` (n,): the
    diagonal flip first, then the horizontal and the vertical (Tiled's order)."""
    out = pixels.copy()
    for k in range(8):
        bits = (k & 4) * (FLIP_H // 4) | (k & 2) * (FLIP_V // 2) | (k & 1) * FLIP_D
        chosen = flips == bits
        if not chosen.any() or bits == 0:
            continue
        tiles = pixels[chosen]
        if bits & FLIP_D:
            tiles = tiles.transpose(0, 2, 1, 3)  # square tiles: exporters refuse others with art
        if bits & FLIP_H:
            tiles = tiles[:, :, ::-1]
        if bits & FLIP_V:
            tiles = tiles[:, ::-1]
        out[chosen] = tiles
    return out


# --------------------------------------------------------------------------------------------


def _aligned(level: Level) -> Art | None:
    art = level.art
    return art if art is not None and art.shape == level.tiles.shape else None


def _still_drawn_for(art: Art, level: Level) -> np.ndarray:
    """(h, w) bool: cells whose symbol is the one their art was drawn for."""
    index = {s.name: i for i, s in enumerate(level.alphabet)}
    lut = np.array([index.get(name, -1) for name in art.symbols] or [-1], dtype=np.int64)
    return lut[np.minimum(art.drawn_for, len(lut) - 1)] == level.tiles


def _merged_names(symbols: list[str], more: tuple[str, ...]) -> np.ndarray:
    """Append `more` to `symbols` (by name, in place); each of `more`'s index in the result."""
    out = np.zeros(max(len(more), 1), dtype=np.uint8)
    for i, name in enumerate(more):
        if name not in symbols:
            symbols.append(name)
        out[i] = symbols.index(name)
    if len(symbols) > 256:  # a Level holds 256 symbols: art drawn for more cannot be
        raise ValueError("paste_art: the art is drawn for more than 256 symbols")
    return out


def _renumber(source: tuple[ArtTileset, ...], into: list[ArtTileset]):  # type: ignore[no-untyped-def]
    """Add `source`'s tilesets to `into` (in place, by key) and return the function that
    renumbers `source`'s gids into `into`'s numbering."""
    for ts in source:
        if all(t.key != ts.key for t in into):
            into.append(ts)
    firsts = {}
    first = 1
    for ts in into:
        firsts[ts.key] = first
        first += ts.tilecount
    return _renumber_to(source, firsts)


def _renumber_to(source: tuple[ArtTileset, ...], firstgid_of: dict[str, int]):  # type: ignore[no-untyped-def]
    starts = []
    first = 1
    for ts in source:
        starts.append((first, firstgid_of[ts.key] - first))
        first += ts.tilecount
    bounds = np.array([s for s, _ in starts], dtype=np.int64)
    shifts = np.array([d for _, d in starts], dtype=np.int64)

    def table(gids: np.ndarray) -> np.ndarray:
        if not len(bounds):
            return np.zeros_like(gids, dtype=np.uint32)
        gids = gids.astype(np.uint32)
        bare = (gids & np.uint32(GID_MASK)).astype(np.int64)
        which = np.clip(np.searchsorted(bounds, bare, side="right") - 1, 0, None)
        moved = np.where(bare != 0, bare + shifts[which], 0).astype(np.uint32)
        return np.where(bare != 0, moved | (gids & np.uint32(FLIPS)), 0).astype(np.uint32)

    return table


def _tidy(art: Art) -> Art | None:
    """`art` without its empty layers and unused tilesets, or None when nothing is drawn."""
    layers = {n: g for n, g in art.layers.items() if g.any()}
    if not layers:
        return None
    used = np.unique(np.concatenate([np.unique(g & np.uint32(GID_MASK)) for g in layers.values()]))
    used = used[used != 0].astype(np.int64)
    firsts = art.firstgids()
    keep = [ts for first, ts in zip(firsts, art.tilesets) if ((used >= first) & (used < first + ts.tilecount)).any()]
    if len(keep) < len(art.tilesets):
        firstgid_of, first = {}, 1
        for ts in keep:
            firstgid_of[ts.key] = first
            first += ts.tilecount
        table = _renumber_to(art.tilesets, {ts.key: firstgid_of.get(ts.key, 1) for ts in art.tilesets})
        layers = {n: table(g) for n, g in layers.items()}
    return Art(tuple(keep), layers, art.drawn_for, art.symbols)


def _flip_table(transform: np.ndarray) -> np.ndarray:
    """For each of Tiled's 8 flip states (bits H, V, D as 4, 2, 1), the state after the whole
    tile is also transformed by `transform` (a 2 x 2 matrix on (x, y), y down)."""
    def matrix(k: int) -> np.ndarray:
        m = np.eye(2, dtype=int)
        if k & 1:
            m = np.array([[0, 1], [1, 0]]) @ m  # diagonal first
        if k & 4:
            m = np.array([[-1, 0], [0, 1]]) @ m
        if k & 2:
            m = np.array([[1, 0], [0, -1]]) @ m
        return m

    states = [matrix(k) for k in range(8)]
    out = np.zeros(8, dtype=np.uint32)
    for k in range(8):
        after = transform @ states[k]
        j = next(j for j in range(8) if (states[j] == after).all())
        out[k] = ((j & 4) << 29) | ((j & 2) << 29) | ((j & 1) << 29)
    return out


_MIRROR = _flip_table(np.array([[-1, 0], [0, 1]]))
_TURN = _flip_table(np.array([[0, -1], [1, 0]]))  # clockwise on screen: (x, y) -> (-y, x)


def _flip_bits(gids: np.ndarray, table: np.ndarray) -> np.ndarray:
    state = ((gids & np.uint32(FLIP_H)) >> 29 | (gids & np.uint32(FLIP_V)) >> 29 | (gids & np.uint32(FLIP_D)) >> 29).astype(np.int64)
    out = (gids & np.uint32(GID_MASK)) | table[state]
    return np.where(gids & np.uint32(GID_MASK), out, 0).astype(np.uint32)
