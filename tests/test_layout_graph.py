"""layout.graph: Edgar's maps laid out and checked, keys and locks proven, graphs from files,
recipes and the generator, rooms drawn in Tiled, and the maps read back through real clients."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.errors import Rejected
from pipeline.graphs.check import layout_problems
from pipeline.graphs.generate import GraphShape, generate, least_rooms
from pipeline.graphs.locks import UnsolvableLevel, solve, start_and_goal
from pipeline.graphs.model import Edge, LevelGraph, Node
from pipeline.graphs.templates import FLOOR, WALL, from_polygon
from pipeline.level import Level
from pipeline.stages.layout.graph import LayoutGraph
from tests.conftest import pcg, tree_digests, write_recipe

EDGAR = Path(__file__).resolve().parents[2] / "shared" / "edgar"
MAPS = sorted((EDGAR / "Maps").rglob("*.yml")) if EDGAR.is_dir() else []


def stage(params: dict, recipe_dir: Path | str = ".") -> LayoutGraph:
    return LayoutGraph.model_validate(params, context={"recipe_dir": str(recipe_dir)})


def laid_out(st_: LayoutGraph, seed: int, attempts: int = 1) -> Level:
    """The stage's map for `seed`, drawing again (as `attempts` does in a build) on a rejection."""
    for k in range(attempts):
        try:
            return st_.run([], np.random.default_rng([seed, k]))
        except Rejected:
            if k == attempts - 1:
                raise
    raise AssertionError("unreachable")


def edges_of(st_: LayoutGraph) -> set[frozenset[str]]:
    graph = st_._graph
    assert graph is not None
    return {frozenset((e.a, e.b)) for e in graph.with_corridors(st_._corridors).edges}


@pytest.mark.skipif(not MAPS, reason="Edgar's maps are not beside the project")
@pytest.mark.parametrize("path", MAPS, ids=lambda p: p.stem)
def test_every_edgar_map_lays_out_valid(path: Path) -> None:
    """One room per node (drawn whole: no room over another's floor), a door per connection on
    door tiles touching both rooms' floors (corridor rooms included), one walkable region, and
    the proof's stats. The search is deterministic for a seed; the time limit is raised from
    10 s only so that a busy machine cannot cut it short (the slowest, example3_mixed with its
    12-room corridor loop, takes about a second here; `python -m bench.graphs` times them all)."""
    st_ = stage({"graph": str(path.relative_to(EDGAR / "Maps")), "time_limit": 60}, EDGAR / "Maps")
    level = laid_out(st_, seed=1)
    assert layout_problems(level, edges_of(st_)) == []
    graph = st_._graph
    assert graph is not None
    rooms = [o for o in level.objects if o.type == "room"]
    assert len(rooms) == len(graph.with_corridors(st_._corridors).nodes)
    assert level.properties["rooms"] == len(graph.nodes)
    assert level.properties["cycles"] == graph.cycles()
    assert [o.type for o in level.objects].count("spawn") == 1


@pytest.mark.skipif(not MAPS, reason="Edgar's maps are not beside the project")
def test_edgar_files_are_read_with_their_sets_scales_and_custom_shapes() -> None:
    st_ = stage({"graph": "tutorial_differentShapes.yml"}, EDGAR / "Maps")
    graph = st_._graph
    assert graph is not None and len(graph.nodes) == 9 and len(graph.edges) == 11
    assert graph.nodes[8].templates == ("custom/bossRoom@2x2",)
    boss = st_._pools["custom/bossRoom@2x2"][0]
    # The 9 x 9 octagon scaled by two: 18 x 18 floor inside its ring of wall.
    assert boss.kinds.shape == (20, 20) and (boss.kinds == FLOOR).sum() < 18 * 18
    corridors = stage({"graph": "tutorial_corridors.yml"}, EDGAR / "Maps")
    assert corridors._corridors and corridors._corridor_pool == ("tutorial_corridors/1-square",)
    assert files_named(corridors, "Rooms/tutorial_corridors.yml")


def files_named(st_: LayoutGraph, tail: str) -> bool:
    return any(path.endswith(tail) for path in st_.files_read())


def test_polygon_templates_have_walls_and_doors_where_edgar_puts_them() -> None:
    square = from_polygon("sq", [(0, 0), (0, 8), (8, 8), (8, 0)], door_length=1, corner_distance=1)
    assert square.kinds.shape == (10, 10)
    assert (square.kinds[1:-1, 1:-1] == FLOOR).all() and (square.kinds[0] == WALL).all()
    # 6 spots a side: a door tile 1 to 6 tiles along the 8-tile wall.
    assert len(square.doors) == 24
    corridor = from_polygon("c", [(0, 0), (0, 1), (1, 1), (1, 0)], door_lines=[[[0, 0], [1, 0]], [[0, 1], [1, 1]]])
    assert sorted((d.x, d.y, d.side) for d in corridor.doors) == [(1, 0, 0), (1, 2, 2)]


def test_a_designers_graph_with_roles_locks_and_properties(tmp_path: Path) -> None:
    st_ = stage(
        {
            "nodes": [
                {"name": "entrance", "role": "start"},
                "hall",
                {"name": "shop", "role": "shop", "properties": {"vendor": "mole"}},
                "cellar",
                "vault",
                {"name": "boss", "role": "boss"},
            ],
            "edges": [
                ["entrance", "hall"],
                ["hall", "shop"],
                ["hall", "cellar"],
                {"from": "cellar", "to": "vault", "lock": "silver"},
                {"from": "vault", "to": "hall", "one_way": True},
                {"from": "hall", "to": "boss", "lock": "gold", "key": "vault"},
            ],
        }
    )
    for seed in range(4):
        level = laid_out(st_, seed)
        assert layout_problems(level, edges_of(st_)) == []
        objects = {o.name: o for o in level.objects}
        rooms = {o.properties["node"]: o for o in level.objects if o.type == "room"}
        assert rooms["shop"].properties["vendor"] == "mole" and rooms["shop"].properties["role"] == "shop"
        # Silver gates the vault (its way back to the hall is one way), where gold's key lies.
        gold = objects["key_gold"]
        assert gold.properties["room"] == "vault"
        door = next(o for o in level.objects if o.type == "door" and o.properties.get("lock") == "gold")
        assert door.properties["key"].target == gold.ref and gold.properties["door"].target == door.ref
        spawn = objects["spawn"]
        assert level.layers["room"][int(spawn.y), int(spawn.x)] == rooms["entrance"].properties["room"]
        exit_ = objects["exit"]
        assert level.layers["room"][int(exit_.y), int(exit_.x)] == rooms["boss"].properties["room"]
        assert level.properties["keys"] == 2


def test_what_each_lock_gates_rooms_cut_off_or_a_shortcut() -> None:
    nodes = [Node("a", "start"), Node("b"), Node("c"), Node("d", "boss")]
    gate = LevelGraph(nodes, [Edge("a", "b"), Edge("b", "c", lock="red"), Edge("c", "d")])
    solved = solve(gate, np.random.default_rng(0), *start_and_goal(gate))
    assert solved.gates == {"red": "rooms"} and solved.keys["red"] in (0, 1) and solved.walk[-1] == 3
    shortcut = LevelGraph(nodes, [Edge("a", "b"), Edge("b", "c"), Edge("c", "d"), Edge("d", "a", lock="red")])
    assert solve(shortcut, np.random.default_rng(0), *start_and_goal(shortcut)).gates == {"red": "shortcut"}
    # A lock whose doors no one reaches before its key: refused.
    hidden = LevelGraph(nodes, [Edge("a", "b"), Edge("b", "c", lock="red", key="d"), Edge("c", "d")])
    with pytest.raises(UnsolvableLevel, match="cannot be reached from 'a' without it"):
        solve(hidden, np.random.default_rng(0), *start_and_goal(hidden))


def test_a_one_way_door_that_strands_the_player_is_refused() -> None:
    graph = LevelGraph(
        [Node("a", "start"), Node("b"), Node("pit"), Node("d", "boss")],
        [Edge("a", "b"), Edge("b", "pit", one_way=True), Edge("b", "d")],
    )
    with pytest.raises(UnsolvableLevel, match="'pit' can no longer reach the goal"):
        solve(graph, np.random.default_rng(0), *start_and_goal(graph))


def test_a_key_behind_its_own_lock_is_refused() -> None:
    graph = LevelGraph([Node("a", "start"), Node("b"), Node("c", "boss")], [Edge("a", "b", lock="red", key="b"), Edge("b", "c")])
    with pytest.raises(UnsolvableLevel, match="cannot be reached from 'a' without it"):
        solve(graph, np.random.default_rng(0), *start_and_goal(graph))


def proof_walk(level: Level) -> bool:
    """The exported map's own proof: from the spawn's room, picking up keys and opening doors of
    their locks (door objects), the exit's room is reached."""
    rooms = {o.properties["node"]: o for o in level.objects if o.type == "room"}
    number = {o.properties["room"]: name for name, o in rooms.items()}
    layer = level.layers["room"]

    def room_at(o: object) -> str:
        return number[int(layer[int(o.y), int(o.x)])]  # type: ignore[attr-defined]

    spawn = next(o for o in level.objects if o.type == "spawn")
    goal = room_at(next(o for o in level.objects if o.type == "exit"))
    keys = {o.properties["lock"]: room_at(o) for o in level.objects if o.type == "key"}
    doors = [(o.properties["from"], o.properties["to"], o.properties.get("lock", ""), bool(o.properties.get("one_way"))) for o in level.objects if o.type == "door"]
    held: set[str] = set()
    reached = {room_at(spawn)}
    changed = True
    while changed:
        changed = False
        held |= {lock for lock, room in keys.items() if room in reached}
        for a, b, lock, one_way in doors:
            if lock and lock not in held:
                continue
            for u, v in ((a, b),) if one_way else ((a, b), (b, a)):
                if u in reached and v not in reached:
                    reached.add(v)
                    changed = True
    return goal in reached


@settings(max_examples=16, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), rooms=st.integers(8, 49), loops=st.integers(0, 5), locks=st.integers(0, 3))
def test_generated_graphs_lay_out_valid_and_solvable(seed: int, rooms: int, loops: int, locks: int) -> None:
    # The sizes bench.graphs measures (10 to 49 rooms, 0 to 5 loops), each laid out in one
    # attempt within the default time limit.
    st_ = stage({"generate": {"rooms": max(rooms, least_rooms(loops, locks, 3)), "loops": loops, "locks": locks}})
    level = laid_out(st_, seed)
    assert layout_problems(level) == []
    assert proof_walk(level)
    assert level.properties["keys"] == len([o for o in level.objects if o.type == "key"])
    # Every lock gates something: without its key, the exit's room is not reached or a room is lost.
    assert level.properties["critical_path"] >= 2


def test_generated_graphs_have_the_shape_asked() -> None:
    for seed in range(30):
        rng = np.random.default_rng(seed)
        graph = generate(GraphShape(20, 3, 2, (("shop", 1), ("treasure", 1), ("secret", 1))), rng)
        assert graph.problems() == []
        assert len(graph.nodes) == 20 and graph.cycles() == 3
        roles = [n.role for n in graph.nodes]
        assert all(roles.count(r) == 1 for r in ("start", "boss", "shop", "treasure", "secret"))
        assert len([e for e in graph.edges if e.lock]) == 2
        solve(graph, rng, *start_and_goal(graph))


def test_a_graph_that_cannot_fit_fails_the_map_naming_what_did_not_fit() -> None:
    # Five rooms around a hub whose floor has one door spot.
    st_ = stage(
        {
            "nodes": [{"name": "hub", "templates": ["tiny"]}, *"abcde"],
            "edges": [["hub", x] for x in "abcde"],
            "templates": {
                "tiny": {"shape": [[0, 0], [0, 3], [3, 3], [3, 0]], "doors": [[[1, 0], [2, 0]]], "rotate": False},
                "room": {"shape": [[0, 0], [0, 5], [5, 5], [5, 0]]},
            },
            "time_limit": 0.5,
        }
    )
    with pytest.raises(Rejected, match=r"no layout found in 0.5 s: the room '.' did not fit beside hub.*try more or larger templates"):
        laid_out(st_, 0)


@pytest.mark.parametrize("socket", [False, True])
def test_a_connection_no_templates_can_make_fails_at_once_naming_the_rooms_and_doors(socket: bool) -> None:
    """Corridors whose doors are 2 wide between rooms whose doors are 1 wide (or a socket no
    template has) cannot be laid out: said at once, not after the whole time limit."""
    templates: dict[str, object] = {"room": {"shape": [[0, 0], [0, 8], [8, 8], [8, 0]]}}
    if socket:
        params: dict[str, object] = {"nodes": ["a", "b"], "edges": [{"from": "a", "to": "b", "socket": "water"}]}
    else:
        templates["hall"] = {"shape": [[0, 0], [0, 2], [4, 2], [4, 0]], "corridor": True, "door_length": 2}
        params = {"nodes": ["a", "b", "c"], "edges": [["a", "b"], ["b", "c"]], "corridors": True}
    st_ = stage({**params, "templates": templates, "time_limit": 600})
    what = r"of socket 'water' " if socket else ""
    rooms = r"a: 'room' \(doors length 1\); b: 'room'" if socket else r"a: 'room' \(doors length 1\); the corridor room a-b: 'hall' \(doors length 2\)"
    with pytest.raises(Rejected, match=rf"the rooms 'a' and '(b|a-b)' can never be joined: no door {what}.*\({rooms}.*one length and socket") as caught:
        laid_out(st_, 0)
    assert "try more" not in str(caught.value)  # no search can help: no search hints


def test_bad_graphs_and_templates_are_one_clear_message(tmp_path: Path) -> None:
    recipe = """
[pack]
name = "bad"
seed = 1
maps = 1

[stage.level]
use = "layout.graph"
nodes = ["a", "b"]
edges = [["a", "c"]]
"""
    write_recipe(tmp_path, "bad", recipe)
    proc = pcg("build", "recipes/bad.toml", cwd=tmp_path, check=False)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "stage.level.nodes" in proc.stderr and "'c'" in proc.stderr
    write_recipe(tmp_path, "bad", recipe.replace('edges = [["a", "c"]]', 'edges = [["a", "b"]]\ntemplates = { x = { shape = [[0,0],[1,2],[3,3],[3,0]] } }'))
    proc = pcg("build", "recipes/bad.toml", cwd=tmp_path, check=False)
    assert proc.returncode != 0 and "stage.level.templates.x" in proc.stderr and "slanted" in proc.stderr
    write_recipe(tmp_path, "bad", recipe.replace('edges = [["a", "c"]]', "").replace('nodes = ["a", "b"]', 'graph = "missing.yml"'))
    proc = pcg("build", "recipes/bad.toml", cwd=tmp_path, check=False)
    assert proc.returncode != 0 and "stage.level.graph" in proc.stderr and "missing.yml" in proc.stderr


ROOM_TMX = """<?xml version="1.0" encoding="UTF-8"?>
<map version="1.10" orientation="orthogonal" renderorder="right-down" width="7" height="6" tilewidth="16" tileheight="16" infinite="0" nextobjectid="3">
 <tileset firstgid="1" name="room" tilewidth="16" tileheight="16" tilecount="4" columns="4">
  <tile id="0"><properties><property name="symbol" value="wall"/></properties></tile>
  <tile id="1"><properties><property name="symbol" value="floor"/></properties></tile>
  <tile id="2"><properties><property name="symbol" value="door"/></properties></tile>
  <tile id="3"><properties><property name="symbol" value="altar"/></properties></tile>
 </tileset>
 <layer id="1" name="tiles" width="7" height="6">
  <data encoding="csv">
1,1,1,3,1,1,1,
1,2,2,2,2,2,1,
3,2,2,4,2,2,3,
1,2,2,2,2,2,1,
1,2,2,2,2,2,1,
1,1,1,1,1,1,1
</data>
 </layer>
 <objectgroup id="2" name="doors">
  <object id="1" type="door" x="48" y="80" width="16" height="16"><properties><property name="socket" value="big"/></properties></object>
  <object id="2" type="torch" x="16" y="16"/>
 </objectgroup>
</map>
"""


def test_rooms_drawn_in_tiled_arrive_as_drawn_with_their_doors(tmp_path: Path) -> None:
    (tmp_path / "rooms").mkdir()
    (tmp_path / "rooms" / "shrine.tmx").write_text(ROOM_TMX)
    st_ = stage(
        {
            "nodes": [{"name": "shrine", "templates": ["shrine"]}, "a", "b", "c"],
            "edges": [["shrine", "a"], ["shrine", "b"], ["a", "c"], ["b", "c"]],
            "templates": {"shrine": {"file": "rooms/shrine.tmx"}, "room": {"shape": [[0, 0], [0, 6], [6, 6], [6, 0]]}},
        },
        tmp_path,
    )
    shrine = st_._pools["shrine"][0]
    # Door tiles on the top and at both sides; the door object's socket keeps it from plain doors.
    assert sorted((d.side, d.length, d.socket) for d in shrine.doors) == [(0, 1, ""), (1, 1, ""), (2, 1, "big"), (3, 1, "")]
    assert "rooms/shrine.tmx" in st_.files_read()
    level = laid_out(st_, 3)
    assert layout_problems(level, edges_of(st_)) == []
    names = [s.name for s in level.alphabet]
    assert "altar" in names
    room = next(o for o in level.objects if o.type == "room" and o.properties["node"] == "shrine")
    assert room.properties["room_template"] == "shrine"
    # The altar where it was drawn, the torch object moved with the room.
    x0, y0 = int(room.x) - 1, int(room.y) - 1
    assert names[level.tiles[y0 + 2, x0 + 3]] == "altar"
    assert any(o.type == "torch" and (o.x, o.y) == (x0 + 1, y0 + 1) for o in level.objects)


GUNGEON = """
[pack]
name = "floor"
seed = 7
maps = 4

[stage.level]
use = "layout.graph"
nodes = [
  { name = "entrance", role = "start" },
  "hall", { name = "shop", role = "shop" }, "armory", { name = "treasure", role = "treasure" },
  "gallery", { name = "boss", role = "boss" },
]
edges = [
  ["entrance", "hall"], ["hall", "shop"], ["hall", "armory"], ["armory", "treasure"],
  ["armory", "gallery"], { from = "gallery", to = "hall", lock = "shortcut", one_way = true },
  { from = "gallery", to = "boss", lock = "boss" },
]

[stage.tmx]
use = "export.tmx"
input = "level"

[stage.ldtk]
use = "export.ldtk"
input = "level"
"""


def test_a_level_pack_builds_through_the_cli_reads_back_in_pytmx_and_is_deterministic(tmp_path: Path) -> None:
    import pytmx

    write_recipe(tmp_path, "floor", GUNGEON)
    pcg("build", "recipes/floor.toml", "-j", "2", cwd=tmp_path)
    first = tree_digests(tmp_path / "exports")
    shutil.rmtree(tmp_path / "exports")
    shutil.rmtree(tmp_path / ".pcg-cache", ignore_errors=True)
    pcg("build", "recipes/floor.toml", "-j", "1", cwd=tmp_path)
    assert tree_digests(tmp_path / "exports") == first
    for path in sorted((tmp_path / "exports" / "floor").glob("map_*.tmx")):
        tmx = pytmx.TiledMap(str(path))
        objects = list(tmx.objects)
        rooms = {o.properties["node"] for o in objects if o.type == "room"}
        assert rooms == {"entrance", "hall", "shop", "armory", "treasure", "gallery", "boss"}
        doors = [o for o in objects if o.type == "door"]
        assert len(doors) == 7
        locked = {o.properties["lock"]: o.properties["gates"] for o in doors if "lock" in o.properties}
        assert locked == {"shortcut": "shortcut", "boss": "rooms"}
        keys = [o for o in objects if o.type == "key"]
        assert {k.properties["lock"] for k in keys} == {"shortcut", "boss"}
        assert int(tmx.properties["rooms"]) == 7 and int(tmx.properties["keys"]) == 2
    # LDtk: rooms, doors and keys as entities of each level (external level files).
    levels = sorted((tmp_path / "exports" / "floor" / "ldtk" / "world").glob("map_*.ldtkl"))
    assert len(levels) == 4
    for path in levels:
        level = json.loads(path.read_text())
        entities = [e["__identifier"] for layer in level["layerInstances"] for e in layer.get("entityInstances", [])]
        assert entities.count("door") == 7 and entities.count("room") == 7 and entities.count("key") == 2


DOWNSTREAM = """
[pack]
name = "torchlit"
seed = 7
maps = 2

[stage.level]
use = "layout.graph"
nodes = [{ name = "in", role = "start" }, "a", "b", "c", { name = "out", role = "boss" }]
edges = [["in", "a"], ["a", "b"], ["b", "c"], ["c", "a"], { from = "c", to = "out", lock = "gold" }]

# Torches (T) on walls above a floor, as a rewrite rule decorates any map.
[stage.torches]
use = "rewrite"
input = "level"
values = "BWDT"
program = { one = "BBB/WWW=BTB/WWW", steps = 6 }

[stage.dist]
use = "regions.distance"
input = "torches"
from_object = "spawn"

[stage.tmx]
use = "export.tmx"
input = "dist"

[stage.lua]
use = "export.lua"
input = "dist"
preview = false
"""


def test_a_level_flows_through_rewrite_regions_and_the_lua_export(tmp_path: Path) -> None:
    """Downstream stages see an ordinary Level: a rewrite rule decorates it, the distance from the
    spawn reaches every room through the doors, and the Lua export carries its rooms and doors."""
    import xml.etree.ElementTree as ET

    write_recipe(tmp_path, "torchlit", DOWNSTREAM)
    pcg("build", "recipes/torchlit.toml", cwd=tmp_path)
    pack = tmp_path / "exports" / "torchlit"
    for k in range(2):
        root = ET.parse(pack / f"map_{k:03d}.tmx").getroot()
        w = int(root.get("width", 0))
        layers = {layer.get("name"): layer for layer in root.iter("layer")}
        tiles = np.array([int(v) for v in (layers["tiles"].findtext("data") or "").replace("\n", "").split(",")]).reshape(-1, w)
        # A data layer's exact numbers: its `values` property, little-endian int32 in base64.
        rooms, distance = (
            np.frombuffer(base64.b64decode(layers[name].find("properties/property[@name='values']").get("value", "")), "<i4").reshape(-1, w)  # type: ignore[union-attr]
            for name in ("room", "distance")
        )
        assert 1 <= int((tiles == 4).sum()) <= 6  # torches: gid 4 is T, the tileset's fourth symbol
        assert not ((tiles == 4) & (rooms > 0)).any()  # on walls, never in a room
        walkable = (tiles == 2) | (tiles == 3)  # floor and doors
        assert set(np.unique(rooms[tiles == 2]).tolist()) == {1, 2, 3, 4, 5}
        assert (distance[walkable] >= 0).all() and (distance[tiles == 1] < 0).all()  # every room reached through its doors
        if shutil.which("lua5.4"):
            proc = subprocess.run(["lua5.4", str(Path(__file__).parent / "data" / "lua_dump.lua"), str(pack / f"map_{k:03d}.lua")], capture_output=True, text=True, timeout=60)
            assert proc.returncode == 0, proc.stderr
            leaves = dict(line.split("\t", 1) for line in proc.stdout.splitlines())
            types = [v for key, v in leaves.items() if key.endswith(".type") and ".objects[" in key]
            assert types.count('"room"') == 5 and types.count('"door"') == 5 and types.count('"key"') == 1
            assert '"gold"' in {v for key, v in leaves.items() if key.endswith(".properties.lock")}


def test_a_room_drawn_in_tiled_keeps_its_art_layers_flips_and_tile_objects_in_the_export(tmp_path: Path) -> None:
    from tests import drawn_maps

    drawn_maps.write(tmp_path)
    write_recipe(
        tmp_path,
        "shrine",
        """
[pack]
name = "shrine"
seed = 3
maps = 1

[stage.level]
use = "layout.graph"
nodes = [{ name = "shrine", templates = ["shrine"] }, { name = "hall", role = "start" }]
edges = [["hall", "shrine"]]
templates = { shrine = { file = "../maps/drawn.tmx" }, room = { shape = [[0,0],[0,6],[6,6],[6,0]] } }

[stage.tmx]
use = "export.tmx"
input = "level"
""",
    )
    pcg("build", "recipes/shrine.toml", cwd=tmp_path)
    import xml.etree.ElementTree as ET

    root = ET.parse(tmp_path / "exports" / "shrine" / "map_000.tmx").getroot()
    layers = {layer.get("name"): layer for layer in root.iter("layer")}
    assert {"ground", "decor"} <= set(layers)
    assert any("drawn" in (ts.get("source") or "") for ts in root.iter("tileset"))
    room = next(o for o in root.iter("object") if o.get("type") == "room" and any(p.get("value") == "shrine" for p in o.iter("property")))
    # The template's top-left: one tile up and left of its floor.
    x0, y0 = int(float(room.get("x"))) // 16 - 1, int(float(room.get("y"))) // 16 - 1
    width = int(root.get("width"))
    decor = [int(v) for v in layers["decor"].find("data").text.replace("\n", "").split(",")]
    firstgid = min(int(ts.get("firstgid")) for ts in root.iter("tileset") if "dungeon_art" in (ts.get("source") or ""))
    # Tile 5 of the art flipped left-right at (2, 2), upside down at (3, 2), as drawn.
    assert decor[(y0 + 2) * width + x0 + 2] == (firstgid + 4) | drawn_maps.H_
    assert decor[(y0 + 2) * width + x0 + 3] == (firstgid + 4) | drawn_maps.V_
    # The tile object (the chest) came with the room, flip and all.
    chest = [o for o in root.iter("object") if o.get("gid") and int(o.get("gid")) & drawn_maps.H_]
    assert len(chest) == 1


def test_a_graph_file_in_toml(tmp_path: Path) -> None:
    (tmp_path / "level.toml").write_text(
        """
nodes = [{ name = "start", role = "start" }, "a", "b", { name = "end", role = "boss", properties = { music = "boss.ogg" } }]
edges = [["start", "a"], ["a", "b"], ["b", "start"], { from = "b", to = "end", lock = "red" }]
"""
    )
    st_ = stage({"graph": "level.toml"}, tmp_path)
    assert "level.toml" in st_.files_read()
    level = laid_out(st_, 0)
    assert layout_problems(level, edges_of(st_)) == []
    assert level.properties["cycles"] == 1 and level.properties["keys"] == 1
    boss = next(o for o in level.objects if o.type == "room" and o.properties["node"] == "end")
    assert boss.properties["music"] == "boss.ogg"
    (tmp_path / "level.toml").write_text('nodes = ["a"]\nedges = [{ from = "a", too = "b" }]\n')
    with pytest.raises(Exception, match=r"level.toml: edges.0.to: Field required"):
        stage({"graph": "level.toml"}, tmp_path)


def test_items_in_rooms_of_a_role(tmp_path: Path) -> None:
    from pipeline.stages.place.items import Items

    st_ = stage({"generate": {"rooms": 12, "loops": 1, "locks": 0, "roles": {"treasure": 2}}})
    level = laid_out(st_, 5)
    chests = Items.model_validate({"type": "chest", "count": 6, "spacing": 1, "rooms": ["treasure"]}).run([level], np.random.default_rng(1))
    treasure = {o.properties["room"] for o in level.objects if o.type == "room" and o.properties.get("role") == "treasure"}
    placed = [o for o in chests.objects if o.type == "chest"]
    assert placed and len(treasure) == 2
    assert all(int(level.layers["room"][int(o.y), int(o.x)]) in treasure for o in placed)


@pytest.mark.parametrize("corridors", [False, True])
def test_repeat_not_beside_keeps_joined_rooms_of_different_templates(corridors: bool) -> None:
    """Edgar's users ask for it: with `repeat = "not_beside"` no two rooms joined by a door, or
    by a corridor room between them, are of one template (turns of a template are that template)."""
    params = {
        "generate": {"rooms": 16, "loops": 2, "locks": 1},
        "templates": {
            "small": {"shape": [[0, 0], [0, 6], [6, 6], [6, 0]]},
            "wide": {"shape": [[0, 0], [0, 6], [10, 6], [10, 0]]},
            "hall": {"shape": [[0, 0], [0, 8], [12, 8], [12, 0]]},
            "ell": {"shape": [[0, 0], [0, 10], [5, 10], [5, 5], [10, 5], [10, 0]]},
            "hallway": {"shape": [[0, 0], [0, 2], [4, 2], [4, 0]], "corridor": True},
        },
        "corridors": corridors,
        "repeat": "not_beside",
        "time_limit": 30,
    }
    for seed in range(3):
        level = laid_out(stage(params), seed)
        assert layout_problems(level) == []
        rooms = {o.properties["node"]: o.properties for o in level.objects if o.type == "room"}
        doors = [(o.properties["from"], o.properties["to"]) for o in level.objects if o.type == "door"]
        pairs = [(a, b) for a, b in doors if not rooms[a].get("corridor") and not rooms[b].get("corridor")]
        # Rooms joined through a corridor room: the ends of its two doors.
        ends: dict[str, list[str]] = {}
        for a, b in doors:
            for corridor, room in ((a, b), (b, a)):
                if rooms[corridor].get("corridor"):
                    ends.setdefault(corridor, []).append(room)
        assert all(len(e) == 2 for e in ends.values())
        pairs += [(e[0], e[1]) for e in ends.values()]
        assert bool(ends) == corridors
        assert pairs, "the graph has joined rooms to compare"
        for a, b in pairs:
            assert rooms[a]["room_template"] != rooms[b]["room_template"], (seed, a, b)
    # Without it, one template everywhere is allowed (and the only choice).
    level = laid_out(stage({"generate": {"rooms": 12, "loops": 1}, "templates": {"only": {"shape": [[0, 0], [0, 6], [8, 6], [8, 0]]}}}), 0)
    assert len({o.properties["room_template"] for o in level.objects if o.type == "room"}) == 1
