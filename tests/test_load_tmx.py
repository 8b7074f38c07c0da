"""`load.tmx`: hand-made Tiled maps (TMX and Tiled JSON, as Tiled itself writes them) as Levels."""

from __future__ import annotations

import base64
import pickle
import re
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import numpy as np
import pytest
import pytmx
from pydantic import ValidationError

from conftest import RECIPES, TILED, needs_tiled, pcg, tiled_env, write_recipe
from pipeline.level import Color, FilePath, Level, MapObject, ObjectRef
from pipeline.stages.load.tmx import LoadTmx

MAPS = RECIPES / "maps"
NAMES = {1: "wall", 2: "floor", 3: "door", 4: "water"}  # gids of recipes/maps/room.tsx


def source_gids(tmx: Path) -> np.ndarray:
    """The CSV grid of a TMX map, read without the loader."""
    text = re.search(r'<data encoding="csv">(.*?)</data>', tmx.read_text(), re.S)
    assert text is not None
    rows = [r for r in text.group(1).strip().splitlines() if r.strip()]
    return np.array([[int(v) for v in r.strip().rstrip(",").split(",")] for r in rows])


def names_of(level: Level) -> np.ndarray:
    return np.array([s.name for s in level.alphabet])[level.tiles]


def load(folder: Path, file: str, **params: object) -> Level:
    stage = LoadTmx.model_validate({"file": file, **params}, context={"recipe_dir": folder})
    return stage.run([], np.random.default_rng(0))


def to_zlib(tmx: Path, out: Path) -> None:
    """The same map with its layer as base64 + zlib."""
    text = tmx.read_text()
    gids = source_gids(tmx).ravel().tolist()
    data = base64.b64encode(zlib.compress(struct.pack(f"<{len(gids)}I", *gids))).decode()
    out.write_text(re.sub(r'<data encoding="csv">.*?</data>', f'<data encoding="base64" compression="zlib">\n   {data}\n  </data>', text, flags=re.S))


def tiled_export(src: Path, out: Path, *extra: str) -> None:
    fmt = "json" if out.suffix in (".tmj", ".json") else "tmx"
    proc = subprocess.run([str(TILED), "--export-map", *extra, fmt, str(src), str(out)], env=tiled_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and out.is_file(), proc.stderr


@pytest.fixture
def maps(tmp_path: Path) -> Path:
    """A copy of recipes/maps (start.tmx, room.tsx, room.png) to edit."""
    folder = tmp_path / "maps"
    shutil.copytree(MAPS, folder)
    return folder


EXPECTED_OBJECTS = [
    MapObject("spawn", "spawn", 2.5, 7.5, ref="1"),  # its id in the file, as object references name it
    MapObject("exit", "exit", 17.5, 1.5, ref="2"),
    MapObject("treasure", "chest", 15.0, 10.0, 2.0, 1.0, {"gold": 50, "locked": True}, ref="3"),
]


def test_the_example_map_loads_with_its_symbols_objects_and_properties() -> None:
    level = load(RECIPES, "maps/start.tmx")
    assert [(s.char, s.name, s.color) for s in level.alphabet] == [
        ("B", "wall", "#000000"), ("W", "floor", "#fff1e8"), ("D", "door", "#ab5236"), ("w", "water", "#29adff")
    ]
    expected = np.vectorize(NAMES.get)(source_gids(MAPS / "start.tmx"))
    assert (names_of(level) == expected).all() and level.tiles.shape == (15, 21)
    assert level.objects == EXPECTED_OBJECTS
    assert level.properties == {"author": "hand-made", "difficulty": 2, "goal": ObjectRef("2")}  # goal: the exit
    assert isinstance(level.properties["difficulty"], int)


@needs_tiled
def test_files_tiled_wrote_load_alike_tmx_and_json_csv_and_zlib(maps: Path) -> None:
    to_zlib(maps / "start.tmx", maps / "zlib.tmx")
    made = {
        "tiled_csv.tmx": ("start.tmx", ()),
        "tiled_csv.tmj": ("start.tmx", ()),
        "tiled_zlib.tmx": ("zlib.tmx", ()),
        "tiled_zlib.tmj": ("zlib.tmx", ()),
        "tiled_embedded.tmj": ("start.tmx", ("--embed-tilesets",)),
        "tiled_embedded.tmx": ("zlib.tmx", ("--embed-tilesets",)),
    }
    for out, (src, extra) in made.items():
        tiled_export(maps / src, maps / out, *extra)
    assert '"encoding":"base64"' in (maps / "tiled_zlib.tmj").read_text().replace(" ", "")
    assert 'compression="zlib"' in (maps / "tiled_zlib.tmx").read_text()
    reference = load(maps.parent, "maps/start.tmx")
    for name in ["zlib.tmx", *made]:
        level = load(maps.parent, f"maps/{name}")
        assert (level.tiles == reference.tiles).all(), name
        assert level.alphabet == reference.alphabet, name
        assert level.objects == EXPECTED_OBJECTS, name
        assert level.properties == reference.properties, name
    # An independent reader agrees, cell by cell, on the file Tiled wrote.
    tiled_map = pytmx.TiledMap(str(maps / "tiled_zlib.tmx"))
    layer = tiled_map.get_layer_by_name("tiles")
    symbols = np.array([[tiled_map.get_tile_properties_by_gid(g)["symbol"] for g in row] for row in layer.data])
    assert (symbols == names_of(reference)).all()


def test_layers_flatten_upper_over_lower_and_empty_cells_get_empty(maps: Path) -> None:
    text = (maps / "start.tmx").read_text()
    over = ",\n".join(",".join("4" if (x, y) == (1, 1) else "0" for x in range(21)) for y in range(15))
    blank = ",\n".join(",".join("0" for _ in range(21)) for _ in range(15))
    extra = (
        f' <group id="5" name="deco">\n  <layer id="3" name="puddles" width="21" height="15">\n  <data encoding="csv">\n{over}\n</data>\n  </layer>\n </group>\n'
        f' <layer id="4" name="void" width="21" height="15">\n  <data encoding="csv">\n{blank}\n</data>\n </layer>\n'
    )
    (maps / "layered.tmx").write_text(text.replace(" <objectgroup", extra + " <objectgroup"))
    flat = load(maps.parent, "maps/layered.tmx")
    base = load(maps.parent, "maps/start.tmx")
    assert names_of(flat)[1, 1] == "water" and names_of(base)[1, 1] == "floor"
    assert (np.delete(names_of(flat).ravel(), 1 * 21 + 1) == np.delete(names_of(base).ravel(), 1 * 21 + 1)).all()
    assert (load(maps.parent, "maps/layered.tmx", layer="tiles").tiles == base.tiles).all()
    only = load(maps.parent, "maps/layered.tmx", layer="puddles", empty="void")
    assert [s.name for s in only.alphabet] == ["void", "water"]
    assert names_of(only)[1, 1] == "water" and (only.tiles == 0).sum() == 21 * 15 - 1
    with pytest.raises(ValidationError, match="has no tile layer 'nope' \\(its tile layers: 'tiles', 'puddles', 'void'\\)"):
        load(maps.parent, "maps/layered.tmx", layer="nope")


def test_the_stage_carries_the_map_and_its_files_digests(maps: Path) -> None:
    stage = LoadTmx.model_validate({"file": "maps/start.tmx"}, context={"recipe_dir": maps.parent})
    files = stage.files_read()
    assert sorted(files) == ["maps/room.png", "maps/room.tsx", "maps/start.tmx"]  # the image too: the map keeps its art
    # A worker (a Dask one: another machine) needs no file system: the stage holds the map.
    shutil.rmtree(maps)
    level = pickle.loads(pickle.dumps(stage)).run([], np.random.default_rng(1))
    assert level.tiles.shape == (15, 21)
    assert level.art is not None and level.art.tilesets[0].image[:4] == b"\x89PNG"  # the art, image and all, without the files
    # Each run hands out its own arrays: the worker freezes them.
    again = stage.run([], np.random.default_rng(2))
    assert again.tiles is not level.tiles and again.tiles.flags.writeable


def test_colour_and_char_properties_and_typed_object_properties(maps: Path) -> None:
    tsx = (maps / "room.tsx").read_text().replace(
        '<property name="symbol" value="door"/>', '<property name="char" value="+"/>\n   <property name="color" value="#123456"/>\n   <property name="symbol" value="door"/>'
    )
    (maps / "room.tsx").write_text(tsx)
    tmx = (maps / "start.tmx").read_text().replace(
        '<property name="locked" type="bool" value="true"/>',
        '<property name="locked" type="bool" value="true"/>\n    <property name="glow" type="color" value="#ffffa300"/>\n'
        '    <property name="weight" type="float" value="2.5"/>\n    <property name="note">two\nlines</property>',
    ).replace('x="240" y="160"', 'x="244" y="160"')
    (maps / "start.tmx").write_text(tmx)
    level = load(maps.parent, "maps/start.tmx")
    door = level.alphabet[level.index_of("door")]
    assert (door.char, door.color) == ("+", "#123456")
    chest = level.objects[2]
    assert chest.x == 244 / 16  # off the grid: kept as a fraction of a tile
    assert chest.properties == {"gold": 50, "locked": True, "glow": "#ffffa300", "weight": 2.5, "note": "two\nlines"}
    assert isinstance(chest.properties["glow"], Color) and isinstance(chest.properties["weight"], float)


def test_object_and_file_properties_keep_their_kinds(maps: Path) -> None:
    tmx = (maps / "start.tmx").read_text().replace(
        '<property name="locked" type="bool" value="true"/>',
        '<property name="locked" type="bool" value="true"/>\n    <property name="key" type="object" value="1"/>\n'
        '    <property name="none" type="object" value="0"/>\n    <property name="open" type="file" value="sfx/open.wav"/>',
    ).replace('<property name="author" value="hand-made"/>', '<property name="author" value="hand-made"/>\n  <property name="boss" type="object" value="2"/>')
    (maps / "start.tmx").write_text(tmx)
    level = load(maps.parent, "maps/start.tmx")
    chest = level.objects[2]
    assert [o.ref for o in level.objects] == ["1", "2", "3"]
    assert chest.properties["key"] == ObjectRef("1") and chest.properties["none"] == ObjectRef("")
    assert isinstance(chest.properties["open"], FilePath) and chest.properties["open"] == "sfx/open.wav"
    assert level.properties["boss"] == ObjectRef("2")  # the map's own reference names an object of it too


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda t: t.replace('orientation="orthogonal"', 'orientation="isometric"'), "orientation 'isometric' is not supported"),
        (lambda t: t.replace('<data encoding="csv">', '<data encoding="base64" compression="zstd">'), "compression 'zstd' is not supported"),
        (lambda t: t.replace("<map ", "<mop ").replace("</map>", "</mop>"), "is not a Tiled map (its root element is <mop>"),
        (lambda t: t[:200], "is not a Tiled TMX/TSX file (XML error"),
        (lambda t: t.replace('source="room.tsx"', 'source="gone.tsx"'), "cannot read the tileset 'gone.tsx' at"),
        # Gids wrapped around into other tiles, and a layer Tiled calls corrupt, used to load.
        (lambda t: t.replace("1,2,2,2,2", "1,-2,2,2,2", 1), "layer 'tiles', cell (1, 1): tile gid -2 is not a Tiled gid"),
        (lambda t: t.replace("1,2,2,2,2", "1,4294967300,2,2,2", 1), "cell (1, 1): tile gid 4294967300 is not a Tiled gid"),
        (lambda t: t.replace("1,2,2,2,2", "1,2,99999999999999999999,2,2", 1), "cell (2, 1): tile gid 99999999999999999999 is not a Tiled gid"),
        (lambda t: t.replace('<layer id="1" name="tiles" width="21"', '<layer id="1" name="tiles" width="22"'), "layer 'tiles' is 22 x 15 tiles, the map 21 x 15"),
    ],
)
def test_bad_map_files_are_one_clear_error_under_file(maps: Path, edit, expected: str) -> None:
    (maps / "start.tmx").write_text(edit((maps / "start.tmx").read_text()))
    with pytest.raises(ValidationError) as info:
        load(maps.parent, "maps/start.tmx")
    (error,) = info.value.errors()
    message = str(error["ctx"]["error"])
    assert message.startswith(f"file: {maps / 'start.tmx'}: ") and expected in message, message


def test_a_fifo_is_refused_without_hanging(maps: Path) -> None:
    (maps / "room.tsx").unlink()
    import os

    os.mkfifo(maps / "room.tsx")
    with pytest.raises(ValidationError, match="named pipe"):
        load(maps.parent, "maps/start.tmx")


def test_recipe_errors_name_the_file_the_tile_and_a_cell(tmp_path: Path) -> None:
    shutil.copytree(MAPS, tmp_path / "recipes" / "maps")
    tsx = tmp_path / "recipes" / "maps" / "room.tsx"
    tsx.write_text(tsx.read_text().replace('<property name="symbol" value="water"/>', ""))
    recipe = write_recipe(tmp_path, "hand", HAND_RECIPE)
    bad = pcg("build", recipe, cwd=tmp_path, check=False)
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert (
        "error: recipes/hand.toml: stage.start.file: recipes/maps/start.tmx: layer 'tiles', cell (2, 12): tile 3 of"
        " tileset 'room' has no `symbol` property"
    ) in bad.stderr
    write_recipe(tmp_path, "gone", HAND_RECIPE.replace("maps/start.tmx", "maps/gone.tmx"))
    gone = pcg("build", "recipes/gone.toml", cwd=tmp_path, check=False)
    assert gone.returncode == 1 and "Traceback" not in gone.stderr
    assert "error: recipes/gone.toml: stage.start.file: recipes/maps/gone.tmx: cannot read the map recipes/maps/gone.tmx (No such file or directory)" in gone.stderr


def test_a_symbol_with_spaces_at_an_end_is_refused_not_made_a_symbol_of_its_own(maps: Path) -> None:
    tsx = maps / "room.tsx"
    tsx.write_text(tsx.read_text().replace('<property name="symbol" value="water"/>', '<property name="symbol" value="water "/>'))
    with pytest.raises(ValidationError, match=r"tile 3 of tileset 'room' has `symbol` 'water ', with spaces at an end"):
        load(maps.parent, "maps/start.tmx")


HAND_RECIPE = """\
[pack]
name = "hand"
seed = 7
maps = 2

[stage.start]
use = "load.tmx"
file = "maps/start.tmx"

[stage.tmx]
use = "export.tmx"
input = "start"
"""


@needs_tiled
def test_a_recipe_builds_through_the_cli_and_goes_stale_when_the_map_changes(tmp_path: Path) -> None:
    maps = tmp_path / "recipes" / "maps"
    shutil.copytree(MAPS, maps)
    # The map the recipe reads is one Tiled itself wrote, as JSON with zlib data.
    to_zlib(maps / "start.tmx", maps / "zlib.tmx")
    tiled_export(maps / "zlib.tmx", maps / "start.tmj")
    recipe = write_recipe(tmp_path, "hand", HAND_RECIPE.replace("start.tmx", "start.tmj"))
    pcg("build", recipe, cwd=tmp_path)
    pack = tmp_path / "exports" / "hand"
    expected = np.vectorize(NAMES.get)(source_gids(MAPS / "start.tmx"))
    for stem in ("map_000", "map_001"):
        exported = pytmx.TiledMap(str(pack / f"{stem}.tmx"))
        layer = exported.layers[0]
        # The map keeps its art (the map's layer is named as the pack's: one layer): each tile's
        # symbol is its `symbol`, as drawn.
        props = [[exported.get_tile_properties_by_gid(g) for g in row] for row in layer.data]
        names = np.array([[p.get("name", p.get("symbol")) for p in row] for row in props])
        assert (names == expected).all()
        assert [(o.name, o.x, o.y) for o in exported.objects][:2] == [("spawn", 40, 120), ("exit", 280, 24)]
    assert "Nothing to do" in pcg("build", recipe, cwd=tmp_path).stdout
    # Tiled again, after an edit: a door becomes floor.
    tmx = (maps / "start.tmx").read_text()
    lines = tmx.splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith("1,2,2,2") and ",3," in line)
    lines[row] = lines[row].replace(",3,", ",2,", 1)
    (maps / "start.tmx").write_text("\n".join(lines) + "\n")
    to_zlib(maps / "start.tmx", maps / "zlib.tmx")
    tiled_export(maps / "zlib.tmx", maps / "start.tmj")
    explained = pcg("explain", recipe, cwd=tmp_path).stdout
    assert "file it reads changed (maps/start.tmj)" in explained
    pcg("build", recipe, cwd=tmp_path)
    assert "Nothing to do" in pcg("build", recipe, cwd=tmp_path).stdout
    # The tileset is read too: a symbol renamed there makes the stage stale.
    tsx = maps / "room.tsx"
    tsx.write_text(tsx.read_text().replace('value="water"', 'value="lava"'))
    assert "file it reads changed (maps/room.tsx)" in pcg("explain", recipe, cwd=tmp_path).stdout


def test_the_example_recipe_builds(tmp_path: Path) -> None:
    shutil.copytree(RECIPES / "maps", tmp_path / "recipes" / "maps")
    shutil.copy(RECIPES / "handmade.toml", tmp_path / "recipes" / "handmade.toml")
    shutil.copytree(RECIPES.parent / "tilesets", tmp_path / "tilesets")
    pcg("build", "recipes/handmade.toml", cwd=tmp_path)
    pack = tmp_path / "exports" / "handmade"
    assert sorted(p.name for p in pack.glob("map_*.tmx")) == ["map_000.tmx", "map_001.tmx", "map_002.tmx"]
    exported = pytmx.TiledMap(str(pack / "map_000.tmx"))
    assert {o.type for o in exported.objects} == {"spawn", "exit", "chest", "key"}


@pytest.mark.parametrize("profile", ["tiled", "godot"])
def test_a_map_we_exported_loads_back_as_the_map_it_was(tmp_path: Path, profile: str) -> None:
    # Touch a generated maze up in Tiled, then carry on from it: our tiles name the symbol in
    # `name` and give its char as `symbol` (godot: data_name, data_symbol).
    write_recipe(tmp_path, "made", f'[pack]\nname = "made"\nseed = 4\nmaps = 1\n\n[stage.maze]\nuse = "maze.backtracker"\ncells = [7, 5]\n\n[stage.doors]\nuse = "rewrite"\ninput = "maze"\nvalues = "BWD"\nprogram = {{ one = "BWB=BDB", steps = 3 }}\n\n[stage.tmx]\nuse = "export.tmx"\ninput = "doors"\nprofile = "{profile}"\nencoding = "csv"\ncompression = "none"\n')
    pcg("build", "recipes/made.toml", "-q", cwd=tmp_path)
    made = tmp_path / "exports" / "made"
    write_recipe(tmp_path, "again", '[pack]\nname = "again"\nseed = 1\nmaps = 1\n\n[stage.start]\nuse = "load.tmx"\nfile = "../exports/made/map_000.tmx"\n\n[stage.braid]\nuse = "post.braid"\ninput = "start"\nfraction = 0.5\n\n[stage.tmx]\nuse = "export.tmx"\ninput = "braid"\n')
    level = load(tmp_path / "recipes", "../exports/made/map_000.tmx")
    assert [(s.char, s.name) for s in level.alphabet] == [("B", "wall"), ("W", "floor"), ("D", "dark_grey")]  # D: MarkovJunior's
    tiles = source_gids(made / "map_000.tmx")
    assert (tiles == 3).any() and (names_of(level) == np.array(["", "wall", "floor", "dark_grey"])[tiles]).all()
    # Where it came from is the old build's, which the next export says anew: not the map's own.
    assert not set(level.properties) & {"pack", "map", "seed", "stages"} and "rewrite_steps" in level.properties
    built = pcg("build", "recipes/again.toml", "-q", cwd=tmp_path)  # a stage that needs `floor` runs on it
    assert built.stderr == "", built.stderr


def test_provenance_is_what_the_exporters_write() -> None:
    from pipeline.level import PROVENANCE
    from pipeline.building.plan import export_provenance
    from pipeline.recipe.load import load_recipe

    recipe = load_recipe(RECIPES / "dfs_maze.toml")
    assert set(export_provenance(recipe, 0, recipe.exporters[0].name, attempt=1)) == set(PROVENANCE)


def test_a_hand_made_map_property_the_exporters_write_is_a_warning(maps: Path) -> None:
    (maps / "start.tmx").write_text((maps / "start.tmx").read_text().replace('<property name="author" value="hand-made"/>', '<property name="seed" value="custom"/>'))
    stage = LoadTmx.model_validate({"file": "maps/start.tmx"}, context={"recipe_dir": maps.parent})
    assert stage.warnings() == [
        "file: maps/start.tmx: its map property 'seed' is one the exporters write of every map (where it came from), so the exported map has theirs: rename it"
    ]


def test_a_hand_drawn_tileset_with_a_one_letter_symbol_and_a_name_keeps_its_symbol(maps: Path) -> None:
    # Only a tileset whose every tile is named as ours are (name, and a one-letter symbol) is
    # read as ours: here one tile is, by chance, and the others are not.
    tsx = maps / "room.tsx"
    tsx.write_text(tsx.read_text().replace('<property name="symbol" value="water"/>', '<property name="name" value="lake"/>\n   <property name="symbol" value="~"/>'))
    level = load(maps, "start.tmx")
    assert [s.name for s in level.alphabet] == ["wall", "floor", "door", "~"]
    # Every tile so: ours.
    text = tsx.read_text()
    for old, name, char in (("wall", "wall", "B"), ("floor", "floor", "W"), ("door", "door", "D")):
        text = text.replace(f'<property name="symbol" value="{old}"/>', f'<property name="name" value="{name}"/>\n   <property name="symbol" value="{char}"/>')
    tsx.write_text(text)
    assert [(s.char, s.name) for s in load(maps, "start.tmx").alphabet] == [("B", "wall"), ("W", "floor"), ("D", "door"), ("~", "lake")]


@pytest.mark.parametrize("profile", ["tiled", "godot"])
def test_a_map_exported_with_object_tiles_in_its_tileset_loads_back(tmp_path: Path, profile: str) -> None:
    # stone.toml's chest and key are object tiles: named, with no symbol of their own.
    shutil.copytree(RECIPES.parent / "tilesets", tmp_path / "tilesets")
    write_recipe(tmp_path, "made", (
        '[pack]\nname = "made"\nseed = 4\nmaps = 1\n\n[stage.rooms]\nuse = "dungeon.rooms_and_mazes"\nsize = [21, 15]\n\n'
        '[stage.chests]\nuse = "place.items"\ninput = "rooms"\ntype = "chest"\ntile = "chest"\ncount = 2\n\n'
        f'[stage.tmx]\nuse = "export.tmx"\ninput = "chests"\ntileset = "../tilesets/stone.toml"\nprofile = "{profile}"\nencoding = "csv"\ncompression = "none"\n'
    ))
    pcg("build", "recipes/made.toml", "-q", cwd=tmp_path)
    level = load(tmp_path / "recipes", "../exports/made/map_000.tmx")
    assert [(s.char, s.name) for s in level.alphabet] == [("B", "wall"), ("W", "floor"), ("D", "door")]
    write_recipe(tmp_path, "again", (
        '[pack]\nname = "again"\nseed = 1\nmaps = 1\n\n[stage.start]\nuse = "load.tmx"\nfile = "../exports/made/map_000.tmx"\n\n'
        '[stage.tmx]\nuse = "export.tmx"\ninput = "start"\ntileset = "../tilesets/stone.toml"\n'
    ))
    pcg("build", "recipes/again.toml", "-q", cwd=tmp_path)
    # Tile for tile the same map, variants too: the same cells draw the same variants.
    assert source_gids(tmp_path / "exports" / "again" / "map_000.tmx").tolist() == source_gids(tmp_path / "exports" / "made" / "map_000.tmx").tolist()


def test_a_hand_made_maps_own_properties_outlive_stages_that_start_their_stats_afresh(tmp_path: Path) -> None:
    # A rule program and a maze carved into the map make stats of their own; the designer's
    # `author` and `difficulty` were dropped with the old stats, and a filter could not read them.
    shutil.copytree(MAPS, tmp_path / "recipes" / "maps")
    text = HAND_RECIPE.replace(
        '[stage.tmx]\nuse = "export.tmx"\ninput = "start"\n',
        '[stage.moss]\nuse = "rewrite"\ninput = "start"\nvalues = "BWDw"\nprogram = { prl = { rule = "W=W" } }\nmax_steps = 1\non_max_steps = "stop"\n\n'
        '[stage.hard]\nuse = "filter"\ninput = "moss"\nwhere = "difficulty == 2"\n\n'
        '[stage.tmx]\nuse = "export.tmx"\ninput = "hard"\n',
    )
    write_recipe(tmp_path, "hand", text)
    pcg("build", "recipes", "-q", cwd=tmp_path)
    root = ET.parse(tmp_path / "exports" / "hand" / "map_000.tmx").getroot()
    props = {p.get("name"): p.get("value") for p in root.find("properties").iter("property")}  # type: ignore[union-attr]
    assert props["author"] == "hand-made" and props["difficulty"] == "2" and "rewrite_steps" in props, props
    # A recipe without a hand-made map keeps the keys it had: nothing of it is built again.
    from pipeline.recipe.load import load_recipe

    plain = load_recipe(RECIPES / "dfs_maze.toml")
    assert plain.handed_on == {}


def test_a_filter_on_an_object_reference_is_refused_as_the_recipe_loads(tmp_path: Path) -> None:
    # `goal` names the exit: no stat to compare, and every map would fail "goal not measured".
    from pipeline.errors import RecipeError
    from pipeline.recipe.load import load_recipe

    shutil.copytree(MAPS, tmp_path / "recipes" / "maps")
    text = HAND_RECIPE.replace('[stage.tmx]\nuse = "export.tmx"\ninput = "start"\n', '[stage.f]\nuse = "filter"\ninput = "start"\nwhere = "goal > 0"\n\n[stage.tmx]\nuse = "export.tmx"\ninput = "f"\n')
    write_recipe(tmp_path, "hand", text)
    with pytest.raises(RecipeError) as refused:
        load_recipe(tmp_path / "recipes" / "hand.toml")
    assert refused.value.problems[0].endswith("stage.f.where: 'goal' is an object reference (it names an object of the map), not a stat to read")


def test_a_stat_named_like_a_hand_made_property_is_a_warning(tmp_path: Path) -> None:
    # The designer's `regions` (a note) was replaced by regions.label's count without a word.
    from pipeline.recipe.load import load_recipe

    shutil.copytree(MAPS, tmp_path / "recipes" / "maps")
    start = tmp_path / "recipes" / "maps" / "start.tmx"
    start.write_text(start.read_text().replace('<property name="author" value="hand-made"/>', '<property name="regions" value="three rooms"/>'))
    text = HAND_RECIPE.replace('[stage.tmx]\nuse = "export.tmx"\ninput = "start"\n', '[stage.areas]\nuse = "regions.label"\ninput = "start"\n\n[stage.tmx]\nuse = "export.tmx"\ninput = "areas"\n')
    write_recipe(tmp_path, "hand", text)
    path = tmp_path / "recipes" / "hand.toml"
    assert load_recipe(path).warnings() == [
        f"{path}: stage.areas: adds the stat 'regions', which replaces the map property of that name written by hand (stage.start):"
        " rename the property, or read the stat instead"
    ]
    built = pcg("build", "recipes", "-q", cwd=tmp_path)
    assert "adds the stat 'regions'" in built.stderr
    # The map's other properties meet no stat of theirs: nothing to say.
    start.write_text(start.read_text().replace('<property name="regions" value="three rooms"/>', '<property name="author" value="hand-made"/>'))
    assert load_recipe(path).warnings() == []


def test_a_class_property_is_a_warning_and_a_tile_object_of_no_tileset_an_error(maps: Path) -> None:
    # Both were accepted without a word: the property vanished, and the object's tile is one
    # that Tiled draws as missing.
    start = maps / "start.tmx"
    original = start.read_text()
    start.write_text(original.replace(
        '<property name="author" value="hand-made"/>',
        '<property name="author" value="hand-made"/>\n  <property name="stats" type="class" propertytype="Stats">'
        '<properties><property name="hp" type="int" value="3"/></properties></property>',
    ))
    stage = LoadTmx.model_validate({"file": "maps/start.tmx"}, context={"recipe_dir": maps.parent})
    assert stage.warnings() == [
        "file: maps/start.tmx: map property 'stats' (of type 'class') is not read: a Level holds string, int, float, bool, color,"
        " file and object properties"
    ]
    assert "stats" not in stage.run([], np.random.default_rng(0)).properties
    start.write_text(original.replace('<object id="1" name="spawn" type="spawn" x="40" y="120">',
                                      '<object id="1" name="spawn" type="spawn" gid="999" x="40" y="136" width="16" height="16">'))
    with pytest.raises(ValidationError) as refused:
        LoadTmx.model_validate({"file": "maps/start.tmx"}, context={"recipe_dir": maps.parent})
    assert "object 1: its tile gid 999 is in none of the map's tilesets" in str(refused.value)
