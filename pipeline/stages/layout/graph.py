"""The `layout.graph` stage: a level graph laid out with room templates, keys and locks proven."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar, Literal, Union

import numpy as np
import tomli
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, TypeAdapter, ValidationError, ValidationInfo, model_validator

from pipeline.drawn_art import paste_art
from pipeline.level.art import ArtTileset
from pipeline.level.dungeon_tiles import DOOR, DUNGEON_ALPHABET, WALL
from pipeline.level.dungeon_tiles import FLOOR as FLOOR_TILE
from pipeline.errors import KeyedError, Rejected
from pipeline.fsio import read_regular
from pipeline.graphs.edgar import EdgarError, read_map, read_room_set
from pipeline.graphs.generate import GraphShape, ShapeError, generate, least_rooms
from pipeline.graphs.layout import LayoutFailed, Placement, Problem, Unjoinable, lay_out
from pipeline.graphs.locks import Solution, UnsolvableLevel, solve, start_and_goal
from pipeline.graphs.model import Edge, LevelGraph, Node
from pipeline.graphs.templates import DIRECTION_NAMES, FLOOR, RoomTemplate, TemplateError, from_polygon, turned_variants
from pipeline.graphs.templates_tiled import read_template
from pipeline.level import SPARE_CHARS, Level, MapObject, ObjectRef, PropertyValue, Symbol, typed_property
from pipeline.ranges import draw, int_range, least, most
from pipeline.registry import StageParams, stage

Scalar = Union[bool, int, float, str]


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TemplateSpec(_Table):
    """A room template: a polygon (Edgar's form) or a map drawn in Tiled."""

    shape: list[tuple[int, int]] | None = Field(None, description="Corners of the room's floor, on the tile grid ([[0,0],[0,8],[8,8],[8,0]]).")
    file: str | None = Field(None, description="A room drawn in Tiled (.tmx/.tmj), relative to the recipe; doors marked with door tiles or door objects.")
    door_length: int = Field(1, ge=1, le=64, description="With shape: a door's width in tiles.")
    corner_distance: int = Field(1, ge=0, le=64, description="With shape: the fewest tiles between a door and a corner.")
    doors: list[tuple[tuple[int, int], tuple[int, int]]] | None = Field(None, description="With shape: the only door lines ([[x1,y1],[x2,y2]] on the outline).")
    socket: str = Field("", description="With shape: the socket of its doors (only doors of one socket join).")
    weight: float = Field(1.0, gt=0, le=1e6, allow_inf_nan=False, description="How often it is chosen, relative to the others of a room's pool.")
    corridor: bool = Field(False, description="A corridor template: used for corridor rooms only.")
    rotate: bool = Field(True, description="With shape: also turned by quarter turns.")
    roles: list[str] = Field(default_factory=list, description="The roles it is for (a node of such a role draws from these).")

    @model_validator(mode="after")
    def _one_source(self) -> TemplateSpec:
        if (self.shape is None) == (self.file is None):
            raise ValueError("give a template either shape (corners) or file (a Tiled map)")
        return self


class NodeSpec(_Table):
    name: str = Field(min_length=1)
    role: str = ""
    templates: list[str] = Field(default_factory=list)
    properties: dict[str, Scalar] = Field(default_factory=dict)


class EdgeSpec(_Table):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    a: str = Field(alias="from", min_length=1)
    b: str = Field(alias="to", min_length=1)
    lock: str = ""
    one_way: bool = False
    corridor: bool | None = None
    socket: str = ""
    key: str = ""


class GenerateSpec(_Table):
    """A graph drawn per map from the pack's seed."""

    rooms: int_range(2, 500) = Field((10, 16), description="Rooms, or [min, max].")  # type: ignore[valid-type]
    loops: int_range(0, 100) = Field((1, 2), description="Loops (second ways between rooms), or [min, max].")  # type: ignore[valid-type]
    locks: int_range(0, 30) = Field((0, 1), description="Locked doors on the way to the boss (the first is the boss door), or [min, max].")  # type: ignore[valid-type]
    roles: dict[str, int_range(0, 100)] = Field(  # type: ignore[valid-type]
        default_factory=lambda: {"shop": 1, "treasure": 1, "secret": (0, 1)},
        description="Rooms of other roles and how many ([min, max]); treasure and secret go in dead ends, others on the main path.",
    )


# Objects the stage writes itself: a drawn room's own of these types are not copied.
OWN_OBJECTS = ("room", "door", "key", "spawn", "exit")

# Rooms for a graph that names none: rectangles with a door anywhere a tile from the corners.
DEFAULT_SHAPES = {"small": (6, 6), "wide": (10, 6), "hall": (12, 8), "square": (8, 8), "large": (14, 10)}


@stage("layout.graph", version=5)
class LayoutGraph(StageParams):
    """Lay a level graph out with room templates, its keys and locks proven solvable.

    No two rooms overlap, every connection is a door the two rooms share (or a corridor room
    between them), loops are kept, and keys and locks are proven: the goal can be reached, no
    place strands the player, each lock gates something. A map that fails the proof is never
    written.

    The graph is one of: `graph`, a file (Edgar's YAML map, with the room sets of `Rooms/` beside
    `Maps/`, or a TOML file of `nodes` and `edges` as below); `nodes` and `edges` here; or
    `generate`, a graph drawn per map (rooms, loops, locks and roles as ranges). A node has a
    `name`, a `role` (start, boss, exit, shop, treasure, secret or any word), `templates` (its
    pool) and `properties`; an edge joins `from` and `to`, with `lock` (the key's name), `one_way`,
    `corridor`, `socket` and `key` (the room its key lies in; else chosen). Templates are
    polygons (`shape`, with `door_length` and `corner_distance`, or `doors` at given lines) or
    rooms drawn in Tiled (`file`, doors marked with door tiles or door objects, which may have
    `socket` and `direction`); `room_sets` adds Edgar's room set files. Without any, rooms are
    rectangles of 6 to 14 tiles.

    The map: walls, floors and doors; a `room` object per node (`node`, `room`, `room_template`
    (not `template`, which pytmx keeps for Tiled's object templates), `role`, `area` and the
    node's properties; corridor rooms `corridor = true`, `node = "a-b"`); a `door`
    object per doorway (`from`, `to`, `direction`, `socket`, `lock`, `key` naming its key, and
    `gates`: "rooms" when the lock cuts rooms off, "shortcut" when it only shortens a way); a
    `key` object per lock (`lock`, `door`); `spawn` in the start room, `exit` in the goal (the
    exit or boss room, else the room farthest from the start); a `room` layer of room numbers.
    Stats: rooms, cycles, critical_path (rooms entered from the start to the goal, key detours
    included), keys. A graph that cannot be laid out within `time_limit` fails the map naming the
    rooms or loop that did not fit; with `attempts`, the map is drawn again from new seeds.
    `repeat = "not_beside"` keeps rooms joined (by a door or a corridor room) of different templates.
    """

    arity: ClassVar[tuple[int, int]] = (0, 0)
    may_reject: ClassVar[bool] = True
    adds_stats: ClassVar[tuple[str, ...] | None] = ("rooms", "cycles", "critical_path", "keys")
    compile_weight: ClassVar[int] = 2

    graph: str | None = Field(None, description="A graph file, relative to the recipe: Edgar's YAML map (.yml) or a TOML file of nodes and edges.")
    nodes: list[Union[NodeSpec, str]] | None = Field(None, description="The graph's rooms (a name, or a table: name, role, templates, properties).")
    edges: list[Union[EdgeSpec, tuple[str, str]]] | None = Field(
        None, description="The graph's connections ([from, to], or a table: from, to, lock, one_way, corridor, socket, key)."
    )
    generate: GenerateSpec | None = Field(None, description="Draw a graph per map: rooms, loops, locks, roles (ranges).")
    templates: dict[str, TemplateSpec] = Field(default_factory=dict, description="Room templates by name (shape or file).")
    room_sets: list[str] = Field(default_factory=list, description="Edgar room set files (YAML) whose shapes become templates, named SET/SHAPE.")
    corridors: bool | None = Field(None, description="Put a corridor room on every connection (unset: as the graph file says, else no).")
    time_limit: float = Field(10.0, gt=0, le=600, allow_inf_nan=False, description="Seconds to find a layout before the map fails.")
    attempts: int = Field(1, ge=1, le=1000, description="Draws of the map (new seeds) before a layout or proof failure fails it.")
    repeat: Literal["allow", "not_beside"] = Field(
        "allow", exclude_if=lambda repeat: repeat == "allow",
        description='"not_beside": no two rooms joined (by a door, or a corridor room between) are of one template; "allow": they may be.',
    )

    _graph: LevelGraph | None = PrivateAttr(None)
    _pools: dict[str, list[RoomTemplate]] = PrivateAttr(default_factory=dict)
    _corridor_pool: tuple[str, ...] = PrivateAttr(())
    _files: dict[str, str] = PrivateAttr(default_factory=dict)
    _art: tuple[ArtTileset, ...] = PrivateAttr(())
    _corridors: bool = PrivateAttr(False)
    _problem: Problem | None = PrivateAttr(None)

    @model_validator(mode="after")
    def _load(self, info: ValidationInfo) -> LayoutGraph:
        recipe_dir = Path((info.context or {}).get("recipe_dir", "."))
        sources = [k for k, v in (("graph", self.graph), ("nodes", self.nodes), ("generate", self.generate)) if v is not None]
        if len(sources) != 1:
            raise ValueError("give the graph one way: graph (a file), nodes and edges, or generate" + (f" (got {', '.join(sources)})" if sources else ""))
        if self.edges is not None and self.nodes is None:
            raise KeyedError("edges", "edges need nodes beside them")
        files: dict[str, str] = {}
        pools: dict[str, list[RoomTemplate]] = {}
        corridor_pool: tuple[str, ...] = ()
        corridors = False
        graph: LevelGraph | None = None
        try:
            if self.graph is not None and self.graph.lower().endswith((".yml", ".yaml")):
                edgar = read_map(recipe_dir, self.graph)
                files.update(edgar.files)
                pools.update(edgar.templates)
                corridor_pool = edgar.corridor_templates
                graph = edgar.graph
                corridors = edgar.corridors
            elif self.graph is not None:
                graph = _toml_graph(recipe_dir, self.graph, files)
        except EdgarError as exc:
            raise KeyedError("graph", str(exc)) from None
        if self.nodes is not None:
            graph = _graph_of([n if isinstance(n, NodeSpec) else NodeSpec(name=n) for n in self.nodes], self.edges or [])
        for path in self.room_sets:
            try:
                for name, found in read_room_set(recipe_dir, path, files).items():
                    pools[name] = found
            except EdgarError as exc:
                raise KeyedError("room_sets", str(exc)) from None
        art: dict[str, ArtTileset] = {}
        for name, spec in self.templates.items():
            try:
                pools[name] = _template(recipe_dir, name, spec, files, art)
            except TemplateError as exc:
                raise KeyedError(f"templates.{name}", str(exc)) from None
        if not any(not v[0].corridor for v in pools.values()):
            for name, (w, h) in DEFAULT_SHAPES.items():
                pools.setdefault(name, turned_variants(lambda t, w=w, h=h, name=name: from_polygon(name, [(0, 0), (0, h), (w, h), (w, 0)], turns=t), True))
        if not corridor_pool:
            corridor_pool = tuple(k for k, v in pools.items() if v[0].corridor)
        if self.corridors is not None:
            corridors = self.corridors
        if graph is not None:
            problems = graph.problems()
            if problems:
                raise KeyedError("graph" if self.graph else "nodes", problems[0])
            for node in graph.nodes:
                for t in node.templates:
                    if t not in pools:
                        raise KeyedError("graph" if self.graph else "nodes", f"the room {node.name!r} names the template {t!r}, which is not defined ({', '.join(sorted(pools)[:12])})")
            if (corridors or any(e.corridor for e in graph.edges)) and not corridor_pool:
                raise KeyedError("corridors", "corridor rooms need corridor templates: add a template with corridor = true")
        if self.generate is not None:
            g = self.generate
            need = least_rooms(least(g.loops), least(g.locks), sum(least(c) for c in g.roles.values()))
            if most(g.rooms) < need:
                raise KeyedError("generate.rooms", f"at most {most(g.rooms)} rooms cannot hold the fewest loops, locks and roles asked: it takes {need}")
        self._graph, self._pools, self._corridor_pool, self._files = graph, pools, corridor_pool, files
        self._art, self._corridors = tuple(art.values()), corridors
        return self

    def files_read(self) -> dict[str, str]:
        return dict(self._files)

    def art_tilesets(self) -> list[ArtTileset]:
        return list(self._art)

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        try:
            graph = self._graph if self._graph is not None else self._drawn_graph(rng)
            expanded = graph.with_corridors(self._corridors)
            problem = self._problem_for(expanded, reuse=self._graph is not None)
            start, goal = start_and_goal(expanded)
            solution = solve(expanded, rng, start, goal)
            placement = lay_out(problem, rng, self.time_limit, first=start)
        except (LayoutFailed, UnsolvableLevel, ShapeError) as exc:
            searched = isinstance(exc, LayoutFailed) and not isinstance(exc, Unjoinable)
            hint = " (try more or larger templates, corridors, or fewer loops; attempts redraws the map)" if searched else ""
            raise Rejected(f"{exc}{hint}", self.attempts) from None
        return _draw(problem, placement, graph, solution, rng)

    def _drawn_graph(self, rng: np.random.Generator) -> LevelGraph:
        g = self.generate
        if g is None:
            raise ShapeError("no graph to draw: give graph, nodes or generate")
        roles = tuple((role, draw(count, rng)) for role, count in sorted(g.roles.items()))
        loops, locks = draw(g.loops, rng), draw(g.locks, rng)
        rooms = max(draw(g.rooms, rng), least_rooms(loops, locks, sum(c for _, c in roles)))
        return generate(GraphShape(rooms, loops, locks, roles), rng)

    def _problem_for(self, graph: LevelGraph, reuse: bool) -> Problem:
        if reuse and self._problem is not None:
            return self._problem
        variants: list[RoomTemplate] = []
        index: dict[str, list[int]] = {}
        shares: list[float] = []
        for name, found in self._pools.items():
            index[name] = list(range(len(variants), len(variants) + len(found)))
            variants.extend(found)
            # A template's weight is shared among its turns, so turning adds no weight.
            shares.extend(t.weight / len(found) for t in found)
        plain = [k for k, v in self._pools.items() if not v[0].corridor]
        general = [k for k in plain if not _roles_of(self, k)] or plain
        pools = []
        for node in graph.nodes:
            if node.corridor:
                names = list(self._corridor_pool)
            elif node.templates:
                names = list(node.templates)
            else:
                names = [k for k in plain if node.role and node.role in _roles_of(self, k)] or general
            idx = [i for name in names for i in index[name]]
            pools.append(np.array(idx, dtype=np.int64))
        problem = Problem(graph, variants, pools, np.array(shares, dtype=np.float64), self.repeat == "not_beside")
        if reuse:
            self._problem = problem
        return problem


def _roles_of(stage: LayoutGraph, name: str) -> list[str]:
    spec = stage.templates.get(name)
    return spec.roles if spec is not None else []


def _graph_of(nodes: list[NodeSpec], pairs: list[EdgeSpec | tuple[str, str]]) -> LevelGraph:
    edges = [e if isinstance(e, EdgeSpec) else EdgeSpec.model_validate({"from": e[0], "to": e[1]}) for e in pairs]
    return LevelGraph(
        [Node(n.name, n.role, tuple(n.templates), {k: typed_property(v) for k, v in n.properties.items()}) for n in nodes],
        [Edge(e.a, e.b, e.lock, e.one_way, e.corridor, e.socket, e.key) for e in edges],
    )


def _toml_graph(recipe_dir: Path, relative: str, files: dict[str, str]) -> LevelGraph:
    path = recipe_dir / relative
    try:
        data = read_regular(path)
    except OSError as exc:
        raise KeyedError("graph", f"{path}: cannot read it ({exc.strerror or exc})") from None
    files[relative] = hashlib.sha256(data).hexdigest()
    try:
        doc = tomli.loads(data.decode("utf-8"))
    except (tomli.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise KeyedError("graph", f"{path}: not TOML ({exc})") from None
    unknown = sorted(set(doc) - {"nodes", "edges"})
    if unknown:
        raise KeyedError("graph", f"{path}: unknown key {unknown[0]!r} (a graph file has nodes and edges)")
    parsed: dict[str, list[Any]] = {}
    for key, kind in (("nodes", list[Union[NodeSpec, str]]), ("edges", list[Union[EdgeSpec, tuple[str, str]]])):
        try:
            parsed[key] = TypeAdapter(kind).validate_python(doc.get(key, []))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"] if p not in ("NodeSpec", "EdgeSpec", "str", "tuple[str, str]"))
            raise KeyedError("graph", f"{path}: {key}.{where}: {first['msg']}") from None
    nodes, edges = parsed["nodes"], parsed["edges"]
    return _graph_of([n if isinstance(n, NodeSpec) else NodeSpec(name=n) for n in nodes], edges)


def _template(recipe_dir: Path, name: str, spec: TemplateSpec, files: dict[str, str], art: dict[str, ArtTileset]) -> list[RoomTemplate]:
    if spec.file is not None:
        template, loaded = read_template(recipe_dir, spec.file, name, spec.weight, spec.corridor)
        files.update(loaded.files)
        for ts in loaded.art_tilesets:
            art.setdefault(ts.key, ts)
        return [template]
    lines = [[list(a), list(b)] for a, b in spec.doors] if spec.doors is not None else None
    return turned_variants(
        lambda t: from_polygon(
            name, spec.shape or [], door_length=spec.door_length, corner_distance=spec.corner_distance, door_lines=lines,
            socket=spec.socket, corridor=spec.corridor, weight=spec.weight, turns=t,
        ),
        spec.rotate,
    )


def _draw(problem: Problem, placement: Placement, graph: LevelGraph, solution: Solution, rng: np.random.Generator) -> Level:
    """The Level of a layout: tiles, rooms' and doors' objects, keys, spawn and exit."""
    g = problem.graph
    variants = [problem.variants[int(v)] for v in placement.variant]
    x0 = int(min(placement.x))
    y0 = int(min(placement.y))
    xs = [int(x) - x0 for x in placement.x]
    ys = [int(y) - y0 for y in placement.y]
    width = max(x + t.width for x, t in zip(xs, variants))
    height = max(y + t.height for y, t in zip(ys, variants))
    tiles = np.full((height, width), WALL, dtype=np.uint8)
    room_layer = np.zeros((height, width), dtype=np.int32)
    for k, (x, y, t) in enumerate(zip(xs, ys, variants)):
        floor = t.kinds == FLOOR
        tiles[y : y + t.height, x : x + t.width][floor] = FLOOR_TILE
        room_layer[y : y + t.height, x : x + t.width][floor] = k + 1
    level = Level(tiles=tiles, alphabet=DUNGEON_ALPHABET, layers={"room": room_layer})
    # Rooms drawn in Tiled arrive as drawn: their symbols and art.
    level = _paste_drawn(level, xs, ys, variants)
    tiles = level.tiles
    at = g.index()
    objects: list[MapObject] = []
    for k, (node, x, y, t) in enumerate(zip(g.nodes, xs, ys, variants)):
        fy, fx = np.nonzero(t.kinds == FLOOR)
        props: dict[str, PropertyValue] = {"node": node.name, "room": k + 1, "room_template": t.name, "area": int(len(fx))}
        # Empty strings are left out: pytmx reads an empty property as None, Tiled as "".
        if node.corridor:
            props["corridor"] = True
        elif node.role:
            props["role"] = node.role
        props.update(node.properties)
        objects.append(MapObject(f"room_{k + 1}", "room", x + int(fx.min()), y + int(fy.min()), int(fx.max() - fx.min() + 1), int(fy.max() - fy.min() + 1), props, ref=f"room:{node.name}"))
        if t.drawn is not None:
            for o in t.drawn.objects:
                if o.type not in OWN_OBJECTS:
                    objects.append(replace(o, x=o.x + x, y=o.y + y, properties=dict(o.properties), ref=f"{node.name}:{o.ref}" if o.ref else ""))
    # Doors: a spot of the pair that joins the two rooms where they stand.
    first_door: dict[str, str] = {}  # lock -> the ref of its first door, which its key names
    cut = np.zeros(tiles.shape, dtype=bool)
    for e in g.edges:
        a, b = at[e.a], at[e.b]
        space = problem.space(int(placement.variant[a]), int(placement.variant[b]), e.socket)
        pairs = space.door_pairs(int(placement.x[b] - placement.x[a]), int(placement.y[b] - placement.y[a]))
        i, _ = pairs[int(rng.integers(len(pairs)))].tolist()
        spot = variants[a].doors[i]
        cells = [(xs[a] + cx, ys[a] + cy) for cx, cy in spot.cells()]
        for cx, cy in cells:
            tiles[cy, cx] = DOOR
            cut[cy, cx] = True
        ref = f"door:{e.a}-{e.b}"
        props: dict[str, PropertyValue] = {"from": e.a, "to": e.b, "direction": DIRECTION_NAMES[spot.side]}
        if e.socket:
            props["socket"] = e.socket
        if e.lock:
            props["lock"] = e.lock
            props["gates"] = solution.gates[e.lock]
            props["key"] = ObjectRef(f"key:{e.lock}")
            first_door.setdefault(e.lock, ref)
        if e.one_way:
            props["one_way"] = True
        xs_, ys_ = [c[0] for c in cells], [c[1] for c in cells]
        objects.append(MapObject(f"door_{e.a}_{e.b}", "door", min(xs_), min(ys_), max(xs_) - min(xs_) + 1, max(ys_) - min(ys_) + 1, props, ref=ref))
    tiles[(tiles == DOOR) & ~cut] = WALL  # a drawn room's door tiles that no connection uses
    free = _free_cells(tiles, room_layer)
    names = [n.name for n in g.nodes]
    objects.append(_point("spawn", "spawn", free, width, solution.start, rng, {"room": names[solution.start]}))
    objects.append(_point("exit", "exit", free, width, solution.goal, rng, {"room": names[solution.goal]}))
    for lock, room in sorted(solution.keys.items()):
        objects.append(_point(f"key_{lock}", "key", free, width, room, rng, {"lock": lock, "room": names[room], "door": ObjectRef(first_door[lock])}, ref=f"key:{lock}"))
    level.objects = objects
    rooms = sum(1 for n in g.nodes if not n.corridor)
    walk_rooms = sum(1 for r in solution.walk if not g.nodes[r].corridor)
    level.properties = {"rooms": rooms, "cycles": graph.cycles(), "critical_path": walk_rooms, "keys": len(solution.keys)}
    return level


def _paste_drawn(level: Level, xs: list[int], ys: list[int], variants: list[RoomTemplate]) -> Level:
    """`level` with the rooms drawn in Tiled pasted in as drawn (their symbols and art); `_draw`
    walls up the door tiles the layout does not use (and the build drops their art)."""
    drawn = [(x, y, t) for x, y, t in zip(xs, ys, variants) if t.drawn is not None]
    if not drawn:
        return level
    alphabet = list(level.alphabet)
    for _, _, t in drawn:
        for sym in t.drawn.alphabet:  # type: ignore[union-attr]
            if sym.name not in [a.name for a in alphabet]:
                chars = {a.char for a in alphabet}
                char = sym.char if sym.char not in chars else next(c for c in SPARE_CHARS if c not in chars)
                alphabet.append(Symbol(char, sym.name, sym.color))
    names = [a.name for a in alphabet]
    tiles = level.tiles.copy()
    for x, y, t in drawn:
        src = t.drawn
        if src is None:
            continue
        mapping = np.array([names.index(sym.name) for sym in src.alphabet], dtype=np.uint8)
        inside = t.kinds != 0
        tiles[y : y + t.height, x : x + t.width][inside] = mapping[src.tiles][inside]
    out = Level(tiles=tiles, alphabet=tuple(alphabet), layers=level.layers)
    for x, y, t in drawn:
        paste_art(out, t.drawn, x, y, t.kinds != 0)  # type: ignore[arg-type]
    return out


def _free_cells(tiles: np.ndarray, rooms: np.ndarray) -> dict[int, np.ndarray]:
    """Per room (index from 0), its floor cells as flat indices, in order."""
    flat = rooms.ravel()
    floor = (tiles.ravel() != DOOR) & (flat > 0)
    cells = np.flatnonzero(floor)
    out: dict[int, np.ndarray] = {}
    order = np.argsort(flat[cells], kind="stable")
    cells = cells[order]
    bounds = np.searchsorted(flat[cells], np.arange(1, int(flat.max(initial=0)) + 2))
    for k in range(len(bounds) - 1):
        out[k] = cells[bounds[k] : bounds[k + 1]]
    return out


def _point(name: str, kind: str, free: dict[int, np.ndarray], width: int, room: int, rng: np.random.Generator, props: dict[str, PropertyValue], ref: str = "") -> MapObject:
    cells = free.get(room, np.zeros(0, np.int64))
    if len(cells) == 0:
        raise Rejected(f"the room {props.get('room')!r} has no floor for the {kind}", 1)
    # Spawn and exit near the room's middle cell (in reading order); keys anywhere in the room.
    c = int(cells[len(cells) // 2]) if kind in ("spawn", "exit") else int(cells[int(rng.integers(len(cells)))])
    return MapObject(name, kind, c % width + 0.5, c // width + 0.5, properties=props, ref=ref)
