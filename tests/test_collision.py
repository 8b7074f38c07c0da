"""Collision matches what is drawn: every wall tile of every shipped tileset and style is solid
over exactly the pixels its collision shapes cover, read back from the files a build writes
(.tsx, the .tmj's embedded tileset, the tilesheet PNG) and by real clients (pytmx, Tiled)."""

from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from conftest import ROOT, needs_tiled, pcg, tiled_env
from pipeline.tiled.art import STYLES, cut_tiles

SHIPPED = ("dungeon", "caves", "maze", "stone")
Rect = tuple[float, float, float, float]


def _recipe() -> str:
    text = """\
[pack]
name = "walls"
seed = 7
maps = 2

[stage.dungeon]
use = "dungeon.rooms_and_mazes"
size = [31, 21]
"""
    for name in SHIPPED:
        text += f'\n[stage.{name}_tmx]\nuse = "export.tmx"\ninput = "dungeon"\ndir = "{name}"\ntileset = "../tilesets/{name}.toml"\n'
    for style in STYLES:
        text += f'\n[stage.{style}_tmx]\nuse = "export.tmx"\ninput = "dungeon"\ndir = "{style}"\ntileset = "../tilesets/style_{style}.toml"\n'
    text += '\n[stage.json]\nuse = "export.tmj"\ninput = "dungeon"\ndir = "json"\ntileset = "../tilesets/dungeon.toml"\n'
    return text


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("collision")
    shutil.copytree(ROOT / "tilesets", root / "tilesets")
    for style in STYLES:
        (root / "tilesets" / f"style_{style}.toml").write_text(
            f'style = "{style}"\n[autotile.wall]\nset = "corner"\n[properties.wall]\nsolid = true\n' if style == "noise"
            else f'style = "{style}"\ntile_size = 12\n[autotile.wall]\n[properties.wall]\nsolid = true\n'
        )
    (root / "recipes").mkdir()
    (root / "recipes" / "walls.toml").write_text(_recipe())
    pcg("build", "recipes/walls.toml", "-q", "-j", "1", cwd=root)
    return root / "exports" / "walls"


def _rasterise(rects: list[Rect], width: int, height: int) -> np.ndarray:
    """The pixels whose centres lie inside the rectangles."""
    y, x = np.indices((height, width)) + 0.5
    mask = np.zeros((height, width), dtype=bool)
    for rx, ry, rw, rh in rects:
        mask |= (rx <= x) & (x < rx + rw) & (ry <= y) & (y < ry + rh)
    return mask


def _tiles_of_tsx(tsx: Path) -> tuple[dict, list[np.ndarray], dict[int, dict[str, str]], dict[int, list[Rect]]]:
    root = ET.parse(tsx).getroot()
    image = root.find("image")
    assert image is not None
    pixels = np.asarray(Image.open(tsx.parent / image.get("source", "")).convert("RGBA"))
    attrs = {k: int(root.get(k, "0")) for k in ("tilewidth", "tileheight", "margin", "spacing")}
    tiles = cut_tiles(pixels, attrs["tilewidth"], attrs["tileheight"], attrs["margin"], attrs["spacing"])
    props: dict[int, dict[str, str]] = {}
    shapes: dict[int, list[Rect]] = {}
    for tile in root.iter("tile"):
        tile_id = int(tile.get("id", "-1"))
        props[tile_id] = {p.get("name", ""): p.get("value", "") for p in tile.iter("property")}
        group = tile.find("objectgroup")
        if group is not None:
            shapes[tile_id] = []
            for obj in group.iter("object"):
                # Rectangles only: a polygon or ellipse here would need its own rasteriser.
                assert obj.find("polygon") is None and obj.find("ellipse") is None, tsx
                shapes[tile_id].append(tuple(float(obj.get(k, "0")) for k in ("x", "y", "width", "height")))  # type: ignore[misc]
    return attrs, tiles, props, shapes


def test_every_wall_tile_is_solid_where_it_is_drawn(pack: Path) -> None:
    """A wall tile's solid pixels (every pixel that is not the floor tile's) are exactly the pixels
    its collision shapes cover; tiles that are not solid have no shapes."""
    checked: dict[str, int] = {}
    for name in (*SHIPPED, *(f"style_{s}" for s in STYLES)):
        tsx = pack / "tilesets" / f"{name}.tsx"
        attrs, tiles, props, shapes = _tiles_of_tsx(tsx)
        floor_id = next(i for i, p in props.items() if p.get("name") == "floor")
        floor = tiles[floor_id]
        walls = [i for i, p in props.items() if p.get("name") == "wall"]
        assert len(walls) >= 17, name  # the wall's own tile and its Wang set
        for tile_id, p in props.items():
            solid = p.get("solid") == "true"
            assert solid == (tile_id in shapes), (name, tile_id)
            assert (p.get("name") == "wall") <= solid, (name, tile_id)
            if not solid:
                continue
            tile = tiles[tile_id]
            drawn = np.any(tile != floor, axis=-1) & (tile[..., 3] > 0)
            covered = _rasterise(shapes[tile_id], attrs["tilewidth"], attrs["tileheight"])
            assert np.array_equal(drawn, covered), (name, tile_id, int((drawn != covered).sum()))
        checked[name] = len(shapes)
    assert checked["dungeon"] == 48 and checked["stone"] == 48 and checked["style_noise"] == 17


def test_json_tileset_carries_the_same_collision(pack: Path) -> None:
    tmj = json.loads((pack / "json" / "map_000.tmj").read_text())
    tileset = next(t for t in tmj["tilesets"] if t["name"] == "dungeon")  # not the data layers' tileset
    boxes = {t["id"]: t["objectgroup"]["objects"] for t in tileset["tiles"] if "objectgroup" in t}
    _, _, props, shapes = _tiles_of_tsx(pack / "tilesets" / "dungeon.tsx")
    assert boxes.keys() == shapes.keys()
    for tile_id, objects in boxes.items():
        assert [(o["x"], o["y"], o["width"], o["height"]) for o in objects] == shapes[tile_id]
        assert [o["id"] for o in objects] == list(range(1, len(objects) + 1))


def test_pytmx_reads_the_colliders(pack: Path) -> None:
    pytmx = pytest.importorskip("pytmx")
    tmx = pytmx.TiledMap(str(pack / "stone" / "map_000.tmx"))
    colliders = dict(tmx.get_tile_colliders())
    walls = [gid for gid, p in tmx.tile_properties.items() if p.get("name") == "wall"]
    assert walls and all(gid in colliders for gid in walls)
    for gid in walls:
        (box,) = list(colliders[gid])
        assert (box.x, box.y, box.width, box.height) == (0, 0, 16, 16)


@needs_tiled
def test_real_tiled_reads_and_writes_the_same_collision(pack: Path, tmp_path: Path) -> None:
    """Tiled loads our collision shapes and writes them back as we wrote them, in both formats."""
    tsx = pack / "tilesets" / "dungeon.tsx"
    out = tmp_path / "dungeon.tsx"
    subprocess.run(["tiled", "--export-tileset", "tsx", str(tsx), str(out)], env=tiled_env(), check=True, capture_output=True)
    assert _tiles_of_tsx(out)[3] == _tiles_of_tsx(tsx)[3]
    ours = ET.tostring(ET.parse(tsx).getroot().find("tile[@id='5']/objectgroup"))  # type: ignore[arg-type]
    theirs = ET.tostring(ET.parse(out).getroot().find("tile[@id='5']/objectgroup"))  # type: ignore[arg-type]
    assert ours == theirs
    tsj = tmp_path / "dungeon.tsj"
    subprocess.run(["tiled", "--export-tileset", "json", str(tsx), str(tsj)], env=tiled_env(), check=True, capture_output=True)
    exported = {t["id"]: t.get("objectgroup") for t in json.loads(tsj.read_text())["tiles"]}
    tilesets = json.loads((pack / "json" / "map_000.tmj").read_text())["tilesets"]
    embedded = {t["id"]: t.get("objectgroup") for t in next(t for t in tilesets if t["name"] == "dungeon")["tiles"]}
    assert exported == embedded


def test_walls_run_on_into_doors_they_join() -> None:
    """With `joins = ["door"]` a wall beside a door is drawn as if the door were wall: no rim
    around the door, which sits in its wall; without it, the wall ends at the door."""
    from pipeline.level import Symbol
    from pipeline.tiled.autotile import BLOB_MASKS, E, W
    from pipeline.tiled.spec import load_tileset
    from pipeline.tiled.tilesheet import build_tileset

    alphabet = (Symbol("#", "wall", "#000000"), Symbol(".", "floor", "#ffffff"), Symbol("+", "door", "#8b4513"))
    loaded = load_tileset(ROOT / "tilesets", "dungeon.toml")
    tiles = np.array([[1, 1, 1], [0, 2, 0], [1, 1, 1]])  # a door between two one-tile walls
    for joins, expect in ((("door",), (E, W)), ((), (0, 0))):
        spec = loaded.spec.model_copy(update={"autotile": {"wall": loaded.spec.autotile["wall"].model_copy(update={"joins": joins})}})
        auto = build_tileset(spec, alphabet, b"").autotiles["wall"]
        ids = auto.pieces(tiles, 0, [s.name for s in alphabet])
        left, right = (BLOB_MASKS[auto.tile_ids.index(int(ids[1, x]))] for x in (0, 2))
        assert (left & E, right & W) == expect, joins
