"""`pcg build --timeout`: a map whose stage never ends fails, and the build goes on."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from conftest import pcg, write_recipe
from pipeline.time_limit import MapTimeout, paused, time_limit

# A stage of one's own with a bug: on about a third of the maps it loops for ever, and its
# `except Exception` would swallow an ordinary exception raised to stop it.
SPIN = '''\
from typing import ClassVar

from pipeline.registry import StageParams, stage


@stage("my.spin", version=1)
class Spin(StageParams):
    """Loops for ever on some maps."""

    arity: ClassVar[tuple[int, int]] = (1, 1)

    def run(self, inputs, rng):
        if rng.integers(0, 3) == 0:
            while True:
                try:
                    pass
                except Exception:
                    pass
        return inputs[0]
'''

RECIPE = """\
[pack]
name = "spin"
seed = 1
maps = 6
plugins = ["stages/spin.py"]

[stage.maze]
use = "maze.backtracker"
cells = [5, 5]

[stage.spin]
use = "my.spin"
input = "maze"

[stage.tmx]
use = "export.tmx"
input = "spin"
preview = false
"""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_map_that_never_ends_fails_with_the_stage_and_the_others_build(tmp_path: Path, jobs: str) -> None:
    (tmp_path / "recipes" / "stages").mkdir(parents=True)
    (tmp_path / "recipes" / "stages" / "spin.py").write_text(SPIN)
    write_recipe(tmp_path, "spin", RECIPE)
    start = time.monotonic()
    proc = pcg("build", "recipes", "--timeout", "1", "-j", jobs, cwd=tmp_path, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert time.monotonic() - start < 60
    text = " ".join(proc.stderr.split())
    assert "2 maps failed" in text and "0, 3 spin took longer than 1 s, the build's timeout (a stage that never ends?) (at stages/spin.py:" in text, text
    assert sorted(p.name for p in (tmp_path / "exports" / "spin").glob("map_*.tmx")) == [f"map_00{i}.tmx" for i in (1, 2, 4, 5)]


def test_pcg_watch_takes_a_timeout_too(tmp_path: Path) -> None:
    from test_watch import Watch

    (tmp_path / "recipes" / "stages").mkdir(parents=True)
    (tmp_path / "recipes" / "stages" / "spin.py").write_text(SPIN)
    write_recipe(tmp_path, "spin", RECIPE)
    watch = Watch(tmp_path, "--timeout", "1")
    try:
        watch.wait_for(r"spin: rebuilt 4 of 6 maps")
        watch.wait_for(r"error: recipes/spin.toml: map 0: stage spin: took longer than 1 s")
        watch.wait_for(r"watching recipes")  # and it goes on watching
    finally:
        assert watch.stop() == 0


def test_a_timeout_must_be_positive(tmp_path: Path) -> None:
    import pipeline
    from pipeline.errors import PipelineError

    proc = pcg("build", "--timeout", "0", cwd=tmp_path, check=False)
    assert proc.returncode == 1 and proc.stderr.strip() == "error: --timeout: seconds, more than 0 (got 0)"
    with pytest.raises(PipelineError, match=r"^timeout: seconds, more than 0 \(got -1\)"):
        pipeline.build(tmp_path, timeout=-1)


def test_the_clock_stops_while_kernels_compile() -> None:
    with time_limit(0.3):
        with paused():
            time.sleep(0.5)  # a kernel compiling
        time.sleep(0.1)
    with pytest.raises(MapTimeout):
        with time_limit(0.2):
            with paused():
                time.sleep(0.1)
            time.sleep(1)


def test_the_handler_and_a_callers_own_timer_survive_a_limit() -> None:
    import signal

    def mine(signum: int, frame: object) -> None:
        raise TimeoutError("the script's own alarm")

    before = signal.signal(signal.SIGALRM, mine)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.6)
        with pytest.raises(MapTimeout):
            with time_limit(0.1):
                time.sleep(1)
        assert signal.getsignal(signal.SIGALRM) is mine
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 0.2 < left < 0.55, left  # the script's alarm runs on, less the time the limit took
        with pytest.raises(TimeoutError, match="the script's own alarm"):
            time.sleep(1)
        with time_limit(1e12):  # no OverflowError: a limit beyond a day is as good as none
            pass
        assert signal.getsignal(signal.SIGALRM) is mine and signal.getitimer(signal.ITIMER_REAL)[0] == 0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
