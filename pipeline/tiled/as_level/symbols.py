"""Which symbol each tile of a drawn map is (its `symbol` property, its class, or the tile
itself), and the alphabet they make: a Tiled map's tile layers as a Level's tiles."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from pipeline.level import PROVENANCE, SPARE_CHARS, Color, Level, MapObject, Symbol
from pipeline.output import spans
from pipeline.rewrite import palette
from pipeline.tiled.read.error import MapFileError
from pipeline.tiled.read.model import TiledMap, TileLayer, Tileset, tileset_of

# The names our generators use, with their chars and colours, so that a loaded map's walls and
# floors look and rewrite like a generated one's.
_KNOWN = {"wall": ("B", "#000000"), "floor": ("W", "#fff1e8"), "door": ("D", "#ab5236")}


def to_level(parsed: TiledMap, objects: list[MapObject], layer: str | None, empty: str, symbols: str = "property") -> tuple[Level, np.ndarray, list[TileLayer]]:
    """The map's tiles as a Level's symbols (`objects`: its objects, made a Level's), the cells
    with a tile, and the tile layers read (the one asked for, or all)."""
    if layer is not None and not parsed.layers:
        raise MapFileError(f"has no tile layer {layer!r} (it has no tile layers)")
    if layer is not None:
        chosen = [lay for lay in parsed.layers if lay.name == layer]
        if not chosen:
            names = ", ".join(repr(lay.name) for lay in parsed.layers)
            raise MapFileError(f"has no tile layer {layer!r} (its tile layers: {names})")
        chosen = chosen[:1]
    else:
        chosen = parsed.layers
    # Which layer decides each cell: the uppermost (last in the file) with a tile there.
    gids = np.zeros((parsed.height, parsed.width), dtype=np.uint32)
    source = np.full(gids.shape, -1, dtype=np.int64)
    for i, lay in enumerate(chosen):
        bare = lay.gids
        filled = bare != 0
        gids[filled] = bare[filled]
        source[filled] = i

    tilesets = sorted(parsed.tilesets, key=lambda t: t.firstgid)
    used = np.unique(gids[gids != 0])
    symbol_of: dict[int, str] = {}
    first_props: dict[str, dict[str, Any]] = {}
    ours: dict[int, str | None] = {}  # by firstgid: the prefix of a tileset our exporters wrote
    untagged: list[tuple[int, Tileset]] = []  # (gid, tileset) of tiles with no symbol, all told at once
    labels = _tileset_labels(tilesets)
    for gid in used.tolist():
        ts = tileset_of(tilesets, gid)
        local = gid - ts.firstgid if ts else -1
        if ts is None:
            raise MapFileError(f"{_where(gid, gids, source, chosen)}: tile gid {gid} is in none of the map's tilesets")
        props = ts.tiles.get(local, {})
        if symbols == "tile":
            symbol: Any = f"{labels[ts.firstgid]}:{local}"
        elif symbols == "class":
            symbol = ts.classes.get(local, "")
        else:
            prefix = ours.setdefault(ts.firstgid, exported_prefix(ts))
            if prefix is not None and props:
                char = props.get(f"{prefix}symbol")  # none on an object tile painted into the map
                props = {**props, "symbol": props[f"{prefix}name"], **({"char": char} if char else {})}
            symbol = props.get("symbol")
        if not isinstance(symbol, str) or not symbol or isinstance(symbol, Color):
            untagged.append((gid, ts))
            continue
        if symbol != symbol.strip():  # `lava ` would be a symbol of its own beside `lava`
            field_name = "class" if symbols == "class" else "`symbol`"
            raise MapFileError(
                f"{_where(gid, gids, source, chosen)}: tile {local} of tileset {ts.name!r} has {field_name} {symbol!r},"
                " with spaces at an end: remove them in Tiled's tileset editor"
            )
        symbol_of[gid] = symbol
        first_props.setdefault(symbol, props)
    if untagged:
        raise MapFileError(_untagged(untagged, symbols, _where(untagged[0][0], gids, source, chosen)))

    # Alphabet order: the empty symbol (the fill), then symbols by their first tile's gid.
    names = [empty] + [s for s in dict.fromkeys(symbol_of[g] for g in sorted(symbol_of)) if s != empty]
    if len(names) > 256:
        raise MapFileError(f"uses {len(names)} symbols; a map holds at most 256")
    alphabet = _alphabet(names, first_props)
    index = {name: i for i, name in enumerate(names)}
    lut_keys = np.array(sorted(symbol_of), dtype=np.uint32)
    lut_vals = np.array([index[symbol_of[g]] for g in sorted(symbol_of)], dtype=np.uint8)
    tiles = np.zeros(gids.shape, dtype=np.uint8)
    if lut_keys.size:
        filled = gids != 0
        tiles[filled] = lut_vals[np.searchsorted(lut_keys, gids[filled])]

    # A map this tool exported says where it came from (every exporter writes these four), and
    # the next export says it anew: not the map's own. A hand-made map's are warned of.
    exported = {"pack", "map", "seed", "stages"} <= parsed.properties.keys()
    properties = {k: v for k, v in parsed.properties.items() if not (exported and k in PROVENANCE)}
    return Level(tiles=tiles, alphabet=alphabet, objects=objects, properties=properties), gids != 0, chosen


def _tileset_labels(tilesets: list[Tileset]) -> dict[int, str]:
    """By firstgid, the name that `symbols = "tile"` gives each tileset's tiles: its own
    (`tileset` if it has none), and for a second tileset of one name `NAME#2` (and on), so that
    two tiles never share a symbol."""
    labels: dict[int, str] = {}
    seen: dict[str, int] = {}
    for ts in tilesets:
        name = ts.name or "tileset"
        seen[name] = seen.get(name, 0) + 1
        labels[ts.firstgid] = name if seen[name] == 1 else f"{name}#{seen[name]}"
    return labels


def _untagged(untagged: list[tuple[int, Tileset]], symbols: str, first: str) -> str:
    """The error for tiles with no symbol: the one, or how many and which (ids as ranges, per
    tileset), with where the first is and what to do."""
    what = "class" if symbols == "class" else "`symbol` property"
    if symbols == "class":
        hint = (
            "a tile's class names what it is (its Class, or Type before Tiled 1.9, in Tiled's tileset editor); or set"
            ' symbols = "property" to read `symbol` properties, or symbols = "tile" for a symbol per tile'
        )
    else:
        hint = (
            "a string naming what the tile is, e.g. \"floor\": set it in Tiled's tileset editor; or set symbols = \"class\""
            ' to take tiles\' classes as their symbols, or symbols = "tile" for a symbol per tile'
        )
    if len(untagged) == 1:
        gid, ts = untagged[0]
        return f"{first}: tile {gid - ts.firstgid} of tileset {ts.name!r} has no {what} ({hint})"
    by_tileset: dict[int, tuple[Tileset, list[int]]] = {}
    for gid, ts in untagged:
        by_tileset.setdefault(ts.firstgid, (ts, []))[1].append(gid - ts.firstgid)
    listed = "; ".join(f"tileset {ts.name!r} {'tile' if len(ids) == 1 else 'tiles'} {spans(ids)}" for ts, ids in by_tileset.values())
    return f"{len(untagged)} tiles have no {what}: {listed} (the first at {first}; {hint})"


def exported_prefix(ts: Tileset) -> str | None:
    """The property prefix of a tileset our exporters wrote ("", or "data_" from the godot
    profile), else None. Ours name every tile in `name`, and give a symbol's char as a one-letter
    `symbol` (object tiles, such as a chest, have none): read so, an exported map loads back with
    the symbols it had, touched up in Tiled or not. Only when every tile is so, and none has a
    `char`: a tileset drawn by hand that gives some tile a one-letter `symbol` and a `name`
    keeps its `symbol` as the symbol."""
    tiles = [props for props in ts.tiles.values() if props]
    for prefix in ("", "data_"):
        if any(f"{prefix}symbol" in p for p in tiles) and all(
            isinstance(p.get(f"{prefix}name"), str) and p[f"{prefix}name"] and "char" not in p
            and (f"{prefix}symbol" not in p or (isinstance(p[f"{prefix}symbol"], str) and len(p[f"{prefix}symbol"]) == 1))
            for p in tiles
        ):
            return prefix
    return None


def _where(gid: int, gids: np.ndarray, source: np.ndarray, layers: list[TileLayer]) -> str:
    ys, xs = np.nonzero(gids == gid)
    y, x = int(ys[0]), int(xs[0])
    return f"layer {layers[int(source[y, x])].name!r}, cell ({x}, {y})"


def _alphabet(names: list[str], props: dict[str, dict[str, Any]]) -> tuple[Symbol, ...]:
    taken: set[str] = set()
    chars: dict[str, str] = {}
    # Chars set in Tiled, then the known names', then the rest: a name never takes a char that
    # another symbol asked for.
    for name in names:
        char = props.get(name, {}).get("char")
        if isinstance(char, str) and char:
            if len(char) != 1 or char in taken:
                raise MapFileError(f"symbol {name!r}: its `char` property must be one character no other symbol has (got {char!r})")
            chars[name] = char
            taken.add(char)
    for name in names:
        if name not in chars and name in _KNOWN and _KNOWN[name][0] not in taken:
            chars[name] = _KNOWN[name][0]
            taken.add(chars[name])
    for name in names:
        if name in chars:
            continue
        # Latin-1 letters and on after the ASCII ones: 256 symbols always find a char.
        candidates = itertools.chain(name[0].upper() + name[0].lower() + SPARE_CHARS, map(chr, range(0xC0, 0x300)))
        chars[name] = next(c for c in candidates if c not in taken)
        taken.add(chars[name])
    symbols = []
    for name in names:
        color = props.get(name, {}).get("color")
        if isinstance(color, str) and color:
            rgb = _rgb(color, name)
        elif name in _KNOWN:
            rgb = _KNOWN[name][1]
        else:
            rgb = palette.default_symbol(chars[name])[1]
        symbols.append(Symbol(chars[name], name, rgb))
    return tuple(symbols)


def _rgb(color: str, name: str) -> str:
    try:
        value = Color(color)
    except ValueError:
        raise MapFileError(f'symbol {name!r}: its `color` property must be a colour "#rrggbb" (got {color!r})') from None
    return "#" + value[-6:]
