"""Turn a tileset spec and a map's alphabet into the Tileset, its tilesheet PNG and the pixels
previews are drawn from: art we draw, or the user's own sheet (extruded when asked)."""

from __future__ import annotations

import functools
import io
import math
from dataclasses import dataclass, field

import numpy as np
from PIL import Image

from pipeline.errors import PipelineError, image_error_text
from pipeline.level import PropertyValue, Symbol, typed_property
from pipeline.tiled.art import cut_tiles, ground_tile, lay_out, symbol_tile, worn_tile
from pipeline.tiled.icons import icon_tile
from pipeline.tiled.autotile import WangKind, choose, set_masks, wang_id
from pipeline.tiled.palette_png import bits_for, pack
from pipeline.tiled.spec import AutotileSpec, TilesetSpec
from pipeline.tiled.tileset import Rect, Tileset, WangSet, sheet_grid
from pipeline.tiled.walls import lone_wall, wall_material, wall_pieces

MAX_COLUMNS = 16


@dataclass(frozen=True)
class Autotile:
    """A symbol drawn through a Wang set: tile_ids[k] draws set_masks(kind)[k]."""

    kind: WangKind
    tile_ids: tuple[int, ...]
    edge_inside: bool
    joins: tuple[str, ...] = ()  # symbols counted as more of it when picking pieces

    def pieces(self, tiles: np.ndarray, index: int, names: list[str]) -> np.ndarray:
        """Tile id for every cell of symbol `index` in a map of symbol indices (others: undefined)."""
        inside = tiles == index
        others = [i for i, n in enumerate(names) if n in self.joins]
        if others:
            inside = inside | np.isin(tiles, others)
        return np.asarray(self.tile_ids, dtype=np.int64)[choose(inside, self.kind, self.edge_inside)]


@dataclass(frozen=True)
class BuiltTileset:
    tileset: Tileset
    png: bytes
    pixels: np.ndarray  # the sheet as (H, W, 4) RGBA, for previews
    autotiles: dict[str, Autotile]  # symbol name -> its Wang set
    warnings: tuple[str, ...] = ()  # what this map's symbols most likely got wrong (misnamed_symbols)
    variants: dict[str, tuple[tuple[int, float], ...]] = field(default_factory=dict)  # name -> (tile id, weight) of its variants

    @functools.cached_property
    def atlas(self) -> Atlas:
        """The tiles by gid (the tileset's first gid is 1), made once per tileset for previews."""
        ts = self.tileset
        rgba = np.zeros((1 + ts.tilecount, ts.tile_height, ts.tile_width, 4), dtype=np.uint8)
        tiles = cut_tiles(self.pixels, ts.tile_width, ts.tile_height, ts.margin, ts.spacing)
        rgba[1 : 1 + len(tiles)] = np.stack(tiles)[: ts.tilecount]
        index, palette = _indexed(rgba)
        return Atlas(rgba, index, palette)


@dataclass(frozen=True)
class Atlas:
    """Every tile's pixels by gid (entry 0 empty); and, when the sheet has at most 255 colours,
    all opaque, the same as palette indices (0 = clear). Most art does, and a palette image is
    a quarter of the pixels to move and several times faster to write as PNG."""

    rgba: np.ndarray  # (gids, th, tw, 4)
    index: np.ndarray | None  # (gids, th, tw) uint8
    palette: np.ndarray | None  # (colours, 4) RGBA, entry 0 clear

    @functools.cached_property
    def packed(self) -> tuple[int, np.ndarray] | None:
        """(bits, (gids, th, row bytes)): every tile's palette rows packed as a PNG stores them,
        when it has a palette and a tile row fills whole bytes."""
        if self.index is None or self.palette is None:
            return None
        bits = bits_for(len(self.palette))
        if (self.index.shape[2] * bits) % 8:
            return None
        return bits, pack(self.index, bits)


def _indexed(rgba: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
    alpha = rgba[..., 3]
    if ((alpha != 0) & (alpha != 255)).any():
        return None, None
    packed = rgba.view(np.uint32)[..., 0]  # one number per pixel
    opaque = np.unique(packed[alpha == 255])
    if len(opaque) > 255:
        return None, None
    index = (np.searchsorted(opaque, packed) + 1).astype(np.uint8)
    index[alpha == 0] = 0
    palette = np.concatenate([np.zeros((1, 4), np.uint8), opaque.view(np.uint8).reshape(-1, 4)])
    return index, palette


indexed = _indexed  # for atlases made elsewhere (pipeline.tiled.drawn: the art of drawn maps)

_BUILT: dict[tuple[str, tuple[Symbol, ...], bytes], BuiltTileset] = {}


def build_tileset(spec: TilesetSpec, alphabet: tuple[Symbol, ...], image: bytes = b"") -> BuiltTileset:
    """The tileset for maps of this alphabet, from the spec's own `image` (its bytes, read when
    the recipe loaded) if it has one. Each process builds it once per spec, alphabet and image:
    every map of a pack shares it."""
    key = (spec.model_dump_json(), alphabet, image)  # the same bytes object for every map: hashed once
    if key not in _BUILT:
        if len(_BUILT) >= 16:
            _BUILT.clear()
        if spec.image is None:
            _BUILT[key] = _generated(spec, alphabet)
        else:
            _BUILT[key] = _own_art(spec, alphabet, image)
    return _BUILT[key]


def misnamed_symbols(spec: TilesetSpec, alphabet: tuple[Symbol, ...]) -> list[str]:
    """What most likely names the wrong symbol, tileset and map seen together. A map's symbol
    that a generated tileset does not name while it names, for a symbol the map lacks, a name
    one letter from theirs: a misspelt legend (`wal` for `wall`), drawn as a plain tile in the
    symbol's own colour, without the wall art or the properties (`solid`) the file gives the
    name. And an `autotile` or `properties` table (of any tileset) for a name the map lacks, one
    letter from a symbol the tileset draws otherwise: a misspelt table (`[autotile.walls]`, or
    `[variants.flor]` for any symbol), whose art and `solid` the walls then lack; and a `joins`
    name one letter from a symbol. Not errors: a tileset shared by packs names symbols some
    maps lack (and object tiles), so names further apart (`decor` and `door`) are taken as
    meant. (A tilesheet's `tiles` must name every symbol: a missing one fails the map.)"""
    named = set(spec.colors) | set(spec.tiles) | set(spec.autotile) | set(spec.properties) | set(spec.icons)
    present = {s.name for s in alphabet}
    unused = sorted(named - present)
    lines = []
    for symbol in alphabet:
        close = [name for name in unused if _one_edit_apart(symbol.name, name)] if symbol.name not in named else []
        if close and spec.image is None:
            lines.append(f"symbol {symbol.name!r} is not named in tileset {spec.name!r} (did you mean {close[0]!r}?), so it is drawn as a plain tile in its own colour")
    for table, names in (("autotile", spec.autotile), ("properties", spec.properties), ("variants", spec.variants)):
        for name in sorted(set(names) - present):
            # Variants are drawn for any symbol, named in the file or not (a floor in its own colour).
            meant = [
                s.name for s in alphabet if (s.name in named or table == "variants") and s.name not in names and _one_edit_apart(s.name, name)
            ]
            if meant:
                lines.append(f"{table}.{name} of tileset {spec.name!r} names no symbol of the map (did you mean {meant[0]!r}?), so {meant[0]!r} is drawn without it")
    for name, auto in spec.autotile.items():
        for other in ([] if name not in present else [j for j in auto.joins if j not in present]):
            meant = [s.name for s in alphabet if s.name != name and _one_edit_apart(s.name, other)]
            if meant:
                lines.append(f"autotile.{name}.joins of tileset {spec.name!r}: {other!r} names no symbol of the map (did you mean {meant[0]!r}?), so {name!r} does not run on into it")
    return lines


def _one_edit_apart(a: str, b: str) -> bool:
    """Whether `b` is `a` with one letter added, dropped, changed, or two neighbours swapped;
    names of three letters or fewer differ by one letter too often to tell (`pit`, `pot`)."""
    if a == b or abs(len(a) - len(b)) > 1 or max(len(a), len(b)) < 4:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = next((k for k in range(len(a)) if a[k] != b[k]), len(a))
    if len(a) < len(b):
        return a[i:] == b[i + 1:]
    swapped = i + 1 < len(a) and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2:] == b[i + 2:]
    return a[i + 1:] == b[i + 1:] or swapped


def _partner(tileset: str, symbol: str, auto: AutotileSpec, alphabet: tuple[Symbol, ...]) -> Symbol:
    """What an autotiled symbol meets: `on`, else floor, else the first other symbol, else (a map
    of that symbol alone) a stand-in floor."""
    names = [s.name for s in alphabet]
    if auto.on is not None:
        if auto.on not in names:
            raise PipelineError([f"tileset {tileset!r}: autotile.{symbol}.on: no symbol {auto.on!r} in the map's alphabet ({', '.join(names)})"])
        return alphabet[names.index(auto.on)]
    for s in alphabet:
        if s.name == "floor" and s.name != symbol:
            return s
    others = [s for s in alphabet if s.name != symbol]
    # A map of walls alone (a generation that filled everything) still exports: its walls meet
    # only each other, so the ground they would meet is drawn nowhere; name it as usual.
    return others[0] if others else Symbol("?", "floor", "#000000")


def _wangset(symbol: Symbol, partner: Symbol, partner_tile: int | None, auto: Autotile, colors: dict[str, str]) -> WangSet:
    # The isolated piece (no neighbours) has the same wangid as plain partner ground, so it stays
    # out of the set: Tiled's terrain brush must never scatter pillars when painting floor.
    tiles = [(tile_id, wang_id(mask, auto.kind)) for tile_id, mask in zip(auto.tile_ids, set_masks(auto.kind)) if mask]
    if partner_tile is not None:
        tiles.append((partner_tile, wang_id(0, auto.kind)))
    tiles.sort()
    pair = ((symbol.name, colors.get(symbol.name, symbol.color)), (partner.name, colors.get(partner.name, partner.color)))
    return WangSet(symbol.name, auto.kind, pair, tuple(tiles))


def _properties(spec: TilesetSpec, name: str, symbol: Symbol | None) -> dict[str, PropertyValue]:
    props: dict[str, PropertyValue] = {"name": name}
    if symbol is not None:
        props["symbol"] = symbol.char
    props.update({k: typed_property(v) for k, v in spec.properties.get(name, {}).items()})
    return props


def _generated(spec: TilesetSpec, alphabet: tuple[Symbol, ...]) -> BuiltTileset:
    tw, th = spec.tile_size
    by_name = {s.name: s for s in alphabet}
    colors = {s.name: s.rgb() for s in alphabet}
    for name, color in spec.colors.items():
        colors[name] = Symbol("?", name, color).rgb()
    names = list(colors)  # alphabet order, then the object tiles the file adds
    walls = [n for n in spec.autotile if n in by_name]  # a shared tileset may autotile symbols this pack does not use
    partners = {n: _partner(spec.name, n, spec.autotile[n], alphabet) for n in walls}
    materials = {n: wall_material(colors[n], tw, th, spec.style, n) for n in walls}
    # Ground is drawn seamless, so it reads as one surface: floor, and with walls every symbol that
    # is not a wall or a picture (the ground of rooms, vaults, water). Without walls, each symbol
    # keeps its style's tile (puzzle boards want their cells told apart).
    ground = {"floor"} & set(names)
    if walls:
        ground |= {n for n in by_name if n not in materials and n not in spec.icons}
    frame = colors[walls[0]] if walls else None
    # What pictures of symbols stand on: what the walls meet, else any ground.
    floor = next((n for n in [p.name for p in partners.values()] + names if n in ground), None)

    def plain(name: str) -> np.ndarray:
        if name in materials:
            return lone_wall(materials[name], spec.style, name)
        if name in spec.icons:
            # A symbol's picture stands on the ground; an object tile is drawn over the map, on clear pixels.
            under = ground_tile(colors[floor], tw, th, spec.style, floor) if name in by_name and floor else None
            return icon_tile(spec.icons[name], colors[name], tw, th, under, frame or colors[name])
        if name in ground:
            return ground_tile(colors[name], tw, th, spec.style, name)
        return symbol_tile(colors[name], tw, th, spec.style, name)

    art = [plain(n) for n in names]
    tile_properties = {i: _properties(spec, n, by_name.get(n)) for i, n in enumerate(names)}
    autotiles: dict[str, Autotile] = {}
    wangsets = []
    for name in walls:
        auto_spec = spec.autotile[name]
        pieces = wall_pieces(auto_spec.set, materials[name], spec.style, name)
        first = len(art)
        art.extend(pieces)
        auto = Autotile(auto_spec.set, tuple(range(first, len(art))), auto_spec.edge == "inside", auto_spec.joins)
        autotiles[name] = auto
        for tile_id in auto.tile_ids:
            tile_properties[tile_id] = _properties(spec, name, by_name[name])
        partner = partners[name].name
        wangsets.append(_wangset(by_name[name], partners[name], names.index(partner) if partner in names else None, auto, spec.colors))
    # Last, so that a tileset's other tiles keep their ids when it gains variants.
    variants: dict[str, tuple[tuple[int, float], ...]] = {}
    for name, variant in spec.variants.items():
        if name not in names:
            continue  # a shared tileset's variants of a name this pack's maps lack
        variants[name] = variant.weighted(len(art))
        for k, (tile_id, _) in enumerate(variants[name]):
            art.append(worn_tile(art[names.index(name)], f"{name}#{k + 1}"))
            tile_properties[tile_id] = _properties(spec, name, by_name.get(name))
    columns = min(len(art), MAX_COLUMNS)
    rows = math.ceil(len(art) / columns)
    pixels = lay_out(art, columns, spec.margin, spacing=spec.spacing, extrude=spec.extrude)
    tileset = _tileset(spec, columns, rows, pixels, {n: i for i, n in enumerate(names)}, tile_properties, wangsets, variants)
    return BuiltTileset(tileset, _png(pixels), pixels, autotiles, tuple(misnamed_symbols(spec, alphabet)), variants)


def _own_art(spec: TilesetSpec, alphabet: tuple[Symbol, ...], data: bytes) -> BuiltTileset:
    if spec.image is None or not data:
        raise ValueError(f"tileset {spec.name!r}: own art is drawn from the image bytes read as the recipe loaded")
    try:
        with Image.open(io.BytesIO(data)) as image:
            is_png = image.format == "PNG"
            pixels = np.asarray(image.convert("RGBA"))
    except (OSError, ValueError) as exc:  # its header was read as the recipe loaded; its pixels can still be damaged
        raise PipelineError([f"tileset {spec.name!r}: cannot read its image {spec.image} ({image_error_text(exc)})"]) from None
    tw, th = spec.tile_size
    height, width = pixels.shape[:2]
    columns, rows = sheet_grid(width, height, tw, th, spec.margin, spec.spacing)
    by_name = {s.name: s for s in alphabet}
    names = dict(spec.tiles)
    tile_properties: dict[int, dict[str, PropertyValue]] = {}
    autotiles: dict[str, Autotile] = {}
    wangsets = []
    for name, auto_spec in spec.autotile.items():
        if name not in by_name:
            continue
        ids = auto_spec.tile_ids()
        if ids is None:  # refused when the tileset loaded: a sheet of one's own names its pieces
            raise PipelineError([f"tileset {spec.name!r}: autotile.{name}: give `first` or `tiles` (the set's ids in {spec.image})"])
        auto = Autotile(auto_spec.set, ids, auto_spec.edge == "inside", auto_spec.joins)
        autotiles[name] = auto
        for tile_id in ids:
            tile_properties[tile_id] = _properties(spec, name, by_name[name])
        # Without a plain tile of its own, the symbol is drawn by its fully surrounded piece.
        names.setdefault(name, ids[-1])
        partner = _partner(spec.name, name, auto_spec, alphabet)
        wangsets.append(_wangset(by_name[name], partner, names.get(partner.name), auto, spec.colors))
    for name, tile_id in names.items():
        tile_properties.setdefault(tile_id, _properties(spec, name, by_name.get(name)))
    variants = {name: v.weighted() for name, v in spec.variants.items()}
    for name, weighted in variants.items():
        for tile_id, _ in weighted:  # a game reads a cracked floor as floor
            tile_properties[tile_id] = _properties(spec, name, by_name.get(name))
    if spec.extrude:
        tiles = cut_tiles(pixels, tw, th, spec.margin, spec.spacing)
        pixels = lay_out(tiles, columns, spec.margin, spacing=spec.spacing, extrude=spec.extrude)
        png = _png(pixels)
    else:
        png = data if is_png else _png(pixels)
    tileset = _tileset(spec, columns, rows, pixels, names, tile_properties, wangsets, variants)
    return BuiltTileset(tileset, png, pixels, autotiles, tuple(misnamed_symbols(spec, alphabet)), variants)


def _tileset(
    spec: TilesetSpec,
    columns: int,
    rows: int,
    pixels: np.ndarray,
    names: dict[str, int],
    tile_properties: dict[int, dict[str, PropertyValue]],
    wangsets: list[WangSet],
    variants: dict[str, tuple[tuple[int, float], ...]],
) -> Tileset:
    # Extrusion widens the gutters: the tiles themselves stay where Tiled expects them.
    full: tuple[Rect, ...] = ((0, 0, *spec.tile_size),)
    # Walls are drawn filling their tiles (generated art always; own art by docs/tilesets.md's rule),
    # so a solid tile collides over its whole square: what the player sees is what stops them.
    collision = {i: full for i, props in sorted(tile_properties.items()) if props.get("solid") is True}
    return Tileset(
        name=spec.name,
        tile_width=spec.tile_size[0],
        tile_height=spec.tile_size[1],
        margin=spec.margin + spec.extrude,
        spacing=spec.spacing + 2 * spec.extrude,
        columns=columns,
        rows=rows,
        image=f"{spec.name}.png",
        image_size=(pixels.shape[1], pixels.shape[0]),
        names=names,
        tile_properties=dict(sorted(tile_properties.items())),
        wangsets=tuple(wangsets),
        collision=collision,
        probability=dict(sorted((tile, weight) for weighted in variants.values() for tile, weight in weighted)),
        animation={names[name]: spec.animations[name].timed() for name in sorted(spec.animations, key=names.__getitem__)},
    )


def _png(pixels: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(pixels, "RGBA").save(out, format="PNG")
    return out.getvalue()
