"""`load.tmx` on maps shaped like Tiled's own examples and test maps (Tiled's files are not ours:
each test writes a small map of the same shape). And a recipe whose checks break unexpectedly:
one line for it, and the other recipes still build."""

from __future__ import annotations

import textwrap
from pathlib import Path

from conftest import SMALL_RECIPE, pcg, write_recipe


def recipe_reading(name: str, file: str, extra: str = "") -> str:
    return textwrap.dedent(f"""\
        [pack]
        name = "{name}"
        seed = 3
        maps = 1

        [stage.start]
        use = "load.tmx"
        file = "{file}"
        {extra}

        [stage.tmx]
        use = "export.tmx"
        input = "start"
        """)


BOOM_PLUGIN = '''\
"""Stages whose checks break as a recipe loads."""

from typing import ClassVar

import numpy as np
from pydantic import model_validator

from pipeline.level import Level, Symbol
from pipeline.registry import StageParams, stage


@stage("demo.boom", version=1)
class Boom(StageParams):
    """Breaks as its params are checked."""

    arity: ClassVar[tuple[int, int]] = (0, 0)

    @model_validator(mode="after")
    def _check(self):
        return {}["nothing"]

    def run(self, inputs, rng):
        return Level(tiles=np.zeros((3, 3), dtype=np.uint8), alphabet=(Symbol("B", "wall", "#000000"),))


@stage("demo.reads", version=1)
class Reads(StageParams):
    """Breaks as the stats it reads are asked for."""

    arity: ClassVar[tuple[int, int]] = (0, 0)

    def read_stats(self):
        return 1 / 0

    def run(self, inputs, rng):
        return Level(tiles=np.zeros((3, 3), dtype=np.uint8), alphabet=(Symbol("B", "wall", "#000000"),))
'''


def test_a_recipe_whose_checks_break_is_one_line_and_the_others_build(tmp_path: Path) -> None:
    # One such recipe stopped `pcg build recipes/` with a traceback before any pack was built,
    # and `pcg list` with it.
    (tmp_path / "recipes" / "stages").mkdir(parents=True)
    (tmp_path / "recipes" / "stages" / "boom.py").write_text(BOOM_PLUGIN)
    for name, kind in (("b_boom", "demo.boom"), ("c_reads", "demo.reads")):
        text = recipe_reading(name, "").replace('use = "load.tmx"\nfile = ""', f'use = "{kind}"')
        write_recipe(tmp_path, name, text.replace('maps = 1', 'maps = 1\nplugins = ["stages/boom.py"]'))
    write_recipe(tmp_path, "d_small", SMALL_RECIPE)
    built = pcg("build", "recipes", cwd=tmp_path, check=False)
    out = built.stdout + built.stderr
    assert built.returncode == 1 and "Traceback" not in out, out
    errors = [line for line in built.stderr.splitlines() if line.startswith("error:")]
    boom, reads = (BOOM_PLUGIN.splitlines().index(line) + 1 for line in ('        return {}["nothing"]', "        return 1 / 0"))
    assert errors == [
        f"error: recipes/b_boom.toml: stage.start: unexpected error while checking the stage: KeyError: 'nothing' (at stages/boom.py:{boom})",
        f"error: recipes/c_reads.toml: unexpected error while checking the recipe: ZeroDivisionError: division by zero (at stages/boom.py:{reads})",
    ], built.stderr
    assert (tmp_path / "exports" / "small" / "manifest.json").is_file(), out
    listed = pcg("list", "recipes", cwd=tmp_path, check=False)
    assert listed.returncode == 1 and "Traceback" not in listed.stdout + listed.stderr
    assert "recipes/d_small.toml" in listed.stdout
    assert [line for line in listed.stderr.splitlines() if line.startswith("error:")] == errors
