"""A first run (kernels not compiled yet) with several workers runs the first stale map of every
pack at once, so the workers compile different kernels side by side; what it builds is exactly
what any other build makes, and no map runs twice."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from conftest import recipe_text, tree_digests, write_recipe
from pipeline.building import workspace as workspace_module
from pipeline.building.executor import Executor, Outcome, SerialExecutor
from pipeline.building.worker import Batch
from pipeline.building.workspace import Workspace


class TwoWorkers(SerialExecutor):
    """Runs in this process, but says it has two workers; records each `results` call, and can
    lose the batches of the first one (as a killed worker loses those queued with it)."""

    workers = 2  # type: ignore[assignment]

    def __init__(self, lose_first: bool = False) -> None:
        self.calls: list[list[tuple[str, tuple[int, ...]]]] = []
        self.lose_first = lose_first

    def results(self, batches: list[Batch]) -> Iterator[Outcome]:
        if not all(isinstance(b, Batch) for b in batches):  # a pack measured once its maps are made
            yield from super().results(batches)
            return
        self.calls.append([(b.recipe.pack.name, tuple(t.index for t in b.tasks)) for b in batches])
        if self.lose_first and len(self.calls) == 1:
            for batch in batches:
                yield batch, RuntimeError("worker lost")
            return
        yield from super().results(batches)


def build(root: Path, executor: Executor, cold: bool, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(workspace_module, "kernels_cached", lambda: not cold)

    @contextlib.contextmanager
    def compiles(notice):  # type: ignore[no-untyped-def]
        # This process compiled its kernels long ago: a cold build's workers would compile them.
        if cold:
            notice()
        yield

    monkeypatch.setattr(workspace_module, "notice_compiles", compiles)
    ws = Workspace(root / "exports", root / ".pcg-cache")
    recipes, problems = ws.load([root / "recipes"])
    assert not problems
    told: list[str] = []
    outcome = ws.build(recipes, lambda todo: contextlib.nullcontext(executor), compiling=lambda first_run: told.append("compiling" if first_run else "compiling more"))
    assert not outcome.problems
    return outcome, told


def two_packs(root: Path) -> None:
    root.mkdir(exist_ok=True)
    write_recipe(root, "a", recipe_text("a", seed=1, maps=3))
    write_recipe(root, "b", recipe_text("b", seed=2, maps=4, cells=(6, 5)))


@pytest.mark.parametrize("lose_first", [False, True])
def test_a_cold_build_runs_each_packs_first_map_ahead_and_builds_the_same_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lose_first: bool) -> None:
    cold, warm = tmp_path / "cold", tmp_path / "warm"
    for root in (cold, warm):
        two_packs(root)
    executor = TwoWorkers(lose_first)
    outcome, told = build(cold, executor, True, monkeypatch)
    assert told == ["compiling"]
    assert executor.calls[0] == [("a", (0,)), ("b", (0,))]  # first, one map of each pack
    # Then each pack's other maps (or all of them, where the map run ahead was lost).
    first = 0 if lose_first else 1
    assert [sorted(i for b in call for i in b[1]) for call in executor.calls[1:]] == [list(range(first, 3)), list(range(first, 4))]
    for _, report in outcome.reports:  # every map built, none twice
        assert report.built == report.maps and not report.failures
        assert report.stage_runs["maze"] == report.maps

    plain = TwoWorkers()
    _, told = build(warm, plain, False, monkeypatch)
    assert told == [] and len(plain.calls) == 2  # kernels cached: nothing ahead
    assert tree_digests(cold / "exports") == tree_digests(warm / "exports")


def test_nothing_runs_ahead_for_a_single_pack_or_a_single_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "one").mkdir()
    write_recipe(tmp_path / "one", "a", recipe_text("a", maps=3))
    executor = TwoWorkers()
    build(tmp_path / "one", executor, True, monkeypatch)
    assert len(executor.calls) == 1  # the pack's build alone

    two_packs(tmp_path / "two")
    executor = TwoWorkers()
    executor.workers = 1
    _, told = build(tmp_path / "two", executor, True, monkeypatch)
    assert told == ["compiling"] and len(executor.calls) == 2


def test_a_cold_build_on_two_workers_writes_what_a_one_worker_build_writes(tmp_path: Path) -> None:
    """The real thing: worker processes compiling into an empty kernel cache."""
    roots = {jobs: tmp_path / f"j{jobs}" for jobs in ("1", "2")}
    for jobs, root in roots.items():
        root.mkdir()
        write_recipe(root, "mazes", recipe_text("mazes", maps=5))
        # A second pack, with stages of its own: the workers compile different kernels.
        write_recipe(root, "kruskal", recipe_text("kruskal", maps=3).replace("maze.backtracker", "maze.kruskal"))
        env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / f"numba-{jobs}"), "COLUMNS": "200", "NO_COLOR": "1"}
        proc = subprocess.run([sys.executable, "-m", "pipeline", "build", "recipes", "-j", jobs], cwd=root, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith("compiling kernels, first run only"), proc.stdout
    assert tree_digests(roots["1"] / "exports") == tree_digests(roots["2"] / "exports")
