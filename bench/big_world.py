"""A big world: one 4095 x 4095 map of `dungeon.cellular_caves` (the largest cave kept) labelled
by `regions.label` and written by `export.tmx` with its defaults, built by `pcg build` as a
whole process, against the same work done by a plain numpy and scipy script
(bench/big_world_floor.py) run as a process in the same run: wall seconds, the size of what
each writes (the TMX, against the script's two zlib'd layers) and the peak memory of each
process (its maximum resident set, from the kernel's account of that child alone). Targets (issue
42): at most 1.5x the script's time, 2x its file and 1.5x its memory. Each is run REPEATS times,
interleaved; the min is the undisturbed run.
"""

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

SIDE = 4095
REPEATS = 2
TARGETS = {"seconds": 1.5, "file": 2.0, "memory": 1.5}
RECIPE = f"""\
[pack]
name = "world"
seed = 7
maps = 1
contact_sheet = false

[stage.cave]
use = "dungeon.cellular_caves"
size = [{SIDE}, {SIDE}]
keep = "largest"

[stage.regions]
use = "regions.label"
input = "cave"

[stage.tmx]
use = "export.tmx"
input = "regions"
"""
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run(args: list[str], cwd: Path) -> tuple[float, int]:
    """Wall seconds and peak resident bytes of one process (os.wait4: that child's own account)."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(args)} failed: {proc.stderr.read().decode() if proc.stderr else ''}")
    return took, usage.ru_maxrss * 1024  # KiB on Linux


def main() -> None:
    console = Console(width=120)
    root = Path(tempfile.mkdtemp(prefix="pcg-big-world-"))
    try:
        (root / "recipes").mkdir()
        (root / "recipes" / "world.toml").write_text(RECIPE)
        # A first build compiles the kernels it runs: not the work measured.
        run([sys.executable, "-m", "pipeline", "build", "-j", "1", "-q"], root)
        pcg = {"seconds": [], "memory": []}
        floor = {"seconds": [], "memory": []}
        for _ in range(REPEATS):
            took, peak = run([sys.executable, "-m", "pipeline", "build", "-j", "1", "-q", "--force"], root)
            pcg["seconds"].append(took)
            pcg["memory"].append(peak)
            took, peak = run([sys.executable, "-m", "bench.big_world_floor", str(SIDE), str(root / "floor.bin"), "7"], Path(__file__).parent.parent)
            floor["seconds"].append(took)
            floor["memory"].append(peak)
        sizes = {"pcg": (root / "exports" / "world" / "map_000.tmx").stat().st_size, "floor": (root / "floor.bin").stat().st_size}
    finally:
        shutil.rmtree(root, ignore_errors=True)
    table = Table(title=f"a {SIDE} x {SIDE} cave, labelled, to a file: pcg build against plain numpy + scipy (min of {REPEATS})")
    for col in ("measure", "pcg build", "numpy script", "ratio", "target", "met"):
        table.add_column(col, justify="left" if col == "measure" else "right")
    rows = (
        ("seconds", min(pcg["seconds"]), min(floor["seconds"]), lambda v: f"{v:.2f} s"),
        ("file", sizes["pcg"], sizes["floor"], lambda v: f"{v / 1e6:.1f} MB"),
        ("memory", min(pcg["memory"]), min(floor["memory"]), lambda v: f"{v / 2**20:,.0f} MiB"),
    )
    for name, ours, theirs, shown in rows:
        table.add_row(name, shown(ours), shown(theirs), ratio(ours, theirs), f"<= {TARGETS[name]}x", met(ours / theirs <= TARGETS[name]))
    console.print(table)


if __name__ == "__main__":
    main()
