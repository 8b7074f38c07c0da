"""Animated tiles (`[animations.NAME]` in a tileset of one's own art): the name's tile cycles
through frames of the sheet where the engine animates tiles, written as Tiled writes them."""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PIL import Image

from conftest import TILED, needs_tiled, pcg, tiled_env, write_recipe
from pipeline.errors import RecipeError
from pipeline.recipe.load import load_recipe

SHEET = 'image = "sheet.png"\ntile_size = 8\n[tiles]\nwall = 0\nfloor = 1\nwater = 4\n'
# A solid wall with a variant too: Tiled's own Lua puts a tile's probability before its collision.
ANIMATED = SHEET + "[animations.water]\nframes = [4, 5, 6, 7]\nduration = [300, 100, 100, 100]\n[variants.wall]\ntiles = [2]\nweights = [0.2]\n[properties.wall]\nsolid = true\n"

RECIPE = """\
[pack]
name = "pond"
seed = 2
maps = 1

[stage.maze]
use = "maze.backtracker"
cells = [6, 5]

[stage.pond]
use = "rewrite"
input = "maze"
values = "BWU"
legend = { U = "water" }
program = { one = "W=U", steps = 4 }

[stage.tmx]
use = "export.tmx"
input = "pond"
tileset = "../tilesets/t.toml"
embed_tileset = true

[stage.tmj]
use = "export.tmj"
input = "pond"
tileset = "../tilesets/t.toml"
preview = false

[stage.lua]
use = "export.lua"
input = "pond"
tileset = "../tilesets/t.toml"
preview = false
"""
FRAMES = [(4, 300), (5, 100), (6, 100), (7, 100)]


def _project(tmp_path: Path, tileset: str) -> Path:
    (tmp_path / "tilesets").mkdir()
    Image.new("RGBA", (32, 16), (90, 90, 90, 255)).save(tmp_path / "tilesets" / "sheet.png")
    (tmp_path / "tilesets" / "t.toml").write_text(tileset)
    write_recipe(tmp_path, "pond", RECIPE)
    return tmp_path


def test_an_animated_tile_is_written_as_tileds_animation_editor_writes_it(tmp_path: Path) -> None:
    project = _project(tmp_path, ANIMATED)
    pcg("build", "recipes", "-q", cwd=project)
    pack = project / "exports" / "pond"
    tmx = ET.parse(pack / "map_000.tmx").getroot()
    water = next(t for t in tmx.iter("tile") if t.get("id") == "4")
    assert [(int(f.get("tileid", -1)), int(f.get("duration", -1))) for f in water.iter("frame")] == FRAMES
    assert sum(1 for _ in tmx.iter("animation")) == 1  # only the name that asks for it
    tmj = json.loads((pack / "map_000.tmj").read_text())
    (animated,) = [t for t in tmj["tilesets"][0]["tiles"] if "animation" in t]
    assert list(animated) == ["animation", "id", "properties"] and animated["id"] == 4
    assert [(f["tileid"], f["duration"]) for f in animated["animation"]] == FRAMES
    lua = (pack / "map_000.lua").read_text()
    assert re.search(r"id = 4,\s+properties = \{[^}]*\},\s+animation = \{\s+\{\s+tileid = 4,\s+duration = 300", lua), lua


@needs_tiled
def test_tiled_reads_the_frames_and_its_own_lua_export_writes_them_as_we_do(tmp_path: Path) -> None:
    project = _project(tmp_path, ANIMATED)
    pcg("build", "recipes", "-q", cwd=project)
    pack = project / "exports" / "pond"
    theirs = pack / "tiled.lua"
    proc = subprocess.run([str(TILED), "--export-map", "lua", str(pack / "map_000.tmx"), str(theirs)], env=tiled_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr

    def tiles(text: str) -> str:  # the tileset's tile list: the rest names the exporter and paths
        found = re.search(r"\n      tiles = \{\n.*?\n      \}\n", text, re.S)
        assert found is not None
        return found.group()

    assert tiles((pack / "map_000.lua").read_text()) == tiles(theirs.read_text())
    out = tmp_path / "map.json"
    proc = subprocess.run([str(TILED), "--export-map", "json", str(pack / "map_000.tmx"), str(out)], env=tiled_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    (animated,) = [t for t in json.loads(out.read_text())["tilesets"][0]["tiles"] if "animation" in t]
    assert [(f["tileid"], f["duration"]) for f in animated["animation"]] == FRAMES


@pytest.mark.parametrize(
    ("tileset", "message"),
    [
        ("[animations.water]\nframes = [1, 2]\n", "animations: belongs to a tileset with your own `image`"),
        (SHEET + "[animations.watr]\nframes = [4, 5]\n", "animations.watr: names no tile of `tiles` (did you mean 'water'?)"),
        (SHEET + "[animations.water]\nframes = [4]\n", "animations.water.frames: must have at least 2 items"),
        (SHEET + "[animations.water]\nframes = [4, 8]\n", "animations.water.frames: tile 8 is past the end of tilesets/sheet.png, which holds 8 tiles (4 x 2)"),
        (SHEET + "[animations.water]\nframes = [4, 5]\nduration = [100]\n", "animations.water.duration: gives 1 duration for 2 frames: one, or one each"),
        (SHEET + "[animations.water]\nframes = [4, 5]\nduration = 0\n", "animations.water.duration: is in milliseconds, 1..60000 (got 0)"),
        (SHEET + "[animations.water]\nframes = [-1, 5]\n", "animations.water.frames: tile ids are >= 0 (got -1)"),
        (SHEET + "[animations.water]\nframes = [4, 5]\nduration = [100, 0]\n", "animations.water.duration: is in milliseconds, 1..60000 (got 0)"),
        (
            SHEET.replace("water = 4\n", "water = 4\nlake = 4\n") + "[animations.water]\nframes = [4, 5]\n[animations.lake]\nframes = [4, 6]\n",
            "animations.lake: 'lake' shares tile 4 with 'water', which is animated too: give one a tile of its own",
        ),
    ],
)
def test_a_bad_animation_is_one_clear_error(tmp_path: Path, tileset: str, message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(_project(tmp_path, tileset))
    with pytest.raises(RecipeError) as refused:
        load_recipe("recipes/pond.toml")
    # The recipe's three exporters share the tileset: one line names the other two.
    (problem,) = refused.value.problems
    assert message in problem and problem.endswith("(also stage.tmj, stage.lua)"), problem
