"""A first build says that it compiles kernels, instead of sitting silent for most of a minute."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import SMALL_RECIPE, write_recipe

COMPILING = "compiling kernels, first run only"


def test_a_build_with_an_empty_kernel_cache_says_it_compiles_and_the_next_does_not(tmp_path: Path) -> None:
    write_recipe(tmp_path, "small", SMALL_RECIPE.replace("maps = 6", "maps = 1"))
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "kernels"), "COLUMNS": "200", "NO_COLOR": "1"}

    def build(*args: str) -> str:
        proc = subprocess.run([sys.executable, "-m", "pipeline", "build", "recipes", "-j", "1", *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    first = build("--force")
    assert first.splitlines()[0].startswith(COMPILING), first
    assert COMPILING not in build("--force")  # the kernels are cached now
    assert COMPILING not in build()  # and a build with nothing to do never says it
