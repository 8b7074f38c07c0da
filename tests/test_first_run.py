"""A first build says that it compiles kernels, instead of sitting silent for most of a minute."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import RECIPES, ROOT, SMALL_RECIPE, write_recipe

PLAIN_MAP = """\
[pack]
name = "plain"
seed = 1
maps = 1

[stage.start]
use = "load.tmx"
file = "maps/start.tmx"

[stage.tmx]
use = "export.tmx"
input = "start"
tile_size = 8
"""

COMPILING = "compiling kernels, first run only"
MORE = "compiling kernels of stages or rule nodes not run before"


def test_a_first_build_that_compiles_nothing_says_nothing(tmp_path: Path) -> None:
    # A hand-made map exported: no stage with a kernel. Said before the build, the notice came
    # on every such build (nothing ever compiled, so every build was a "first run").
    shutil.copytree(RECIPES / "maps", tmp_path / "recipes" / "maps")
    write_recipe(tmp_path, "plain", PLAIN_MAP)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "kernels"), "COLUMNS": "200", "NO_COLOR": "1"}
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-m", "pipeline", "build", "recipes", "-j", "1", "--force"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert "compiling" not in proc.stdout, proc.stdout


def test_a_first_build_says_it_compiles_a_later_one_not_and_another_checkout_says_so_again(tmp_path: Path) -> None:
    # Checkouts of one version share its cache folder, lock files included, but each compiles
    # its own kernels: with one lock folder for all, the second checkout compiled a stage kind
    # new to it (but not to the first) in silence.
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "kernels"), "COLUMNS": "200", "NO_COLOR": "1"}
    small = SMALL_RECIPE.replace("maps = 6", "maps = 1")
    wilson = small.replace('"maze.backtracker"', '"maze.wilson"')

    def build(project: Path, checkout: str, *args: str) -> str:
        proc = subprocess.run(
            [sys.executable, "-m", "pipeline", "build", "recipes", "-j", "1", *args], cwd=project, capture_output=True, text=True,
            timeout=300, env={**env, "PYTHONPATH": str(tmp_path / checkout)},
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    for checkout in ("one", "two"):
        shutil.copytree(ROOT / "pipeline", tmp_path / checkout / "pipeline", ignore=shutil.ignore_patterns("__pycache__"))
        project = tmp_path / checkout / "project"
        project.mkdir()
        write_recipe(project, "small", small)
        first = build(project, checkout)
        assert first.splitlines()[0].startswith(COMPILING), first
        if checkout == "one":
            assert COMPILING not in build(project, checkout, "--force")  # the kernels are cached now
            assert COMPILING not in build(project, checkout)  # and a build with nothing to do never says it
        # A generator no build of this checkout has run before compiles its kernel: said too, once.
        write_recipe(project, "small", wilson)
        later = build(project, checkout)
        assert later.splitlines()[0].startswith(MORE) and COMPILING not in later, later
        if checkout == "one":
            assert MORE not in build(project, checkout, "--force")


def test_a_compile_starting_during_a_build_is_noticed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline import jit

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    jit._cache_dir.cache_clear()
    try:
        locks = jit.lock_dir()
        locks.mkdir(parents=True)
        (locks / "pipeline.grid.bfs.bfs.lock").touch()
        said: list[str] = []
        with jit.notice_compiles(lambda: said.append("compiling"), interval=0.01):
            time.sleep(0.1)  # kernels loaded from the cache take their (existing) locks
        assert said == []
        with jit.notice_compiles(lambda: said.append("compiling"), interval=0.01):
            (locks / "pipeline.stages.maze.wilson.carve_wilson.lock").touch()
            (locks / "pipeline.stages.maze.stats._measure.lock").touch()
            time.sleep(0.1)
        assert said == ["compiling"]
    finally:
        jit._cache_dir.cache_clear()


def test_numba_names_a_source_folders_kernel_folder_as_we_expect(tmp_path: Path) -> None:
    from numba.core.caching import _CacheLocator

    from pipeline import jit

    source = Path(jit.__file__).resolve().parent / "grid"
    assert jit._numba_subpath(source) == _CacheLocator.get_suitable_cache_subpath(str(source / "bfs.py"))


def test_another_checkout_of_the_same_version_is_a_first_run_until_it_compiled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Checkouts of one version share a version folder, but numba compiles into one per source path.
    from pipeline import jit

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    jit._cache_dir.cache_clear()
    try:
        folder = jit._cache_dir()
        (folder / jit.LOCKS).mkdir(parents=True)
        (folder / jit._numba_subpath(tmp_path / "elsewhere" / "grid")).mkdir()
        assert not jit.kernels_cached()
        (folder / jit._numba_subpath(Path(jit.__file__).resolve().parent / "grid")).mkdir()
        assert jit.kernels_cached()
    finally:
        jit._cache_dir.cache_clear()


def test_kernel_folders_of_versions_unused_for_two_weeks_are_removed_and_no_others(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline import jit

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    jit._cache_dir.cache_clear()
    try:
        current = jit._cache_dir()
        old, recent, other = tmp_path / "numba-0123456789abcdef", tmp_path / "numba-fedcba9876543210", tmp_path / "bench-baseline"
        for folder in (current, old, recent, other):
            (folder / "grid_x").mkdir(parents=True)
        weeks_ago = time.time() - (jit.UNUSED_DAYS + 1) * 86400
        for folder in (current, old, other):
            os.utime(folder, (weeks_ago, weeks_ago))
        assert jit.remove_unused_kernels() == [old]
        assert current.is_dir() and recent.is_dir() and other.is_dir() and not old.exists()
    finally:
        jit._cache_dir.cache_clear()
