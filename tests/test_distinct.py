"""`pack.distinct`: no map closer than `min` to an earlier map, the same pack from the same seeds.

The walk is checked against the rule written out plainly (hypothesis); whole builds are read back
from their TMX files with pytmx and every pair measured; incremental builds, `--map`, `pcg
verify`, and a build killed or stopped while it chooses are checked for real.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
import pytmx
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.building.distinct import Chooser
from pipeline.diversity import Kept, Print, tile_distances
from pipeline.recipe.model import Distinct
from tests.conftest import pcg, recipe_text, tree_digests, write_recipe
from tests.test_faults import GATE_PLUGIN, start_build

PACK = Path("exports") / "small"


def distinct_recipe(distinct: str, maps: int = 12, cells: tuple[int, int] = (8, 8), seed: int = 42) -> str:
    return recipe_text(maps=maps, cells=cells, seed=seed).replace("[pack]\n", f"[pack]\ndistinct = {distinct}\n", 1)


def manifest(project: Path) -> dict:
    return json.loads((project / PACK / "manifest.json").read_text())


def attempts(project: Path) -> dict[int, int]:
    return {m["index"]: m.get("attempt", 0) for m in manifest(project)["maps"]}


def tmx_grids(project: Path) -> list[np.ndarray]:
    """Each map's tiles as the TMX file has them (global tile ids), read back with pytmx."""
    grids = []
    for path in sorted((project / PACK).glob("map_*.tmx")):
        tmx = pytmx.TiledMap(str(path), load_all_tiles=False)
        layer = next(layer for layer in tmx.visible_layers if isinstance(layer, pytmx.TiledTileLayer))
        grids.append(np.array([[layer.data[y][x] for x in range(tmx.width)] for y in range(tmx.height)]))
    return grids


def nearest_pairs(grids: list[np.ndarray]) -> float:
    return min(float((a != b).mean()) for a, b in combinations(grids, 2))


# ---------------------------------------------------------------------------------------------
# The walk, against the rule written out plainly


def grid_print(cells: list[int]) -> Print:
    return Print("tiles", (2, 3), np.array(cells, dtype=np.int16).reshape(2, 3), ("floor", "wall"))


def plain_rule(candidates: list[list[Print | None]], least: float, most: int) -> tuple[dict[int, int], set[int]]:
    """Map by map: the first of its first `most` passing attempts (None: a filter turned it down)
    at least `least` from every map kept; a map with none fails."""
    kept: list[Print] = []
    picks: dict[int, int] = {}
    refused: set[int] = set()
    for index, tried in enumerate(candidates):
        passing = [(a, p) for a, p in enumerate(tried) if p is not None][:most]
        for attempt, made in passing:
            if all(float((made.grid != other.grid).mean()) >= least for other in kept):
                kept.append(made)
                picks[index] = attempt
                break
        else:
            refused.add(index)
    return picks, refused


def walked(candidates: list[list[Print | None]], least: float, most: int) -> tuple[dict[int, int], set[int], int]:
    """The Chooser's answer, each probe making the first passing attempt from where it starts
    (or failing, as a filter out of attempts does), and the rounds it took."""
    chooser = Chooser(Distinct(min=least, attempts=most), list(range(len(candidates))), {})
    rounds = 0
    while wanted := chooser.wanted():
        rounds += 1
        for index, start in wanted:
            found = next((a for a in range(start, len(candidates[index])) if candidates[index][a] is not None), None)
            if found is None:
                chooser.add(index, start, start, None, ("filter", "no attempt passed"))
            else:
                chooser.add(index, start, found, candidates[index][found], None)
    choice = chooser.choice()
    return choice.picks, set(choice.refused), rounds


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.lists(st.one_of(st.none(), st.lists(st.integers(0, 1), min_size=6, max_size=6).map(grid_print)), min_size=1, max_size=6), min_size=1, max_size=7),
    st.sampled_from([0.1, 0.3, 0.5, 0.7]),
    st.integers(1, 4),
)
def test_the_rounds_walk_to_the_rule_itself(candidates: list[list[Print | None]], least: float, most: int) -> None:
    picks, refused, _ = walked(candidates, least, most)
    assert (picks, refused) == plain_rule(candidates, least, most)


def test_a_map_kept_while_an_earlier_one_waits_loses_its_place_when_that_one_settles() -> None:
    a, b = grid_print([0] * 6), grid_print([1] * 6)
    # Map 0's first attempt is filtered out; its second is b. Map 1 is b at once: kept in round
    # one while map 0 waits, then redrawn to a once map 0 keeps b.
    candidates: list[list[Print | None]] = [[None, b], [b, a]]
    picks, refused, rounds = walked(candidates, 0.5, 3)
    assert picks == {0: 1, 1: 1} and not refused and rounds >= 2


def test_kept_measures_tiles_by_name_and_maps_of_other_sizes_top_left() -> None:
    kept = Kept()
    kept.add(0, Print("tiles", (2, 3), np.array([[0, 0, 0], [1, 1, 1]], dtype=np.int16), ("floor", "wall")))
    # The same map with its alphabet the other way round.
    same = Print("tiles", (2, 3), np.array([[1, 1, 1], [0, 0, 0]], dtype=np.int16), ("wall", "floor"))
    assert kept.nearest(same) == (0.0, 0)
    wider = Print("tiles", (2, 4), np.array([[0, 0, 0, 0], [1, 1, 1, 1]], dtype=np.int16), ("floor", "wall"))
    assert kept.nearest(wider) == (pytest.approx(2 / 8), 0)


def test_the_tile_distances_of_a_pack_agree_with_the_walks() -> None:
    from pipeline.level import Level
    from pipeline.stages.maze.block import MAZE_ALPHABET

    rng = np.random.default_rng(3)
    levels = [Level(tiles=rng.integers(0, 2, (h, w)).astype(np.uint8), alphabet=MAZE_ALPHABET) for h, w in [(4, 5), (5, 4), (4, 5)]]
    d = tile_distances(levels)
    for j, level in enumerate(levels):
        kept = Kept()
        for i, other in enumerate(levels):
            if i != j:
                kept.add(i, Print("tiles", other.tiles.shape, other.tiles.astype(np.int16), tuple(s.name for s in other.alphabet)))
        distance, near = kept.nearest(Print("tiles", level.tiles.shape, level.tiles.astype(np.int16), tuple(s.name for s in level.alphabet)))
        assert distance == pytest.approx(min(d[j, i] for i in range(3) if i != j))


# ---------------------------------------------------------------------------------------------
# Whole builds


def test_every_two_maps_of_a_built_pack_stand_apart_as_the_files_show(project: Path, tmp_path: Path) -> None:
    least = 0.155
    write_recipe(project, "small", recipe_text(maps=16, cells=(8, 8)))
    pcg("build", "recipes", "-q", cwd=project)
    assert nearest_pairs(tmx_grids(project)) < least  # without distinct, some maps are closer
    write_recipe(project, "small", distinct_recipe(str(least), maps=16))
    out = pcg("build", "recipes", "-j", "2", cwd=project).stdout
    grids = tmx_grids(project)
    assert len(grids) == 16 and nearest_pairs(grids) >= least
    redrawn = {i: a for i, a in attempts(project).items() if a}
    assert redrawn, "no map was redrawn: the test measures nothing"
    assert manifest(project)["distinct"]["through"] == 16
    assert f"built {len(redrawn)}/16 maps" in out  # only the redrawn maps were made again
    # The same seeds give the same pack: a fresh project, one worker.
    other = tmp_path / "other"
    other.mkdir()
    write_recipe(other, "small", distinct_recipe(str(least), maps=16))
    pcg("build", "recipes", "-j", "1", "-q", cwd=other)
    assert tree_digests(other / PACK) == tree_digests(project / PACK)
    assert pcg("verify", str(PACK), cwd=project).returncode == 0
    # Built again, nothing changes and no attempt is made.
    assert pcg("build", "recipes", cwd=project).stdout == "Nothing to do: 1 pack up to date (16 maps).\n"


def test_the_path_measure_keeps_the_ways_apart(project: Path) -> None:
    text = distinct_recipe('{ min = 0.5, measure = "path" }', maps=8)
    text = text.replace("[stage.tmx]", '[stage.ends]\nuse = "place.spawn_exit"\ninput = "maze"\n\n[stage.tmx]').replace('input = "maze"\ntile_size', 'input = "ends"\ntile_size')
    write_recipe(project, "small", text)
    pcg("build", "recipes", "-q", cwd=project)
    stats = json.loads(pcg("stats", "small", "--format", "json", cwd=project).stdout)
    path = next(s for s in stats["stages"] if s["stage"] == "ends")["diversity"]["path"]
    assert path["min"] >= 0.5 and path["threshold"] == 0.5 and path["distinct"] == 1.0  # the pack's own threshold
    assert any(attempts(project).values())


def test_an_earlier_map_rerolled_chooses_the_later_ones_again(project: Path, tmp_path: Path) -> None:
    write_recipe(project, "small", distinct_recipe("0.15", maps=12))
    pcg("build", "recipes", "-q", cwd=project)
    pcg("reroll", "small", "2", cwd=project)
    out = pcg("build", "recipes", cwd=project).stdout
    assert nearest_pairs(tmx_grids(project)) >= 0.15
    # As a fresh build of the edited recipe makes it.
    other = tmp_path / "other"
    other.mkdir()
    write_recipe(other, "small", (project / "recipes" / "small.toml").read_text())
    pcg("build", "recipes", "-q", cwd=other)
    assert tree_digests(other / PACK) == tree_digests(project / PACK), out


def test_a_map_built_alone_is_chosen_against_the_maps_before_it(project: Path, tmp_path: Path) -> None:
    write_recipe(project, "small", distinct_recipe("0.15", maps=10))
    pcg("build", "recipes", "-q", cwd=project)
    pcg("build", "recipes", "--map", "3", "-q", cwd=project)  # as it was: the maps after it stay chosen
    assert manifest(project)["distinct"]["through"] == 10
    pcg("reroll", "small", "3", cwd=project)
    pcg("build", "recipes", "--map", "3", "-q", cwd=project)
    grids = tmx_grids(project)
    assert all(float((grids[3] != g).mean()) >= 0.15 for g in grids[:3])
    assert manifest(project)["distinct"]["through"] == 3  # the maps after it were not compared with it
    pcg("build", "recipes", "-q", cwd=project)
    assert manifest(project)["distinct"]["through"] == 10
    assert nearest_pairs(tmx_grids(project)) >= 0.15
    other = tmp_path / "other"
    other.mkdir()
    write_recipe(other, "small", (project / "recipes" / "small.toml").read_text())
    pcg("build", "recipes", "-q", cwd=other)
    assert tree_digests(other / PACK) == tree_digests(project / PACK)


def test_a_map_that_cannot_stand_apart_fails_with_the_numbers_and_the_others_build(project: Path) -> None:
    write_recipe(project, "small", distinct_recipe("{ min = 0.3, attempts = 3 }", maps=6))
    proc = pcg("build", "recipes", cwd=project, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr
    assert "pack.distinct" in proc.stderr and "none of its first 3 attempts stands 0.3 apart" in proc.stderr
    assert "lower pack.distinct.min, or raise pack.distinct.attempts" in proc.stderr
    built = attempts(project)
    assert 0 in built and len(built) < 6  # the first map stands alone; the others failed, unwritten
    assert manifest(project)["distinct"]["through"] == min(set(range(6)) - set(built))


@pytest.mark.parametrize(
    "pack, message",
    [
        ("distinct = 1.5", "pack.distinct.min: must be <= 1.0 (got 1.5)"),
        ('distinct = { min = 0.2, stage = "mzae" }', "pack.distinct.stage: no stage named 'mzae' makes maps (did you mean 'maze'?)"),
        ('distinct = { min = 0.2, measure = "hamming" }', "pack.distinct.measure: must be one of 'tiles' or 'path' (got 'hamming')"),
    ],
)
def test_a_wrong_distinct_is_one_line_naming_the_key(project: Path, pack: str, message: str) -> None:
    write_recipe(project, "small", recipe_text().replace("[pack]\n", f"[pack]\n{pack}\n", 1))
    proc = pcg("build", "recipes", cwd=project, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert f"recipes/small.toml: {message}" in proc.stderr, proc.stderr


def test_distinct_and_a_best_of_filter_are_refused_together(project: Path) -> None:
    text = distinct_recipe("0.15").replace(
        "[stage.tmx]", '[stage.pick]\nuse = "filter"\ninput = "maze"\nbest = { stat = "dead_ends", of = 3 }\n\n[stage.tmx]'
    ).replace('input = "maze"\ntile_size', 'input = "pick"\ntile_size')
    write_recipe(project, "small", text)
    proc = pcg("build", "recipes", cwd=project, check=False)
    assert proc.returncode == 1 and "stage.pick.best: pack.distinct picks each map's attempt already" in proc.stderr, proc.stderr


# ---------------------------------------------------------------------------------------------
# Faults while it chooses: it writes nothing under exports/ until the build proper


@pytest.mark.parametrize("how", ["SIGKILL", "SIGINT"])
def test_a_build_killed_or_stopped_while_it_chooses_leaves_the_pack_as_it_was(project: Path, tmp_path: Path, how: str) -> None:
    entered, release = project / "entered", project / "release"
    (project / "recipes" / "stages").mkdir(parents=True, exist_ok=True)
    (project / "recipes" / "stages" / "gate.py").write_text(GATE_PLUGIN.format(entered=str(entered), release=str(release)))
    write_recipe(project, "small", recipe_text(maps=8, cells=(8, 8)))
    pcg("build", "recipes", "-q", cwd=project)
    before = tree_digests(project / PACK)
    text = distinct_recipe("0.15", maps=8).replace("[pack]\n", '[pack]\nplugins = ["stages/gate.py"]\n', 1)
    text = text.replace("[stage.tmx]", '[stage.gate]\nuse = "test.gate"\ninput = "maze"\n\n[stage.tmx]')
    text = text.replace('input = "maze"\ntile_size', 'input = "gate"\ntile_size').replace('input = "maze"\nscale', 'input = "gate"\nscale')
    write_recipe(project, "small", text)
    proc = start_build(project, "-q")
    try:
        deadline = time.monotonic() + 120
        while not entered.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert entered.exists(), proc.communicate()
        # The gate holds every attempt: the build is choosing, and has written nothing yet.
        os.killpg(proc.pid, getattr(signal, how))
        out, err = proc.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    if how == "SIGINT":
        assert proc.returncode == 130 and (out + err).strip() == "interrupted", out + err
    assert tree_digests(project / PACK) == before
    assert pcg("verify", str(PACK), cwd=project).returncode == 0
    release.touch()
    pcg("build", "recipes", "-q", cwd=project)
    assert pcg("verify", str(PACK), cwd=project).returncode == 0
    assert nearest_pairs(tmx_grids(project)) >= 0.15
    clean = tmp_path / "clean"
    (clean / "recipes" / "stages").mkdir(parents=True)
    (clean / "recipes" / "stages" / "gate.py").write_text(GATE_PLUGIN.format(entered=str(entered), release=str(release)))
    write_recipe(clean, "small", text)
    pcg("build", "recipes", "-q", cwd=clean)
    assert tree_digests(clean / PACK) == tree_digests(project / PACK)


def test_a_build_killed_while_it_writes_the_chosen_maps_is_finished_by_the_next(project: Path, tmp_path: Path) -> None:
    text = distinct_recipe("0.15", maps=150, cells=(12, 12))
    write_recipe(project, "small", text)
    proc = start_build(project, "-q")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list((project / PACK).glob("map_*.tmx"))) < 20 and proc.poll() is None:
        time.sleep(0.01)
    assert proc.poll() is None, "the build finished before the fault: give it more maps"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    pcg("build", "recipes", "-q", cwd=project)
    assert pcg("verify", str(PACK), cwd=project).returncode == 0
    clean = tmp_path / "clean"
    clean.mkdir()
    write_recipe(clean, "small", text)
    pcg("build", "recipes", "-q", cwd=clean)
    assert tree_digests(clean / PACK) == tree_digests(project / PACK)
    assert any(attempts(project).values())


def test_without_distinct_the_maps_start_over_at_attempt_0_as_a_fresh_build_makes_them(project: Path, tmp_path: Path) -> None:
    write_recipe(project, "small", distinct_recipe("0.15", maps=12))
    pcg("build", "recipes", "-q", cwd=project)
    assert any(attempts(project).values())
    plain = recipe_text(maps=12, cells=(8, 8))
    write_recipe(project, "small", plain)
    explain = pcg("explain", "recipes/small.toml", cwd=project).stdout
    assert "pack.distinct was removed, so the map starts over from attempt 0" in explain
    pcg("build", "recipes", "-q", cwd=project)
    assert not any(attempts(project).values())
    other = tmp_path / "other"
    other.mkdir()
    write_recipe(other, "small", plain)
    pcg("build", "recipes", "-q", cwd=other)
    assert {k: v for k, v in tree_digests(other / PACK).items() if k != "manifest.json"} == {
        k: v for k, v in tree_digests(project / PACK).items() if k != "manifest.json"
    }


def test_a_new_rule_or_compared_stage_is_explained_and_chooses_every_map_again(project: Path, tmp_path: Path) -> None:
    write_recipe(project, "small", distinct_recipe("0.15", maps=12))
    pcg("build", "recipes", "-q", cwd=project)
    assert pcg("explain", "recipes/small.toml", "--check", cwd=project).returncode == 0
    # The preview now draws a placed copy of the maze first: the compared stage (the first
    # exporter's input, left unset) is another, though no stage of the maze changed.
    text = distinct_recipe("0.15", maps=12).replace(
        "[stage.tmx]", '[stage.ends]\nuse = "place.spawn_exit"\ninput = "maze"\n\n[stage.tmx]'
    ).replace('input = "maze"\ntile_size', 'input = "ends"\ntile_size')
    write_recipe(project, "small", text)
    check = pcg("explain", "recipes/small.toml", "--check", cwd=project, check=False)
    assert check.returncode == 1 and "every map is chosen again" in check.stdout, check.stdout
    pcg("build", "recipes", "-q", cwd=project)
    assert pcg("explain", "recipes/small.toml", "--check", cwd=project).returncode == 0
    other = tmp_path / "other"
    other.mkdir()
    write_recipe(other, "small", text)
    pcg("build", "recipes", "-q", cwd=other)
    assert attempts(other) == attempts(project)


def test_force_makes_each_chosen_map_once(project: Path) -> None:
    write_recipe(project, "small", distinct_recipe("0.15", maps=10))
    pcg("build", "recipes", "-q", cwd=project)
    out = pcg("build", "recipes", "--force", cwd=project).stdout
    assert "ran tmx x10, preview x10" in out and "maze x" not in out, out  # the maze was made while choosing
