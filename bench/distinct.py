"""`pack.distinct` against the same pack without it, in the same run.

A pack of 41 x 41 mazes (maze.backtracker, preview and TMX) is built without `distinct`; the
threshold is then set where a quarter of its maps fall below it (the least nearest-neighbour tile
distance that a quarter of them are closer than), and the pack is built again with `distinct` at that threshold,
so about a quarter of the maps are redrawn, some more than once. Each build is a whole `pcg build`
through the library (-j: every core) into a fresh project folder and cache, three of each taken
in turn; the ratio is on the fastest of each. Issue 40's target: at most 2x. The distinct pack's
every pair of maps is checked to stand the threshold apart.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from bench.timing import met, ratio
from pipeline.api import build
from pipeline.building.cache import LevelCache
from pipeline.diversity import nearest, tile_distances

MAPS = 200
TARGET = 2.0
RUNS = 3

RECIPE = """\
[pack]
name = "mazes"
seed = 40
maps = {maps}
{distinct}
[stage.maze]
use = "maze.backtracker"
cells = [20, 20]

[stage.tmx]
use = "export.tmx"
inputs = ["maze"]
"""


def run(root: Path, name: str, distinct: str) -> tuple[float, Path]:
    """Seconds one build of the pack took, and its project folder."""
    project = root / name
    (project / "recipes").mkdir(parents=True)
    (project / "recipes" / "mazes.toml").write_text(RECIPE.format(maps=MAPS, distinct=distinct))
    start = time.perf_counter()
    result = build(project / "recipes", out=project / "exports", cache=project / ".pcg-cache")
    took = time.perf_counter() - start
    if not result.ok:
        raise SystemExit(f"bench.distinct: the build failed: {result.problems or result.failures}")
    return took, project


def distances(project: Path) -> tuple[np.ndarray, list[int]]:
    """Every two maps' tile distance, and each map's attempt, from the project's manifest and cache."""
    manifest = json.loads((project / "exports" / "mazes" / "manifest.json").read_text())
    cache = LevelCache(project / ".pcg-cache")
    entries = sorted(manifest["maps"], key=lambda m: m["index"])
    levels = [cache.load(m["stages"]["maze"]["key"]) for m in entries]
    if any(level is None for level in levels):
        raise SystemExit("bench.distinct: a map's Level is not in the cache")
    return tile_distances(levels), [m.get("attempt", 0) for m in entries]  # type: ignore[arg-type]


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="pcg-bench-distinct-"))
    try:
        run(root, "warm-up", "")  # kernels loaded or compiled outside the timed runs
        plain_time, plain = run(root, "plain-0", "")
        near = nearest(distances(plain)[0])
        # The least distance that a quarter of the maps fall below (some maps share their distance).
        ordered = np.sort(near)
        threshold = float(next(v for v in ordered if (near < v).sum() >= MAPS // 4))
        below = int((near < threshold).sum())
        plain_times, distinct_times = [plain_time], []
        for k in range(RUNS):
            if k:
                plain_times.append(run(root, f"plain-{k}", "")[0])
            took, project = run(root, f"distinct-{k}", f"distinct = {threshold!r}")
            distinct_times.append(took)
        d, attempts = distances(project)
        np.fill_diagonal(d, np.inf)
        closest = float(d.min())
        redrawn = sum(a > 0 for a in attempts)
        base, with_it = min(plain_times), min(distinct_times)
        table = Table(
            title=f"pack.distinct: {MAPS} mazes of 41 x 41 tiles, threshold {threshold:.4f} (without it, {below} of {MAPS} maps fall below)",
            caption=f"baseline: the same pack without distinct, in the same run; fastest of {RUNS} builds each; target: at most {TARGET:g}x",
        )
        for col in ("build", "min s", "runs s", "x baseline", "target", "met"):
            table.add_column(col, justify="right")
        table.add_row("baseline: no distinct", f"{base:.2f}", " ".join(f"{t:.2f}" for t in plain_times), "1.00x", "", "")
        table.add_row(
            f"distinct ({redrawn} maps redrawn, {sum(attempts)} attempts more)", f"{with_it:.2f}", " ".join(f"{t:.2f}" for t in distinct_times),
            ratio(with_it, base), f"<= {TARGET:g}x", met(with_it <= TARGET * base),
        )
        table.add_row(f"closest two maps with distinct: {closest:.4f} (>= threshold: {met(closest >= threshold)})", "", "", "", "", "")
        Console(width=140).print(table)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
