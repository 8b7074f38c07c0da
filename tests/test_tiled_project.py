"""The Tiled project beside a pack: a class for every object type its maps hold, typed members,
enums for room roles, door sides and stairs, and the same classes as object types for Tiled 1.8.
Opened in the real Tiled, which resolves each object's class members and enum words; pytmx keeps
reading the maps; the project follows the pack as the LDtk project does."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import pytmx
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import RECIPES, TILED, TILESETS, needs_tiled, pcg, tiled_env, write_recipe
from pipeline.errors import PipelineError
from pipeline.level import Color, ObjectRef
from pipeline.tiled.custom_types import ENUMS, enum_members
from pipeline.tiled.project import OBJECT_TYPES_SUFFIX, PROJECT_SUFFIX, project_files
from pipeline.tiled.read.model import TiledObject
from pipeline.tiled.read.objects import map_objects

# A plugin stage of the test's own: a type no built-in stage makes, with a property of each type.
BEACONS = '''\
from __future__ import annotations

from typing import ClassVar

import numpy as np

from pipeline.level import Color, FilePath, Level, MapObject, ObjectRef
from pipeline.registry import StageParams, stage


@stage("test.beacons", version=1)
class Beacons(StageParams):
    """Two beacons by the first room, the second pointing at the first."""

    arity: ClassVar[tuple[int, int]] = (1, 1)

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        level = inputs[0]
        room = next(o for o in level.objects if o.type == "room")
        props = {"range": 2.5, "lit": True, "charges": 3, "glow": Color("#ff8800"), "sound": FilePath("hum.ogg"), "call": "hello"}
        beacons = [
            MapObject("beacon_1", "beacon", room.x + 0.5, room.y + 0.5, properties=props, ref="beacon:1"),
            MapObject("beacon_2", "beacon", room.x + 1.5, room.y + 0.5, properties={"charges": 1.5, "next": ObjectRef("beacon:1")}),
        ]
        return Level(tiles=level.tiles, alphabet=level.alphabet, layers=dict(level.layers), objects=[*level.objects, *beacons],
                     properties=dict(level.properties))
'''


def levels_recipe() -> str:
    """The example level-graph pack (roles, doors, keys, a custom role) with the beacon plugin."""
    text = (RECIPES / "levels.toml").read_text().replace("maps = 6", "maps = 2")
    text = text.replace('description = "', 'plugins = ["stages/beacons.py"]\ndescription = "', 1)
    return text.replace('[stage.tmx]\nuse = "export.tmx"\ninput = "floor"', '[stage.lit]\nuse = "test.beacons"\ninput = "floor"\n\n[stage.tmx]\nuse = "export.tmx"\ninput = "lit"')


def levels_project(root: Path) -> Path:
    """A project of the levels recipe, its beacon plugin and the tilesets it reads, built; its pack."""
    (root / "recipes" / "stages").mkdir(parents=True)
    (root / "recipes" / "stages" / "beacons.py").write_text(BEACONS)
    shutil.copytree(TILESETS, root / "tilesets")
    write_recipe(root, "levels", levels_recipe())
    pcg("build", "recipes", "-q", cwd=root)
    return root / "exports" / "levels"


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return levels_project(tmp_path_factory.mktemp("project"))


def declared(pack: Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    doc = json.loads((pack / f"maps{PROJECT_SUFFIX}").read_text())
    types = {t["name"]: t for t in doc["propertyTypes"]}
    return doc, types


def test_every_object_type_the_maps_hold_is_a_class_with_a_member_of_its_type_for_every_property(pack: Path) -> None:
    doc, types = declared(pack)
    assert doc["folders"] == ["."] and doc["objectTypesFile"] == f"maps{OBJECT_TYPES_SUFFIX}"
    seen: dict[str, set[str]] = {}
    for path in sorted(pack.glob("map_*.tmx")):
        for obj in ET.parse(path).getroot().iter("object"):
            cls = obj.get("type", "")
            assert cls in types and types[cls]["type"] == "class" and types[cls]["useAs"] == ["object"], cls
            members = {m["name"]: m for m in types[cls]["members"]}
            for prop in obj.iter("property"):
                member = members[prop.get("name")]
                # Where two types meet: numbers as a float, anything else as a string (the map keeps its own).
                assert member["type"] in (prop.get("type", "string"), "string") or (member["type"], prop.get("type")) == ("float", "int"), (cls, prop.attrib, member)
                assert member.get("propertyType") == prop.get("propertytype"), (cls, prop.attrib, member)
                seen.setdefault(cls, set()).add(prop.get("name", ""))
    # Every class is one the maps hold, with just the members they carry.
    assert {name for name, t in types.items() if t["type"] == "class"} == set(seen)
    assert {cls: {m["name"] for m in types[cls]["members"]} for cls in seen} == seen
    assert {"room", "door", "key", "spawn", "exit", "beacon"} <= set(seen)
    beacon = {m["name"]: (m["type"], m["value"]) for m in types["beacon"]["members"]}
    # charges is an int on one beacon and 1.5 on the other: a float member.
    assert beacon == {
        "call": ("string", ""), "charges": ("float", 0), "glow": ("color", ""), "lit": ("bool", False),
        "next": ("object", 0), "range": ("float", 0), "sound": ("file", ""),
    }


def test_room_roles_are_an_enum_with_the_words_every_pack_knows_and_this_packs_own(pack: Path) -> None:
    _, types = declared(pack)
    roles = types["RoomRole"]
    assert roles["type"] == "enum" and roles["storageType"] == "string" and not roles["valuesAsFlags"]
    assert roles["values"] == ["", "start", "boss", "exit", "treasure", "secret", "shop"]  # "shop": the recipe's own
    assert types["DoorSide"]["values"] == ["", "north", "east", "south", "west"]
    assert "StairsDirection" not in types  # no stairs in this pack
    role = next(m for m in types["room"]["members"] if m["name"] == "role")
    assert role == {"name": "role", "propertyType": "RoomRole", "type": "string", "value": ""}
    # Enums first, then classes by name; ids from 1.
    assert [t["id"] for t in types.values()] == list(range(1, len(types) + 1))


def test_the_object_types_file_holds_the_same_classes_for_tiled_1_8(pack: Path) -> None:
    _, types = declared(pack)
    object_types = json.loads((pack / f"maps{OBJECT_TYPES_SUFFIX}").read_text())
    as_classes = {
        t["name"]: (t["color"], [{"name": m["name"], "type": m["type"], "value": m["value"], **({"propertyType": m["propertytype"]} if "propertytype" in m else {})} for m in t["properties"]])
        for t in object_types
    }
    assert as_classes == {name: (t["color"], t["members"]) for name, t in types.items() if t["type"] == "class"}


def test_pytmx_reads_the_maps_with_their_enum_words_as_strings(pack: Path) -> None:
    tmx = pytmx.TiledMap(str(pack / "map_000.tmx"))
    roles = {o.properties.get("role") for o in tmx.objects if o.type == "room"}
    assert {"start", "boss", "shop"} <= roles


# What Tiled itself makes of the project and a map, told by a script of Tiled's own (an
# extension): every object's own and resolved properties (an enum word as its enum and index),
# and the map saved again by Tiled's TMX writer.
REPORTER = """\
tiled.assetOpened.connect(function (asset) {
  if (!asset.isTileMap) return;
  var dir = asset.fileName.replace(/\\/[^\\/]*$/, "");
  var plain = function (props) {
    var out = {};
    for (var k in props) {
      var v = props[k];
      out[k] = (v !== null && typeof v === "object" && v.typeName !== undefined) ? {enum: v.typeName, index: v.value} : v;
      if (v !== null && typeof v === "object" && v.id !== undefined) out[k] = {object: v.id};
      if (v !== null && typeof v === "object" && v.url !== undefined) out[k] = {file: String(v.url)};
    }
    return out;
  };
  var report = {objects: []};
  try {
    for (var i = 0; i < asset.layerCount; ++i) {
      var layer = asset.layerAt(i);
      if (!layer.isObjectLayer) continue;
      for (var j = 0; j < layer.objectCount; ++j) {
        var o = layer.objectAt(j);
        report.objects.push({name: o.name, type: o.type, own: plain(o.properties()), resolved: plain(o.resolvedProperties())});
      }
    }
    tiled.mapFormat("tmx").write(asset, dir + "/saved_by_tiled.tmx");
  } catch (e) {
    report.error = String(e);
  }
  var out = new TextFile(dir + "/tiled_report.json", TextFile.WriteOnly);
  out.write(JSON.stringify(report));
  out.commit();
});
"""


def tiled_opens(project: Path, map_file: Path, home: Path) -> dict[str, Any]:
    """Open the project and the map in the real Tiled (the editor, with no screen) and return what
    the reporter saw. Tiled 1.8 opens a project given on its command line only when the
    project's session names it, as Tiled writes it once a user has opened the project."""
    config = home / ".config"
    (config / "tiled" / "extensions").mkdir(parents=True)
    (config / "tiled" / "extensions" / "report.js").write_text(REPORTER)
    project.with_suffix(".tiled-session").write_text(json.dumps({"project": project.name}))
    report = map_file.parent / "tiled_report.json"
    env = {**tiled_env(), "HOME": str(home), "XDG_CONFIG_HOME": str(config), "XDG_DATA_HOME": str(home / ".local" / "share")}
    proc = subprocess.Popen([str(TILED), str(project), str(map_file)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while not report.is_file() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(0.2)  # committed in one rename, but let the saved map land too
    finally:
        proc.kill()
        _, err = proc.communicate()
    assert report.is_file(), f"Tiled never reported (exit {proc.returncode}):\n{err.decode(errors='replace')[-2000:]}"
    found = json.loads(report.read_text())
    assert "error" not in found, found["error"]
    return found


@needs_tiled
def test_tiled_opens_the_project_and_a_map_and_resolves_each_objects_class_and_enum_words(pack: Path, tmp_path: Path) -> None:
    copy = tmp_path / "pack"
    shutil.copytree(pack, copy)
    _, types = declared(pack)
    seen = tiled_opens(copy / f"maps{PROJECT_SUFFIX}", copy / "map_000.tmx", tmp_path / "home")
    objects = {o["name"]: o for o in seen["objects"]}
    roles = types["RoomRole"]["values"]
    for obj in seen["objects"]:
        # Every member of its class, with the map's own values over the class's empty ones.
        assert set(obj["resolved"]) == {m["name"] for m in types[obj["type"]]["members"]}, obj
    start = next(o for o in seen["objects"] if o["own"].get("role") == {"enum": "RoomRole", "index": roles.index("start")})
    assert start["type"] == "room"
    plain = next(o for o in seen["objects"] if o["type"] == "room" and "role" not in o["own"])
    assert plain["resolved"]["role"] == {"enum": "RoomRole", "index": 0}  # "": no role, not a start room
    assert plain["resolved"]["boss"] == ""  # a member only the boss room carries, empty on the others
    door = next(o for o in seen["objects"] if o["type"] == "door" and "direction" in o["own"])
    assert door["own"]["direction"]["enum"] == "DoorSide" and door["own"]["direction"]["index"] > 0
    assert objects["beacon_1"]["own"] == {
        "call": "hello", "charges": 3, "glow": objects["beacon_1"]["own"]["glow"], "lit": True, "range": 2.5, "sound": {"file": objects["beacon_1"]["own"]["sound"]["file"]},
    }
    assert objects["beacon_1"]["own"]["sound"]["file"].endswith("hum.ogg")
    assert objects["beacon_2"]["resolved"]["lit"] is False and objects["beacon_2"]["resolved"]["call"] == ""
    # Saved by Tiled, the map keeps each object's type and every enum word with its enum.
    ours, theirs = (
        [(o.get("type"), [(p.get("name"), p.get("type"), p.get("propertytype"), p.get("value")) for p in o.iter("property")]) for o in ET.parse(f).getroot().iter("object")]
        for f in (copy / "map_000.tmx", copy / "saved_by_tiled.tmx")
    )
    assert theirs == ours


@needs_tiled
def test_tiled_exports_a_map_whose_properties_name_enums_without_the_project(pack: Path, tmp_path: Path) -> None:
    out = tmp_path / "exported.tmj"
    done = subprocess.run([str(TILED), "--export-map", "json", str(pack / "map_000.tmx"), str(out)], env=tiled_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    doc = json.loads(out.read_text())
    roles = [p["value"] for layer in doc["layers"] if layer["type"] == "objectgroup" for o in layer["objects"] for p in o.get("properties", []) if p["name"] == "role"]
    assert {"start", "boss", "shop"} <= set(roles)


def test_the_project_follows_the_pack_and_is_made_again_when_edited(tmp_path: Path) -> None:
    # Made the same on any number of workers: test_build compares whole packs, this file included.
    root = tmp_path
    pack = levels_project(root)
    project = pack / f"maps{PROJECT_SUFFIX}"
    first = project.read_bytes()
    assert "Nothing to do" in pcg("build", "recipes", cwd=root).stdout and project.read_bytes() == first
    # Edited in Tiled (a folder added): a build owns its files, and says it made it again.
    project.write_text(project.read_text().replace('"folders": [\n        "."\n    ]', '"folders": [".", "../other"]'))
    rebuilt = pcg("build", "recipes", cwd=root)
    assert "maps.tiled-project: edited since the last build; made again" in " ".join(rebuilt.stderr.split()) and project.read_bytes() == first
    # Opened in Tiled, which keeps its session beside the project: the user's file, not ours.
    session = pack / "maps.tiled-session"
    session.write_text('{"project": "maps.tiled-project"}')
    assert pcg("verify", "levels", cwd=root).returncode == 0
    session.unlink()  # (a session left by a project no build writes any more is the user's to remove)
    # The object types file edited in Tiled 1.8's editor (the project itself untouched), with no
    # manifest to say what the build wrote: made again all the same.
    (pack / "manifest.json").unlink()
    types_file = pack / f"maps{OBJECT_TYPES_SUFFIX}"
    types_file.write_text(types_file.read_text().replace('"name": "beacon"', '"name": "lamp"'))
    pcg("build", "recipes", "-q", cwd=root)
    assert '"name": "beacon"' in types_file.read_text() and project.read_bytes() == first
    # The beacons go: so does their class.
    write_recipe(root, "levels", levels_recipe().replace('input = "lit"', 'input = "floor"'))
    pcg("build", "recipes", "-q", cwd=root)
    assert "beacon" not in {t["name"] for t in json.loads(project.read_text())["propertyTypes"]}
    # Renamed, and then none: the old files go with the manifest that claimed them.
    write_recipe(root, "levels", levels_recipe().replace('input = "lit"', 'input = "floor"\nproject = "floor"'))
    pcg("build", "recipes", "-q", cwd=root)
    assert not project.exists() and (pack / f"floor{PROJECT_SUFFIX}").is_file() and (pack / f"floor{OBJECT_TYPES_SUFFIX}").is_file()
    assert json.loads((pack / f"floor{PROJECT_SUFFIX}").read_text())["objectTypesFile"] == f"floor{OBJECT_TYPES_SUFFIX}"
    write_recipe(root, "levels", levels_recipe().replace('input = "lit"', 'input = "floor"\nproject = ""'))
    pcg("build", "recipes", "-q", cwd=root)
    assert not list(pack.glob("*.tiled-project")) and not list(pack.glob(f"*{OBJECT_TYPES_SUFFIX}"))
    # No project to declare the enums: the maps name none Tiled would not know.
    assert "propertytype" not in (pack / "map_000.tmx").read_text() and 'name="role"' in (pack / "map_000.tmx").read_text()
    assert pcg("verify", "levels", cwd=root).returncode == 0


def test_two_tiled_exporters_in_one_folder_share_its_project(tmp_path: Path) -> None:
    write_recipe(tmp_path, "two", TWO_EXPORTERS)
    pcg("build", "recipes", "-q", cwd=tmp_path)
    pack = tmp_path / "exports" / "two"
    assert {p.name for p in pack.glob("*.tiled-project")} == {"maps.tiled-project"}
    _, types = declared(pack)
    # The TMX map's rooms and the JSON map's spawn and exit: the folder's objects, whoever wrote them.
    assert "room" not in (pack / "map_000.tmj").read_text() and "spawn" not in (pack / "map_000.tmx").read_text()
    assert {"room", "spawn", "exit"} <= set(types)
    assert pcg("verify", "two", cwd=tmp_path).returncode == 0
    # A map changes: the first exporter makes the project again, and the second does not take
    # those new bytes for an edit of the user's.
    write_recipe(tmp_path, "two", TWO_EXPORTERS.replace("seed = 3", "seed = 4"))
    again = pcg("build", "recipes", cwd=tmp_path)
    assert "edited" not in again.stderr and "edited" not in pcg("explain", cwd=tmp_path).stdout, again.stderr
    # Projects of their own names: each the folder's, the same classes.
    write_recipe(tmp_path, "two", TWO_EXPORTERS.replace('use = "export.tmj"', 'use = "export.tmj"\nproject = "json"'))
    pcg("build", "recipes", "-q", cwd=tmp_path)
    assert {p.name for p in pack.glob("*.tiled-project")} == {"maps.tiled-project", "json.tiled-project"}
    own = json.loads((pack / "json.tiled-project").read_text())
    assert own["propertyTypes"] == json.loads((pack / "maps.tiled-project").read_text())["propertyTypes"]
    assert own["objectTypesFile"] == "json.objecttypes.json"


TWO_EXPORTERS = """\
[pack]
name = "two"
seed = 3
maps = 1

[stage.maze]
use = "maze.backtracker"
cells = [5, 5]

[stage.placed]
use = "place.spawn_exit"
input = "maze"

[stage.dungeon]
use = "dungeon.bsp"
size = [30, 20]

[stage.tmx]
use = "export.tmx"
input = "dungeon"

[stage.tmj]
use = "export.tmj"
input = "placed"
preview = false
tileset_name = "maze"
"""


def test_export_lua_writes_no_project(tmp_path: Path) -> None:
    lua = TWO_EXPORTERS.replace('use = "export.tmj"', 'use = "export.lua"').replace('[stage.tmj]', '[stage.love]\ndir = "love"')
    write_recipe(tmp_path, "two", lua)
    pcg("build", "recipes", "-q", cwd=tmp_path)
    assert not list((tmp_path / "exports" / "two" / "love").glob("*.tiled-project"))
    write_recipe(tmp_path, "two", lua.replace('dir = "love"', 'dir = "love"\nproject = "maps"'))
    bad = pcg("build", "recipes", cwd=tmp_path, check=False)
    assert bad.returncode == 1 and "stage.love.project: export.lua writes no Tiled project: STI reads none" in bad.stderr, bad.stderr


def obj(cls: str, **props: Any) -> TiledObject:
    return TiledObject(1, "o", cls, (0, 0, 0, 0), 0, None, False, 0.0, props)


def test_members_two_types_meet_in_and_enum_words_of_other_types() -> None:
    files = project_files("p", [obj("room", role="vault", area=3), obj("room", area=2.5, lit=True), obj("room", lit=1, role=5), obj("")], "k")
    doc = json.loads(files[PROJECT_SUFFIX])
    room = next(t for t in doc["propertyTypes"] if t["name"] == "room")
    assert [(m["name"], m["type"], m.get("propertyType")) for m in room["members"]] == [
        ("area", "float", None), ("lit", "string", None), ("role", "string", None),  # an int met the role's words: a plain string
    ]
    # No member holds the enum, but a map writes "vault" with its name: it is declared all the same.
    assert [t["name"] for t in doc["propertyTypes"]] == ["RoomRole", "room"]
    assert doc["propertyTypes"][0]["values"] == ["", "start", "boss", "exit", "treasure", "secret", "vault"]
    assert json.loads(files[OBJECT_TYPES_SUFFIX])[0]["name"] == "room"


def test_the_project_is_current_only_for_its_maps_its_object_types_file_and_the_code_that_made_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline.tiled import project as made

    key = made.sources_key("maps", [("map_000.tmx", "a" * 64)])
    for suffix, data in project_files("maps", [obj("room", role="boss")], key).items():
        (tmp_path / f"maps{suffix}").write_bytes(data)
    paths = tmp_path / f"maps{PROJECT_SUFFIX}", tmp_path / f"maps{OBJECT_TYPES_SUFFIX}"
    assert made.is_current(*paths, key)
    assert not made.is_current(*paths, made.sources_key("maps", [("map_000.tmx", "b" * 64)]))
    monkeypatch.setattr(made, "_maker", lambda: "another release")
    assert made.sources_key("maps", [("map_000.tmx", "a" * 64)]) != key
    paths[1].write_bytes(paths[1].read_bytes().replace(b"room", b"hall"))
    assert not made.is_current(*paths, key)
    paths[1].unlink()
    assert not made.is_current(*paths, key)


def test_an_object_type_named_like_an_enum_is_refused() -> None:
    with pytest.raises(PipelineError, match="objects of type 'RoomRole' would have the name of the project's enum RoomRole: rename their type, or write no project"):
        project_files("p", [obj("room", role="start"), obj("RoomRole", x=1)], "k")


def test_object_references_colours_and_files_are_typed_members() -> None:
    doc = json.loads(project_files("p", [obj("lamp", at=ObjectRef("3"), tint=Color("#102030"))], "k")[PROJECT_SUFFIX])
    lamp = doc["propertyTypes"][0]
    assert lamp["members"] == [{"name": "at", "type": "object", "value": 0}, {"name": "tint", "type": "color", "value": ""}]


def test_objects_of_an_embedded_tilesets_tiles_are_not_the_maps(tmp_path: Path) -> None:
    path = tmp_path / "m.tmx"
    path.write_text(
        '<map width="1" height="1" tilewidth="8" tileheight="8" orientation="orthogonal">'
        '<tileset firstgid="1" name="t" tilewidth="8" tileheight="8" tilecount="1" columns="1"><image source="t.png" width="8" height="8"/>'
        '<tile id="0"><objectgroup><object id="1" x="0" y="0" width="8" height="8"/></objectgroup></tile></tileset>'
        '<layer id="1" name="l" width="1" height="1"><data encoding="csv">1</data></layer>'
        '<objectgroup id="2" name="objects"><object id="5" name="s" type="spawn" x="4" y="4"><properties><property name="n" type="int" value="2"/></properties><point/></object></objectgroup>'
        "</map>"
    )
    found = map_objects(path)
    assert [(o.id, o.cls, o.properties) for o in found] == [(5, "spawn", {"n": 2})]


def test_object_layers_found_by_their_tags_are_what_a_whole_parse_finds(pack: Path, tmp_path: Path) -> None:
    from pipeline.tiled.read.objects import _streamed

    maps = sorted(pack.glob("map_*.tmx"))
    assert maps and all(map_objects(p) == _streamed(p, []) and map_objects(p) for p in maps)
    # A comment (never written by Tiled) could hide a tag: such a file is parsed whole.
    odd = tmp_path / "odd.tmx"
    odd.write_bytes(maps[0].read_bytes().replace(b"<objectgroup", b"<!-- <objectgroup id='9'><object id='99' type='ghost'/></objectgroup> --><objectgroup", 1))
    assert map_objects(odd) == _streamed(maps[0], [])


XML_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\ufffe\uffff"), max_size=12)


@settings(max_examples=60, deadline=None)
@given(
    objects=st.lists(st.tuples(XML_TEXT, XML_TEXT, st.dictionaries(XML_TEXT.filter(bool), st.one_of(XML_TEXT, st.integers(-5, 5), st.booleans()), max_size=3)), max_size=4),
    embedded=st.booleans(),
)
def test_object_layers_are_found_by_their_tags_whatever_the_objects_say(tmp_path_factory: pytest.TempPathFactory, objects: list[Any], embedded: bool) -> None:
    """Names, types and values with `<`, `>`, `&`, quotes and line breaks, written as our TMX
    writer writes them: the objects found by their tags are those a whole parse finds."""
    from pipeline.level import MapObject
    from pipeline.tiled.read.objects import _streamed
    from pipeline.tiled.tmx import object_element
    from pipeline.tiled.xmlout import to_bytes

    root = ET.Element("map", {"width": "2", "height": "2", "tilewidth": "8", "tileheight": "8"})
    if embedded:  # a tileset in the map, with a tile's collision shape: an object that is no map object
        tileset = ET.SubElement(root, "tileset", {"firstgid": "1", "name": "<objectgroup>"})
        ET.SubElement(ET.SubElement(ET.SubElement(tileset, "tile", {"id": "0"}), "objectgroup"), "object", {"id": "1", "x": "0", "y": "0"})
    else:
        ET.SubElement(root, "tileset", {"firstgid": "1", "source": "t.tsx"})
    ET.SubElement(ET.SubElement(root, "layer", {"id": "1", "name": "objectgroup", "width": "2", "height": "2"}), "data", {"encoding": "csv"})
    group = ET.SubElement(root, "objectgroup", {"id": "2", "name": "</objectgroup>"})
    for k, (name, kind, props) in enumerate(objects, start=1):
        group.append(object_element(MapObject(name, kind, 0.5, 0.5, properties=props), k, 8, 8))
    path = tmp_path_factory.mktemp("tags") / "m.tmx"
    path.write_bytes(to_bytes(root, ["1,1,\n1,1"]))
    found = map_objects(path)
    assert found == _streamed(path, []) and [(o.name, o.cls) for o in found] == [(n, t) for n, t, _ in objects]


def test_the_enum_words_are_the_level_graphs() -> None:
    from pipeline.graphs.generate import DEAD_END_ROLES
    from pipeline.graphs.model import BOSS, EXIT, START
    from pipeline.graphs.templates import DIRECTION_NAMES

    words = {e.name: e.values for e in ENUMS}
    assert words["RoomRole"] == (START, BOSS, EXIT, *DEAD_END_ROLES)
    assert words["DoorSide"] == DIRECTION_NAMES
    assert enum_members("room") == {"role": "RoomRole"} and enum_members("chest") == {}


def test_a_map_written_with_an_enum_word_names_its_enum_in_tmx_and_tmj() -> None:
    from pipeline.tiled.properties import json_properties

    assert json_properties({"role": "boss", "area": 4}, enum_members("room")) == [
        {"name": "area", "type": "int", "value": 4}, {"name": "role", "propertytype": "RoomRole", "type": "string", "value": "boss"},
    ]
