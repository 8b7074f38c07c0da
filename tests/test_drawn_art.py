"""Hand-drawn art (pipeline.drawn_art): a map drawn in Tiled keeps its tilesets, layers, flips
and tile objects into every exporter, checked through the real Tiled command line, pytmx, Lua
and LDtk's schema, and against the tileset's own pixels; a cell a later stage changes shows
the pack's tile."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

import pipeline
from pipeline.drawn_art import carry_art, flipped_tiles, paste_art, settle_art, turned_art
from pipeline.level.art import FLIP_D, FLIP_H, FLIP_V, Art, art_tileset
from pipeline.level import Level, Symbol
from pipeline.recipe.load import load_recipe

import drawn_maps as dm
from conftest import pcg, tiled_env

ROOT = Path(__file__).resolve().parent.parent
TILED = shutil.which("tiled")
RASTERIZER = shutil.which("tmxrasterizer")
LUA = shutil.which("lua5.4")
needs_tiled = pytest.mark.skipif(TILED is None, reason="Tiled is not installed (apt-get install tiled)")

RECIPE = """
[pack]
name = "drawn"
seed = 5
maps = 1

[stage.start]
use = "load.tmx"
file = "maps/drawn.tmx"

[stage.tmx]
use = "export.tmx"
input = "start"

[stage.tmj]
use = "export.tmj"
input = "start"
dir = "tmj"

[stage.lua]
use = "export.lua"
input = "start"
dir = "lua"

[stage.ldtk]
use = "export.ldtk"
input = "start"
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("drawn")
    dm.write(root)
    (root / "recipes").mkdir()
    shutil.move(str(root / "maps"), str(root / "recipes" / "maps"))
    (root / "recipes" / "drawn.toml").write_text(RECIPE, encoding="utf-8")
    pcg("build", "recipes/drawn.toml", "-q", cwd=root)
    return root / "exports" / "drawn"


def _art_first(doc: dict[str, Any], name: str) -> int:
    return next(t["firstgid"] for t in doc["tilesets"] if t.get("name") == name)


def _tiled_json(path: Path, out: Path) -> dict[str, Any]:
    proc = subprocess.run(
        ["tiled", "--export-map", "json", "--embed-tilesets", str(path), str(out)], env=tiled_env(), capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _layer(doc: dict[str, Any], name: str) -> np.ndarray:
    layer = next(lay for lay in doc["layers"] if lay.get("name") == name)
    return np.array(layer["data"], dtype=np.uint64).reshape(layer["height"], layer["width"])


# --------------------------------------------------------------------------------------------
# What load.tmx keeps.
# --------------------------------------------------------------------------------------------


def test_load_keeps_tilesets_layers_flips_and_tile_objects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dm.write(tmp_path)
    monkeypatch.chdir(tmp_path)
    level = pipeline.generate("load.tmx", file="maps/drawn.tmx")
    art = level.art
    assert art is not None
    assert [(t.name, t.source, t.image_size, t.columns, t.tilecount, t.margin, t.spacing) for t in art.tilesets] == [
        ("dungeon art", "maps/art/tiles.png", (64, 32), 4, 8, 0, 0),
        ("props", "maps/props.png", (36, 18), 2, 2, 1, 2),
    ]
    assert art.tilesets[0].image == (tmp_path / "maps/art/tiles.png").read_bytes()
    assert list(art.layers) == ["ground", "decor"]  # the group's layer too, in the map's order
    assert (art.layers["ground"] == dm.GROUND).all()  # the first tileset starts at 1 in both
    assert (art.layers["decor"] == dm.DECOR).all()  # flip bits kept; props at 9 as in the map
    chest = next(o for o in level.objects if o.name == "chest")
    assert chest.art is not None and (chest.art.tileset, chest.art.tile, chest.art.flips) == (art.tilesets[0].key, 6, FLIP_H)
    assert (chest.x, chest.y, chest.w, chest.h) == (*dm.CHEST_CELL, 1, 1)
    # Symbols are as before: the upper tile's.
    assert level.to_text().splitlines()[-4] == "BWWWWWWD"


def test_a_tileset_of_another_tile_size_is_not_kept_and_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dm.write(tmp_path)
    tsx = tmp_path / "maps/art/tiles.tsx"
    tsx.write_text(tsx.read_text().replace('tilewidth="16" tileheight="16"', 'tilewidth="8" tileheight="8"'), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    stage = load_stage(tmp_path, 'file = "maps/drawn.tmx"')
    assert any("tileset 'dungeon art' has 8 x 8-pixel tiles" in w for w in stage.warnings())
    level = stage.run([], np.random.default_rng(0))
    assert level.art is not None and [t.name for t in level.art.tilesets] == ["props"]


def load_stage(folder: Path, body: str) -> Any:
    from pipeline.stages.load.tmx import LoadTmx

    return LoadTmx.model_validate({k.strip(): json.loads(v) for k, v in (line.split("=", 1) for line in body.splitlines())}, context={"recipe_dir": folder})


# --------------------------------------------------------------------------------------------
# The exports.
# --------------------------------------------------------------------------------------------


@needs_tiled
def test_tmx_through_tiled_keeps_layers_flips_tilesets_and_tile_objects(built: Path, tmp_path: Path) -> None:
    doc = _tiled_json(built / "map_000.tmx", tmp_path / "out.json")
    first = _art_first(doc, "dungeon art")
    props = _art_first(doc, "props")
    art = next(t for t in doc["tilesets"] if t["name"] == "dungeon art")
    assert art["image"].endswith("tilesets/drawn/dungeon_art.png") and (art["imagewidth"], art["imageheight"], art["columns"]) == (64, 32, 4)
    assert {p["value"] for t in art["tiles"] for p in t["properties"] if p["name"] == "symbol"} == {"wall", "floor", "door"}
    assert next(t for t in doc["tilesets"] if t["name"] == "props")["margin"] == 1
    assert [lay["name"] for lay in doc["layers"] if lay["type"] == "tilelayer"][:3] == ["tiles", "ground", "decor"]
    assert (_layer(doc, "tiles") == 0).all()  # every cell is drawn: the pack's layer is empty
    assert (_layer(doc, "ground") == dm.GROUND - 1 + first).all()
    decor = _layer(doc, "decor")
    flips = dm.DECOR & np.uint32(FLIP_H | FLIP_V | FLIP_D)
    bare = dm.DECOR & np.uint32(0x0FFFFFFF)
    expected = np.where(bare == 0, 0, np.where(bare >= dm.PROPS_FIRSTGID, bare - dm.PROPS_FIRSTGID + props, bare - 1 + first) | flips)
    assert (decor == expected).all()
    objects = next(lay for lay in doc["layers"] if lay["type"] == "objectgroup")["objects"]
    chest = next(o for o in objects if o["name"] == "chest")
    x, y = dm.CHEST_CELL
    assert (chest["gid"], chest["x"], chest["y"], chest["width"], chest["height"]) == ((first + 6) | FLIP_H, x * 16, (y + 1) * 16, 16, 16)


def test_tmx_through_pytmx(built: Path) -> None:
    pytmx = pytest.importorskip("pytmx")
    tmx = pytmx.TiledMap(str(built / "map_000.tmx"))
    names = [ts.name for ts in tmx.tilesets]
    assert "dungeon art" in names and "props" in names
    art = next(ts for ts in tmx.tilesets if ts.name == "dungeon art")
    assert art.source == "tilesets/drawn/dungeon_art.png" and (built / art.source).is_file()  # its image, from the map's folder
    assert {"ground", "decor"} <= set(tmx.layernames)
    # pytmx registers each flip of a tile as its own gid: the four of tile 5 drawn so are there.
    flags = {(f.flipped_horizontally, f.flipped_vertically, f.flipped_diagonally) for _, f in tmx.gidmap[art.firstgid + 4]}
    assert {(True, False, False), (False, True, False), (False, False, True), (True, False, True)} <= flags
    decor = tmx.get_layer_by_name("decor")
    assert tmx.get_tile_properties_by_gid(decor.data[3][2])["kind"] == "rug"


@pytest.mark.skipif(RASTERIZER is None, reason="tmxrasterizer (Tiled) is not installed")
def test_tmx_as_tiled_draws_it_is_the_tilesets_pixels(built: Path, tmp_path: Path) -> None:
    out = tmp_path / "drawn.png"
    proc = subprocess.run(
        ["tmxrasterizer", "--hide-layer", "objects", str(built / "map_000.tmx"), str(out)], env=tiled_env(), capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    drawn = np.asarray(Image.open(out).convert("RGBA"))
    assert (drawn == dm.expected_picture()).all()


def test_previews_draw_the_art_with_its_flips(built: Path) -> None:
    expected = dm.expected_picture()
    x, y = dm.CHEST_CELL
    expected[y * 16 : (y + 1) * 16, x * 16 : (x + 1) * 16] = dm.gid_pixels(dm.CHEST_GID)  # the tile object, over its cell
    for preview in ("previews/map_000.png", "tmj/previews/map_000.png", "lua/previews/map_000.png", "ldtk/previews/map_000.png"):
        picture = np.asarray(Image.open(built / preview).convert("RGBA"))
        assert picture.shape == expected.shape
        same = (picture == expected).all(axis=2)
        sx, sy = dm.SPAWN_CELL
        same[(sy - 1) * 16 : (sy + 2) * 16, (sx - 1) * 16 : (sx + 2) * 16] = True  # under the spawn's marker
        if preview.startswith("ldtk"):
            # LDtk has no diagonal flip: those cells show the pack's tile (and the build says so).
            turned = (dm.DECOR & np.uint32(FLIP_D)) != 0
            same |= np.kron(turned, np.ones((16, 16), dtype=bool))
        assert same.all(), f"{preview}: {int((~same).sum())} pixels differ from the art"
    sheet = Image.open(built / "contact_sheet.png")
    assert sheet.size[0] > 0


@needs_tiled
def test_tmj_through_tiled(built: Path, tmp_path: Path) -> None:
    ours = json.loads((built / "tmj/map_000.tmj").read_text(encoding="utf-8"))
    first = _art_first(ours, "dungeon art")
    assert any(t.get("image") == "../tilesets/drawn/dungeon_art.png" for t in ours["tilesets"])
    doc = _tiled_json(built / "tmj/map_000.tmj", tmp_path / "out.json")
    assert (_layer(doc, "decor") == _layer(ours, "decor")).all()
    assert int(_layer(doc, "decor")[2, 4]) == (first + 4) | FLIP_D
    chest = next(o for lay in doc["layers"] if lay["type"] == "objectgroup" for o in lay["objects"] if o["name"] == "chest")
    assert chest["gid"] == (first + 6) | FLIP_H


@pytest.mark.skipif(LUA is None, reason="lua5.4 is not installed")
def test_lua_map_loads_with_its_tilesets_and_flips(built: Path) -> None:
    script = (
        'local m = dofile(arg[1]); for _, t in ipairs(m.tilesets) do print("tileset", t.name, t.firstgid, t.image) end '
        'for _, l in ipairs(m.layers) do if l.name == "decor" then print("decor", l.data[2 * 8 + 5], l.data[2 * 8 + 3]) end end'
    )
    proc = subprocess.run(["lua5.4", "-e", f"arg = {{'{built / 'lua/map_000.lua'}'}}", "-e", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    tilesets = {line.split("\t")[1]: line.split("\t") for line in lines if line.startswith("tileset")}
    assert tilesets["dungeon art"][3] == "../tilesets/drawn/dungeon_art.png"
    first = int(tilesets["dungeon art"][2])
    decor = next(line.split("\t") for line in lines if line.startswith("decor"))
    assert (int(decor[1]), int(decor[2])) == ((first + 4) | FLIP_D, (first + 4) | FLIP_H)


def test_ldtk_validates_and_draws_the_art_in_layers_of_its_own(built: Path) -> None:
    import jsonschema

    schema_file = ROOT / "tests/data/ldtk/JSON_SCHEMA.json"
    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    project = json.loads((built / "ldtk/world.ldtk").read_text(encoding="utf-8"))
    jsonschema.Draft7Validator({**schema, "$ref": "#/LdtkJsonRoot"}).validate(project)
    level = json.loads((built / "ldtk/world/map_000.ldtkl").read_text(encoding="utf-8"))
    jsonschema.Draft7Validator({**schema, "$ref": "#/otherTypes/Level"}).validate(level)
    tilesets = {t["identifier"]: t for t in project["defs"]["tilesets"]}
    assert tilesets["dungeon_art"]["relPath"] == "../tilesets/drawn/dungeon_art.png" and tilesets["props"]["padding"] == 1
    layers = {lay["__identifier"]: lay for lay in level["layerInstances"]}
    art = layers["drawn_dungeon_art"]
    assert art["__tilesetDefUid"] == tilesets["dungeon_art"]["uid"]
    at = {}
    for tile in art["gridTiles"]:
        at.setdefault((tile["px"][0] // 16, tile["px"][1] // 16), []).append((tile["t"], tile["f"]))
    assert at[(2, 2)] == [(1, 0), (4, 1)] and at[(3, 2)] == [(1, 0), (4, 2)]  # ground below, decor above, flips as f
    assert (4, 2) not in at  # turned (diagonal): not in LDtk's art layers
    pack = {(t["px"][0] // 16, t["px"][1] // 16) for t in layers["tiles"]["gridTiles"]}
    turned = {(int(x), int(y)) for y, x in zip(*np.nonzero(dm.DECOR & np.uint32(FLIP_D)))}
    assert pack == turned
    chest = next(e for e in layers["entities"]["entityInstances"] if e["__identifier"] == "chest")
    assert chest["__tile"]["tilesetUid"] == tilesets["dungeon_art"]["uid"] and (chest["__tile"]["x"], chest["__tile"]["y"]) == (32, 16)


def test_a_map_without_art_writes_no_drawn_tilesets(tmp_path: Path) -> None:
    level = Level.from_text("B wall #000000\nW floor #ffffff\n\nBBB\nBWB\nBBB\n")
    written = pipeline.export("export.tmx", level, tmp_path)
    assert not any("drawn" in p.as_posix() for p in written)
    assert b"tilesets/drawn" not in (tmp_path / "map.tmx").read_bytes()


# --------------------------------------------------------------------------------------------
# The rule, tile sizes, turning.
# --------------------------------------------------------------------------------------------


def test_a_cell_a_later_stage_changes_shows_the_packs_tile(tmp_path: Path) -> None:
    root = tmp_path
    dm.write(root)
    (root / "recipes").mkdir()
    shutil.move(str(root / "maps"), str(root / "recipes" / "maps"))
    (root / "recipes" / "changed.toml").write_text(
        """
[pack]
name = "changed"
seed = 5
maps = 1

[stage.start]
use = "load.tmx"
file = "maps/drawn.tmx"

[stage.opened]
use = "rewrite"
input = "start"
values = "BWD"
legend = { B = "wall", W = "floor", D = "door" }
program = { all = "WD=WW" }

[stage.placed]
use = "place.spawn_exit"
input = "opened"

[stage.tmx]
use = "export.tmx"
input = "placed"
""",
        encoding="utf-8",
    )
    pcg("build", "recipes/changed.toml", "-q", cwd=root)
    text = (root / "exports/changed/map_000.tmx").read_text(encoding="utf-8")
    import xml.etree.ElementTree as ET

    doc = ET.fromstring(text)
    data = {lay.get("name"): np.array([int(v) for v in (lay.find("data").text or "").replace("\n", "").split(",")], dtype=np.uint64).reshape(6, 8)
            for lay in doc.findall("layer")}
    x, y = 7, 2  # the door, now floor: the pack's floor tile, and no art
    assert data["tiles"][y, x] != 0 and data["ground"][y, x] == 0
    # Every other cell keeps its art (spawn_exit, which knows nothing of art, passed it on).
    assert (data["tiles"] != 0).sum() == 1 and (data["ground"] != 0).sum() == 47


def test_the_rule_drops_art_where_the_symbol_changed_and_keeps_the_rest() -> None:
    alphabet = (Symbol("B", "wall", "#000000"), Symbol("W", "floor", "#ffffff"))
    tiles = np.array([[0, 1, 1]], dtype=np.uint8)
    art = Art((), {"a": np.array([[1, 2, 3]], dtype=np.uint32)}, tiles.copy(), ("wall", "floor"))
    source = Level(tiles=tiles, alphabet=alphabet, art=art)
    # Another alphabet order, one cell changed: art goes by name, and only there.
    made = Level(tiles=np.array([[1, 1, 0]], dtype=np.uint8), alphabet=(alphabet[1], alphabet[0]))
    carry_art([source], made)
    assert made.art is not None and made.art.layers["a"].tolist() == [[1, 0, 3]]
    # A stage that changes the size drops it; one of two inputs carries none it did not paste.
    bigger = Level(tiles=np.zeros((2, 3), dtype=np.uint8), alphabet=alphabet)
    carry_art([source], bigger)
    assert bigger.art is None
    both = Level(tiles=tiles.copy(), alphabet=alphabet)
    carry_art([source, source], both)
    assert both.art is None


def test_paste_art_at_an_offset_under_a_mask() -> None:
    alphabet = (Symbol("B", "wall", "#000000"), Symbol("W", "floor", "#ffffff"))
    one, two = (art_tileset(name, f"{name}.png", b"\x89PNG" + name.encode(), (64, 64), 16, 16, 0, 0, 4, 16, {}) for name in ("one", "two"))
    # The source's tilesets are (two, one): pasted, its gids follow the target's numbering (one, two).
    source_art = Art((two, one), {"top": np.array([[5, 6], [17, 8 | FLIP_H]], dtype=np.uint32)}, np.ones((2, 2), np.uint8), ("wall", "floor"))
    source = Level(tiles=np.ones((2, 2), dtype=np.uint8), alphabet=alphabet, art=source_art)
    target = Level(tiles=np.zeros((3, 4), dtype=np.uint8), alphabet=alphabet)
    target.art = Art((one,), {"base": np.full((3, 4), 1, dtype=np.uint32)}, np.zeros((3, 4), np.uint8), ("wall",))
    target.tiles[1:3, 2:4] = 1
    paste_art(target, source, 2, 1, np.array([[True, False], [True, True]]))
    assert target.art is not None
    assert target.art.layers["base"].tolist() == [[1, 1, 1, 1], [1, 1, 0, 1], [1, 1, 0, 0]]
    assert target.art.tilesets == (one, two)
    assert target.art.layers["top"].tolist() == [[0, 0, 0, 0], [0, 0, 21, 0], [0, 0, 1, 24 | FLIP_H]]
    settle_art(target)  # (3, 1) was not pasted and is floor now: drawn for wall, it goes
    assert target.art is not None and target.art.layers["base"][1, 3] == 0


def test_turning_art_turns_each_tiles_flips_with_it() -> None:
    """For every flip state, mirror and turn: the turned art draws the turned picture."""
    pixels = dm.tile_pixels(0)[None]
    for bits in range(8):
        flips = ((bits & 4) << 29) | ((bits & 2) << 29) | ((bits & 1) << 29)
        art = Art((), {"a": np.array([[1 | flips, 0]], dtype=np.uint32)}, np.zeros((1, 2), np.uint8), ("x",))
        picture = flipped_tiles(pixels, np.array([flips]))[0]
        for mirrored in (False, True):
            for rotation in (0, 90, 180, 270):
                turned = turned_art(art, rotation, mirrored).layers["a"]
                want = picture[:, ::-1] if mirrored else picture
                want = np.rot90(want, -rotation // 90)
                got = flipped_tiles(pixels, np.array([int(turned.max()) & 0xE0000000]))[0]
                assert (got == want).all(), (bits, mirrored, rotation)


def test_art_of_another_tile_size_than_the_packs_is_drawn_with_the_packs_tiles_and_said(tmp_path: Path) -> None:
    dm.write(tmp_path)
    (tmp_path / "r.toml").write_text(
        '[pack]\nname = "r"\nseed = 1\nmaps = 1\n\n[stage.start]\nuse = "load.tmx"\nfile = "maps/drawn.tmx"\n\n'
        '[stage.tmx]\nuse = "export.tmx"\ninput = "start"\ntile_size = 32\n',
        encoding="utf-8",
    )
    recipe = load_recipe(tmp_path / "r.toml")
    message = "\n".join(recipe.warnings())
    assert "stage.tmx.tile_size: the pack's tiles are 32 x 32 pixels, but stage.start draws with tileset 'dungeon art' (maps/art/tiles.png)" in message
    assert "set tile_size = 16 to keep the art" in message
    assert not any("drawn" in path for path in recipe.by_name["tmx"].params.shared_outputs())  # no drawn tileset
    level = recipe.by_name["start"].params.run([], np.random.default_rng(0))
    files = recipe.by_name["tmx"].params.export(level, __import__("pipeline.registry", fromlist=["ExportContext"]).ExportContext(stem="m"))
    assert b"drawn" not in files["m.tmx"] and b'name="ground"' not in files["m.tmx"]


def test_prefabs_stamp_their_art_turned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Placements turned and mirrored every way the seeds give: the cells drawn are the drawn
    map's picture turned so, flip bits and all."""
    dm.write(tmp_path)
    monkeypatch.chdir(tmp_path)
    base = pipeline.generate("dungeon.bsp", size=[40, 30], seed=3)
    seen = set()
    for seed in range(6):
        placed = pipeline.generate("place.prefabs", inputs=[base], prefabs="maps/drawn.tmx", rotate=True, mirror=True, over=["wall"], seed=seed)
        seen.add(_check_placed(placed, tmp_path / f"out{seed}"))
    assert len(seen) >= 3, seen


def _check_placed(placed: Level, out: Path) -> tuple[int, bool]:
    import re
    import xml.etree.ElementTree as ET

    found = re.search(r"at \((\d+), (\d+)\) rot (\d+)( mirrored)?", str(placed.properties["prefab_1"]))
    assert found is not None
    x, y, rotation, mirrored = int(found[1]), int(found[2]), int(found[3]), bool(found[4])
    pipeline.export("export.tmx", placed, out, preview=False, embed_tileset=True)
    doc = ET.parse(out / "map.tmx").getroot()
    firsts = {ts.get("name"): int(ts.get("firstgid", "0")) for ts in doc.findall("tileset")}
    top = np.zeros((int(doc.get("height", "0")), int(doc.get("width", "0"))), dtype=np.uint64)
    for name in ("ground", "decor"):
        lay = next(lay for lay in doc.findall("layer") if lay.get("name") == name)
        gids = np.array([int(v) for v in (lay.find("data").text or "").replace("\n", "").split(",")], dtype=np.uint64).reshape(top.shape)  # type: ignore[union-attr]
        top = np.where(gids != 0, gids, top)
    # Back to the fixture's numbering, then drawn as Tiled draws it.
    bare = top & 0x0FFFFFFF
    fixture = np.where(bare >= firsts["props"], bare - firsts["props"] + dm.PROPS_FIRSTGID, bare - firsts["dungeon art"] + 1) | (top & 0xE0000000)
    want = dm.expected_picture()
    if mirrored:
        want = want[:, ::-1]
    want = np.rot90(want, -rotation // 90)
    h, w = want.shape[0] // 16, want.shape[1] // 16
    assert (bare[y : y + h, x : x + w] != 0).all() and (bare != 0).sum() == h * w  # the prefab's cells alone are drawn
    rows = [np.concatenate([dm.gid_pixels(int(g)) for g in row], axis=1) for row in fixture[y : y + h, x : x + w]]
    assert (np.concatenate(rows, axis=0) == want).all(), (rotation, mirrored)
    return rotation, mirrored


def test_the_gallery_draws_the_art_from_the_packs_files(built: Path) -> None:
    import io

    from pipeline.serve.mapfile import picture, read_map

    for relative in ("map_000.tmx", "tmj/map_000.tmj"):
        drawn = np.asarray(Image.open(io.BytesIO(picture(built, read_map(built, relative)))).convert("RGBA"))
        assert (drawn == dm.expected_picture()).all(), relative


@needs_tiled
@pytest.mark.parametrize("kind", ["export.tmx", "export.tmj"])
def test_external_and_embedded_drawn_tilesets_find_their_image(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dm.write(tmp_path)
    monkeypatch.chdir(tmp_path)
    level = pipeline.generate("load.tmx", file="maps/drawn.tmx")
    for embed in (True, False):
        out = tmp_path / f"out-{embed}"
        written = pipeline.export(kind, level, out, dir="maps", embed_tileset=embed, preview=False)
        names = sorted(p.relative_to(out).as_posix() for p in written if "drawn" in p.as_posix())
        suffix = "tsx" if kind == "export.tmx" else "tsj"
        assert names == (["tilesets/drawn/dungeon_art.png", "tilesets/drawn/props.png"] if embed else
                         ["tilesets/drawn/dungeon_art.png", f"tilesets/drawn/dungeon_art.{suffix}", "tilesets/drawn/props.png", f"tilesets/drawn/props.{suffix}"])
        doc = _tiled_json(out / f"maps/map.{'tmx' if kind == 'export.tmx' else 'tmj'}", out / "maps/read.json")
        art = next(t for t in doc["tilesets"] if t["name"] == "dungeon art")
        assert art["image"] == "../tilesets/drawn/dungeon_art.png" and art["imagewidth"] == 64, (embed, art)
        assert (out / "maps" / art["image"]).is_file()


def test_levels_pickled_before_art_existed_load_without_it() -> None:
    import pickle

    level = Level.from_text("B wall #000000\n\nB\n")
    obj = __import__("pipeline.level", fromlist=["MapObject"]).MapObject("a", "b", 0, 0)
    level.objects.append(obj)
    del level.__dict__["art"]  # as a Level pickled by an earlier version has it
    object.__delattr__(obj, "art")
    again = pickle.loads(pickle.dumps(level))
    assert again.art is None and again.objects[0].art is None
