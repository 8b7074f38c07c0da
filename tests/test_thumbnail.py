"""The contact sheet's thumbnails: drawn small by the worker, they are the pixels the sheet would
make from the preview file, so a sheet is the same bytes whichever way each thumbnail came."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from PIL import Image

import pipeline
from conftest import RECIPES, TILESETS, pcg, recipe_text
from pipeline.building.cache import LevelCache
from pipeline.building.contact_sheet import CONTACT_SHEET
from pipeline.errors import PipelineError
from pipeline.level import Level, MapObject
from pipeline.building.plan import KeyMaker
from pipeline.recipe.load import load_recipe
from pipeline.registry import ExportContext
from pipeline.stages.export.png import MAX_PIXELS, ExportPng
from pipeline.stages.maze.block import MAZE_ALPHABET
from pipeline.thumbnail import DETAIL_KEY, THUMB, drawn_small, fit, from_preview
from pipeline.tiled.render import preview_png
from pipeline.tiled.tilesheet import Atlas
from pipeline.building.worker import MapTask, run_map


def pixels(image: Image.Image) -> np.ndarray:
    return np.asarray(image.convert("RGB"))


def atlas_of(rgba: np.ndarray, indexed: bool) -> Any:
    """A stand-in for a built tileset: what `render` and `drawn_small` read of one."""
    th, tw = rgba.shape[1:3]
    if indexed:
        from pipeline.tiled.tilesheet import _indexed

        index, palette = _indexed(rgba)
        atlas = Atlas(rgba, index, palette)
    else:
        atlas = Atlas(rgba, None, None)
    return SimpleNamespace(atlas=atlas, tileset=SimpleNamespace(tile_width=tw, tile_height=th))


# A point, a room, a path and two tile objects (one cell holding both): every kind the TMX writes.
OBJECTS = [
    MapObject("spawn", "spawn", 1.5, 1.5),
    MapObject("room_1", "room", 0, 0, 3, 2),
    MapObject("path", "path", 0.5, 0.5, points=((0, 0), (2, 0), (2, 1))),
    MapObject("gem_1", "gem", 2.5, 0.5, tile="x"),
    MapObject("gem_2", "gem", 2.2, 0.9, tile="x"),
]
GIDS = [0, 0, 0, 4, 5]


@pytest.mark.parametrize("indexed", [True, False])
@pytest.mark.parametrize("objects", [False, True])
@pytest.mark.parametrize("shape", [(41, 41), (9, 30), (3, 4), (60, 200), (1, 7), (7, 1), (120, 90)])
def test_drawn_small_is_the_thumbnail_of_the_preview(indexed: bool, objects: bool, shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(sum(shape))
    tiles = rng.integers(0, 256, size=(6, 16, 16, 4), dtype=np.uint8)
    tiles[0] = 0  # gid 0: empty
    if indexed:  # palette art: opaque or clear pixels, few colours
        tiles[..., 3] = np.where(tiles[..., 3] < 60, 0, 255)
        tiles[..., :3] //= 64
    else:  # translucent pixels: layers blend
        tiles[1:, :, :, 3] |= 1
    built = atlas_of(tiles, indexed)
    if indexed:
        assert built.atlas.index is not None
    layers = [rng.integers(0, 6, size=shape).astype(np.uint32) for _ in range(3)]
    layers[0][layers[0] == 0] = 1  # a floor under everything, bar nothing
    objs, gids = (OBJECTS, GIDS) if objects else ([], [])
    small = drawn_small(layers, built, objs, gids)
    assert small is not None
    expected = from_preview(Image.open(io.BytesIO(preview_png(layers, built, objs, gids))))
    assert small.size == expected.size and max(small.size) <= max(THUMB, 16 * max(shape))
    assert np.array_equal(pixels(small), pixels(expected))
    assert small.info.get(DETAIL_KEY) == expected.info.get(DETAIL_KEY)


def test_the_fit_reduces_by_a_factor_of_the_tile_size_then_resizes() -> None:
    assert fit(1328, 1328).reduce == 8 and fit(1328, 1328).size == (THUMB, THUMB)
    assert fit(100, 50) == fit(100, 50).__class__(1, (100, 50), 1)  # small: grown by whole pixels only
    assert fit(40, 30).grow == 4 and fit(40, 30).size == (160, 120)
    assert fit(333, 1000).reduce == 1  # odd width: no box reduction, the resize alone


def test_each_example_map_sends_the_thumbnail_of_its_preview(tmp_path: Path) -> None:
    """Through the worker, for packs of one layer, several layers and wang sets, and own art."""
    for name in ("labyrinths", "dungeons", "classic_dungeon", "caves"):
        recipe = load_recipe(RECIPES / f"{name}.toml")
        keys = KeyMaker(recipe).keys(0)
        task = MapTask(
            index=0, stem=recipe.pack.stem(0), keys={n: k for n, (k, _) in keys.items()},
            seeds={n: s for n, (_, s) in keys.items()}, run=tuple(keys), exports=tuple(s.name for s in recipe.exporters),
        )
        result = run_map(recipe, LevelCache(tmp_path / name), task)
        assert result.failure is None and result.thumbnail is not None, name
        preview, drawn = result.thumbnail
        expected = from_preview(Image.open(io.BytesIO(result.files[preview])))
        assert np.array_equal(pixels(drawn), pixels(expected)), name


def test_a_sheet_is_the_same_bytes_whether_thumbnails_were_drawn_or_read(tmp_path: Path) -> None:
    """A full build sends every thumbnail; rebuilding one map makes the others from previews."""
    project = tmp_path / "p"
    (project / "recipes").mkdir(parents=True)
    shutil.copy(RECIPES / "dungeons.toml", project / "recipes")
    shutil.copytree(TILESETS, project / "tilesets")
    pcg("build", "recipes", "-q", cwd=project)
    sheet = project / "exports" / "dungeons" / CONTACT_SHEET
    first = sheet.read_bytes()
    sheet.unlink()
    for tmx in (project / "exports" / "dungeons").glob("*.tmx"):
        tmx.unlink()
        break
    pcg("build", "recipes", "-q", cwd=project)  # one map rebuilt: its thumbnail drawn, the rest read
    assert sheet.read_bytes() == first


def test_a_colour_map_too_big_for_image_readers_fails_its_map_and_says_what_scale_fits() -> None:
    big = Level(tiles=np.zeros((3000, 3000), dtype=np.uint8), alphabet=MAZE_ALPHABET)
    with pytest.raises(PipelineError) as refused:
        ExportPng(scale=4).export(big, ExportContext(stem="m"))
    assert refused.value.problems == [
        "scale: 4 makes a 12000 x 12000-pixel image of this 3000 x 3000-tile map, over the 89,478,485"
        " pixels image readers accept; use scale = 3"
    ]
    assert 3000 * 3000 * 3 * 3 <= MAX_PIXELS < 3000 * 3000 * 4 * 4
    huge = Level(tiles=np.zeros((9000, 10000), dtype=np.uint8), alphabet=MAZE_ALPHABET)
    with pytest.raises(PipelineError, match="10000 x 9000-tile map, .*: the map is too big for a colour map$"):
        ExportPng(scale=1).export(huge, ExportContext(stem="m"))


@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
def test_the_sheet_shows_a_preview_it_cannot_read_as_a_blank(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A preview too big for PIL to open (a plugin exporter's, say) leaves a gap in the sheet,
    not a traceback on every build."""
    (tmp_path / "recipes").mkdir()
    text = recipe_text(maps=2, cells=(60, 60), scale=4)  # 484 x 484-pixel colour maps, the sheet's previews
    (tmp_path / "recipes" / "small.toml").write_text(text.replace('[stage.tmx]\nuse = "export.tmx"\ninput = "maze"\ntile_size = 8\n', ""))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 50_000)  # refused over 100,000 pixels: the previews, not PIL's font
    result = pipeline.build(jobs=1)
    assert result.ok, result.problems
    with Image.open(tmp_path / "exports" / "small" / CONTACT_SHEET) as sheet:
        assert sheet.size[0] > THUMB


def test_a_refused_colour_map_is_one_line_and_the_maze_before_it_is_reported_run(tmp_path: Path) -> None:
    (tmp_path / "recipes").mkdir()
    text = recipe_text(maps=1, cells=(1000, 1000), scale=64)  # 2001 x 2001 tiles: 16 G pixels
    (tmp_path / "recipes" / "big.toml").write_text(text)
    proc = pcg("build", "recipes", cwd=tmp_path, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "preview  scale: 64 makes a 128064 x 128064-pixel image of this 2001 x 2001-tile map" in proc.stderr
    assert "use scale = 4" in proc.stderr
    # The maze and the TMX were made (and cached) before the colour map failed.
    assert "built 0/1 maps" in proc.stdout and "ran maze x1, tmx x1" in proc.stdout, proc.stdout


SHEET_RECIPE = """\
[pack]
name = "two"
seed = 9
maps = 3
{sheet}
[stage.maze]
use = "maze.backtracker"
cells = [6, 5]

[stage.braid]
use = "post.braid"
input = "maze"
fraction = 1.0

{first}

{second}
"""
PLAIN = '[stage.plain]\nuse = "export.tmx"\ninput = "maze"\ndir = "plain"\ntileset_name = "a"'
BRAIDED = '[stage.braided]\nuse = "export.tmx"\ninput = "braid"\ndir = "braided"\ntileset_name = "b"'


def test_contact_sheet_names_the_exporter_whose_previews_it_shows(tmp_path: Path) -> None:
    # Without it the sheet shows the first exporter's; a pack of two chains wants to choose.
    def sheet(name: str, text: str) -> bytes:
        project = tmp_path / name
        (project / "recipes").mkdir(parents=True)
        (project / "recipes" / "two.toml").write_text(text)
        pcg("build", "recipes", "-q", cwd=project)
        return (project / "exports" / "two" / CONTACT_SHEET).read_bytes()

    first = sheet("first", SHEET_RECIPE.format(sheet="", first=BRAIDED, second=PLAIN))
    named = sheet("named", SHEET_RECIPE.format(sheet='contact_sheet = "braided"', first=PLAIN, second=BRAIDED))
    default = sheet("default", SHEET_RECIPE.format(sheet="", first=PLAIN, second=BRAIDED))
    assert named == first and named != default


@pytest.mark.parametrize(
    ("sheet", "message"),
    [
        ('"braid"', "pack.contact_sheet: stage.braid (post.braid) is not an export stage: name the exporter whose previews the sheet shows"),
        ('"braidd"', "pack.contact_sheet: no stage named 'braidd' (did you mean 'braided'?)"),
        ('"plain"', "pack.contact_sheet: stage.plain writes no previews (preview = false, or a kind without them)"),
    ],
)
def test_a_contact_sheet_naming_no_previews_is_refused(tmp_path: Path, sheet: str, message: str) -> None:
    from pipeline.errors import RecipeError

    (tmp_path / "two.toml").write_text(SHEET_RECIPE.format(sheet=f"contact_sheet = {sheet}", first=PLAIN + "\npreview = false", second=BRAIDED))
    with pytest.raises(RecipeError) as refused:
        load_recipe(tmp_path / "two.toml")
    assert [p.split(": ", 1)[1] for p in refused.value.problems] == [message]


def test_a_recipe_that_changes_what_the_sheet_shows_is_not_up_to_date(tmp_path: Path) -> None:
    # No map is stale, yet the sheet must be drawn again: explain --check and build say so.
    project = tmp_path / "p"
    (project / "recipes").mkdir(parents=True)
    recipe = project / "recipes" / "two.toml"
    recipe.write_text(SHEET_RECIPE.format(sheet="", first=PLAIN, second=BRAIDED))
    pcg("build", "recipes", "-q", cwd=project)
    recipe.write_text(SHEET_RECIPE.format(sheet='contact_sheet = "braided"', first=PLAIN, second=BRAIDED))
    explained = pcg("explain", "--check", cwd=project, check=False)
    assert explained.returncode == 1 and "contact_sheet.png: `pcg build` draws it again" in " ".join(explained.stdout.split()), explained.stdout
    build = pcg("build", "recipes", cwd=project).stdout
    assert "Nothing to do" not in build and "1 file written" in build, build
    assert "Nothing to do" in pcg("build", "recipes", cwd=project).stdout
    assert pcg("explain", "--check", cwd=project).returncode == 0
    sheet = project / "exports" / "two" / CONTACT_SHEET
    sheet.unlink()
    assert "contact_sheet.png: `pcg build` draws it again (it is missing)" in " ".join(pcg("explain", cwd=project).stdout.split())
    pcg("build", "recipes", "-q", cwd=project)
    # A pack shrunk: no map to build, yet the sheet shows one map fewer.
    recipe.write_text(SHEET_RECIPE.format(sheet='contact_sheet = "braided"', first=PLAIN, second=BRAIDED).replace("maps = 3", "maps = 2"))
    assert '"contact_sheet": "written"' in pcg("explain", "--format", "json", cwd=project).stdout
    pcg("build", "recipes", "-q", cwd=project)
    recipe.write_text(SHEET_RECIPE.format(sheet="contact_sheet = false", first=PLAIN, second=BRAIDED).replace("maps = 3", "maps = 2"))
    gone = pcg("explain", "--format", "json", cwd=project).stdout
    assert '"contact_sheet": "removed"' in gone
    assert "removed 1 file" in pcg("build", "recipes", cwd=project).stdout and not (project / "exports" / "two" / CONTACT_SHEET).exists()


def test_a_damaged_or_drawn_over_sheet_is_found_and_drawn_again(tmp_path: Path) -> None:
    # The sheet's key sits in its PNG header, before the pixels: damage after it keeps the key, so
    # only the digest the manifest records tells the sheet is not the one the build wrote.
    project = tmp_path / "p"
    (project / "recipes").mkdir(parents=True)
    (project / "recipes" / "two.toml").write_text(SHEET_RECIPE.format(sheet="", first=PLAIN, second=BRAIDED))
    pcg("build", "recipes", "-q", cwd=project)
    sheet = project / "exports" / "two" / CONTACT_SHEET
    good = sheet.read_bytes()
    manifest = json.loads((project / "exports" / "two" / "manifest.json").read_text())
    assert manifest["contact_sheet"] == hashlib.sha256(good).hexdigest()
    damaged = bytearray(good)
    damaged[-40] ^= 0xFF  # inside the last IDAT chunk
    sheet.write_bytes(bytes(damaged))
    verified = pcg("verify", "two", cwd=project, check=False)
    assert verified.returncode == 1 and f"{Path('exports/two') / CONTACT_SHEET} was modified on disk since the build" in verified.stderr, verified.stderr
    explained = pcg("explain", "--check", cwd=project, check=False)
    assert explained.returncode == 1 and "draws it again (it was edited since the last build)" in " ".join(explained.stdout.split()), explained.stdout
    assert '"contact_sheet": "edited"' in pcg("explain", "--format", "json", cwd=project).stdout
    build = pcg("build", "recipes", cwd=project)
    assert "1 file written" in build.stdout and "contact_sheet.png: edited since the last build; drawn again" in " ".join(build.stderr.split())
    assert sheet.read_bytes() == good
    assert pcg("verify", "two", cwd=project).returncode == 0
    assert "Nothing to do" in pcg("build", "recipes", cwd=project).stdout
    # Saved by an image editor, which keeps no key of ours: edited all the same, not "the recipe
    # changed what it shows".
    with Image.open(sheet) as image:
        image.putpixel((0, 0), (255, 0, 0, 255))
        image.save(sheet)
    assert "it was edited since the last build" in " ".join(pcg("explain", cwd=project).stdout.split())
    assert "contact_sheet.png: edited since the last build; drawn again" in " ".join(pcg("build", "recipes", cwd=project).stderr.split())
    assert sheet.read_bytes() == good


def test_verify_finds_a_sheet_that_rebuilds_differently(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / "recipes").mkdir(parents=True)
    (project / "recipes" / "two.toml").write_text(SHEET_RECIPE.format(sheet="", first=PLAIN, second=BRAIDED))
    pcg("build", "recipes", "-q", cwd=project)
    path = project / "exports" / "two" / "manifest.json"
    manifest = json.loads(path.read_text())
    sheet = project / "exports" / "two" / CONTACT_SHEET
    # A sheet on disk as the manifest says, which a rebuild does not draw.
    sheet.write_bytes(sheet.read_bytes() + b"\0")
    manifest["contact_sheet"] = hashlib.sha256(sheet.read_bytes()).hexdigest()
    path.write_text(json.dumps(manifest))
    verified = pcg("verify", "two", cwd=project, check=False)
    assert verified.returncode == 1 and "contact_sheet.png rebuilds differently" in verified.stderr, verified.stderr
    assert "was modified on disk" not in verified.stderr


def test_a_sheet_a_stopped_build_did_not_write_is_drawn_again_without_an_edit_warning(tmp_path: Path) -> None:
    # The manifest (with the new sheet's digest) is written before the sheet: a build stopped
    # between the two leaves the old sheet, which is ours, not an edit.
    project = tmp_path / "p"
    (project / "recipes").mkdir(parents=True)
    recipe = project / "recipes" / "two.toml"
    recipe.write_text(SHEET_RECIPE.format(sheet="", first=PLAIN, second=BRAIDED))
    pcg("build", "recipes", "-q", cwd=project)
    sheet = project / "exports" / "two" / CONTACT_SHEET
    old = sheet.read_bytes()
    recipe.write_text(SHEET_RECIPE.format(sheet="", first=PLAIN, second=BRAIDED).replace("maps = 3", "maps = 2"))
    pcg("build", "recipes", "-q", cwd=project)
    new = sheet.read_bytes()
    sheet.write_bytes(old)  # as if the build had stopped after its manifest
    assert "draws it again (the recipe changed what it shows)" in " ".join(pcg("explain", cwd=project).stdout.split())
    build = pcg("build", "recipes", cwd=project)
    assert "edited" not in build.stderr and "1 file written" in build.stdout, build.stderr + build.stdout
    assert sheet.read_bytes() == new
