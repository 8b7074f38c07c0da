"""Draw the pictures of the docs, and tilesets/stone.png (the example of your own art).

    python docs/make_images.py            # writes docs/img/* and tilesets/stone.png
    python docs/make_images.py --out DIR  # the same files under DIR (tests compare them)

docs/tilesets.md's pictures are drawn by the pipeline's own tileset code from the files in
tilesets/, over one sample map that has every kind of wall: rooms, one-tile walls, T and X
junctions, lone pillars, diagonal runs, thick masses with inner corners, a door and a chest.
The other pictures are built by the pipeline itself, from real recipes in a temporary project:
the README's walkthrough (its recipe grown step by step from the README's own TOML blocks), every
maze generator of recipes/comparison.toml (docs/mazes.md), a recorded rule program
(docs/rewrite.md), and the recipes of docs/graphs.md and docs/gameplay.md (docs/page_images.py). Output is
deterministic.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import shutil
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from docs.page_images import page_images  # noqa: E402
from pipeline.level import Level, Symbol  # noqa: E402
from pipeline.tiled.drawing import LayerSpec, draw_layers  # noqa: E402
from pipeline.tiled.art import STYLES, blend, ground_tile, lay_out  # noqa: E402
from pipeline.tiled.icons import icon_tile  # noqa: E402
from pipeline.tiled.render import render  # noqa: E402
from pipeline.tiled.spec import TilesetSpec, load_tileset  # noqa: E402
from pipeline.tiled.tilesheet import BuiltTileset, build_tileset  # noqa: E402
from pipeline.tiled.walls import lone_wall, wall_material, wall_pieces  # noqa: E402

SAMPLE = """\
##########################
#.......#######..........#
#.......#.....#..#...#...#
#...c...+.....#..#...#...#
#.......#.....#..#####...#
####+####.#.#.#..........#
#.........#...#..#.#.#.#.#
#.###.###.#.#.#..........#
#.#.....#.........#......#
#.#.###.#.###.#....#.....#
#.#.....#.#.#.#.....#....#
#.#######.###.####...#...#
#.........................
##########################
"""
ALPHABET = (Symbol("#", "wall", "#000000"), Symbol(".", "floor", "#ffffff"), Symbol("+", "door", "#8b4513"))
# Puzzle colours (flood_it's six), drawn without walls.
PUZZLE = ("#e8174d", "#2fae4a", "#4a6ee0", "#f08a24", "#8c2db8", "#f5d21e")
SCALE = 2  # docs pictures are drawn at twice the pixels, nearest neighbour, to show the art
SHIPPED = ("dungeon", "caves", "maze", "stone")


def _sample() -> tuple[np.ndarray, np.ndarray]:
    """(symbol index per cell, chest mask) of the sample map."""
    rows = SAMPLE.splitlines()
    chars = np.array([list(r) for r in rows])
    chest = chars == "c"
    chars[chest] = "."
    index = np.zeros(chars.shape, dtype=np.int16)
    for i, s in enumerate(ALPHABET):
        index[chars == s.char] = i
    return index, chest


def _png(image: Image.Image, scale: int = SCALE) -> bytes:
    image = image.convert("RGBA")
    if scale != 1:
        image = image.resize((image.width * scale, image.height * scale), Image.Resampling.NEAREST)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False)
    return out.getvalue()


def _draw(built: BuiltTileset) -> Image.Image:
    """The sample map through a tileset, as a preview draws it: walls autotiled, the chest an
    object tile over the floor."""
    index, chest = _sample()
    ts = built.tileset
    ((_, gids),) = draw_layers(Level(index.astype(np.uint8), ALPHABET), built, [LayerSpec(name="tiles")])
    objects = np.zeros_like(gids)
    if "chest" in ts.names:
        objects[chest] = ts.tile_id("chest") + 1
    return render([gids, objects], built)


def _sheet(built: BuiltTileset) -> Image.Image:
    return Image.fromarray(built.pixels, "RGBA")


def _shipped(name: str) -> BuiltTileset:
    loaded = load_tileset(ROOT / "tilesets", f"{name}.toml")
    # The stone pictures show the sheet this script draws, not whatever stone.png is on disk.
    return build_tileset(loaded.spec, ALPHABET, stone_sheet() if name == "stone" else loaded.image)


def _style(style: str) -> Image.Image:
    """The sample map in one style (the dungeon's colours, walls autotiled), and beside it a
    puzzle board in that style (symbols without walls)."""
    colors = {"wall": "#5b5566", "floor": "#a39584", "door": "#9c5a2c", "chest": "#c8812d"}
    spec = TilesetSpec(name=style, style=style, colors=colors, autotile={"wall": {}}, icons={"door": "door", "chest": "chest"})
    walls = _draw(build_tileset(spec, ALPHABET, b""))
    board_symbols = tuple(Symbol(str(i), f"c{i}", c) for i, c in enumerate(PUZZLE))
    board = build_tileset(TilesetSpec(name=style, style=style), board_symbols, b"")
    h, w = _sample()[0].shape
    cells = (np.add.outer(np.arange(h) // 3, np.arange(8) // 2) + np.arange(h)[:, None] % 2) % len(PUZZLE)
    board_image = render([cells.astype(np.uint32) + 1], board)
    out = Image.new("RGBA", (walls.width + 16 + board_image.width, walls.height), (0, 0, 0, 0))
    out.paste(walls.convert("RGBA"), (0, 0))
    out.paste(board_image.convert("RGBA"), (walls.width + 16, 0))
    return out


def stone_sheet() -> bytes:
    """tilesets/stone.png: 16-pixel tiles, margin 1, spacing 2; 0 floor, 1 door, 2 chest, 3 key,
    4 wall, 5-7 floor variants, 8-54 the wall's blob set in the standard order. Walls fill their
    tiles, as the collision boxes the tileset gets (solid = true) say."""
    size = 16
    wall_rgb, floor_rgb = (70, 78, 96), (150, 132, 104)
    floor = ground_tile(floor_rgb, size, size, "noise", "stone-floor")
    y, x = np.indices((size, size))
    groove = (x == 0) | (y == 0)
    floor[..., :3][groove] = blend(floor[..., :3][groove], 0, 1, 6)
    material = wall_material(wall_rgb, size, size, "bevel", "stone-wall", grain=True)
    variants = []
    for marks in (((3, 4), (4, 5), (5, 5), (6, 6), (7, 6), (8, 7), (9, 9)), ((4, 10), (5, 11), (11, 4), (12, 3), (10, 12)), ((9, 3), (3, 12), (12, 9))):
        tile = floor.copy()
        for yy, xx in marks:  # a crack, pebbles
            tile[yy, xx, :3] = blend(tile[yy, xx, :3], 0, 3, 8)
        variants.append(tile)
    tiles = [
        floor,
        icon_tile("door", (150, 86, 44), size, size, floor, wall_rgb),
        icon_tile("chest", (200, 129, 45), size, size, None, wall_rgb),
        icon_tile("key", (240, 200, 60), size, size, None, wall_rgb),
        lone_wall(material, "bevel", "stone-wall"),
        *variants,
        *wall_pieces("blob", material, "bevel", "stone-wall"),
    ]
    sheet = lay_out(tiles, 8, margin=1, spacing=2)
    return _png(Image.fromarray(sheet, "RGBA"), scale=1)


def images() -> dict[str, bytes]:
    """Path (relative to the repository) -> PNG bytes of every file this script writes."""
    out = {"tilesets/stone.png": stone_sheet()}
    for name in SHIPPED:
        built = _shipped(name)
        out[f"docs/img/tileset_{name}.png"] = _png(_draw(built))
        out[f"docs/img/sheet_{name}.png"] = _png(_sheet(built))
    for style in STYLES:
        out[f"docs/img/style_{style}.png"] = _png(_style(style))
    with tempfile.TemporaryDirectory(prefix="pcg-docs-") as tmp:
        project = docs_project(Path(tmp))
        out.update(_walkthrough_images(project))
        out.update(_maze_images(project))
        out.update(_rewrite_images(project))
        out.update(page_images(project, build))
    return out


# The README's walkthrough: fenced TOML blocks after a `<!-- walkthrough -->` line. The first is a
# whole recipe; each later one adds stages and sets keys of existing ones (`[stage.tmx] input = ...`
# edits the exporter's input), so step N's recipe is the first N blocks merged stage by stage.
WALKTHROUGH_MARK = "<!-- walkthrough -->"
WALKTHROUGH_RECIPE = "crawl"


def walkthrough_blocks(readme: str) -> list[str]:
    """The TOML text of each walkthrough step, in order."""
    return re.findall(re.escape(WALKTHROUGH_MARK) + r"\n```toml\n(.*?)```", readme, flags=re.S)


def walkthrough_recipes(readme: str) -> list[str]:
    """The whole recipe after each walkthrough step, as TOML text."""
    recipe: dict[str, Any] = {}
    texts = []
    for block in walkthrough_blocks(readme):
        step = tomllib.loads(block)
        for key, value in step.items():
            if key == "stage":
                stages = recipe.setdefault("stage", {})
                for name, body in value.items():
                    stages.setdefault(name, {}).update(body)
            else:
                recipe.setdefault(key, {}).update(value)
        texts.append(dump_toml(recipe))
    return texts


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML for {value!r}")


def dump_toml(recipe: dict[str, Any]) -> str:
    """A recipe (tables of scalars, arrays and inline tables; `stage` a table of tables) as TOML."""
    lines = []
    for key, body in recipe.items():
        tables = body.items() if key == "stage" else [(None, body)]
        for name, table in tables:
            lines.append(f"[{key}.{name}]" if name else f"[{key}]")
            lines.extend(f"{k} = {_toml_value(v)}" for k, v in table.items())
            lines.append("")
    return "\n".join(lines)


def docs_project(root: Path) -> Path:
    """A project like `pcg init --examples` makes: this repository's recipes/ and tilesets/
    (with the stone sheet this script draws, so the pictures never depend on a stale one)."""
    shutil.copytree(ROOT / "recipes", root / "recipes")
    shutil.copytree(ROOT / "tilesets", root / "tilesets")
    (root / "tilesets" / "stone.png").write_bytes(stone_sheet())
    return root


def build(project: Path, recipe: str, maps: list[int] | None = None) -> Path:
    """Build recipes/RECIPE.toml of `project` with the pipeline; returns its pack folder."""
    import pipeline

    result = pipeline.build([project / "recipes" / f"{recipe}.toml"], out=project / "exports", cache=project / ".pcg-cache", jobs=1, maps=maps)
    if not result.ok:
        raise SystemExit(f"building {recipe} failed: {result.problems} {[p.failures for p in result.packs]}")
    return project / "exports" / result.packs[0].name


def _walkthrough_images(project: Path) -> dict[str, bytes]:
    out = {}
    steps = walkthrough_recipes((ROOT / "README.md").read_text())
    recipe = project / "recipes" / f"{WALKTHROUGH_RECIPE}.toml"
    for i, text in enumerate(steps, 1):
        recipe.write_text(text)
        pack = build(project, WALKTHROUGH_RECIPE)
        if i < len(steps):  # the last step adds an engine's exporter: nothing new to look at
            out[f"docs/img/walk_{i}.png"] = (pack / "previews" / "map_000.png").read_bytes()
    out["docs/img/walk_sheet.png"] = (pack / "contact_sheet.png").read_bytes()
    return out


def comparison_generators() -> list[str]:
    """The maze stages of recipes/comparison.toml, in its order."""
    stages = tomllib.loads((ROOT / "recipes" / "comparison.toml").read_text())["stage"]
    return [name for name, body in stages.items() if body["use"].startswith("maze.")]


def _maze_images(project: Path) -> dict[str, bytes]:
    pack = build(project, "comparison", maps=[0])
    return {f"docs/img/maze_{name}.png": (pack / name / "map_000.png").read_bytes() for name in comparison_generators()}


def _rewrite_images(project: Path) -> dict[str, bytes]:
    pack = build(project, "dfs_maze", maps=[0])
    return {"docs/img/rewrite_dfs_maze.gif": (pack / "map_000.maze.gif").read_bytes()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT, help="folder to write docs/img/ and tilesets/stone.png under")
    args = parser.parse_args()
    for path, data in images().items():
        target = args.out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_bytes() != data:
            target.write_bytes(data)
        print(path)


if __name__ == "__main__":
    main()
