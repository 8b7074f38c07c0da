"""The `load.tmx` stage: a hand-made Tiled map (TMX or Tiled JSON) as a Level.

The map is read, parsed and checked when the recipe loads, not when the stage runs: a problem
with the file is then one line of the recipe's errors, and the stage carries the parsed map to
any worker (a Dask worker needs no file system), with the content's digests in its cache key.

TMX is parsed here with ElementTree rather than pytmx: pytmx opens external tilesets itself
(a FIFO would hang the load, and the bytes it read would not be the ones hashed), renumbers
gids, and refuses properties whose names clash with its attributes (`width`, `type`...).
"""

from __future__ import annotations

import hashlib
import itertools
import math
import posixpath
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field, PrivateAttr, ValidationInfo, model_validator

from pipeline.drawn_art import FLIP_D, FLIPS, Art, ArtTile, ArtTileset, art_tileset
from pipeline.errors import KeyedError, PipelineError
from pipeline.fsio import read_regular
from pipeline.level import PROVENANCE, SPARE_CHARS, Color, FilePath, Level, MapObject, ObjectRef, PropertyValue, Symbol
from pipeline.output import counted, spans
from pipeline.registry import StageParams, stage
from pipeline.rewrite import palette
from pipeline.tiled.layer_data import GID_MASK, MapFileError, base64_gids, csv_gids, gid_rows, parse_json, parse_xml

_MAX_CELLS = 64_000_000
# The names our generators use, with their chars and colours, so that a loaded map's walls and
# floors look and rewrite like a generated one's.
_KNOWN = {"wall": ("B", "#000000"), "floor": ("W", "#fff1e8"), "door": ("D", "#ab5236")}


@dataclass
class _Tileset:
    firstgid: int
    name: str
    tilecount: int | None
    tiles: dict[int, dict[str, Any]] = field(default_factory=dict)  # local id -> typed properties
    classes: dict[int, str] = field(default_factory=dict)  # local id -> its class (Tiled 1.9+) or type
    # An image collection (a picture per tile, no tilesheet): its tiles are the ids it lists, which
    # may have gaps (tiles deleted) and run past `tilecount`, the number of tiles.
    collection: bool = False
    # The tilesheet, for the art kept on the Level: its image relative to the recipe folder ("":
    # none), the size the tileset gives it, and the grid it is cut into.
    image: str = ""
    image_size: tuple[int, int] = (0, 0)
    tile_size: tuple[int, int] = (0, 0)
    margin: int = 0
    spacing: int = 0
    columns: int = 0


@dataclass
class _Layer:
    name: str
    drawn: np.ndarray  # (h, w) uint32 gids as in the file, flip bits and all

    @property
    def gids(self) -> np.ndarray:
        """The gids with their flip bits cleared: which tile, however it is turned."""
        return self.drawn & np.uint32(GID_MASK)


@dataclass
class _Map:
    width: int
    height: int
    tilewidth: int
    tileheight: int
    properties: dict[str, Any]
    tilesets: list[_Tileset]
    layers: list[_Layer]
    objects: list[MapObject]


@stage("load.tmx", version=8)
class LoadTmx(StageParams):
    """Load a map you drew in Tiled (`.tmx`, or Tiled JSON `.tmj`/`.json`) as the map's tiles.

    Each tile's symbol is, by `symbols`: its `symbol` property (a string, set on the tile in
    Tiled's tileset editor; the default), its Tiled class (`"class"`: Class, or Type before
    Tiled 1.9), or the tile itself (`"tile"`: a symbol per distinct tile, named `TILESET:ID`, a
    second tileset of one name `TILESET#2:ID`). Tiles that decide a cell and have none are one
    error naming them all (how many, and their ids per tileset) and where the first is.
    Maps our exporters wrote load back with their symbols: a tileset whose every tile names its
    symbol in `name` and its char in a one-letter `symbol` (and has no `char`) is read so.
    Empty cells get the symbol `empty`. Without `layer`, every tile layer counts (inside groups
    too, hidden or not) and the uppermost non-empty tile of each cell wins; `layer` reads one.
    A map with no tile layer (objects alone) is the map's size of `empty`.

    The alphabet is `empty` first (the fill), then every other symbol the map uses, in the
    order of the first tile (tileset, then tile id) that carries it. A symbol's char is the
    tile property `char` if set, else B/W/D for wall/floor/door, else the first free of its
    name's initial (upper, then lower case) and A-Z, a-z, 0-9; its colour is the tile property
    `color` if set, else black/white/brown for wall/floor/door, else MarkovJunior's colour of
    its char.

    Objects of every object layer become objects in tiles (pixels divided by the tile size;
    positions that are not on the tile grid stay fractional), with their class (or type) and
    typed properties (an object-typed one names its object however exporters number them);
    tile objects become rectangles with their top-left corner, polylines keep their points (in
    tiles, from the object's position), ellipses, polygons and text become their bounding
    boxes. A rotated object is loaded as drawn before its rotation, with its angle in the
    property `rotation` and a warning naming it. Tile layers that carry a `values` property
    (the data layers our exporters write) are left out. Map properties go into the map's
    properties, the map's own: a build hands them on through stages that start their stats
    afresh (`rewrite`). The map, its external tilesets and their images are read when the recipe
    loads and are part of the cache key.

    The map keeps its art: every exporter that draws tiles writes the cells as you drew them
    (the map's tilesets, with their images copied into the pack, its tile layers, flipped and
    turned tiles, tile objects with their tile) and the rest of the map with the pack's tileset.
    A cell whose symbol a later stage changes (a rule, a carved maze, a prefab) loses its art and
    shows the pack's tile for its new symbol. A tileset without a tilesheet image (an image
    collection) or of another tile size than the map is not kept (a warning says so).

    Only finite orthogonal maps are read (an isometric, hexagonal, staggered or infinite one is
    an error saying so); layer data may be XML, CSV or base64 (plain, zlib or gzip); Tiled JSON
    as Tiled 1.2 and later write it, or as before (tiles and properties as objects keyed by id
    and name); image-collection tilesets with gaps in their tile ids.
    """

    arity: ClassVar[tuple[int, int]] = (0, 0)

    file: str = Field(description='The Tiled map, relative to the recipe (e.g. "maps/start.tmx"; .tmx, .tmj or .json).')
    layer: str | None = Field(None, description="The one tile layer to read (unset: all of them, upper tiles over lower).")
    empty: str = Field("wall", min_length=1, description="Symbol of cells with no tile; first in the alphabet (the fill).")
    symbols: Literal["property", "class", "tile"] = Field(
        "property",
        description='Where a tile\'s symbol comes from: its `symbol` property, its Tiled class ("class": Class, or Type before'
        ' Tiled 1.9), or "tile": a symbol per distinct tile, named TILESET:ID.',
    )

    _level: Level | None = PrivateAttr(None)
    _files: dict[str, str] = PrivateAttr(default_factory=dict)
    _dropped: list[str] = PrivateAttr(default_factory=list)
    _rotated: list[str] = PrivateAttr(default_factory=list)
    _not_drawn: list[str] = PrivateAttr(default_factory=list)
    _art_tilesets: tuple[ArtTileset, ...] = PrivateAttr(())

    @model_validator(mode="after")
    def _load(self, info: ValidationInfo) -> LoadTmx:
        recipe_dir = Path((info.context or {}).get("recipe_dir", "."))
        try:
            loaded = read_map_file(recipe_dir, self.file, self.layer, self.empty, self.symbols)
        except MapFileError as exc:
            raise KeyedError("file", f"{recipe_dir / self.file}: {exc}") from None
        self._level = loaded.level
        self._files = loaded.files
        self._dropped = loaded.dropped
        self._rotated = loaded.rotated
        self._not_drawn = loaded.not_drawn
        self._art_tilesets = tuple(loaded.art_tilesets)
        return self

    def art_tilesets(self) -> list[ArtTileset]:
        return list(self._art_tilesets)

    def files_read(self) -> dict[str, str]:
        return dict(self._files)

    def added_stats(self) -> tuple[str, ...] | None:
        # The map's own properties, known since the file was read as the recipe loaded; but an
        # object reference names an object, and is no stat a filter or `order_by` can read.
        if self._level is None:
            return None
        return tuple(k for k, v in self._level.properties.items() if not isinstance(v, ObjectRef))

    def authored_stats(self) -> tuple[str, ...]:
        return tuple(self._level.properties) if self._level is not None else ()

    def warnings(self) -> list[str]:
        # Exporters write these where a map came from: the map's own are replaced.
        own = self._level.properties if self._level is not None else {}
        return [
            f"file: {self.file}: its map property {name!r} is one the exporters write of "
            + ("a map a filter made again" if name == "attempt" else "every map")
            + " (where it came from), so the exported map has theirs: rename it"
            for name in PROVENANCE
            if name in own
        ] + [
            f"file: {self.file}: {dropped} is not read: a Level holds string, int, float, bool, color, file and object properties"
            for dropped in self._dropped
        ] + ([
            f"file: {self.file}: {counted(len(self._rotated), 'object')} {'is' if len(self._rotated) == 1 else 'are'} rotated"
            f" ({', '.join(self._rotated)}): a Level's objects are upright, so each is loaded as drawn before its rotation,"
            " with the angle (degrees clockwise about its origin, as in Tiled) in its property `rotation`"
        ] if self._rotated else []) + [f"file: {self.file}: {line}" for line in self._not_drawn]

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        level = self._level
        if level is None:  # only a validated stage has one
            raise PipelineError(["load.tmx: the stage was not validated (make it with model_validate)"])
        # The worker freezes what a stage returns: hand out copies, never the stored map.
        art = level.art
        return Level(
            tiles=level.tiles.copy(),
            alphabet=level.alphabet,
            objects=[replace(o, properties=dict(o.properties)) for o in level.objects],
            properties=dict(level.properties),
            art=None if art is None else replace(art, layers={n: g.copy() for n, g in art.layers.items()}, drawn_for=art.drawn_for.copy()),
        )


@dataclass
class MapFile:
    """A Tiled map read as a Level, for stages that read maps (load.tmx, place.prefabs)."""

    level: Level
    filled: np.ndarray  # (h, w) bool: False where no (chosen) layer has a tile
    files: dict[str, str]  # every file read, relative to the recipe folder -> sha256
    dropped: list[str] = field(default_factory=list)  # properties of types a Level cannot hold (class)
    rotated: list[str] = field(default_factory=list)  # rotated objects, loaded upright with a `rotation` property
    # Tilesets whose tiles are not kept as art (no tilesheet, another tile size, an unreadable
    # image): their cells are drawn with the pack's tile for their symbol.
    not_drawn: list[str] = field(default_factory=list)
    # Every tileset the art uses, tile objects' too (an Art keeps only its cells').
    art_tilesets: list[ArtTileset] = field(default_factory=list)


def read_map_file(recipe_dir: Path, relative: str, layer: str | None = None, empty: str = "wall", symbols: str = "property") -> MapFile:
    """Read the Tiled map `relative` (to `recipe_dir`) and the tilesets it uses, as load.tmx
    does; a problem is a MapFileError, without the file's name (the caller puts it in front)."""
    reader = _Reader(recipe_dir)
    parsed = reader.read_map(relative)
    level, filled, chosen = _to_level(parsed, layer, empty, symbols)
    tilesets = sorted(parsed.tilesets, key=lambda t: t.firstgid)
    for where, gid in reader.notes.object_gids:
        if _tileset_of(tilesets, gid) is None:
            raise MapFileError(f"{where}: its tile gid {gid} is in none of the map's tilesets")
    not_drawn, kept = _keep_art(reader, parsed, tilesets, chosen, level)
    return MapFile(level, filled, reader.digests, reader.notes.dropped, reader.notes.rotated, not_drawn, kept)


def _keep_art(reader: _Reader, parsed: _Map, tilesets: list[_Tileset], chosen: list[_Layer], level: Level) -> tuple[list[str], list[ArtTileset]]:
    """Put the map's drawn tiles on `level` as its art (pipeline.drawn_art): the tilesets its
    layers and tile objects use, each read layer as drawn (flips kept), every drawn cell
    counted as drawn for the symbol it has. Returns what is not kept, and why, and the
    tilesets kept."""
    used = np.unique(np.concatenate([np.unique(lay.gids) for lay in chosen] + [np.array([g for _, g in reader.notes.object_gids], dtype=np.uint32)]))
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
        if not mine.size or _exported(ts) is not None:
            # A tileset our exporters wrote draws symbols, which the pack draws again (its
            # autotiled walls then meet the cells a later stage changes): not art.
            continue
        art, problem = _art_tileset(reader, ts, (parsed.tilewidth, parsed.tileheight))
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
            ts = _tileset_of(tilesets, drawn & GID_MASK)
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


def _art_tileset(reader: _Reader, ts: _Tileset, map_tile: tuple[int, int]) -> tuple[ArtTileset | None, str]:
    """The tileset as art, or None and why it cannot be."""
    if not ts.image or ts.collection:
        return None, "has no tilesheet image (an image collection, a picture per tile)"
    if ts.tile_size != map_tile:
        return None, f"has {ts.tile_size[0]} x {ts.tile_size[1]}-pixel tiles on a map of {map_tile[0]} x {map_tile[1]}-pixel cells"
    try:
        data = reader.read(ts.image, f"the image of tileset {ts.name!r},")
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


# --------------------------------------------------------------------------------------------
# Reading files: every byte through read_regular, every file's digest recorded.
# --------------------------------------------------------------------------------------------


class _Reader:
    def __init__(self, recipe_dir: Path):
        self.recipe_dir = recipe_dir
        self.digests: dict[str, str] = {}
        self.notes = _Notes()

    def read(self, relative: str, what: str) -> bytes:
        path = self.recipe_dir / relative
        try:
            data = read_regular(path)  # a FIFO here would hang the recipe's loading
        except OSError as exc:
            raise MapFileError(f"cannot read {what} {path} ({exc.strerror or exc})") from None
        self.digests[relative] = hashlib.sha256(data).hexdigest()
        return data

    def read_map(self, relative: str) -> _Map:
        data = self.read(relative, "the map")
        if _looks_like_json(relative, data):
            doc = parse_json(data, "the map")
            return _MapJson(self, posixpath.dirname(relative)).parse(doc)
        root = parse_xml(data, "the map")
        return _MapXml(self, posixpath.dirname(relative)).parse(root)

    def external(self, folder: str, source: str) -> tuple[str, bytes]:
        relative = posixpath.normpath(posixpath.join(folder, source)) if folder else posixpath.normpath(source)
        return relative, self.read(relative, f"the tileset {source!r} at")


def _looks_like_json(name: str, data: bytes) -> bool:
    if name.lower().endswith((".tmj", ".json", ".tsj")):
        return True
    if name.lower().endswith((".tmx", ".tsx", ".xml")):
        return False
    return data.lstrip()[:1] in (b"{", b"[")


def _int(value: Any, what: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise MapFileError(f"{what} must be an integer (got {value!r})") from None
    return number


def _num(value: Any, what: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise MapFileError(f"{what} must be a number (got {value!r})") from None
    if not math.isfinite(number):
        raise MapFileError(f"{what} must be a finite number (got {value!r})")
    return number


def _check_map_header(orientation: Any, infinite: Any, width: int, height: int, tw: int, th: int) -> None:
    if orientation != "orthogonal":
        raise MapFileError(f"orientation {orientation!r} is not supported: load.tmx reads orthogonal maps")
    if infinite:
        raise MapFileError("is an infinite map: load.tmx reads fixed-size maps (Map > Map Properties > Infinite off)")
    if width < 1 or height < 1 or width * height > _MAX_CELLS:
        raise MapFileError(f"map size {width} x {height} is not between 1 x 1 and {_MAX_CELLS:,} cells")
    if tw < 1 or th < 1:
        raise MapFileError(f"tile size {tw} x {th} must be positive")


def _check_layer_size(w: Any, h: Any, width: int, height: int, what: str) -> None:
    """A tile layer is the map's size (Tiled reads another as corrupt layer data)."""
    size = (width if w is None else _int(w, f"{what} width"), height if h is None else _int(h, f"{what} height"))
    if size != (width, height):
        raise MapFileError(f"{what} is {size[0]} x {size[1]} tiles, the map {width} x {height}: Tiled reads it as corrupt")


def _object_ref(value: Any, where: str) -> str:
    """An object's id as the key ObjectRefs name it by ("" for an object without one)."""
    return "" if value is None else str(_int(value, f"{where} id"))


def _typed(name: str, kind: str, value: Any, where: str, notes: _Notes | None = None) -> PropertyValue | None:
    """A Tiled property's value with its type; None for types a Level cannot hold (class),
    which `notes` then records."""
    what = f"{where}property {name!r}"
    if kind in ("string", ""):
        return "" if value is None else str(value)
    if kind == "file":
        return FilePath("" if value is None else str(value))
    if kind == "object":  # 0: no object
        target = _int(0 if value in (None, "") else value, what)
        return ObjectRef(str(target) if target else "")
    if kind == "int":
        return _int(value, what)
    if kind == "float":
        return _num(value, what)
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if str(value) in ("true", "false"):
            return str(value) == "true"
        raise MapFileError(f"{what} must be true or false (got {value!r})")
    if kind == "color":
        if not value:
            return None  # Tiled's "no colour"
        try:
            return Color(str(value))
        except ValueError as exc:
            raise MapFileError(f"{what}: {exc}") from None
    if notes is not None:
        notes.dropped.append(f"{what} (of type {kind!r})")
    return None


@dataclass
class _Notes:
    """What reading a map met that is no error: map and object properties a Level cannot hold,
    rotated objects, and the gids of tile objects (checked against the tilesets once all are
    read)."""

    dropped: list[str] = field(default_factory=list)
    rotated: list[str] = field(default_factory=list)
    object_gids: list[tuple[str, int]] = field(default_factory=list)


def _object(name: str, cls: str, px: tuple[float, float, float, float], drawn_gid: int, points: list[tuple[float, float]] | None,
            rotation: float, props: dict[str, PropertyValue], tw: int, th: int, where: str, notes: _Notes, polyline: bool = False,
            ref: str = "") -> MapObject:
    tile_gid = drawn_gid & GID_MASK
    x, y, w, h = px
    if rotation:
        # A Level's objects are upright boxes: a rotated one (a decoration, mostly) keeps the box
        # it had before turning about its origin, and its angle (clockwise, as in Tiled) for a
        # game that reads it, rather than refusing the whole map.
        notes.rotated.append(f"{where}{f' ({name!r})' if name else ''} by {rotation:g} degrees")
        props = {**props, "rotation": props.get("rotation", rotation)}
    if tile_gid:
        y -= h  # a tile object's y is its bottom edge
    if polyline and points and not tile_gid:
        return MapObject(name=name, type=cls, x=x / tw, y=y / th, properties=props, points=tuple((px_ / tw, py_ / th) for px_, py_ in points), ref=ref)
    if points:
        xs = [x + p[0] for p in points]
        ys = [y + p[1] for p in points]
        x, y, w, h = min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)
    # A tile object keeps its gid (flips and all) in an ArtTile with no tileset yet:
    # `_resolve_object_tiles` finds its tileset once all are read.
    art = ArtTile("", drawn_gid, 0) if tile_gid else None
    return MapObject(name=name, type=cls, x=x / tw, y=y / th, w=w / tw, h=h / th, properties=props, ref=ref, art=art)


# --------------------------------------------------------------------------------------------
# TMX / TSX
# --------------------------------------------------------------------------------------------


class _MapXml:
    def __init__(self, reader: _Reader, folder: str):
        self.reader = reader
        self.folder = folder

    def parse(self, root: ET.Element) -> _Map:
        if root.tag != "map":
            raise MapFileError(f"is not a Tiled map (its root element is <{root.tag}>, not <map>)")
        width = _int(root.get("width"), "map width")
        height = _int(root.get("height"), "map height")
        tw = _int(root.get("tilewidth"), "tilewidth")
        th = _int(root.get("tileheight"), "tileheight")
        _check_map_header(root.get("orientation", "orthogonal"), root.get("infinite", "0") == "1", width, height, tw, th)
        tilesets = [self._tileset(node) for node in root.findall("tileset")]
        layers: list[_Layer] = []
        objects: list[MapObject] = []
        self._layers(root, width, height, tw, th, layers, objects)
        return _Map(width, height, tw, th, _properties_xml(root, "map ", self.reader.notes), tilesets, layers, objects)

    def _layers(self, parent: ET.Element, width: int, height: int, tw: int, th: int, layers: list[_Layer], objects: list[MapObject]) -> None:
        for node in parent:
            if node.tag == "layer":
                if "values" not in _properties_xml(node, ""):  # a data layer pictures numbers, not symbols
                    layers.append(self._tile_layer(node, width, height))
            elif node.tag == "objectgroup":
                for obj in node.findall("object"):
                    objects.append(self._object(obj, tw, th))
            elif node.tag == "group":
                self._layers(node, width, height, tw, th, layers, objects)

    def _tile_layer(self, node: ET.Element, width: int, height: int) -> _Layer:
        name = node.get("name", "")
        what = f"layer {name!r}"
        data = node.find("data")
        if data is None:
            raise MapFileError(f"{what} has no <data>")
        if data.find("chunk") is not None:
            raise MapFileError(f"{what} is stored in chunks (an infinite map): load.tmx reads fixed-size maps")
        _check_layer_size(node.get("width"), node.get("height"), width, height, what)
        encoding = data.get("encoding", "")
        if encoding == "csv":
            values = csv_gids(data.text or "", what)
        elif encoding == "base64":
            values = base64_gids(data.text or "", data.get("compression", ""), what)
        elif encoding == "":
            values = [_int(t.get("gid", "0"), f"{what} tile gid") for t in data.findall("tile")]
        else:
            raise MapFileError(f"{what}: encoding {encoding!r} is not supported (use CSV or base64)")
        return _Layer(name, gid_rows(values, width, height, what, flips=True))

    def _object(self, node: ET.Element, tw: int, th: int) -> MapObject:
        oid = node.get("id", "?")
        where = f"object {oid}"
        if node.get("template"):
            raise MapFileError(f"{where} comes from a template ({node.get('template')}): detach it in Tiled (Detach Template), or export with --detach-templates")
        points = None
        polyline = False
        for tag in ("polygon", "polyline"):
            shape = node.find(tag)
            if shape is not None:
                polyline = tag == "polyline"
                try:
                    points = [(float(a), float(b)) for a, b in (p.split(",") for p in shape.get("points", "").split())]
                except ValueError:
                    raise MapFileError(f"{where}: bad {tag} points") from None
        px = tuple(_num(node.get(k, "0"), f"{where} {k}") for k in ("x", "y", "width", "height"))
        drawn = _int(node.get("gid", "0"), f"{where} gid")
        gid = drawn & GID_MASK
        if gid:
            self.reader.notes.object_gids.append((where, gid))
        return _object(
            node.get("name", ""), node.get("class", node.get("type", "")), px, drawn, points,  # type: ignore[arg-type]
            _num(node.get("rotation", "0"), f"{where} rotation"), _properties_xml(node, f"{where}: ", self.reader.notes), tw, th, where, self.reader.notes, polyline,
            _object_ref(node.get("id"), where),
        )

    def _tileset(self, node: ET.Element) -> _Tileset:
        firstgid = _int(node.get("firstgid"), "tileset firstgid")
        source = node.get("source")
        folder = self.folder
        if source:
            relative, data = self.reader.external(self.folder, source)
            folder = posixpath.dirname(relative)
            if _looks_like_json(source, data):
                return _tileset_json(parse_json(data, f"the tileset {relative}"), firstgid, relative, folder)
            node = parse_xml(data, f"the tileset {relative}")
            if node.tag != "tileset":
                raise MapFileError(f"the tileset {relative} is not a Tiled tileset (root <{node.tag}>)")
        name = node.get("name", "")
        count = node.get("tilecount")
        tiles: dict[int, dict[str, Any]] = {}
        classes: dict[int, str] = {}
        for tile in node.findall("tile"):
            local = _int(tile.get("id"), f"tileset {name!r} tile id")
            tiles[local] = _properties_xml(tile, f"tileset {name!r} tile {local}: ")
            classes[local] = tile.get("class") or tile.get("type") or ""
        image = node.find("image")
        collection = image is None and node.get("columns") == "0"
        sheet = _sheet(
            folder, None if image is None else image.get("source"), None if image is None else (image.get("width"), image.get("height")),
            (node.get("tilewidth"), node.get("tileheight")), node.get("margin"), node.get("spacing"), node.get("columns"), name,
        )
        return _Tileset(firstgid, name, _int(count, "tilecount") if count is not None else None, tiles, classes, collection, **sheet)


def _properties_xml(node: ET.Element, where: str, notes: _Notes | None = None) -> dict[str, Any]:
    props: dict[str, Any] = {}
    block = node.find("properties")
    if block is None:
        return props
    for prop in block.findall("property"):
        name = prop.get("name", "")
        value = prop.get("value")
        if value is None:
            value = prop.text or ""  # multi-line strings are the element's text
        typed = _typed(name, prop.get("type", "string"), value, where, notes)
        if typed is not None:
            props[name] = typed
    return props


# --------------------------------------------------------------------------------------------
# Tiled JSON (TMJ / TSJ)
# --------------------------------------------------------------------------------------------


class _MapJson:
    def __init__(self, reader: _Reader, folder: str):
        self.reader = reader
        self.folder = folder

    def parse(self, doc: Any) -> _Map:
        if not isinstance(doc, dict) or doc.get("type") != "map":
            raise MapFileError('is not a Tiled JSON map (no "type": "map")')
        width = _int(doc.get("width"), "map width")
        height = _int(doc.get("height"), "map height")
        tw = _int(doc.get("tilewidth"), "tilewidth")
        th = _int(doc.get("tileheight"), "tileheight")
        _check_map_header(doc.get("orientation", "orthogonal"), bool(doc.get("infinite", False)), width, height, tw, th)
        tilesets = [self._tileset(ts) for ts in doc.get("tilesets", [])]
        layers: list[_Layer] = []
        objects: list[MapObject] = []
        self._layers(doc.get("layers", []), width, height, tw, th, layers, objects)
        return _Map(width, height, tw, th, _properties_json(doc.get("properties"), "map ", self.reader.notes, doc.get("propertytypes")), tilesets, layers, objects)

    def _layers(self, items: Any, width: int, height: int, tw: int, th: int, layers: list[_Layer], objects: list[MapObject]) -> None:
        for item in items if isinstance(items, list) else []:
            kind = item.get("type") if isinstance(item, dict) else None
            if kind == "tilelayer":
                own = _properties_json(item.get("properties"), f"layer {str(item.get('name', ''))!r}: ", types=item.get("propertytypes"))
                if "values" not in own:  # a data layer pictures numbers, not symbols
                    layers.append(self._tile_layer(item, width, height))
            elif kind == "objectgroup":
                for obj in item.get("objects", []):
                    objects.append(self._object(obj, tw, th))
            elif kind == "group":
                self._layers(item.get("layers", []), width, height, tw, th, layers, objects)

    def _tile_layer(self, item: dict[str, Any], width: int, height: int) -> _Layer:
        name = str(item.get("name", ""))
        what = f"layer {name!r}"
        if "chunks" in item:
            raise MapFileError(f"{what} is stored in chunks (an infinite map): load.tmx reads fixed-size maps")
        _check_layer_size(item.get("width"), item.get("height"), width, height, what)
        data = item.get("data")
        if item.get("encoding", "csv") == "base64" and isinstance(data, str):
            values = base64_gids(data, item.get("compression", ""), what)
        elif isinstance(data, list):
            values = [_int(v, f"{what} tile gid") for v in data]
        else:
            raise MapFileError(f"{what}: encoding {item.get('encoding')!r} is not supported (use CSV or base64)")
        return _Layer(name, gid_rows(values, width, height, what, flips=True))

    def _object(self, obj: Any, tw: int, th: int) -> MapObject:
        if not isinstance(obj, dict):
            raise MapFileError("an object is not a JSON object")
        where = f"object {obj.get('id', '?')}"
        if obj.get("template"):
            raise MapFileError(f"{where} comes from a template ({obj['template']}): detach it in Tiled, or export with --detach-templates")
        points = None
        polyline = False
        for key in ("polygon", "polyline"):
            if isinstance(obj.get(key), list):
                if not all(isinstance(p, dict) for p in obj[key]):
                    raise MapFileError(f"{where}: bad {key} points (each is an object with x and y)")
                polyline = key == "polyline"
                points = [(_num(p.get("x"), f"{where} point"), _num(p.get("y"), f"{where} point")) for p in obj[key]]
        px = tuple(_num(obj.get(k, 0), f"{where} {k}") for k in ("x", "y", "width", "height"))
        cls = obj.get("class", obj.get("type", "")) or ""
        drawn = _int(obj.get("gid", 0), f"{where} gid")
        gid = drawn & GID_MASK
        if gid:
            self.reader.notes.object_gids.append((where, gid))
        return _object(
            str(obj.get("name", "")), str(cls), px, drawn, points,  # type: ignore[arg-type]
            _num(obj.get("rotation", 0), f"{where} rotation"), _properties_json(obj.get("properties"), f"{where}: ", self.reader.notes, obj.get("propertytypes")), tw, th, where,
            self.reader.notes, polyline,
            _object_ref(obj.get("id"), where),
        )

    def _tileset(self, ts: Any) -> _Tileset:
        if not isinstance(ts, dict):
            raise MapFileError("a tileset entry is not a JSON object")
        firstgid = _int(ts.get("firstgid"), "tileset firstgid")
        source = ts.get("source")
        if source:
            relative, data = self.reader.external(self.folder, str(source))
            if _looks_like_json(str(source), data):
                return _tileset_json(parse_json(data, f"the tileset {relative}"), firstgid, relative, posixpath.dirname(relative))
            node = parse_xml(data, f"the tileset {relative}")
            if node.tag != "tileset":
                raise MapFileError(f"the tileset {relative} is not a Tiled tileset (root <{node.tag}>)")
            return _MapXml(self.reader, posixpath.dirname(relative))._tileset(_with_firstgid(node, firstgid))
        return _tileset_json(ts, firstgid, str(ts.get("name", "")), self.folder)


def _with_firstgid(node: ET.Element, firstgid: int) -> ET.Element:
    node.set("firstgid", str(firstgid))
    return node


def _tileset_json(ts: Any, firstgid: int, label: str, folder: str = "") -> _Tileset:
    if not isinstance(ts, dict):
        raise MapFileError(f"the tileset {label} is not a Tiled JSON tileset")
    name = str(ts.get("name", label))
    listed = ts.get("tiles") or []
    if isinstance(listed, dict):  # Tiled before 1.2: an object keyed by tile id, properties apart
        listed = [{**(tile if isinstance(tile, dict) else {}), "id": key} for key, tile in listed.items()]
    if not isinstance(listed, list):
        raise MapFileError(f"tileset {name!r}: its tiles are neither a list nor an object")
    old_props = ts.get("tileproperties") or {}
    old_types = ts.get("tilepropertytypes") or {}
    if not isinstance(old_props, dict) or not isinstance(old_types, dict):
        raise MapFileError(f"tileset {name!r}: its tileproperties and tilepropertytypes must be objects keyed by tile id")
    tiles: dict[int, dict[str, Any]] = {}
    classes: dict[int, str] = {}
    for tile in listed:
        if not isinstance(tile, dict):
            raise MapFileError(f"tileset {name!r}: a tile is not a JSON object")
        local = _int(tile.get("id"), f"tileset {name!r} tile id")
        tiles[local] = _properties_json(tile.get("properties"), f"tileset {name!r} tile {local}: ")
        classes[local] = str(tile.get("class") or tile.get("type") or "")
    for key, props in old_props.items():
        local = _int(key, f"tileset {name!r} tile id")
        tiles[local] = {**tiles.get(local, {}), **_properties_json(props, f"tileset {name!r} tile {local}: ", types=old_types.get(key))}
    count = ts.get("tilecount")
    collection = "image" not in ts and ts.get("columns") == 0
    sheet = _sheet(
        folder, ts.get("image"), (ts.get("imagewidth"), ts.get("imageheight")), (ts.get("tilewidth"), ts.get("tileheight")),
        ts.get("margin"), ts.get("spacing"), ts.get("columns"), name,
    )
    return _Tileset(firstgid, name, _int(count, "tilecount") if count is not None else None, tiles, classes, collection, **sheet)


def _sheet(folder: str, image: Any, image_size: Any, tile_size: Any, margin: Any, spacing: Any, columns: Any, name: str) -> dict[str, Any]:
    """A tileset's tilesheet as `_Tileset` keeps it: nothing for a tileset without one (an
    image collection), the image's path made relative to the recipe folder."""
    if not image or not isinstance(image, str):
        return {}
    what = f"tileset {name!r}"
    path = posixpath.normpath(posixpath.join(folder, image)) if folder else posixpath.normpath(image)
    size = tuple(_int(v if v is not None else 0, f"{what} image size") for v in image_size)
    tiles = tuple(_int(v, f"{what} tile size") for v in tile_size)
    return {
        "image": path, "image_size": size, "tile_size": tiles, "margin": _int(margin or 0, f"{what} margin"),
        "spacing": _int(spacing or 0, f"{what} spacing"), "columns": _int(columns or 0, f"{what} columns"),
    }


def _properties_json(items: Any, where: str, notes: _Notes | None = None, types: Any = None) -> dict[str, Any]:
    """Properties as Tiled JSON writes them: a list of {name, type, value}, or before Tiled 1.2
    an object of values with their types in an object beside it (`types`: "propertytypes")."""
    props: dict[str, Any] = {}
    if isinstance(items, dict):
        types = types if isinstance(types, dict) else {}
        items = [{"name": k, "type": types.get(k) or _json_type(v), "value": v} for k, v in items.items()]
    if items is None:
        return props
    if not isinstance(items, list):
        raise MapFileError(f"{where}properties are neither a list nor an object")
    for prop in items:
        if not isinstance(prop, dict):
            raise MapFileError(f"{where}properties: one is not a JSON object (with a name, a type and a value)")
        name = str(prop.get("name", ""))
        typed = _typed(name, str(prop.get("type", "string")), prop.get("value"), where, notes)
        if typed is not None:
            props[name] = typed
    return props


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    return "string"


# --------------------------------------------------------------------------------------------
# From the parsed map to a Level.
# --------------------------------------------------------------------------------------------


def _tileset_of(tilesets: list[_Tileset], gid: int) -> _Tileset | None:
    """The tileset holding `gid` (`tilesets` sorted by firstgid), or None: below every firstgid,
    past its tilesheet's last tile, or a tile id its image collection does not have."""
    ts = next((t for t in reversed(tilesets) if t.firstgid <= gid), None)
    if ts is None:
        return None
    if ts.collection:
        return ts if gid - ts.firstgid in ts.tiles else None
    if ts.tilecount is not None and gid - ts.firstgid >= ts.tilecount:
        return None
    return ts


def _to_level(parsed: _Map, layer: str | None, empty: str, symbols: str = "property") -> tuple[Level, np.ndarray, list[_Layer]]:
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
        filled = lay.gids != 0
        gids[filled] = lay.gids[filled]
        source[filled] = i

    tilesets = sorted(parsed.tilesets, key=lambda t: t.firstgid)
    used = np.unique(gids[gids != 0])
    symbol_of: dict[int, str] = {}
    first_props: dict[str, dict[str, Any]] = {}
    ours: dict[int, str | None] = {}  # by firstgid: the prefix of a tileset our exporters wrote
    untagged: list[tuple[int, _Tileset]] = []  # (gid, tileset) of tiles with no symbol, all told at once
    labels = _tileset_labels(tilesets)
    for gid in used.tolist():
        ts = _tileset_of(tilesets, gid)
        local = gid - ts.firstgid if ts else -1
        if ts is None:
            raise MapFileError(f"{_where(gid, gids, source, chosen)}: tile gid {gid} is in none of the map's tilesets")
        props = ts.tiles.get(local, {})
        if symbols == "tile":
            symbol: Any = f"{labels[ts.firstgid]}:{local}"
        elif symbols == "class":
            symbol = ts.classes.get(local, "")
        else:
            prefix = ours.setdefault(ts.firstgid, _exported(ts))
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
    return Level(tiles=tiles, alphabet=alphabet, objects=list(parsed.objects), properties=properties), gids != 0, chosen


def _tileset_labels(tilesets: list[_Tileset]) -> dict[int, str]:
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


def _untagged(untagged: list[tuple[int, _Tileset]], symbols: str, first: str) -> str:
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
    by_tileset: dict[int, tuple[_Tileset, list[int]]] = {}
    for gid, ts in untagged:
        by_tileset.setdefault(ts.firstgid, (ts, []))[1].append(gid - ts.firstgid)
    listed = "; ".join(f"tileset {ts.name!r} {'tile' if len(ids) == 1 else 'tiles'} {spans(ids)}" for ts, ids in by_tileset.values())
    return f"{len(untagged)} tiles have no {what}: {listed} (the first at {first}; {hint})"


def _exported(ts: _Tileset) -> str | None:
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


def _where(gid: int, gids: np.ndarray, source: np.ndarray, layers: list[_Layer]) -> str:
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
