"""Object references and file properties of hand-made maps and prefabs: an object-typed
property still names its object after objects are renumbered and prefabs placed twice, in TMX,
Tiled JSON, Lua and LDtk; a file-typed property stays a file. Checked with the real readers."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest

from conftest import RECIPES, pcg, write_recipe
from pipeline.level import Level, MapObject, ObjectRef
from pipeline.stages.place.prefabs import Prefabs

ldtkpy = pytest.importorskip("ldtkpy.api", reason="ldtkpy is a test dependency (pip install -e '.[test]')")
LDTK_SCHEMA = Path(__file__).resolve().parent / "data" / "ldtk" / "JSON_SCHEMA.json"
TILED = shutil.which("tiled")
LUA = shutil.which("lua5.4")

# Ids as Tiled leaves them after deletions (5, 9, 12): the exporters number objects 1, 2, 3.
LEVEL = """<?xml version="1.0" encoding="UTF-8"?>
<map version="1.10" tiledversion="1.10.2" orientation="orthogonal" renderorder="right-down" width="5" height="4" tilewidth="16" tileheight="16" infinite="0" nextlayerid="3" nextobjectid="13">
 <properties>
  <property name="music" type="file" value="../audio/cave.ogg"/>
  <property name="villain" type="object" value="5"/>
 </properties>
 <tileset firstgid="1" source="room.tsx"/>
 <layer id="1" name="tiles" width="5" height="4">
  <data encoding="csv">
1,1,1,1,1,
1,2,2,2,1,
1,2,2,2,1,
1,1,1,1,1
</data>
 </layer>
 <objectgroup id="2" name="actors">
  <object id="12" name="lever" type="lever" x="24" y="24"><point/></object>
  <object id="5" name="boss" type="enemy" x="40" y="24">
   <properties>
    <property name="drops" type="object" value="9"/>
    <property name="opens" type="object" value="12"/>
    <property name="nothing" type="object" value="0"/>
    <property name="script" type="file" value="scripts/boss.lua"/>
   </properties>
   <point/>
  </object>
  <object id="9" name="loot" type="chest" x="56" y="40"><point/></object>
 </objectgroup>
</map>
"""

RECIPE = """\
[pack]
name = "refs"
seed = 3
maps = 1

[stage.level]
use = "load.tmx"
file = "maps/level.tmx"

[stage.tmx]
use = "export.tmx"
input = "level"
tile_size = 8

[stage.tmj]
use = "export.tmj"
input = "level"
tile_size = 8
preview = false

[stage.lua]
use = "export.lua"
input = "level"
tile_size = 8
preview = false

[stage.ldtk]
use = "export.ldtk"
input = "level"
tile_size = 8
preview = false
"""


def _project(root: Path, recipe: str) -> Path:
    """A project whose recipe loads LEVEL; built once. Returns the recipe file."""
    maps = root / "recipes" / "maps"
    maps.mkdir(parents=True)
    for name in ("room.tsx", "room.png"):
        shutil.copy(RECIPES / "maps" / name, maps / name)
    (maps / "level.tmx").write_text(LEVEL)
    write_recipe(root, "refs", recipe)
    pcg("build", "recipes", "-q", cwd=root)
    return root / "recipes" / "refs.toml"


@pytest.fixture()
def built(tmp_path: Path) -> Path:
    _project(tmp_path, RECIPE)
    return tmp_path / "exports" / "refs"


def _by_name(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["name"]: o for o in objects}


def test_tmx_references_name_the_same_objects_and_files_stay_files(built: Path) -> None:
    root = ET.parse(built / "map_000.tmx").getroot()
    objects = {o.get("name"): o for o in root.iter("object")}
    ids = {name: o.get("id") for name, o in objects.items()}
    assert sorted(ids.values()) == ["1", "2", "3"]  # renumbered...
    props = {p.get("name"): (p.get("type"), p.get("value")) for p in objects["boss"].iter("property")}
    assert props["drops"] == ("object", ids["loot"])  # ...and the references with them
    assert props["opens"] == ("object", ids["lever"])
    assert props["nothing"] == ("object", "0")
    assert props["script"] == ("file", "scripts/boss.lua")
    own = {p.get("name"): (p.get("type"), p.get("value")) for p in root.find("properties").iter("property")}  # type: ignore[union-attr]
    assert own["music"] == ("file", "../audio/cave.ogg")
    assert own["villain"] == ("object", ids["boss"])  # the map's own reference, renumbered too
    manifest = json.loads((built / "manifest.json").read_text())
    assert "villain" not in manifest["maps"][0]["stats"] and manifest["maps"][0]["stats"]["music"] == "../audio/cave.ogg"


def test_tiled_json_and_lua_say_the_same(built: Path) -> None:
    doc = json.loads((built / "map_000.tmj").read_text())
    objects = _by_name([o for layer in doc["layers"] if layer["type"] == "objectgroup" for o in layer["objects"]])
    props = {p["name"]: (p["type"], p["value"]) for p in objects["boss"]["properties"]}
    assert props["drops"] == ("object", objects["loot"]["id"]) and props["opens"] == ("object", objects["lever"]["id"])
    assert props["nothing"] == ("object", 0) and props["script"] == ("file", "scripts/boss.lua")
    if LUA is None:
        pytest.skip("lua5.4 is not installed")
    script = (
        f"local m = dofile({json.dumps(str(built / 'map_000.lua'))})\n"
        "local ids, boss = {}, nil\n"
        "for _, l in ipairs(m.layers) do if l.objects then for _, o in ipairs(l.objects) do ids[o.name] = o.id;"
        " if o.name == 'boss' then boss = o end end end end\n"
        "print(boss.properties.drops.id == ids.loot, boss.properties.opens.id == ids.lever, boss.properties.nothing.id,"
        " boss.properties.script)\n"
    )
    out = subprocess.run([LUA, "-e", script], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["true", "true", "0", "scripts/boss.lua"], out.stderr


@pytest.mark.skipif(TILED is None, reason="Tiled is not installed")
def test_real_tiled_reads_the_references(built: Path, tmp_path: Path) -> None:
    out = tmp_path / "again.json"
    proc = subprocess.run(
        [str(TILED), "--export-map", "json", str(built / "map_000.tmx"), str(out)],
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"}, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    objects = _by_name([o for layer in doc["layers"] if layer["type"] == "objectgroup" for o in layer["objects"]])
    props = {p["name"]: (p["type"], p["value"]) for p in objects["boss"]["properties"]}
    assert props["drops"] == ("object", objects["loot"]["id"])
    # A file is as the map wrote it, which Tiled reads relative to the exported map (and writes
    # relative to the file it writes): the path is the game's, not rebased onto recipes/.
    assert props["script"] == ("file", os.path.relpath(built / "scripts" / "boss.lua", tmp_path))


def test_ldtk_references_are_entity_refs_to_the_entities(built: Path) -> None:
    project = json.loads((built / "ldtk" / "world.ldtk").read_text())
    levels = [json.loads((built / "ldtk" / head["externalRelPath"]).read_text()) for head in project["levels"]]
    full = copy.deepcopy(project)
    full["levels"] = levels
    schema = {**json.loads(LDTK_SCHEMA.read_text()), "$ref": "#/LdtkJsonRoot"}
    jsonschema.Draft7Validator(schema).validate(full)
    parsed = ldtkpy.ldtk_json_from_dict(full)
    level = parsed.levels[0]
    layer = next(li for li in level.layer_instances if li.identifier == "entities")
    entities = {next(f.value for f in e.field_instances if f.identifier == "name"): e for e in layer.entity_instances}
    fields = {f.identifier: (f.type, f.value) for f in entities["boss"].field_instances}
    assert fields["drops"] == (
        "EntityRef",
        {"entityIid": entities["loot"].iid, "layerIid": layer.iid, "levelIid": level.iid, "worldIid": project["dummyWorldIid"]},
    )
    assert fields["opens"][1]["entityIid"] == entities["lever"].iid
    assert fields["nothing"] == ("EntityRef", None)
    assert fields["script"] == ("FilePath", "scripts/boss.lua")
    villain = next(f for f in level.field_instances if f.identifier == "villain")
    assert (villain.type, villain.value["entityIid"]) == ("EntityRef", entities["boss"].iid)
    defs = {f["identifier"]: f["type"] for e in project["defs"]["entities"] for f in e["fieldDefs"]}
    assert defs["drops"] == "F_EntityRef" and defs["script"] == "F_Path"


def test_each_placement_of_a_prefab_refers_to_its_own_objects(tmp_path: Path) -> None:
    # A vault whose lever opens its own gate: placed twice, each lever names its own copy.
    folder = tmp_path / "prefabs"
    folder.mkdir()
    for name in ("prefab.tsx", "prefab.png"):
        shutil.copy(RECIPES / "prefabs" / name, folder / name)
    (folder / "vault.tmx").write_text("""<?xml version="1.0" encoding="UTF-8"?>
<map version="1.10" tiledversion="1.10.2" orientation="orthogonal" renderorder="right-down" width="4" height="3" tilewidth="16" tileheight="16" infinite="0" nextlayerid="3" nextobjectid="3">
 <tileset firstgid="1" source="prefab.tsx"/>
 <layer id="1" name="tiles" width="4" height="3">
  <data encoding="csv">
1,1,3,1,
1,2,2,1,
1,1,1,1
</data>
 </layer>
 <objectgroup id="2" name="objects">
  <object id="2" name="gate" type="gate" x="24" y="24"><point/></object>
  <object id="1" name="lever" type="lever" x="40" y="24"><properties><property name="opens" type="object" value="2"/></properties><point/></object>
 </objectgroup>
</map>
""")
    stage = Prefabs.model_validate({"prefabs": "prefabs/vault.tmx", "count": 2}, context={"recipe_dir": str(tmp_path)})
    rock = Level.from_text("B wall #000000\nW floor #ffffff\n\n" + "BBBBBBBBBBBB\n" + "BWWWWWWWWWWB\n" * 6 + "BBBBBBBBBBBB\n")
    level = stage.run([rock], np.random.default_rng(4))
    levers = [o for o in level.objects if o.name == "lever"]
    gates = {o.ref: o for o in level.objects if o.name == "gate"}
    assert len(levers) == 2 and len(gates) == 2
    for lever in levers:
        target = lever.properties["opens"]
        assert isinstance(target, ObjectRef) and target.target in gates
        assert gates[target.target].properties["prefab_index"] == lever.properties["prefab_index"]


def test_two_prefab_stages_and_an_overlay_keep_each_reference_on_its_own_object(tmp_path: Path) -> None:
    # The second stage's placement 1 would name its objects as the first's did ("1:2"): a lever
    # would open the other room's gate. And two hand-made maps both number objects from 1.
    from pipeline.stages.compose.overlay import Overlay

    test_each_placement_of_a_prefab_refers_to_its_own_objects(tmp_path)  # writes prefabs/vault.tmx
    stage = Prefabs.model_validate({"prefabs": "prefabs/vault.tmx", "count": 1}, context={"recipe_dir": str(tmp_path)})
    rock = Level.from_text("B wall #000000\nW floor #ffffff\n\n" + "BBBBBBBBBBBB\n" + "BWWWWWWWWWWB\n" * 6 + "BBBBBBBBBBBB\n")
    once = stage.run([rock], np.random.default_rng(1))
    twice = stage.run([once], np.random.default_rng(2))
    assert twice.settle_values() is None  # no two objects share a ref
    by_ref = {o.ref: o for o in twice.objects if o.ref}
    for lever in (o for o in twice.objects if o.name == "lever"):
        gate = by_ref[lever.properties["opens"].target]  # type: ignore[union-attr]
        assert gate.name == "gate" and abs(gate.x - lever.x) == 1 and gate.y == lever.y  # its own room's gate
    laid = Overlay().run([twice, twice], np.random.default_rng(0))
    assert laid.settle_values() is None and len(laid.objects) == 2 * len(twice.objects)
    top = laid.objects[len(twice.objects):]
    top_refs = {o.ref for o in top if o.ref}
    assert all(o.properties["opens"].target in top_refs for o in top if o.name == "lever")  # type: ignore[union-attr]


def test_two_objects_with_one_ref_fail_the_stage() -> None:
    level = Level.from_text("W floor #ffffff\n\nWW\n")
    level.objects = [MapObject("a", "a", 0.5, 0.5, ref="1"), MapObject("b", "b", 1.5, 0.5, ref="1")]
    assert level.settle_values() == "whose object 2 ('b') has the ref '1' of object 1: a reference to it would be ambiguous"


def test_a_pinned_maps_ldtk_files_stay_when_the_pack_seed_changes(tmp_path: Path) -> None:
    # The world an entity reference names is the pack's, not of its seed: a pinned map keeps its
    # files (and is not rebuilt) while the pack's seed moves on, and still verifies.
    text = RECIPE.replace("maps = 1", "maps = 2\n\n[pack.seeds]\n0 = 3")
    recipe = _project(tmp_path, text)
    pinned = (tmp_path / "exports" / "refs" / "ldtk" / "world" / "map_000.ldtkl").read_bytes()
    recipe.write_text(text.replace("seed = 3\nmaps", "seed = 4\nmaps"))
    out = pcg("build", "recipes", cwd=tmp_path).stdout
    assert "built 1/2 maps" in out, out
    assert (tmp_path / "exports" / "refs" / "ldtk" / "world" / "map_000.ldtkl").read_bytes() == pinned
    assert pcg("verify", "refs", cwd=tmp_path).returncode == 0


def test_an_overlays_top_keeps_its_map_references_with_its_objects() -> None:
    # Both maps number their objects from 1: the top's own `villain` must name the top's boss.
    from pipeline.stages.compose.overlay import Overlay

    def hand_made(name: str) -> Level:
        level = Level.from_text("W floor #ffffff\n\nWWW\n")
        level.objects = [MapObject(name, name, 0.5, 0.5, ref="5")]
        level.properties["villain"] = ObjectRef("5")
        return level

    laid = Overlay().run([hand_made("guard"), hand_made("boss")], np.random.default_rng(0))
    by_ref = {o.ref: o.name for o in laid.objects}
    assert by_ref[laid.properties["villain"].target] == "boss"  # type: ignore[union-attr]


def test_a_reference_to_an_object_the_map_lost_is_written_as_none_with_a_warning() -> None:
    # A maze carved into a hand-made map keeps its `villain` (the map's own) but not the boss.
    from pipeline.registry import ExportContext
    from pipeline.stages.export.tmx import ExportTmx

    level = Level.from_text("W floor #ffffff\n\nWW\n")
    level.properties["villain"] = ObjectRef("5")
    level.objects = [MapObject("lever", "lever", 0.5, 0.5, properties={"opens": ObjectRef("9"), "none": ObjectRef("")}, ref="1")]
    ctx = ExportContext(stem="m")
    files = ExportTmx(tile_size=8, preview=False).export(level, ctx)
    assert ctx.warnings == [
        "references: property 'villain' of the map names an object this map no longer has, so it is written as none",
        "references: property 'opens' of object 'lever' names an object this map no longer has, so it is written as none",
    ]
    root = ET.fromstring(files["m.tmx"])
    assert {p.get("name"): p.get("value") for p in root.iter("property") if p.get("type") == "object"} == {"villain": "0", "opens": "0", "none": "0"}
