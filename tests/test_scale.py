"""Scale-out and safety: a Dask LocalCluster builds the same bytes as the local pool, and a build
killed with SIGKILL leaves nothing half-written under exports/."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PIL import Image

from conftest import pcg, recipe_text, tree_digests


def test_a_dask_local_cluster_builds_the_same_bytes_as_the_process_pool(project: Path, tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    (project / "recipes" / "small.toml").write_text(recipe_text(maps=8))
    pcg("build", "recipes", "-q", "-j", "2", cwd=project)
    local = tree_digests(project / "exports" / "small")
    for mode in ("files", "bytes"):
        other = tmp_path / mode
        (other / "recipes").mkdir(parents=True)
        (other / "recipes" / "small.toml").write_text(recipe_text(maps=8))
        out = pcg("build", "recipes", "--dask-local", "2", "--dask-results", mode, cwd=other).stdout
        assert "built 8/8 maps" in out
        assert tree_digests(other / "exports" / "small") == local  # manifest and contact sheet too
        assert not list((other / ".pcg-cache" / "tmp").glob("*"))


def test_dask_that_is_not_reachable_is_one_clear_error(project: Path) -> None:
    pytest.importorskip("distributed")
    proc = pcg("build", "recipes", "--scheduler", "tcp://127.0.0.1:9", cwd=project, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "--scheduler tcp://127.0.0.1:9: cannot reach the Dask scheduler" in proc.stderr


@pytest.mark.parametrize(
    ("address", "message"),
    [
        ("", "--scheduler: empty (an unset variable?)"),
        ("127.0.0.1:8786x", "--scheduler 127.0.0.1:8786x: the port '8786x' is not a number"),
        ("http://127.0.0.1:8786", "--scheduler http://127.0.0.1:8786: unknown scheme 'http'"),
        ("tcp://127.0.0.1:99999", "--scheduler tcp://127.0.0.1:99999: the port '99999' is not a number from 0 to 65535"),
    ],
)
def test_a_scheduler_address_dask_cannot_read_is_one_clear_error(project: Path, address: str, message: str) -> None:
    # Before, Dask's own ValueError came out as a traceback, and an empty one built locally.
    proc = pcg("build", "recipes", "--scheduler", address, cwd=project, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.startswith(f"error: {message}"), proc.stderr


def test_a_build_killed_midway_leaves_no_partial_files_and_the_next_completes(project: Path) -> None:
    (project / "recipes" / "small.toml").write_text(recipe_text(maps=400, cells=(30, 30)))
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "build", "recipes", "-q", "-j", "2"],
        cwd=project, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    pack = project / "exports" / "small"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(pack.glob("map_*.tmx"))) < 20:
        time.sleep(0.02)
    assert proc.poll() is None, "the build finished before it could be killed: give it more maps"
    os.killpg(proc.pid, signal.SIGKILL)  # the client and its workers, mid-write
    proc.wait()

    written = [p for p in (project / "exports").rglob("*") if p.is_file()]
    assert written and not (pack / "manifest.json").exists()
    assert not [p for p in written if p.name.endswith(".tmp")]
    for path in written:  # each file whole: it parses
        if path.suffix in (".tmx", ".tsx"):
            ET.parse(path)
        elif path.suffix == ".png":
            with Image.open(path) as image:
                image.load()
    pcg("build", "recipes", "-q", cwd=project)
    assert len(list(pack.glob("map_*.tmx"))) == 400
    assert pcg("verify", "exports/small", cwd=project).returncode == 0
    assert not list((project / ".pcg-cache" / "tmp").glob("*.tmp"))  # what the killed build left is gone
