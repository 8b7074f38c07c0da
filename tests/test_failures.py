"""A map whose stage raises is reported with recipe / map / stage; the other maps still build."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import ClassVar, Iterator

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import SMALL_RECIPE, tree_digests
from pipeline import registry
from pipeline.commands.app import app
from pipeline.level import Level
from pipeline.output import spans
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
    assert f"{len(failing)} map{'s' if len(failing) > 1 else ''} failed" in result.output
    # Not a terminal: the table is plain columns, nothing cut; the maps that failed alike share a row.
    rows = re.findall(r"^(\S+)  +([\d, -]+?)  +(\S+)  +(ValueError: .*)$", result.output, re.M)
    assert [(r[0], r[1], r[2]) for r in rows] == [("recipes/small.toml", spans(failing), "flaky")]
    assert all(r[3].startswith("ValueError: the flaky stage gave up") for r in rows)
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
    assert "no stage finished" in again.output  # not "ran nothing": the flaky stage ran, and failed


class Crash(StageParams):
    """Test stage: kills the worker process it runs in."""

    arity: ClassVar[tuple[int, int]] = (1, 1)

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        os._exit(3)


def test_a_dead_worker_fails_its_maps_and_the_next_pack_still_builds(
    project: Path, monkeypatch: pytest.MonkeyPatch, flaky_kind: None
) -> None:
    registry.kinds()
    stage("test.crash", version=1)(Crash)
    try:
        monkeypatch.chdir(project)
        crashing = SMALL_RECIPE.replace('name = "small"', 'name = "crashing"').replace(
            'input = "maze"\ntile_size', 'input = "crash"\ntile_size'
        )
        crashing += '\n[stage.crash]\nuse = "test.crash"\ninput = "maze"\n'
        (project / "recipes" / "a_crashing.toml").write_text(crashing)
        result = CliRunner().invoke(app, ["build", "recipes", "-j", "2"])
        assert result.exit_code == 1
        assert "worker lost" in result.output
        assert "small: built 6/6 maps" in result.output  # built after the crash, on a fresh pool
        assert (project / "exports" / "small" / "manifest.json").is_file()
        assert not (project / "exports" / "crashing" / "map_000.tmx").exists()
    finally:
        del registry._KINDS["test.crash"]


def test_a_failed_map_builds_once_its_stage_is_fixed(project: Path, monkeypatch: pytest.MonkeyPatch, flaky_kind: None) -> None:
    monkeypatch.chdir(project)
    recipe = SMALL_RECIPE.replace('input = "maze"\ntile_size', 'input = "flaky"\ntile_size')
    (project / "recipes" / "small.toml").write_text(recipe + '\n[stage.flaky]\nuse = "test.flaky"\ninput = "maze"\nthreshold = 0.5\n')
    runner = CliRunner()
    assert runner.invoke(app, ["build", "recipes", "-j", "1"]).exit_code == 1
    (project / "recipes" / "small.toml").write_text(recipe + '\n[stage.flaky]\nuse = "test.flaky"\ninput = "maze"\nthreshold = 0.0\n')
    fixed = runner.invoke(app, ["build", "recipes", "-j", "1"])
    assert fixed.exit_code == 0, fixed.output
    assert "built 6/6 maps" in fixed.output
    assert "Nothing to do" in runner.invoke(app, ["build", "recipes"]).output


def test_a_failed_rebuild_of_a_hand_edited_map_keeps_its_files(
    project: Path, monkeypatch: pytest.MonkeyPatch, flaky_kind: None
) -> None:
    """Map 3 edited by hand, then its rebuild fails: the manifest stops claiming map 3 (it no
    longer describes the disk), but none of its files is deleted, the edited one least."""
    monkeypatch.chdir(project)
    recipe = SMALL_RECIPE.replace('input = "maze"\ntile_size', 'input = "flaky"\ntile_size')
    flaky = '\n[stage.flaky]\nuse = "test.flaky"\ninput = "maze"\nthreshold = {}\n'
    (project / "recipes" / "small.toml").write_text(recipe + flaky.format(0.0))
    runner = CliRunner()
    assert runner.invoke(app, ["build", "recipes", "-j", "1"]).exit_code == 0
    pack = project / "exports" / "small"
    edited = pack / "map_003.tmx"
    edited.write_text(edited.read_text().replace("<map ", "<map class=\"mine\" ", 1))
    before = tree_digests(pack)
    (project / "recipes" / "small.toml").write_text(recipe + flaky.format(1.0))  # every map now fails
    assert runner.invoke(app, ["build", "recipes", "-j", "1"]).exit_code == 1
    after = tree_digests(pack)
    pack_files = ("manifest.json", "contact_sheet.png", "maps.tiled-project")  # made again without map 3
    assert {k: v for k, v in after.items() if k not in pack_files} == {k: v for k, v in before.items() if k not in pack_files}
    import json

    manifest = json.loads((pack / "manifest.json").read_text())
    assert [m["index"] for m in manifest["maps"]] == [0, 1, 2, 4, 5]


def test_a_build_whose_every_map_fails_leaves_the_contact_sheet_as_it_was(
    project: Path, monkeypatch: pytest.MonkeyPatch, flaky_kind: None
) -> None:
    """The exporter now draws a new stage that fails on every map: the maps keep their files,
    and the sheet keeps its captions (the kept maps' stats, not the new stage's, which none has)."""
    monkeypatch.chdir(project)
    runner = CliRunner()
    assert runner.invoke(app, ["build", "recipes", "-j", "1"]).exit_code == 0
    pack = project / "exports" / "small"
    before = tree_digests(pack)
    recipe = SMALL_RECIPE.replace('input = "maze"\ntile_size', 'input = "flaky"\ntile_size')
    (project / "recipes" / "small.toml").write_text(recipe + '\n[stage.flaky]\nuse = "test.flaky"\ninput = "maze"\nthreshold = 1.0\n')
    failed = runner.invoke(app, ["build", "recipes", "-j", "1"])
    assert failed.exit_code == 1
    assert re.search(r"0-5\s+flaky\s+ValueError: the flaky stage gave up", failed.output), failed.output  # one row for six maps
    after = tree_digests(pack)
    assert {k: v for k, v in after.items() if k != "manifest.json"} == {k: v for k, v in before.items() if k != "manifest.json"}
