"""Data layers (region labels, distance fields) in exported TMX and Tiled JSON maps: a hidden,
locked tile layer picturing the numbers with the shared values tileset, the exact numbers in its
`values` property, read back by pytmx, pytiled-parser and the real Tiled."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import RECIPES, TILESETS, needs_tiled, pcg, tiled_env
from pipeline.errors import PipelineError
from pipeline.level import Level
from pipeline.recipe.load import load_recipe
from pipeline.registry import ExportContext
from pipeline.seeds import rng_for, stage_seed
from pipeline.stages.export.tmj import ExportTmj
from pipeline.stages.export.tmx import ExportTmx
from pipeline.stages.maze.backtracker import Backtracker
from pipeline.stages.regions.label import Label
from pipeline.tiled.values import decode_values

CTX = ExportContext(stem="map_000", provenance={"pack": "t", "map": 0})


def maze_with_layers() -> Level:
    """A maze with a region layer, a distance layer from the top-left cell, and a layer of
    numbers far past 65535 (and negative), as big maps have."""
    maze = Backtracker(cells=(9, 6)).run([], np.random.default_rng(3))
    labelled = Label().run([maze], np.random.default_rng(0))
    h, w = maze.tiles.shape
    big = (np.arange(h * w, dtype=np.int64).reshape(h, w) * 40_000 - 1_000_000).astype(np.int32)
    layers = {**labelled.layers, "big": big}
    dist = np.full((h, w), -1, dtype=np.int32)
    walk = maze.tiles != 0
    # Distances by repeated relaxation: slow, but independent of the code under test.
    dist[1, 1] = 0
    frontier = [(1, 1)]
    step = 0
    while frontier:
        step += 1
        nxt = []
        for y, x in frontier:
            for dy, dx in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                ny, nx = y + dy, x + dx
                if walk[ny, nx] and dist[ny, nx] < 0:
                    dist[ny, nx] = step
                    nxt.append((ny, nx))
        frontier = nxt
    layers["distance"] = dist
    return Level(tiles=maze.tiles, alphabet=maze.alphabet, layers=layers, properties=dict(labelled.properties))


def write(files: dict[str, bytes], root: Path) -> None:
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)


def json_layer(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(layer for layer in doc["layers"] if layer["name"] == name)


def json_property(layer: dict[str, Any], name: str) -> Any:
    return next(p["value"] for p in layer.get("properties", []) if p["name"] == name)


@pytest.mark.parametrize("encoding, compression", [("csv", "none"), ("base64", "zlib"), ("base64", "gzip")])
def test_pytmx_reads_every_layer_back_exactly(tmp_path: Path, encoding: str, compression: str) -> None:
    import pytmx

    level = maze_with_layers()
    exporter = ExportTmx.model_validate({"tile_size": 8, "encoding": encoding, "compression": compression})
    files = exporter.export(level, CTX)
    write(files, tmp_path)
    assert {"tilesets/symbols_values.tsx", "tilesets/symbols_values.png"} <= set(files)
    loaded = pytmx.TiledMap(str(tmp_path / "map_000.tmx"))
    assert [layer.name for layer in loaded.layers] == ["tiles", "big", "distance", "region"]
    for name, values in level.layers.items():
        layer = loaded.get_layer_by_name(name)
        assert not layer.visible
        got = decode_values(layer.properties["values"], level.width, level.height, "" if compression == "none" else compression)
        assert got.dtype == np.int32 and np.array_equal(got, values), name
    # The picture: a tile of the values tileset wherever there is a label or a distance.
    region = np.array(loaded.get_layer_by_name("region").data)
    assert ((region != 0) == (level.layers["region"] > 0)).all()
    distance = np.array(loaded.get_layer_by_name("distance").data)
    assert ((distance != 0) == (level.layers["distance"] >= 0)).all()
    # The map's own tile layer reads as before.
    assert loaded.get_layer_by_name("tiles").visible


def test_a_level_without_layers_exports_as_before_and_options_pick_layers() -> None:
    level = maze_with_layers()
    bare = Level(tiles=level.tiles, alphabet=level.alphabet)
    default = ExportTmx.model_validate({"tile_size": 8}).export(bare, CTX)
    off = ExportTmx.model_validate({"tile_size": 8, "data_layers": False}).export(bare, CTX)
    # Same map and preview; only the shared values tileset files come along.
    assert {k: v for k, v in default.items() if "_values." not in k} == off
    assert sorted(set(default) - set(off)) == ["tilesets/symbols_values.png", "tilesets/symbols_values.tsx"]
    # The layers' preview is the tile layer's alone: hidden layers are not drawn.
    with_layers = ExportTmx.model_validate({"tile_size": 8}).export(level, CTX)
    assert with_layers["previews/map_000.png"] == default["previews/map_000.png"]
    # Every map of a pack writes the same values tileset bytes, whatever its numbers.
    assert all(with_layers[k] == default[k] for k in default if k.startswith("tilesets/"))
    chosen = ExportTmx.model_validate({"tile_size": 8, "data_layers": ["distance"]}).export(level, CTX)
    text = chosen["map_000.tmx"].decode()
    assert 'name="distance"' in text and 'name="region"' not in text and 'name="big"' not in text
    with pytest.raises(PipelineError, match="no layer 'nope'"):
        ExportTmx.model_validate({"data_layers": ["nope"]}).export(level, CTX)


def test_tmj_carries_the_same_values(tmp_path: Path) -> None:
    import pytiled_parser

    level = maze_with_layers()
    # Phaser's profile writes the data layers only when asked (Phaser would draw them).
    files = ExportTmj.model_validate({"tile_size": 8, "profile": "phaser", "data_layers": True}).export(level, CTX)
    write(files, tmp_path)
    doc = json.loads((tmp_path / "map_000.tmj").read_text())
    assert [t["name"] for t in doc["tilesets"]] == ["symbols", "values"]
    for name, values in level.layers.items():
        layer = json_layer(doc, name)
        assert layer["visible"] is False and layer["locked"] is True
        assert np.array_equal(decode_values(json_property(layer, "values"), level.width, level.height), values)
    parsed = pytiled_parser.parse_map(tmp_path / "map_000.tmj")
    region = next(layer for layer in parsed.layers if layer.name == "region")
    assert np.array_equal(decode_values(region.properties["values"], level.width, level.height), level.layers["region"])


@needs_tiled
@pytest.mark.parametrize("fmt", ["tmx", "tmj"])
def test_real_tiled_opens_the_map_and_keeps_the_values(tmp_path: Path, fmt: str) -> None:
    level = maze_with_layers()
    cls = ExportTmx if fmt == "tmx" else ExportTmj
    write(cls.model_validate({"tile_size": 8, "encoding": "base64", "compression": "zlib"}).export(level, CTX), tmp_path)
    for out_fmt, suffix in (("json", ".json"), ("tmx", ".tmx")):
        out = tmp_path / f"again{suffix}"
        proc = subprocess.run(
            ["tiled", "--export-map", out_fmt, str(tmp_path / f"map_000.{fmt}"), str(out)],
            env=tiled_env(), capture_output=True, text=True, timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        if out_fmt == "json":
            doc = json.loads(out.read_text())
            for name, values in level.layers.items():
                layer = json_layer(doc, name)
                assert layer["visible"] is False
                got = decode_values(json_property(layer, "values"), level.width, level.height, "zlib")
                assert np.array_equal(got, values), name
        else:
            import pytmx

            loaded = pytmx.TiledMap(str(out))
            got = decode_values(loaded.get_layer_by_name("big").properties["values"], level.width, level.height, "zlib")
            assert np.array_equal(got, level.layers["big"])


def level_of(recipe: Any, name: str, index: int) -> Level:
    """A stage's Level for map `index`, made again from the seed rule."""
    spec = recipe.by_name[name]
    inputs = [level_of(recipe, i, index) for i in spec.inputs]
    return spec.params.run(inputs, rng_for(stage_seed(index, name, recipe.pack.seed)))


def test_the_caves_pack_exports_its_distance_field(tmp_path: Path) -> None:
    import pytmx

    shutil.copytree(RECIPES, tmp_path / "recipes", ignore=shutil.ignore_patterns("*.toml"))
    shutil.copy(RECIPES / "caves.toml", tmp_path / "recipes" / "caves.toml")
    shutil.copytree(TILESETS, tmp_path / "tilesets")
    pcg("build", "recipes/caves.toml", "-q", cwd=tmp_path)
    recipe = load_recipe(tmp_path / "recipes" / "caves.toml")
    pack = tmp_path / "exports" / "caves"
    for index in range(2):
        loaded = pytmx.TiledMap(str(pack / "cellular" / f"map_{index:03d}.tmx"))
        layer = loaded.get_layer_by_name("distance")
        got = decode_values(layer.properties["values"], loaded.width, loaded.height)
        expected = level_of(recipe, "cellular_path", index).layers["distance"]
        assert np.array_equal(got, expected)
        assert int(got.max()) == loaded.properties["distance_max"]
        drunk = pytmx.TiledMap(str(pack / "drunkard" / f"map_{index:03d}.tmx"))
        regions = decode_values(drunk.get_layer_by_name("region").properties["values"], drunk.width, drunk.height)
        assert np.array_equal(regions, level_of(recipe, "drunk_spawn", index).layers["region"])
