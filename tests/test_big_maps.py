"""Big maps: layer data that is CSV while a map is small and base64 + zlib once it is big (the
default `encoding = "auto"`), in streams that every reader inflates: the real Tiled, pytmx, and
Python's zlib over streams of several pieces."""

from __future__ import annotations

import base64
import gzip
import json
import subprocess
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import numpy as np
import pytest
import pytmx
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import needs_tiled, pcg, tiled_env, write_recipe
from pipeline.tiled import deflate
from pipeline.tiled.profiles import CSV_MAX_TILES

# A side whose layers are just over one 4 MiB piece (4 bytes a tile): the streams have two.
BIG = 1030


def cave_recipe(side: int, extra: str = "") -> str:
    return f"""[pack]
name = "caves"
seed = 3
maps = 1

[stage.cave]
use = "dungeon.cellular_caves"
size = [{side}, {side}]
keep = "largest"

[stage.regions]
use = "regions.label"
input = "cave"

[stage.tmx]
use = "export.tmx"
input = "regions"
preview = false
{extra}"""


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("big")
    write_recipe(root, "caves", cave_recipe(BIG))
    pcg("build", "recipes", "-q", cwd=root)
    return root / "exports" / "caves" / "map_000.tmx"


def test_a_small_map_stays_csv_and_a_big_one_is_zlib_base64(tmp_path: Path, big: Path) -> None:
    side = int(CSV_MAX_TILES**0.5)  # the largest square map that is still small
    write_recipe(tmp_path, "caves", cave_recipe(side))
    pcg("build", "recipes", "-q", cwd=tmp_path)
    small = ET.parse(tmp_path / "exports" / "caves" / "map_000.tmx").getroot()
    assert {d.get("encoding") for d in small.iter("data")} == {"csv"}
    root = ET.parse(big).getroot()
    assert {(d.get("encoding"), d.get("compression")) for d in root.iter("data")} == {("base64", "zlib")}


def test_pytmx_reads_a_big_map_and_its_values_as_written(big: Path) -> None:
    tmx = pytmx.TiledMap(str(big))
    assert (tmx.width, tmx.height) == (BIG, BIG)
    root = ET.parse(big).getroot()
    for layer in root.iter("layer"):
        data = layer.find("data")
        assert data is not None
        raw = zlib.decompress(base64.b64decode(data.text or ""))
        gids = np.frombuffer(raw, "<u4").reshape(BIG, BIG)
        ours = np.array(tmx.get_layer_by_name(layer.get("name")).data, dtype=np.int64)
        # pytmx numbers tiles its own way: the same tiles wherever the same gid is.
        assert np.array_equal(ours == 0, gids == 0) and len(np.unique(ours)) == len(np.unique(gids))
    values = pytmx.TiledMap(str(big)).get_layer_by_name("region").properties["values"]
    labels = np.frombuffer(zlib.decompress(base64.b64decode(values)), "<i4")
    assert labels.size == BIG * BIG and labels.max() == 1  # one cave kept: one region


@needs_tiled
def test_tiled_opens_a_big_zlib_map_and_exports_the_same_tiles(big: Path, tmp_path: Path) -> None:
    out = tmp_path / "big.json"
    proc = subprocess.run(["tiled", "--export-map", "json", str(big), str(out)], env=tiled_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    exported = {layer["name"]: layer for layer in json.loads(out.read_text())["layers"] if layer["type"] == "tilelayer"}
    for layer in ET.parse(big).getroot().iter("layer"):
        data = layer.find("data")
        assert data is not None
        gids = np.frombuffer(zlib.decompress(base64.b64decode(data.text or "")), "<u4")
        theirs = exported[layer.get("name")]
        if theirs.get("encoding") == "base64":
            raw = base64.b64decode(theirs["data"])
            raw = zlib.decompress(raw) if theirs.get("compression") == "zlib" else raw
            theirs_gids = np.frombuffer(raw, "<u4")
        else:
            theirs_gids = np.array(theirs["data"], dtype=np.uint32)
        assert np.array_equal(theirs_gids, gids), layer.get("name")


@settings(max_examples=40, deadline=None)
@given(st.binary(max_size=300), st.integers(0, 3), st.sampled_from(["zlib", "gzip"]))
def test_a_stream_of_pieces_inflates_to_what_went_in(tail: bytes, pieces: int, compression: str) -> None:
    raw = bytes(range(256)) * (pieces * deflate.PIECE // 256) + tail
    packed = deflate.compress(raw, compression)  # type: ignore[arg-type]
    assert (zlib.decompress(packed) if compression == "zlib" else gzip.decompress(packed)) == raw
    if len(raw) <= deflate.PIECE:  # one piece: what Python's own one-call compression gives
        assert packed == (zlib.compress(raw, deflate.LEVEL) if compression == "zlib" else gzip.compress(raw, deflate.LEVEL, mtime=0))


def test_explicit_csv_is_kept_for_a_big_map_and_compression_alone_means_base64(tmp_path: Path) -> None:
    write_recipe(tmp_path, "caves", cave_recipe(300, 'encoding = "csv"\n'))
    write_recipe(tmp_path, "gz", cave_recipe(300, 'compression = "gzip"\n').replace('name = "caves"', 'name = "gz"'))
    pcg("build", "recipes", "-q", cwd=tmp_path)
    csv = ET.parse(tmp_path / "exports" / "caves" / "map_000.tmx").getroot()
    assert {d.get("encoding") for d in csv.iter("data")} == {"csv"}
    gz = ET.parse(tmp_path / "exports" / "gz" / "map_000.tmx").getroot()
    assert {(d.get("encoding"), d.get("compression")) for d in gz.iter("data")} == {("base64", "gzip")}


def _chunked_pack(root: Path, side: int, chunk: int, fmt: str = "tmx", extra: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    text = cave_recipe(side, f"infinite = true\nchunk = {chunk}\n{extra}").replace('use = "export.tmx"', f'use = "export.{fmt}"')
    write_recipe(root, "caves", text)
    pcg("build", "recipes", "-q", cwd=root)
    return root / "exports" / "caves" / f"map_000.{fmt}"


def _finite_layers(root: Path, side: int) -> dict[str, np.ndarray]:
    root.mkdir(parents=True, exist_ok=True)
    write_recipe(root, "caves", cave_recipe(side, 'encoding = "base64"\ncompression = "zlib"\n'))
    pcg("build", "recipes", "-q", cwd=root)
    out = {}
    for layer in ET.parse(root / "exports" / "caves" / "map_000.tmx").getroot().iter("layer"):
        data = layer.find("data")
        assert data is not None
        out[layer.get("name", "")] = np.frombuffer(zlib.decompress(base64.b64decode(data.text or "")), "<u4").reshape(side, side)
    return out


@needs_tiled
@pytest.mark.parametrize(("fmt", "chunk", "extra"), [("tmx", 16, 'compression = "zlib"\n'), ("tmx", 32, 'encoding = "csv"\n'), ("tmj", 64, 'compression = "gzip"\n')])
def test_tiled_reads_an_infinite_map_chunk_for_chunk(tmp_path: Path, fmt: str, chunk: int, extra: str) -> None:
    """Tiled exports the chunked map to JSON with the same tiles in the same places; our own
    reader (load.tmx, the gallery) gives the finite map's layers back."""
    from pipeline.tiled.read.files import read_tiled_map

    side = 150  # not a multiple of any chunk: the edge chunks are filled out with empty cells
    expected = _finite_layers(tmp_path / "finite", side)
    path = _chunked_pack(tmp_path / "chunked", side, chunk, fmt, extra)
    out = tmp_path / "exported.json"
    proc = subprocess.run(["tiled", "--export-map", "json", str(path), str(out)], env=tiled_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["infinite"] is True
    for layer in (item for item in doc["layers"] if item["type"] == "tilelayer"):
        grid = np.zeros((side + chunk, side + chunk), dtype=np.uint32)
        for piece in layer["chunks"]:
            assert piece["x"] % chunk == 0 and piece["y"] % chunk == 0 and piece["width"] == chunk
            data = piece["data"]
            if isinstance(data, str):
                raw = base64.b64decode(data)
                inflate = {"zlib": zlib.decompress, "gzip": gzip.decompress}.get(layer.get("compression", ""), bytes)
                data = np.frombuffer(inflate(raw), "<u4")
            grid[piece["y"] : piece["y"] + chunk, piece["x"] : piece["x"] + chunk] = np.asarray(data, dtype=np.uint32).reshape(chunk, chunk)
        assert np.array_equal(grid[:side, :side], expected[layer["name"]]), layer["name"]
        assert not grid[side:, :].any() and not grid[:, side:].any()
    tiled = read_tiled_map(lambda relative, what: (path.parent / relative).read_bytes(), path.name)
    assert [layer.name for layer in tiled.layers] == ["tiles"] and [d.name for d in tiled.data_layers] == ["region"]
    assert np.array_equal(tiled.layers[0].gids, expected["tiles"])


def test_an_infinite_map_leaves_empty_chunks_out_and_pytmx_refuses_it(tmp_path: Path) -> None:
    path = _chunked_pack(tmp_path, 100, 16)
    root = ET.parse(path).getroot()
    assert root.get("infinite") == "1" and root.find("editorsettings") is None  # Tiled's default size goes unsaid
    tiles = next(layer for layer in root.iter("layer") if layer.get("name") == "tiles")
    assert len(tiles.findall("data/chunk")) == 7 * 7  # walls or floor in every chunk of 100 x 100
    for chunk in root.iter("chunk"):
        assert any(v.strip() not in ("", "0") for v in (chunk.text or "").split(",")), chunk.attrib
    with pytest.raises(Exception):  # noqa: B017  pytmx logs "infinite is not supported" and raises a bare Exception
        pytmx.TiledMap(str(path))


def test_only_chunks_holding_a_tile_are_kept_and_their_bounds_are_the_layers() -> None:
    from pipeline.tiled.chunks import chunked

    gids = np.zeros((37, 50), dtype=np.uint32)
    gids[20:30, 35:49] = 3
    found = chunked(gids, 16)
    assert [(x, y) for x, y, _ in found.chunks] == [(32, 16), (48, 16)]
    assert [int(block.sum()) for _, _, block in found.chunks] == [3 * 13 * 10, 3 * 1 * 10]
    assert found.bounds == (32, 16, 32, 16)
    assert chunked(np.zeros((5, 5), dtype=np.uint32), 16) == chunked(np.zeros((5, 5), dtype=np.uint32), 16)
    assert chunked(np.zeros((5, 5), dtype=np.uint32), 16).chunks == []


def test_chunk_options_are_checked_as_the_recipe_loads(tmp_path: Path) -> None:
    write_recipe(tmp_path, "caves", cave_recipe(40, "chunk = 32\n"))
    proc = pcg("build", "recipes", cwd=tmp_path, check=False)
    assert proc.returncode == 1 and "chunk: only with infinite = true" in proc.stderr and "Traceback" not in proc.stderr
    write_recipe(tmp_path, "caves", cave_recipe(40, "infinite = true\n").replace('use = "export.tmx"', 'use = "export.lua"'))
    proc = pcg("build", "recipes", cwd=tmp_path, check=False)
    assert proc.returncode == 1 and "export.lua writes finite maps" in proc.stderr
    write_recipe(tmp_path, "caves", cave_recipe(40, "infinite = true\nchunk = 2\n"))
    proc = pcg("build", "recipes", cwd=tmp_path, check=False)
    assert proc.returncode == 1 and "chunk" in proc.stderr and ">= 4" in proc.stderr.replace("greater than or equal to", ">=")


def test_dungeons_take_sides_up_to_16384_tiles() -> None:
    import pipeline
    from pipeline.errors import PipelineError

    assert pipeline.generate("dungeon.drunkard_walk", seed=1, size=(16384, 6)).tiles.shape == (6, 16384)
    with pytest.raises(PipelineError, match=r"size.0: must be <= 16384 \(got 16385\)"):
        pipeline.generate("dungeon.drunkard_walk", seed=1, size=(16385, 6))
    # Its corridors are a maze, whose generators stop at 4096 cells: said as its own limit.
    with pytest.raises(PipelineError, match=r"size.0: must be <= 8193 \(got 16383\)"):
        pipeline.generate("dungeon.rooms_and_mazes", seed=1, size=(16383, 15))


@pytest.mark.parametrize("fmt", ["tmx", "tmj"])
def test_an_infinite_map_with_an_empty_layer_and_odd_layer_names_reads_back(tmp_path: Path, fmt: str) -> None:
    """A layer with no tile has no chunk at all; a layer named like the writer's placeholders
    keeps its name and its data."""
    from pipeline.tiled.read.files import read_tiled_map

    layers = '[{ name = "@data1@" }, { name = "doors", symbols = ["door"] }, { name = "b" }]'
    path = _chunked_pack(tmp_path, 40, 16, fmt, f"layers = {layers}\ndata_layers = false\n")
    tiled = read_tiled_map(lambda relative, what: (path.parent / relative).read_bytes(), path.name)
    got = {layer.name: layer.gids for layer in tiled.layers}
    assert list(got) == ["@data1@", "doors", "b"]
    assert not got["doors"].any() and got["@data1@"].all() and np.array_equal(got["@data1@"], got["b"])
