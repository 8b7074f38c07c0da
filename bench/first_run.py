"""A first run: `pcg build recipes/` (every example recipe, default -j: every core) into a fresh
project with an empty kernel cache, so numba compiles every kernel the recipes use; then the same
build of a second fresh project with the kernels cached (so it does the same work): the baseline,
measured in the same run. Issue 15's target: the first run costs at most
2.5 times the second. One run of each, to keep `make bench` under 5 minutes on 2 cores."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench.timing import met, ratio

ROOT = Path(__file__).resolve().parents[1]
TARGET = 2.5  # cold / warm


def build(project: Path, kernels: Path) -> float:
    """Seconds `pcg build recipes -q` took, start to exit, with `kernels` as numba's cache."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(kernels)}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pipeline", "build", "recipes", "-q"], cwd=project, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    console = Console(width=140)
    root = Path(tempfile.mkdtemp(prefix="pcg-bench-first-run-"))
    try:
        # Two projects alike, the second built with the kernels the first compiled. Not one
        # project emptied between the builds: the disk discarding the deleted files' blocks
        # slows the next build's every new file (online discard), and would flatter the ratio.
        projects = [root / "cold", root / "warm"]
        for project in projects:
            shutil.copytree(ROOT / "recipes", project / "recipes")
            shutil.copytree(ROOT / "tilesets", project / "tilesets")
        recipes = len(list((projects[0] / "recipes").glob("*.toml")))
        cold = build(projects[0], root / "kernels")
        warm = build(projects[1], root / "kernels")
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        table = Table(
            title=f"first run: `pcg build recipes/` ({recipes} example recipes, -j {cores}) with an empty kernel cache (1 run each)",
            caption=f"baseline: the same build with the kernels cached, in the same run; target: at most {TARGET}x the baseline",
        )
        for col in ("build", "s", "x baseline", "target", "met"):
            table.add_column(col, justify="right")
        table.add_row("baseline: kernels cached", f"{warm:.1f}", "1.00x", "", "")
        table.add_row("first run: kernels compiled", f"{cold:.1f}", ratio(cold, warm), f"<= {TARGET}x", met(cold <= TARGET * warm))
        console.print(table)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("NO_COLOR", "1")
    main()
