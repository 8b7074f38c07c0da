"""`load.tmx` on maps shaped like Tiled's own examples and test maps (Tiled's files are not ours:
each test writes a small map of the same shape): Tiled 1.1-era JSON, image collections with gaps
in their tile ids, rotated objects, maps of objects alone, tilesets without `symbol` properties,
and the map kinds load.tmx does not read. And a recipe whose checks break unexpectedly: one line
for it, and the other recipes still build."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from conftest import SMALL_RECIPE, TILED, needs_tiled, pcg, tiled_env, write_recipe
from pipeline.level import Color, Level, MapObject
from pipeline.rewrite import palette
from pipeline.stages.load.tmx import LoadTmx


def load(folder: Path, file: str, **params: object) -> Level:
    stage = LoadTmx.model_validate({"file": file, **params}, context={"recipe_dir": folder})
    return stage.run([], np.random.default_rng(0))


def refusal(folder: Path, file: str, **params: object) -> str:
    with pytest.raises(ValidationError) as info:
        LoadTmx.model_validate({"file": file, **params}, context={"recipe_dir": folder})
    (error,) = info.value.errors()
    return str(error["ctx"]["error"])


def names_of(level: Level) -> list[list[str]]:
    return np.array([s.name for s in level.alphabet])[level.tiles].tolist()


def tmx(body: str, width: int = 3, height: int = 2, orientation: str = "orthogonal", infinite: int = 0) -> str:
    """A map as Tiled writes one, around `body` (its tilesets and layers)."""
    return textwrap.dedent(f"""\
        <?xml version="1.0" encoding="UTF-8"?>
        <map version="1.10" tiledversion="1.10.2" orientation="{orientation}" renderorder="right-down" width="{width}" height="{height}"
         tilewidth="16" tileheight="16" infinite="{infinite}" nextlayerid="3" nextobjectid="9">
        """) + textwrap.dedent(body) + "</map>\n"


def tile_layer(csv: str, width: int = 3, height: int = 2) -> str:
    return f'<layer id="1" name="ground" width="{width}" height="{height}"><data encoding="csv">\n{csv}\n</data></layer>\n'


def recipe_reading(name: str, file: str, extra: str = "") -> str:
    return textwrap.dedent(f"""\
        [pack]
        name = "{name}"
        seed = 3
        maps = 1

        [stage.start]
        use = "load.tmx"
        file = "{file}"
        {extra}

        [stage.tmx]
        use = "export.tmx"
        input = "start"
        """)


# A map as Tiled 1.1 wrote JSON (Tiled 1.8 still opens it): the tileset's `tiles` an object keyed
# by tile id, tile properties in `tileproperties` with their types in `tilepropertytypes`, and
# map, layer and object properties as plain objects with `propertytypes` beside them.
OLD_JSON = {
    "type": "map", "version": 1, "tiledversion": "1.1.6", "orientation": "orthogonal", "renderorder": "right-down",
    "width": 3, "height": 2, "tilewidth": 16, "tileheight": 16, "nextobjectid": 2, "infinite": False,
    "properties": {"difficulty": 2, "tint": "#ff336699", "author": "me"},
    "propertytypes": {"difficulty": "int", "tint": "color", "author": "string"},
    "layers": [
        {"type": "tilelayer", "name": "ground", "width": 3, "height": 2, "x": 0, "y": 0, "opacity": 1, "visible": True,
         "data": [1, 2, 2, 2, 3, 1], "properties": {"note": "x"}, "propertytypes": {"note": "string"}},
        {"type": "objectgroup", "name": "things", "draworder": "topdown", "opacity": 1, "visible": True, "x": 0, "y": 0,
         "objects": [{"id": 1, "name": "spawn", "type": "spawn", "x": 16, "y": 16, "width": 0, "height": 0, "rotation": 0,
                      "visible": True, "point": True, "properties": {"hp": "3", "tint": "#ff00ff00"},
                      "propertytypes": {"hp": "int", "tint": "color"}}]},
    ],
    "tilesets": [{
        "firstgid": 1, "name": "old", "image": "old.png", "imagewidth": 48, "imageheight": 16, "tilewidth": 16, "tileheight": 16,
        "tilecount": 3, "columns": 3, "margin": 0, "spacing": 0,
        "tiles": {"0": {"type": "rock"}, "2": {"type": "gate", "animation": [{"tileid": 2, "duration": 100}]}},
        "tileproperties": {"0": {"symbol": "wall"}, "1": {"symbol": "floor", "solid": False}, "2": {"symbol": "door", "color": "#ffab5236"}},
        "tilepropertytypes": {"0": {"symbol": "string"}, "1": {"symbol": "string", "solid": "bool"}, "2": {"symbol": "string", "color": "color"}},
    }],
}


def test_a_tiled_1_1_json_map_loads_with_its_tile_and_typed_properties(tmp_path: Path) -> None:
    # It raised AttributeError ('str' object has no attribute 'get') as the recipe loaded.
    (tmp_path / "old.json").write_text(json.dumps(OLD_JSON))
    level = load(tmp_path, "old.json")
    assert names_of(level) == [["wall", "floor", "floor"], ["floor", "door", "wall"]]
    assert [(s.name, s.color) for s in level.alphabet] == [("wall", "#000000"), ("floor", "#fff1e8"), ("door", "#ab5236")]
    assert level.properties == {"difficulty": 2, "tint": "#ff336699", "author": "me"}
    assert isinstance(level.properties["tint"], Color)  # typed by `propertytypes`, not taken for a string
    (spawn,) = level.objects
    assert spawn.properties == {"hp": 3, "tint": "#ff00ff00"} and isinstance(spawn.properties["tint"], Color)
    # The tiles' types are their classes; tile 1 has none.
    assert "2 tiles" not in refusal(tmp_path, "old.json", symbols="class")
    assert "tile 1 of tileset 'old' has no class" in refusal(tmp_path, "old.json", symbols="class")


# An image collection, as Tiled's forest.tmx and csvmap_embedded_image_collection.tmx: a picture
# per tile, tiles deleted from it leave gaps in the ids, and `tilecount` counts the tiles left.
COLLECTION_TMX = tmx("""\
    <tileset firstgid="1" name="things" tilewidth="32" tileheight="32" tilecount="4" columns="0">
     <grid orientation="orthogonal" width="1" height="1"/>
     <tile id="0"><properties><property name="symbol" value="rock"/></properties><image width="32" height="32" source="rock.png"/></tile>
     <tile id="1"><properties><property name="symbol" value="tree"/></properties><image width="32" height="32" source="tree.png"/></tile>
     <tile id="5"><properties><property name="symbol" value="bush"/></properties><image width="32" height="32" source="bush.png"/></tile>
     <tile id="9"><properties><property name="symbol" value="pond"/></properties><image width="32" height="32" source="pond.png"/></tile>
    </tileset>
    <tileset firstgid="11" name="after" tilewidth="16" tileheight="16" tilecount="1" columns="1">
     <image source="after.png" width="16" height="16"/>
     <tile id="0"><properties><property name="symbol" value="floor"/></properties></tile>
    </tileset>
    """ + tile_layer("1,0,6,\n10,11,2") + """\
    <objectgroup id="2" name="decor"><object id="1" gid="10" x="0" y="32" width="32" height="32"/></objectgroup>
    """)


def test_an_image_collection_with_gaps_in_its_tile_ids_loads(tmp_path: Path) -> None:
    # Tiles 5 and 9 (past tilecount 4) were refused as "in none of the map's tilesets".
    (tmp_path / "forest.tmx").write_text(COLLECTION_TMX)
    level = load(tmp_path, "forest.tmx")
    assert names_of(level) == [["rock", "wall", "bush"], ["pond", "floor", "tree"]]
    assert level.objects == [MapObject("", "", 0.0, 0.0, 2.0, 2.0, ref="1")]  # a tile object of tile 9
    # An id the collection does not have is in none of its tilesets, as in Tiled.
    (tmp_path / "gap.tmx").write_text(COLLECTION_TMX.replace("1,0,6,", "1,0,3,"))
    assert "layer 'ground', cell (2, 0): tile gid 3 is in none of the map's tilesets" in refusal(tmp_path, "gap.tmx")
    # The same in Tiled JSON.
    doc = {
        "type": "map", "orientation": "orthogonal", "width": 3, "height": 1, "tilewidth": 32, "tileheight": 32, "infinite": False,
        "tilesets": [{"firstgid": 1, "name": "things", "tilecount": 2, "columns": 0, "tilewidth": 32, "tileheight": 32,
                      "tiles": [{"id": 0, "image": "rock.png", "properties": [{"name": "symbol", "type": "string", "value": "rock"}]},
                                {"id": 3, "image": "bush.png", "properties": [{"name": "symbol", "type": "string", "value": "bush"}]}]}],
        "layers": [{"type": "tilelayer", "name": "ground", "width": 3, "height": 1, "data": [1, 0, 4]}],
    }
    (tmp_path / "collection.tmj").write_text(json.dumps(doc))
    assert names_of(load(tmp_path, "collection.tmj")) == [["rock", "wall", "bush"]]


@needs_tiled
@pytest.mark.parametrize(("name", "text", "out"), [("old.json", json.dumps(OLD_JSON), "old.tmx"), ("forest.tmx", COLLECTION_TMX, "forest.tmj")])
def test_the_shapes_load_as_tiled_itself_reads_them(tmp_path: Path, name: str, text: str, out: str) -> None:
    # Tiled opens the map and writes it in today's form (the other format): the two load alike.
    (tmp_path / name).write_text(text)
    proc = subprocess.run([str(TILED), "--export-map", str(tmp_path / name), str(tmp_path / out)], env=tiled_env(),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and (tmp_path / out).is_file(), proc.stderr
    ours, tiled = load(tmp_path, name), load(tmp_path, out)
    assert names_of(ours) == names_of(tiled) and ours.alphabet == tiled.alphabet
    assert ours.objects == tiled.objects and ours.properties == tiled.properties


ROTATED_TMX = tmx("""\
    <tileset firstgid="1" name="t" tilewidth="16" tileheight="16" tilecount="2" columns="2">
     <image source="t.png" width="32" height="16"/>
     <tile id="0"><properties><property name="symbol" value="wall"/></properties></tile>
     <tile id="1"><properties><property name="symbol" value="floor"/></properties></tile>
    </tileset>
    """ + tile_layer("1,1,1,\n1,2,1") + """\
    <objectgroup id="2" name="decor">
     <object id="1" name="banner" type="deco" x="16" y="0" width="32" height="16" rotation="-10.5"/>
     <object id="2" name="spawn" type="spawn" x="24" y="24"><point/></object>
     <object id="3" gid="2" x="0" y="32" width="16" height="16" rotation="90"><properties><property name="lit" type="bool" value="true"/></properties></object>
    </objectgroup>
    """)


def test_rotated_objects_load_upright_with_their_angle_and_a_warning(tmp_path: Path) -> None:
    # One rotated decoration refused the whole map.
    (tmp_path / "rotated.tmx").write_text(ROTATED_TMX)
    stage = LoadTmx.model_validate({"file": "rotated.tmx"}, context={"recipe_dir": tmp_path})
    level = stage.run([], np.random.default_rng(0))
    assert level.objects == [
        MapObject("banner", "deco", 1.0, 0.0, 2.0, 1.0, {"rotation": -10.5}, ref="1"),
        MapObject("spawn", "spawn", 1.5, 1.5, ref="2"),
        MapObject("", "", 0.0, 1.0, 1.0, 1.0, {"lit": True, "rotation": 90.0}, ref="3"),
    ]
    # Its tileset's image is not there: its tile object is a rectangle, and the art is not kept (said).
    warnings = stage.warnings()
    assert [w for w in warnings if "tileset 't' cannot be drawn" in w and "t.png" in w]
    assert [w for w in warnings if "cannot be drawn" not in w] == [
        "file: rotated.tmx: 2 objects are rotated (object 1 ('banner') by -10.5 degrees, object 3 by 90 degrees): a Level's"
        " objects are upright, so each is loaded as drawn before its rotation, with the angle (degrees clockwise about its"
        " origin, as in Tiled) in its property `rotation`"
    ]
    doc = {
        "type": "map", "orientation": "orthogonal", "width": 2, "height": 1, "tilewidth": 16, "tileheight": 16, "infinite": False,
        "tilesets": [], "layers": [{"type": "objectgroup", "name": "o", "objects": [
            {"id": 4, "name": "sign", "type": "", "x": 8, "y": 0, "width": 16, "height": 16, "rotation": 45}]}],
    }
    (tmp_path / "rotated.tmj").write_text(json.dumps(doc))
    stage = LoadTmx.model_validate({"file": "rotated.tmj"}, context={"recipe_dir": tmp_path})
    assert stage.run([], np.random.default_rng(0)).objects == [MapObject("sign", "", 0.5, 0.0, 1.0, 1.0, {"rotation": 45.0}, ref="4")]
    assert stage.warnings()[0].startswith("file: rotated.tmj: 1 object is rotated (object 4 ('sign') by 45 degrees): ")


def test_a_map_of_objects_alone_loads_as_an_empty_grid_of_its_size(tmp_path: Path) -> None:
    # Like Tiled's sticker-knight title.json: an object layer and no tile layer; it was refused.
    doc = {
        "type": "map", "orientation": "orthogonal", "width": 4, "height": 3, "tilewidth": 16, "tileheight": 16, "infinite": False,
        "tilesets": [], "layers": [{"type": "objectgroup", "name": "ui", "objects": [
            {"id": 1, "name": "title", "type": "text", "x": 16, "y": 16, "width": 32, "height": 16, "text": {"text": "Hi"}}]}],
    }
    (tmp_path / "title.json").write_text(json.dumps(doc))
    level = load(tmp_path, "title.json", empty="floor")
    assert level.tiles.shape == (3, 4) and names_of(level) == [["floor"] * 4] * 3
    assert [(s.char, s.name) for s in level.alphabet] == [("W", "floor")]
    assert level.objects == [MapObject("title", "text", 1.0, 1.0, 2.0, 1.0, ref="1")]
    (tmp_path / "title.tmx").write_text(tmx('<objectgroup id="1" name="ui"><object id="1" name="spot" x="16" y="0"><point/></object></objectgroup>\n'))
    level = load(tmp_path, "title.tmx")
    assert names_of(level) == [["wall"] * 3] * 2 and level.objects == [MapObject("spot", "", 1.0, 0.0, ref="1")]
    # Asked for a tile layer it does not have, it is still an error.
    assert "has no tile layer 'ground' (it has no tile layers)" in refusal(tmp_path, "title.tmx", layer="ground")


def untagged_tileset(count: int, tagged: dict[int, str]) -> str:
    tiles = "".join(f'<tile id="{i}"><properties><property name="symbol" value="{name}"/></properties></tile>' for i, name in tagged.items())
    return (f'<tileset firstgid="1" name="beach" tilewidth="16" tileheight="16" tilecount="{count}" columns="{count}">'
            f'<image source="beach.png" width="{16 * count}" height="16"/>{tiles}</tileset>\n')


def test_every_tile_without_a_symbol_is_named_at_once(tmp_path: Path) -> None:
    # Only the first was named: a map with 182 of them took 182 builds to learn them.
    (tmp_path / "island.tmx").write_text(tmx(untagged_tileset(12, {3: "sand"}) + tile_layer("1,2,3,\n4,6,12"), width=3))
    message = refusal(tmp_path, "island.tmx")
    assert message.startswith(f"file: {tmp_path / 'island.tmx'}: 5 tiles have no `symbol` property: tileset 'beach' tiles 0-2, 5, 11"
                              " (the first at layer 'ground', cell (0, 0); a string naming what the tile is"), message
    assert 'symbols = "class"' in message and 'symbols = "tile"' in message
    # Across tilesets, each with its own ids.
    second = '<tileset firstgid="13" name="rocks" tilewidth="16" tileheight="16" tilecount="4" columns="4"><image source="r.png" width="64" height="16"/></tileset>\n'
    (tmp_path / "two.tmx").write_text(tmx(untagged_tileset(12, {0: "sand", 1: "sand", 2: "sand"}) + second + tile_layer("1,14,3,\n4,16,13")))
    assert ": 4 tiles have no `symbol` property: tileset 'beach' tile 3; tileset 'rocks' tiles 0-1, 3 (the first at layer 'ground', cell (0, 1);" in refusal(tmp_path, "two.tmx")


CLASSES_TMX = tmx("""\
    <tileset firstgid="1" name="terrain" tilewidth="16" tileheight="16" tilecount="6" columns="6">
     <image source="terrain.png" width="96" height="16"/>
     <tile id="0" type="wall"/>
     <tile id="1" class="grass"><properties><property name="color" type="color" value="#ff00e436"/></properties></tile>
     <tile id="2" class="grass"/>
     <tile id="3" type="water"><properties><property name="char" value="~"/></properties></tile>
    </tileset>
    <tileset firstgid="7" name="terrain" tilewidth="16" tileheight="16" tilecount="2" columns="2">
     <image source="terrain2.png" width="32" height="16"/>
    </tileset>
    """ + tile_layer("2,3,1,\n4,0,8"))


def test_tiles_classes_or_the_tiles_themselves_can_be_the_symbols(tmp_path: Path) -> None:
    (tmp_path / "classes.tmx").write_text(CLASSES_TMX.replace(",8\n", ",3\n"))
    level = load(tmp_path, "classes.tmx", symbols="class")
    assert names_of(level) == [["grass", "grass", "wall"], ["water", "wall", "grass"]]
    # Tiles' `char` and `color` properties count as with `symbol` properties (the first tile of a class's).
    assert [(s.char, s.name, s.color) for s in level.alphabet] == [
        ("B", "wall", "#000000"), ("G", "grass", "#00e436"), ("~", "water", palette.default_symbol("~")[1])
    ]
    # A tile with no class: all of them named, as with properties.
    (tmp_path / "classes.tmx").write_text(CLASSES_TMX)
    assert "tile 1 of tileset 'terrain' has no class (a tile's class names what it is" in refusal(tmp_path, "classes.tmx", symbols="class")
    # One symbol per tile, by tileset and id; a second tileset of one name is told apart.
    level = load(tmp_path, "classes.tmx", symbols="tile")
    assert names_of(level) == [["terrain:1", "terrain:2", "terrain:0"], ["terrain:3", "wall", "terrain#2:1"]]
    assert [s.name for s in level.alphabet] == ["wall", "terrain:0", "terrain:1", "terrain:2", "terrain:3", "terrain#2:1"]
    assert len({s.char for s in level.alphabet}) == 6 and level.alphabet[4].char == "~"


@pytest.mark.parametrize(
    ("attributes", "expected"),
    [
        ({"orientation": "isometric"}, "orientation 'isometric' is not supported: load.tmx reads orthogonal maps"),
        ({"orientation": "hexagonal"}, "orientation 'hexagonal' is not supported: load.tmx reads orthogonal maps"),
        ({"orientation": "staggered"}, "orientation 'staggered' is not supported: load.tmx reads orthogonal maps"),
    ],
)
def test_map_kinds_load_tmx_does_not_read_are_one_clear_error(tmp_path: Path, attributes: dict, expected: str) -> None:
    (tmp_path / "kind.tmx").write_text(tmx(tile_layer("0,0,0,\n0,0,0"), **attributes))
    assert refusal(tmp_path, "kind.tmx") == f"file: {tmp_path / 'kind.tmx'}: {expected}"
    doc = {"type": "map", "orientation": "orthogonal", "width": 3, "height": 2, "tilewidth": 16, "tileheight": 16, "infinite": False,
           "tilesets": [], "layers": [{"type": "tilelayer", "name": "ground", "width": 3, "height": 2, "data": [0] * 6}]}
    doc.update(attributes)
    (tmp_path / "kind.tmj").write_text(json.dumps(doc))
    assert refusal(tmp_path, "kind.tmj") == f"file: {tmp_path / 'kind.tmj'}: {expected}"


BOOM_PLUGIN = '''\
"""Stages whose checks break as a recipe loads."""

from typing import ClassVar

import numpy as np
from pydantic import model_validator

from pipeline.level import Level, Symbol
from pipeline.registry import StageParams, stage


@stage("demo.boom", version=1)
class Boom(StageParams):
    """Breaks as its params are checked."""

    arity: ClassVar[tuple[int, int]] = (0, 0)

    @model_validator(mode="after")
    def _check(self):
        return {}["nothing"]

    def run(self, inputs, rng):
        return Level(tiles=np.zeros((3, 3), dtype=np.uint8), alphabet=(Symbol("B", "wall", "#000000"),))


@stage("demo.reads", version=1)
class Reads(StageParams):
    """Breaks as the stats it reads are asked for."""

    arity: ClassVar[tuple[int, int]] = (0, 0)

    def read_stats(self):
        return 1 / 0

    def run(self, inputs, rng):
        return Level(tiles=np.zeros((3, 3), dtype=np.uint8), alphabet=(Symbol("B", "wall", "#000000"),))
'''


def test_a_recipe_whose_checks_break_is_one_line_and_the_others_build(tmp_path: Path) -> None:
    # One such recipe stopped `pcg build recipes/` with a traceback before any pack was built,
    # and `pcg list` with it.
    (tmp_path / "recipes" / "stages").mkdir(parents=True)
    (tmp_path / "recipes" / "stages" / "boom.py").write_text(BOOM_PLUGIN)
    (tmp_path / "recipes" / "maps").mkdir()
    (tmp_path / "recipes" / "maps" / "old.json").write_text(json.dumps(OLD_JSON))
    (tmp_path / "recipes" / "maps" / "hex.tmx").write_text(tmx(tile_layer("0,0,0,\n0,0,0"), orientation="hexagonal"))
    write_recipe(tmp_path, "a_old", recipe_reading("old", "maps/old.json"))
    write_recipe(tmp_path, "e_hex", recipe_reading("hex", "maps/hex.tmx"))
    for name, kind in (("b_boom", "demo.boom"), ("c_reads", "demo.reads")):
        text = recipe_reading(name, "").replace('use = "load.tmx"\nfile = ""', f'use = "{kind}"')
        write_recipe(tmp_path, name, text.replace('maps = 1', 'maps = 1\nplugins = ["stages/boom.py"]'))
    write_recipe(tmp_path, "d_small", SMALL_RECIPE)
    built = pcg("build", "recipes", cwd=tmp_path, check=False)
    out = built.stdout + built.stderr
    assert built.returncode == 1 and "Traceback" not in out, out
    errors = [line for line in built.stderr.splitlines() if line.startswith("error:")]
    boom, reads = (BOOM_PLUGIN.splitlines().index(line) + 1 for line in ('        return {}["nothing"]', "        return 1 / 0"))
    assert errors == [
        f"error: recipes/b_boom.toml: stage.start: unexpected error while checking the stage: KeyError: 'nothing' (at stages/boom.py:{boom})",
        f"error: recipes/c_reads.toml: unexpected error while checking the recipe: ZeroDivisionError: division by zero (at stages/boom.py:{reads})",
        "error: recipes/e_hex.toml: stage.start.file: recipes/maps/hex.tmx: orientation 'hexagonal' is not supported: load.tmx reads orthogonal maps",
    ], built.stderr
    for pack in ("old", "small"):  # the Tiled 1.1 JSON map's too: it raised AttributeError
        assert (tmp_path / "exports" / pack / "manifest.json").is_file(), out
    listed = pcg("list", "recipes", cwd=tmp_path, check=False)
    assert listed.returncode == 1 and "Traceback" not in listed.stdout + listed.stderr
    assert "recipes/a_old.toml" in listed.stdout and "recipes/d_small.toml" in listed.stdout
    assert [line for line in listed.stderr.splitlines() if line.startswith("error:")] == errors
