"""One map as an LDtk level (the `.ldtkl` file), and the definitions its layers share with every
other map of the pack: an IntGrid layer of the symbols, the tile layers drawn with the pack's
tileset, and an Entities layer of the map's objects."""

from __future__ import annotations

import itertools
import json
import math
import re
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np

from pipeline.errors import PipelineError
from pipeline.ldtk import ids
from pipeline.ldtk.fields import EntityRef, ldtk_color, points_field, property_fields, unify_types
from pipeline.level import Level, MapObject, ObjectRef, PropertyValue, object_positions
from pipeline.tiled.drawing import object_gid
from pipeline.tiled.tilesheet import BuiltTileset
from pipeline.tiled.tileset import Tileset

ENTITIES_LAYER = "entities"
SYMBOLS_LAYER = "symbols"
LEVEL_BG = "#696A79"  # LDtk's default level background

# Entity colours for the kinds the placement stages make; others get one of PALETTE by name.
KIND_COLORS = {"spawn": "#4FDE6B", "exit": "#DE4F4F", "room": "#5A8BDE", "prefab": "#B07ADE", "path": "#E0C341"}
PALETTE = ("#E07A3F", "#3FC7E0", "#E03F9B", "#9BE03F", "#8F6B4F", "#4F5BE0", "#E0D43F", "#3FE0A0")


def layer_def(kind: str, ident: str, uid: int, grid: int, tileset_uid: int | None = None, values: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A layer definition as LDtk writes one (`kind`: IntGrid, Tiles or Entities)."""
    return {
        "__type": kind,
        "identifier": ident,
        "type": kind,
        "uid": uid,
        "doc": None,
        "uiColor": None,
        "gridSize": grid,
        "guideGridWid": 0,
        "guideGridHei": 0,
        "displayOpacity": 1,
        "inactiveOpacity": 1,
        "hideInList": False,
        "hideFieldsWhenInactive": True,
        "canSelectWhenInactive": True,
        "renderInWorldView": True,
        "pxOffsetX": 0,
        "pxOffsetY": 0,
        "parallaxFactorX": 0,
        "parallaxFactorY": 0,
        "parallaxScaling": True,
        "requiredTags": [],
        "excludedTags": [],
        "autoTilesKilledByOtherLayerUid": None,
        "uiFilterTags": [],
        "useAsyncRender": False,
        "intGridValues": values or [],
        "intGridValuesGroups": [],
        "autoRuleGroups": [],
        "autoSourceLayerDefUid": None,
        "tilesetDefUid": tileset_uid,
        "tilePivotX": 0,
        "tilePivotY": 0,
        "biomeFieldUid": None,
    }


def tile_rect(tileset: Tileset, tile_id: int, uid: int = ids.TILESET_UID) -> dict[str, Any]:
    """Where tile `tile_id` sits in the sheet, as LDtk's TilesetRect."""
    x, y = _src(tileset, tile_id)
    return {"tilesetUid": uid, "x": int(x), "y": int(y), "w": tileset.tile_width, "h": tileset.tile_height}


@dataclass(frozen=True)
class ArtLayer:
    """A Tiles layer of hand-drawn art (pipeline.drawn_art): every tile of one tileset the map's
    art layers draw, stacked in their order, flips as LDtk's `f`."""

    name: str
    tileset: Tileset
    uid: int  # its tileset's
    path: str  # its tileset's image, relative to the project file
    stack: tuple[np.ndarray, ...] = ()  # per art layer: tile id + 1 with Tiled's H and V flip bits, 0 = none


def _src(tileset: Tileset, tile_id: Any) -> tuple[Any, Any]:
    # Works on numbers and numpy arrays alike; margin and spacing already count the extrusion.
    x = tileset.margin + (tile_id % tileset.columns) * (tileset.tile_width + tileset.spacing)
    y = tileset.margin + (tile_id // tileset.columns) * (tileset.tile_height + tileset.spacing)
    return x, y


def layer_uids(tile_layers: list[str], art: list[str] = ()) -> list[tuple[str, str, int]]:  # type: ignore[assignment]
    """(type, identifier, uid) of every layer, top first as LDtk orders them: the objects, the
    layers of hand-drawn art, the tile layers (the exporter's last layer on top), the symbols at
    the bottom."""
    tiles = [("Tiles", ids.identifier(name), ids.TILE_LAYER_UID_BASE + k) for k, name in enumerate(tile_layers)]
    drawn = [("Tiles", ids.identifier(name), ids.ART_LAYER_UID_BASE + k) for k, name in enumerate(art)]
    return [("Entities", ENTITIES_LAYER, ids.ENTITIES_LAYER_UID), *reversed(drawn), *reversed(tiles), ("IntGrid", SYMBOLS_LAYER, ids.SYMBOLS_LAYER_UID)]


def check_layer_names(tile_layers: list[str]) -> None:
    """Layer identifiers must differ from each other and from the two layers every level has."""
    seen: dict[str, str] = {ENTITIES_LAYER: "the objects' layer", SYMBOLS_LAYER: "the symbols' layer"}
    for name in tile_layers:
        ident = ids.identifier(name)
        if ident in seen:
            raise PipelineError([f"layers: {name!r} is the LDtk layer {ident!r}, as is {seen[ident]}; rename it"])
        seen[ident] = f"layer {name!r}"


def definitions(level: Level, built: BuiltTileset, tile_layers: list[str], tileset_path: str, art: list[ArtLayer] = ()) -> bytes:  # type: ignore[assignment]
    """The layer and tileset definitions of every map of this alphabet and tileset (the pack's
    project adds the entity and level field definitions its maps' instances name)."""
    tileset = built.tileset
    grid = tileset.tile_width
    values = []
    seen: dict[str, str] = {}
    for value, symbol in enumerate(level.alphabet, start=1):
        ident = ids.identifier(symbol.name)
        if ident in seen:
            raise PipelineError([f"symbols {seen[ident]!r} and {symbol.name!r} are both the LDtk IntGrid value {ident!r}; rename one"])
        seen[ident] = symbol.name
        tile = tileset.names.get(symbol.name)
        values.append(
            {"value": value, "identifier": ident, "color": ldtk_color(symbol.color), "tile": None if tile is None else tile_rect(tileset, tile), "groupUid": 0}
        )
    layers = []
    art_uids = {ids.identifier(a.name): a.uid for a in art}
    for kind, ident, uid in layer_uids(tile_layers, [a.name for a in art]):
        if kind == "IntGrid":
            layers.append(layer_def(kind, ident, uid, grid, values=values))
        elif uid >= ids.ART_LAYER_UID_BASE:
            layers.append(layer_def(kind, ident, uid, grid, art_uids[ident]))
        else:
            layers.append(layer_def(kind, ident, uid, grid, ids.TILESET_UID if kind == "Tiles" else None))
    tilesets = [_tileset_def(tileset, ids.TILESET_UID, tileset_path)] + [_tileset_def(a.tileset, a.uid, a.path) for a in art]
    return _dumps({"layers": layers, "tilesets": tilesets}, {})


def _tileset_def(tileset: Tileset, uid: int, path: str) -> dict[str, Any]:
    grid = tileset.tile_width
    return {
        "__cWid": tileset.columns,
        "__cHei": tileset.rows,
        "identifier": ids.identifier(tileset.name),
        "uid": uid,
        "relPath": path,
        "embedAtlas": None,
        "pxWid": tileset.image_size[0],
        "pxHei": tileset.image_size[1],
        "tileGridSize": grid,
        "spacing": tileset.spacing,
        "padding": tileset.margin,
        "tags": [],
        "tagsSourceEnumUid": None,
        "enumTags": [],
        # The tiles' properties (name, symbol, solid...), as JSON a game parses.
        "customData": [{"tileId": t, "data": json.dumps(p, sort_keys=True)} for t, p in tileset.tile_properties.items()],
        "savedSelections": [],
    }


def level_file(
    level: Level,
    built: BuiltTileset,
    drawn: list[tuple[str, np.ndarray]],
    properties: dict[str, PropertyValue],
    stem: str,
    uid: int,
    iid: str,
    tileset_path: str,
    world_iid: str = "",
    art: list[ArtLayer] = (),  # type: ignore[assignment]
    art_tile: Any = None,
    depth: int | None = None,
    level_iid_of: Callable[[str], str] | None = None,
) -> bytes:
    """The map as an LDtk level: its properties as level fields, one layer instance per layer
    definition (`definitions`), tiles drawn as `drawn` (global ids, the tileset's first 1).
    `depth`: a floor of a dungeon (place.stairs), at the world's origin on that world depth.
    `level_iid_of`: the level iid of another map of the pack, by its file name, for objects that
    lead there (`to_map` and `to_object`, as stairs do)."""
    tileset = built.tileset
    tw, th = tileset.tile_width, tileset.tile_height
    arrays: dict[str, str] = {}
    layers = []
    drawn_by_ident = {ids.identifier(name): gids for name, gids in drawn}
    art_by_ident = {ids.identifier(a.name): a for a in art}
    # Where an object reference (an object's, or the map's own) points: an entity of this level.
    where = EntityRef(None, ids.iid(iid, "layer", ENTITIES_LAYER), iid, world_iid)
    positions = object_positions(level.objects)
    entity_iids = ids.entity_iids(iid, [obj.name for obj in level.objects])
    for kind, ident, layer_uid in layer_uids([name for name, _ in drawn], [a.name for a in art]):
        drawn_art = art_by_ident.get(ident) if layer_uid >= ids.ART_LAYER_UID_BASE else None
        node: dict[str, Any] = {
            "__identifier": ident,
            "__type": kind,
            "__cWid": level.width,
            "__cHei": level.height,
            "__gridSize": tw,
            "__opacity": 1,
            "__pxTotalOffsetX": 0,
            "__pxTotalOffsetY": 0,
            "__tilesetDefUid": (drawn_art.uid if drawn_art else ids.TILESET_UID) if kind == "Tiles" else None,
            "__tilesetRelPath": (drawn_art.path if drawn_art else tileset_path) if kind == "Tiles" else None,
            "iid": ids.iid(iid, "layer", ident),
            "levelId": uid,
            "layerDefUid": layer_uid,
            "pxOffsetX": 0,
            "pxOffsetY": 0,
            "visible": True,
            "optionalRules": [],
            "intGridCsv": [],
            "autoLayerTiles": [],
            "seed": ids.hashed_uid(iid, ident) % 10_000_000,
            "overrideTilesetUid": None,
            "gridTiles": [],
            "entityInstances": [],
        }
        if kind == "IntGrid":
            node["intGridCsv"] = _placeholder(arrays, _int_grid(level.tiles))
        elif drawn_art is not None:
            node["gridTiles"] = _placeholder(arrays, _stacked_tiles(drawn_art.stack, drawn_art.tileset, tw, th))
        elif kind == "Tiles":
            node["gridTiles"] = _placeholder(arrays, _grid_tiles(drawn_by_ident[ident], tileset))
        else:
            entities = [
                _entity(level, obj, entity_iids[k], built, {**_entity_refs(obj.properties, positions, where, entity_iids), **_leads_to(obj, where, level_iid_of)}, art_tile)
                for k, obj in enumerate(level.objects)
            ]
            unify_types(entities)
            node["entityInstances"] = entities
        layers.append(node)
    doc = {
        "identifier": ids.identifier(stem),
        "iid": iid,
        "uid": uid,
        # LDtk lays levels out itself in a linear world and writes -1; floors stack on depths.
        "worldX": -1 if depth is None else 0,
        "worldY": -1 if depth is None else 0,
        "worldDepth": depth or 0,
        "pxWid": level.width * tw,
        "pxHei": level.height * th,
        "__bgColor": LEVEL_BG,
        "bgColor": None,
        "useAutoIdentifier": False,
        "bgRelPath": None,
        "bgPos": None,
        "bgPivotX": 0.5,
        "bgPivotY": 0.5,
        "__smartColor": LEVEL_BG,
        "__bgPos": None,
        "externalRelPath": None,
        # The map's seed is 64-bit (a pinned or re-rolled one is any size): a String in every map,
        # so the project's field has one type for all of them.
        "fieldInstances": property_fields(
            {**_entity_refs(properties, positions, where, entity_iids), **({"seed": str(properties["seed"])} if isinstance(properties.get("seed"), int) else {})},
            lambda f: ids.hashed_uid("level", f),
            f"map {stem!r}",
        ),
        "layerInstances": layers,
        "__neighbours": [],
    }
    return _dumps(doc, arrays)


def entity_color(ident: str) -> str:
    return KIND_COLORS.get(ident) or PALETTE[ids.hashed_uid("color", ident) % len(PALETTE)]


def _entity_refs(
    properties: dict[str, PropertyValue], positions: dict[str, int], where: EntityRef, entity_iids: list[str]
) -> dict[str, PropertyValue | EntityRef]:
    """`properties` with each object reference as the place of the entity it names (every
    entity is in `where`'s layer, `entity_iids` by its position)."""
    return {
        name: replace(where, entity_iid=entity_iids[positions[v.target]] if v.target in positions else None)
        if isinstance(v, ObjectRef)
        else v
        for name, v in properties.items()
    }


# The field of an object that leads to another map's object: its `to_map` and `to_object` as one
# entity reference, which LDtk draws and follows across levels.
LEADS_TO = "to"


def _leads_to(obj: MapObject, where: EntityRef, level_iid_of: Callable[[str], str] | None) -> dict[str, EntityRef]:
    """`{"to": reference}` for an object naming another map's object (`to_map`, `to_object`);
    that entity's iid is of its name (ids.entity_iids), the one object of that name there."""
    to_map, to_object = obj.properties.get("to_map"), obj.properties.get("to_object")
    if level_iid_of is None or not isinstance(to_map, str) or not isinstance(to_object, str) or LEADS_TO in obj.properties:
        return {}
    level = level_iid_of(to_map)
    return {LEADS_TO: EntityRef(ids.iid(level, "entity", to_object), ids.iid(level, "layer", ENTITIES_LAYER), level, where.world_iid)}


def _entity(
    level: Level, obj: MapObject, entity_iid: str, built: BuiltTileset, properties: dict[str, PropertyValue | EntityRef], art_tile: Any = None,
) -> dict[str, Any]:
    tileset = built.tileset
    tw, th = tileset.tile_width, tileset.tile_height
    ident = ids.identifier(obj.type or obj.name)
    area = obj.w > 0 or obj.h > 0
    if area:  # a rectangle keeps its size; its top-left corner is the entity's pivot
        px = (max(0, round(obj.x * tw)), max(0, round(obj.y * th)))
        size = (max(1, round(obj.w * tw)), max(1, round(obj.h * th)))
    else:  # a point is the one cell it lies in
        px = (_cell(obj.x, level.width) * tw, _cell(obj.y, level.height) * th)
        size = (tw, th)
    if "name" in properties:
        raise PipelineError([f"object {obj.name!r}: its property 'name' would hide the LDtk field of its name; rename it"])
    fields = property_fields({"name": obj.name, **properties}, lambda f: ids.hashed_uid("entity", ident, f), f"object {obj.name!r}")
    if obj.points:
        if any(f["__identifier"] == "points" for f in fields):
            raise PipelineError([f"object {obj.name!r}: its property 'points' is the LDtk field of its polyline; rename it"])
        cells = [(_cell(obj.x + x, level.width), _cell(obj.y + y, level.height)) for x, y in obj.points]
        fields.append(points_field("points", ids.hashed_uid("entity", ident, "points"), cells))
        fields.sort(key=lambda f: f["__identifier"])
    tile = None
    if obj.art is not None and art_tile is not None:
        tile = art_tile(obj.art)  # a hand-drawn tile object's own tile (LDtk's entity tiles have no flips)
    if tile is None and obj.tile:
        tile = tile_rect(tileset, object_gid(obj, built, firstgid=0))
    return {
        "__identifier": ident,
        "__grid": [px[0] // tw, px[1] // th],
        "__pivot": [0, 0],
        "__tags": ["area" if area else "path" if obj.points else "point"],
        "__tile": tile,
        "__smartColor": entity_color(ident),
        # LDtk writes null here in linear worlds, whose levels it lays out itself; many readers
        # (ldtkpy, typed loaders) need a number: the position from the level's own origin.
        "__worldX": px[0],
        "__worldY": px[1],
        "iid": entity_iid,
        "width": size[0],
        "height": size[1],
        "defUid": ids.hashed_uid("entity", ident),
        "px": list(px),
        "fieldInstances": fields,
    }


def _cell(position: float, extent: int) -> int:
    return min(max(math.floor(position), 0), extent - 1)


def _int_grid(tiles: np.ndarray) -> str:
    # LDtk's value 0 is an empty cell: symbol i is value i + 1, so every cell has one.
    text = np.array([str(v + 1) for v in range(256)], dtype=object)
    return "[" + ",".join(text[tiles.ravel()]) + "]"


def _grid_tiles(gids: np.ndarray, tileset: Tileset) -> str:
    """The layer's tiles, row by row as LDtk stores them, one per line. Each line is pieced
    together from the texts of its column, its row and its tile, looked up by numpy (a few
    hundred distinct texts, not one format call per tile: three times faster on big maps)."""
    ys, xs = np.nonzero(gids)
    if len(ys) == 0:
        return "[]"
    tiles, which = np.unique(gids[ys, xs].astype(np.int64) - 1, return_inverse=True)
    sx, sy = _src(tileset, tiles)
    columns = np.array(['{"px":[%d,' % (x * tileset.tile_width) for x in range(gids.shape[1])], dtype=object)
    rows = np.array(['%d],"src":[' % (y * tileset.tile_height) for y in range(gids.shape[0])], dtype=object)
    kinds = np.array(['%d,%d],"f":0,"t":%d,"d":[' % v for v in zip(sx.tolist(), sy.tolist(), tiles.tolist())], dtype=object)
    coords = map(str, (ys.astype(np.int64) * gids.shape[1] + xs).tolist())
    pieces = zip(columns[xs], rows[ys], kinds[which.ravel()], coords, itertools.repeat('],"a":1},\n'))
    return "[\n" + "".join(itertools.chain.from_iterable(pieces))[:-2] + "\n]"


def _stacked_tiles(stack: tuple[np.ndarray, ...], tileset: Tileset, tw: int, th: int) -> str:
    """Tiles of several layers in one LDtk Tiles layer, LDtk's stacked tiles: each cell's in
    the order of the layers (the first at the bottom), cells row by row; flips as `f` (1: left-
    right, 2: upside down)."""
    cells, tiles, flips, order = [], [], [], []
    for k, gids in enumerate(stack):
        ys, xs = np.nonzero(gids)
        values = gids[ys, xs]
        cells.append(ys.astype(np.int64) * gids.shape[1] + xs)
        tiles.append((values & np.uint32(0x0FFFFFFF)).astype(np.int64) - 1)
        flips.append(((values >> 31) & 1).astype(np.int64) | (((values >> 30) & 1).astype(np.int64) << 1))
        order.append(np.full(len(ys), k, dtype=np.int64))
    if not stack or not sum(len(c) for c in cells):
        return "[]"
    cell, tile, flip, layer = (np.concatenate(v) for v in (cells, tiles, flips, order))
    sort = np.lexsort((layer, cell))
    cell, tile, flip = cell[sort], tile[sort], flip[sort]
    height, width = stack[0].shape
    # As `_grid_tiles`: each line pieced together from texts looked up by numpy.
    kinds_of, which = np.unique(tile * 4 + flip, return_inverse=True)
    sx, sy = _src(tileset, kinds_of // 4)
    columns = np.array(['{"px":[%d,' % (x * tw) for x in range(width)], dtype=object)
    rows = np.array(['%d],"src":[' % (y * th) for y in range(height)], dtype=object)
    kinds = np.array(['%d,%d],"f":%d,"t":%d,"d":[' % v for v in zip(sx.tolist(), sy.tolist(), (kinds_of % 4).tolist(), (kinds_of // 4).tolist())], dtype=object)
    pieces = zip(columns[cell % width], rows[cell // width], kinds[which.ravel()], map(str, cell.tolist()), itertools.repeat('],"a":1},\n'))
    return "[\n" + "".join(itertools.chain.from_iterable(pieces))[:-2] + "\n]"


_PLACEHOLDER = re.compile(r'"(@pcg-ldtk-array-\d+@)"')


def _placeholder(arrays: dict[str, str], text: str) -> str:
    key = f"@pcg-ldtk-array-{len(arrays)}@"
    arrays[key] = text
    return key


def _dumps(doc: dict[str, Any], arrays: dict[str, str]) -> bytes:
    """JSON as LDtk's compact style reads: the structure indented, big arrays dense (put in
    after json.dumps, in one pass)."""
    text = json.dumps(doc, indent="\t", ensure_ascii=False)
    if arrays:
        text = _PLACEHOLDER.sub(lambda m: arrays.get(m.group(1), m.group(0)), text)
    return (text + "\n").encode("utf-8")
