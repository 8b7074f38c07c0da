"""place.stairs and the Tiled world: a pack as the floors of one dungeon, stairs aligned, read back
from the files with pytmx and drawn whole by the real tmxrasterizer."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from conftest import TMXRASTERIZER, pcg, tiled_env, write_recipe
from pipeline.api import generate
from pipeline.errors import PipelineError
from pipeline.stages.regions.label import label_regions

FLOORS = 10

RECIPE = f"""
[pack]
name = "floors"
seed = 5
maps = {FLOORS}

[stage.dungeon]
use = "dungeon.bsp"
size = [40, 30]

[stage.stairs]
use = "place.stairs"
input = "dungeon"

[stage.tmx]
use = "export.tmx"
input = "stairs"
world = true

[stage.ldtk]
use = "export.ldtk"
input = "stairs"
preview = false
"""


@pytest.fixture(scope="module")
def floors(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("floors")
    write_recipe(root, "floors", RECIPE)
    pcg("build", "recipes/floors.toml", "-j", "2", cwd=root)
    return root / "exports" / "floors"


def read(path: Path) -> tuple[np.ndarray, dict[str, object], dict[str, float]]:
    """Walkable tiles, the stairs objects by name, and the map's properties, as pytmx reads them."""
    import pytmx

    tmx = pytmx.TiledMap(str(path))
    walk = np.zeros((tmx.height, tmx.width), dtype=bool)
    for x, y, gid in tmx.get_layer_by_name("tiles").iter_data():
        walk[y, x] = (tmx.get_tile_properties_by_gid(gid) or {}).get("name") != "wall"
    stairs = {o.name: o for o in tmx.objects if o.type == "stairs"}
    return walk, stairs, dict(tmx.properties)


def test_each_floors_stairs_down_meet_the_next_floors_stairs_up_on_one_walkable_tile(floors: Path) -> None:
    maps = [read(floors / f"map_{k:03d}.tmx") for k in range(FLOORS)]
    for k, (walk, stairs, props) in enumerate(maps):
        assert int(props["floor"]) == k and int(props["floors"]) == FLOORS
        assert ("stairs_up" in stairs) == (k > 0) and ("stairs_down" in stairs) == (k < FLOORS - 1)
        labels, _ = label_regions(walk)
        for o in stairs.values():
            x, y = int(o.x // 16), int(o.y // 16)
            assert labels[y, x] == 1, f"map {k}: {o.name} is not in the map's walkable whole"
        if k < FLOORS - 1:
            down, up = stairs["stairs_down"], maps[k + 1][1]["stairs_up"]
            assert (down.x, down.y) == (up.x, up.y)
            assert down.properties["to_map"] == f"map_{k + 1:03d}" and down.properties["to_object"] == "stairs_up"
            assert up.properties["to_map"] == f"map_{k:03d}" and up.properties["to_object"] == "stairs_down"
    # The stairs between two floors differ from the next pair's: not one tile for the whole pack.
    assert len({(m[1]["stairs_down"].x, m[1]["stairs_down"].y) for m in maps[:-1]}) > FLOORS // 2


def test_the_world_file_lists_every_floor_side_by_side(floors: Path) -> None:
    world = json.loads((floors / "maps.world").read_text())
    assert world["type"] == "world" and [m["fileName"] for m in world["maps"]] == [f"map_{k:03d}.tmx" for k in range(FLOORS)]
    xs = [m["x"] for m in world["maps"]]
    assert xs == sorted(xs) and all(b - a == 40 * 16 + 2 * 16 for a, b in zip(xs, xs[1:]))
    assert all((m["width"], m["height"], m["y"]) == (40 * 16, 30 * 16, 0) for m in world["maps"])


@pytest.mark.skipif(TMXRASTERIZER is None, reason="tmxrasterizer (Debian package tiled) is not installed")
def test_tiled_draws_the_world_as_one_picture_with_every_floor(floors: Path, tmp_path: Path) -> None:
    # Without the object layer: Tiled draws its markers antialiased, a shade apart at another offset.
    out = tmp_path / "world.png"
    done = subprocess.run(["tmxrasterizer", "--hide-layer", "objects", str(floors / "maps.world"), str(out)], env=tiled_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    world = np.asarray(Image.open(out).convert("RGBA"))
    assert world.shape[:2] == (30 * 16, FLOORS * 40 * 16 + (FLOORS - 1) * 2 * 16)
    # Each floor is drawn at its place: the pixels of map k's own picture, as tmxrasterizer draws it alone.
    for k in (0, FLOORS - 1):
        alone = tmp_path / f"map_{k}.png"
        subprocess.run(["tmxrasterizer", "--hide-layer", "objects", str(floors / f"map_{k:03d}.tmx"), str(alone)], env=tiled_env(), check=True, capture_output=True, timeout=120)
        x = k * (40 + 2) * 16
        assert (world[:, x : x + 40 * 16] == np.asarray(Image.open(alone).convert("RGBA"))).all()


def test_the_ldtk_world_stacks_the_floors_on_their_depths(floors: Path) -> None:
    ldtkpy = pytest.importorskip("ldtkpy.api", reason="ldtkpy is a test dependency (pip install -e '.[test]')")
    project = json.loads((floors / "ldtk" / "world.ldtk").read_text())
    ldtkpy.ldtk_json_from_dict(project)
    assert project["worldLayout"] == "Free"
    for k in range(FLOORS):
        level = json.loads((floors / "ldtk" / "world" / f"map_{k:03d}.ldtkl").read_text())
        assert (level["worldX"], level["worldY"], level["worldDepth"]) == (0, 0, k)
        stairs = {e["iid"]: {f["__identifier"]: f["__value"] for f in e["fieldInstances"]} for layer in level["layerInstances"] for e in layer["entityInstances"] if e["__identifier"] == "stairs"}
        assert sorted(f["to_map"] for f in stairs.values()) == sorted(f"map_{j:03d}" for j in (k - 1, k + 1) if 0 <= j < FLOORS)


def test_each_ldtk_stairs_refers_to_the_stairs_it_leads_to_in_the_other_level(floors: Path) -> None:
    """The stairs' `to` is an entity reference across levels, to the very entity of the other
    floor's level file: its iid, its layer's, its level's and the world's."""
    levels = [json.loads((floors / "ldtk" / "world" / f"map_{k:03d}.ldtkl").read_text()) for k in range(FLOORS)]
    world = json.loads((floors / "ldtk" / "world.ldtk").read_text())["dummyWorldIid"]
    where = {  # entity iid -> (its name, level iid, layer iid)
        e["iid"]: (next(f["__value"] for f in e["fieldInstances"] if f["__identifier"] == "name"), level["iid"], layer["iid"])
        for level in levels for layer in level["layerInstances"] for e in layer["entityInstances"]
    }
    links = 0
    for k, level in enumerate(levels):
        for layer in level["layerInstances"]:
            for e in layer["entityInstances"]:
                if e["__identifier"] != "stairs":
                    continue
                fields = {f["__identifier"]: f for f in e["fieldInstances"]}
                to = fields["to"]
                assert to["__type"] == "EntityRef"
                target = to["__value"]
                name, level_iid, layer_iid = where[target["entityIid"]]
                other = levels[int(fields["to_map"]["__value"][-3:])]
                assert name == fields["to_object"]["__value"] and (level_iid, layer_iid) == (other["iid"], target["layerIid"]) and target["levelIid"] == other["iid"]
                assert target["worldIid"] == world
                assert abs(int(fields["to_map"]["__value"][-3:]) - k) == 1
                links += 1
    assert links == 2 * (FLOORS - 1)
    definition = next(
        f for d in json.loads((floors / "ldtk" / "world.ldtk").read_text())["defs"]["entities"] if d["identifier"] == "stairs"
        for f in d["fieldDefs"] if f["identifier"] == "to"
    )
    assert definition["type"] == "F_EntityRef" and definition["allowOutOfLevelRef"]


def test_stairs_run_only_in_a_build_and_need_a_symbol_to_dig_with(tmp_path: Path) -> None:
    maze = generate("maze.backtracker", cells=[5, 5])
    with pytest.raises(PipelineError, match="runs in a build"):
        generate("place.stairs", inputs=[maze])
    write_recipe(tmp_path, "bad", RECIPE.replace('input = "dungeon"\n', 'input = "dungeon"\nfloor = "lava"\n', 1))
    done = pcg("build", "recipes/bad.toml", cwd=tmp_path, check=False)
    out = done.stdout + done.stderr
    assert done.returncode != 0 and "Traceback" not in out and "no symbol 'lava' to dig with" in out


def test_a_floors_two_stairs_never_share_a_tile_even_on_a_small_map() -> None:
    from pipeline.registry import Floor
    from pipeline.stages.place.stairs import Stairs

    small = generate("dungeon.cellular_caves", seed=1, size=[6, 5])
    for seed in range(200):
        out = Stairs().run_on_floor([small], np.random.default_rng(0), Floor(1, 3, seed, "map_000", "map_002"))
        up, down = (next(o for o in out.objects if o.name == f"stairs_{d}") for d in ("up", "down"))
        assert (up.x, up.y) != (down.x, down.y)


def test_stairs_refuse_a_map_already_locked_a_corridor_could_lead_round_its_doors(tmp_path: Path) -> None:
    locked = '[stage.placed]\nuse = "place.spawn_exit"\ninput = "dungeon"\n\n[stage.locked]\nuse = "place.lock_key"\ninput = "placed"\n\n'
    text = RECIPE.replace('[stage.stairs]\nuse = "place.stairs"\ninput = "dungeon"', locked + '[stage.stairs]\nuse = "place.stairs"\ninput = "locked"')
    assert 'input = "locked"' in text
    write_recipe(tmp_path, "late", text)
    done = pcg("build", "recipes/late.toml", cwd=tmp_path, check=False)
    out = done.stdout + done.stderr
    assert done.returncode != 0 and "Traceback" not in out and "put place.stairs before place.lock_key" in out


def test_two_exporters_cannot_both_write_the_world_file(tmp_path: Path) -> None:
    text = RECIPE.replace("[stage.ldtk]", '[stage.tmj]\nuse = "export.tmj"\ninput = "stairs"\nworld = true\npreview = false\n\n[stage.ldtk]')
    write_recipe(tmp_path, "twice", text)
    done = pcg("build", "recipes/twice.toml", cwd=tmp_path, check=False)
    out = done.stdout + done.stderr
    assert done.returncode != 0 and "writes maps.world, which stage.tmx also writes" in out
