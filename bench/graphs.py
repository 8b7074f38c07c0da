"""`layout.graph`: level graphs laid out with room templates, timed and checked.

Three cases, each layout timed with `time.perf_counter` around the stage's `run` (the graph
drawn, keys placed and proven, the search, the map drawn), after a warm-up that compiles (or
loads) the search's kernel; every map laid out is checked on the map itself by
`pipeline.graphs.check.layout_problems` (a room per node, drawn whole; a door per connection
touching both rooms' floors; one walkable region), so "valid" is a check, not the stage's word.

- Edgar's 37 maps (`Maps/*.yml`, `Maps/Thesis/*.yml`, read unchanged from `$EDGAR`, by default
  /work/shared/edgar) with their own room sets, SEEDS seeds each, `time_limit` 10 s (Edgar's own
  timeout): how many laid out and valid, per-map median and worst time, and the 41-room graphs'
  (`41vertices.yml`, `Thesis/example3_*.yml`) median against the goal of 100 ms.
- Random graphs (`pipeline.graphs.generate`, the stage's `generate`): 10-49 rooms, 0-5 loops,
  0-2 locks, the stage's default roles, rooms the stage's default rectangles. Goals: >= 99% laid
  out, median < 100 ms, 95th percentile < 2 s. A graph that cannot be laid out costs the whole
  time limit, so the sample and the limit are sized for the module to run in a few minutes on a
  2-core machine (RANDOM graphs, limit RANDOM_LIMIT); `python -m bench.graphs --graphs 200
  --limit 10` runs a larger sample with Edgar's timeout (a few minutes).
- 200-room graphs with 10 loops, BIG samples: time per layout, goal < 5 s each (their
  time_limit: a slower layout misses the goal whether it ends or not).

Run alone: `.venv/bin/python -m bench.graphs` (about two minutes on an idle 2-core machine; every
failed layout costs its whole time limit, so a slower stage makes a slower bench). The host is
shared: a busy one stretches every time here, the failures' included.

The baselines are Edgar's published figures, NOT measured in this run (Edgar-DotNet's docs and
Nepožitek's thesis, on its own machine): keep graphs under 30 rooms, 40 with care, 60 the most
reported; a 10 s timeout; its largest example, the 41-room graph. Measured in this run as a
baseline: the graphs without loops of the random sample (`x no loops`: what loops cost).
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from bench.timing import met, ratio
from pipeline.errors import Rejected
from pipeline.graphs.check import layout_problems
from pipeline.graphs.model import LevelGraph
from pipeline.seeds import rng_for
from pipeline.stages.layout.graph import LayoutGraph

EDGAR = Path(os.environ.get("EDGAR", "/work/shared/edgar"))
SEEDS = 5
EDGAR_LIMIT = 10.0  # Edgar's timeout
FORTY_ONE = ("Maps/41vertices.yml", "Maps/Thesis/example3_advanced.yml", "Maps/Thesis/example3_basic.yml",
             "Maps/Thesis/example3_corridors.yml", "Maps/Thesis/example3_mixed.yml")
RANDOM = 60
RANDOM_LIMIT = 2.0
BIG, BIG_ROOMS, BIG_LOOPS = 10, 200, 10
GOAL_41_MS = 100
GOAL_SUCCESS = 0.99
GOAL_MEDIAN_MS = 100
GOAL_P95_S = 2.0
GOAL_BIG_S = 5.0
BIG_LIMIT = GOAL_BIG_S  # a layout slower than the goal misses it anyway


@dataclass
class Run:
    seconds: float
    laid_out: bool
    valid: bool
    rooms: int  # nodes laid out, corridor rooms included
    loops: int
    why: str = ""


def _edges(graph: LevelGraph) -> set[frozenset[str]]:
    return {frozenset((e.a, e.b)) for e in graph.edges}


def run_stage(stage: LayoutGraph, seed: tuple[int, ...]) -> Run:
    """One layout of the stage at `seed`, timed, and checked on the map it makes."""
    rng = rng_for(seed)
    # The graph the run will lay out: a fixed one, or the one `run` draws first from this stream.
    graph = stage._graph if stage._graph is not None else stage._drawn_graph(copy.deepcopy(rng))  # type: ignore[attr-defined]
    expanded = graph.with_corridors(stage._corridors)  # type: ignore[attr-defined]
    start = time.perf_counter()
    try:
        level = stage.run([], rng)
    except Rejected as exc:
        return Run(time.perf_counter() - start, False, False, len(expanded.nodes), graph.cycles(), str(exc).split(" (try")[0])
    took = time.perf_counter() - start
    problems = layout_problems(level, _edges(expanded))
    return Run(took, True, not problems, len(expanded.nodes), graph.cycles(), "; ".join(problems[:2]))


def edgar_stage(relative: str, limit: float = EDGAR_LIMIT) -> LayoutGraph:
    return LayoutGraph.model_validate({"graph": relative, "time_limit": limit}, context={"recipe_dir": str(EDGAR)})


def generated_stage(rooms: int, loops: int, locks: int, limit: float) -> LayoutGraph:
    return LayoutGraph.model_validate({"generate": {"rooms": rooms, "loops": loops, "locks": locks}, "time_limit": limit}, context={"recipe_dir": "."})


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f}"


def _p95(values: list[float]) -> float:
    return float(np.percentile(values, 95))


def edgar_maps() -> list[str]:
    return [p.relative_to(EDGAR).as_posix() for p in sorted((EDGAR / "Maps").glob("*.yml")) + sorted((EDGAR / "Maps" / "Thesis").glob("*.yml"))]


def bench_edgar(console: Console) -> None:
    maps = edgar_maps()
    table = Table(
        title=f"Edgar's {len(maps)} maps x {SEEDS} seeds, time_limit {EDGAR_LIMIT:g} s (Edgar's timeout), their own room sets",
        caption="rooms: the graph's (laid out: with corridor rooms); valid: layout_problems found nothing on the map; "
        "Edgar's advice (not measured here): under 30 rooms, 40 with care, 60 the most reported",
    )
    for col in ("map", "rooms", "laid out", "loops", "ok / seeds", "valid", "median ms", "max ms"):
        table.add_column(col, justify="right")
    every: list[Run] = []
    forty_one: list[float] = []
    misses: list[str] = []
    for relative in maps:
        stage = edgar_stage(relative)
        runs = [run_stage(stage, (seed,)) for seed in range(SEEDS)]
        every.extend(runs)
        graph = stage._graph  # type: ignore[attr-defined]
        times = [r.seconds for r in runs]
        if relative in FORTY_ONE:
            forty_one.extend(times)
        misses.extend(f"{relative} seed {s}: {r.why}" for s, r in enumerate(runs) if not r.valid)
        table.add_row(
            relative.removeprefix("Maps/"), str(len(graph.nodes)), str(runs[0].rooms), str(graph.cycles()),
            f"{sum(r.laid_out for r in runs)}/{SEEDS}", f"{sum(r.valid for r in runs)}/{SEEDS}",
            _ms(statistics.median(times)), _ms(max(times)),
        )
    console.print(table)
    ok = sum(r.laid_out for r in every)
    valid = sum(r.valid for r in every)
    median_41 = statistics.median(forty_one)
    console.print(
        f"Edgar's maps: {ok}/{len(every)} laid out within {EDGAR_LIMIT:g} s, {valid}/{len(every)} valid; "
        f"median of all {_ms(statistics.median(r.seconds for r in every))} ms, 95th percentile {_ms(_p95([r.seconds for r in every]))} ms"
    )
    console.print(
        f"the 41-room graphs (41vertices, Thesis/example3_*: {len(forty_one)} layouts): median {_ms(median_41)} ms "
        f"against the goal < {GOAL_41_MS} ms: {met(median_41 * 1e3 < GOAL_41_MS)}"
    )
    for miss in misses:
        console.print(f"  missed: {miss}")


def bench_random(console: Console, count: int, limit: float) -> None:
    pick = np.random.default_rng(20261206)  # the sample: sizes, loops, locks
    runs: list[Run] = []
    misses: list[str] = []
    for i in range(count):
        rooms, loops, locks = int(pick.integers(10, 50)), int(pick.integers(0, 6)), int(pick.integers(0, 3))
        # generate's least rooms for the loops, locks and default roles asked (10 rooms, 5 loops, 2 locks fit not).
        rooms = max(rooms, 2 * loops + 2 * locks + 5)
        r = run_stage(generated_stage(rooms, loops, locks, limit), (7, i))
        runs.append(r)
        if not r.valid:
            misses.append(f"graph {i} ({r.rooms} rooms, {r.loops} loops, {locks} locks): {r.why}")
    table = Table(
        title=f"random graphs (pipeline.graphs.generate): {count} graphs of 10-49 rooms, 0-5 loops, 0-2 locks, "
        f"the default rectangles, time_limit {limit:g} s",
        caption="loops: as drawn; a failure counts its whole time limit; "
        "x no loops: median over the median of the graphs without loops, measured in this run",
    )
    for col in ("graphs", "n", "laid out", "valid", "median ms", "p95 ms", "max ms", "x no loops"):
        table.add_column(col, justify="right")
    trees = [r.seconds for r in runs if r.loops == 0]
    base = statistics.median(trees) if trees else float("nan")

    def row(name: str, group: list[Run]) -> None:
        if not group:
            return
        times = [r.seconds for r in group]
        table.add_row(
            name, str(len(group)), f"{sum(r.laid_out for r in group) / len(group):.0%}", f"{sum(r.valid for r in group) / len(group):.0%}",
            _ms(statistics.median(times)), _ms(_p95(times)), _ms(max(times)), ratio(statistics.median(times), base) if trees else "",
        )

    for lo in range(10, 50, 10):
        row(f"{lo}-{lo + 9} rooms", [r for r in runs if lo <= r.rooms <= lo + 9])
    for loops in range(6):
        row(f"{loops} loops", [r for r in runs if r.loops == loops])
    row("all", runs)
    console.print(table)
    times = [r.seconds for r in runs]
    success = sum(r.valid for r in runs) / len(runs)
    median, p95 = statistics.median(times), _p95(times)
    console.print(
        f"random graphs ({len(runs)}, time_limit {limit:g} s): laid out and valid {success:.1%} (goal >= {GOAL_SUCCESS:.0%}: {met(success >= GOAL_SUCCESS)}), "
        f"median {_ms(median)} ms (goal < {GOAL_MEDIAN_MS} ms: {met(median * 1e3 < GOAL_MEDIAN_MS)}), "
        f"95th percentile {_ms(p95)} ms (goal < {GOAL_P95_S:g} s: {met(p95 < GOAL_P95_S)})"
    )
    for miss in misses:
        console.print(f"  missed: {miss}")


def bench_big(console: Console, count: int) -> None:
    table = Table(
        title=f"{BIG_ROOMS}-room graphs with {BIG_LOOPS} loops (generate, 2 locks, the default rectangles), time_limit {BIG_LIMIT:g} s",
        caption=f"goal: each under {GOAL_BIG_S:g} s; Edgar's largest example has 41 rooms and its docs advise under 60",
    )
    for col in ("sample", "rooms", "loops", "laid out", "valid", "seconds", f"< {GOAL_BIG_S:g} s", "note"):
        table.add_column(col, justify="right")
    runs = []
    for i in range(count):
        r = run_stage(generated_stage(BIG_ROOMS, BIG_LOOPS, 2, BIG_LIMIT), (8, i))
        runs.append(r)
        table.add_row(str(i), str(r.rooms), str(r.loops), met(r.laid_out), met(r.valid), f"{r.seconds:.2f}", met(r.valid and r.seconds < GOAL_BIG_S), r.why)
    console.print(table)
    within = sum(r.valid and r.seconds < GOAL_BIG_S for r in runs)
    laid = [r.seconds for r in runs if r.valid]
    console.print(
        f"{BIG_ROOMS}-room graphs with {BIG_LOOPS} loops: {within}/{count} laid out and valid within {GOAL_BIG_S:g} s "
        f"(goal: every one: {met(within == count)}); median of those laid out {statistics.median(laid) if laid else float('nan'):.2f} s"
    )


def warm_up() -> None:
    """Compile (or load) the search's kernel, and read the config spaces' code paths once."""
    generated_stage(12, 1, 0, 10).run([], rng_for((0,)))


def main(count: int = RANDOM, limit: float = RANDOM_LIMIT) -> None:
    console = Console(width=150)
    warm_up()
    if (EDGAR / "Maps").is_dir():
        bench_edgar(console)
    else:
        console.print(f"Edgar's maps: skipped ({EDGAR}/Maps not found; set EDGAR to Edgar-DotNet's src/Resources)")
    bench_random(console, count, limit)
    bench_big(console, BIG)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=RANDOM, help=f"random graphs in the sample (default {RANDOM})")
    parser.add_argument("--limit", type=float, default=RANDOM_LIMIT, help=f"their time_limit in seconds (default {RANDOM_LIMIT:g})")
    args = parser.parse_args()
    main(args.graphs, args.limit)
