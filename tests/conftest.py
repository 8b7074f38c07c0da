from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import ndimage

from pipeline.stages.maze.block import open_sides

ROOT = Path(__file__).resolve().parents[1]

# The tests run hundreds of `pcg` processes. With bytecode caches off (some CI images and
# containers set PYTHONDONTWRITEBYTECODE) each one compiles the package from source again, about
# 0.1 s a process; a user's Python writes the caches, and so do the tests (the workers and the
# processes they start inherit this).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False
RECIPES = ROOT / "recipes"
TILESETS = ROOT / "tilesets"
TILED = shutil.which("tiled")
TMXRASTERIZER = shutil.which("tmxrasterizer")

needs_tiled = pytest.mark.skipif(TILED is None, reason="the real Tiled CLI is not installed (apt-get install tiled)")

# `make test` runs pytest-xdist with `-n auto`: a worker per core this process may use (xdist's
# own count is the machine's, which a container's CPU limit does not lower), at most 4, since
# the builds the tests run start a process per core of their own. PYTEST_XDIST_AUTO_NUM_WORKERS
# still decides when set.
MAX_TEST_WORKERS = 4


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(cores, MAX_TEST_WORKERS))


def recipe_text(name: str = "small", seed: int = 42, maps: int = 6, cells: tuple[int, int] = (9, 7), scale: int = 2) -> str:
    """A valid recipe: a backtracker maze exported as TMX (8-pixel tiles) and a preview PNG."""
    return f"""\
[pack]
name = "{name}"
seed = {seed}
maps = {maps}

[stage.maze]
use = "maze.backtracker"
cells = [{cells[0]}, {cells[1]}]

[stage.tmx]
use = "export.tmx"
input = "maze"
tile_size = 8

[stage.preview]
use = "export.png"
input = "maze"
scale = {scale}
"""


# The gallery's tests (pcg serve): three tiny mazes with spawn, exit and a distance layer.
GALLERY_RECIPE = """\
[pack]
name = "tiny"
seed = 5
maps = 3

[stage.maze]
use = "maze.backtracker"
cells = [6, 5]

[stage.placed]
use = "place.spawn_exit"
input = "maze"

[stage.dist]
use = "regions.distance"
input = "placed"
from_object = "spawn"

[stage.tmx]
use = "export.tmx"
input = "dist"
"""


SMALL_RECIPE = recipe_text()


def pcg(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a fresh process, as a user would."""
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "pipeline", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=600
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"pcg {' '.join(args)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def child_pids(pid: int) -> list[int]:
    """The processes `pid` started (a build's or server's workers), from /proc (Linux)."""
    return [int(c) for task in Path(f"/proc/{pid}/task").iterdir() for c in (task / "children").read_text().split()]


def tree_digests(folder: Path) -> dict[str, str]:
    """sha256 of every file under `folder`, by relative path."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A fresh project folder with one small recipe in recipes/."""
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "small.toml").write_text(SMALL_RECIPE)
    return tmp_path


@pytest.fixture(scope="session")
def examples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every recipe of recipes/ (with the tilesets they use), built once into a fresh project."""
    root = tmp_path_factory.mktemp("examples")
    shutil.copytree(RECIPES, root / "recipes")
    shutil.copytree(TILESETS, root / "tilesets")
    pcg("build", "recipes", "-q", cwd=root)
    return root


def tiled_env() -> dict[str, str]:
    return {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_RUNTIME_DIR": os.environ.get("XDG_RUNTIME_DIR", "/tmp")}


def assert_perfect_maze(tiles: np.ndarray, w: int, h: int) -> None:
    assert tiles.shape == (2 * h + 1, 2 * w + 1)
    assert tiles.dtype == np.uint8
    # Every cell is floor, every pillar (even, even) and the border are wall.
    assert (tiles[1::2, 1::2] == 1).all()
    assert (tiles[0::2, 0::2] == 0).all()
    assert (tiles[0, :] == 0).all() and (tiles[-1, :] == 0).all()
    assert (tiles[:, 0] == 0).all() and (tiles[:, -1] == 0).all()
    cells = w * h
    passages = int(np.count_nonzero(tiles == 1)) - cells
    # A connected graph on `cells` nodes with `cells - 1` edges is a tree: no loops.
    assert passages == cells - 1
    _, components = ndimage.label(tiles == 1)
    assert components == 1
    if cells > 1:
        assert (open_sides(tiles) >= 1).all()



def assert_all_reachable(tiles: np.ndarray) -> None:
    """Every open tile of a block-form maze is in one connected region."""
    _, components = ndimage.label(tiles != 0)
    assert components == 1


def dead_ends(walk: np.ndarray) -> int:
    """Walkable tiles with at most one walkable 4-neighbour."""
    padded = np.pad(walk, 1)
    around = padded[:-2, 1:-1].astype(int) + padded[2:, 1:-1] + padded[1:-1, :-2] + padded[1:-1, 2:]
    return int((walk & (around <= 1)).sum())


def docs_toml(page: str, after: str) -> str:
    """The first ```toml block of docs/PAGE after the text `after` (the docs' examples are run)."""
    text = (Path(__file__).resolve().parents[1] / "docs" / page).read_text()
    start = text.index("```toml", text.index(after)) + len("```toml")
    return text[start : text.index("```", start)]


def write_recipe(project: Path, name: str, text: str) -> str:
    """Write recipes/NAME.toml under `project`; returns its path relative to it."""
    (project / "recipes").mkdir(exist_ok=True)
    (project / "recipes" / f"{name}.toml").write_text(text)
    return f"recipes/{name}.toml"
