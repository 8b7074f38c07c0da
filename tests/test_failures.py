"""A map whose stage raises is reported with recipe / map / stage; the other maps still build."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Iterator

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import SMALL_RECIPE, tree_digests
from pipeline import registry
from pipeline.cli import app
from pipeline.level import Level
from pipeline.registry import StageParams, stage
from pipeline.seeds import rng_for, stage_seed


class Flaky(StageParams):
    """Test stage: passes its input through, but fails on maps whose first draw is below `threshold`."""

    arity: ClassVar[tuple[int, int]] = (1, 1)
    threshold: float = 0.5

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        if rng.random() < self.threshold:
            raise ValueError("the flaky stage gave up")
        return inputs[0]


@pytest.fixture
def flaky_kind() -> Iterator[None]:
    registry.kinds()
    stage("test.flaky", version=1)(Flaky)
    yield
    del registry._KINDS["test.flaky"]


def failing_maps(maps: int, seed: int, threshold: float) -> list[int]:
    return [i for i in range(maps) if rng_for(stage_seed(i, "flaky", seed)).random() < threshold]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_failing_maps_are_listed_and_the_others_build(
    project: Path, monkeypatch: pytest.MonkeyPatch, flaky_kind: None, jobs: str
) -> None:
    monkeypatch.chdir(project)
    runner = CliRunner()
    first = runner.invoke(app, ["build", "recipes", "-q", "-j", jobs])
    assert first.exit_code == 0, first.output
    good = tree_digests(project / "exports" / "small")

    recipe = SMALL_RECIPE.replace('input = "maze"\ntile_size', 'input = "flaky"\ntile_size')
    recipe += '\n[stage.flaky]\nuse = "test.flaky"\ninput = "maze"\nthreshold = 0.5\n'
    (project / "recipes" / "small.toml").write_text(recipe)
    failing = failing_maps(6, 42, 0.5)
    assert 0 < len(failing) < 6  # the seed gives a mix; otherwise this test would prove nothing

    result = runner.invoke(app, ["build", "recipes", "-j", jobs])
    assert result.exit_code == 1
    assert f"{len(failing)} map(s) failed" in result.output
    for i in failing:
        assert f"recipes/small.toml │ {i}   │ flaky │ ValueError: the flaky stage gave up" in result.output
    assert f"built {6 - len(failing)}/6 maps" in result.output
    after = tree_digests(project / "exports" / "small")
    for i in failing:
        # The failed map keeps its earlier good file; the others were rewritten through the new stage chain.
        assert after[f"map_{i:03d}.tmx"] == good[f"map_{i:03d}.tmx"]
    ok = [i for i in range(6) if i not in failing]
    assert all(after[f"map_{i:03d}.tmx"] != good[f"map_{i:03d}.tmx"] for i in ok)

    again = runner.invoke(app, ["build", "recipes", "-j", jobs])
    assert again.exit_code == 1  # failed maps stay stale until they build
    assert "built 0/6 maps" in again.output
