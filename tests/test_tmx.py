"""Every TMX we write loads in pytmx and round-trips through the real Tiled command line."""

from __future__ import annotations

import base64
import gzip
import json
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest
import pytmx
from PIL import Image

from conftest import TMXRASTERIZER, needs_tiled, pcg, tiled_env
from pipeline.seeds import rng_for, stage_seed
from pipeline.stages.maze.backtracker import Backtracker
from pipeline.stages.maze.block import MAZE_ALPHABET

VARIANTS = {
    "csv": "",
    "base64": 'encoding = "base64"',
    "zlib": 'encoding = "base64"\ncompression = "zlib"',
    "gzip": 'encoding = "base64"\ncompression = "gzip"',
    "embedded": "embed_tileset = true\nmargin = 2\nspacing = 1",
    "subdir": 'dir = "maps/level1"\ntile_size = 4',
}
SEED, MAPS, CELLS = 99, 2, (11, 8)


def recipe(variant: str) -> str:
    return f"""
[pack]
name = "{variant}"
seed = {SEED}
maps = {MAPS}

[stage.maze]
use = "maze.backtracker"
cells = [{CELLS[0]}, {CELLS[1]}]

[stage.tmx]
use = "export.tmx"
input = "maze"
{VARIANTS[variant]}
"""


@pytest.fixture(scope="module")
def packs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tmx")
    (root / "recipes").mkdir()
    for variant in VARIANTS:
        (root / "recipes" / f"{variant}.toml").write_text(recipe(variant))
    pcg("build", "recipes", "-j", "2", "-q", cwd=root)
    return root / "exports"


def expected_tiles(map_index: int) -> np.ndarray:
    """The Level the pack's maze stage made, regenerated from DESIGN.md's seed rule."""
    rng = rng_for(stage_seed(map_index, "maze", SEED))
    return Backtracker(cells=CELLS).run([], rng).tiles


def tmx_files(packs: Path) -> list[Path]:
    files = sorted(packs.rglob("*.tmx"))
    assert len(files) == len(VARIANTS) * MAPS
    return files


def map_index(path: Path) -> int:
    return int(path.stem.split("_")[-1])


def test_pytmx_loads_every_map_with_our_tiles(packs: Path) -> None:
    for path in tmx_files(packs):
        tmx = pytmx.TiledMap(str(path))
        layer = tmx.get_layer_by_name("tiles")
        gids = np.array(layer.data)
        names = {int(g): tmx.get_tile_properties_by_gid(int(g))["name"] for g in np.unique(gids)}
        want = np.array([s.name for s in MAZE_ALPHABET])[expected_tiles(map_index(path))]
        got = np.vectorize(names.__getitem__)(gids)
        assert np.array_equal(got, want), path
        assert tmx.properties["seed"] == SEED
        assert tmx.properties["map"] == map_index(path)
        assert tmx.properties["stages"] == "maze.backtracker > export.tmx"
        assert isinstance(tmx.properties["dead_end_pct"], float)


def test_tileset_fields_match_the_tilesheet(packs: Path) -> None:
    """columns and tilecount are what Tiled derives from the image, margin and spacing."""
    for path in tmx_files(packs):
        tmx = pytmx.TiledMap(str(path))
        (tileset,) = tmx.tilesets
        image = Image.open(path.parent / tileset.source)  # pytmx resolves the image relative to the map
        tw, m, sp = tileset.tilewidth, tileset.margin, tileset.spacing
        columns = (image.width - 2 * m + sp) // (tw + sp)
        rows = (image.height - 2 * m + sp) // (tileset.tileheight + sp)
        assert (tileset.columns, tileset.tilecount) == (columns, columns * rows) == (2, 2), path
        assert image.width == 2 * m + columns * tw + (columns - 1) * sp, path
    embedded = pytmx.TiledMap(str(packs / "embedded" / "map_000.tmx")).tilesets[0]
    assert (embedded.margin, embedded.spacing) == (2, 1)


@needs_tiled
def test_real_tiled_exports_every_map_with_our_data(packs: Path, tmp_path: Path) -> None:
    for path in tmx_files(packs):
        out = tmp_path / f"{path.parent.name}-{path.stem}.tmj"
        proc = subprocess.run(
            ["tiled", "--export-map", "json", str(path), str(out)], env=tiled_env(), capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, proc.stderr
        data = json.loads(out.read_text())
        want = expected_tiles(map_index(path))
        assert (data["width"], data["height"]) == (want.shape[1], want.shape[0])
        layer = next(layer for layer in data["layers"] if layer["name"] == "tiles")
        # Our tileset maps symbol index i to tile id i, so gid = index + 1.
        assert np.array_equal(json_layer_gids(layer).reshape(want.shape), want.astype(np.int64) + 1), path
        props = {p["name"]: p for p in data["properties"]}
        assert props["seed"] == {"name": "seed", "type": "int", "value": SEED}


def json_layer_gids(layer: dict) -> np.ndarray:
    """Tiled keeps a layer's encoding when it exports JSON: a list for CSV, else base64."""
    if layer.get("encoding", "csv") == "csv":
        return np.array(layer["data"], dtype=np.int64)
    raw = base64.b64decode(layer["data"])
    if layer.get("compression") == "zlib":
        raw = zlib.decompress(raw)
    elif layer.get("compression") == "gzip":
        raw = gzip.decompress(raw)
    return np.frombuffer(raw, dtype="<u4").astype(np.int64)


@needs_tiled
def test_real_tiled_recomputes_our_tileset_fields(packs: Path, tmp_path: Path) -> None:
    """Tiled derives columns and tilecount from the image: they must equal what we wrote."""
    path = packs / "embedded" / "map_000.tmx"
    out = tmp_path / "embedded.tmj"
    subprocess.run(["tiled", "--export-map", "json", str(path), str(out)], env=tiled_env(), check=True, capture_output=True)
    (tileset,) = json.loads(out.read_text())["tilesets"]
    image = Image.open(out.parent / tileset["image"])  # Tiled rewrites the path relative to its output
    assert (tileset["imagewidth"], tileset["imageheight"]) == image.size
    assert (tileset["columns"], tileset["tilecount"], tileset["margin"], tileset["spacing"]) == (2, 2, 2, 1)
    tsx = packs / "csv" / "tilesets" / "symbols.tsx"
    out = tmp_path / "symbols.tsj"
    subprocess.run(["tiled", "--export-tileset", "json", str(tsx), str(out)], env=tiled_env(), check=True, capture_output=True)
    exported = json.loads(out.read_text())
    assert (exported["columns"], exported["tilecount"]) == (2, 2)


@pytest.mark.skipif(TMXRASTERIZER is None, reason="tmxrasterizer (Debian package tiled) is not installed")
def test_tmxrasterizer_draws_what_our_preview_draws(tmp_path: Path) -> None:
    (tmp_path / "r.toml").write_text(
        recipe("csv").replace('name = "csv"', 'name = "raster"')
        + '\n[stage.preview]\nuse = "export.png"\ninput = "maze"\nscale = 16\n'
    )
    pcg("build", "r.toml", "-q", "-j", "1", cwd=tmp_path)
    pack = tmp_path / "exports" / "raster"
    out = tmp_path / "raster.png"
    subprocess.run(["tmxrasterizer", str(pack / "map_000.tmx"), str(out)], env=tiled_env(), check=True, capture_output=True)
    ours = np.asarray(Image.open(pack / "previews" / "map_000.png").convert("RGB"))
    theirs = np.asarray(Image.open(out).convert("RGB"))
    assert ours.shape == theirs.shape
    assert np.array_equal(ours, theirs)


def test_a_control_character_a_stage_of_your_own_puts_in_a_name_fails_the_map_not_tiled() -> None:
    """Recipes are checked as they load; an object named by a plugin is caught as the map is written."""
    import pipeline
    from pipeline.errors import PipelineError
    from pipeline.level import MapObject
    from pipeline.registry import ExportContext, kinds

    maze = pipeline.generate("maze.backtracker", seed=1, cells=(3, 3))
    maze.objects.append(MapObject("chest\x07", "chest", 0.5, 0.5))
    exporter = kinds()["export.tmx"].model_validate({})
    with pytest.raises(PipelineError, match=r"holds the control character '\\x07', which a TMX file \(XML\) cannot"):
        exporter.export(maze, ExportContext(stem="map_000"))


@pytest.mark.parametrize("encoding, compression", [("csv", "none"), ("base64", "zlib")])
def test_layer_data_spliced_in_as_written_is_what_elementtree_writes(encoding: str, compression: str) -> None:
    """Layer data goes into the document after it is laid out (it needs neither escaping nor the
    control-character check); names and values that look like a <data> element stay text."""
    import xml.etree.ElementTree as ET

    import pipeline
    from pipeline.level import MapObject
    from pipeline.registry import ExportContext, kinds
    from pipeline.tiled.xmlout import to_bytes

    maze = pipeline.generate("maze.backtracker", seed=3, cells=(5, 4))
    maze.properties["note"] = '<data encoding="csv"/> & </data>'
    maze.objects.append(MapObject('<data encoding="csv"/>', "chest", 1.0, 1.0))
    exporter = kinds()["export.tmx"].model_validate({"encoding": encoding, "compression": compression})
    data = exporter.export(maze, ExportContext(stem="map_000"))["map_000.tmx"]

    root = ET.fromstring(data)
    # The same tree written whole by ElementTree gives the same bytes.
    assert to_bytes(ET.fromstring(data)) == data
    layer = root.find("layer/data")
    assert layer is not None and layer.text is not None
    if encoding == "csv":
        gids = np.array([int(v) for v in layer.text.replace("\n", "").split(",")]).reshape(maze.height, maze.width)
    else:
        gids = np.frombuffer(zlib.decompress(base64.b64decode(layer.text.strip())), dtype="<u4").reshape(maze.height, maze.width)
    assert np.array_equal(gids - 1, maze.tiles)
    note = root.find("properties/property[@name='note']")
    assert note is not None and note.get("value") == '<data encoding="csv"/> & </data>'
    assert [o.get("name") for o in root.iter("object")] == ['<data encoding="csv"/>']
