"""Inputs that would hang or swamp a build are refused up front, with one clear line each:
packs past the map limit, and paths that are not regular files (a FIFO blocks its reader forever)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from conftest import TILESETS, recipe_text
from pipeline.errors import RecipeError
from pipeline.fsio import NotRegularFile, read_regular
from pipeline.recipe.load import load_recipe
from pipeline.recipe.model import MAX_MAPS

# Short: a hang must fail its test in a minute, not stall the suite (conftest's pcg waits 10).
TIMEOUT = 60

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")


def run_pcg(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "PYTHONWARNINGS": "ignore"}
    return subprocess.run(
        [sys.executable, "-m", "pipeline", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=TIMEOUT
    )


def error_lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    assert "Traceback" not in proc.stderr, proc.stderr
    return [line for line in proc.stderr.splitlines() if line.strip()]


@pytest.fixture
def alarm() -> Iterator[None]:
    """Fail, rather than hang, an in-process read that blocks."""

    def timed_out(*_: object) -> None:
        raise TimeoutError("blocked reading a path that is not a regular file")

    old = signal.signal(signal.SIGALRM, timed_out)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


# -- pack.maps ------------------------------------------------------------------------------------


def test_pack_maps_has_a_documented_limit(tmp_path: Path) -> None:
    path = tmp_path / "huge.toml"
    path.write_text(recipe_text(maps=10_000_000))
    with pytest.raises(RecipeError) as info:
        load_recipe(path)
    assert info.value.problems == [
        f"{path}: pack.maps: at most 100,000 maps per pack, since every build plans and records each map in"
        " memory: split bigger packs into several recipes (got 10000000)"
    ]
    path.write_text(recipe_text(maps=MAX_MAPS))
    assert load_recipe(path).pack.maps == MAX_MAPS == 100_000


def test_a_pack_past_the_limit_is_one_error_line_through_the_cli(project: Path) -> None:
    (project / "recipes" / "huge.toml").write_text(recipe_text(name="huge", maps=10_000_000))
    for args in (["build", "recipes", "-j", "1", "-q"], ["explain", "recipes/huge.toml"]):
        proc = run_pcg(*args, cwd=project)
        assert proc.returncode == 1
        assert error_lines(proc) == [
            "error: recipes/huge.toml: pack.maps: at most 100,000 maps per pack, since every build plans and"
            " records each map in memory: split bigger packs into several recipes (got 10000000)"
        ]
    assert (project / "exports" / "small" / "manifest.json").is_file()  # the good recipe beside it built
    assert not (project / "exports" / "huge").exists()


# -- paths that are not regular files -------------------------------------------------------------


@needs_fifo
def test_read_regular_refuses_without_opening(tmp_path: Path, alarm: None) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFile, match=r"^it is a named pipe \(FIFO\), not a regular file$"):
        read_regular(fifo)
    with pytest.raises(NotRegularFile, match="a folder"):
        read_regular(tmp_path)
    with pytest.raises(NotRegularFile, match="a character device"):
        read_regular(Path(os.devnull))
    sock_path = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        with pytest.raises(NotRegularFile, match="a socket"):
            read_regular(sock_path)
    (tmp_path / "file").write_bytes(b"bytes")
    os.symlink(tmp_path / "file", tmp_path / "link")
    assert read_regular(tmp_path / "link") == b"bytes"


@needs_fifo
def test_read_regular_refuses_a_fifo_swapped_in_after_the_check(
    tmp_path: Path, alarm: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stat says regular file, then the path turns out to be a FIFO: open must not block."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    (tmp_path / "file").write_bytes(b"")
    regular = os.stat(tmp_path / "file")
    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda p, *a, **k: regular if Path(p) == fifo else real_stat(p, *a, **k))
    with pytest.raises(NotRegularFile, match="named pipe"):
        read_regular(fifo)


def test_crlf_recipes_read_as_before(tmp_path: Path) -> None:
    """The recipe's text (and so its sha256 in manifests) is what Path.read_text gave."""
    path = tmp_path / "crlf.toml"
    path.write_bytes(recipe_text().replace("\n", "\r\n").encode())
    assert load_recipe(path).text == path.read_text(encoding="utf-8")


MODEL = """<sequence values="BW"><one in="B" out="W" steps="3"/></sequence>\n"""


def stage_reader_recipes(project: Path) -> dict[str, str]:
    """Recipes whose stages read a FIFO: tileset file, tileset image, MarkovJunior model.
    Returns the error line each must get."""
    (project / "tilesets").mkdir()
    shutil.copy(TILESETS / "stone.toml", project / "tilesets" / "stone.toml")
    os.mkfifo(project / "tilesets" / "stone.png")  # the image that stone.toml names
    os.mkfifo(project / "tilesets" / "pipe.toml")
    os.mkfifo(project / "recipes" / "model.xml")
    tmx = '[stage.maze]\nuse = "maze.backtracker"\ncells = [4, 3]\n\n[stage.tmx]\nuse = "export.tmx"\ninput = "maze"\n'
    texts = {
        "tileset_fifo": tmx + 'tileset = "../tilesets/pipe.toml"\n',
        "image_fifo": tmx + 'tileset = "../tilesets/stone.toml"\n',
        "model_fifo": '[stage.gen]\nuse = "rewrite"\nprogram = "model.xml"\nsize = [8, 8]\n\n'
        '[stage.png]\nuse = "export.png"\ninput = "gen"\n',
    }
    for name, body in texts.items():
        (project / "recipes" / f"{name}.toml").write_text(f'[pack]\nname = "{name}"\nseed = 1\nmaps = 1\n\n{body}')
    fifo = "it is a named pipe (FIFO), not a regular file"
    return {
        "tileset_fifo": f"error: recipes/tileset_fifo.toml: stage.tmx.tileset: cannot read tilesets/pipe.toml ({fifo})",
        "image_fifo": f"error: recipes/image_fifo.toml: stage.tmx.tileset: tilesets/stone.toml: image: cannot read tilesets/stone.png as an image ({fifo})",
        "model_fifo": f"error: recipes/model_fifo.toml: stage.gen.program: cannot read recipes/model.xml ({fifo})",
    }


@needs_fifo
def test_fifos_in_a_folder_of_recipes_are_errors_and_the_rest_builds(project: Path) -> None:
    os.mkfifo(project / "recipes" / "pipe.toml")
    expected = stage_reader_recipes(project)

    proc = run_pcg("build", "recipes", "-j", "1", "-q", cwd=project)

    assert proc.returncode == 1
    assert sorted(error_lines(proc)) == sorted(
        ["error: recipes/pipe.toml: cannot read recipe (it is a named pipe (FIFO), not a regular file)", *expected.values()]
    )
    assert (project / "exports" / "small" / "manifest.json").is_file()
    assert stat.S_ISFIFO(os.stat(project / "recipes" / "pipe.toml").st_mode)  # refused, never replaced


@needs_fifo
def test_a_fifo_named_directly(project: Path) -> None:
    os.mkfifo(project / "recipes" / "pipe.toml")
    for command in ("build", "explain"):
        proc = run_pcg(command, "recipes/pipe.toml", cwd=project)
        assert proc.returncode == 1
        assert error_lines(proc) == ["error: recipes/pipe.toml: cannot read recipe (it is a named pipe (FIFO), not a regular file)"]
    assert not (project / "exports").exists()
