"""Tile variants (`[variants.NAME]` in a tileset of one's own art): a name's cells drawn now and
then with other tiles, by weight, the same in every exporter, preview and thumbnail of a map."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from conftest import TILESETS, needs_tiled, pcg, tiled_env, write_recipe
from pipeline.tiled.variants import pick

FLOOR, VARIANTS = 0, {5: 0.05, 6: 0.05, 7: 0.03}  # tilesets/stone.toml

RECIPE = """\
[pack]
name = "worn"
seed = 11
maps = 2

[stage.maze]
use = "maze.backtracker"
cells = [30, 20]

[stage.tmx]
use = "export.tmx"
input = "maze"
tileset = "../tilesets/stone.toml"

[stage.tmj]
use = "export.tmj"
input = "maze"
tileset = "../tilesets/stone.toml"
preview = false

[stage.lua]
use = "export.lua"
input = "maze"
tileset = "../tilesets/stone.toml"
preview = false

[stage.ldtk]
use = "export.ldtk"
input = "maze"
tileset = "../tilesets/stone.toml"
preview = false
"""


def test_weights_hold_and_only_the_cells_asked_for_are_drawn() -> None:
    # 250,000 cells: each share within 0.005 of its weight's (a standard error is about 0.0008).
    where = np.ones((500, 500), dtype=bool)
    chosen = pick(where, FLOOR, tuple(VARIANTS.items()), "floor", 0x5EED)
    total = 1 + sum(VARIANTS.values())
    shares = {tile: float(np.mean(chosen == tile)) for tile in (FLOOR, *VARIANTS)}
    for tile, weight in {FLOOR: 1.0, **VARIANTS}.items():
        assert abs(shares[tile] - weight / total) < 0.005, shares
    # Another map (key) draws another pattern, as independent as chance allows.
    other = pick(where, FLOOR, tuple(VARIANTS.items()), "floor", 0x5EED ^ 1)
    same = sum((w / total) ** 2 for w in (1.0, *VARIANTS.values()))
    assert abs(float(np.mean(chosen == other)) - same) < 0.01


@settings(max_examples=60, deadline=None)
@given(arrays(np.bool_, st.tuples(st.integers(1, 12), st.integers(1, 12))), st.integers(0, 2**64 - 1))
def test_a_cell_draws_one_of_its_tiles_whatever_else_the_map_holds(where: np.ndarray, key: int) -> None:
    weighted = ((5, 0.5), (9, 2.0))
    chosen = pick(where, 3, weighted, "floor", key)
    assert chosen.shape == (int(where.sum()),) and set(chosen.tolist()) <= {3, 5, 9}
    # A cell's tile is its own: the same whichever other cells are asked for with it.
    alone = [pick(np.pad(np.ones((1, 1), bool), ((y, where.shape[0] - y - 1), (x, where.shape[1] - x - 1))), 3, weighted, "floor", key)[0] for y, x in zip(*np.nonzero(where))]
    assert chosen.tolist() == alone


def _project(tmp_path: Path) -> Path:
    shutil.copytree(TILESETS, tmp_path / "tilesets")
    (tmp_path / "recipes").mkdir()
    write_recipe(tmp_path, "worn", RECIPE)
    pcg("build", "recipes", "-q", cwd=tmp_path)
    return tmp_path


def _tmx_tiles(path: Path) -> np.ndarray:
    root = ET.parse(path).getroot()
    data = root.find("layer/data")
    assert data is not None and data.text is not None
    return np.array([int(v) for v in data.text.replace("\n", "").split(",")]).reshape(int(root.get("height", 0)), -1)


def test_every_exporter_draws_the_same_variants_and_the_tileset_says_their_weights(tmp_path: Path) -> None:
    project = _project(tmp_path)
    pack = project / "exports" / "worn"
    tiles = [_tmx_tiles(pack / f"map_00{i}.tmx") for i in (0, 1)]
    floor_gids = {1 + FLOOR, *(1 + t for t in VARIANTS)}
    for gids in tiles:
        on_floor = np.isin(gids, list(floor_gids))
        assert on_floor.sum() > 1000 and all((gids == 1 + t).sum() > 0 for t in VARIANTS)
        assert not np.isin(gids[~on_floor], list(floor_gids)).any()
    # The two maps' floors are patterned differently, not with one stencil.
    both = np.isin(tiles[0], list(floor_gids)) & np.isin(tiles[1], list(floor_gids))
    assert (tiles[0][both] != tiles[1][both]).mean() > 0.1

    tmj = json.loads((pack / "map_000.tmj").read_text())
    assert np.array_equal(np.array(tmj["layers"][0]["data"]).reshape(tiles[0].shape), tiles[0])
    lua = (pack / "map_000.lua").read_text()
    lua_data = re.search(r'name = "tiles".*?data = \{(.*?)\}', lua, re.S)
    assert lua_data is not None and [int(v) for v in lua_data.group(1).split(",") if v.strip()] == tiles[0].ravel().tolist()
    level = json.loads((pack / "ldtk" / "world" / "map_000.ldtkl").read_text())
    layer = next(li for li in level["layerInstances"] if li["__type"] == "Tiles")
    width = tiles[0].shape[1]
    ldtk = {(t["px"][1] // 16, t["px"][0] // 16): t["t"] + 1 for t in layer["gridTiles"]}
    assert ldtk == {(y, x): int(g) for (y, x), g in np.ndenumerate(tiles[0]) if g} and width == tiles[0].shape[1]

    tsx = ET.parse(pack / "tilesets" / "stone.tsx").getroot()
    tile_nodes = {int(t.get("id", -1)): t for t in tsx.iter("tile")}
    for tile, weight in VARIANTS.items():
        node = tile_nodes[tile]
        assert float(node.get("probability", 0)) == weight
        props = {p.get("name"): p.get("value") for p in node.iter("property")}
        assert props["name"] == "floor"  # a game reads a cracked floor as floor
    assert tile_nodes[FLOOR].get("probability") is None
    tsj = {t["id"]: t for t in tmj["tilesets"][0]["tiles"]}  # embedded, as the tiled profile does in JSON
    assert {t: tsj[t]["probability"] for t in VARIANTS} == VARIANTS
    assert all(f"probability = {w:g}" in lua for w in VARIANTS.values())

    again = tmp_path / "again"
    shutil.copytree(project / "recipes", again / "recipes")
    shutil.copytree(project / "tilesets", again / "tilesets")
    pcg("build", "recipes", "-q", "-j", "1", cwd=again)
    assert (again / "exports" / "worn" / "map_001.tmx").read_bytes() == (pack / "map_001.tmx").read_bytes()


@needs_tiled
def test_tiled_reads_the_weights_for_its_random_brush(tmp_path: Path) -> None:
    import subprocess

    pack = _project(tmp_path) / "exports" / "worn"
    out = tmp_path / "stone.json"
    proc = subprocess.run(["tiled", "--export-tileset", "json", str(pack / "tilesets" / "stone.tsx"), str(out)], env=tiled_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    theirs = {t["id"]: t.get("probability") for t in json.loads(out.read_text())["tiles"]}
    assert {t: theirs[t] for t in VARIANTS} == VARIANTS and theirs[FLOOR] is None


def test_generated_art_draws_worn_variants_that_tile_with_the_plain_floor(tmp_path: Path) -> None:
    from pipeline.level import Symbol
    from pipeline.tiled.spec import TilesetSpec
    from pipeline.tiled.tilesheet import build_tileset

    alphabet = (Symbol("B", "wall", "#5b5566"), Symbol("W", "floor", "#a39584"))
    plain = TilesetSpec(name="g", style="bevel", autotile={"wall": {}})
    worn = TilesetSpec.model_validate({"name": "g", "style": "bevel", "autotile": {"wall": {}}, "variants": {"floor": {"count": 3, "weights": [0.1, 0.1, 0.05]}}})
    before, after = build_tileset(plain, alphabet), build_tileset(worn, alphabet)
    # The variants come after every other tile: those keep their ids (and pixels).
    drawn = 1 + max(before.tileset.tile_properties)
    ids = [tile for tile, _ in after.variants["floor"]]
    assert ids == [drawn, drawn + 1, drawn + 2]
    assert np.array_equal(after.atlas.rgba[: 1 + drawn], before.atlas.rgba[: 1 + drawn])
    floor = after.tileset.tile_id("floor")
    assert after.tileset.probability == dict(zip(ids, (0.1, 0.1, 0.05)))
    own = after.atlas.rgba[1 + floor]
    for tile in ids:
        changed = (after.atlas.rgba[1 + tile] != own).any(axis=-1)
        assert 2 <= changed.sum() <= 16 and not changed[0].any() and not changed[-1].any() and not changed[:, 0].any() and not changed[:, -1].any()
        assert after.tileset.tile_properties[tile]["name"] == "floor"
    assert len({after.atlas.rgba[1 + t].tobytes() for t in ids}) == 3  # three different wears
