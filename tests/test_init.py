"""`pcg init`: a new project from the installed package, ready for `make maps`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import pytmx

from conftest import ROOT, pcg


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """pcg-pipeline installed from its wheel into a folder of its own (dependencies from this
    environment): the environment that runs it from there, never from the checkout."""
    root = tmp_path_factory.mktemp("wheel")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    # From a copy without the checkout's build/: setuptools reuses what an earlier wheel left
    # there, files since deleted included, and the wheel would ship them.
    source = root / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns("build", ".venv", ".git", "exports", ".pcg-cache", "*.egg-info", "__pycache__"))
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(root / "dist"), str(source)], check=True, timeout=300, cwd=root)
    wheel = next((root / "dist").glob("pcg_pipeline-*.whl"))
    subprocess.run([*pip, "install", "--no-deps", "--target", str(root / "site"), str(wheel)], check=True, timeout=300)
    env = {**os.environ, "PYTHONPATH": str(root / "site"), "COLUMNS": "200", "NO_COLOR": "1"}
    where = subprocess.run([sys.executable, "-c", "import pipeline; print(pipeline.__file__)"], env=env, cwd=root, capture_output=True, text=True, check=True)
    assert where.stdout.strip().startswith(str(root / "site")), where.stdout
    return env


def test_init_from_the_installed_package_makes_a_project_that_make_maps_builds(installed: dict[str, str], tmp_path: Path) -> None:
    game = tmp_path / "mygame"
    (game / "levels").mkdir(parents=True)
    run = subprocess.run([sys.executable, "-m", "pipeline", "init", "levels"], cwd=game, env=installed, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    project = game / "levels"
    assert "Next: cd levels && make maps" in run.stdout
    assert sorted(p.name for p in (project / "recipes").iterdir()) == ["starter.toml"]
    assert (project / "tilesets" / "stone.toml").is_file() and (project / "tilesets" / "stone.png").is_file()
    schema = json.loads((project / "recipe.schema.json").read_text())
    assert "maze.wilson" in schema["properties"]["stage"]["additionalProperties"]["properties"]["use"]["enum"]
    assert 'path = "./recipe.schema.json"' in (project / ".taplo.toml").read_text()
    make = shutil.which("make")
    if make is None:
        pytest.skip("no make on this machine")
    built = subprocess.run(
        [make, "maps", f"PCG={sys.executable} -m pipeline"], cwd=project, env=installed, capture_output=True, text=True, timeout=600
    )
    assert built.returncode == 0, built.stdout + built.stderr
    assert "starter: built 8/8 maps" in built.stdout
    tmx = pytmx.TiledMap(str(project / "exports" / "starter" / "map_000.tmx"))
    assert {o.type for o in tmx.objects} >= {"spawn", "exit", "chest"}


def test_init_with_examples_brings_every_example_and_what_it_reads(installed: dict[str, str], tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "pipeline", "init", "proj", "--examples"], cwd=tmp_path, env=installed, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    project = tmp_path / "proj"
    shipped = sorted(p.relative_to(ROOT / "recipes").as_posix() for p in (ROOT / "recipes").rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    copied = sorted(p.relative_to(project / "recipes").as_posix() for p in (project / "recipes").rglob("*") if p.is_file())
    assert copied == sorted(shipped + ["starter.toml"])
    # Every recipe loads there (the files each reads came along): `pcg list` validates them all.
    listed = subprocess.run([sys.executable, "-m", "pipeline", "list", "recipes"], cwd=project, env=installed, capture_output=True, text=True, timeout=300)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    schema = json.loads((project / "recipe.schema.json").read_text())
    assert "demo.torches" in schema["properties"]["stage"]["additionalProperties"]["properties"]["use"]["enum"]


def test_init_never_overwrites_a_file(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("all:\n\techo mine\n")
    proc = pcg("init", ".", cwd=tmp_path, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "already has Makefile; pcg init writes only into a folder without them (nothing written)" in " ".join(proc.stderr.split())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Makefile"]
    assert (tmp_path / "Makefile").read_text() == "all:\n\techo mine\n"
