"""The pack's `.ldtk` project: LDtk's "separate level files" mode, the definitions and the list
of levels, made once the maps are, from the level files the maps wrote. Entity and level field
definitions come from the instances those files hold (their uids are derived from names, so the
workers that wrote them agree without talking); the layer and tileset definitions from the
definitions file every map shares."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pipeline.errors import PipelineError
from pipeline.ldtk import APP_BUILD_ID, HEADER, JSON_VERSION, ids
from pipeline.ldtk.fields import field_def, merged_type

PROJECT_BG = "#40465B"
# Bump when the project made from the same level files changes: old projects are then rewritten.
PROJECT_FORMAT = 1
_SOURCES = "pcgSources"  # the header's record of what the project was made from


def sources_key(project: str, files: list[tuple[str, str]]) -> str:
    """What the project depends on: its name and the (path, sha256) of the files it is made of."""
    text = json.dumps([PROJECT_FORMAT, project, files], separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def is_current(path: Path, key: str) -> bool:
    """Whether the project at `path` was made from exactly these files (its header says so)."""
    try:
        with path.open("rb") as f:
            head = f.read(2048)
    except OSError:
        return False
    return f'"{_SOURCES}": "{key}"'.encode() in head


def project_json(pack: str, seed: int, project: str, defs: dict[str, Any], levels: list[tuple[str, dict[str, Any]]], key: str) -> bytes:
    """The project listing `levels` ((path relative to the project file, level JSON), in map
    order), with `defs` (layers and tilesets) and the definitions the levels' instances name."""
    entities, level_fields = _instance_defs([doc for _, doc in levels])
    grid = defs["tilesets"][0]["tileGridSize"] if defs["tilesets"] else 16
    heads = []
    for rel, doc in levels:
        head = dict(doc)
        head["layerInstances"] = None  # in the level file: LDtk's separate-files layout
        head["externalRelPath"] = rel
        heads.append(head)
    uids = [ids.TILESET_UID, *(t["uid"] for t in defs["tilesets"]), *(layer["uid"] for layer in defs["layers"]), *(d["uid"] for d in entities)]
    uids += [f["uid"] for d in entities for f in d["fieldDefs"]] + [f["uid"] for f in level_fields] + [doc["uid"] for _, doc in levels]
    project_iid = ids.iid(pack, seed, project)
    doc = {
        "__header__": {**HEADER, _SOURCES: key},
        "iid": project_iid,
        "jsonVersion": JSON_VERSION,
        "appBuildId": APP_BUILD_ID,
        "nextUid": max(uids) + 1,
        "identifierStyle": "Free",  # keep our names: the game code looks them up as written
        "toc": [],
        # Floors joined by stairs stand on one spot at their depths: a free layout keeps them so.
        "worldLayout": "Free" if any(doc["worldX"] >= 0 for _, doc in levels) else "LinearHorizontal",
        "worldGridWidth": grid * 16,
        "worldGridHeight": grid * 16,
        "defaultLevelWidth": grid * 16,
        "defaultLevelHeight": grid * 16,
        "defaultPivotX": 0,
        "defaultPivotY": 0,
        "defaultGridSize": grid,
        "defaultEntityWidth": grid,
        "defaultEntityHeight": grid,
        "bgColor": PROJECT_BG,
        "defaultLevelBgColor": "#696A79",
        "minifyJson": False,
        "externalLevels": True,
        "exportTiled": False,
        "simplifiedExport": False,
        "imageExportMode": "None",
        "exportLevelBg": True,
        "pngFilePattern": None,
        "backupOnSave": False,
        "backupLimit": 10,
        "backupRelPath": None,
        "levelNamePattern": "Level_%idx",
        "tutorialDesc": None,
        "customCommands": [],
        "flags": [],
        "defs": {
            "layers": defs["layers"],
            "entities": entities,
            "tilesets": defs["tilesets"],
            "enums": [],
            "externalEnums": [],
            "levelFields": level_fields,
        },
        "levels": heads,
        "worlds": [],
        "dummyWorldIid": ids.world_iid(pack, project),
    }
    return (json.dumps(doc, indent="\t", ensure_ascii=False) + "\n").encode("utf-8")


def _instance_defs(levels: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Entity definitions (sorted by identifier) and level field definitions, from the instances."""
    kinds: dict[int, dict[str, Any]] = {}  # entity def uid -> what its instances say
    fields: dict[int, dict[int, tuple[str, list[str]]]] = {}  # entity def uid -> field uid -> (identifier, types)
    level_fields: dict[int, tuple[str, list[str]]] = {}
    named: dict[int, str] = {}  # every hashed uid -> its name: two names on one uid would merge them
    for doc in levels:
        for fi in doc["fieldInstances"]:
            _claim(named, fi["defUid"], f"level field {fi['__identifier']}")
            level_fields.setdefault(fi["defUid"], (fi["__identifier"], []))[1].append(fi["__type"])
        for layer in doc["layerInstances"] or []:
            for ei in layer["entityInstances"]:
                uid = ei["defUid"]
                _claim(named, uid, f"entity {ei['__identifier']}")
                kind = kinds.setdefault(uid, {"identifier": ei["__identifier"], "color": ei["__smartColor"], "tags": set(), "tile": None})
                kind["tags"].update(ei["__tags"])
                if kind["tile"] is None:
                    kind["tile"] = ei["__tile"]
                for fi in ei["fieldInstances"]:
                    _claim(named, fi["defUid"], f"field {fi['__identifier']} of entity {ei['__identifier']}")
                    fields.setdefault(uid, {}).setdefault(fi["defUid"], (fi["__identifier"], []))[1].append(fi["__type"])
    grid = _grid(levels)
    entities = [_entity_def(uid, kinds[uid], fields.get(uid, {}), grid) for uid in sorted(kinds, key=lambda u: kinds[u]["identifier"])]
    level_defs = [field_def(name, uid, merged_type(types)) for uid, (name, types) in sorted(level_fields.items(), key=lambda e: e[1][0])]
    return entities, level_defs


def _claim(named: dict[int, str], uid: int, name: str) -> None:
    other = named.setdefault(uid, name)
    if other != name:
        raise PipelineError([f"LDtk project: {other} and {name} hash to the same uid {uid}; rename one"])


def _entity_def(uid: int, kind: dict[str, Any], fields: dict[int, tuple[str, list[str]]], grid: int) -> dict[str, Any]:
    area = "area" in kind["tags"]
    tile = kind["tile"]
    return {
        "identifier": kind["identifier"],
        "uid": uid,
        "tags": sorted(kind["tags"]),
        "exportToToc": False,
        "allowOutOfBounds": False,
        "doc": None,
        "width": grid,
        "height": grid,
        "resizableX": area,  # rooms and prefabs come in every size
        "resizableY": area,
        "minWidth": None,
        "maxWidth": None,
        "minHeight": None,
        "maxHeight": None,
        "keepAspectRatio": False,
        "tileOpacity": 1,
        "fillOpacity": 0.08 if area else 0.6,
        "lineOpacity": 1,
        "hollow": area,
        "color": kind["color"],
        "renderMode": "Tile" if tile else "Rectangle" if area else "Ellipse",
        "showName": True,
        "tilesetId": ids.TILESET_UID if tile else None,
        "tileRenderMode": "FitInside",
        "tileRect": tile,
        "uiTileRect": None,
        "nineSliceBorders": [],
        "maxCount": 0,
        "limitScope": "PerLevel",
        "limitBehavior": "MoveLastOne",
        "pivotX": 0,
        "pivotY": 0,
        "fieldDefs": [field_def(name, fuid, merged_type(types)) for fuid, (name, types) in sorted(fields.items(), key=lambda e: e[1][0])],
    }


def _grid(levels: list[dict[str, Any]]) -> int:
    for doc in levels:
        for layer in doc["layerInstances"] or []:
            return int(layer["__gridSize"])
    return 16
