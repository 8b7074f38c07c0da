"""One build policy: `pcg build` and `pcg watch` refuse the same things, through the same code.

Each case runs through both commands: a recipe taking over a pack folder another recipe built,
two recipes with one pack name, and a pack folder that is a symbolic link.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest

from conftest import pcg, recipe_text, tree_digests, write_recipe
from test_watch import Watch


def run_build(project: Path) -> str:
    proc = pcg("build", "recipes", "-j", "1", cwd=project, check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


def run_watch(project: Path) -> str:
    watch = Watch(project)
    try:
        watch.wait_for(r"watching recipes")
    finally:
        assert watch.stop() == 0
    return "\n".join(watch.seen)


RUNNERS: dict[str, Callable[[Path], str]] = {"build": run_build, "watch": run_watch}


def one_line(output: str, *parts: str) -> None:
    """Some line of the output holds all `parts`, and there is no traceback."""
    assert "Traceback" not in output, output
    assert any(all(p in line for p in parts) for line in output.splitlines()), output


@pytest.mark.parametrize("command", RUNNERS)
def test_a_recipe_may_not_take_over_a_pack_another_recipe_built(tmp_path: Path, command: str) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "small.toml").write_text(recipe_text(seed=5))
    pcg("build", "elsewhere/small.toml", "-q", cwd=tmp_path)
    before = tree_digests(tmp_path / "exports" / "small")
    write_recipe(tmp_path, "small", recipe_text())
    output = RUNNERS[command](tmp_path)
    one_line(output, "recipes/small.toml: pack.name: exports/small was built from elsewhere/small.toml", "--force")
    assert tree_digests(tmp_path / "exports" / "small") == before


@pytest.mark.parametrize("command", RUNNERS)
def test_two_recipes_may_not_share_a_pack_name(tmp_path: Path, command: str) -> None:
    write_recipe(tmp_path, "a", recipe_text(name="shared", seed=1))
    write_recipe(tmp_path, "b", recipe_text(name="shared", seed=2))
    output = RUNNERS[command](tmp_path)
    one_line(output, "recipes/b.toml: pack.name: 'shared' is also the pack of recipes/a.toml")
    manifest = json.loads((tmp_path / "exports" / "shared" / "manifest.json").read_text())
    assert manifest["recipe"]["path"] == "recipes/a.toml" and manifest["pack"]["seed"] == 1


@pytest.mark.parametrize("command", RUNNERS)
def test_a_pack_folder_that_is_a_symlink_is_never_written_through(tmp_path: Path, command: str) -> None:
    write_recipe(tmp_path, "small", recipe_text())
    (tmp_path / "exports").mkdir()
    (tmp_path / "precious").mkdir()
    (tmp_path / "exports" / "small").symlink_to(tmp_path / "precious")
    output = RUNNERS[command](tmp_path)
    one_line(output, "recipes/small.toml: pack.name: exports/small is a symbolic link")
    assert not list((tmp_path / "precious").iterdir())


def test_watch_keeps_refusing_a_duplicate_pack_when_it_is_saved_again(tmp_path: Path) -> None:
    write_recipe(tmp_path, "a", recipe_text(name="shared", seed=1))
    write_recipe(tmp_path, "b", recipe_text(name="shared", seed=2))
    watch = Watch(tmp_path)
    try:
        watch.wait_for(r"watching recipes")
        before = tree_digests(tmp_path / "exports" / "shared")
        write_recipe(tmp_path, "b", recipe_text(name="shared", seed=3, maps=4))
        watch.wait_for(r"error: recipes/b.toml: pack.name: 'shared' is also the pack of recipes/a.toml")
        # Renamed, it builds a pack of its own.
        write_recipe(tmp_path, "b", recipe_text(name="own", seed=3))
        watch.wait_for(r"own: rebuilt 6 of 6 maps")
    finally:
        assert watch.stop() == 0
    assert tree_digests(tmp_path / "exports" / "shared") == before


def test_pack_names_that_differ_only_in_case_are_one_folder_on_windows_and_macos(tmp_path: Path) -> None:
    from pipeline.recipe.load import load_recipe
    from pipeline.building.workspace import claim_packs

    write_recipe(tmp_path, "a", recipe_text(name="Caves", seed=1))
    write_recipe(tmp_path, "b", recipe_text(name="caves", seed=2))
    write_recipe(tmp_path, "c", recipe_text(name="mazes", seed=3))
    recipes = [load_recipe(tmp_path / "recipes" / f"{n}.toml") for n in "abc"]
    kept, problems = claim_packs(recipes)
    assert [r.pack.name for r in kept] == ["Caves", "mazes"]
    assert problems == [
        f"{recipes[1].path}: pack.name: 'caves' and the pack 'Caves' of {recipes[0].path} differ only in case,"
        " so they share a folder on Windows and macOS; each recipe needs its own"
    ]


def test_a_pack_whose_name_differs_only_in_case_from_a_built_one_is_refused(tmp_path: Path) -> None:
    (tmp_path / "first").mkdir()
    (tmp_path / "first" / "maps.toml").write_text(recipe_text(name="Maps", seed=1))
    pcg("build", "first/maps.toml", "-q", cwd=tmp_path)
    before = tree_digests(tmp_path / "exports" / "Maps")
    write_recipe(tmp_path, "maps", recipe_text(name="maps", seed=2))
    proc = pcg("build", "recipes", cwd=tmp_path, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    one_line(proc.stdout + proc.stderr, "recipes/maps.toml: pack.name: exports/Maps is another pack whose name differs only in case")
    assert not (tmp_path / "exports" / "maps").exists() and tree_digests(tmp_path / "exports" / "Maps") == before
