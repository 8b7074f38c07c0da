"""place.items by difficulty: a band of the walking distance from an object, items thickening
toward the far end (`rising`), and secrets off the way from spawn to exit (`off_path`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pipeline.grid.bfs import distances, trace_back
from pipeline.level import Level, MapObject
from pipeline.stages.maze.block import MAZE_ALPHABET
from pipeline.stages.place.items import Items
from tests.conftest import pcg, write_recipe


def hall(width: int = 60, height: int = 9) -> Level:
    """An open hall, spawn at the left end, exit at the right, and a side passage of 8 tiles
    going down from the middle."""
    tiles = np.zeros((height + 10, width), dtype=np.uint8)
    tiles[:height, :] = 1
    tiles[height : height + 8, width // 2] = 1
    objects = [MapObject("spawn", "spawn", 0.5, height // 2 + 0.5), MapObject("exit", "exit", width - 0.5, height // 2 + 0.5)]
    return Level(tiles=tiles, alphabet=MAZE_ALPHABET, objects=objects)


def placed(level: Level, **params: object) -> list[MapObject]:
    out = Items.model_validate({"type": "enemy", "spacing": 0, **params}).run([level], np.random.default_rng(7))
    return [o for o in out.objects if o.type == "enemy"]


def walked(level: Level, obj: MapObject) -> np.ndarray:
    walk = level.tiles == 1
    return distances(walk, [int(obj.y) * walk.shape[1] + int(obj.x)]).reshape(walk.shape)


def test_a_band_keeps_items_to_that_part_of_the_way_from_the_object() -> None:
    level = hall()
    dist = walked(level, level.objects[0])
    enemies = placed(level, count=40, distance_from="spawn", band=[0.6, 1.0])
    assert len(enemies) == 40
    assert all(0.6 * dist.max() <= dist[int(o.y), int(o.x)] for o in enemies)
    # From the exit instead: the band [0, 0.2] is the exit's end of the hall.
    near_exit = placed(level, count=10, distance_from="exit", band=[0.0, 0.2])
    assert all(o.x > 40 for o in near_exit)


def test_rising_items_thicken_toward_the_far_end() -> None:
    level = hall()
    dist = walked(level, level.objects[0])
    halves = []
    for rising in (0.0, 3.0):
        enemies = placed(level, count=120, distance_from="spawn", **({"rising": rising} if rising else {}))
        far = sum(dist[int(o.y), int(o.x)] > dist.max() / 2 for o in enemies)
        halves.append(far / len(enemies))
    # Evenly: about the half of the tiles that are far (a little more: the side passage). With
    # rising = 3 a tile's weight is (d / farthest) ** 3, so the far half takes 15/16 of it.
    assert 0.35 < halves[0] < 0.7 and halves[1] > 0.85


def test_off_path_keeps_secrets_off_the_way_from_spawn_to_exit() -> None:
    level = hall(height=3)
    walk = level.tiles == 1
    w = walk.shape[1]
    spawn, goal = 1 * w + 0, 1 * w + w - 1
    way = trace_back(distances(walk, [spawn]), goal, *walk.shape)
    off = distances(walk, way.tolist()).reshape(walk.shape)
    secrets = placed(level, count=5, off_path=3)
    assert secrets and all(off[int(o.y), int(o.x)] >= 3 for o in secrets)
    assert all(int(o.x) == 30 and int(o.y) >= 4 for o in secrets)  # down the side passage, the only place that far off


def test_band_and_rising_need_distance_from(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="only with distance_from"):
        Items.model_validate({"band": [0.5, 1.0]})
    with pytest.raises(ValueError, match="0 <= low <= high <= 1"):
        Items.model_validate({"distance_from": "spawn", "band": [0.8, 0.2]})


def test_a_cave_whose_enemies_thicken_toward_the_exit_through_the_cli(tmp_path: Path) -> None:
    write_recipe(tmp_path, "cave", """
[pack]
name = "cave"
seed = 3
maps = 2

[stage.cave]
use = "dungeon.cellular_caves"
size = [60, 40]

[stage.placed]
use = "place.spawn_exit"
input = "cave"

[stage.enemies]
use = "place.items"
input = "placed"
type = "enemy"
count = 30
spacing = 2
distance_from = "spawn"
band = [0.2, 1.0]
rising = 2

[stage.tmx]
use = "export.tmx"
input = "enemies"
""")
    pcg("build", "recipes/cave.toml", cwd=tmp_path)
    import pytmx

    for path in sorted((tmp_path / "exports" / "cave").glob("map_*.tmx")):
        tmx = pytmx.TiledMap(str(path))
        objects = list(tmx.objects)
        enemies = [o for o in objects if o.type == "enemy"]
        spawn = next(o for o in objects if o.type == "spawn")
        assert len(enemies) == int(tmx.properties["items_enemy"]) > 10
        # Straight-line distance as a rough check: the enemies stay away from the spawn.
        assert min(np.hypot(o.x - spawn.x, o.y - spawn.y) for o in enemies) > 2 * tmx.tilewidth
