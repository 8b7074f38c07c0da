"""`pcg watch` driven the way editors save files: in place, temporary file and rename, vim's
backup-and-replace, bursts of saves, a broken save then a fix, new and deleted recipes."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import pcg, recipe_text, tree_digests

BUILT = re.compile(r"^\d\d:\d\d:\d\d (\S+): (rebuilt|up to date|removed)")


class Watch:
    """A running `pcg watch` whose output lines arrive on a queue."""

    def __init__(self, project: Path, *args: str):
        # PYTHONFAULTHANDLER: a watcher that will not stop is sent SIGABRT and prints where
        # every thread was.
        env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "PYTHONFAULTHANDLER": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pipeline", "watch", "recipes", "-j", "1", *args],
            cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, pattern: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.1)
            except queue.Empty:
                continue
            self.seen.append(line)
            if re.search(pattern, line):
                return line
        raise AssertionError(f"no line matching {pattern!r} in {timeout} s; saw:\n" + "\n".join(self.seen))

    def quiet(self, seconds: float) -> list[str]:
        """Lines printed over the next `seconds`."""
        got = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                got.append(self.lines.get(timeout=0.05))
            except queue.Empty:
                pass
        self.seen += got
        return got

    def builds(self) -> int:
        return sum(1 for line in self.seen if BUILT.match(line))

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGABRT)
            self.proc.wait(timeout=30)
            said = "\n".join(self.quiet(1.0))
            raise AssertionError(f"pcg watch still running 30 s after Ctrl+C; its threads were:\n{said}") from None


def seed_of(project: Path, pack: str = "small") -> int:
    return json.loads((project / "exports" / pack / "manifest.json").read_text())["pack"]["seed"]


@pytest.fixture
def watching(project: Path):  # type: ignore[no-untyped-def]
    watch = Watch(project)
    watch.wait_for("watching recipes")
    yield watch
    if watch.proc.poll() is None:
        watch.proc.kill()


def test_editor_saves_rebuild_and_bursts_coalesce(project: Path, watching: Watch) -> None:
    recipe = project / "recipes" / "small.toml"
    assert seed_of(project) == 42

    recipe.write_text(recipe_text(seed=1))  # in place
    watching.wait_for("small: rebuilt 6 of 6 maps")
    assert seed_of(project) == 1

    tmp = recipe.with_name(".small.toml.tmp-123")  # temporary file, then rename over it
    tmp.write_text(recipe_text(seed=2))
    os.replace(tmp, recipe)
    watching.wait_for("small: rebuilt")
    assert seed_of(project) == 2

    backup = recipe.with_name("small.toml~")  # vim: move the file aside, write anew, drop the backup
    os.replace(recipe, backup)
    recipe.write_text(recipe_text(seed=3))
    backup.unlink()
    watching.wait_for("small: rebuilt")
    assert seed_of(project) == 3

    swap = recipe.with_name(".small.toml.swp")  # an editor's swap file changes nothing
    swap.write_text("swap")
    assert not [line for line in watching.quiet(1.0) if BUILT.match(line)]

    before = watching.builds()
    for seed in range(100, 150):  # 50 rapid saves
        recipe.write_text(recipe_text(seed=seed))
        time.sleep(0.005)
    watching.wait_for("small: rebuilt")
    watching.quiet(1.5)
    assert seed_of(project) == 149
    assert watching.builds() - before <= 5  # coalesced: not one build per save

    # The pack is exactly what a plain build of the last recipe makes.
    digests = tree_digests(project / "exports" / "small")
    fresh = project / "fresh"
    (fresh / "recipes").mkdir(parents=True)
    (fresh / "recipes" / "small.toml").write_text(recipe_text(seed=149))
    pcg("build", "recipes", "-q", cwd=fresh)
    assert tree_digests(fresh / "exports" / "small") == digests
    assert watching.proc.poll() is None
    assert watching.stop() == 0


def test_a_broken_save_keeps_the_pack_and_the_fix_rebuilds(project: Path, watching: Watch) -> None:
    recipe = project / "recipes" / "small.toml"
    good = tree_digests(project / "exports" / "small")
    recipe.write_text(recipe_text(seed=5).replace("cells = [9, 7]", "cells = [9, 7"))
    watching.wait_for(r"error: recipes/small\.toml: line \d+")
    recipe.write_text(recipe_text(seed=5).replace("cells = [9, 7]", "cells = [0, 7]"))
    watching.wait_for(r"error: recipes/small\.toml: stage\.maze\.cells\.0")
    assert tree_digests(project / "exports" / "small") == good  # the last good pack stays
    recipe.write_text(recipe_text(seed=5))
    watching.wait_for("small: rebuilt")
    assert seed_of(project) == 5
    assert watching.proc.poll() is None


def test_a_saved_recipe_with_a_stage_nothing_exports_is_built_with_a_warning(project: Path, watching: Watch) -> None:
    recipe = project / "recipes" / "small.toml"
    recipe.write_text(recipe_text(seed=5) + '\n[stage.spare]\nuse = "post.braid"\ninput = "maze"\n')
    watching.wait_for(r"warning: recipes/small\.toml: stage\.spare: no export stage reads it")
    watching.wait_for("small: rebuilt")


def test_new_recipes_are_picked_up_and_deleted_ones_dropped(project: Path, watching: Watch) -> None:
    extra = project / "recipes" / "extra.toml"
    extra.write_text(recipe_text(name="extra", maps=2))
    watching.wait_for("extra: rebuilt 2 of 2 maps")
    extra.unlink()
    watching.wait_for(r"recipes/extra\.toml: removed; no longer watched")
    (project / "recipes" / "small.toml").write_text(recipe_text(seed=7))
    watching.wait_for("small: rebuilt")


def test_a_file_the_recipe_reads_triggers_a_rebuild(project: Path) -> None:
    (project / "tilesets").mkdir()
    tileset = project / "tilesets" / "t.toml"
    tileset.write_text('[colors]\nwall = "#000000"\n')
    text = recipe_text().replace('input = "maze"\ntile_size = 8\n', 'input = "maze"\ntileset = "../tilesets/t.toml"\n')
    (project / "recipes" / "small.toml").write_text(text)
    watch = Watch(project)
    try:
        watch.wait_for("watching recipes")
        tileset.write_text('[colors]\nwall = "#ff0000"\n')
        watch.wait_for("small: rebuilt 6 of 6 maps")
    finally:
        watch.proc.kill()


def test_polling_sees_in_place_and_renamed_saves(project: Path) -> None:
    watch = Watch(project, "--poll", "--interval", "0.1")
    try:
        watch.wait_for("watching recipes")
        recipe = project / "recipes" / "small.toml"
        recipe.write_text(recipe_text(seed=8))
        watch.wait_for("small: rebuilt")
        tmp = recipe.with_name(".small.toml.new")
        tmp.write_text(recipe_text(seed=9))
        os.replace(tmp, recipe)
        watch.wait_for("small: rebuilt")
        assert seed_of(project) == 9
    finally:
        watch.proc.kill()


def test_a_new_file_matching_a_glob_the_recipe_reads_triggers_a_rebuild(project: Path) -> None:
    """A prefab drawn while `pcg watch` runs joins the pack: its glob, not only the files it
    matched, is watched."""
    root = Path(__file__).resolve().parents[1] / "recipes"
    (project / "recipes" / "prefabs").mkdir()
    for name in ("vault.tmx", "prefab.tsx", "prefab.png"):
        (project / "recipes" / "prefabs" / name).write_bytes((root / "prefabs" / name).read_bytes())
    (project / "recipes" / "small.toml").write_text(
        '[pack]\nname = "vaulted"\nseed = 3\nmaps = 1\n\n[stage.dungeon]\nuse = "dungeon.bsp"\nsize = [60, 40]\n\n'
        '[stage.vaults]\nuse = "place.prefabs"\ninput = "dungeon"\nprefabs = "prefabs/*.tmx"\ncount = 1\n\n'
        '[stage.png]\nuse = "export.png"\ninput = "vaults"\n'
    )
    watch = Watch(project)
    try:
        watch.wait_for("watching recipes")
        manifest = project / "exports" / "vaulted" / "manifest.json"
        assert list(json.loads(manifest.read_text())["stages"]["vaults"]["files"]) == ["prefabs/prefab.png", "prefabs/prefab.tsx", "prefabs/vault.tmx"]
        (project / "recipes" / "prefabs" / "shop.tmx").write_bytes((root / "prefabs" / "shop.tmx").read_bytes())
        watch.wait_for("vaulted: rebuilt")
        assert "prefabs/shop.tmx" in json.loads(manifest.read_text())["stages"]["vaults"]["files"]
    finally:
        watch.proc.kill()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="tgkill and /proc are Linux's")
def test_ctrl_c_stops_the_watcher_whichever_thread_it_reaches(project: Path, watching: Watch) -> None:
    # The kernel hands a process's SIGINT to any of its threads; sent to one of watchdog's, the
    # main thread must still wake to raise KeyboardInterrupt (once it hung in an endless wait).
    import ctypes

    pid = watching.proc.pid
    others = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task") if int(t) != pid)
    assert others, "the watcher runs watchdog's threads"
    sys_tgkill = 234 if os.uname().machine == "x86_64" else 131  # x86_64; aarch64 otherwise
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.syscall(sys_tgkill, pid, others[-1], signal.SIGINT) == 0, os.strerror(ctypes.get_errno())
    assert watching.proc.wait(timeout=10) == 0
