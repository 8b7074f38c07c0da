"""Recipes that read another pack's files (a `load.tmx` of `../exports/up/map_000.tmx`) build after
it in one run, in `pcg build`, `pcg watch` and the Python API; a cycle of them is one clear line
per recipe, and the other recipes still build."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pipeline
from conftest import pcg, recipe_text, write_recipe
from test_watch import Watch

UP = """\
[pack]
name = "up"
seed = {seed}
maps = 2

[stage.maze]
use = "maze.backtracker"
cells = [6, 5]

[stage.tmx]
use = "export.tmx"
input = "maze"
"""

DOWN = """\
[pack]
name = "down"
seed = 3
maps = 1

[stage.map]
use = "load.tmx"
file = "../exports/{pack}/map_000.tmx"

[stage.tmx]
use = "export.tmx"
input = "map"
"""


def chained(project: Path, seed: int = 1) -> None:
    # "a_down" sorts first: the order of the folder is not the order of the build.
    write_recipe(project, "a_down", DOWN.format(pack="up"))
    write_recipe(project, "up", UP.format(seed=seed))


def down_reads_up(project: Path) -> bool:
    """Whether the down pack's map holds up's map 0 as it is now (their layer data alike)."""
    up = (project / "exports" / "up" / "map_000.tmx").read_text()
    down = (project / "exports" / "down" / "map_000.tmx").read_text()
    return up[up.index("<data") : up.index("</data>")] == down[down.index("<data") : down.index("</data>")]


def test_a_recipe_that_reads_another_pack_builds_after_it_from_nothing_and_after_each_change(tmp_path: Path) -> None:
    chained(tmp_path)
    out = pcg("build", "recipes", cwd=tmp_path).stdout
    assert out.index("up: built") < out.index("down: built"), out
    assert down_reads_up(tmp_path)
    write_recipe(tmp_path, "up", UP.format(seed=2))
    out = pcg("build", "recipes", cwd=tmp_path).stdout
    assert "down: built 1/1" in out and "Up to date" not in out, out
    assert down_reads_up(tmp_path)
    assert pcg("verify", "exports/down", cwd=tmp_path).returncode == 0
    assert "Nothing to do: 2 packs up to date" in pcg("build", "recipes", cwd=tmp_path).stdout


def test_a_cycle_of_recipes_is_one_line_each_and_the_others_build(tmp_path: Path) -> None:
    write_recipe(tmp_path, "a", DOWN.format(pack="b").replace('name = "down"', 'name = "a"'))
    write_recipe(tmp_path, "b", DOWN.format(pack="a").replace('name = "down"', 'name = "b"'))
    write_recipe(tmp_path, "small", recipe_text())
    proc = pcg("build", "recipes", cwd=tmp_path, check=False)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 2, proc.stderr
    assert lines[0].startswith("error: recipes/a.toml: the recipes read each other's packs in a cycle (a (recipes/a.toml) -> b"), lines
    assert "small: built 6/6" in proc.stdout


def test_the_python_api_builds_chained_recipes_in_order(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    chained(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = pipeline.build("recipes", jobs=1)
    assert result.ok, result.problems
    assert [p.name for p in result.packs] == ["up", "down"]
    write_recipe(tmp_path, "up", UP.format(seed=5))
    result = pipeline.build("recipes", jobs=1)
    assert result.ok and result["down"].built == 1
    assert down_reads_up(tmp_path)


def test_watch_rebuilds_the_recipes_that_read_a_pack_it_rebuilt(tmp_path: Path) -> None:
    chained(tmp_path)
    watch = Watch(tmp_path)
    try:
        watch.wait_for(r"watching recipes")
        assert down_reads_up(tmp_path)
        write_recipe(tmp_path, "up", UP.format(seed=9))
        watch.wait_for(r"up: rebuilt 2 of 2 maps")
        watch.wait_for(r"down: rebuilt 1 of 1 maps")
    finally:
        assert watch.stop() == 0
    assert down_reads_up(tmp_path)
    manifest = json.loads((tmp_path / "exports" / "down" / "manifest.json").read_text())
    assert manifest["maps"][0]["index"] == 0
    assert pcg("verify", "exports/down", cwd=tmp_path).returncode == 0


def test_watch_says_what_a_rebuild_removed(tmp_path: Path) -> None:
    write_recipe(tmp_path, "small", recipe_text(maps=6))
    watch = Watch(tmp_path)
    try:
        watch.wait_for(r"watching recipes")
        write_recipe(tmp_path, "small", recipe_text(maps=3, seed=8))
        watch.wait_for(r"small: rebuilt 3 of 3 maps in \S+ s \(\d+ files written; removed \d+ files that no map writes any more\)")
    finally:
        assert watch.stop() == 0


def test_which_packs_a_recipe_reads_comes_from_its_stages_strings(tmp_path: Path) -> None:
    from pipeline.recipe.order import packs_read

    recipe = tmp_path / "recipes" / "r.toml"
    recipe.parent.mkdir()
    recipe.write_text(
        '[pack]\nname = "r"\n\n[stage.a]\nuse = "place.prefabs"\nprefabs = "../exports/rooms/*.tmx"\n'
        'colour = "#ff0000"\nodd = "a\\u0000b"\nrule = "RB=WW"\nnested = [{ file = "../exports/up/map_000.tmx" }]\n'
    )
    out = tmp_path / "exports"
    packs = {name: out.resolve() / name for name in ("rooms", "up", "other", "r")}
    assert packs_read(recipe, packs) == ["rooms", "up"]
    # A wildcard in the pack's folder name reads every pack it matches.
    recipe.write_text('[pack]\nname = "r"\n\n[stage.a]\nuse = "place.prefabs"\nprefabs = "../exports/r?o*/*.tmx"\n')
    assert packs_read(recipe, packs) == ["rooms"]


def test_list_and_explain_say_a_recipe_waits_for_the_pack_it_reads(tmp_path: Path) -> None:
    chained(tmp_path)
    listed = pcg("list", cwd=tmp_path).stdout
    assert "loads once up is built" in listed
    explain = pcg("explain", "recipes/a_down.toml", "recipes/up.toml", cwd=tmp_path, check=False)
    assert explain.returncode == 1 and "which `pcg build` makes first" in explain.stderr, explain.stderr
    pcg("build", "recipes", "-q", cwd=tmp_path)
    assert "up to date (builds after up)" in pcg("list", cwd=tmp_path).stdout


def test_a_recipe_loaded_after_the_pack_it_reads_still_tells_its_warnings(tmp_path: Path) -> None:
    chained(tmp_path)
    # A stage that no exporter reads is a warning (it runs for nothing).
    write_recipe(tmp_path, "a_down", DOWN.format(pack="up") + '\n[stage.spare]\nuse = "maze.backtracker"\n')
    proc = pcg("build", "recipes", "--strict", cwd=tmp_path, check=False)
    assert re.search(r"^warning: recipes/a_down.toml: .*spare", proc.stderr, re.M), proc.stderr
    assert proc.returncode == 1  # --strict: a warning found while building is an error
