"""Big maps: layer data that is CSV while a map is small and base64 + zlib once it is big (the
default `encoding = "auto"`), in streams that every reader inflates: the real Tiled, pytmx, and
Python's zlib over streams of several pieces."""

from __future__ import annotations

import base64
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
    import gzip

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
