"""The manifest's promise: at every instant, every file the manifest on disk names has the sha256
it gives; and after any stop or failure the next build exits 0 without blaming the user, `pcg
verify` passes, and the pack is file for file what a clean build makes.

Each fault is real: SIGKILL or SIGINT to the build's process group the moment a given map file
lands, a full tmpfs, a folder of the pack mounted read-only. Whatever instant the stop comes at,
the assertions hold: none of them needs the stop to fall at one place rather than another.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from conftest import pcg, tree_digests, write_recipe
from test_faults import no_traceback, remount, start_build, tmpfs

PACK = Path("exports") / "k"


def chest_recipe(seed: int, maps: int, cells: int = 30) -> str:
    """The pack the issue measured: a maze, its regions, a TMX and a preview at scale 2."""
    return f"""\
[pack]
name = "k"
seed = {seed}
maps = {maps}

[stage.maze]
use = "maze.backtracker"
cells = [{cells}, {cells}]

[stage.regions]
use = "regions.label"
input = "maze"

[stage.tmx]
use = "export.tmx"
input = "regions"

[stage.png]
use = "export.png"
input = "regions"
scale = 2
"""


def clean_pack(tmp_path: Path, text: str, *args: str) -> dict[str, str]:
    other = tmp_path / "clean"
    other.mkdir(parents=True, exist_ok=True)
    write_recipe(other, "k", text)
    pcg("build", "recipes", "-q", *args, cwd=other)
    return tree_digests(other / PACK)


def untrue(pack: Path) -> list[str]:
    """The files the manifest on disk names that are not on disk with the sha256 it gives."""
    try:
        manifest = json.loads((pack / "manifest.json").read_text())
    except FileNotFoundError:
        return []
    digests = tree_digests(pack)
    named = [(rel, sha) for m in manifest["maps"] for rel, sha in m["files"].items()]
    named += list(manifest.get("pack_files", {}).items())
    if "contact_sheet" in manifest:
        named.append(("contact_sheet.png", manifest["contact_sheet"]))
    return sorted({rel for rel, sha in named if digests.get(rel) != sha})


def stop_when_lands(proc: subprocess.Popen[str], target: Path, since: float, how: signal.Signals) -> None:
    """Send `how` to the build's process group as soon as `target` is replaced (modified at or
    after `since`); the build must still be running then."""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        with contextlib.suppress(FileNotFoundError):
            if target.stat().st_mtime >= since:
                break
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.001)
    else:
        raise AssertionError(f"{target} never landed")
    assert proc.poll() is None, "the build ended before the stop: give it more maps"
    os.killpg(proc.pid, how)
    proc.communicate(timeout=120)


def after_a_stop_the_next_build_is_clean(project: Path, tmp_path: Path, text: str, *args: str) -> None:
    write_recipe(project, "k", text)
    proc = pcg("build", "recipes", "-j", "2", *args, cwd=project)
    no_traceback(proc)
    assert "edited since" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert pcg("verify", str(PACK), cwd=project).returncode == 0
    assert tree_digests(project / PACK) == clean_pack(tmp_path, text, *args)


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_a_rebuild_stopped_as_a_map_lands_leaves_a_true_manifest_and_the_next_build_a_clean_pack(
    tmp_path: Path, how: signal.Signals
) -> None:
    project = tmp_path / "p"
    project.mkdir()
    write_recipe(project, "k", chest_recipe(seed=1, maps=120))
    pcg("build", "recipes", "-q", "-j", "2", cwd=project)
    write_recipe(project, "k", chest_recipe(seed=4242, maps=120))
    since = time.time() - 0.01  # file times are coarser than the clock
    time.sleep(0.05)
    stop_when_lands(start_build(project, "-q"), project / PACK / "map_012.tmx", since, how)
    assert untrue(project / PACK) == []
    assert "an earlier build stopped before it finished the map" in pcg("explain", "recipes/k.toml", cwd=project).stdout
    # The pack shrinks meanwhile: what the stopped build wrote for maps 10..119 is nobody's now.
    after_a_stop_the_next_build_is_clean(project, tmp_path, chest_recipe(seed=4242, maps=10))


def test_the_manifest_on_disk_is_true_throughout_a_rebuild(tmp_path: Path) -> None:
    """Sampled while a -j 2 rebuild replaces every map: each manifest read names only files that,
    read after it, have its sha256 (what the manifest names is never replaced during a build)."""
    project = tmp_path / "p"
    project.mkdir()
    write_recipe(project, "k", chest_recipe(seed=1, maps=60, cells=20))
    pcg("build", "recipes", "-q", "-j", "2", cwd=project)
    write_recipe(project, "k", chest_recipe(seed=2, maps=60, cells=20))
    found: list[list[str]] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            with contextlib.suppress(json.JSONDecodeError):  # never: it is replaced atomically
                wrong = untrue(project / PACK)
                if wrong:
                    found.append(wrong)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        pcg("build", "recipes", "-q", "-j", "2", cwd=project)
    finally:
        stop.set()
        sampler.join()
    assert found == []


def test_a_rebuild_that_fills_the_disk_keeps_the_manifest_true_and_the_next_build_repairs(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    out = tmp_path / "out"
    with tmpfs(out, "2m"):
        write_recipe(project, "k", chest_recipe(seed=1, maps=4, cells=10))
        pcg("build", "recipes", "-q", "--out", str(out), cwd=project)
        big = chest_recipe(seed=2, maps=60, cells=40)
        write_recipe(project, "k", big)
        proc = pcg("build", "recipes", "-j", "2", "--out", str(out), cwd=project, check=False)
        assert proc.returncode == 1 and "the disk is full" in proc.stderr, proc.stderr
        no_traceback(proc)
        assert untrue(out / "k") == []
        verify = pcg("verify", str(out / "k"), cwd=project, check=False)
        no_traceback(verify)
        assert "modified on disk since the build" not in verify.stdout + verify.stderr, verify.stderr
        remount(out, "size=64m")
        proc = pcg("build", "recipes", "-j", "2", "--out", str(out), cwd=project)
        assert "edited since" not in proc.stdout + proc.stderr
        assert pcg("verify", str(out / "k"), cwd=project).returncode == 0
        built, clean = tree_digests(out / "k"), clean_pack(tmp_path, big)
        # The manifest names the recipe relative to the exports' parent, which differs here.
        assert built.pop("manifest.json") and clean.pop("manifest.json")
        assert built == clean


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """`folder` read-only for everyone, root too (a bind mount remounted ro): chmod stops no root."""
    folder.mkdir(parents=True, exist_ok=True)
    if subprocess.run(["mount", "--bind", str(folder), str(folder)], capture_output=True).returncode != 0:
        pytest.skip("cannot bind-mount here")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], check=True)
        yield
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_a_rebuild_stopped_by_a_read_only_folder_keeps_the_manifest_true(tmp_path: Path) -> None:
    """The TMX maps land, their colour maps cannot: the build stops half way through a map."""
    project = tmp_path / "p"
    project.mkdir()
    write_recipe(project, "k", chest_recipe(seed=1, maps=20, cells=10))
    pcg("build", "recipes", "-q", "-j", "2", cwd=project)
    write_recipe(project, "k", chest_recipe(seed=3, maps=20, cells=10))
    with read_only(project / PACK / "colour_maps"):
        proc = pcg("build", "recipes", "-j", "2", cwd=project, check=False)
        assert proc.returncode == 1 and re.search(r"exports/k/\S+: the file system is read-only", proc.stderr), proc.stderr
        no_traceback(proc)
        assert untrue(project / PACK) == []
    after_a_stop_the_next_build_is_clean(project, tmp_path, chest_recipe(seed=3, maps=20, cells=10))


def test_deleting_the_cache_during_a_build_says_what_happened(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    write_recipe(project, "k", chest_recipe(seed=1, maps=200, cells=20))
    proc = start_build(project)
    deadline = time.monotonic() + 240
    while not list((project / PACK).glob("map_00*.tmx")) and time.monotonic() < deadline:
        time.sleep(0.005)
    shutil.rmtree(project / ".pcg-cache", ignore_errors=True)
    out, err = proc.communicate(timeout=300)
    if proc.returncode == 0:
        pytest.skip("the build had finished its writes before the cache went")
    assert "Traceback" not in out + err
    assert ".pcg-cache: deleted while this build was writing the pack" in err, err
    assert "journal" not in err.split("(")[0]  # no internal file named first
    assert untrue(project / PACK) == []
    after_a_stop_the_next_build_is_clean(project, tmp_path, chest_recipe(seed=1, maps=200, cells=20))


class Stop(BaseException):
    """A stop at a chosen instant (as Ctrl+C is), raised in the build's own process."""


def stop_after_first(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """The build stops right after its first call of `pipeline.building.builder.<name>` returns."""
    import pipeline.building.builder

    real = getattr(pipeline.building.builder, name)

    def once(*args, **kwargs):  # type: ignore[no-untyped-def]
        real(*args, **kwargs)
        raise Stop

    monkeypatch.setattr(pipeline.building.builder, name, once)


@pytest.mark.parametrize("change", ["shrink", "shrink and reseed"])
def test_a_build_stopped_just_after_its_manifest_written_ahead_leaves_nothing_for_good(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    """Stopped right after the manifest stopped naming the maps the pack no longer has (before
    their files went): the next build still removes them, since the journal knew them."""
    import pipeline

    project = tmp_path / "p"
    project.mkdir()
    monkeypatch.chdir(project)
    write_recipe(project, "k", chest_recipe(seed=1, maps=4, cells=8))
    assert pipeline.build("recipes", jobs=1).ok
    text = chest_recipe(seed=1 if change == "shrink" else 2, maps=2, cells=8)
    write_recipe(project, "k", text)
    with monkeypatch.context() as patched:
        stop_after_first(patched, "write_manifest")
        with pytest.raises(Stop):
            pipeline.build("recipes", jobs=1)
    assert untrue(project / PACK) == []
    result = pipeline.build("recipes", jobs=1)
    assert result.ok and not [w for w in result.packs[0].warnings if "edited since" in w]
    assert pcg("verify", str(PACK), cwd=project).returncode == 0
    assert tree_digests(project / PACK) == clean_pack(tmp_path, text)


def test_a_map_build_after_a_stopped_one_keeps_what_tells_a_hand_edit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A map edited by hand, a rebuild stopped once the manifest stopped naming it, a `--map`
    build of another map: the next full build still says the edit is lost."""
    import pipeline

    project = tmp_path / "p"
    project.mkdir()
    monkeypatch.chdir(project)
    write_recipe(project, "k", chest_recipe(seed=1, maps=4, cells=8))
    assert pipeline.build("recipes", jobs=1).ok
    edited = project / PACK / "map_002.tmx"
    edited.write_text(edited.read_text().replace("<map ", '<map class="mine" ', 1))
    write_recipe(project, "k", chest_recipe(seed=2, maps=4, cells=8))
    with monkeypatch.context() as patched:
        stop_after_first(patched, "write_manifest")
        with pytest.raises(Stop):
            pipeline.build("recipes", jobs=1)
    assert pipeline.build("recipes", jobs=1, maps=0).ok
    assert 'class="mine"' in edited.read_text()  # a --map 0 build leaves it alone
    result = pipeline.build("recipes", jobs=1)
    assert result.ok
    assert [w for w in result.packs[0].warnings if "map_002.tmx: edited since the last build" in w], result.packs[0].warnings
