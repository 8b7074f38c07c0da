"""Every stage declares the map stats it adds (`adds_stats`) and whether it keeps its input's
(`passes_stats`), so that `order_by` or a filter naming a stat its Level cannot have is a load
error; checked over every registered kind on its golden fixture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import pcg, write_recipe
from golden import stage_kinds, stage_runs
from pipeline.building.contact_sheet import _entries, _stats_shown, caption_lines
from pipeline.building.manifest import Manifest, MapEntry, StageRecord
from pipeline.errors import RecipeError
from pipeline.level import ObjectRef
from pipeline.recipe.load import load_recipe


@pytest.mark.parametrize("kind", sorted(stage_kinds()))
def test_a_stage_adds_only_the_stats_it_declares(kind: str) -> None:
    for spec, inputs, made in stage_runs(kind):
        declared = spec.params.added_stats()
        assert declared is not None, f"{kind} declares no adds_stats: built-in stages must"
        had = set().union(*(set(i.properties) for i in inputs)) if inputs else set()
        # Passed on from an input unchanged is not adding; a recomputed stat is.
        # An object reference (a hand-made map's `goal`) names an object: no stat to declare.
        added = {
            k for k, v in made.properties.items() if not isinstance(v, ObjectRef) and (k not in had or all(i.properties.get(k) != v for i in inputs))
        }
        assert added <= set(declared), f"{kind} writes {sorted(added - set(declared))} without declaring them in adds_stats"
        # A filter after it reads its input's properties as passes_stats says they reach it.
        if spec.params.passes_stats:
            assert had <= set(made.properties), f"{kind} drops {sorted(had - set(made.properties))}: declare passes_stats = False"


ORDERED = """\
[pack]
name = "ordered"
seed = 3
maps = 2
order_by = "{order_by}"

[stage.maze]
use = "maze.backtracker"
cells = [5, 5]

[stage.items]
use = "place.items"
input = "maze"
type = "gem"

[stage.png]
use = "export.png"
input = "items"
"""


def test_order_by_a_stat_no_stage_writes_is_a_load_error(tmp_path: Path) -> None:
    write_recipe(tmp_path, "ordered", ORDERED.format(order_by="-dead_end"))
    proc = pcg("build", "recipes", cwd=tmp_path, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "recipes/ordered.toml: pack.order_by: no stage writes the stat 'dead_end' (did you mean 'dead_ends'?" in " ".join(proc.stderr.split())
    assert not (tmp_path / "exports" / "ordered").exists()
    # Stats of every stage feeding the exporter count, including those named after a param.
    for good in ("-dead_ends", "items_gem"):
        write_recipe(tmp_path, "ordered", ORDERED.format(order_by=good))
        pcg("build", "recipes", "-q", cwd=tmp_path)


TWO_CHAINS = """\
[pack]
name = "two"
seed = 3
maps = 5
{pack}

[stage.caves]
use = "dungeon.cellular_caves"
size = [30, 24]

[stage.cave_regions]
use = "regions.label"
input = "caves"

[stage.maze]
use = "maze.backtracker"
cells = [6, 5]

[stage.maze_regions]
use = "regions.label"
input = "maze"

[stage.maze_png]
use = "export.png"
input = "maze_regions"

[stage.cave_png]
use = "export.png"
input = "cave_regions"
dir = "caves"
"""


def _load_problems(tmp_path: Path, pack: str) -> list[str]:
    path = tmp_path / "two.toml"
    path.write_text(TWO_CHAINS.format(pack=pack))
    try:
        load_recipe(path)
    except RecipeError as exc:
        return [line.removeprefix(f"{path}: ") for line in exc.problems]
    return []


def test_a_stat_two_chains_write_must_say_whose_to_sort_by(tmp_path: Path) -> None:
    assert _load_problems(tmp_path, 'order_by = "-region_largest"') == [
        "pack.order_by: the stat 'region_largest' comes from stage.cave_regions and stage.maze_regions, in different"
        ' exporters\' maps; say whose to sort by: "-maze_regions.region_largest" or "-cave_regions.region_largest"'
    ]
    assert _load_problems(tmp_path, 'order_by = "-cave_regions.region_largest"') == []
    assert _load_problems(tmp_path, 'order_by = "floor_pct"') == []  # only the caves have it
    assert _load_problems(tmp_path, 'order_by = "cave_regions.dead_ends"') == [
        "pack.order_by: no stat 'dead_ends' in stage.cave_regions (it has: caves, floor_pct, region_largest, region_sizes, regions)"
    ]
    assert _load_problems(tmp_path, 'order_by = "caves.floor_pct"') == [
        "pack.order_by: 'caves.floor_pct': only the stats of the stages an exporter reads are recorded, and stage.caves is not one"
        " (those are: maze_regions, cave_regions)"
    ]
    assert _load_problems(tmp_path, 'order_by = "cave_png.floor_pct"') == [
        "pack.order_by: 'cave_png.floor_pct': stage.cave_png is an exporter; name the stage it draws (cave_regions)"
    ]


def test_caption_stats_are_checked_against_the_map_the_sheet_shows(tmp_path: Path) -> None:
    # The sheet shows the first exporter's maps: the maze's.
    assert _load_problems(tmp_path, 'contact_stats = ["regionz", "floor_pct", "cave_regions.floor_pct", "cavez.regions"]') == [
        "pack.contact_stats.0: no stat 'regionz' in stage.maze_regions, whose maps the sheet shows (did you mean 'regions'?)"
        " (it has: cells, dead_end_pct, dead_ends, diameter, entrance, exit, loops, region_largest, region_sizes, regions, solution_pct, straightness)",
        "pack.contact_stats.1: no stat 'floor_pct' in stage.maze_regions, whose maps the sheet shows"
        " (it has: cells, dead_end_pct, dead_ends, diameter, entrance, exit, loops, region_largest, region_sizes, regions, solution_pct, straightness)",
        "pack.contact_stats.3: no stat 'cavez.regions' in stage.maze_regions, whose maps the sheet shows"
        " (did you mean 'cave_regions.regions'?) (it has: cells, dead_end_pct, dead_ends, diameter, entrance, exit, loops, region_largest, region_sizes, regions, solution_pct, straightness)",
    ]
    # The stat the pack is sorted by is captioned as it sorted, whichever chain writes it.
    assert _load_problems(tmp_path, 'order_by = "floor_pct"\ncontact_stats = ["floor_pct", "regions"]') == []


def test_stat_names_may_hold_dashes_and_dots_and_a_stage_is_only_what_names_one(tmp_path: Path) -> None:
    """`place.items` names its stat after its `type`: `items_health-potion`, `items_gem.red`."""
    extra = '[stage.potions]\nuse = "place.items"\ninput = "maze_regions"\ntype = "health-potion"\n'
    extra += '[stage.gems]\nuse = "place.items"\ninput = "potions"\ntype = "gem.red"\n'
    text = TWO_CHAINS.format(pack='order_by = "-items_health-potion"\ncontact_stats = ["items_gem.red", "gems.items_gem.red"]')
    path = tmp_path / "two.toml"
    path.write_text(text.replace('input = "maze_regions"\n\n[stage.cave_png]', 'input = "gems"\n\n[stage.cave_png]') + extra)
    assert load_recipe(path).pack.contact_stats == ("items_gem.red", "gems.items_gem.red")


def test_an_overlay_passes_on_its_tops_stats_so_they_are_not_ambiguous(tmp_path: Path) -> None:
    text = """\
[pack]
name = "over"
seed = 1
order_by = "floor_pct"

[stage.a]
use = "dungeon.cellular_caves"
size = [20, 16]

[stage.b]
use = "dungeon.cellular_caves"
size = [20, 16]

[stage.both]
use = "compose.overlay"
inputs = ["a", "b"]

[stage.both_png]
use = "export.png"
input = "both"

[stage.b_png]
use = "export.png"
input = "b"
dir = "b"
"""
    path = tmp_path / "over.toml"
    path.write_text(text)
    assert load_recipe(path).pack.order_by == "floor_pct"  # both maps carry b's floor_pct
    path.write_text(text.replace('input = "b"\ndir = "b"', 'input = "a"\ndir = "a"'))
    with pytest.raises(RecipeError, match="the stat 'floor_pct' comes from stage.a and stage.b"):
        load_recipe(path)


def test_a_pack_sorts_and_captions_by_the_stage_it_names(tmp_path: Path) -> None:
    pack = 'order_by = "-cave_regions.region_largest"\ncontact_stats = ["cave_regions.region_largest", "diameter", "cave_regions.floor_pct"]'
    write_recipe(tmp_path, "two", TWO_CHAINS.format(pack=pack))
    pcg("build", "recipes", "-q", cwd=tmp_path)
    folder = tmp_path / "exports" / "two"
    manifest = json.loads((folder / "manifest.json").read_text())
    caves = {m["index"]: m["stages"]["cave_regions"]["stats"] for m in manifest["maps"]}
    mazes = {m["index"]: m["stages"]["maze_regions"]["stats"] for m in manifest["maps"]}
    assert len({s["region_largest"] for s in caves.values()}) > 1  # else the order proves nothing
    levels = json.loads((folder / "levels.json").read_text())["levels"]
    assert [lv["cave_regions.region_largest"] for lv in levels] == sorted((s["region_largest"] for s in caves.values()), reverse=True)
    assert [lv["cave_regions.region_largest"] for lv in levels] == [caves[lv["map"]]["region_largest"] for lv in levels]
    # Captions under the maze pictures: the maze's own diameter, and the caves' numbers named.
    recipe = load_recipe(tmp_path / "recipes" / "two.toml")
    for entry in _entries(recipe, Manifest.from_json(manifest)):  # type: ignore[arg-type]
        lines = caption_lines(entry, _stats_shown(recipe, [entry]))
        index = entry["index"]
        assert lines[1:] == [
            f"cave_regions.region_largest {caves[index]['region_largest']}",
            f"diameter {mazes[index]['diameter']}",
            f"cave_regions.floor_pct {caves[index]['floor_pct']:g}",
        ], lines


def test_play_order_reads_a_stage_stat_only_where_the_prefix_is_a_stage() -> None:
    from pipeline.building.levels_index import play_order, stat_value

    maps = [
        MapEntry(
            index=i, stem=f"map_{i}", recipe="", environment="", files={}, stats={"items_gem.red": 3 - i, "regions": i},
            stages={"caves": StageRecord("", [i], stats={"regions": 10 - i}), "gems": StageRecord("", [i])},
        )
        for i in range(3)
    ]
    assert stat_value(maps[0], "items_gem.red") == 3 and stat_value(maps[0], "caves.regions") == 10
    assert stat_value(maps[0], "gems.regions") is None  # that stage feeds no exporter: nothing recorded
    assert [m.index for m in play_order(maps, "items_gem.red")] == [2, 1, 0]
    assert [m.index for m in play_order(maps, "-caves.regions")] == [0, 1, 2]
    assert [m.index for m in play_order(maps, "caves.regions")] == [2, 1, 0]


def test_an_order_by_stat_that_is_text_in_every_map_is_a_warning(tmp_path: Path) -> None:
    """Stats are declared without types, so `region_sizes` (text) loads; the build says it
    sorted nothing."""
    import pipeline

    text = TWO_CHAINS.format(pack='order_by = "cave_regions.region_sizes"').replace("maps = 5", "maps = 2")
    write_recipe(tmp_path, "two", text)
    result = pipeline.build(tmp_path / "recipes", out=tmp_path / "exports", cache=tmp_path / ".pcg-cache", jobs=1)
    first = json.loads((tmp_path / "exports" / "two" / "manifest.json").read_text())["maps"][0]
    sizes = first["stages"]["cave_regions"]["stats"]["region_sizes"]
    shown = repr(sizes) if len(repr(sizes)) <= 24 else repr(sizes)[:20] + "...'"
    warning = f"pack.order_by: 'cave_regions.region_sizes' is text, not a number, in every map ({shown} in the first), so levels.json keeps map order"
    assert result.ok and result["two"].warnings == (f"{tmp_path / 'recipes' / 'two.toml'}: {warning}",)
    proc = pcg("build", "recipes", "-q", cwd=tmp_path)  # every build says so, even a quiet one, as of other warnings
    assert f"warning: recipes/two.toml: {warning}" in " ".join(proc.stderr.split()), proc.stderr


def test_a_long_caption_stat_name_is_cut_from_its_start_and_keeps_its_value() -> None:
    from PIL import ImageFont

    from pipeline.building.contact_sheet import _fit
    from pipeline.thumbnail import THUMB

    font = ImageFont.load_default_imagefont()  # the sheet's own
    line = _fit("drunk_reg.region_largest 176", font, THUMB, value=True)
    assert line.startswith("~") and line.endswith("region_largest 176") and font.getlength(line) <= THUMB
    assert _fit("regions 3", font, THUMB, value=True) == "regions 3"
