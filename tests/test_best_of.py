"""`filter` with `best`: the best of N attempts by a stat, and the report of a filter nothing passes."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

import pipeline
from conftest import pcg, tree_digests, write_recipe
from pipeline.best import aim_score
from pipeline.level import Level, Symbol
from pipeline.recipe.load import load_recipe
from pipeline.seeds import rng_for, stage_seed
from pipeline.stages.filter import Filter, _aims

RECIPE = """\
[pack]
name = "boards"
seed = 504
maps = 3

[stage.board]
use = "dungeon.blob_map"
size = [8, 8]
colors = 4
dispersion = 0.6

[stage.rated]
use = "puzzle.flood_it"
input = "board"

[stage.keep]
use = "filter"
input = "rated"
{keep}

[stage.png]
use = "export.png"
input = "keep"
"""


def difficulties(path: Path, index: int, attempts: int) -> list[int]:
    """The difficulty of each of a map's first attempts, made here stage by stage."""
    recipe = load_recipe(path)
    board, rated = recipe.by_name["board"].params, recipe.by_name["rated"].params
    out = []
    for attempt in range(attempts):
        seed = recipe.pack.seed
        level: Level = board.run([], rng_for(stage_seed(index, "board", seed, attempt)))
        level = rated.run([level], rng_for(stage_seed(index, "rated", seed, attempt)))
        out.append(int(level.properties["difficulty"]))
    return out


def build(project: Path, keep: str) -> dict:
    path = write_recipe(project, "boards", RECIPE.format(keep=keep))
    result = pipeline.build(path, jobs=1)
    assert result.ok, result.failures
    return json.loads((project / "exports" / "boards" / "manifest.json").read_text())


def test_best_of_keeps_the_highest_of_n_attempts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    manifest = build(tmp_path, 'best = { stat = "difficulty", of = 6 }')
    for entry in manifest["maps"]:
        tried = difficulties(tmp_path / "recipes" / "boards.toml", entry["index"], 6)
        winner = tried.index(max(tried))  # the earliest of equal bests
        assert entry.get("attempt", 0) == winner
        assert entry["stats"]["difficulty"] == max(tried)


def test_a_band_prefers_attempts_inside_it_then_the_closest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    manifest = build(tmp_path, 'best = { stat = "difficulty", of = 5, aim = [5, 5] }')
    for entry in manifest["maps"]:
        tried = difficulties(tmp_path / "recipes" / "boards.toml", entry["index"], 5)
        scores = [aim_score((5.0, 5.0), d) for d in tried]
        assert entry.get("attempt", 0) == scores.index(max(scores))
    assert aim_score((8, 12), 10) == aim_score((8, 12), 8) == 0 > aim_score((8, 12), 13) > aim_score((8, 12), 6)


def test_best_counts_only_attempts_that_pass_where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    manifest = build(tmp_path, 'where = "difficulty >= 6"\nattempts = 40\nbest = { stat = "difficulty", of = 2, aim = "min" }')
    for entry in manifest["maps"]:
        tried = difficulties(tmp_path / "recipes" / "boards.toml", entry["index"], 40)
        passing = [a for a, d in enumerate(tried) if d >= 6][:2]
        assert entry.get("attempt", 0) == min(passing, key=lambda a: (tried[a], a))


@pytest.mark.parametrize("keep", ['where = "difficulty >= 7"\nattempts = 40', 'best = { stat = "difficulty", of = 3 }'])
def test_the_build_line_counts_the_stage_runs_of_every_attempt(tmp_path: Path, keep: str) -> None:
    """Not only those of the attempt kept: tuning a filter is blind when 40 attempts read as one."""
    write_recipe(tmp_path, "boards", RECIPE.format(keep=keep))
    line = pcg("build", "recipes", cwd=tmp_path).stdout
    if "best" in keep:
        made = 3 * 3
    else:
        made = sum(next(a for a, d in enumerate(difficulties(tmp_path / "recipes" / "boards.toml", i, 40)) if d >= 7) + 1 for i in range(3))
        assert made > 3  # some map was made more than once, or this proves nothing
    assert f"ran board x{made}, rated x{made}, keep x{made}, png x3" in line, line
    # --force makes every attempt anew, not only the first of each map.
    forced = pcg("build", "recipes", "--force", cwd=tmp_path).stdout
    assert f"ran board x{made}, rated x{made}, keep x{made}, png x3" in forced, forced


def test_explain_says_a_map_starts_over_when_its_filter_changes(tmp_path: Path) -> None:
    # Its first stages get the keys of attempt 0 again: "cache key changed" told nothing.
    write_recipe(tmp_path, "boards", RECIPE.format(keep='where = "difficulty >= 7"\nattempts = 40'))
    pcg("build", "recipes", "-q", cwd=tmp_path)
    kept = [m.get("attempt", 0) for m in json.loads((tmp_path / "exports" / "boards" / "manifest.json").read_text())["maps"]]
    assert any(kept)  # or this proves nothing
    write_recipe(tmp_path, "boards", RECIPE.format(keep='where = "difficulty >= 6"\nattempts = 40'))
    explain = " ".join(pcg("explain", "recipes/boards.toml", cwd=tmp_path).stdout.split())
    starts_over = "stage 'keep' or a stage before it changed, so the map starts over from attempt 0"
    assert f"{starts_over} ({sum(a > 0 for a in kept)} map" in explain, explain  # one reason, the maps counted
    assert "cache key changed" not in explain, explain


def test_best_of_is_the_same_with_two_workers_and_verifies(tmp_path: Path) -> None:
    write_recipe(tmp_path, "boards", RECIPE.format(keep='best = { stat = "difficulty", of = 4 }'))
    pcg("build", "recipes", "-q", cwd=tmp_path)
    assert "OK" in pcg("verify", "exports/boards", cwd=tmp_path).stdout
    pcg("build", "recipes", "-q", "-j", "2", "--out", "again", "--cache", ".cache2", cwd=tmp_path)
    assert tree_digests(tmp_path / "again") == tree_digests(tmp_path / "exports")


def test_a_filter_nothing_passes_reports_the_best_value_and_the_spread(tmp_path: Path) -> None:
    write_recipe(tmp_path, "boards", RECIPE.format(keep='where = "difficulty > 1000"\nattempts = 7'))
    result = pcg("build", "recipes", cwd=tmp_path, check=False)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    tried = difficulties(tmp_path / "recipes" / "boards.toml", 0, 7)
    best = max(tried)
    expected = (
        f"no attempt of 7 passed `difficulty > 1000`: best difficulty {best} (attempt {tried.index(best)}); "
        f"spread {min(tried)}-{best}, median {statistics.median(tried):g}"
    )
    assert expected in " ".join(result.stderr.split()), result.stderr


def test_texts_ordered_against_texts_are_a_test_a_quoted_number_is_not() -> None:
    assert Filter.model_validate({"where": 'theme < "m" and difficulty >= 3'}).where
    assert Filter.model_validate({"where": 'theme == "60"'}).where  # == compares anything


def test_the_report_takes_directions_from_the_test() -> None:
    assert _aims("difficulty >= 8") == {"difficulty": "max"}
    assert _aims("3 > loops and regions == 1") == {"loops": "min", "regions": (1.0, 1.0)}
    assert _aims("8 <= d <= 12") == {"d": (8.0, 12.0)}
    assert _aims("a > 3 or b < 2") == {} and _aims("") == {}


def test_without_best_the_params_are_what_they_were() -> None:
    # The cache keys and manifests of filters built before `best` existed stay the same.
    assert Filter(where="x > 1").model_dump(mode="json") == {"where": "x > 1", "attempts": 100}


@pytest.mark.parametrize(
    ("keep", "expected"),
    [
        ('attempts = 3\nbest = { stat = "difficulty", of = 4 }', "stage.keep: best.of = 4 is more than attempts = 3"),
        ('best = { stat = "difficulty", of = 4, aim = [9, 2] }', "stage.keep.best.aim: a band must be [low, high]"),
        ('best = { stat = "difficulty", of = 4, aim = "most" }', "stage.keep.best.aim"),
        ("attempts = 3", "stage.keep: give where (a test), best (a choice), or both"),
        # Caught as the recipe loads, not after every attempt of every map.
        ('where = "difficulty >= 5 and difficulty < 3"', "stage.keep.where: can never pass: difficulty would have to be >= 5 and < 3"),
        ("where = 'difficulty >= \"6\"'", "stage.keep.where: orders by the text '6', a number in quotes: write numbers without quotes"),
        # A second chooser would never be asked: the map is made again as a whole.
        (
            'best = { stat = "difficulty", of = 2 }\n\n[stage.again]\nuse = "filter"\ninput = "keep"\nbest = { stat = "moves_greedy", of = 2 }',
            "stage.again.best: stage.keep chooses the best of several attempts already",
        ),
    ],
)
def test_bad_best_is_one_clear_error(tmp_path: Path, keep: str, expected: str) -> None:
    write_recipe(tmp_path, "boards", RECIPE.format(keep=keep))
    result = pcg("build", "recipes", cwd=tmp_path, check=False)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "recipes/boards.toml" in result.stderr and expected in " ".join(result.stderr.split()), result.stderr


def _judged(filter_: Filter, **properties: object) -> str | None:
    """None if `properties` pass, else why the filter turned them down."""
    import numpy as np

    from pipeline.errors import Rejected

    level = Level(np.zeros((1, 1), dtype=np.uint8), (Symbol("B", "wall", "#000000"),), properties=dict(properties))  # type: ignore[arg-type]
    try:
        filter_.run([level], np.random.default_rng(0))
    except Rejected as rejected:
        return rejected.problems[0]
    return None


def test_a_stat_a_map_leaves_out_fails_the_attempt_not_the_map() -> None:
    # flood_it leaves moves_optimal out when search_budget does not settle it: that attempt has
    # not passed, and the next is tried (it used to fail the map outright on attempt 0).
    keep = Filter(where="moves_optimal >= 5", attempts=10)
    assert _judged(keep, moves_optimal=6) is None
    assert _judged(keep, moves_greedy=9) == "where 'moves_optimal >= 5' failed (moves_optimal not measured)"
    assert _judged(Filter(where="moves_optimal < 5 or moves_greedy > 8", attempts=10), moves_greedy=9) is None
    # Unknown, not false: `not` does not make an unmeasured stat pass.
    for where in ("not moves_optimal < 5", "not (moves_optimal >= 5 and moves_greedy > 3)", "moves_greedy > 9 or not moves_optimal > 3"):
        assert _judged(Filter(where=where, attempts=10), moves_greedy=9) is not None, where
    # Decided without it: the `and` is false whatever moves_optimal would be.
    assert _judged(Filter(where="not (moves_optimal >= 5 and moves_greedy < 3)", attempts=10), moves_greedy=9) is None
    best = Filter(best={"stat": "moves_optimal", "of": 2}, attempts=10)
    assert _judged(best, moves_greedy=9) == "best: moves_optimal not measured"


def test_text_compared_with_a_number_is_one_clear_error() -> None:
    from pipeline.errors import PipelineError

    for where, props, message in (
        ("region_sizes > 3", {"region_sizes": "15,9,7"}, "where: 'region_sizes' is text ('15,9,7'), compared with the number 3: {why} in 'region_sizes > 3'"),
        ("entrance == 3", {"entrance": "0,0"}, "where: 'entrance' is text ('0,0'), compared with the number 3: {why} in 'entrance == 3'"),
        ("3 != entrance", {"entrance": "0,0"}, "where: 'entrance' is text ('0,0'), compared with the number 3: {why} in '3 != entrance'"),
        ("theme == true", {"theme": "ice"}, "where: 'theme' is text ('ice'), compared with true: {why} in 'theme == true'"),
        ("entrance < doors", {"entrance": "0,0", "doors": 3}, "where: 'entrance' is text ('0,0'), compared with 'doors', a number (3): {why} in 'entrance < doors'"),
        ("loops == false", {"loops": 0}, "where: 'loops' is a number (0), compared with false: {why} in 'loops == false'"),
    ):
        message = message.format(why="a stat compares only with a value of its own kind")
        with pytest.raises(PipelineError) as caught:
            _judged(Filter(where=where, attempts=3), **props)
        assert caught.value.problems == [message]
    assert _judged(Filter(where='theme == "ice"', attempts=3), theme="ice") is None
    assert _judged(Filter(where="solid == true and area > 2.5", attempts=3), solid=True, area=3) is None  # int and float are one kind
    import numpy as np

    assert _judged(Filter(where="solved == true", attempts=3), solved=np.bool_(True)) is None  # a plugin's numpy bool is true/false


@pytest.mark.parametrize("keep", ['where = "difficulty >= {d}"\nattempts = 400', 'where = "difficulty >= {d}"\nattempts = 400\nbest = {{ stat = "difficulty", of = 2 }}'])
def test_only_the_first_attempts_and_the_kept_one_fill_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keep: str) -> None:
    # A filter that rarely passes, with a large `attempts`, once filled the disk with Levels
    # before the build's end could trim the cache.
    from pipeline.building import worker
    from pipeline.building.cache import LevelCache
    from pipeline.building.plan import KeyMaker

    monkeypatch.setattr(worker, "CACHED_ATTEMPTS", 3)
    path = tmp_path / write_recipe(tmp_path, "boards", RECIPE.format(keep="where = \"colors > 0\""))
    tries = difficulties(path, 0, 40)
    hard = max(tries[5:])  # first reached after attempt 4: past the attempts cached as made
    assert hard > max(tries[:5])
    recipe = load_recipe(tmp_path / write_recipe(tmp_path, "boards", RECIPE.format(keep=keep.format(d=hard))))
    maker = KeyMaker(recipe)
    keys = maker.keys(0)
    task = worker.MapTask(
        index=0, stem="map_000", keys={n: k for n, (k, _) in keys.items()}, seeds={n: s for n, (_, s) in keys.items()},
        run=tuple(keys), exports=("png",),
    )
    cache = LevelCache(tmp_path / "cache")
    result = worker.run_map(recipe, cache, task)
    assert result.failure is None
    kept = result.attempt
    assert tries[kept] >= hard and kept >= 5

    def cached(attempt: int) -> bool:
        return cache.has(maker.keys(0, attempt)["board"][0])

    assert [cached(a) for a in range(3)] == [True] * 3  # made before any filter could judge them
    # Past those, only attempts that passed: the kept one, and with best the others it was compared with.
    passing = [a for a in range(3, 40) if tries[a] >= hard]
    expected = passing[:2] if "best" in keep else [kept]
    assert [a for a in range(3, 40) if cached(a)] == expected and kept in expected
    assert cache.has(maker.keys(0, kept)["keep"][0])


def test_a_report_says_which_stat_was_never_measured() -> None:
    keep = Filter(where="moves_optimal >= 5", attempts=2)
    tried = [(0, {"moves_optimal": "not measured"}), (1, {"moves_optimal": 3})]
    assert keep.rejection_report(tried, 2) == (
        "no attempt of 2 passed `moves_optimal >= 5`: moves_optimal not measured in 1 of 2 attempts; best moves_optimal 3"
        " (attempt 1); spread 3-3, median 3 (raise attempts, loosen where, or let the stage measure what it left out)"
    )
    only_best = Filter(best={"stat": "moves_optimal", "of": 2}, attempts=2)
    assert only_best.rejection_report([(0, {"moves_optimal": "not measured"})], 1) == (
        "no attempt of 1 passed `best: moves_optimal measured`: moves_optimal not measured in 1 of 1 attempts"
        " (raise attempts, loosen where, or let the stage measure what it left out)"
    )
