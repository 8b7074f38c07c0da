"""Builds on a real Dask cluster: `dask scheduler` and `dask worker` processes on 127.0.0.1, driven
through the real CLI (`pcg build --scheduler ...`).

- Workers need nothing of the client's file system: a worker in its own mount namespace, with the
  project folder and the repository's recipes/ and tilesets/ hidden under empty tmpfs mounts,
  builds a recipe that reads every kind of file a stage can read today (a MarkovJunior .xml model
  for a rewrite stage, a tileset TOML with generated art, a tileset TOML with its own PNG), into
  the same bytes as a local build. Prefab maps and plugin files do not exist in this codebase
  yet: when they do, add them to that recipe.
- A worker killed mid-build has its batches redone by another: the same bytes again.
- With every worker killed mid-build the CLI fails within `--wait-for-workers` (plus generous slack: the give-up timing itself is test_dask_give_up) with a
  clear message, keeps the maps that finished, and the next build completes and verifies.

Every process started here is killed in teardown, and every wait is bounded.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import ROOT, pcg, recipe_text, tree_digests

distributed = pytest.importorskip("distributed")

from pipeline.building.dask_executor import CHECK_EVERY  # noqa: E402
from pipeline.jit import kernels_cached  # noqa: E402
from pipeline.output import spans  # noqa: E402

DASK = str(Path(sys.executable).with_name("dask"))
START_TIMEOUT = 60  # seconds for a scheduler or a worker to come up on a busy 2-core machine
BUILD_TIMEOUT = 120
# The files the "kinds" recipe reads, copied from the repository into each project.
READS = {
    "recipes/rules/maze_growth.xml": ROOT / "recipes" / "rules" / "maze_growth.xml",
    "tilesets/maze.toml": ROOT / "tilesets" / "maze.toml",
    "tilesets/stone.toml": ROOT / "tilesets" / "stone.toml",
    "tilesets/stone.png": ROOT / "tilesets" / "stone.png",
}
KINDS_RECIPE = """\
[pack]
name = "kinds"
seed = 7
maps = 4

# A MarkovJunior model file, parsed when the recipe loads.
[stage.grown]
use = "rewrite"
size = [15, 15]
program = "rules/maze_growth.xml"
legend = { B = "wall", W = "floor", A = "passage" }
colors = { A = "#fff1e8" }

# A tileset file with generated art.
[stage.grown_tmx]
use = "export.tmx"
input = "grown"
tileset = "../tilesets/maze.toml"

[stage.maze]
use = "maze.backtracker"
cells = [7, 5]

# A tileset file with its own image.
[stage.stone_tmx]
use = "export.tmx"
input = "maze"
tileset = "../tilesets/stone.toml"
dir = "stone"
"""


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # its own session: whatever it started goes too
        except ProcessLookupError:
            pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


class Cluster:
    """A `dask scheduler` and its `dask worker`s (no nanny: a killed worker stays dead)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.procs: list[subprocess.Popen[bytes]] = []
        self.workers: dict[str, subprocess.Popen[bytes]] = {}
        info = folder / "scheduler.json"
        self.scheduler = self._start(
            "scheduler",
            [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(info)],
        )
        deadline = time.monotonic() + START_TIMEOUT
        while not info.is_file() or not info.read_text().strip():
            if self.scheduler.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"dask scheduler did not start:\n{self.log('scheduler')}")
            time.sleep(0.1)
        time.sleep(0.1)  # written in one go, but give a slow disk a moment
        self.address: str = json.loads(info.read_text())["address"]
        self.client: Any = distributed.Client(self.address, timeout=START_TIMEOUT)

    def _start(self, name: str, argv: list[str], cwd: Path | None = None) -> subprocess.Popen[bytes]:
        with open(self.folder / f"{name}.log", "wb") as log:
            proc = subprocess.Popen(
                argv, cwd=cwd or self.folder, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        self.procs.append(proc)
        return proc

    def log(self, name: str) -> str:
        return (self.folder / f"{name}.log").read_text(errors="replace")[-4000:]

    def add_worker(self, name: str, hide: tuple[Path, ...] = (), cwd: Path | None = None) -> str:
        """Start a worker; with `hide`, in a mount namespace of its own where those folders are
        empty tmpfs mounts. Returns its address once the scheduler has it."""
        argv = [
            DASK, "worker", self.address, "--name", name, "--nthreads", "1", "--no-nanny", "--no-dashboard",
            "--host", "127.0.0.1", "--local-directory", str(self.folder / f"{name}-scratch"),
            # Should teardown ever miss it, it leaves by itself once the scheduler is gone.
            "--death-timeout", "30",
        ]
        if hide:
            # cd after mounting: a working directory inside a hidden folder would still reach
            # the files under the mount through relative paths.
            mounts = " && ".join(f"mount -t tmpfs -o size=64m pcg-hidden {shlex.quote(str(p))}" for p in hide)
            where = shlex.quote(str(cwd or "/"))
            script = f"{mounts} && mkdir -p {where} && cd {where} && exec {shlex.join(argv)}"
            argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script]
        proc = self._start(name, argv)
        self.workers[name] = proc
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            found = [a for a, w in self.client.scheduler_info()["workers"].items() if w.get("name") == name]
            if found:
                return found[0]
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"dask worker {name} did not join:\n{self.log(name)}")
            time.sleep(0.2)

    def run_on(self, address: str, fn: Any, *args: Any) -> Any:
        """Run `fn(*args)` as a task on that worker alone."""
        future = self.client.submit(fn, *args, workers=[address], allow_other_workers=False, pure=False)
        return future.result(timeout=30)

    def kill(self, name: str) -> None:
        _kill(self.workers[name])

    def close(self) -> None:
        try:
            self.client.close(timeout=5)
        except Exception:  # teardown of a cluster a test broke on purpose: the processes go anyway
            pass
        for proc in reversed(self.procs):
            _kill(proc)


@pytest.fixture
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    started = Cluster(tmp_path_factory.mktemp("dask"))
    try:
        yield started
    finally:
        started.close()


@pytest.fixture(scope="module")
def can_hide(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Skip unless this user may make a mount namespace and mount a tmpfs in it (root, or a
    container with CAP_SYS_ADMIN)."""
    probe = tmp_path_factory.mktemp("probe")
    (probe / "seen").touch()
    if shutil.which("unshare") is None:
        pytest.skip("hiding files from a worker needs unshare(1) (util-linux)")
    check = f"mount -t tmpfs pcg-hidden {shlex.quote(str(probe))} && test ! -e {shlex.quote(str(probe / 'seen'))}"
    try:
        proc = subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c", check], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"cannot hide files from a worker: unshare failed ({exc})")
    if proc.returncode != 0:
        pytest.skip(f"cannot hide files from a worker: unshare --mount and mount -t tmpfs are not permitted here ({proc.stderr.strip()})")


def project_with(folder: Path, name: str, text: str, reads: dict[str, Path] | None = None) -> Path:
    (folder / "recipes").mkdir(parents=True, exist_ok=True)
    (folder / "recipes" / f"{name}.toml").write_text(text)
    for rel, source in (reads or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, folder / rel)
    return folder


def start_build(project: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "pipeline", "build", "recipes", *args],
        cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )


def flat(text: str) -> str:
    """A rich table's text with its borders and wrapping gone, to search for a message."""
    return " ".join(text.replace("│", " ").split())


def wait_for_maps(proc: subprocess.Popen[str], pack: Path, count: int) -> None:
    deadline = time.monotonic() + BUILD_TIMEOUT
    while len(list(pack.glob("map_*.tmx"))) < count:
        assert proc.poll() is None, f"the build ended before {count} maps were written:\n{proc.communicate()}"
        assert time.monotonic() < deadline, f"no {count} maps after {BUILD_TIMEOUT} s"
        time.sleep(0.02)


def test_a_worker_that_cannot_see_the_project_builds_the_same_bytes(can_hide: None, cluster: Cluster, tmp_path: Path) -> None:
    project = project_with(tmp_path / "remote", "kinds", KINDS_RECIPE, READS)
    hidden = (tmp_path, ROOT / "recipes", ROOT / "tilesets")
    address = cluster.add_worker("hidden", hide=hidden, cwd=project)
    # What a stage could read, as the client resolves it (relative to the project) and as an
    # absolute path: none of it is there for the worker, so the build must carry it.
    paths = [str(project / rel) for rel in READS] + list(READS) + [str(p) for p in READS.values()]
    seen = cluster.run_on(address, lambda ps: {p: os.path.exists(p) for p in ps}, paths)
    assert not any(seen.values()), f"the worker can see {[p for p, s in seen.items() if s]}"
    assert cluster.run_on(address, os.getcwd) == str(project)
    assert list(cluster.client.scheduler_info()["workers"]) == [address]  # every batch runs there

    out = pcg("build", "recipes", "--scheduler", cluster.address, "--dask-results", "bytes", cwd=project).stdout
    assert "built 4/4 maps" in flat(out)
    local = project_with(tmp_path / "local", "kinds", KINDS_RECIPE, READS)
    pcg("build", "recipes", "-q", "-j", "1", cwd=local)
    remote_files = tree_digests(project / "exports" / "kinds")
    assert remote_files == tree_digests(local / "exports" / "kinds")  # manifest and contact sheet too
    assert {"manifest.json", "stone/map_000.tmx", "tilesets/stone.png", "tilesets/maze.png"} <= set(remote_files)

    # Told to write the files itself, it writes them where this machine never looks: each map
    # fails, rather than a manifest claiming the files of a pack left as it was.
    recipe = project / "recipes" / "kinds.toml"
    recipe.write_text(re.sub(r"(?m)^seed = \d+", "seed = 77", recipe.read_text(), count=1))
    proc = pcg("build", "recipes", "--scheduler", cluster.address, "--dask-results", "files", cwd=project, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "built 0/4 maps" in flat(proc.stdout) and "does every worker see this exports/ folder" in flat(proc.stderr), proc.stderr
    after = tree_digests(project / "exports" / "kinds")
    assert {k: v for k, v in after.items() if k != "manifest.json"} == {k: v for k, v in remote_files.items() if k != "manifest.json"}
    assert "OK: kinds" in pcg("verify", "kinds", cwd=project).stdout  # its manifest still tells the files as they are


def test_a_worker_killed_mid_build_has_its_batches_redone_by_another(cluster: Cluster, tmp_path: Path) -> None:
    text = recipe_text(maps=160, cells=(60, 60))
    project = project_with(tmp_path / "remote", "small", text)
    doomed = cluster.add_worker("doomed")
    cluster.add_worker("survivor")
    build = start_build(project, "-q", "--scheduler", cluster.address, "--dask-results", "bytes")
    try:
        wait_for_maps(build, project / "exports" / "small", 1)
        busy = cluster.client.processing(workers=[doomed]).get(doomed)
        assert busy, "the worker had no batch to lose: give the build more maps"
        cluster.kill("doomed")
        assert build.poll() is None, "the build finished before the worker was killed: give it more maps"
        out, err = build.communicate(timeout=BUILD_TIMEOUT)
    finally:
        _kill(build)
    assert build.returncode == 0, f"{out}\n{err}"
    local = project_with(tmp_path / "local", "small", text)
    pcg("build", "recipes", "-q", "-j", "2", cwd=local)
    assert tree_digests(project / "exports" / "small") == tree_digests(local / "exports" / "small")


def test_with_every_worker_killed_the_build_fails_in_bounded_time_and_keeps_what_finished(cluster: Cluster, tmp_path: Path) -> None:
    maps = 96
    project = project_with(tmp_path, "a_big", recipe_text(name="big", maps=maps, cells=(60, 60)))
    project_with(tmp_path, "b_small", recipe_text(name="small", maps=3))  # a second pack, never started
    if not kernels_cached():  # else the build runs each pack's first map ahead, and starts the second
        pcg("build", "recipes", "--map", "0", cwd=project_with(tmp_path / "warm", "a", recipe_text(maps=1)))
    for name in ("one", "two"):
        cluster.add_worker(name)
    wait = 6  # seconds without a worker before giving up (15 by default: that is a long test)
    build = start_build(project, "--scheduler", cluster.address, "--wait-for-workers", str(wait))
    pack = project / "exports" / "big"
    try:
        wait_for_maps(build, pack, 1)
        killed = time.monotonic()
        cluster.kill("one")
        cluster.kill("two")
        assert build.poll() is None, "the build finished before the workers were killed: give it more maps"
        # Given up, not waiting forever. How soon after `wait` (one check at most, and the
        # second pack not waiting all over again) is held by test_dask_give_up: on a machine
        # busy with other tests, writing the files and the report takes what it takes.
        bound = wait + CHECK_EVERY + 40
        try:
            out, err = build.communicate(timeout=bound)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the build was still running {bound:.0f} s after every worker was killed")
        took = time.monotonic() - killed
    finally:
        _kill(build)
    assert build.returncode == 1, f"{out}\n{err}"
    assert "Traceback" not in out + err, err
    # A restarted worker had its chance: the build last saw a worker at most CHECK_EVERY (and
    # the time to ask, on a busy machine) before the kill.
    assert took >= wait - CHECK_EVERY - 1, f"gave up {took:.1f} s after the kill\n{out}\n{err}"
    message = f"worker lost: ClusterLost: the Dask cluster at {cluster.address} lost all its workers and none came back in {wait} s"
    assert f"{maps + 3 - len(list(pack.glob('map_*.tmx')))} maps failed" in err, err

    # The maps that finished are on disk and in the manifest, as it records them; no other is.
    manifest = json.loads((pack / "manifest.json").read_text())
    kept = {m["index"] for m in manifest["maps"]}
    assert 0 < len(kept) < maps
    assert {int(p.stem[4:]) for p in pack.glob("map_*.tmx")} == kept
    # Every other map of each pack is in the table, on one row per pack (they failed alike).
    lost = spans(sorted(set(range(maps)) - kept))
    assert f"recipes/a_big.toml {lost} - {message}" in flat(err) and f"recipes/b_small.toml 0-2 - {message}" in flat(err), err
    for entry in manifest["maps"]:
        for rel, digest in entry["files"].items():
            assert hashlib.sha256((pack / rel).read_bytes()).hexdigest() == digest, rel
    assert not (project / "exports" / "small").exists()

    out = flat(pcg("build", "recipes", "-j", "2", cwd=project).stdout)
    assert f"built {maps - len(kept)}/{maps} maps" in out and "built 3/3 maps" in out
    assert len(list(pack.glob("map_*.tmx"))) == maps
    for name in ("big", "small"):
        assert pcg("verify", f"exports/{name}", cwd=project).returncode == 0


def test_a_client_killed_in_files_mode_leaves_a_true_manifest_and_the_next_build_a_clean_pack(cluster: Cluster, tmp_path: Path) -> None:
    """`--dask-results files`: the workers stage each map's files beside their targets and the
    client renames them in once journaled. The client SIGKILLed as a map lands, over an existing
    pack, while its workers (another machine's processes, as far as it knows) run on; the pack
    then shrinks: the next build leaves what a clean build does."""
    from test_manifest_promise import chest_recipe, stop_when_lands, untrue

    for name in ("files_one", "files_two"):
        cluster.add_worker(name)
    dask = ("--scheduler", cluster.address, "--dask-results", "files")
    project = project_with(tmp_path / "remote", "k", chest_recipe(seed=1, maps=120))
    pcg("build", "recipes", "-q", *dask, cwd=project)
    project_with(project, "k", chest_recipe(seed=4242, maps=120))
    since = time.time() - 0.01
    time.sleep(0.05)
    pack = project / "exports" / "k"
    stop_when_lands(start_build(project, "-q", *dask), pack / "map_012.tmx", since, signal.SIGKILL)
    assert untrue(pack) == []
    # The workers finish the batches they had (the scheduler drops the rest): what they make
    # then is never put in place, and the next build sweeps it away.
    deadline = time.monotonic() + BUILD_TIMEOUT
    while any(cluster.client.processing().values()) and time.monotonic() < deadline:
        time.sleep(0.1)
    small = chest_recipe(seed=4242, maps=10)
    project_with(project, "k", small)
    proc = pcg("build", "recipes", *dask, cwd=project)
    assert "edited since" not in proc.stdout + proc.stderr, proc.stderr
    assert pcg("verify", "exports/k", cwd=project).returncode == 0
    local = project_with(tmp_path / "local", "k", small)
    pcg("build", "recipes", "-q", "-j", "2", cwd=local)
    assert tree_digests(pack) == tree_digests(local / "exports" / "k")  # no temporary file left either
