"""Game-ready exports: tilesets (own art, generated, extruded, autotiled), layers, objects, Tiled
JSON, engine profiles, previews and contact sheets, checked with the real clients users have:
Tiled and tmxrasterizer, pytmx and pytiled-parser."""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from PIL import Image

import pipeline
from conftest import TMXRASTERIZER, needs_tiled, pcg, tiled_env, tree_digests, write_recipe
from pipeline.errors import PipelineError, RecipeError
from pipeline.level import Color, Level, MapObject
from pipeline.recipe.load import load_recipe
from pipeline.registry import ExportContext
from pipeline.stages.export.tmx import ExportTmx
from pipeline.stages.maze.block import MAZE_ALPHABET
from pipeline.tiled.autotile import BLOB_MASKS, CORNER_MASKS, choose, neighbour_masks, wang_id
from pipeline.tiled.markers import Marker, draw, drawing_order
from pipeline.tiled.tileset import Tileset
from pipeline.tiled.validate import check_map

ROOT = Path(__file__).resolve().parents[1]


def maps_of(examples: Path) -> list[Path]:
    return sorted([*(examples / "exports").rglob("*.tmx"), *(examples / "exports").rglob("*.tmj")])


def preview_of(path: Path) -> Path:
    return path.parent / "previews" / f"{path.stem}.png"


def rgba(path: Path) -> np.ndarray:
    image = np.asarray(Image.open(path).convert("RGBA")).copy()
    image[image[..., 3] == 0] = 0  # fully transparent pixels carry no colour
    return image


def run_tiled(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, env=tiled_env(), capture_output=True, text=True, timeout=120)


def run_on_each(
    paths: list[Path], root: Path, tmp_path: Path, suffix: str, command: Callable[[Path, Path], list[str]]
) -> list[tuple[Path, subprocess.CompletedProcess[str], Path]]:
    """Run a Tiled tool on every map, four at a time; (map, process, output file) for each."""

    def one(path: Path) -> tuple[Path, subprocess.CompletedProcess[str], Path]:
        out = tmp_path / (path.relative_to(root).as_posix().replace("/", "-") + suffix)
        return path, run_tiled(command(path, out)), out

    with ThreadPoolExecutor(4) as pool:
        return list(pool.map(one, paths))


@needs_tiled
def test_real_tiled_loads_every_example_map_and_agrees_with_our_tilesets(examples: Path, tmp_path: Path) -> None:
    """Every TMX and TMJ map of every example recipe through `tiled --export-map json`, and every
    external tileset through `--export-tileset`: exit 0, and the tileset fields Tiled recomputes
    from the image (columns, tilecount) are the ones we wrote."""
    paths = maps_of(examples)
    assert len(paths) >= 100
    assert any(p.suffix == ".tmj" for p in paths)

    results = run_on_each(paths, examples, tmp_path, ".json", lambda path, out: ["tiled", "--export-map", "json", str(path), str(out)])
    for path, proc, out in results:
        assert proc.returncode == 0, (path, proc.stderr)
        data = json.loads(out.read_text())
        for tileset in data["tilesets"]:
            if "source" in tileset:
                continue  # external: checked below
            assert (tileset["columns"], tileset["tilecount"]) == embedded_grid(path, tileset["name"]), path
        tile_layers = [layer for layer in data["layers"] if layer["type"] == "tilelayer"]
        assert tile_layers and all(layer["width"] * layer["height"] == data["width"] * data["height"] for layer in tile_layers)
    tsx_files = sorted((examples / "exports").rglob("*.tsx"))
    assert tsx_files
    for tsx in tsx_files:
        out = tmp_path / (tsx.relative_to(examples).as_posix().replace("/", "-") + ".json")
        proc = run_tiled(["tiled", "--export-tileset", "json", str(tsx), str(out)])
        assert proc.returncode == 0, (tsx, proc.stderr)
        theirs = json.loads(out.read_text())
        ours = pytiled_tileset(tsx)
        assert (theirs["columns"], theirs["tilecount"]) == (ours.columns, ours.tile_count), tsx
        with Image.open(out.parent / theirs["image"]) as image:  # Tiled writes it relative to its output
            assert (theirs["imagewidth"], theirs["imageheight"]) == image.size


def embedded_grid(path: Path, name: str) -> tuple[int, int]:
    """columns and tilecount of a tileset embedded in our map file, as we wrote them."""
    import pytiled_parser

    tileset = next(t for t in pytiled_parser.parse_map(path).tilesets.values() if t.name == name)
    return tileset.columns, tileset.tile_count


def pytiled_tileset(path: Path):  # type: ignore[no-untyped-def]
    import pytiled_parser

    return pytiled_parser.parse_tileset(path)


@pytest.mark.skipif(TMXRASTERIZER is None, reason="tmxrasterizer (Debian package tiled) is not installed")
def test_tmxrasterizer_draws_every_example_map_as_our_preview_does(examples: Path, tmp_path: Path) -> None:
    """Our previews are drawn from the tilesheet: Tiled's own renderer, given the same map with
    its tile objects (and without the points, rectangles and paths, which it draws in its editor
    style, blended), paints the same pixels; our markers of those, drawn from the objects the map
    file holds, make up the rest of the preview exactly."""
    paths = [p for p in maps_of(examples) if preview_of(p).is_file()]
    assert len(paths) >= 100 and any(p.suffix == ".tmj" for p in paths)
    tiles_only = {path: tile_objects_only(path, tmp_path / "maps") for path in paths}
    assert sum(bool(file_markers(p)[0]) for p in paths) >= 20  # maps with markers are checked too

    results = run_on_each(paths, examples, tmp_path, ".png", lambda path, out: ["tmxrasterizer", str(tiles_only[path]), str(out)])
    for path, proc, out in results:
        assert proc.returncode == 0, (path, proc.stderr)
        theirs, ours = rgba(out), rgba(preview_of(path))
        step = -(-theirs.shape[1] // ours.shape[1])  # previews of huge maps keep every k-th pixel
        theirs = theirs[::step, ::step]
        assert theirs.shape == ours.shape, path
        shown, tile = file_markers(path)
        if shown:
            image = Image.fromarray(np.ascontiguousarray(theirs), "RGBA")
            draw(image, shown, 1 / step, tile / step)
            theirs = np.asarray(image)
        assert (theirs == ours).all(), f"{path}: {(theirs != ours).any(axis=-1).sum()} pixels differ"


def file_markers(path: Path) -> tuple[list[Marker], int]:
    """The markers of the objects a TMX or TMJ file holds, read from the file as Tiled reads it,
    and its tile size (the smaller side)."""
    found: list[Marker] = []
    rooms: dict[str, tuple[float, float]] = {}  # a level graph's node -> its room's middle
    doors: list[tuple[str, str, bool, tuple[float, float]]] = []  # from, to, locked, middle

    def graph_part(kind: str, x: float, y: float, w: float, h: float, props: dict[str, str]) -> None:
        if kind == "room" and "node" in props:
            rooms.setdefault(props["node"], (x + w / 2, y + h / 2))
        elif kind == "door" and "from" in props and "to" in props:
            doors.append((props["from"], props["to"], "lock" in props, (x + w / 2, y + h / 2)))

    if path.suffix == ".tmj":
        data = json.loads(path.read_text())
        objects = [o for layer in data["layers"] if layer["type"] == "objectgroup" for o in layer["objects"]]
        tile = min(data["tilewidth"], data["tileheight"])
        for o in objects:
            x, y, w, h = float(o["x"]), float(o["y"]), float(o.get("width", 0)), float(o.get("height", 0))
            graph_part(o["type"], x, y, w, h, {p["name"]: str(p["value"]) for p in o.get("properties", [])})
            if "gid" in o:
                found.append(Marker("tile", o["type"], x, y - h, w, h))
            elif "polyline" in o:
                found.append(Marker("path", o["type"], x, y, points=tuple((x + p["x"], y + p["y"]) for p in o["polyline"])))
            elif o.get("point"):
                found.append(Marker("point", o["type"], x, y))
            else:
                props = {p["name"]: p["value"] for p in o.get("properties", [])}
                found.append(Marker("rect", "locked" if o["type"] == "door" and props.get("lock") else o["type"], x, y, w, h))
    else:
        root = ET.parse(path).getroot()
        tile = min(int(root.get("tilewidth", 0)), int(root.get("tileheight", 0)))
        for o in root.iter("object"):
            x, y = float(o.get("x", 0)), float(o.get("y", 0))
            w, h = float(o.get("width", 0)), float(o.get("height", 0))
            kind = o.get("type", "")
            graph_part(kind, x, y, w, h, {p.get("name", ""): p.get("value", "") for p in o.iterfind("properties/property")})
            polyline = o.find("polyline")
            if o.get("gid"):
                found.append(Marker("tile", kind, x, y - h, w, h))
            elif polyline is not None:
                pairs = [p.split(",") for p in (polyline.get("points") or "").split()]
                found.append(Marker("path", kind, x, y, points=tuple((x + float(a), y + float(b)) for a, b in pairs)))
            elif o.find("point") is not None:
                found.append(Marker("point", kind, x, y))
            else:
                locked = kind == "door" and any(p.get("name") == "lock" and p.get("value") for p in o.iterfind("properties/property"))
                found.append(Marker("rect", "locked" if locked else kind, x, y, w, h))
    for a, b, locked, door in doors:
        if a in rooms and b in rooms:
            found.append(Marker("link", "locked" if locked else "link", *door, points=(rooms[a], door, rooms[b])))
    return drawing_order(found), tile


def tile_objects_only(path: Path, folder: Path) -> Path:
    """A copy of the map in `folder` with only its tile objects, its tilesets named by absolute
    paths."""
    folder.mkdir(exist_ok=True)
    out = folder / (path.parent.as_posix().strip("/").replace("/", "-") + "-" + path.name)
    if path.suffix == ".tmj":
        data = json.loads(path.read_text())
        for layer in data["layers"]:
            if layer["type"] == "objectgroup":
                layer["objects"] = [o for o in layer["objects"] if "gid" in o]
        for tileset in data["tilesets"]:
            for key in ("source", "image"):
                if key in tileset:
                    tileset[key] = str((path.parent / tileset[key]).resolve())
        out.write_text(json.dumps(data))
        return out
    tree = ET.parse(path)
    root = tree.getroot()
    for group in root.iter("objectgroup"):
        for o in list(group):
            if o.tag == "object" and not o.get("gid"):
                group.remove(o)
    for node in [*root.iter("tileset"), *root.iter("image")]:
        if node.get("source"):
            node.set("source", str((path.parent / node.get("source", "")).resolve()))
    tree.write(out, encoding="UTF-8", xml_declaration=True)
    return out


def test_pytmx_and_pytiled_parser_load_every_map_and_tileset(examples: Path) -> None:
    import pytiled_parser
    import pytmx

    for path in maps_of(examples):
        parsed = pytiled_parser.parse_map(path)
        assert parsed.map_size.width > 0
        if path.suffix == ".tmx":
            loaded = pytmx.TiledMap(str(path))
            assert [layer.name for layer in loaded.layers] == [layer.name for layer in parsed.layers]
    for tsx in sorted((examples / "exports").rglob("*.tsx")):
        tileset = pytiled_parser.parse_tileset(tsx)
        assert tileset.tile_count == tileset.columns * (tileset.tile_count // tileset.columns)


def test_wang_sets_parse_with_their_type_and_tile_count(examples: Path) -> None:
    import pytiled_parser

    seen = {}
    for tsx in sorted((examples / "exports").rglob("*.tsx")):
        for wang in pytiled_parser.parse_tileset(tsx).wang_sets or []:
            seen[tsx.stem] = (wang.wang_type, len(wang.wang_tiles), len(wang.wang_colors))
    # The isolated piece stays out of a set (its wangid is plain ground's); the ground tile is in.
    assert seen["stone"] == ("mixed", 47, 2)
    assert seen["maze"] == ("mixed", 47, 2)
    assert seen["caves"] == ("mixed", 47, 2)  # the corner set is checked in test_collision.py
    assert seen["dungeon"] == ("mixed", 47, 2)


def test_objects_and_typed_properties_round_trip_through_both_readers(examples: Path) -> None:
    """The dungeons pack's chests are tile objects with int, float, bool, colour and string
    properties; spawn and exit are points; rooms rectangles. pytmx, pytiled-parser and our
    Tiled JSON all read the same names, types and values."""
    import pytiled_parser
    import pytmx

    tmx = examples / "exports" / "dungeons" / "map_000.tmx"
    tmj = examples / "exports" / "dungeons" / "phaser" / "map_000.tmj"
    mine = pytmx.TiledMap(str(tmx))
    chests = [o for o in mine.objects if o.type == "chest"]
    assert chests and all(o.gid for o in chests)
    assert {"spawn", "exit"} <= {o.name for o in mine.objects}
    for parsed_path in (tmx, tmj):
        parsed = pytiled_parser.parse_map(parsed_path)
        layer = next(layer for layer in parsed.layers if isinstance(layer, pytiled_parser.ObjectLayer))
        objects = {o.name: o for o in layer.tiled_objects}
        assert [(o.name, o.class_) for o in layer.tiled_objects] == [(o.name, o.type) for o in mine.objects]
        chest = objects["chest_1"]
        assert isinstance(chest, pytiled_parser.tiled_object.Tile)
        props = chest.properties
        assert props["gold"] == 25 and isinstance(props["gold"], int)
        assert props["weight"] == 2.5 and isinstance(props["weight"], float)
        assert props["locked"] is False
        assert isinstance(props["glow"], pytiled_parser.Color) and tuple(props["glow"]) == (255, 163, 0, 255)
        assert isinstance(objects["spawn"], pytiled_parser.tiled_object.Point)
        assert isinstance(objects["room_1"], pytiled_parser.tiled_object.Rectangle)
    spawn = next(o for o in mine.objects if o.name == "spawn")
    assert isinstance(spawn.properties["path_length"], int)
    assert next(o for o in mine.objects if o.name == "chest_1").properties["glow"] == "#ffffa300"


def test_tile_properties_reach_every_autotiled_piece(examples: Path) -> None:
    import pytiled_parser

    tileset = pytiled_parser.parse_tileset(examples / "exports" / "dungeons" / "tilesets" / "stone.tsx")
    assert tileset.tiles is not None
    walls = [t for t in tileset.tiles.values() if t.properties and t.properties.get("name") == "wall"]
    assert len(walls) == 48  # the plain wall tile and the 47 blob pieces
    assert all(t.properties["solid"] is True for t in walls)
    assert tileset.tiles[1].properties["door"] is True


walls = arrays(np.bool_, st.tuples(st.integers(1, 12), st.integers(1, 12)), elements=st.booleans())


@settings(max_examples=60, deadline=None)
@given(walls, st.sampled_from(["blob", "corner"]), st.booleans())
def test_autotiling_every_tile_wang_id_matches_its_neighbours(grid: np.ndarray, kind: str, edge_inside: bool) -> None:
    """Each wall tile's Wang id says which neighbours are wall (edges, and corners when all four
    tiles there are wall), and the ids of neighbouring tiles agree wherever they touch."""
    masks = BLOB_MASKS if kind == "blob" else CORNER_MASKS
    chosen = choose(grid, kind, edge_inside)  # type: ignore[arg-type]
    padded = np.pad(grid, 1, constant_values=edge_inside)
    ground = wang_id(0, kind)  # type: ignore[arg-type]
    ids = {}
    h, w = grid.shape
    for y in range(h):
        for x in range(w):
            if not grid[y, x]:
                assert chosen[y, x] == -1
                ids[y, x] = ground
                continue
            wang = wang_id(masks[chosen[y, x]], kind)  # type: ignore[arg-type]
            ids[y, x] = wang
            around = padded[y : y + 3, x : x + 3]
            edges = {0: around[0, 1], 2: around[1, 2], 4: around[2, 1], 6: around[1, 0]}
            corners = {1: around[:2, 1:].all(), 3: around[1:, 1:].all(), 5: around[1:, :2].all(), 7: around[:2, :2].all()}
            if kind == "blob":
                for slot, wall in edges.items():
                    assert wang[slot] == (1 if wall else 2), (y, x, slot)
            for slot, solid in corners.items():
                assert wang[slot] == (1 if solid else 2), (y, x, slot)
    for (y, x), wang in ids.items():
        if (y, x + 1) in ids:
            right = ids[y, x + 1]
            assert (wang[1], wang[2], wang[3]) == (right[7], right[6], right[5])
        if (y + 1, x) in ids:
            below = ids[y + 1, x]
            assert (wang[5], wang[4], wang[3]) == (below[7], below[0], below[1])


def test_neighbour_masks_see_the_map_edge_as_told() -> None:
    one = np.ones((1, 1), dtype=bool)
    assert neighbour_masks(one, True)[0, 0] == 255
    assert neighbour_masks(one, False)[0, 0] == 0


@settings(max_examples=25, deadline=None)
@given(walls)
def test_exported_wall_tiles_carry_the_wang_ids_of_their_neighbours(grid: np.ndarray) -> None:
    """End to end through the TMX and its .tsx as pytiled-parser reads them: the tile written in
    every wall cell has the Wang id its neighbours call for."""
    import tempfile

    import pytiled_parser

    level = Level(tiles=np.where(grid, 0, 1).astype(np.uint8), alphabet=MAZE_ALPHABET)
    exporter = ExportTmx.model_validate({"tileset": "tilesets/maze.toml"}, context={"recipe_dir": ROOT})
    files = exporter.export(level, ExportContext(stem="m"))
    with tempfile.TemporaryDirectory() as folder:
        for name, data in files.items():
            (Path(folder) / name).parent.mkdir(parents=True, exist_ok=True)
            (Path(folder) / name).write_bytes(data)
        parsed = pytiled_parser.parse_map(Path(folder) / "m.tmx")
        tileset = parsed.tilesets[1]
        wang = {t.tile_id: tuple(t.wang_id) for t in tileset.wang_sets[0].wang_tiles.values()}
        layer = parsed.layers[0]
        masks = neighbour_masks(grid, True)
        for y, x in zip(*np.nonzero(grid)):
            from pipeline.tiled.autotile import blob_reduce

            mask = blob_reduce(int(masks[y, x]))
            tile_id = layer.data[y][x] - 1
            if mask:  # the isolated piece is outside the set
                assert wang[tile_id] == wang_id(mask, "blob"), (y, x)
            else:
                assert tile_id not in wang


def maze_recipe(pack: str, export: str) -> str:
    """A one-map pack of a small maze, exported by the stage whose body is `export`."""
    return f'[pack]\nname = "{pack}"\nseed = 3\nmaps = 1\n\n[stage.maze]\nuse = "maze.backtracker"\ncells = [6, 5]\n\n{export}'


def profile_recipe(profile: str, fmt: str, extra: str) -> str:
    return maze_recipe(f"p_{profile}", f'[stage.out]\nuse = "export.{fmt}"\ninput = "maze"\nprofile = "{profile}"\n{extra}\n')


@pytest.mark.parametrize(
    "profile, fmt",
    [("tiled", "tmx"), ("tiled", "tmj"), ("phaser", "tmj"), ("godot", "tmx"), ("unity", "tmx"), ("bevy", "tmx")],  # love: tests/test_lua_export.py
)
def test_each_profile_writes_what_its_engine_accepts(project: Path, profile: str, fmt: str) -> None:
    import pytiled_parser

    write_recipe(project, f"p_{profile}", profile_recipe(profile, fmt, ""))
    # In this process: the files are those `pcg build` writes (tests/test_api.py holds them equal).
    built = pipeline.build(project / "recipes", out=project / "exports", cache=project / ".pcg-cache", jobs=1)
    assert built.ok, built.problems
    pack = project / "exports" / f"p_{profile}"
    path = pack / f"map_000.{fmt}"
    text = path.read_text()
    assert "zstd" not in text
    embedded = '<tileset firstgid="1" source=' not in text if fmt == "tmx" else "source" not in json.loads(text)["tilesets"][0]
    if profile == "phaser":
        assert embedded
        assert not (pack / "tilesets" / f"symbols.{'tsx' if fmt == 'tmx' else 'tsj'}").exists()
    if profile == "phaser":
        layer = json.loads(text)["layers"][0]
        assert isinstance(layer["data"], list) and "compression" not in layer and "encoding" not in layer
    if profile in ("unity", "bevy", "godot", "tiled") and fmt == "tmx":
        assert not embedded and (pack / "tilesets" / "symbols.tsx").is_file()
    assert pytiled_parser.parse_map(path).map_size.width == 13


@pytest.mark.parametrize(
    "profile, fmt, extra, expect",
    [
        ("phaser", "tmx", "", "stage.out.profile: phaser: Phaser 3 (this.load.tilemapTiledJSON) reads tmj maps, not tmx: use export.tmj"),
        ("phaser", "tmj", "embed_tileset = false", "stage.out.embed_tileset: must be true with profile 'phaser'"),
        ("phaser", "tmj", 'encoding = "base64"\ncompression = "zlib"', "stage.out.compression: must be 'none' with profile 'phaser'"),
        ("unity", "tmj", "", "stage.out.profile: unity: Unity with SuperTiled2Unity 2.x reads tmx maps, not tmj: use export.tmx"),
        ("love", "lua", "embed_tileset = false", "stage.out.embed_tileset: must be true with profile 'love'"),
        ("tiled", "tmx", 'encoding = "csv"\ncompression = "zlib"', 'stage.out.compression: needs encoding = "base64"'),
    ],
)
def test_a_profile_refuses_what_its_engine_cannot_load(project: Path, profile: str, fmt: str, extra: str, expect: str) -> None:
    # As the recipe loads: a load error reaches the command line as every other does (one
    # `error:` line, exit 1: tests/test_bad_recipes.py runs such refusals through it).
    write_recipe(project, "bad", profile_recipe(profile, fmt, extra))
    with pytest.raises(RecipeError) as refused:
        load_recipe(project / "recipes" / "bad.toml")
    problem = refused.value.problems
    assert len(problem) == 1 and problem[0].startswith(f"{project / 'recipes' / 'bad.toml'}: {expect}"), problem


# Own art on the 4 x 2 tiles of 8 pixels that _bad_tileset draws.
SHEET = 'image = "sheet.png"\ntile_size = 8\n[tiles]\nwall = 0\nfloor = 1\n'
TILESET_RECIPE = maze_recipe("t", '[stage.tmx]\nuse = "export.tmx"\ninput = "maze"\ntileset = "../tilesets/t.toml"\n')


@pytest.mark.parametrize(
    "tileset, expect",
    [
        ('tile_size = 16\n[colors]\nwall = "red"\n', "tilesets/t.toml: colors.wall: must be a colour"),
        ("tile_size = 0\n", "tilesets/t.toml: tile_size: must be 1..1024 pixels (got 0)"),
        # Every bad colour at once; and colours in a tileset with its own image, whatever they hold.
        ('[colors]\nwall = "#5b556"\nfloor = "#GGGGGG"\n', "tilesets/t.toml: colors: must each be a colour \"#rrggbb\" (got wall = '#5b556', floor = '#GGGGGG')"),
        ('image = "sheet.png"\ntile_size = 8\n[tiles]\nwall = 0\n[colors]\nwall = "red"\n', "tilesets/t.toml: colors: belongs to generated art"),
        ('tile_size = "16"\n', "tilesets/t.toml: tile_size: must be a whole number of pixels or [width, height] (got '16')"),
        ('image = "text.png"\n[tiles]\nwall = 0\n', "image: cannot read tilesets/text.png as an image (not a PNG or any other image Pillow reads)"),
        ("[tiles]\nwall = 0\n", "tilesets/t.toml: tiles: belongs to a tileset with your own `image`"),
        ('image = "missing.png"\n[tiles]\nwall = 0\n', "tilesets/t.toml: image: cannot read"),
        ('image = "sheet.png"\ntile_size = 8\n[tiles]\nwall = 0\nfloor = 99\n', "tiles.floor: tile 99 is past the end of"),
        # A set past the end, on a sheet a pixel short: every id it misses, and the likelier cause.
        (
            'image = "sheet.png"\ntile_size = 7\n[tiles]\nwall = 0\n[autotile.wall]\nset = "corner"\nfirst = 0\n',
            "autotile.wall: tiles 8-15 are past the end of tilesets/sheet.png, which holds 8 tiles (4 x 2);"
            " tilesets/sheet.png (32 x 16 px) leaves 4 px on the right and 2 px at the bottom outside its 4 x 2 whole 7 x 7 tiles",
        ),
        ('image = "sheet.png"\ntile_size = 8\n[tiles]\nwall = 0\n[autotile.wall]\nset = "blob"\n', "autotile.wall: needs `first` or `tiles`"),
        ('image = "sheet.png"\ntile_size = 8\n[tiles]\nwall = 0\n[properties.walls]\nsolid = true\n', "properties.walls: names no tile of this tileset: none in `tiles` or `autotile` (did you mean 'wall'?)"),
        ('[autotile.wall]\nset = "hex"\n', "tilesets/t.toml: autotile.wall.set: must be one of 'blob' or 'corner'"),
        ('tile_size = 2\n[autotile.wall]\nset = "blob"\n', "tile_size: autotiled tiles need at least 3 x 3 pixels"),
        ("[properties.wall]\nw = nan\n", "properties.wall.w: must be a finite number"),
        ('[properties.wall]\nw = "a\\u0007"\n', "properties.wall.w: holds the control character '\\x07', which a TMX file (XML) cannot"),
        ('name = ".."\n', "tilesets/t.toml: name: must be a plain name"),
        ("bogus = 1\n", "tilesets/t.toml: bogus: unknown parameter"),
        ('[icons]\ndoor = "portal"\n', "tilesets/t.toml: icons.door: must be one of 'door', 'chest' or 'key'"),
        ('tile_size = 4\n[icons]\ndoor = "door"\n', "tile_size: icons need tiles of at least 6 x 6 pixels"),
        ("tile_size = [16\n", "tilesets/t.toml: not valid TOML"),
        # Emptied by accident, or a cut-short sheet: found as the recipe loads, not in every map.
        ("# nothing yet\n", "tilesets/t.toml: the tileset is empty (set at least tile_size"),
        ('image = "short.png"\ntile_size = 8\n[tiles]\nwall = 0\n', "image: cannot read tilesets/short.png as an image"),
        ('[properties.wall]\nsolid = "true"\n', "properties.wall.solid: must be true or false (got 'true')"),
        ("[properties.wall]\nsolid = 1\n", "properties.wall.solid: must be true or false (got 1)"),
        # A name in both tiles and autotile is listed once.
        (f'{SHEET}[autotile.wall]\nset = "corner"\nfirst = 0\n[properties.torch]\nx = 1\n', "(it has: wall, floor)"),
        # Variants: own art only, of a plain tile of `tiles`, on tiles of their own, one weight each.
        ("[variants.floor]\ntiles = [1]\n", "variants.floor.tiles: picks tiles of your own `image`; generated art draws its variants: give `count`"),
        ("[variants.floor]\ncount = 2\nweights = [1]\n", "variants.floor.weights: gives 1 weight for 2 variants: one each"),
        ('[variants.wall]\ncount = 2\n[autotile.wall]\nset = "blob"\n', "variants.wall: an autotiled name is drawn by its Wang set's pieces"),
        ("tile_size = 3\n[variants.floor]\ncount = 2\n", "tile_size: drawn variants need tiles of at least 4 x 4 pixels (got [3, 3])"),
        ("[variants.floor]\ncount = 9\n", "variants.floor.count: must be <= 8"),
        ("[variants.floor]\nweights = [1]\n", "variants.floor.tiles: give `tiles` (ids of your own image) or `count` (generated art), one of them"),
        (f"{SHEET}[variants.floor]\ncount = 2\n", "variants.floor.count: draws variants for generated art; with your own `image`, name them: tiles = [ids]"),
        (f'{SHEET}[variants.flor]\ntiles = [2]\n', "variants.flor: names no tile of `tiles` (did you mean 'floor'?)"),
        (f'{SHEET}[variants.floor]\ntiles = [0]\n', "variants.floor.tiles: tile 0 is the tile of 'wall': a variant needs a tile of its own"),
        (f'{SHEET}[variants.floor]\ntiles = [1]\n', "variants.floor.tiles: tile 1 is the tile of 'floor': a variant needs a tile of its own"),
        (f'{SHEET}[variants.floor]\ntiles = [2, 2]\n', "variants.floor.tiles: lists a tile twice: give it a larger weight instead"),
        (f'{SHEET}[variants.floor]\ntiles = [2, 3]\nweights = [0.5]\n', "variants.floor.weights: gives 1 weight for 2 tiles: one each"),
        (f'{SHEET}[variants.floor]\ntiles = [2]\nweights = [0]\n', "variants.floor.weights: each is a number > 0 and <= 1000 (got 0.0)"),
        (f'{SHEET}[variants.floor]\ntiles = [2]\nweights = [inf]\n', "variants.floor.weights: each is a number > 0 and <= 1000 (got inf)"),
        (f'{SHEET}[variants.floor]\ntiles = [8]\n', "variants.floor.tiles: tile 8 is past the end of tilesets/sheet.png, which holds 8 tiles (4 x 2)"),
        (f'{SHEET}[variants.floor]\ntiles = []\n', "variants.floor.tiles: must have at least 1 item (got [])"),
        (f'{SHEET}[variants.floor]\ntiles = [2, 3]\n[variants.wall]\ntiles = [3]\n', "variants.wall.tiles: tile 3 is a variant of 'floor'"),
        (
            f'{SHEET}[variants.wall]\ntiles = [2]\n[autotile.wall]\nset = "corner"\ntiles = [{", ".join(["3"] * 16)}]\n',
            "variants.wall: an autotiled name is drawn by its Wang set's pieces: variants are for plain tiles",
        ),
    ],
)
def test_a_bad_tileset_file_is_one_clear_error(project: Path, tileset: str, expect: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # As the recipe loads, in this process (a `pcg build` each would cost a second, 16 times
    # over); the next test runs one through the real command line.
    monkeypatch.chdir(project)
    _bad_tileset(project, tileset)
    with pytest.raises(RecipeError) as refused:
        load_recipe("recipes/t.toml")
    assert len(refused.value.problems) == 1
    assert refused.value.problems[0].startswith("recipes/t.toml: stage.tmx.tileset: ") and expect in refused.value.problems[0]


def test_a_bad_tileset_file_fails_the_command_line_build_with_that_line(project: Path) -> None:
    _bad_tileset(project, 'image = "sheet.png"\ntile_size = 8\n[tiles]\nwall = 0\nfloor = 99\n')
    # Two exporters of the one tileset: one line, naming the other (as their warnings do).
    recipe = project / "recipes" / "t.toml"
    recipe.write_text(recipe.read_text() + '\n[stage.tmj]\nuse = "export.tmj"\ninput = "maze"\ntileset = "../tilesets/t.toml"\npreview = false\n')
    proc = pcg("build", "recipes", cwd=project, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and not (project / "exports" / "t").exists()
    assert proc.stderr.strip() == (
        "error: recipes/t.toml: stage.tmx.tileset: tilesets/t.toml: tiles.floor: tile 99 is past the end of tilesets/sheet.png,"
        " which holds 8 tiles (4 x 2) (also stage.tmj)"
    ), proc.stderr


def _bad_tileset(project: Path, tileset: str) -> None:
    (project / "tilesets").mkdir()
    Image.new("RGBA", (32, 16)).save(project / "tilesets" / "sheet.png")
    (project / "tilesets" / "text.png").write_text("not an image\n")
    (project / "tilesets" / "short.png").write_bytes((project / "tilesets" / "sheet.png").read_bytes()[:-30])
    (project / "tilesets" / "t.toml").write_text(tileset)
    write_recipe(project, "t", TILESET_RECIPE)


def test_a_tilesheet_its_whole_tiles_do_not_fill_is_a_warning(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    (project / "tilesets").mkdir()
    (project / "tilesets" / "t.toml").write_text('image = "sheet.png"\ntile_size = 16\nmargin = 1\n[tiles]\nwall = 0\nfloor = 1\n')
    write_recipe(project, "t", TILESET_RECIPE)
    for size, warned in (((34, 18), ""), ((37, 21), "3 px on the right and 3 px at the bottom"), ((34, 20), "2 px at the bottom")):
        Image.new("RGBA", size).save(project / "tilesets" / "sheet.png")
        warnings = load_recipe("recipes/t.toml").warnings()
        if not warned:
            assert warnings == []
            continue
        assert warnings == [
            f"recipes/t.toml: stage.tmx.tileset: tilesets/t.toml: tilesets/sheet.png ({size[0]} x {size[1]} px) leaves"
            f" {warned} outside its 2 x 1 whole 16 x 16 tiles (margin 1, spacing 0): check tile_size, margin and spacing"
        ]
    proc = pcg("build", "recipes", cwd=project)  # it builds, and says so once
    assert proc.stderr.count("warning:") == 1 and "2 px at the bottom" in proc.stderr, proc.stderr
    # Three exporters of the one sheet: one warning, naming them all.
    more = '[stage.json]\nuse = "export.tmj"\ninput = "maze"\ntileset = "../tilesets/t.toml"\npreview = false\n'
    write_recipe(project, "t", TILESET_RECIPE + "\n" + more + "\n" + more.replace("json", "lua").replace("tmj", "lua"))
    (warning,) = load_recipe("recipes/t.toml").warnings()
    assert warning.startswith("recipes/t.toml: stage.tmx.tileset: tilesets/t.toml: tilesets/sheet.png") and warning.endswith(
        "check tile_size, margin and spacing (also stage.json, stage.lua)"
    ), warning


def test_a_colour_in_tile_properties_is_a_colour_as_on_objects(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    (project / "tilesets").mkdir()
    Image.new("RGBA", (32, 16)).save(project / "tilesets" / "sheet.png")
    (project / "tilesets" / "t.toml").write_text(
        'image = "sheet.png"\ntile_size = 16\n[tiles]\nwall = 1\nfloor = 0\n[properties.wall]\ntint = "#80FF80"\nnote = "#8"\nglow = "#ffa30"\n'
    )
    write_recipe(project, "t", TILESET_RECIPE)
    # As on objects, a string meant as a colour but not "#rrggbb" is told.
    assert load_recipe("recipes/t.toml").warnings() == [
        "recipes/t.toml: stage.tmx.tileset: tilesets/t.toml: properties.wall.glow: '#ffa30' looks like a colour"
        ' but is not "#rrggbb", so it is written as a string'
    ]
    pcg("build", "recipes", "-q", cwd=project)
    tsx = ET.parse(project / "exports" / "t" / "tilesets" / "t.tsx").getroot()
    props = {p.get("name"): (p.get("type"), p.get("value")) for p in tsx.iter("property")}
    assert props["tint"] == ("color", "#ff80ff80") and props["note"] == (None, "#8") and props["glow"] == (None, "#ffa30")


def test_names_that_share_a_tile_are_a_warning(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The tile's properties name one of them: the map cannot tell the other's cells apart.
    monkeypatch.chdir(project)
    (project / "tilesets").mkdir()
    Image.new("RGBA", (32, 16)).save(project / "tilesets" / "sheet.png")
    (project / "tilesets" / "t.toml").write_text('image = "sheet.png"\ntile_size = 16\n[tiles]\nwall = 1\nfloor = 0\nmoss = 0\n')
    write_recipe(project, "t", TILESET_RECIPE)
    assert load_recipe("recipes/t.toml").warnings() == [
        "recipes/t.toml: stage.tmx.tileset: tilesets/t.toml: tiles: floor and moss share tile 0: a map's cells of these look alike"
        " to a game too (one name in the tile's properties); give each a tile of its own if it should tell them apart"
    ]


MISNAMED_RECIPE = """\
[pack]
name = "m"
seed = 3
maps = 3

[stage.grown]
use = "rewrite"
size = [9, 9]
values = "BWD"
origin = true
legend = { B = "wal", W = "floor", D = "dor" }
program = { one = "WBB=WWW" }

[stage.tmx]
use = "export.tmx"
input = "grown"
tileset = "../tilesets/g.toml"
"""
GENERATED = 'tile_size = 8\n[colors]\nwall = "#204020"\n[autotile.wall]\nset = "blob"\n[properties.wall]\nsolid = true\n'


def test_a_symbol_a_generated_tileset_misses_by_a_letter_is_a_warning(project: Path) -> None:
    """A generated tileset draws any symbol, named in it or not: `wal` for its `wall` would get a
    plain tile, without the wall's art or `solid`. The build warns once for the pack, naming the
    maps; the names it does not come close to (`dor`) go by, and so do names it has."""
    (project / "tilesets").mkdir()
    (project / "tilesets" / "g.toml").write_text(GENERATED)
    write_recipe(project, "m", MISNAMED_RECIPE)
    proc = pcg("build", "recipes", "-q", cwd=project)
    assert proc.stderr.splitlines() == [
        "warning: recipes/m.toml: stage.tmx.tileset: symbol 'wal' is not named in tileset 'g' (did you mean 'wall'?),"
        " so it is drawn as a plain tile in its own colour (maps 0-2)"
    ], proc.stderr
    tsx = project / "exports" / "m" / "tilesets" / "g.tsx"
    assert tile_properties(tsx, "B") == {"name": "wal", "symbol": "B"}  # no solid: walls without collision
    write_recipe(project, "m", MISNAMED_RECIPE.replace('"wal"', '"wall"'))
    proc = pcg("build", "recipes", "-q", cwd=project)
    assert proc.stderr == "" and tile_properties(tsx, "B") == {"name": "wall", "symbol": "B", "solid": "true"}


def test_a_misspelt_autotile_or_properties_table_is_a_warning_for_own_art_too(project: Path) -> None:
    """`[autotile.walls]` beside `tiles.wall`: the walls would lose their Wang set and `solid`."""
    (project / "tilesets").mkdir()
    Image.new("RGBA", (8 * 8, 8 * 7), (90, 90, 90, 255)).save(project / "tilesets" / "sheet.png")
    (project / "tilesets" / "g.toml").write_text(
        'image = "sheet.png"\ntile_size = 8\n[tiles]\nwall = 0\nfloor = 1\ndor = 2\n[autotile.walls]\nset = "blob"\nfirst = 8\n[properties.walls]\nsolid = true\n'
    )
    write_recipe(project, "m", MISNAMED_RECIPE.replace('"wal"', '"wall"'))
    proc = pcg("build", "recipes", "-q", cwd=project)
    assert proc.stderr.splitlines() == [
        f"warning: recipes/m.toml: stage.tmx.tileset: {table}.walls of tileset 'g' names no symbol of the map (did you mean 'wall'?),"
        " so 'wall' is drawn without it (maps 0-2)"
        for table in ("autotile", "properties")
    ], proc.stderr


def test_a_symbol_no_layer_draws_with_its_own_tile_is_a_warning(project: Path) -> None:
    """`layers` without the walls: the maps have no walls, nor their collision, in the game."""
    (project / "tilesets").mkdir()
    (project / "tilesets" / "g.toml").write_text(GENERATED)
    recipe = MISNAMED_RECIPE.replace('"wal"', '"wall"')
    write_recipe(project, "m", recipe.replace('input = "grown"\n', 'input = "grown"\nlayers = [{ name = "ground", tile = "floor" }]\n', 1))
    proc = pcg("build", "recipes", "-q", cwd=project)
    assert proc.stderr.splitlines() == [
        "warning: recipes/m.toml: stage.tmx.layers: symbol 'wall' is drawn only as 'floor', by layer 'ground', so the maps show no wall:"
        ' add a layer, e.g. { name = "wall", symbols = ["wall"] } (map 1)'  # the one map the growth leaves walls in
    ], proc.stderr
    write_recipe(project, "m", recipe.replace('input = "grown"\n', 'input = "grown"\nlayers = [{ name = "ground", tile = "floor" }, { name = "walls", symbols = ["wall"] }]\n', 1))
    assert pcg("build", "recipes", "-q", cwd=project).stderr == ""


def test_a_map_of_walls_alone_exports_with_an_autotiled_tileset(project: Path) -> None:
    """A generation that filled everything: its walls meet no other symbol, and still export."""
    (project / "tilesets").mkdir()
    (project / "tilesets" / "g.toml").write_text(GENERATED)
    write_recipe(project, "m", (
        '[pack]\nname = "m"\nseed = 3\nmaps = 1\n\n'
        '[stage.filled]\nuse = "rewrite"\nsize = [9, 9]\nvalues = "B"\nlegend = { B = "wall" }\nprogram = { one = "B=B", steps = 1 }\n\n'
        '[stage.tmx]\nuse = "export.tmx"\ninput = "filled"\ntileset = "../tilesets/g.toml"\n'
    ))
    pcg("build", "recipes", "-q", cwd=project)
    import pytmx

    tmx = pytmx.TiledMap(str(project / "exports" / "m" / "map_000.tmx"))
    assert {tmx.get_tile_properties_by_gid(g)["name"] for row in tmx.layers[0].data for g in row} == {"wall"}


def test_only_names_a_letter_apart_are_taken_for_misspelt() -> None:
    from pipeline.level import Symbol
    from pipeline.tiled.spec import TilesetSpec
    from pipeline.tiled.tilesheet import misnamed_symbols

    spec = TilesetSpec.model_validate({"name": "d", "colors": {"wall": "#000000", "door": "#ffffff", "chest": "#ff0000"}})
    symbols = ("floor", "wlal", "decor", "chasm", "doorway", "chest", "hall")
    found = misnamed_symbols(spec, tuple(Symbol(chr(65 + i), name, "#808080") for i, name in enumerate(symbols)))
    assert [line.split("'")[1:6:4] for line in found] == [["wlal", "wall"], ["hall", "wall"]]
    # Worn floors for a misspelt floor.
    worn = TilesetSpec.model_validate({"name": "d", "colors": {"wall": "#000000"}, "variants": {"flor": {"count": 2}}})
    assert misnamed_symbols(worn, (Symbol("B", "wall", "#808080"), Symbol("W", "floor", "#808080"))) == [
        "variants.flor of tileset 'd' names no symbol of the map (did you mean 'floor'?), so 'floor' is drawn without it"
    ]
    # A wall told to run on into a misspelt door.
    joined = TilesetSpec.model_validate({"name": "d", "colors": {"wall": "#000000"}, "autotile": {"wall": {"joins": ["dor", "gate"]}}})
    assert misnamed_symbols(joined, tuple(Symbol(c, n, "#808080") for c, n in (("B", "wall"), ("W", "floor"), ("D", "door")))) == [
        "autotile.wall.joins of tileset 'd': 'dor' names no symbol of the map (did you mean 'door'?), so 'wall' does not run on into it"
    ]


def tile_properties(tsx: Path, symbol: str) -> dict[str, str]:
    """The properties of the tile a TSX file draws `symbol` with."""
    for tile in ET.parse(tsx).getroot().iter("tile"):
        props = {p.get("name", ""): p.get("value", "") for p in tile.iter("property")}
        if props.get("symbol") == symbol:
            return props
    raise AssertionError(f"no tile for symbol {symbol!r} in {tsx}")


def build_with_a_red_sheet(project: Path) -> None:
    """Build recipe t with tileset t.toml on a plain red two-tile sheet."""
    (project / "tilesets").mkdir()
    Image.new("RGBA", (16, 8), (200, 0, 0, 255)).save(project / "tilesets" / "sheet.png")
    (project / "tilesets" / "t.toml").write_text('image = "sheet.png"\ntile_size = 8\n[tiles]\nwall = 0\nfloor = 1\n')
    write_recipe(project, "t", TILESET_RECIPE)
    pcg("build", "recipes", "-q", cwd=project)


def test_a_symbol_a_sheet_of_ones_own_has_no_tile_for_fails_under_the_tileset(project: Path) -> None:
    """Not under `layers.tiles`, a key the recipe does not have (the one layer's default name)."""
    (project / "tilesets").mkdir()
    Image.new("RGBA", (16, 8), (200, 0, 0, 255)).save(project / "tilesets" / "sheet.png")
    (project / "tilesets" / "t.toml").write_text('image = "sheet.png"\ntile_size = 8\n[tiles]\nwall = 0\n')
    write_recipe(project, "t", TILESET_RECIPE)
    proc = pcg("build", "recipes", cwd=project, check=False)
    assert proc.returncode == 1
    assert "tmx    tileset (../tilesets/t.toml): symbol 'floor': tileset 't' has no tile named 'floor' (it has: wall)" in proc.stderr, proc.stderr


def test_editing_the_tileset_or_its_image_rebuilds_only_the_export(project: Path) -> None:
    build_with_a_red_sheet(project)
    Image.new("RGBA", (16, 8), (0, 0, 200, 255)).save(project / "tilesets" / "sheet.png")
    explain = pcg("explain", "recipes/t.toml", cwd=project).stdout
    assert "tilesets/sheet.png" in explain
    out = pcg("build", "recipes", cwd=project).stdout
    assert "ran tmx x1)" in out
    with Image.open(project / "exports" / "t" / "tilesets" / "t.png") as image:
        assert image.getpixel((0, 0)) == (0, 0, 200, 255)


def test_extrusion_grows_margin_and_spacing_and_keeps_every_tile(project: Path) -> None:
    import pytiled_parser

    (project / "tilesets").mkdir()
    sheet = np.random.default_rng(1).integers(0, 256, (8 + 2, 16 + 2 + 3, 4), dtype=np.uint8)
    sheet[..., 3] = 255
    Image.fromarray(sheet, "RGBA").save(project / "tilesets" / "sheet.png")
    (project / "tilesets" / "t.toml").write_text('image = "sheet.png"\ntile_size = 8\nmargin = 1\nspacing = 3\nextrude = 2\n[tiles]\nwall = 0\nfloor = 1\n')
    write_recipe(project, "t", TILESET_RECIPE)
    pcg("build", "recipes", "-q", cwd=project)
    tileset = pytiled_parser.parse_tileset(project / "exports" / "t" / "tilesets" / "t.tsx")
    assert (tileset.margin, tileset.spacing, tileset.columns, tileset.tile_count) == (3, 7, 2, 2)
    out = np.asarray(Image.open(project / "exports" / "t" / "tilesets" / "t.png").convert("RGBA"))
    for k in range(2):
        left_in, left_out = 1 + k * 11, 3 + k * 15
        assert (out[3:11, left_out : left_out + 8] == sheet[1:9, left_in : left_in + 8]).all()
        assert (out[1:3, left_out : left_out + 8] == sheet[1, left_in : left_in + 8]).all()  # the top row, repeated


def test_layers_split_the_map_and_leave_the_rest_empty(examples: Path) -> None:
    import pytmx

    tiled = pytmx.TiledMap(str(examples / "exports" / "dungeons" / "map_000.tmx"))
    floor, walls, doors = (np.array(tiled.get_layer_by_name(n).data) for n in ("floor", "walls", "doors"))
    assert (floor > 0).all()  # the floor is under everything
    assert ((walls > 0) & (doors > 0)).sum() == 0
    assert (walls > 0).sum() > (doors > 0).sum() > 0


def test_checks_before_writing_catch_what_importers_trip_on() -> None:
    tileset = Tileset("t", 8, 8, 0, 0, 2, 1, "t.png", (16, 8))
    good = np.ones((2, 3), dtype=np.uint32)
    check_map(3, 2, [("a", good)], tileset, 1, [], {"tilesets/t.png": b""}, "tilesets/t.png")
    cases = [
        ([("a", np.ones((3, 3), dtype=np.uint32))], [], "9 cells for a 3 x 2 map"),
        ([("a", good * 3)], [], "gid 3 at row 0, column 0 is outside tileset 't' (1..2)"),
        ([("a", good | np.uint32(0x10000000))], [], "flip/rotation flag bits set"),
        ([("a", good)], [7], "a tile object has gid 7"),
    ]
    for layers, objects, expect in cases:
        with pytest.raises(PipelineError, match=expect.replace("(", r"\(").replace(")", r"\)")):
            check_map(3, 2, layers, tileset, 1, objects, {"tilesets/t.png": b""}, "tilesets/t.png")
    with pytest.raises(PipelineError, match="is not written with the map"):
        check_map(3, 2, [("a", good)], tileset, 1, [], {}, "tilesets/t.png")
    wrong = Tileset("t", 8, 8, 0, 0, 3, 1, "t.png", (16, 8))
    with pytest.raises(PipelineError, match="holds 2 x 1 tiles, the tileset says 3 x 1"):
        check_map(3, 2, [("a", good)], wrong, 1, [], {"tilesets/t.png": b""}, "tilesets/t.png")


def test_a_tile_object_needs_a_tile_the_tileset_has() -> None:
    level = Level(
        tiles=np.zeros((3, 3), dtype=np.uint8),
        alphabet=MAZE_ALPHABET,
        objects=[MapObject("gem_1", "gem", 1.5, 1.5, tile="gem", properties={"tint": Color("#00ff00")})],
    )
    with pytest.raises(PipelineError, match="object 'gem_1' is drawn with tile 'gem': tileset 'symbols' has no tile named 'gem'"):
        ExportTmx().export(level, ExportContext(stem="m"))
    level.objects[0] = replace(level.objects[0], tile="wal")  # a misspelling: the nearest name is offered
    with pytest.raises(PipelineError, match=r"has no tile named 'wal' \(did you mean 'wall'\?\) \(it has: wall, floor"):
        ExportTmx().export(level, ExportContext(stem="m"))


def test_every_pack_with_previews_gets_a_contact_sheet_and_show_finds_it(examples: Path) -> None:
    sheets = sorted((examples / "exports").glob("*/contact_sheet.png"))
    packs = sorted(p.parent for p in (examples / "exports").glob("*/manifest.json"))
    assert [s.parent for s in sheets] == packs
    with Image.open(examples / "exports" / "labyrinths" / "contact_sheet.png") as image:
        assert image.width > 600 and image.height > 300
    shown = pcg("show", "labyrinths", "--no-open", cwd=examples).stdout.strip()
    assert shown == str(Path("exports") / "labyrinths" / "contact_sheet.png")
    assert pcg("show", "recipes/labyrinths.toml", "--no-open", cwd=examples).stdout.strip() == shown
    missing = pcg("show", "nope", cwd=examples, check=False)
    assert missing.returncode == 1 and "nope: not a built pack" in missing.stderr


def test_the_contact_sheet_follows_the_maps_and_survives_a_no_change_build(project: Path) -> None:
    pcg("build", "recipes", "-q", cwd=project)
    sheet = project / "exports" / "small" / "contact_sheet.png"
    first = sheet.read_bytes()
    stamp = sheet.stat().st_mtime_ns
    pcg("build", "recipes", "-q", cwd=project)
    assert sheet.stat().st_mtime_ns == stamp  # nothing changed: not even rewritten
    recipe = project / "recipes" / "small.toml"
    recipe.write_text(recipe.read_text().replace("maps = 6", "maps = 3"))
    pcg("build", "recipes", "-q", cwd=project)
    assert sheet.read_bytes() != first
    recipe.write_text(recipe.read_text().replace("[pack]\n", "[pack]\ncontact_sheet = false\n"))
    pcg("build", "recipes", "-q", cwd=project)
    assert not sheet.exists()
    assert "contact_sheet.png" not in tree_digests(project / "exports" / "small")


def test_non_square_tiles_autotile_and_draw_as_tiled_does(project: Path, tmp_path: Path) -> None:
    import pytiled_parser

    (project / "tilesets").mkdir()
    (project / "tilesets" / "t.toml").write_text('tile_size = [12, 8]\nstyle = "bevel"\nextrude = 1\n[autotile.wall]\nset = "blob"\n')
    write_recipe(project, "t", TILESET_RECIPE)
    pcg("build", "recipes", "-q", cwd=project)
    pack = project / "exports" / "t"
    parsed = pytiled_parser.parse_map(pack / "map_000.tmx")
    assert (parsed.tile_size.width, parsed.tile_size.height) == (12, 8)
    with Image.open(pack / "previews" / "map_000.png") as image:
        assert image.size == (13 * 12, 11 * 8)
    if TMXRASTERIZER is not None:
        out = tmp_path / "r.png"
        assert run_tiled(["tmxrasterizer", str(pack / "map_000.tmx"), str(out)]).returncode == 0
        assert (rgba(out) == rgba(pack / "previews" / "map_000.png")).all()


def test_a_string_that_looks_like_a_colour_but_is_not_one_is_a_warning(project: Path) -> None:
    write_recipe(project, "t", maze_recipe("t", '[stage.items]\nuse = "place.items"\ninput = "maze"\nproperties = { a = "#ffcc0", b = "#80ffcc00", c = "#ffcc00", d = "#1 gold" }\n\n[stage.tmx]\nuse = "export.tmx"\ninput = "items"\n'))
    proc = pcg("build", "recipes", "-q", cwd=project)
    assert proc.stderr.splitlines() == [
        f'warning: recipes/t.toml: stage.items.properties.{key}: {value!r} looks like a colour but is not "#rrggbb", so it is written as a string'
        for key, value in (("a", "#ffcc0"), ("b", "#80ffcc00"))
    ], proc.stderr


@pytest.mark.parametrize(
    ("properties", "expected"),
    [
        ("{ w = inf }", "stage.items.properties.w: must be a finite number"),
        # TOML takes any character escaped; XML 1.0 none of these, and Tiled would not open the map.
        ('{ w = "\\u001b[31m" }', "stage.items.properties.w: holds the control character '\\x1b', which a TMX file (XML) cannot"),
        ('{ "w\\u0000" = 1 }', "stage.items.properties: the name 'w\\x00' holds the control character '\\x00'"),
    ],
)
def test_item_properties_must_be_what_a_tiled_file_holds(project: Path, properties: str, expected: str) -> None:
    write_recipe(project, "t", maze_recipe("t", f'[stage.items]\nuse = "place.items"\ninput = "maze"\nproperties = {properties}\n\n[stage.tmx]\nuse = "export.tmx"\ninput = "items"\n'))
    proc = pcg("build", "recipes", cwd=project, check=False)
    assert proc.returncode == 1 and f"recipes/t.toml: {expected}" in proc.stderr, proc.stderr
    assert "\x1b" not in proc.stderr  # quoted, never sent to the terminal


TWO_ALPHABETS = """\
[pack]
name = "two"
seed = 3
maps = 1

[stage.maze]
use = "maze.backtracker"
cells = [6, 5]

[stage.dungeon]
use = "dungeon.rooms_and_mazes"
size = [21, 21]

[stage.maze_tmx]
use = "export.tmx"
input = "maze"
dir = "mazes"
tileset = "../tilesets/dungeon.toml"

[stage.dungeon_tmx]
use = "export.tmx"
input = "dungeon"
dir = "dungeons"
tileset = "../tilesets/dungeon.toml"
{name}
"""


def test_one_tileset_file_for_two_symbol_sets_needs_two_names(project: Path) -> None:
    import shutil

    shutil.copytree(ROOT / "tilesets", project / "tilesets")
    write_recipe(project, "two", TWO_ALPHABETS.format(name=""))
    proc = pcg("build", "recipes", cwd=project, check=False)
    assert proc.returncode == 1 and "writes tilesets/dungeon.tsx, which stage.maze_tmx wrote differently" in " ".join(proc.stderr.split())
    assert "tileset_name" in proc.stderr, proc.stderr
    write_recipe(project, "two", TWO_ALPHABETS.format(name='tileset_name = "dungeon_rooms"'))
    pcg("build", "recipes", "-q", cwd=project)
    assert (project / "exports" / "two" / "tilesets" / "dungeon_rooms.tsx").is_file()
    assert (project / "exports" / "two" / "tilesets" / "dungeon.tsx").is_file()


def test_verify_names_a_tileset_image_edited_since_the_build(project: Path) -> None:
    build_with_a_red_sheet(project)
    assert pcg("verify", "exports/t", cwd=project).returncode == 0
    Image.new("RGBA", (16, 8), (0, 0, 200, 255)).save(project / "tilesets" / "sheet.png")
    proc = pcg("verify", "exports/t", cwd=project, check=False)
    assert proc.returncode == 1 and "stage tmx: ../tilesets/sheet.png changed since the build" in proc.stderr, proc.stderr
