"""`place.path`: the shortest walkable path between two objects as a polyline object, written
to TMX and Tiled JSON, read by pytmx, pytiled-parser, the real Tiled and load.tmx."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import deque
from pathlib import Path

import numpy as np
import pytest

from conftest import RECIPES, TILESETS, needs_tiled, pcg, tiled_env
from pipeline.errors import PipelineError
from pipeline.level import Level, MapObject
from pipeline.registry import ExportContext, get
from pipeline.stages.dungeon.cellular_caves import CellularCaves
from pipeline.stages.export.tmj import ExportTmj
from pipeline.stages.export.tmx import ExportTmx
from pipeline.stages.load.tmx import LoadTmx
from pipeline.stages.maze.backtracker import Backtracker
from pipeline.stages.place.path import PlacePath
from pipeline.stages.place.spawn_exit import SpawnExit

CTX = ExportContext(stem="map_000")


def bfs_distance(walk: np.ndarray, start: tuple[int, int], goal: tuple[int, int]) -> int:
    """Plain Python breadth-first search: independent of the compiled kernels under test."""
    seen = {start: 0}
    queue = deque([start])
    while queue:
        y, x = queue.popleft()
        if (y, x) == goal:
            return seen[(y, x)]
        for ny, nx in ((y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)):
            if 0 <= ny < walk.shape[0] and 0 <= nx < walk.shape[1] and walk[ny, nx] and (ny, nx) not in seen:
                seen[(ny, nx)] = seen[(y, x)] + 1
                queue.append((ny, nx))
    return -1


def expand(obj: MapObject) -> list[tuple[int, int]]:
    """Every (y, x) tile of the path, from the polyline's corner points."""
    x0, y0 = int(obj.x), int(obj.y)
    corners = [(y0 + int(py), x0 + int(px)) for px, py in obj.points]
    tiles = [corners[0]]
    for (ay, ax), (by, bx) in zip(corners, corners[1:]):
        assert ay == by or ax == bx, "corner points are joined by straight runs"
        n = abs(by - ay) + abs(bx - ax)
        for k in range(1, n + 1):
            tiles.append((ay + (by - ay) * k // n, ax + (bx - ax) * k // n))
    return tiles


def caves(seed: int) -> Level:
    cave = CellularCaves(size=(60, 40)).run([], np.random.default_rng(seed))
    return SpawnExit().run([cave], np.random.default_rng(seed))


def only(level: Level, kind: str) -> MapObject:
    (obj,) = [o for o in level.objects if o.type == kind]
    return obj


@pytest.mark.parametrize("seed", range(6))
def test_the_path_is_a_shortest_walkable_path_through_its_corner_points(seed: int) -> None:
    level = caves(seed)
    out = PlacePath().run([level], np.random.default_rng(0))
    path = only(out, "path")
    spawn, exit_ = only(out, "spawn"), only(out, "exit")
    walk = out.tiles != out.index_of("wall")
    start, goal = (int(spawn.y), int(spawn.x)), (int(exit_.y), int(exit_.x))
    length = bfs_distance(walk, start, goal)
    assert path.properties == {"length": length, "from": "spawn", "to": "exit"}
    assert out.properties["path_length"] == length == level.properties["path_length"]
    tiles = expand(path)
    assert tiles[0] == start and tiles[-1] == goal and len(tiles) == length + 1
    assert all(walk[y, x] for y, x in tiles)
    assert all(abs(ay - by) + abs(ax - bx) == 1 for (ay, ax), (by, bx) in zip(tiles, tiles[1:]))
    # Corner points only: no point sits in the middle of a straight run.
    pts = np.array(path.points)
    if len(pts) > 2:
        moves = np.diff(pts, axis=0)
        assert (np.abs(np.sign(moves[1:]) - np.sign(moves[:-1])).sum(axis=1) > 0).all()
    # Pure: the same map gives the same path.
    assert PlacePath().run([level], np.random.default_rng(9)).objects == out.objects


def test_a_maze_uses_its_recorded_entrance_and_exit() -> None:
    maze = Backtracker(cells=(12, 9)).run([], np.random.default_rng(5))
    out = PlacePath().run([maze], np.random.default_rng(0))
    path = only(out, "path")
    ex, ey = (int(v) for v in str(maze.properties["entrance"]).split(","))
    xx, xy = (int(v) for v in str(maze.properties["exit"]).split(","))
    tiles = expand(path)
    assert tiles[0] == (ey, ex) and tiles[-1] == (xy, xx)
    assert path.properties["length"] == bfs_distance(maze.tiles != 0, tiles[0], tiles[-1]) == len(tiles) - 1


def test_other_types_names_and_errors() -> None:
    level = caves(1)
    spawn, exit_ = only(level, "spawn"), only(level, "exit")
    # A key on the walkable tile next along from the spawn's row: a path of another pair, renamed.
    walk = level.tiles != level.index_of("wall")
    ys, xs = np.nonzero(walk)
    key = MapObject("key_1", "key", xs[len(xs) // 2] + 0.5, ys[len(ys) // 2] + 0.5)
    with_key = Level(level.tiles, level.alphabet, objects=[*level.objects, key], properties=dict(level.properties))
    out = PlacePath.model_validate({"from": "key", "to": "exit", "name": "route"}).run([with_key], np.random.default_rng(0))
    route = only(out, "route")
    expected = bfs_distance(walk, (int(key.y), int(key.x)), (int(exit_.y), int(exit_.x)))
    if expected >= 0:
        assert route.properties["length"] == out.properties["route_length"] == expected
        assert out.properties["path_length"] == level.properties["path_length"]  # spawn_exit's, untouched
    with pytest.raises(PipelineError, match="no object of type 'chest'"):
        PlacePath.model_validate({"to": "chest"}).run([level], np.random.default_rng(0))
    # Walls everywhere: a clear error naming both ends, not a rejection.
    blocked = Level(np.zeros_like(level.tiles), level.alphabet, objects=list(level.objects))
    with pytest.raises(PipelineError, match=r"no walkable path from spawn \(tile \d+, \d+\) to exit"):
        PlacePath().run([blocked], np.random.default_rng(0))
    assert not get("place.path").may_reject
    assert (int(spawn.x), int(spawn.y)) != (int(exit_.x), int(exit_.y))


def test_pytmx_pytiled_parser_and_load_tmx_read_the_polyline(tmp_path: Path) -> None:
    import pytiled_parser
    import pytmx

    out = PlacePath().run([caves(2)], np.random.default_rng(0))
    path = only(out, "path")
    for cls, fmt in ((ExportTmx, "tmx"), (ExportTmj, "tmj")):
        for name, data in cls.model_validate({"tile_size": 8}).export(out, CTX).items():
            (tmp_path / fmt / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / fmt / name).write_bytes(data)
    pixels = [(path.x * 8 + px * 8, path.y * 8 + py * 8) for px, py in path.points]
    loaded = pytmx.TiledMap(str(tmp_path / "tmx" / "map_000.tmx"))
    (obj,) = [o for o in loaded.objects if o.name == "path"]
    assert [(p.x, p.y) for p in obj.points] == pixels
    assert obj.properties["length"] == path.properties["length"]
    parsed = pytiled_parser.parse_map(tmp_path / "tmj" / "map_000.tmj")
    group = next(layer for layer in parsed.layers if isinstance(layer, pytiled_parser.ObjectLayer))
    (line,) = [o for o in group.tiled_objects if o.name == "path"]
    assert isinstance(line, pytiled_parser.tiled_object.Polyline)
    assert [(line.coordinates.x + p.x, line.coordinates.y + p.y) for p in line.points] == pixels
    # load.tmx keeps the polyline as points, in tiles.
    for fmt in ("tmx", "tmj"):
        back = LoadTmx.model_validate({"file": f"{fmt}/map_000.{fmt}"}, context={"recipe_dir": tmp_path}).run([], np.random.default_rng(0))
        (again,) = [o for o in back.objects if o.name == "path"]
        assert (again.x, again.y, again.points) == (path.x, path.y, path.points)
        assert back.tiles.shape == out.tiles.shape


@needs_tiled
def test_real_tiled_keeps_the_polyline(tmp_path: Path) -> None:
    out = PlacePath().run([caves(3)], np.random.default_rng(0))
    path = only(out, "path")
    for name, data in ExportTmx.model_validate({"tile_size": 8}).export(out, CTX).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    proc = subprocess.run(
        ["tiled", "--export-map", "json", str(tmp_path / "map_000.tmx"), str(tmp_path / "again.json")],
        env=tiled_env(), capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "again.json").read_text())
    objects = next(layer for layer in doc["layers"] if layer["type"] == "objectgroup")["objects"]
    (line,) = [o for o in objects if o["name"] == "path"]
    assert [(p["x"], p["y"]) for p in line["polyline"]] == [(px * 8, py * 8) for px, py in path.points]
    assert (line["x"], line["y"]) == (path.x * 8, path.y * 8)


def test_pcg_stages_shows_from_and_the_caves_recipe_builds_a_path(tmp_path: Path) -> None:
    import pytmx

    shown = pcg("stages", "place.path", cwd=tmp_path).stdout
    assert 'from: str = "spawn"' in shown and 'to: str = "exit"' in shown
    shutil.copytree(RECIPES, tmp_path / "recipes", ignore=shutil.ignore_patterns("*.toml"))
    shutil.copy(RECIPES / "caves.toml", tmp_path / "recipes" / "caves.toml")
    shutil.copytree(TILESETS, tmp_path / "tilesets")
    pcg("build", "recipes/caves.toml", "-q", cwd=tmp_path)
    for index in range(4):
        loaded = pytmx.TiledMap(str(tmp_path / "exports" / "caves" / "cellular" / f"map_{index:03d}.tmx"))
        (path,) = [o for o in loaded.objects if o.type == "path"]
        assert path.properties["length"] == loaded.properties["path_length"] >= 1
        assert len(path.points) >= 2
