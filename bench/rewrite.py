"""Rule programs run to completion: steps, steps per second and wall time, best of N runs.

The programs are the example recipes' own (dfs_maze, growth_maze, nystrom), at the sizes
MarkovJunior's published timings use. The reference column is MarkovJunior itself (C#, under
Mono on a 2-core machine like this one); the target is the issue's: the 967 depth-first maze
under 0.25 s, the others ahead of their reference by the same margin (half its lower bound).
`x numpy fill` is the time over filling a grid of the same size, measured in this run.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from pipeline.recipe import load_recipe
from pipeline.rewrite.program import Program, run

RECIPES = Path(__file__).resolve().parents[1] / "recipes"

# (recipe, stage, size, MarkovJunior's time in seconds: low, high)
CASES = (
    ("dfs_maze", "maze", 359, None),
    ("dfs_maze", "maze", 967, (0.5, 0.9)),
    ("growth_maze", "maze", 359, None),
    ("growth_maze", "maze", 967, (0.2, 0.45)),
    ("nystrom", "dungeon", 199, (0.035, 0.065)),
)


def program(recipe: str, stage: str) -> Program:
    params = load_recipe(RECIPES / f"{recipe}.toml").by_name[stage].params
    return params._program  # type: ignore[attr-defined, no-any-return]


def main() -> None:
    table = Table(title="rewrite programs run to completion (best of N runs)")
    for col in ("program", "size", "steps", "steps / s", "ms", "x numpy fill", "MarkovJunior ms", "target ms", "met"):
        table.add_column(col, justify="right")
    for recipe, stage, n, reference in CASES:
        prog = program(recipe, stage)
        run(prog, np.zeros((9, 9), np.uint8), np.random.default_rng(0), 10**6)  # compile / load cache
        repeats = 5 if n > 500 else 9
        best, steps = float("inf"), 0
        for seed in range(repeats):
            start = time.perf_counter()
            result = run(prog, np.zeros((n, n), np.uint8), np.random.default_rng(seed), 10**9)
            elapsed = time.perf_counter() - start
            assert result.finished
            if elapsed < best:
                best, steps = elapsed, result.turns
        fill = min(_timed(lambda: np.ones((n, n), dtype=np.uint8)) for _ in range(7))
        target = reference[0] / 2 if reference else None
        table.add_row(
            recipe,
            f"{n} x {n}",
            f"{steps:,}",
            f"{steps / best:,.0f}",
            f"{best * 1e3:.1f}",
            f"{best / fill:,.0f}x",
            f"{reference[0] * 1e3:.0f}-{reference[1] * 1e3:.0f}" if reference else "",
            f"< {target * 1e3:.1f}" if target else "",
            ("yes" if best < target else "no") if target else "",
        )
    Console(width=120).print(table)


def _timed(fn) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start
