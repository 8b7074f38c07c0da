"""export.ldtk: an LDtk project of a pack, checked with LDtk's own JSON schema, loaded with
ldtkpy, and read back against the maps it was made from and the TMX drawn of the same maps."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest

from pipeline.building.cache import LevelCache
from pipeline.level import Color, Level
from conftest import TILESETS, pcg, tree_digests

ldtkpy = pytest.importorskip("ldtkpy.api", reason="ldtkpy is a test dependency (pip install -e '.[test]')")

SCHEMA_FILE = Path(__file__).resolve().parent / "data" / "ldtk" / "JSON_SCHEMA.json"  # LDtk 1.5.3's, MIT

RECIPE = """\
[pack]
name = "crypt"
seed = 77
maps = 3

[stage.rooms]
use = "dungeon.rooms_and_mazes"
size = [31, 21]
room_attempts = 30
room_size = [3, 7]

[stage.placed]
use = "place.spawn_exit"
input = "rooms"

[stage.chests]
use = "place.items"
input = "placed"
type = "chest"
count = 3
spacing = 4
tile = "chest"
properties = { gold = 25, weight = 2.5, locked = false, glow = "#ffa300", note = "old", big = 5000000000 }

[stage.route]
use = "place.path"
input = "chests"

[stage.tmx]
use = "export.tmx"
input = "route"
tileset = "../tilesets/stone.toml"
layers = [
  { name = "floor", tile = "floor" },
  { name = "walls", symbols = ["wall"] },
  { name = "doors", symbols = ["door"] },
]

[stage.ldtk]
use = "export.ldtk"
input = "route"
tileset = "../tilesets/stone.toml"
layers = [
  { name = "floor", tile = "floor" },
  { name = "walls", symbols = ["wall"] },
  { name = "doors", symbols = ["door"] },
]
"""


def _project_root(tmp: Path, text: str = RECIPE) -> Path:
    (tmp / "recipes").mkdir(parents=True)
    shutil.copytree(TILESETS, tmp / "tilesets")
    (tmp / "recipes" / "crypt.toml").write_text(text)
    return tmp


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = _project_root(tmp_path_factory.mktemp("ldtk"))
    pcg("build", "recipes", "-q", cwd=root)
    return root


def _pack(root: Path) -> Path:
    return root / "exports" / "crypt"


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _schema(ref: str = "#/LdtkJsonRoot") -> jsonschema.Draft7Validator:
    """LDtk's schema (draft 7), checking the root or one of its `otherTypes` (a level file)."""
    schema = {**_read(SCHEMA_FILE), "$ref": ref}
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def _levels(root: Path) -> list[dict[str, Any]]:
    ldtk = _pack(root) / "ldtk"
    return [_read(ldtk / head["externalRelPath"]) for head in _read(ldtk / "world.ldtk")["levels"]]


def _inlined(root: Path) -> dict[str, Any]:
    """The project as LDtk's single-file form: each level's file in place of its entry."""
    project = _read(_pack(root) / "ldtk" / "world.ldtk")
    full = copy.deepcopy(project)
    full["levels"] = _levels(root)
    return full


def _map_levels(root: Path) -> list[Level]:
    """The Levels the exporter was given, from the build's cache (keyed as the manifest says)."""
    cache = LevelCache(root / ".pcg-cache")
    manifest = _read(_pack(root) / "manifest.json")
    out = []
    for entry in sorted(manifest["maps"], key=lambda m: m["index"]):
        level = cache.load(entry["stages"]["route"]["key"])
        assert level is not None
        out.append(level)
    return out


def test_project_and_level_files_validate_against_ldtks_schema(built: Path) -> None:
    project = _read(_pack(built) / "ldtk" / "world.ldtk")
    _schema().validate(project)
    assert project["externalLevels"] is True and project["jsonVersion"].startswith("1.5.")
    level_schema = _schema("#/otherTypes/Level")
    for head, level in zip(project["levels"], _levels(built)):
        level_schema.validate(level)
        level_schema.validate(head)
        assert head["layerInstances"] is None and head["externalRelPath"] == f"world/{level['identifier']}.ldtkl"
        assert {k: v for k, v in head.items() if k not in ("layerInstances", "externalRelPath")} == {
            k: v for k, v in level.items() if k not in ("layerInstances", "externalRelPath")
        }
    # The single-file form (LDtk's other layout) validates too: the levels fit the definitions.
    _schema().validate(_inlined(built))


def test_ldtkpy_loads_the_project_and_its_levels(built: Path) -> None:
    project = ldtkpy.ldtk_json_from_dict(_read(_pack(built) / "ldtk" / "world.ldtk"))
    assert [level.identifier for level in project.levels] == ["map_000", "map_001", "map_002"]
    full = ldtkpy.ldtk_json_from_dict(_inlined(built))
    tileset = full.defs.tilesets[0]
    assert (tileset.rel_path, tileset.tile_grid_size, tileset.padding, tileset.spacing) == ("../tilesets/stone.png", 16, 2, 4)
    assert (_pack(built) / "ldtk" / tileset.rel_path).is_file()
    assert [layer.identifier for layer in full.defs.layers] == ["entities", "doors", "walls", "floor", "symbols"]
    uids = [d.uid for d in full.defs.entities] + [f.uid for d in full.defs.entities for f in d.field_defs]
    uids += [layer.uid for layer in full.defs.layers] + [level.uid for level in full.levels]
    assert len(set(uids)) == len(uids) and full.next_uid > max(uids)
    for level in full.levels:
        assert [li.identifier for li in level.layer_instances] == ["entities", "doors", "walls", "floor", "symbols"]


def _tmx_layers(path: Path) -> dict[str, np.ndarray]:
    root = ET.parse(path).getroot()
    out = {}
    for layer in root.iter("layer"):
        data = layer.find("data")
        assert data is not None and data.get("encoding") == "csv"
        rows = [r for r in data.text.strip().splitlines()]  # type: ignore[union-attr]
        out[layer.get("name")] = np.array([[int(v) for v in r.strip().rstrip(",").split(",")] for r in rows], dtype=np.int64)
    return out


def _ldtk_value(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**31) <= value < 2**31:
        return str(value)  # LDtk's Int is 32-bit: a String, as in Tiled
    return "#" + value[-6:].upper() if isinstance(value, Color) else value


def test_levels_hold_the_maps_symbols_the_tmx_tiles_and_the_objects(built: Path) -> None:
    levels, maps = _levels(built), _map_levels(built)
    assert len(levels) == len(maps) == 3
    project = _read(_pack(built) / "ldtk" / "world.ldtk")
    symbols = next(layer for layer in project["defs"]["layers"] if layer["identifier"] == "symbols")
    entity_defs = {d["uid"]: d for d in project["defs"]["entities"]}
    for doc, level in zip(levels, maps):
        assert [v["identifier"] for v in symbols["intGridValues"]] == [s.name for s in level.alphabet]
        layers = {li["__identifier"]: li for li in doc["layerInstances"]}
        grid = np.array(layers["symbols"]["intGridCsv"]).reshape(level.height, level.width)
        assert (grid == level.tiles + 1).all()
        # Every tile layer draws what the TMX exporter draws for the same map (autotiled walls too).
        tmx = _tmx_layers(_pack(built) / f"{doc['identifier']}.tmx")
        for name in ("floor", "walls", "doors"):
            gids = np.zeros((level.height, level.width), dtype=np.int64)
            for tile in layers[name]["gridTiles"]:
                x, y = tile["px"][0] // 16, tile["px"][1] // 16
                assert tile["d"] == [y * level.width + x]
                gids[y, x] = tile["t"] + 1
            assert (gids == tmx[name]).all(), name
        assert len(np.unique(tmx["walls"])) > 5  # the blob pieces, not one wall tile
        # Every object is an entity of its type, with its name and properties as typed fields.
        entities = layers["entities"]["entityInstances"]
        assert len(entities) == len(level.objects)
        kinds = {o.type for o in level.objects}
        assert {"spawn", "exit", "chest", "path"} <= kinds
        for obj, entity in zip(level.objects, entities):
            assert entity["__identifier"] == obj.type == entity_defs[entity["defUid"]]["identifier"]
            fields = {f["__identifier"]: f for f in entity["fieldInstances"]}
            assert fields["name"]["__value"] == obj.name
            for key, value in obj.properties.items():
                assert fields[key]["__value"] == _ldtk_value(value), key
                expected = {bool: "Bool", int: "Int", float: "Float", str: "String", Color: "Color"}[type(value)]
                expected = "String" if expected == "Int" and isinstance(_ldtk_value(value), str) else expected
                assert fields[key]["__type"] == expected
            if obj.w or obj.h:
                assert entity["px"] == [round(obj.x * 16), round(obj.y * 16)]
                assert [entity["width"], entity["height"]] == [round(obj.w * 16), round(obj.h * 16)]
            else:
                assert entity["__grid"] == [int(obj.x), int(obj.y)] and entity["width"] == entity["height"] == 16
            if obj.points:
                cells = [{"cx": int(obj.x + x), "cy": int(obj.y + y)} for x, y in obj.points]
                assert fields["points"]["__value"] == cells
            if obj.tile:
                assert entity["__tile"] is not None
        level_fields = {f["__identifier"]: f["__value"] for f in doc["fieldInstances"]}
        assert level_fields["pack"] == "crypt" and level_fields["seed"] == "77"
        for key, value in level.properties.items():
            assert level_fields[key] == _ldtk_value(value)
        # Data layers are level fields NAME_values, holding what the TMX data layer's `values` holds.
        assert level.layers and {f"{name}_values" for name in level.layers} <= set(level_fields)
        tmx_values = {n.get("name"): n.find("properties/property[@name='values']").get("value") for n in ET.parse(_pack(built) / f"{doc['identifier']}.tmx").iter("layer") if n.find("properties") is not None}
        for name, values in level.layers.items():
            decoded = np.frombuffer(base64.b64decode(level_fields[f"{name}_values"]), "<i4").reshape(level.height, level.width)
            assert (decoded == values).all(), name
            assert level_fields[f"{name}_values"] == tmx_values[name]
    level_defs = {d["identifier"]: d["__type"] for d in project["defs"]["levelFields"]}
    assert level_defs["room_values"] == "String"
    defs = {d["identifier"]: d for d in project["defs"]["entities"]}
    assert defs["chest"]["renderMode"] == "Tile"
    chest_fields = {f["identifier"]: f["__type"] for f in defs["chest"]["fieldDefs"]}
    assert chest_fields == {"gold": "Int", "weight": "Float", "locked": "Bool", "glow": "Color", "note": "String", "big": "String", "index": "Int", "name": "String"}
    assert {f["identifier"]: f["__type"] for f in defs["path"]["fieldDefs"]}["points"] == "Array<Point>"


def test_two_builds_write_the_same_bytes_and_verify_passes(built: Path, tmp_path: Path) -> None:
    again = _project_root(tmp_path)
    pcg("build", "recipes", "-q", cwd=again)
    first, second = tree_digests(_pack(built) / "ldtk"), tree_digests(_pack(again) / "ldtk")
    assert first == second and "world.ldtk" in first and "world/map_002.ldtkl" in first
    pcg("verify", "exports/crypt", cwd=again)


def test_the_project_follows_the_pack(tmp_path: Path) -> None:
    root = _project_root(tmp_path)
    pcg("build", "recipes", "-q", cwd=root)
    project = _pack(root) / "ldtk" / "world.ldtk"
    written = project.stat().st_mtime_ns
    pcg("build", "recipes", "-q", cwd=root)  # nothing changed: the project is not rewritten
    assert project.stat().st_mtime_ns == written
    (root / "recipes" / "crypt.toml").write_text(RECIPE.replace("maps = 3", "maps = 2"))
    pcg("build", "recipes", "-q", cwd=root)
    assert [h["identifier"] for h in _read(project)["levels"]] == ["map_000", "map_001"]
    assert not (_pack(root) / "ldtk" / "world" / "map_002.ldtkl").exists()
    # data_layers = false leaves the layers' fields out of the levels and the project.
    (root / "recipes" / "crypt.toml").write_text(RECIPE.replace("maps = 3", "maps = 2").replace('use = "export.ldtk"\n', 'use = "export.ldtk"\ndata_layers = false\n'))
    pcg("build", "recipes", "-q", cwd=root)
    assert "room_values" not in {d["identifier"] for d in _read(project)["defs"]["levelFields"]}
    assert not any(f["__identifier"] == "room_values" for doc in _levels(root) for f in doc["fieldInstances"])


def test_a_project_edited_since_the_build_is_made_again_and_said_so(tmp_path: Path) -> None:
    """LDtk keeps the header that says what the project was made of when it saves: the build
    compares the file with the digest it recorded, as it does a map's files."""
    root = _project_root(tmp_path)
    pcg("build", "recipes", "-q", cwd=root)
    project = _pack(root) / "ldtk" / "world.ldtk"
    good = project.read_bytes()
    for command in (["build", "recipes"], ["build", "recipes", "--force"]):
        project.write_bytes(good.replace(b'"bgColor": "#40465B"', b'"bgColor": "#112233"', 1))
        assert project.read_bytes() != good
        explained = pcg("explain", "crypt", cwd=root).stdout
        assert f"{project.relative_to(root)} was edited since the last build: `pcg build` makes it again." in " ".join(explained.split()), explained
        assert "No stage to run: `pcg build` would only remake those files." in explained, explained  # not "Up to date"
        assert pcg("explain", "crypt", "--check", cwd=root, check=False).returncode == 1
        built = pcg(*command, cwd=root)
        assert project.read_bytes() == good
        assert f"warning: recipes/crypt.toml: {project.relative_to(root)}: edited since the last build; made again" in " ".join(built.stderr.split()), built.stderr
    assert "edited" not in pcg("explain", "crypt", cwd=root).stdout
    pcg("verify", "crypt", cwd=root)


@pytest.mark.parametrize("edited", [False, True])
def test_a_recipe_without_the_stage_leaves_no_project_behind_unless_it_was_edited(tmp_path: Path, edited: bool) -> None:
    root = _project_root(tmp_path)
    pcg("build", "recipes", "-q", cwd=root)
    project = _pack(root) / "ldtk" / "world.ldtk"
    recorded = json.loads((_pack(root) / "manifest.json").read_text())["pack_files"]
    assert {k: v for k, v in recorded.items() if k.startswith("ldtk/")} == {"ldtk/world.ldtk": hashlib.sha256(project.read_bytes()).hexdigest()}
    if edited:  # saved from LDtk since: the user's work, kept
        project.write_bytes(project.read_bytes().replace(b'"bgColor"', b'"bgColor" ', 1))
    (root / "recipes" / "crypt.toml").write_text(RECIPE[: RECIPE.index(_LDTK_STAGE)])
    pcg("build", "recipes", "-q", cwd=root)
    assert project.exists() == edited
    assert not list((_pack(root) / "ldtk" / "world").glob("*.ldtkl"))
    assert not [k for k in json.loads((_pack(root) / "manifest.json").read_text()).get("pack_files", {}) if k.startswith("ldtk/")]


_LDTK_STAGE = '[stage.ldtk]\nuse = "export.ldtk"\ninput = "route"\ntileset = "../tilesets/stone.toml"\nlayers = [\n  { name = "floor"'


@pytest.mark.parametrize(
    ("stage", "words"),
    [
        # A tile layer named as the layer of the objects.
        (_LDTK_STAGE.replace('name = "floor"', 'name = "entities"'), ["layers", "'entities'", "rename"]),
        # A tileset whose tiles are not square (LDtk's grid is one size).
        (_LDTK_STAGE.replace("stone.toml", "wide.toml"), ["tileset", "square", "16 x 8"]),
    ],
)
def test_bad_options_are_one_clear_error(tmp_path: Path, stage: str, words: list[str]) -> None:
    assert _LDTK_STAGE in RECIPE
    root = _project_root(tmp_path, RECIPE.replace(_LDTK_STAGE, stage))
    (root / "tilesets" / "wide.toml").write_text("tile_size = [16, 8]\n")
    proc = pcg("build", "recipes", "-q", cwd=root, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Traceback" not in out
    assert not (root / "exports" / "crypt").exists()
    line = next((l for l in out.splitlines() if "stage.ldtk." in l), "")
    assert line.startswith("error: recipes/crypt.toml: stage.ldtk.") and all(w in line for w in words), out


def test_a_stat_whole_in_one_map_and_fractional_in_another_is_a_float_field(built: Path) -> None:
    from pipeline.ldtk.project import project_json

    ldtk = _pack(built) / "ldtk"
    docs = [(f"world/{d['identifier']}.ldtkl", d) for d in _levels(built)]
    docs[1][1]["fieldInstances"] = [
        {**f, "__type": "Float", "__value": 0.5, "realEditorValues": [{"id": "V_Float", "params": [0.5]}]} if f["__identifier"] == "rooms" else f
        for f in docs[1][1]["fieldInstances"]
    ]
    project = json.loads(project_json("crypt", 77, "world", _read(ldtk / "world" / "defs.json"), docs, "key"))
    _schema().validate(project)
    types = {f["identifier"]: f["__type"] for f in project["defs"]["levelFields"]}
    assert types["rooms"] == "Float" and types["seed"] == "String" and types["pack"] == "String"
    assert json.loads(project_json("crypt", 77, "world", _read(ldtk / "world" / "defs.json"), docs, "key")) == project


def test_a_number_past_32_bits_in_one_map_makes_the_field_a_string() -> None:
    from pipeline.ldtk.fields import merged_type, property_fields

    fields = property_fields({"small": 2**31 - 1, "big": 2**31, "low": -(2**31) - 1}, lambda ident: 1, "map")
    assert [(f["__identifier"], f["__type"], f["__value"]) for f in fields] == [
        ("big", "String", "2147483648"), ("low", "String", "-2147483649"), ("small", "Int", 2147483647)
    ]
    assert merged_type(["Int", "String"]) == merged_type(["String", "Float", "Int"]) == "String"
    assert merged_type(["Int", "Float"]) == "Float" and merged_type(["Color", "String"]) == merged_type(["Bool", "Int"]) == "String"


MIXED = """\
[pack]
name = "mixed"
seed = 9
maps = 1

[stage.m]
use = "maze.backtracker"
cells = [8, 8]

[stage.a]
use = "place.items"
input = "m"
type = "chest"
count = 1
properties = { gold = 1, big = 5, flag = true }

[stage.b]
use = "place.items"
input = "a"
type = "chest"
count = 1
properties = { gold = 1.5, big = 99999999999, flag = 3 }

[stage.ldtk]
use = "export.ldtk"
input = "b"
"""


def test_a_field_two_objects_of_a_map_give_two_types_has_the_definitions_type_in_both(tmp_path: Path) -> None:
    """LDtk reads a value by its field's type and throws on another: the first chest's whole
    `gold` must be a Float where the second's is 1.5."""
    root = _project_root(tmp_path, MIXED)
    (root / "recipes" / "crypt.toml").rename(root / "recipes" / "mixed.toml")
    pcg("build", "recipes", "-q", cwd=root)
    ldtk = root / "exports" / "mixed" / "ldtk"
    project = _read(ldtk / "world.ldtk")
    _schema().validate(project)
    (chest,) = [d for d in project["defs"]["entities"] if d["identifier"] == "chest"]
    types = {f["identifier"]: f["__type"] for f in chest["fieldDefs"]}
    assert (types["gold"], types["big"], types["flag"]) == ("Float", "String", "String")
    instances = [e for layer in _read(ldtk / "world" / "map_000.ldtkl")["layerInstances"] for e in layer["entityInstances"] if e["__identifier"] == "chest"]
    values = sorted((f["__identifier"], f["__type"], f["__value"], f["realEditorValues"][0]["id"]) for e in instances for f in e["fieldInstances"] if f["__identifier"] in ("big", "flag", "gold"))
    assert values == [
        ("big", "String", "5", "V_String"), ("big", "String", "99999999999", "V_String"),
        ("flag", "String", "3", "V_String"), ("flag", "String", "true", "V_String"),
        ("gold", "Float", 1.0, "V_Float"), ("gold", "Float", 1.5, "V_Float"),
    ]
    ldtkpy.ldtk_json_from_dict(project)


def test_an_objects_own_name_property_is_refused_not_silently_dropped(tmp_path: Path) -> None:
    root = _project_root(tmp_path, MIXED.replace("flag = true", 'name = "mine"'))
    proc = pcg("build", "recipes", cwd=root, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "its property 'name' would hide the LDtk field of its name; rename it" in " ".join(proc.stderr.split()), proc.stderr
