"""What clients see of a pack: every layer encoding and compression the Tiled exporters accept,
read back by pytiled-parser, pytmx and the real Tiled; and contact sheets whose captions describe
the map each thumbnail shows."""

from __future__ import annotations

import base64
import gzip
import json
import subprocess
import zlib
from itertools import product
from pathlib import Path
from typing import Any, get_args
from xml.etree.ElementTree import ParseError

import numpy as np
import pytest
from pydantic import ValidationError

from conftest import needs_tiled, pcg, tiled_env, write_recipe
from pipeline.building.contact_sheet import caption_lines, sheet_entry
from pipeline.building.manifest import MapEntry
from pipeline.recipe.load import load_recipe
from pipeline.seeds import rng_for, stage_seed
from pipeline.stages.export.tiled_map import TiledMapExporter
from pipeline.stages.export.tmj import ExportTmj
from pipeline.stages.export.tmx import ExportTmx
from pipeline.stages.maze.backtracker import Backtracker

SEED, MAPS, CELLS = 31, 2, (11, 8)
EXPORTERS: dict[str, type[TiledMapExporter]] = {"tmx": ExportTmx, "tmj": ExportTmj}


def choices(option: str) -> list[str]:
    """The values an exporter option declares (its Literal, unset aside)."""
    literal = next(a for a in get_args(TiledMapExporter.model_fields[option].annotation) if a is not type(None))
    return list(get_args(literal))


def accepted(cls: type[TiledMapExporter]) -> list[tuple[str, str]]:
    """Every (encoding, compression) pair the exporter takes, found by asking it, so that a value
    added to either option is tested here without editing this list."""
    found = []
    # "auto" is one of the others, by the map's size (tests/test_big_maps.py): not a case of its own.
    for encoding, compression in product([e for e in choices("encoding") if e != "auto"], choices("compression")):
        try:
            cls.model_validate({"encoding": encoding, "compression": compression})
        except ValidationError:
            continue
        found.append((encoding, compression))
    return found


CASES = [(fmt, encoding, compression) for fmt, cls in EXPORTERS.items() for encoding, compression in accepted(cls)]
CASE_IDS = [f"{fmt}-{encoding}-{compression}" for fmt, encoding, compression in CASES]


def folder(fmt: str, encoding: str, compression: str) -> str:
    return f"{fmt}_{encoding}_{compression}"


def formats_recipe() -> str:
    """One maze stage and an exporter per accepted combination, each into its own folder."""
    text = f'[pack]\nname = "formats"\nseed = {SEED}\nmaps = {MAPS}\n\n[stage.maze]\nuse = "maze.backtracker"\ncells = [{CELLS[0]}, {CELLS[1]}]\n'
    for fmt, encoding, compression in CASES:
        name = folder(fmt, encoding, compression)
        text += (
            f'\n[stage.{name}]\nuse = "export.{fmt}"\ninput = "maze"\ndir = "{name}"\ntile_size = 8\npreview = false\n'
            f'encoding = "{encoding}"\ncompression = "{compression}"\n'
        )
    return text


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("formats")
    write_recipe(root, "formats", formats_recipe())
    pcg("build", "recipes", "-q", cwd=root)
    return root / "exports" / "formats"


def map_files(pack: Path, fmt: str, encoding: str, compression: str) -> list[tuple[int, Path]]:
    files = [(i, pack / folder(fmt, encoding, compression) / f"map_{i:03d}.{fmt}") for i in range(MAPS)]
    assert all(path.is_file() for _, path in files)
    return files


def expected_gids(map_index: int) -> np.ndarray:
    """The maze stage's Level, made again from the seed rule; our tileset gives symbol i gid i + 1."""
    tiles = Backtracker(cells=CELLS).run([], rng_for(stage_seed(map_index, "maze", SEED))).tiles
    return tiles.astype(np.int64) + 1


def json_gids(layer: dict[str, Any]) -> np.ndarray:
    """A Tiled JSON tile layer's gids, decoded as Tiled's own format description says."""
    if layer.get("encoding", "csv") == "csv":
        return np.array(layer["data"], dtype=np.int64)
    raw = base64.b64decode(layer["data"])
    unpack = {"": lambda b: b, "zlib": zlib.decompress, "gzip": gzip.decompress}[layer["compression"]]
    return np.frombuffer(unpack(raw), dtype="<u4").astype(np.int64)


def tile_layer(data: dict[str, Any]) -> dict[str, Any]:
    return next(layer for layer in data["layers"] if layer["type"] == "tilelayer")


def test_the_exporters_accept_the_combinations_tiled_and_its_readers_share() -> None:
    """zstd stays refused: pytmx 3.32 raises on it, pytiled-parser needs an optional package, and
    Phaser, SuperTiled2Unity and MonoGame cannot read it. CSV is never compressed."""
    want = [("csv", "none"), ("base64", "none"), ("base64", "zlib"), ("base64", "gzip")]
    assert accepted(ExportTmx) == accepted(ExportTmj) == want


@pytest.mark.parametrize("fmt", ["tmx", "tmj"])
def test_zstd_is_refused_with_the_choices_named(project: Path, fmt: str) -> None:
    stages = f'[stage.maze]\nuse = "maze.backtracker"\ncells = [3, 2]\n\n[stage.out]\nuse = "export.{fmt}"\ninput = "maze"\n'
    write_recipe(project, "zstd", f'[pack]\nname = "z"\nseed = 1\n\n{stages}encoding = "base64"\ncompression = "zstd"\n')
    proc = pcg("build", "recipes/zstd.toml", cwd=project, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "recipes/zstd.toml: stage.out.compression: must be one of 'none', 'zlib' or 'gzip' (got 'zstd')" in proc.stderr


@pytest.mark.parametrize("fmt, encoding, compression", CASES, ids=CASE_IDS)
def test_pytiled_parser_reads_every_combination(pack: Path, fmt: str, encoding: str, compression: str) -> None:
    import pytiled_parser

    for index, path in map_files(pack, fmt, encoding, compression):
        parsed = pytiled_parser.parse_map(path)
        (layer,) = [layer for layer in parsed.layers if isinstance(layer, pytiled_parser.TileLayer)]
        assert np.array_equal(np.array(layer.data, dtype=np.int64), expected_gids(index)), path


@pytest.mark.parametrize("encoding, compression", [(e, c) for fmt, e, c in CASES if fmt == "tmx"])
def test_pytmx_reads_every_tmx_combination(pack: Path, encoding: str, compression: str) -> None:
    import pytmx

    for index, path in map_files(pack, "tmx", encoding, compression):
        loaded = pytmx.TiledMap(str(path))
        # pytmx renumbers the tiles it loads; tiledgidmap leads back to the file's gids.
        to_file = {0: 0, **loaded.tiledgidmap}
        gids = np.vectorize(to_file.__getitem__)(np.array(loaded.get_layer_by_name("tiles").data))
        assert np.array_equal(gids, expected_gids(index)), path


def test_pytmx_reads_no_tiled_json(pack: Path) -> None:
    """pytmx 3.32's TiledMap parses XML only (its parse_json reads custom property types), so
    TMJ maps are checked with pytiled-parser and Tiled alone. Should it learn JSON, test it above."""
    import pytmx

    for fmt, encoding, compression in CASES:
        if fmt == "tmj":
            with pytest.raises(ParseError):
                pytmx.TiledMap(str(map_files(pack, fmt, encoding, compression)[0][1]))


@needs_tiled
@pytest.mark.parametrize("fmt, encoding, compression", CASES, ids=CASE_IDS)
def test_real_tiled_reads_every_combination_and_writes_its_layer_as_we_do(
    pack: Path, tmp_path: Path, fmt: str, encoding: str, compression: str
) -> None:
    """Tiled keeps a map's layer format when it exports JSON: what it writes for our map of this
    combination is, apart from the (re-compressed) data, the tile layer our export.tmj writes."""
    ours = json.loads((pack / folder("tmj", encoding, compression) / "map_000.tmj").read_text())
    for index, path in map_files(pack, fmt, encoding, compression):
        out = tmp_path / f"{path.stem}.json"
        proc = subprocess.run(
            ["tiled", "--export-map", "json", str(path), str(out)], env=tiled_env(), capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, (path, proc.stderr)
        theirs = tile_layer(json.loads(out.read_text()))
        assert np.array_equal(json_gids(theirs).reshape(expected_gids(index).shape), expected_gids(index)), path
        if index == 0:
            without_data = {k: v for k, v in tile_layer(ours).items() if k != "data"}
            assert {k: v for k, v in theirs.items() if k != "data"} == without_data, path


def objects_map(tmp_path: Path) -> Path:
    """A maze with a point, a rectangle, an object off the tile grid and a polyline, exported as
    TMX and TMJ into `tmp_path`."""
    from pipeline.level import MapObject
    from pipeline.registry import ExportContext

    maze = Backtracker(cells=(5, 4)).run([], np.random.default_rng(3))
    maze.objects = [
        MapObject("spawn", "spawn", 1, 1),
        MapObject("hall", "room", 1, 3, 3, 2),
        MapObject("gem", "gem", 2.3125, 1.5),
        MapObject("walk", "path", 1, 1, points=((0, 0), (2, 0), (2.0625, 1))),
    ]
    ctx = ExportContext(stem="map_000", provenance={"pack": "t", "map": 0})
    for cls in (ExportTmx, ExportTmj):
        for rel, data in cls.model_validate({"tile_size": 8}).export(maze, ctx).items():
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).write_bytes(data)
    return tmp_path


def object_numbers(doc: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """(object, field, value) of every position, size and polyline point in a Tiled JSON map."""
    found = []
    for layer in doc["layers"]:
        for obj in layer.get("objects", []):
            found += [(obj["name"], key, obj[key]) for key in ("x", "y", "width", "height")]
            found += [(obj["name"], f"polyline[{i}].{key}", p[key]) for i, p in enumerate(obj.get("polyline", [])) for key in ("x", "y")]
    return found


def test_tiled_json_writes_whole_numbers_as_integers(tmp_path: Path) -> None:
    numbers = object_numbers(json.loads((objects_map(tmp_path) / "map_000.tmj").read_text()))
    assert len(numbers) == 4 * 4 + 6
    assert any(isinstance(v, float) for _, _, v in numbers), "the map needs a number off the grid"
    assert [n for n in numbers if isinstance(n[2], float) and n[2].is_integer()] == []


@needs_tiled
def test_real_tiled_writes_our_objects_as_our_tiled_json_does(tmp_path: Path) -> None:
    """Tiled, saving our TMX as JSON, writes every object's numbers as our TMJ holds them, to the
    type (`24`, not `24.0`)."""
    root = objects_map(tmp_path)
    out = tmp_path / "again.json"
    proc = subprocess.run(
        ["tiled", "--export-map", "json", str(root / "map_000.tmx"), str(out)], env=tiled_env(), capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr

    def typed(doc: dict[str, Any]) -> list[tuple[str, str, Any, str]]:
        return [(name, key, value, type(value).__name__) for name, key, value in object_numbers(doc)]

    assert typed(json.loads(out.read_text())) == typed(json.loads((root / "map_000.tmj").read_text()))


TREE_ONLY = """\
[pack]
name = "two"
seed = 7
maps = 4

[stage.tree]
use = "maze.binary_tree"
cells = [9, 7]

[stage.tree_tmx]
use = "export.tmx"
input = "tree"
dir = "tree"
tile_size = 8
"""
DIVISION = """
[stage.division]
use = "maze.recursive_division"
cells = [9, 7]

[stage.division_tmx]
use = "export.tmx"
input = "division"
dir = "division"
tile_size = 8
"""


def shown(project: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(manifest map, what the contact sheet shows of it) for every map of the pack."""
    recipe = load_recipe(project / "recipes" / "two.toml")
    manifest = json.loads((project / "exports" / "two" / "manifest.json").read_text())
    return [(m, sheet_entry(recipe, MapEntry.from_json(m))) for m in manifest["maps"]]  # type: ignore[arg-type]


def test_each_thumbnail_is_captioned_with_the_stats_of_the_map_it_shows(project: Path) -> None:
    """Two chains, binary tree and recursive division, each exported with a preview: the sheet
    draws the first chain's map, so its caption is that chain's, not the pack's merged stats (in
    which the last exporter's input wins)."""
    recipe = write_recipe(project, "two", TREE_ONLY)
    sheet = project / "exports" / "two" / "contact_sheet.png"
    pcg("build", recipe, "-q", cwd=project)
    alone, stamp = sheet.read_bytes(), sheet.stat().st_mtime_ns

    write_recipe(project, "two", TREE_ONLY + DIVISION)
    pcg("build", recipe, "-q", cwd=project)
    maps = shown(project)
    assert len(maps) == 4
    # The merged stats carry the division's numbers: the mix-up this guards against can happen.
    assert any(m["stats"]["diameter"] != m["stages"]["tree"]["stats"]["diameter"] for m, _ in maps)
    for m, entry in maps:
        assert entry is not None and entry["file"] == f"tree/previews/{m['stem']}.png"
        assert entry["stats"] == m["stages"]["tree"]["stats"]
        tree = m["stages"]["tree"]["stats"]
        assert caption_lines(entry, ["diameter", "dead_end_pct"]) == [
            f"#{m['index']} {m['stem']}", f"diameter {tree['diameter']}", f"dead_end_pct {tree['dead_end_pct']:g}"
        ]
    # Pictures and captions as without the second chain: the same sheet, not even redrawn.
    assert sheet.read_bytes() == alone and sheet.stat().st_mtime_ns == stamp

    # Without the tree's previews the sheet shows the division's maps, with the division's stats.
    write_recipe(project, "two", TREE_ONLY.replace("tile_size = 8\n", "tile_size = 8\npreview = false\n") + DIVISION)
    pcg("build", recipe, "-q", cwd=project)
    for m, entry in shown(project):
        assert entry is not None and entry["file"] == f"division/previews/{m['stem']}.png"
        assert entry["stats"] == m["stages"]["division"]["stats"]
    assert sheet.read_bytes() != alone
