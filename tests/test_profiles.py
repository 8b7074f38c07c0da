"""Engine profiles checked against what each engine's importer does with the files (docs/engines.md
cites the importers' source): one pack exports the same dungeon under every profile, and each
profile's files are parsed and held to its importer's rules. Phaser's rules are checked by
Phaser 3's own parser (run in Node), Tiled's by the real Tiled."""

from __future__ import annotations

import base64
import gzip
import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import numpy as np
import pytest

from conftest import needs_tiled, pcg, tiled_env, write_recipe
from pipeline.level import MapObject
from pipeline.tiled.profile_rules import object_shape, profile_objects
from pipeline.tiled.profiles import PROFILES, resolve

ROOT = Path(__file__).resolve().parents[1]
PHASER_DIR = Path(os.environ.get("PHASER_DIR", Path.home() / ".cache" / "pcg-phaser" / "node_modules" / "phaser"))
NODE = shutil.which("node")
needs_phaser = pytest.mark.skipif(
    NODE is None or not (PHASER_DIR / "src" / "tilemaps").is_dir(),
    reason=f"Node and Phaser 3 are not installed (npm install --prefix ~/.cache/pcg-phaser phaser@3.90.0, or set PHASER_DIR; looked in {PHASER_DIR})",
)

# (stage, format, profile, tileset_name, extra options). Profiles that write Tiled's own bytes share
# the `tiled` stages' tileset files, which proves their bytes equal too.
EXPORTS = [
    ("tiled_tmx", "tmx", "tiled", "dungeon", ""),
    ("tiled_tmj", "tmj", "tiled", "dungeon", ""),
    ("tiled_zlib", "tmj", "tiled", "dungeon", 'encoding = "base64"\ncompression = "zlib"\n'),
    ("tiled_no_data", "tmj", "tiled", "dungeon", "data_layers = false\n"),
    ("phaser", "tmj", "phaser", "dungeon", ""),
    ("phaser_b64", "tmj", "phaser", "dungeon", 'encoding = "base64"\n'),
    ("phaser_data", "tmj", "phaser", "dungeon", "data_layers = true\n"),
    ("godot_tmx", "tmx", "godot", "godot", ""),
    ("godot_tmj", "tmj", "godot", "godot", ""),
    ("unity", "tmx", "unity", "dungeon", ""),
    ("bevy", "tmx", "bevy", "dungeon", ""),
]

HEAD = """[pack]
name = "engines"
seed = 5
maps = 1

[stage.dungeon]
use = "dungeon.bsp"
size = [41, 31]

[stage.placed]
use = "place.spawn_exit"
input = "dungeon"

[stage.chests]
use = "place.items"
input = "placed"
type = "chest"
count = 3
tile = "chest"
properties = { gold = 25, weight = 2.5, locked = false, glow = "#ffa300" }

[stage.path]
use = "place.path"
input = "chests"
"""


def engines_recipe() -> str:
    """Rooms (rectangles), spawn and exit (points), chests (tile objects) and the path between
    spawn and exit (a polyline), exported once per profile."""
    body = "".join(
        f'\n[stage.{name}]\nuse = "export.{fmt}"\ninput = "path"\ndir = "{name}"\ntileset = "../tilesets/dungeon.toml"\n'
        f'tileset_name = "{tileset}"\nprofile = "{profile}"\npreview = false\n{extra}'
        for name, fmt, profile, tileset, extra in EXPORTS
    )
    return HEAD + body


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("engines")
    (root / "tilesets").mkdir()
    shutil.copy(ROOT / "tilesets" / "dungeon.toml", root / "tilesets")
    write_recipe(root, "engines", engines_recipe())
    pcg("build", "recipes", "-q", cwd=root)
    return root / "exports" / "engines"


def map_of(pack: Path, name: str) -> Path:
    fmt = next(f for n, f, *_ in EXPORTS if n == name)
    return pack / name / f"map_000.{fmt}"


def decode(data: str | list[int], encoding: str, compression: str, shape: tuple[int, int]) -> np.ndarray:
    """A layer's gids from its data as Tiled stores it."""
    if encoding == "csv":
        values = data if isinstance(data, list) else [int(v) for v in data.replace("\n", "").split(",")]
        return np.array(values, dtype=np.uint32).reshape(shape)
    raw = base64.b64decode(data)
    raw = {"zlib": zlib.decompress, "gzip": gzip.decompress}.get(compression, lambda b: b)(raw)
    return np.frombuffer(raw, "<u4").reshape(shape)


def tmx_layers(path: Path) -> dict[str, np.ndarray]:
    root = ET.parse(path).getroot()
    out = {}
    for layer in root.iter("layer"):
        data = layer.find("data")
        assert data is not None
        shape = (int(layer.get("height", 0)), int(layer.get("width", 0)))
        out[layer.get("name", "")] = decode(data.text or "", data.get("encoding", "xml"), data.get("compression", ""), shape)
    return out


def tmj_layers(path: Path) -> dict[str, np.ndarray]:
    doc = json.loads(path.read_text())
    return {
        layer["name"]: decode(layer["data"], layer.get("encoding", "csv"), layer.get("compression", ""), (layer["height"], layer["width"]))
        for layer in doc["layers"]
        if layer["type"] == "tilelayer"
    }


def layers_of(path: Path) -> dict[str, np.ndarray]:
    return tmx_layers(path) if path.suffix == ".tmx" else tmj_layers(path)


def tmx_objects(path: Path) -> list[tuple[str, dict[str, tuple[str, str]], ET.Element]]:
    """(shape, {property: (type, value)}, element) per object, shape as Tiled stores it."""
    out = []
    for obj in ET.parse(path).getroot().iter("object"):
        if obj.find("point") is not None:
            shape = "point"
        elif obj.find("polyline") is not None:
            shape = "polyline"
        else:
            shape = "tile" if obj.get("gid") else "rect"
        props = {p.get("name", ""): (p.get("type", "string"), p.get("value", p.text or "")) for p in obj.iter("property")}
        out.append((shape, props, obj))
    return out


def tmj_objects(path: Path) -> list[tuple[str, dict[str, tuple[str, object]], dict[str, object]]]:
    out = []
    for layer in json.loads(path.read_text())["layers"]:
        for obj in layer.get("objects", []):
            shape = "point" if obj.get("point") else "polyline" if "polyline" in obj else "tile" if obj.get("gid") else "rect"
            props = {p["name"]: (p["type"], p["value"]) for p in obj.get("properties", [])}
            out.append((shape, props, obj))
    return out


def tsx_tile_properties(path: Path) -> dict[int, dict[str, str]]:
    return {
        int(tile.get("id", -1)): {p.get("name", ""): p.get("value", "") for p in tile.iter("property")}
        for tile in ET.parse(path).getroot().iter("tile")
    }


# Profiles that need nothing Tiled does not write by default.


def test_phaser_and_bevy_write_the_bytes_tiled_writes(pack: Path) -> None:
    """Phaser 3 reads Tiled's default JSON (embedded tileset, CSV arrays, `type` on objects) and
    the `tiled` crate Tiled's default TMX: their profiles only refuse what those readers cannot
    load, so their maps are Tiled's, byte for byte (and the recipe's tileset files, shared with
    the `tiled` stages, were written once without a clash). Phaser's leaves the hidden data
    layers out unless asked for, since Phaser would draw them."""
    assert map_of(pack, "phaser").read_bytes() == map_of(pack, "tiled_no_data").read_bytes()
    assert map_of(pack, "phaser_data").read_bytes() == map_of(pack, "tiled_tmj").read_bytes()
    assert map_of(pack, "bevy").read_bytes() == map_of(pack, "tiled_tmx").read_bytes()
    assert len(json.loads(map_of(pack, "tiled_tmj").read_text())["layers"]) > len(json.loads(map_of(pack, "phaser").read_text())["layers"])
    assert not PROFILES["phaser"].changes_bytes and not PROFILES["bevy"].changes_bytes


def test_profiles_for_engines_with_their_own_rules_write_different_bytes(pack: Path) -> None:
    tiled = map_of(pack, "tiled_tmx").read_bytes()
    assert map_of(pack, "godot_tmx").read_bytes() != tiled
    assert map_of(pack, "unity").read_bytes() != tiled
    assert (pack / "tilesets" / "godot.tsx").read_bytes() != (pack / "tilesets" / "dungeon.tsx").read_bytes()


def test_every_profile_keeps_the_tiles(pack: Path) -> None:
    """Whatever the encoding a profile picks, the gids are the `tiled` profile's."""
    expected = tmx_layers(map_of(pack, "tiled_tmx"))
    for name, *_ in EXPORTS:
        got = layers_of(map_of(pack, name))
        without_data = name in ("tiled_no_data", "phaser", "phaser_b64")  # data layers left out
        assert got.keys() == ({"tiles"} if without_data else expected.keys()), name
        for layer in got:
            assert np.array_equal(got[layer], expected[layer]), (name, layer)


# Godot 4 with YATI 2.x (Kiamo2/YATI, GDScript/addons/YATI).


@pytest.mark.parametrize("name", ["godot_tmx", "godot_tmj"])
def test_godot_objects_become_areas_and_paths_not_walls(pack: Path, name: str) -> None:
    """TilemapCreator.gd handle_object: an object whose class is unknown or empty becomes a
    StaticBody2D (rectangles, polylines), unless its string property `godot_node_type` names
    another node (get_godot_property, YATI 1.5.0+): rooms must be Area2D, the path a Path2D.
    Points become Marker2D and tile objects Sprite2D whatever they say, so they get nothing."""
    path = map_of(pack, name)
    objects = tmx_objects(path) if path.suffix == ".tmx" else tmj_objects(path)
    shapes = {shape for shape, _, _ in objects}
    assert shapes == {"rect", "point", "tile", "polyline"}
    for shape, props, _ in objects:
        want = {"rect": "area", "polyline": "path"}.get(shape)
        if want:
            assert props["godot_node_type"] == ("string", want), (shape, props)
        else:
            assert "godot_node_type" not in props, (shape, props)
    # YATI reads `class`, else `type` (1.1.1+): Tiled 1.8's `type` carries the object's kind.
    kinds = {str(obj.get("type")) for _, _, obj in objects}  # type: ignore[union-attr]
    assert {"room", "spawn", "exit", "chest", "path"} <= kinds


def test_godot_tile_properties_become_custom_data(pack: Path) -> None:
    """TilesetCreator.gd handle_tile_properties (YATI 2.1.0+): only properties named with the
    Custom Data Prefix, "data_" by default, become TileSet custom data layers (the prefix
    dropped, so `tile_data.get_custom_data("solid")`); others are only metadata."""
    godot = tsx_tile_properties(pack / "tilesets" / "godot.tsx")
    plain = tsx_tile_properties(pack / "tilesets" / "dungeon.tsx")
    assert godot.keys() == plain.keys() and plain
    for tile, props in plain.items():
        assert godot[tile] == {f"data_{k}": v for k, v in props.items()}
    assert any("data_solid" in props for props in godot.values())
    embedded = json.loads(map_of(pack, "godot_tmj").read_text())["tilesets"][0]
    assert all(p["name"].startswith("data_") for tile in embedded["tiles"] for p in tile["properties"])


@pytest.mark.parametrize("name", ["godot_tmx", "godot_tmj"])
def test_godot_layer_data_is_zlib_base64(pack: Path, name: str) -> None:
    """TilemapCreator.gd handle_data: base64 is decoded by Marshalls.base64_to_raw and inflated
    by PackedByteArray.decompress (FileAccess.COMPRESSION_DEFLATE, zlib's format: Godot's
    core/io/compression.cpp opens it with window bits 15), all native code; CSV in a TMX is
    split and converted cell by cell in GDScript (DictionaryFromXml.gd). So base64 + zlib."""
    path = map_of(pack, name)
    if path.suffix == ".tmx":
        datas = [(d.get("encoding"), d.get("compression")) for d in ET.parse(path).getroot().iter("data")]
    else:
        datas = [(layer.get("encoding"), layer.get("compression")) for layer in json.loads(path.read_text())["layers"] if layer["type"] == "tilelayer"]
    assert datas and set(datas) == {("base64", "zlib")}


# Unity with SuperTiled2Unity 2.x (Seanba/SuperTiled2Unity).


def test_unity_rooms_and_paths_are_triggers(pack: Path) -> None:
    """SuperObjectLayerLoader.cs FillSuperObject: a rectangle gets a BoxCollider2D, a polyline an
    EdgeCollider2D, points nothing; PostProcessObject makes the collider a trigger when the
    object's `unity:IsTrigger` is true, so the player walks into a room instead of against it."""
    objects = tmx_objects(map_of(pack, "unity"))
    assert {shape for shape, _, _ in objects} == {"rect", "point", "tile", "polyline"}
    for shape, props, obj in objects:
        if shape in ("rect", "polyline"):
            assert props["unity:IsTrigger"] == ("bool", "true"), obj.attrib
        else:
            assert "unity:IsTrigger" not in props
        # CreateSuperObject reads the kind from the `type` attribute only.
        assert obj.get("type") and obj.get("class") is None


def test_unity_and_bevy_maps_use_only_what_their_readers_decode(pack: Path) -> None:
    """SuperTiled2Unity's DataCompression is none, gzip or zlib (issue #143: no zstd); the
    `tiled` crate parses only TMX (src/parse/xml), and a property whose type or value it cannot
    parse fails the whole map (properties.rs PropertyValue::new: bool, float, int as i32,
    color #AARRGGBB or #RRGGBB, string, file, object, class)."""
    for name in ("unity", "bevy"):
        path = map_of(pack, name)
        root = ET.parse(path).getroot()
        assert root.get("version") == "1.8"
        assert {d.get("compression") for d in root.iter("data")} <= {None, "zlib", "gzip"}
        for prop in root.iter("property"):
            kind, value = prop.get("type", "string"), prop.get("value", prop.text or "")
            assert kind in {"bool", "float", "int", "color", "string", "file", "object", "class"}
            if kind == "bool":
                assert value in ("true", "false")
            elif kind == "int":
                assert -(2**31) <= int(value) < 2**31
            elif kind == "float":
                float(value)
            elif kind == "color":
                assert value.startswith("#") and len(value) in (7, 9)
                int(value[1:], 16)
        assert (pack / "tilesets" / "dungeon.tsx").is_file()


# Phaser 3, with its own parser.


def phaser_parse(paths: list[Path]) -> tuple[str, dict[str, dict[str, object]]]:
    proc = subprocess.run(
        [str(NODE), str(ROOT / "tests" / "phaser_parse.js"), *map(str, paths)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PHASER_DIR": str(PHASER_DIR)},
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    return out["version"], out["maps"]


@needs_phaser
def test_phaser_parses_the_phaser_maps_as_tiled_drew_them(pack: Path) -> None:
    """ParseJSONTiled (src/tilemaps/parsers/tiled): CSV arrays and uncompressed base64 both load
    (ParseTileLayers decodes base64 with Base64Decode) with no warning; tile properties reach
    Tileset.tileProperties as name -> value (ParseTilesets, for maps whose `version` > 1);
    objects keep `type` (ParseObject copies `type`, never `class`) and their properties."""
    version, maps = phaser_parse([map_of(pack, "phaser"), map_of(pack, "phaser_b64")])
    assert version.startswith("3.")
    hidden = {layer.get("name") for layer in ET.parse(map_of(pack, "tiled_tmx")).getroot().iter("layer") if layer.get("visible") == "0"}
    assert hidden, "the recipe's maps have data layers: the profile must be seen to leave them out"
    expected = {name: gids for name, gids in tmx_layers(map_of(pack, "tiled_tmx")).items() if name not in hidden}
    parsed = list(maps.values())
    for result in parsed:
        assert result["warnings"] == []
        layers = {layer["name"]: np.array(layer["indexes"]) for layer in result["layers"]}  # type: ignore[index]
        assert layers.keys() == expected.keys()
        for name, gids in expected.items():
            assert np.array_equal(layers[name], np.where(gids == 0, -1, gids.astype(np.int64))), name  # Phaser's empty tile is -1
        tileset = result["tilesets"][0]  # type: ignore[index]
        assert tileset["tileProperties"], tileset
        assert any(props.get("solid") is True for props in tileset["tileProperties"].values())
        objects = [o for group in result["objects"] for o in group["objects"]]  # type: ignore[index]
        assert {o["type"] for o in objects} >= {"room", "spawn", "exit", "chest", "path"}
        assert any(o["polyline"] for o in objects) and any(o["point"] for o in objects) and any(o["gid"] for o in objects)
    assert parsed[0]["layers"] == parsed[1]["layers"]


@needs_phaser
def test_phaser_skips_compressed_layers_which_is_why_the_profile_refuses_them(pack: Path) -> None:
    """ParseTileLayers: "Layer compression is unsupported, skipping layer" for any layer with a
    `compression`: a zlib map from the `tiled` profile loads with no tiles in Phaser."""
    _, maps = phaser_parse([map_of(pack, "tiled_zlib")])
    (result,) = maps.values()
    assert result["layers"] == []
    assert any("compression is unsupported" in w for w in result["warnings"])  # type: ignore[union-attr]


@needs_tiled
def test_real_tiled_loads_every_profiles_maps_with_their_properties(pack: Path, tmp_path: Path) -> None:
    """The engine-specific properties are ordinary typed Tiled properties: Tiled loads each map
    and keeps them (a designer may open and re-save the files)."""
    for name, *_ in EXPORTS:
        out = tmp_path / f"{name}.json"
        proc = subprocess.run(
            ["tiled", "--export-map", "json", str(map_of(pack, name)), str(out)], env=tiled_env(), capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, (name, proc.stderr)
        objects = tmj_objects(out)
        if name.startswith("godot"):
            assert any(props.get("godot_node_type") == ("string", "area") for _, props, _ in objects)
        if name == "unity":
            assert any(props.get("unity:IsTrigger") == ("bool", True) for _, props, _ in objects)


# The option rules.


def test_phaser_takes_uncompressed_base64_and_refuses_compression() -> None:
    values, problems = resolve("phaser", "tmj", {"encoding": "base64", "compression": None, "embed_tileset": None})
    assert problems == [] and values["encoding"] == "base64" and values["compression"] == "none"
    _, problems = resolve("phaser", "tmj", {"encoding": "base64", "compression": "zlib", "embed_tileset": None})
    assert [key for key, _ in problems] == ["compression"]


def test_godots_default_compression_is_for_base64_only() -> None:
    values, problems = resolve("godot", "tmx", {"encoding": None, "compression": None, "embed_tileset": None})
    assert problems == [] and (values["encoding"], values["compression"]) == ("base64", "zlib")
    values, problems = resolve("godot", "tmx", {"encoding": "csv", "compression": None, "embed_tileset": None})
    assert problems == [] and (values["encoding"], values["compression"]) == ("csv", "none")
    values, _ = resolve("godot", "tmj", {"encoding": None, "compression": "gzip", "embed_tileset": None})
    assert values["compression"] == "gzip"


def test_an_objects_own_property_wins_over_the_profiles() -> None:
    room = MapObject("room_1", "room", 1, 1, 3, 3, {"godot_node_type": "navigation"})
    door = MapObject("door", "door", 1, 1)
    out = profile_objects(PROFILES["godot"], [room, door])
    assert out[0].properties == {"godot_node_type": "navigation"}
    assert out[1] is door and object_shape(door) == "point"
    assert profile_objects(PROFILES["tiled"], [room]) == [room]


def test_a_pack_sharing_one_tileset_between_godot_and_another_profile_is_told_to_name_it(tmp_path: Path) -> None:
    """The `godot` tileset names its tile properties differently, so it cannot be the file another
    profile's export of the same pack writes: one line says which file and what to set."""
    (tmp_path / "tilesets").mkdir()
    shutil.copy(ROOT / "tilesets" / "dungeon.toml", tmp_path / "tilesets")
    export = '\n[stage.{0}]\nuse = "export.tmx"\ninput = "maze"\ndir = "{0}"\ntileset = "../tilesets/dungeon.toml"\nprofile = "{0}"\n'
    text = '[pack]\nname = "clash"\nseed = 1\nmaps = 1\n\n[stage.maze]\nuse = "maze.backtracker"\ncells = [4, 4]\n'
    write_recipe(tmp_path, "clash", text + export.format("tiled") + export.format("godot"))
    proc = pcg("build", "recipes", cwd=tmp_path, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    message = " ".join((proc.stdout + proc.stderr).split()).replace("│", "")
    # As the recipe loads, before any stage runs.
    assert message == (
        "error: recipes/clash.toml: stage.godot: writes tilesets/dungeon.tsx unlike stage.tiled, which writes it too"
        " (stage.godot: profile 'godot' names tile properties data_NAME): give one of them a tileset of its own with tileset_name"
    ), message
    assert not (tmp_path / "exports").exists()


def test_phaser_warns_when_a_recipe_asks_for_its_data_layers(pack: Path) -> None:
    from pipeline.recipe.load import load_recipe

    warnings = load_recipe(pack.parent.parent / "recipes" / "engines.toml").warnings()
    shown = [w for w in warnings if "Phaser 3 draws every tile layer" in w]
    assert len(shown) == 1 and "phaser_data" in shown[0], warnings


def test_asking_phaser_for_its_data_layers_rebuilds_the_maps_with_them(tmp_path: Path) -> None:
    """The stage's identity holds what it writes: `data_layers = true` under profile phaser is
    not the option left unset, so the maps are made again, now with the layers."""
    (tmp_path / "tilesets").mkdir()
    shutil.copy(ROOT / "tilesets" / "dungeon.toml", tmp_path / "tilesets")
    text = HEAD + '\n[stage.out]\nuse = "export.tmj"\ninput = "path"\ntileset = "../tilesets/dungeon.toml"\nprofile = "phaser"\npreview = false\n'
    write_recipe(tmp_path, "engines", text)
    pcg("build", "recipes", "-q", cwd=tmp_path)
    layers = lambda: [layer["name"] for layer in json.loads((tmp_path / "exports" / "engines" / "map_000.tmj").read_text())["layers"]]
    assert layers() == ["tiles", "objects"]
    write_recipe(tmp_path, "engines", text + "data_layers = true\n")
    pcg("build", "recipes", "-q", cwd=tmp_path)
    assert layers() == ["tiles", "room", "objects"]
