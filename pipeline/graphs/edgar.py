"""Edgar's YAML files, read unchanged: level graphs (`Maps/`) and room shape sets (`Rooms/`).

A map file gives its rooms as a range of numbers (`roomsRange`), its connections (`passages`),
the shapes every room may take (`defaultRoomShapes`), shapes for some rooms (`rooms`, keyed by
lists of room numbers), shapes of its own (`customRoomDescriptionsSet`, the set `custom`) and
whether connections are corridors (`corridors`). A shape entry names a set (`setName`, looked
up by the `name` inside each file of `Rooms/` beside `Maps/`), optionally one shape of it
(`roomDescriptionName`), a `scale` and a `probability`. Shapes may be turned (`rotate`, on by
default, as in Edgar).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pipeline.fsio import read_regular
from pipeline.graphs.model import Edge, LevelGraph, Node
from pipeline.graphs.templates import RoomTemplate, TemplateError, from_polygon, turned_variants


class EdgarError(ValueError):
    """A problem with an Edgar file (the message names the file and the key)."""


class _Loader(yaml.SafeLoader):
    """YAML as Edgar writes it: door modes are tagged mappings, and `rooms` is keyed by lists."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:  # type: ignore[override]
        out = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            out[tuple(key) if isinstance(key, list) else key] = self.construct_object(value_node, deep=deep)
        return out


def _door_mode(kind: str) -> Any:
    def construct(loader: _Loader, node: yaml.Node) -> dict[str, Any]:
        return {"mode": kind, **loader.construct_mapping(node, deep=True)}  # type: ignore[arg-type]

    return construct


_Loader.add_constructor("!OverlapMode", _door_mode("overlap"))
_Loader.add_constructor("!SpecificPositionsMode", _door_mode("specific"))


def load_yaml(path: Path, digests: dict[str, str], relative: str) -> Any:
    try:
        data = read_regular(path)
    except OSError as exc:
        raise EdgarError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    digests[relative] = hashlib.sha256(data).hexdigest()
    try:
        return yaml.load(data, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise EdgarError(f"{path}: not YAML Edgar reads ({str(exc).splitlines()[0]})") from None


@dataclass
class ShapeSet:
    name: str
    default_mode: dict[str, Any] | None
    shapes: dict[str, dict[str, Any]]
    file: str


@dataclass
class EdgarMap:
    """A map file read: its graph (node templates name entries of `templates`), the templates
    (each name: its turned variants), and every file read with its sha256."""

    graph: LevelGraph
    templates: dict[str, list[RoomTemplate]]
    corridor_templates: tuple[str, ...]
    corridors: bool  # the map's corridors.enable: a corridor room on every connection
    files: dict[str, str] = field(default_factory=dict)


def room_sets(folder: Path, recipe_dir: Path, digests: dict[str, str]) -> dict[str, ShapeSet]:
    """Every room shape set in `folder`, by the name it gives itself."""
    sets: dict[str, ShapeSet] = {}
    if not folder.is_dir():
        return sets
    for path in sorted(folder.glob("*.yml")) + sorted(folder.glob("*.yaml")):
        relative = _relative(path, recipe_dir)
        doc = load_yaml(path, digests, relative)
        if not isinstance(doc, dict) or "roomDescriptions" not in doc:
            continue
        name = str(doc.get("name", path.stem))
        sets[name] = _shape_set(name, doc, relative)
    return sets


def _shape_set(name: str, doc: dict[str, Any], file: str) -> ShapeSet:
    default = (doc.get("default") or {}).get("doorMode")
    shapes = doc.get("roomDescriptions") or {}
    if not isinstance(shapes, dict):
        raise EdgarError(f"{file}: roomDescriptions must be a table of shapes")
    return ShapeSet(name, default, {str(k): v for k, v in shapes.items()}, file)


def _relative(path: Path, base: Path) -> str:
    """How the manifest and cache key name a file read: relative to the recipe's folder."""
    return Path(os.path.relpath(path, base)).as_posix()


def read_map(recipe_dir: Path, relative: str) -> EdgarMap:
    """Edgar's map file `relative` (to the recipe's folder), with the shape sets it names."""
    path = recipe_dir / relative
    digests: dict[str, str] = {}
    doc = load_yaml(path, digests, relative)
    if not isinstance(doc, dict):
        raise EdgarError(f"{path}: an Edgar map is a table (roomsRange, passages, defaultRoomShapes...)")
    sets = room_sets(path.parent.parent / "Rooms", recipe_dir, digests)
    if path.parent.name != "Maps":  # Maps/Thesis/x.yml: Rooms/ is beside Maps/
        sets = {**room_sets(path.parent.parent.parent / "Rooms", recipe_dir, digests), **sets}
    custom = doc.get("customRoomDescriptionsSet")
    if custom:
        sets["custom"] = _shape_set("custom", custom, relative)

    span = doc.get("roomsRange") or {}
    try:
        first, last = int(span["from"]), int(span["to"])
    except (KeyError, TypeError, ValueError):
        raise EdgarError(f"{path}: roomsRange needs from and to (room numbers)") from None
    numbers = list(range(first, last + 1))
    templates: dict[str, list[RoomTemplate]] = {}

    def pool(entries: Any, where: str) -> tuple[str, ...]:
        if not isinstance(entries, list) or not entries:
            raise EdgarError(f"{path}: {where} must be a list of shapes (setName, roomDescriptionName)")
        names: list[str] = []
        for entry in entries:
            names.extend(_entry(entry, sets, templates, f"{path}: {where}"))
        return tuple(dict.fromkeys(names))

    default_pool = pool(doc.get("defaultRoomShapes"), "defaultRoomShapes") if doc.get("defaultRoomShapes") else ()
    own: dict[int, tuple[str, ...]] = {}
    for key, value in (doc.get("rooms") or {}).items():
        rooms = key if isinstance(key, tuple) else (key,)
        shapes = pool((value or {}).get("roomShapes"), f"rooms.{list(rooms)}.roomShapes")
        for r in rooms:
            own[int(r)] = shapes
    nodes = []
    for n in numbers:
        shapes = own.get(n, default_pool)
        if not shapes:
            raise EdgarError(f"{path}: room {n} has no shapes (no defaultRoomShapes, nor rooms entry)")
        nodes.append(Node(str(n), templates=shapes))
    edges = []
    for p in doc.get("passages") or []:
        if not isinstance(p, list) or len(p) != 2:
            raise EdgarError(f"{path}: passages: {p!r} is not a pair of room numbers")
        edges.append(Edge(str(int(p[0])), str(int(p[1]))))
    corridors = doc.get("corridors") or {}
    corridor_pool: tuple[str, ...] = ()
    enabled = bool(corridors.get("enable", False))
    if enabled:
        corridor_pool = pool(corridors.get("corridorShapes"), "corridors.corridorShapes")
        for name in corridor_pool:
            templates[name] = [t if t.corridor else _as_corridor(t) for t in templates[name]]
    graph = LevelGraph(nodes, edges)
    problems = graph.problems()
    if problems:
        raise EdgarError(f"{path}: {problems[0]}")
    return EdgarMap(graph, templates, corridor_pool, enabled, digests)


def _as_corridor(t: RoomTemplate) -> RoomTemplate:
    return RoomTemplate(t.name, t.kinds, t.doors, corridor=True, weight=t.weight)


def _entry(entry: Any, sets: dict[str, ShapeSet], templates: dict[str, list[RoomTemplate]], where: str) -> list[str]:
    if not isinstance(entry, dict):
        raise EdgarError(f"{where}: {entry!r} is not a shape entry (setName, roomDescriptionName)")
    set_name = str(entry.get("setName", "custom"))
    if set_name not in sets:
        known = ", ".join(sorted(sets)) or "none"
        raise EdgarError(f"{where}: no room set named {set_name!r} (sets found: {known})")
    shape_set = sets[set_name]
    wanted = entry.get("roomDescriptionName")
    names = [str(wanted)] if wanted is not None else list(shape_set.shapes)
    scale = entry.get("scale") or [1, 1]
    weight = float(entry.get("probability", 1))
    rotate = bool(entry.get("rotate", True))
    out = []
    for shape_name in names:
        if shape_name not in shape_set.shapes:
            raise EdgarError(f"{where}: the set {set_name!r} has no shape {shape_name!r}")
        key = f"{set_name}/{shape_name}" + ("" if list(scale) == [1, 1] else f"@{scale[0]}x{scale[1]}")
        if key not in templates:
            templates[key] = _variants(key, shape_set, shape_name, (int(scale[0]), int(scale[1])), weight, rotate, where)
        out.append(key)
    return out


def _variants(key: str, shape_set: ShapeSet, shape_name: str, scale: tuple[int, int], weight: float, rotate: bool, where: str) -> list[RoomTemplate]:
    desc = shape_set.shapes[shape_name] or {}
    mode = desc.get("doorMode") or shape_set.default_mode
    if not mode:
        raise EdgarError(f"{where}: the shape {shape_name!r} of {shape_set.file} has no doorMode, nor its set a default")
    sx, sy = scale
    points = [(int(x) * sx, int(y) * sy) for x, y in desc.get("shape") or []]
    try:
        if mode.get("mode") == "specific":
            lines = [[[int(a) * sx, int(b) * sy] for a, b in line] for line in mode.get("doorPositions") or []]
            make = lambda turns: from_polygon(key, points, door_lines=lines, weight=weight, turns=turns)  # noqa: E731
        else:
            length, corner = int(mode.get("doorLength", 1)), int(mode.get("cornerDistance", 0))
            make = lambda turns: from_polygon(key, points, door_length=length, corner_distance=corner, weight=weight, turns=turns)  # noqa: E731
        return turned_variants(make, rotate)
    except TemplateError as exc:
        raise EdgarError(f"{shape_set.file}: roomDescriptions.{shape_name}: {exc}") from None


def read_room_set(recipe_dir: Path, relative: str, digests: dict[str, str]) -> dict[str, list[RoomTemplate]]:
    """Every shape of the Edgar room set file `relative`, as templates named SET/SHAPE."""
    path = recipe_dir / relative
    doc = load_yaml(path, digests, relative)
    if not isinstance(doc, dict) or "roomDescriptions" not in doc:
        raise EdgarError(f"{path}: not an Edgar room set (name, roomDescriptions)")
    name = str(doc.get("name", path.stem))
    templates: dict[str, list[RoomTemplate]] = {}
    _entry({"setName": name}, {name: _shape_set(name, doc, relative)}, templates, relative)
    return templates
