"""recipe.schema.json is current, and editors' validators (jsonschema, real Taplo) accept our recipes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import tomli

from conftest import RECIPES, ROOT
from pipeline.recipe.load import plugin_kinds_of
from pipeline.recipe.schema import recipe_schema

SCHEMA = ROOT / "recipe.schema.json"
# The taplo wheel puts its binary beside the interpreter, which need not be on PATH under `make test`.
TAPLO = shutil.which("taplo", path=str(Path(sys.executable).parent)) or shutil.which("taplo")


def project_schema() -> dict:
    """The schema `make schema` writes: every stage kind, the example plugin's too."""
    return recipe_schema(plugin_kinds_of([RECIPES]))


def test_committed_schema_is_current() -> None:
    assert json.loads(SCHEMA.read_text()) == project_schema(), "run `make schema` to refresh recipe.schema.json"


def test_schema_accepts_the_examples_and_rejects_mistakes() -> None:
    validator = jsonschema.Draft7Validator(project_schema())
    for path in sorted(RECIPES.glob("*.toml")):
        assert not list(validator.iter_errors(tomli.loads(path.read_text()))), path
    bad = tomli.loads(
        '[pack]\nname = "x"\nseed = 1\n[stage.m]\nuse = "maze.backtracker"\ncels = [1, 2]\n'
        '[stage.t]\nuse = "export.tmx"\ninput = "m"\ntile_size = 0\n'
    )
    messages = sorted(e.message for e in validator.iter_errors(bad))
    assert any("'cels' was unexpected" in m for m in messages)
    assert any("0 is less than or equal to the minimum of 0" in m for m in messages)


@pytest.mark.skipif(TAPLO is None, reason="taplo is not installed (it comes with the test extras)")
def test_real_taplo_validates_recipes_with_the_repository_config(tmp_path: Path) -> None:
    shutil.copy(ROOT / ".taplo.toml", tmp_path)
    shutil.copy(SCHEMA, tmp_path)
    shutil.copytree(RECIPES, tmp_path / "recipes")
    ok = subprocess.run([TAPLO, "check", "recipes/labyrinths.toml"], cwd=tmp_path, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    (tmp_path / "recipes" / "bad.toml").write_text('[pack]\nname = "x"\nseed = 1\nmpas = 3\n')
    bad = subprocess.run([TAPLO, "check", "recipes/bad.toml"], cwd=tmp_path, capture_output=True, text=True)
    assert bad.returncode == 1
    assert "'mpas' was unexpected" in bad.stderr
