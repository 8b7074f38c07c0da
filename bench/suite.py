"""MarkovJunior's own 2D model suite, model by model, at each model's listed size and step cap,
against the engine as it was before issue 16's new node kinds, measured in the same run.

For every 2D entry of `models.xml`: steps, the fastest run of one fixed seed (the same work each
time), steps per second; per node kind, the steps per second of the models that use it (a model
counts under every kind it has); the suite's total; and issue 16's two speed goals.

Baseline, measured in this run: the engine at BASELINE (the commit before map, convolution,
convchain, observe/search and wfc), unpacked from this repository's history into the cache folder
(its kernels compile once per machine, about a minute, on the first `make bench`). Each engine runs
in a worker process of its own (bench/suite_worker.py) and the two are asked in turn, model by
model, alternating which goes first, for ROUNDS rounds of about 20 ms (a slower model: once
each); each keeps its fastest time. `now / then` above FLAG on a
model the baseline ran is flagged. Without git history (an unpacked tarball) the comparison is
skipped and said so.
"""

from __future__ import annotations

import io
import os
import statistics
import subprocess
import sys
import tarfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import IO

from rich.console import Console
from rich.table import Table

from pipeline.jit import cache_home
from pipeline.rewrite.kind_table import NODE_KINDS

BASELINE = "72d276c"
ROOT = Path(__file__).resolve().parents[1]
# now / then above this is flagged. Interleaved, the median ratio over the suite is steady to a
# percent or two, but one model's can still catch a burst of the shared host's noise (a model
# flagged in one run and not the next): recheck a flagged one alone before believing it.
FLAG = 1.25
QUICK = 0.3  # seconds: models faster than this are timed in ROUNDS rounds of several runs
ROUNDS = 5
# Node kinds and the features of rule nodes that a model's time is reported under.
FEATURES = tuple(dict.fromkeys((*NODE_KINDS, "field", "observe", "search")))


def suite_folder() -> Path | None:
    for path in (Path(os.environ.get("MJ_SUITE", "")), ROOT.parent / "shared" / "markovjunior", Path("/work/shared/markovjunior")):
        if str(path) != "." and (path / "models.xml").is_file():
            return path
    return None


def entries(suite: Path) -> list[tuple[str, int, int]]:
    """(name, size, step cap) of every 2D model, in the order models.xml lists them."""
    found = []
    for model in ET.parse(suite / "models.xml").getroot().iter("model"):
        if model.get("d") == "3" or model.get("height") is not None:
            continue
        steps = int(model.get("steps") or 50_000)  # MarkovJunior's default; -1 is no cap
        found.append((str(model.get("name")), int(model.get("size") or 0), steps if steps >= 0 else 10**9))
    return found


def features(text: str) -> list[str]:
    root = ET.fromstring(text.lstrip("\ufeff"))
    tags = {el.tag for el in root.iter()} | {"search" for el in root.iter() if el.get("search", "").lower() == "true"}
    return [f for f in FEATURES if f in tags]


def baseline_tree() -> Path | None:
    """The baseline's source, unpacked once from git history; None without history."""
    target = cache_home() / f"bench-baseline-{BASELINE}"
    if (target / "pipeline" / "__init__.py").is_file():
        return target
    try:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", BASELINE, "pipeline"], capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    partial = target.with_name(target.name + f".{os.getpid()}")
    partial.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(partial, filter="data")
    partial.rename(target)  # whole or not at all
    return target


class Worker:
    """One engine, timing models on request (see bench/suite_worker.py)."""

    def __init__(self, tree: Path, suite: Path):
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPATH"] = str(tree)
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("suite_worker.py")), str(suite)],
            cwd=tree, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        # Both engines on the same core: the host's vCPUs are not equally fast from one second
        # to the next (other tenants), and a worker the scheduler leaves on the slower one would
        # look slower for a whole model.
        if hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(self.process.pid, {min(os.sched_getaffinity(0))})
        # Started one at a time: a worker loading its engine would slow the other's timings.
        if self.process.stdout.readline().strip() != "ready":  # type: ignore[union-attr]
            raise SystemExit(f"the suite worker for {tree} did not start (exit {self.process.wait()})")

    def time(self, name: str, size: int, cap: int, repeats: int) -> tuple[float, int] | None:
        """(fastest seconds, steps), or None when this engine refuses the model."""
        stdin: IO[str] = self.process.stdin  # type: ignore[assignment]
        stdin.write(f"{name} {size} {cap} {repeats}\n")
        stdin.flush()
        answer = self.process.stdout.readline().split()  # type: ignore[union-attr]
        if not answer:
            raise SystemExit(f"the worker for {name} died (exit {self.process.wait()})")
        return None if answer[0] == "refused" else (float(answer[0]), int(answer[1]))

    def close(self) -> None:
        self.process.stdin.close()  # type: ignore[union-attr]
        self.process.wait()


Row = tuple[str, int, int, float, float | None, list[str]]  # name, size, steps, now s, then s, kinds


def measure(suite: Path, base: Path | None) -> list[Row]:
    now = Worker(ROOT, suite)
    then = Worker(base, suite) if base else None
    rows: list[Row] = []
    try:
        for name, size, cap in entries(suite):
            first = now.time(name, size, cap, 1)
            if first is None:
                raise SystemExit(f"{name}: the engine refuses it")
            best, steps = first
            old = then.time(name, size, cap, 1) if then else None
            before = old[0] if old else None
            if best < QUICK:
                repeats = max(1, min(20, int(0.02 / max(best, 1e-4))))
                for turn in range(ROUNDS):
                    # Alternate which engine goes first: the host drifts within seconds.
                    for label in ("now", "then") if turn else ("then", "now"):
                        if label == "now":
                            got = now.time(name, size, cap, repeats)
                            best = min(best, got[0]) if got else best
                        elif then is not None and before is not None:
                            got = then.time(name, size, cap, repeats)
                            before = min(before, got[0]) if got else before
            rows.append((name, size, steps, best, before, features((suite / "models" / f"{name}.xml").read_text())))
    finally:
        now.close()
        if then:
            then.close()
    return rows


def goal_rows(suite: Path, rows: list[Row]) -> list[tuple[str, int, float, float]]:
    """(case, steps, min s, goal s) for issue 16's speed goals."""
    worker = Worker(ROOT, suite)
    try:
        maze = worker.time("MazeBacktracker", 967, 10**9, 5)
    finally:
        worker.close()
    found = [("MazeBacktracker 967 x 967 to completion", maze[1], maze[0], 0.150)] if maze else []
    flowers = next((r for r in rows if r[0] == "WaveFlowers"), None)
    if flowers:
        found.append((f"WaveFlowers (overlapping wfc, Flowers sample, n=3) {flowers[1]} x {flowers[1]}", flowers[2], flowers[3], 0.100))
    return found


def main() -> None:
    suite = suite_folder()
    if suite is None:
        # The rest of `make bench` does not need it.
        Console().print("suite: MarkovJunior's suite not found (set MJ_SUITE to the folder with models.xml); skipped")
        return
    base = baseline_tree()
    start = time.perf_counter()
    rows = measure(suite, base)
    table = Table(
        title="MarkovJunior's 2D suite at each model's size and step cap (seed 1, fastest run; "
        f"then = the engine at {BASELINE}, timed in turn with it in this run)",
        caption=f"flagged (!) when now / then > {FLAG}x" if base else "no git history here: the baseline is skipped",
    )
    for col in ("model", "size", "steps", "ms", "steps / s", "then ms", "now / then", "kinds"):
        table.add_column(col, justify="left" if col in ("model", "kinds") else "right")
    slower, ratios = [], []
    for name, size, steps, best, before, kinds in rows:
        rel = ""
        if before:
            ratios.append(best / before)
            rel = f"{best / before:.2f}x"
            if best / before > FLAG:
                slower.append(name)
                rel += " !"
        table.add_row(name, str(size), f"{steps:,}", f"{best * 1e3:.1f}", f"{steps / best:,.0f}",
                      f"{before * 1e3:.1f}" if before else "new", rel, " ".join(kinds))
    console = Console(width=160)
    console.print(table)
    kinds_table = Table(title="per node kind: steps per second over the models that use it")
    for col in ("kind", "models", "steps", "ms", "steps / s"):
        kinds_table.add_column(col, justify="left" if col == "kind" else "right")
    for kind in FEATURES:
        used = [r for r in rows if kind in r[5]]
        if used:
            steps = sum(r[2] for r in used)
            secs = sum(r[3] for r in used)
            kinds_table.add_row(kind, str(len(used)), f"{steps:,}", f"{secs * 1e3:,.0f}", f"{steps / secs:,.0f}")
    console.print(kinds_table)
    goals = Table(title="issue 16's speed goals (fastest of 5 runs for the maze; the suite's figure for WaveFlowers)")
    for col in ("case", "steps", "ms", "goal", "met"):
        goals.add_column(col, justify="left" if col == "case" else "right")
    for case, steps, secs, goal in goal_rows(suite, rows):
        goals.add_row(case, f"{steps:,}", f"{secs * 1e3:.1f}", f"< {goal * 1e3:.0f} ms", "yes" if secs < goal else "NO")
    console.print(goals)
    total = sum(r[3] for r in rows)
    summary = f"suite: {len(rows)} 2D models run, total {total:.2f} s (sum of fastest runs); bench took {time.perf_counter() - start:.0f} s"
    if ratios:
        summary += (f"; the {len(ratios)} models the baseline ran: median now / then {statistics.median(ratios):.2f}x, "
                    f"above {FLAG}x: {', '.join(slower) or 'none'}")
    console.print(summary)


if __name__ == "__main__":
    main()
