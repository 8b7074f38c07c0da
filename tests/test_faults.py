"""Faults for real: SIGKILL mid-build, a full disk, a read-only file system, exports on another
file system than the cache, `pcg clean` during a build, a damaged manifest under `python -O`.

After each, the next build leaves nothing behind (no orphan, no temporary file), `pcg verify`
passes and the pack is byte-identical to a clean build; meanwhile every command says what went
wrong in one line, without a traceback.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from conftest import ROOT, child_pids, pcg, recipe_text, tree_digests, write_recipe
from test_watch import Watch

PACK = Path("exports") / "small"


@contextlib.contextmanager
def tmpfs(folder: Path, size: str) -> Iterator[Path]:
    """A real tmpfs of `size` mounted on `folder` (root only: skipped elsewhere)."""
    folder.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "none", str(folder)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({proc.stderr.strip()})")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def remount(folder: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(folder)], check=True)


def clean_build(tmp_path: Path, text: str) -> dict[str, str]:
    """The pack a clean build of `text` makes, in a project of its own."""
    other = tmp_path / "clean"
    other.mkdir(parents=True, exist_ok=True)
    write_recipe(other, "small", text)
    pcg("build", "recipes", "-q", cwd=other)
    return tree_digests(other / PACK)


def start_build(project: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.Popen(
        [sys.executable, "-m", "pipeline", "build", "recipes", "-j", "2", *args],
        cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )


def wait_for_files(folder: Path, pattern: str, count: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(folder.glob(pattern))) < count:
        time.sleep(0.01)
    assert proc.poll() is None, "the build finished before the fault: give it more maps"


def kill(proc: subprocess.Popen[str]) -> None:
    os.killpg(proc.pid, signal.SIGKILL)  # the client and its workers, mid-write
    proc.communicate()


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def test_a_killed_build_leaves_no_orphans_once_the_recipe_shrinks(project: Path, tmp_path: Path) -> None:
    write_recipe(project, "small", recipe_text(maps=200, cells=(15, 15)))
    proc = start_build(project, "-q")
    wait_for_files(project / PACK, "map_*.tmx", 40, proc)
    kill(proc)
    assert not (project / PACK / "manifest.json").exists()  # complete files no manifest lists
    pcg("clean", cwd=project)  # the cache goes, but what the next build must finish stays
    small = recipe_text(maps=10, cells=(15, 15))
    write_recipe(project, "small", small)
    out = pcg("build", "recipes", "-j", "2", cwd=project).stdout
    assert "no map writes any more" in out  # and says so
    assert tree_digests(project / PACK) == clean_build(tmp_path, small)
    assert pcg("verify", str(PACK), cwd=project).returncode == 0


def test_verify_names_files_no_manifest_claims(project: Path) -> None:
    pcg("build", "recipes", "-q", cwd=project)
    (project / PACK / "map_099.tmx").write_text("<map/>")
    proc = pcg("verify", str(PACK), cwd=project, check=False)
    assert proc.returncode == 1
    assert "exports/small/map_099.tmx: no map of the manifest claims this file" in proc.stderr
    (project / PACK / "map_099.tmx").unlink()
    manifest = json.loads((project / PACK / "manifest.json").read_text())
    manifest["maps"].append(manifest["maps"][2])  # a hand edit: every file it lists is right
    (project / PACK / "manifest.json").write_text(json.dumps(manifest))
    proc = pcg("verify", str(PACK), cwd=project, check=False)
    assert proc.returncode == 1 and "map 2: the manifest lists it 2 times" in proc.stderr, proc.stderr


def test_exports_on_another_file_system_leave_no_temporary_files(project: Path, tmp_path: Path) -> None:
    shm = Path("/dev/shm")
    if not shm.is_dir() or os.stat(shm).st_dev == os.stat(project).st_dev:
        pytest.skip("no second file system at /dev/shm")
    out = Path(tempfile_dir(shm))
    try:
        text = recipe_text(maps=120, cells=(15, 15))
        write_recipe(project, "small", text)
        proc = start_build(project, "-q", "--out", str(out))
        wait_for_files(out / "small", "map_*.tmx", 20, proc)
        kill(proc)
        # What a killed writer leaves beside its targets (its process is gone).
        for folder in (out / "small", out / "small" / "previews"):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f".pcg-{dead_pid()}-0-map_000.tmx.tmp").write_bytes(b"half")
        pcg("build", "recipes", "-q", "--out", str(out), cwd=project)
        assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]
        built, clean = tree_digests(out / "small"), clean_build(tmp_path, text)
        # The manifest names the recipe relative to the exports' parent, which differs here.
        assert built.pop("manifest.json") and clean.pop("manifest.json")
        assert built == clean
        assert pcg("verify", str(out / "small"), cwd=project).returncode == 0
    finally:
        shutil.rmtree(out, ignore_errors=True)


def tempfile_dir(parent: Path) -> str:
    import tempfile

    return tempfile.mkdtemp(prefix="pcg-faults-", dir=parent)


def consistent(pack: Path) -> bool:
    """Every file the pack's manifest claims is on disk as it records."""
    manifest = json.loads((pack / "manifest.json").read_text())
    digests = tree_digests(pack)
    return all(digests.get(rel) == sha for m in manifest["maps"] for rel, sha in m["files"].items())


@pytest.mark.parametrize("jobs", ["1", "2"])  # the build writes the files, or its workers do
def test_a_full_disk_fails_cleanly_and_the_next_build_repairs(project: Path, tmp_path: Path, jobs: str) -> None:
    with tmpfs(project / "exports", "320k") as exports:
        pcg("build", "recipes", "-q", cwd=project)  # 6 small maps fit
        big = recipe_text(maps=40, cells=(40, 40), seed=7)
        write_recipe(project, "small", big)
        proc = pcg("build", "recipes", "-j", jobs, cwd=project, check=False)
        assert proc.returncode == 1
        no_traceback(proc)
        # One line naming the file it could not write (not its temporary name).
        assert re.search(r"^error: recipes/small.toml: exports/small/\S+: the disk is full", proc.stderr, re.M), proc.stderr
        # What `pcg build` says now must be true of the disk: up to date only if it is.
        explain = pcg("explain", "recipes/small.toml", cwd=project).stdout
        if "Up to date" in explain:
            assert consistent(exports / "small")
        verify = pcg("verify", str(PACK), cwd=project, check=False)
        no_traceback(verify)
        if verify.returncode == 0:
            assert consistent(exports / "small")
        remount(exports, "size=16m")
        pcg("build", "recipes", "-q", cwd=project)
        assert pcg("verify", str(PACK), cwd=project).returncode == 0
        assert tree_digests(exports / "small") == clean_build(tmp_path, big)


def test_a_read_only_or_full_file_system_is_one_line_in_every_command(project: Path) -> None:
    with tmpfs(project / "exports", "16m") as exports:
        pcg("build", "recipes", "-q", cwd=project)
        remount(exports, "ro")
        write_recipe(project, "small", recipe_text(seed=9))
        for args in (["build", "recipes"], ["build", "recipes", "-j", "1"], ["clean", "small"]):
            proc = pcg(*args, cwd=project, check=False)
            assert proc.returncode == 1, args
            no_traceback(proc)
            # Naming a file of the pack, in full: not a temporary name, nor a bare file name.
            assert re.search(r"^error: (recipes/small.toml: )?exports/small/[^ ]+: the file system is read-only", proc.stderr, re.M), proc.stderr
            assert ".tmp" not in proc.stderr, proc.stderr

        watch = Watch(project)
        try:
            watch.wait_for(r"error: .*the file system is read-only")
            watch.wait_for(r"watching recipes")
            remount(exports, "rw")
            write_recipe(project, "small", recipe_text(seed=10))
            watch.wait_for(r"small: rebuilt 6 of 6 maps")  # it survived, and builds again
        finally:
            assert watch.stop() == 0
        assert "Traceback" not in "\n".join(watch.seen)
        assert pcg("verify", str(PACK), cwd=project).returncode == 0

        # verify rebuilds in a temporary folder: one on a full disk is one line too.
        with tmpfs(project / "scratch", "32k") as scratch:
            env = {**os.environ, "TMPDIR": str(scratch)}
            proc = subprocess.run(
                [sys.executable, "-m", "pipeline", "verify", str(PACK)], cwd=project, capture_output=True, text=True, env=env, timeout=300
            )
            assert proc.returncode == 1
            no_traceback(proc)  # type: ignore[arg-type]
            assert "the disk is full" in proc.stderr, proc.stderr


GATE_PLUGIN = """\
import time
from pathlib import Path

from pipeline.registry import StageParams, stage


@stage("test.gate", version=1)
class Gate(StageParams):
    \"\"\"Holds every map until the test creates `release`, so the build is surely running.\"\"\"

    arity = (1, 1)

    def run(self, inputs, rng):
        Path({entered!r}).touch()
        deadline = time.monotonic() + 240
        while not Path({release!r}).exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        return inputs[0]
"""


def test_clean_during_a_build_waits_for_it_and_keeps_the_locks(project: Path) -> None:
    # A stage that waits for the test holds the build open however busy the machine is: timing
    # the clean against a build of many maps was flaky under load.
    entered, release = project / "entered", project / "release"
    (project / "recipes" / "stages").mkdir(parents=True, exist_ok=True)
    (project / "recipes" / "stages" / "gate.py").write_text(GATE_PLUGIN.format(entered=str(entered), release=str(release)))
    text = recipe_text(maps=4).replace("[pack]\n", '[pack]\nplugins = ["stages/gate.py"]\n', 1)
    text = text.replace('[stage.tmx]\nuse = "export.tmx"\ninput = "maze"', '[stage.gate]\nuse = "test.gate"\ninput = "maze"\n\n[stage.tmx]\nuse = "export.tmx"\ninput = "gate"')
    write_recipe(project, "small", text)
    build = start_build(project, "-q")
    deadline = time.monotonic() + 120
    while not entered.exists() and build.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert entered.exists(), build.communicate()
    clean = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "clean"], cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env={**os.environ, "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"},
    )
    assert clean.stdout is not None
    # Until clean has found the build's lock taken (bounded: a line that never comes fails here).
    ready, _, _ = select.select([clean.stdout], [], [], 120)
    first = clean.stdout.readline() if ready else ""
    release.touch()
    clean_out, clean_err = clean.communicate(timeout=300)
    out, err = build.communicate(timeout=300)
    assert build.returncode == 0, err
    assert clean.returncode == 0, clean_err
    assert "Traceback" not in first + clean_out + clean_err + out + err
    assert "waiting for running builds to finish" in first
    # Locks are never deleted: a build waiting on one must find it still there.
    assert [p.name for p in (project / ".pcg-cache").iterdir()] == ["locks"]
    assert pcg("verify", str(PACK), cwd=project).returncode == 0


def test_a_damaged_manifest_under_python_O_means_a_rebuild(project: Path) -> None:
    pcg("build", "recipes", "-q", cwd=project)
    path = project / PACK / "manifest.json"
    for damage in ({"index": "zero"}, {"files": ["map_000.tmx"]}, {"stages": {"maze": {"key": 1}}}):
        manifest = json.loads(path.read_text())
        manifest["maps"][0].update(damage)
        path.write_text(json.dumps(manifest))
        proc = subprocess.run(
            [sys.executable, "-O", "-m", "pipeline", "build", "recipes", "-j", "1"],
            cwd=project, capture_output=True, text=True, timeout=300, env={**os.environ, "NO_COLOR": "1"},
        )
        assert proc.returncode == 0, proc.stderr
        assert "built 6/6 maps" in proc.stdout, damage


def test_no_assert_statements_in_the_pipeline() -> None:
    """`python -O` strips asserts: checks of input written as asserts vanish there."""
    found = []
    for path in sorted((ROOT / "pipeline").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Assert):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, "use an explicit check (or typing.cast for the type checker): " + ", ".join(found)


def test_locks_are_released_even_while_forked_workers_live(tmp_path: Path) -> None:
    """A process pool restarted mid-build forks workers that inherit the lock's descriptor:
    leaving the lock must release it all the same, or `pcg clean` would wait for them."""
    import multiprocessing

    from pipeline.lock import pack_locks

    with pack_locks(tmp_path, ["small"], lambda what: None):
        child = multiprocessing.get_context("fork").Process(target=time.sleep, args=(60,))
        child.start()
    try:
        probe = "import fcntl, os, sys; fcntl.flock(os.open(sys.argv[1], os.O_RDWR), fcntl.LOCK_EX | fcntl.LOCK_NB)"
        for name in ("small.lock", ".cache.lock"):
            assert subprocess.run([sys.executable, "-c", probe, str(tmp_path / name)], timeout=60).returncode == 0, name
    finally:
        child.kill()
        child.join()


def test_numba_readied_before_the_fork_starts_no_thread_of_its_own() -> None:
    """The process pool sets numba up before it forks its workers: a thread started by that
    (numba's threading layer, a Python thread) would not exist in the children, and any lock it
    held would stay held there for good. The only threads are the BLAS pools that numpy and
    scipy load, which prepare for a fork themselves (pthread_atfork), as they did before."""
    tasks = "import os; n = len(os.listdir('/proc/self/task'))"
    readied = (
        "from pipeline.jit import ready_before_fork; ready_before_fork(); import threading, numba.np.ufunc.parallel as p;"
        f" {tasks}; print(n, threading.active_count(), p._is_initialized)"
    )
    blas = f"import numpy, scipy.linalg; {tasks}; print(n)"
    said = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT) for code in (readied, blas)]
    assert all(done.returncode == 0 for done in said), [done.stderr for done in said]
    threads, python_threads, layer = said[0].stdout.split()
    assert (threads, python_threads, layer) == (said[1].stdout.strip(), "1", "False")


def _echo(batch: str) -> str:
    return batch


def test_a_worker_killed_between_builds_does_not_stop_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    """`pcg watch` and `pcg serve` keep one pool between builds: a worker killed while idle
    breaks it, and the next build must start a fresh one, not fail on submitting."""
    from pipeline.building import executor as executor_module

    monkeypatch.setattr(executor_module, "run_batch", _echo)  # the batches here are plain strings
    executor = executor_module.ProcessExecutor(1)
    try:
        os.kill(next(iter(executor._pool._processes)), signal.SIGKILL)
        end = time.monotonic() + 10
        while not executor._pool._broken and time.monotonic() < end:
            time.sleep(0.05)
        assert executor._pool._broken
        assert sorted(result for _, result in executor.results(["a", "b"])) == ["a", "b"]  # type: ignore[list-item]
    finally:
        executor.close()


def _sleep(batch: str) -> str:
    marks = os.environ.get("PCG_TEST_MARKS")
    if marks:
        (Path(marks) / batch).touch()  # this batch has started
    time.sleep(60)
    return batch


def interrupt_once_started(marks: Path, batches: int) -> None:
    """Ctrl+C this process once `batches` batches have started (`_sleep` marks them)."""
    deadline = time.monotonic() + 60
    while len(list(marks.iterdir())) < batches and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.1)  # the main thread is waiting for their results by now
    os.kill(os.getpid(), signal.SIGINT)


def test_ctrl_c_stops_the_workers_mid_batch_and_the_next_build_gets_fresh_ones(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Ctrl+C while every worker is in a minute-long batch: the build stops now, its workers
    with it, rather than when their batches end; a next build (the Python API's) still runs."""
    import threading

    from pipeline.building import executor as executor_module

    monkeypatch.setattr(executor_module, "run_batch", _sleep)
    monkeypatch.setenv("PCG_TEST_MARKS", str(tmp_path))
    executor = executor_module.ProcessExecutor(2)
    # A real signal: it interrupts the wait for results, as Ctrl+C in a terminal does.
    interrupter = threading.Thread(target=interrupt_once_started, args=(tmp_path, 2), daemon=True)
    try:
        workers = list(executor._pool._processes.values())
        assert {executor._pool.submit(signal.getsignal, signal.SIGINT).result(timeout=30) for _ in range(4)} == {signal.SIG_IGN}
        interrupter.start()
        start = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            list(executor.results(["a", "b"]))  # type: ignore[list-item]
        assert time.monotonic() - start < 20
        assert not still_running(workers)
        monkeypatch.setattr(executor_module, "run_batch", _echo)
        assert sorted(result for _, result in executor.results(["c", "d"])) == ["c", "d"]  # type: ignore[list-item]
    finally:
        if interrupter.ident is not None:
            interrupter.join()
        start = time.monotonic()
        executor.close()
        assert time.monotonic() - start < 10


def test_a_build_stopped_while_it_stores_a_result_stops_the_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The build may stop between two results (Ctrl+C while it writes a map's files, a full
    disk): the workers stop then too, not when their batches end."""
    from pipeline.building import executor as executor_module

    monkeypatch.setattr(executor_module, "run_batch", _sleep_unless_first)
    executor = executor_module.ProcessExecutor(2)
    try:
        workers = list(executor._pool._processes.values())
        results = executor.results(["first", "b"])  # type: ignore[list-item]
        assert next(results)[1] == "first"
        start = time.monotonic()
        results.close()  # as a KeyboardInterrupt in the build's loop does
        assert time.monotonic() - start < 10
        assert not still_running(workers)
    finally:
        start = time.monotonic()
        executor.close()
        assert time.monotonic() - start < 10


def still_running(workers: list[Any], seconds: float = 5) -> list[int]:
    """The pids of `workers` still running after `seconds` (by /proc: the pool's own thread may
    have reaped a killed worker, and `is_alive` can then say so a moment late)."""
    deadline = time.monotonic() + seconds
    while any(Path(f"/proc/{w.pid}").exists() for w in workers) and time.monotonic() < deadline:
        time.sleep(0.02)
    return [w.pid for w in workers if Path(f"/proc/{w.pid}").exists()]


def test_an_abort_from_another_thread_ends_the_build_and_every_later_one(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`pcg serve` stopping aborts the executor from its main thread while its builds thread
    waits for six batches, two running and four queued: every one comes back as Stopped at
    once, and a build after that runs nothing."""
    import threading

    from pipeline.building import executor as executor_module

    monkeypatch.setattr(executor_module, "run_batch", _sleep)
    monkeypatch.setenv("PCG_TEST_MARKS", str(tmp_path))
    executor = executor_module.ProcessExecutor(2)
    got: list[Any] = []
    builds = threading.Thread(target=lambda: got.extend(executor.results(list("abcdef"))), daemon=True)  # type: ignore[arg-type]
    try:
        workers = list(executor._pool._processes.values())
        builds.start()
        deadline = time.monotonic() + 60
        while len(list(tmp_path.iterdir())) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        executor.abort()
        builds.join(timeout=20)
        assert not builds.is_alive(), "the build still waits for its batches"
        assert sorted(batch for batch, _ in got) == list("abcdef")
        assert all(isinstance(outcome, executor_module.Stopped) for _, outcome in got), got
        assert not still_running(workers)
        assert [type(o) for _, o in executor.results(["g"])] == [executor_module.Stopped]  # type: ignore[list-item]
    finally:
        start = time.monotonic()
        executor.close()
        assert time.monotonic() - start < 10


def _sleep_unless_first(batch: str) -> str:
    return batch if batch == "first" else _sleep(batch)


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a process has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# Two maps whose rule program never ends (it turns the last B white, then a white cell back,
# and so on), each for hours within max_steps: a batch that only stopping its worker ends, as
# compiled code does not look at signals.
SPIN_RECIPE = """\
[pack]
name = "spin"
seed = 1
maps = 2

[stage.spin]
use = "rewrite"
size = [8, 8]
values = "BW"
program = {{ markov = [ {{ one = "B=W" }}, {{ one = "W=B" }} ] }}
max_steps = {steps}
on_max_steps = "stop"

[stage.png]
use = "export.png"
input = "spin"
"""


def wait_until_both_workers_run(proc: subprocess.Popen[str]) -> list[int]:
    """The two worker processes of `proc`, once each has used CPU on its batch."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(OSError, IndexError):  # a thread or a process may end as we read
            workers = child_pids(proc.pid)
            if len(workers) == 2 and all(cpu_seconds(w) > 0.3 for w in workers):
                return workers
        time.sleep(0.05)
    raise AssertionError(f"the workers did not start their batches (exit {proc.poll()})")


def test_ctrl_c_during_a_build_is_one_line_and_leaves_no_process(project: Path) -> None:
    """Ctrl+C in a terminal reaches the build and its two workers, each deep in a map that would
    run for hours: it prints `interrupted` and nothing else, exits 130 at once, and no worker
    outlives it; the next build completes the pack."""
    write_recipe(project, "spin", SPIN_RECIPE.format(steps=2**40))
    proc = start_build(project, "-q")
    try:
        workers = wait_until_both_workers_run(proc)
        start = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        assert time.monotonic() - start < 10
        assert proc.returncode == 130, (out, err)
        assert (out + err).strip() == "interrupted", out + err
        assert not [w for w in workers if Path(f"/proc/{w}").exists()], "a worker outlived the build"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    write_recipe(project, "spin", SPIN_RECIPE.format(steps=1000))
    assert pcg("build", "recipes", "-q", cwd=project).returncode == 0
    assert pcg("verify", "exports/spin", cwd=project).returncode == 0


def alive(pid: int) -> bool:
    """Whether `pid` still runs (a zombie no one has reaped yet does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_a_build_killed_alone_takes_its_workers_with_it(project: Path, how: str) -> None:
    """A CI job cancelled sends SIGTERM to the build alone (or SIGKILL): its workers, deep in
    maps that would run for hours, must not outlive it, holding the pack's lock (the next build
    would wait forever) and the output pipe."""
    write_recipe(project, "spin", SPIN_RECIPE.format(steps=2**40))
    proc = start_build(project, "-q")
    try:
        workers = wait_until_both_workers_run(proc)
        os.kill(proc.pid, getattr(signal, how))
        out, err = proc.communicate(timeout=60)
        if how == "SIGTERM":
            assert (proc.returncode, (out + err).strip()) == (143, "terminated"), (out, err)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(alive(w) for w in workers):
            time.sleep(0.05)
        assert not [w for w in workers if alive(w)], "a worker outlived the build"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    write_recipe(project, "spin", SPIN_RECIPE.format(steps=1000))
    assert pcg("build", "recipes", "-q", cwd=project).returncode == 0
