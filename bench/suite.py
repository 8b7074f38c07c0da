"""MarkovJunior's own 2D model suite, model by model, at each model's listed size and step cap.

For every 2D entry of `models.xml` that the engine reads: steps, min and median wall time over
repeats of one fixed seed (the same work each time), steps per second; per node kind, the steps
per second of the models that use it (a model is counted under every kind it has); the suite's
total. Models the engine refuses are listed with the reason.

Baseline, NOT measured in this run: `bench/suite_reference.tsv`, each model's min time under the
engine as it was before the node kinds of issue 16 beyond fields (commit 72d276c), measured with
this same script on this 2-core machine (`python -m bench.suite --record FILE` writes such a
table). `now / then` is our min over that one; the goal is that no model that ran then got slower,
and since the host is shared (±30% between runs) a ratio above 1.3x is what is flagged.
"""

from __future__ import annotations

import os
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from bench.timing import min_median
from pipeline.rewrite.kinds import NODE_KINDS
from pipeline.rewrite.program import run
from pipeline.rewrite.resources import ResourceFolder
from pipeline.rewrite.toml_form import ProgramError
from pipeline.rewrite.xml_form import load_model

SEED = 1
REFERENCE = Path(__file__).with_name("suite_reference.tsv")
FLAG = 1.3  # now / then above this is more than the host's noise
# Node kinds and the features of rule nodes that a model's time is reported under.
FEATURES = tuple(dict.fromkeys((*NODE_KINDS, "field", "observe", "convolution", "convchain", "wfc")))


def suite_folder() -> Path:
    for path in (Path(os.environ.get("MJ_SUITE", "")), Path(__file__).resolve().parents[2] / "shared" / "markovjunior",
                 Path("/work/shared/markovjunior")):
        if str(path) != "." and (path / "models.xml").is_file():
            return path
    raise SystemExit("MarkovJunior's suite not found: set MJ_SUITE to the folder with models.xml")


def entries(suite: Path) -> list[tuple[str, int, int]]:
    """(name, size, step cap) of every 2D model, in the order models.xml lists them."""
    found = []
    for model in ET.parse(suite / "models.xml").getroot().iter("model"):
        if model.get("d") == "3" or model.get("height") is not None:
            continue
        size = int(model.get("size") or model.get("length") or 0)
        found.append((str(model.get("name")), size, int(model.get("steps") or 50_000)))
    return found


def features(text: str) -> list[str]:
    tags = {el.tag for el in ET.fromstring(text.lstrip("\ufeff")).iter()}
    return [f for f in FEATURES if f in tags]


def measure(suite: Path, repeats: int) -> tuple[list[tuple[str, int, int, float, float, list[str]]], list[tuple[str, str]]]:
    """(name, size, steps, min s, median s, features) of every model that runs, and (name, why)
    of those refused."""
    folder = ResourceFolder(suite, "resources")
    ran, refused = [], []
    for name, size, cap in entries(suite):
        text = (suite / "models" / f"{name}.xml").read_text()
        try:
            program = load_model(text, folder.read)
        except ProgramError as exc:
            refused.append((name, str(exc)))
            continue
        run(program, np.zeros((size, size), np.uint8), np.random.default_rng(SEED), 20)  # compile / load the cache
        steps: set[int] = set()

        def once() -> None:
            steps.add(run(program, np.zeros((size, size), np.uint8), np.random.default_rng(SEED), cap).turns)

        start = time.perf_counter()
        once()
        first = time.perf_counter() - start
        # Quick models get the repeats; a slow one is timed once more only (the whole bench
        # must stay within `make bench`'s five minutes).
        low, median, _, _ = min_median(once, repeats - 1 if first < 0.3 else 1, budget=0.15 if first < 0.03 else 0.0)
        if len(steps) != 1:
            raise SystemExit(f"{name}: one seed, yet {sorted(steps)} steps")
        ran.append((name, size, steps.pop(), min(low, first), median, features(text)))
    return ran, refused


def reference() -> dict[tuple[str, int], float]:
    """Min seconds by (model, size): MazeBacktracker is listed at two sizes."""
    if not REFERENCE.is_file():
        return {}
    rows = (line.split("\t") for line in REFERENCE.read_text().splitlines() if line and not line.startswith("#"))
    return {(name, int(size)): float(ms) / 1e3 for name, size, ms, *_ in rows}


def main(repeats: int = 3) -> None:
    suite = suite_folder()
    ran, refused = measure(suite, repeats)
    then = reference()
    table = Table(
        title=f"MarkovJunior's 2D suite at each model's size and step cap (seed {SEED}, min/median of {repeats})",
        caption="then: recorded reference (bench/suite_reference.tsv, engine at 72d276c, not this run); "
        f"flagged when now / then > {FLAG}x",
    )
    for col in ("model", "size", "steps", "min ms", "median ms", "steps / s", "then ms", "now / then", "kinds"):
        table.add_column(col, justify="left" if col in ("model", "kinds") else "right")
    slower = []
    for name, size, steps, low, median, kinds in ran:
        before = then.get((name, size))
        rel = f"{low / before:.2f}x" if before else ""
        if before and low / before > FLAG:
            slower.append(name)
            rel += " !"
        table.add_row(name, str(size), f"{steps:,}", f"{low * 1e3:.1f}", f"{median * 1e3:.1f}",
                      f"{steps / low:,.0f}", f"{before * 1e3:.1f}" if before else "new", rel, " ".join(kinds))
    console = Console(width=160)
    console.print(table)
    kinds_table = Table(title="per node kind: steps per second over the models that use it")
    for col in ("kind", "models", "steps", "ms", "steps / s"):
        kinds_table.add_column(col, justify="left" if col == "kind" else "right")
    for kind in FEATURES:
        rows = [r for r in ran if kind in r[5]]
        if rows:
            steps = sum(r[2] for r in rows)
            secs = sum(r[3] for r in rows)
            kinds_table.add_row(kind, str(len(rows)), f"{steps:,}", f"{secs * 1e3:,.0f}", f"{steps / secs:,.0f}")
    console.print(kinds_table)
    goals = Table(title="issue 16's goals (min of repeats, this run)")
    for col in ("case", "steps", "min ms", "median ms", "goal", "met"):
        goals.add_column(col, justify="left" if col == "case" else "right")
    folder = ResourceFolder(suite, "resources")
    maze = load_model((suite / "models" / "MazeBacktracker.xml").read_text(), folder.read)
    turns: list[int] = []
    low, median, _, _ = min_median(
        lambda: turns.append(run(maze, np.zeros((967, 967), np.uint8), np.random.default_rng(SEED), 10**9).turns), 5
    )
    goals.add_row("MazeBacktracker 967 x 967 to completion", f"{turns[-1]:,}", f"{low * 1e3:.1f}", f"{median * 1e3:.1f}",
                  "< 150 ms", "yes" if low < 0.150 else "NO")
    flowers = next((r for r in ran if r[0] == "WaveFlowers"), None)
    if flowers is not None:
        goals.add_row("WaveFlowers (overlapping wfc, Flowers sample, n=3) 60 x 60", f"{flowers[2]:,}", f"{flowers[3] * 1e3:.1f}",
                      f"{flowers[4] * 1e3:.1f}", "< 100 ms", "yes" if flowers[3] < 0.100 else "NO")
    console.print(goals)
    total = sum(r[3] for r in ran)
    console.print(f"suite: {len(ran)} of {len(ran) + len(refused)} 2D models run, total {total:.2f} s (sum of mins); "
                  f"slower than the reference by more than {FLAG}x: {', '.join(slower) or 'none'}")
    for name, why in refused:
        console.print(f"  refused: {name}: {why}")


def record(path: Path) -> None:
    """Write the reference table for the engine this runs with."""
    ran, _ = measure(suite_folder(), 3)
    lines = [f"# name\tsize\tmin ms\tsteps; measured {time.strftime('%Y-%m-%d')} with python bench/suite.py --record"]
    lines += [f"{name}\t{size}\t{low * 1e3:.2f}\t{steps}" for name, size, steps, low, _, _ in ran]
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--record"]:
        record(Path(sys.argv[2]))
    else:
        main()
