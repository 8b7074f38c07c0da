"""A 1,000-map pack (41 x 41-cell mazes, generate -> label -> TMX + preview PNG) built with -j 1,
-j 2 and a Dask LocalCluster(2): maps per second and the speedup over -j 1 in the same run; a
no-change rebuild of that pack (target: under 0.5 s); and `pcg watch` latency from saving a
one-map recipe to its rewritten TMX (target: under 0.5 s, debounce included).

Every build is a real `pcg` command in a fresh process on a fresh project, as a user runs it.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

MAPS = 1000
RECIPE = f"""\
[pack]
name = "scale"
seed = 11
maps = {MAPS}

[stage.maze]
use = "maze.backtracker"
cells = [41, 41]

[stage.regions]
use = "regions.label"
input = "maze"

[stage.tmx]
use = "export.tmx"
input = "regions"
"""
ONE_MAP = RECIPE.replace(f"maps = {MAPS}", "maps = 1").replace('name = "scale"', 'name = "one"')


def pcg(project: Path, *args: str) -> float:
    """Seconds the command took, start to exit."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=project, check=True, capture_output=True)
    return time.perf_counter() - start


def fresh(root: Path, name: str, recipe: str) -> Path:
    project = root / name
    (project / "recipes").mkdir(parents=True)
    (project / "recipes" / "pack.toml").write_text(recipe)
    return project


def no_change_in_process(project: Path) -> float:
    """The same no-change build without the interpreter's start-up and imports (every stage
    module is imported first): load the recipe, plan, check every file, find nothing to do."""
    code = (
        "import time, pathlib;"
        "from pipeline.recipe import load_recipe; from pipeline.builder import Builder; from pipeline.cache import LevelCache;"
        "from pipeline.executor import make_executor; from pipeline import registry; registry.kinds();"
        "t=time.perf_counter(); r=load_recipe('recipes/pack.toml');"
        "b=Builder(exports_root=pathlib.Path('exports'), cache=LevelCache(pathlib.Path('.pcg-cache')));"
        "p=b.plan(r); assert not p.stale_maps; b.build(p, make_executor(1)); print(time.perf_counter()-t)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=project, check=True, capture_output=True, text=True)
    return float(out.stdout.strip())


def watch_latency(root: Path, saves: int = 7) -> list[float]:
    """Seconds from each save of a one-map recipe to its TMX being replaced."""
    project = fresh(root, "watch", ONE_MAP)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "watch", "recipes", "-j", "1"],
        cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if "watching" in line:
                break
        tmx = project / "exports" / "one" / "map_000.tmx"
        recipe = project / "recipes" / "pack.toml"
        latencies = []
        for k in range(saves):
            before = tmx.stat().st_ino  # atomic writes replace the file: a new inode
            start = time.perf_counter()
            recipe.write_text(ONE_MAP.replace("seed = 11", f"seed = {100 + k}"))
            while tmx.stat().st_ino == before:
                if time.perf_counter() - start > 10:
                    raise RuntimeError("pcg watch did not rebuild within 10 s")
                time.sleep(0.002)
            latencies.append(time.perf_counter() - start)
            time.sleep(0.3)
        return latencies
    finally:
        proc.kill()


def main() -> None:
    console = Console(width=120)
    root = Path(tempfile.mkdtemp(prefix="pcg-bench-scale-"))
    try:
        # Compile (or load) the kernels once, outside the timings.
        pcg(fresh(root, "warm", ONE_MAP), "build", "recipes", "-q")
        runs: list[tuple[str, list[str]]] = [("-j 1", ["-j", "1"]), ("-j 2", ["-j", "2"])]
        if importlib.util.find_spec("distributed") is not None:
            runs.append(("Dask LocalCluster(2)", ["--dask-local", "2"]))
        else:
            console.print("[yellow]Dask is not installed (pip install 'pcg-pipeline[dask]'): skipping its run[/yellow]")
        table = Table(title=f"{MAPS} maps of 41 x 41 cells: generate -> label -> TMX + preview PNG")
        for col in ("executor", "seconds", "maps / s", "speedup vs -j 1"):
            table.add_column(col, justify="right")
        base = 0.0
        built = None
        for label, args in runs:
            project = fresh(root, label.replace(" ", "_"), RECIPE)
            seconds = pcg(project, "build", "recipes", "-q", *args)
            base = base or seconds
            table.add_row(label, f"{seconds:.1f}", f"{MAPS / seconds:.0f}", f"{base / seconds:.2f}x")
            built = built or project
        console.print(table)

        assert built is not None
        command = min(pcg(built, "build", "recipes", "-q") for _ in range(3))
        inside = min(no_change_in_process(built) for _ in range(3))
        table = Table(title=f"no-change rebuild of the {MAPS}-map pack (target < 0.5 s)")
        for col in ("measured", "seconds", "met"):
            table.add_column(col, justify="right")
        table.add_row("load recipe + plan + check every file (after imports)", f"{inside:.3f}", "yes" if inside < 0.5 else "no")
        table.add_row("the whole `pcg build` command (with Python start-up)", f"{command:.3f}", "yes" if command < 0.5 else "no")
        console.print(table)

        latencies = watch_latency(root)
        table = Table(title="pcg watch: save of a one-map recipe -> rewritten TMX (debounce 0.1 s; target < 0.5 s)")
        for col in ("saves", "best s", "median s", "worst s", "met"):
            table.add_column(col, justify="right")
        median = statistics.median(latencies)
        table.add_row(str(len(latencies)), f"{min(latencies):.3f}", f"{median:.3f}", f"{max(latencies):.3f}", "yes" if median < 0.5 else "no")
        console.print(table)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("NO_COLOR", "1")
    main()
