"""A 1,000-map pack (41 x 41-cell mazes, generate -> label -> TMX + preview PNG, and the pack's
contact sheet) built with -j 1, -j 2 and a Dask LocalCluster(2), each REPEATS times (3, the runs
of the three executors interleaved so a change in the host's load hits all of them): min and
median seconds, maps per second, the speedup over -j 1 in the same run, and issue 15's target of
300 maps/s with -j 2 (judged on the min, the undisturbed run). Then a no-change rebuild of that
pack (target < 0.5 s; 3 runs) beside the baseline `pcg --help` (Python start-up and the CLI's
imports, measured in the same run); `pcg watch` latency from saving a one-map recipe to its
rewritten TMX (target < 0.5 s, debounce included; 7 saves); and where a map's time goes: the
first SAMPLE maps of the same recipe timed phase by phase in this process with the pipeline's own
functions (generate, label, TMX, preview, thumbnail, cache store, write; the contact sheet once
per pack, from those thumbnails), against the -j 1 build's seconds per map.

Every build is a real `pcg` command in a fresh process on a fresh project, as a user runs it;
the projects are deleted when the bench ends, not between runs (about 1.1 GB meanwhile).
The pack keeps its 1,000 maps (the target is about that pack); repeats are at 3 so that `make
bench` stays under 5 minutes on a 2-core machine.
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
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.timing import met, ratio

MAPS = 1000
REPEATS = 3
TARGET_MAPS_PER_S = 300  # with -j 2
TARGET_NO_CHANGE_S = 0.5
TARGET_WATCH_S = 0.5
SAMPLE = 240  # maps timed phase by phase: as many as the contact sheet shows
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


# As a user's machine runs Python: one that writes bytecode caches. With PYTHONDONTWRITEBYTECODE
# set (some containers and CI images set it), every command compiles the package's modules from
# source again, about 0.1 s a process, which is no property of the pipeline.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def pcg(project: Path, *args: str) -> float:
    """Seconds the command took, start to exit."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=project, check=True, capture_output=True, env=ENV)
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
        "from pipeline.recipe.load import load_recipe; from pipeline.building.builder import Builder; from pipeline.building.cache import LevelCache;"
        "from pipeline.building.executor import make_executor; from pipeline import registry; registry.kinds();"
        "t=time.perf_counter(); r=load_recipe('recipes/pack.toml');"
        "b=Builder(exports_root=pathlib.Path('exports'), cache=LevelCache(pathlib.Path('.pcg-cache')));"
        "p=b.plan(r); assert not p.stale_maps; b.build(p, make_executor(1)); print(time.perf_counter()-t)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=project, check=True, capture_output=True, text=True, env=ENV)
    return float(out.stdout.strip())


def watch_latency(root: Path, saves: int = 7) -> list[float]:
    """Seconds from each save of a one-map recipe to its TMX being replaced."""
    project = fresh(root, "watch", ONE_MAP)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "watch", "recipes", "-j", "1"],
        cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENV,
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


def breakdown(project: Path, scratch: Path) -> tuple[dict[str, list[float]], list[float]]:
    """Seconds per map of each phase, one figure per pass (REPEATS passes, each into a fresh cache
    and pack folder so the stores and writes do real work) over the first SAMPLE maps of the
    built project's recipe, run here with the functions a worker runs; and the contact sheet's
    seconds for the whole pack, once per pass."""
    from pipeline.building.cache import LevelCache
    from pipeline.building.contact_sheet import CONTACT_SHEET, apply_contact_sheet, plan_contact_sheet
    from pipeline.building.manifest import read_manifest
    from pipeline.building.plan import KeyMaker, export_provenance
    from pipeline.recipe.load import load_recipe
    from pipeline.registry import ExportContext
    from pipeline.seeds import rng_for
    from pipeline.fsio import land, sha256_bytes
    from pipeline.building.worker import MapResult, write_files

    recipe = load_recipe(project / "recipes" / "pack.toml")
    maze, regions, tmx = (recipe.by_name[n].params for n in ("maze", "regions", "tmx"))
    no_preview = tmx.model_copy(update={"preview": False})
    maker = KeyMaker(recipe)
    names = ("generate (maze.backtracker)", "stages (regions.label)", "TMX (+ tileset)", "preview PNG",
             "contact-sheet thumbnail (drawn small)", "cache store (2 Levels)", "write (sha256 + atomic write)")
    thumbnails: dict[str, Any] = {}
    phases: dict[str, list[float]] = {name: [] for name in names}
    clock = time.perf_counter
    for p in range(REPEATS):
        cache = LevelCache(scratch / f"pass{p}" / ".pcg-cache")
        pack_dir = scratch / f"pass{p}" / "exports" / recipe.pack.name
        totals = [0.0] * len(names)
        for i in range(-1, SAMPLE):  # a warm-up first (map SAMPLE), not counted
            index = i if i >= 0 else SAMPLE
            keys = maker.keys(index)
            ctx = ExportContext(stem=recipe.pack.stem(index), provenance=export_provenance(recipe, index, "tmx"))
            t0 = clock()
            level = maze.run([], rng_for(keys["maze"][1]))
            t1 = clock()
            labelled = regions.run([level], rng_for(keys["regions"][1]))
            t2 = clock()
            no_preview.export(labelled, ctx)  # type: ignore[attr-defined]
            t3 = clock()
            files = tmx.export(labelled, ctx)  # type: ignore[attr-defined]
            t4 = clock()
            thumbnail = tmx.thumbnail(labelled)
            t5 = clock()
            cache.store(keys["maze"][0], level)
            cache.store(keys["regions"][0], labelled)
            t6 = clock()
            # As a -j N build does: the worker stages the map's files, the build renames them in.
            result = MapResult(index, files=files)
            write_files(result, pack_dir, cache.temp_dir, {}, set())
            for path, tmp in result.staged.items():
                land(Path(tmp), pack_dir / path)
            t7 = clock()
            if i >= 0:
                preview = tmx.preview_file(ctx.stem)
                thumbnails[sha256_bytes(files[preview])] = thumbnail
                for k, took in enumerate((t1 - t0, t2 - t1, t3 - t2, (t4 - t3) - (t3 - t2), t5 - t4, t6 - t5, t7 - t6)):
                    totals[k] += took
        for name, total in zip(names, totals):
            phases[name].append(total / SAMPLE)

    built = project / "exports" / recipe.pack.name
    manifest = read_manifest(built / "manifest.json")
    assert manifest is not None
    sheet = []
    for _ in range(REPEATS):
        (built / CONTACT_SHEET).unlink()
        start = clock()
        update = plan_contact_sheet(built, recipe, manifest, manifest.contact_sheet, thumbnails)
        apply_contact_sheet(built, update, LevelCache(project / ".pcg-cache").temp_dir)
        sheet.append(clock() - start)
    return phases, sheet


def main() -> None:
    console = Console(width=140)
    root = Path(tempfile.mkdtemp(prefix="pcg-bench-scale-"))
    try:
        # Compile (or load) the kernels once, outside the timings.
        pcg(fresh(root, "warm", ONE_MAP), "build", "recipes", "-q")
        runs: list[tuple[str, list[str]]] = [("-j 1", ["-j", "1"]), ("-j 2", ["-j", "2"])]
        if importlib.util.find_spec("distributed") is not None:
            runs.append(("Dask LocalCluster(2)", ["--dask-local", "2"]))
        else:
            console.print("[yellow]Dask is not installed (pip install 'pcg-pipeline[dask]'): skipping its run[/yellow]")
        seconds: dict[str, list[float]] = {label: [] for label, _ in runs}
        built = None
        for r in range(REPEATS):  # interleaved: -j 1, -j 2, Dask, -j 1, ...
            for label, args in runs:
                # Every run's project stays until the bench ends: deleting one (120 MB in 4,000
                # files) makes the disk discard its blocks a few seconds later, and on this
                # machine's ext4 (mounted with online discard) every file the next run creates
                # then costs 0.8 ms of kernel time instead of 0.03 ms: 4 s more a run, the
                # bench's own doing and no property of the pipeline.
                project = fresh(root, f"{label.replace(' ', '_')}_{r}", RECIPE)
                seconds[label].append(pcg(project, "build", "recipes", "-q", *args))
                built = built or project  # kept for the no-change rebuild and the breakdown
        table = Table(
            title=f"{MAPS} maps of 41 x 41 cells: generate -> label -> TMX + preview PNG + contact sheet ({REPEATS} runs each)",
            caption=f"baseline: -j 1 in the same run; target {TARGET_MAPS_PER_S} maps/s with -j 2, judged on the min",
        )
        for col in ("executor", "min s", "median s", "maps / s (min)", "maps / s (median)", "speedup vs -j 1",
                    "target", "met"):
            table.add_column(col, justify="right")
        base = min(seconds["-j 1"])
        for label, _ in runs:
            low, median = min(seconds[label]), statistics.median(seconds[label])
            target = label == "-j 2"
            table.add_row(
                label, f"{low:.2f}", f"{median:.2f}", f"{MAPS / low:.0f}", f"{MAPS / median:.0f}", ratio(base, low),
                f">= {TARGET_MAPS_PER_S} maps/s" if target else "",
                met(MAPS / low >= TARGET_MAPS_PER_S) if target else "",
            )
        console.print(table)

        assert built is not None
        help_runs = [pcg(built, "--help") for _ in range(REPEATS)]
        command = [pcg(built, "build", "recipes", "-q") for _ in range(REPEATS)]
        inside = [no_change_in_process(built) for _ in range(REPEATS)]
        startup = min(help_runs)
        table = Table(
            title=f"no-change rebuild of the {MAPS}-map pack ({REPEATS} runs each; target < {TARGET_NO_CHANGE_S} s, judged on the min)",
            caption="baseline: `pcg --help` (Python start-up and the CLI's imports), measured in the same run",
        )
        for col in ("measured", "min s", "median s", "x pcg --help", "met"):
            table.add_column(col, justify="right")
        table.add_row("baseline: `pcg --help`", f"{startup:.3f}", f"{statistics.median(help_runs):.3f}", "1.00x", "")
        table.add_row("load recipe + plan + check every file (after imports)", f"{min(inside):.3f}",
                      f"{statistics.median(inside):.3f}", ratio(min(inside), startup), met(min(inside) < TARGET_NO_CHANGE_S))
        table.add_row("the whole `pcg build` command (with Python start-up)", f"{min(command):.3f}",
                      f"{statistics.median(command):.3f}", ratio(min(command), startup), met(min(command) < TARGET_NO_CHANGE_S))
        console.print(table)

        latencies = watch_latency(root)
        table = Table(title=f"pcg watch: save of a one-map recipe -> rewritten TMX (debounce 0.1 s; target < {TARGET_WATCH_S} s)")
        for col in ("saves", "min s", "median s", "max s", "met (median)"):
            table.add_column(col, justify="right")
        median = statistics.median(latencies)
        table.add_row(str(len(latencies)), f"{min(latencies):.3f}", f"{median:.3f}", f"{max(latencies):.3f}", met(median < TARGET_WATCH_S))
        console.print(table)

        phases, sheet = breakdown(built, root / "breakdown")
        measured = statistics.median(seconds["-j 1"]) / MAPS
        table = Table(
            title=f"where a map's time goes: the first {SAMPLE} maps, phase by phase, in one process ({REPEATS} passes)",
            caption=f"baseline: the -j 1 builds above, median {measured * MAPS:.2f} s / {MAPS} maps (a pass here is one more run "
            f"of the same work: compared median to median); {TARGET_MAPS_PER_S} maps/s with -j 2 leaves "
            f"{2e3 / TARGET_MAPS_PER_S:.1f} ms of one core per map",
        )
        for col in ("phase", "min ms / map", "median ms / map", "share of -j 1 per map (median)"):
            table.add_column(col, justify="right")
        rows = [*phases.items(), (f"contact sheet ({statistics.median(sheet):.2f} s per pack, / {MAPS})", [t / MAPS for t in sheet])]
        for name, runs in rows:
            table.add_row(name, f"{min(runs) * 1e3:.2f}", f"{statistics.median(runs) * 1e3:.2f}", f"{statistics.median(runs) / measured:.0%}")
        total = sum(statistics.median(runs) for _, runs in rows)
        table.add_row("sum of the phases", f"{sum(min(runs) for _, runs in rows) * 1e3:.2f}", f"{total * 1e3:.2f}", f"{total / measured:.0%}")
        table.add_row("rest: start-up, imports, plan, manifest (noise may make it < 0)", "",
                      f"{(measured - total) * 1e3:.2f}", f"{(measured - total) / measured:.0%}")
        table.add_row("baseline: -j 1 build, seconds per map", f"{min(seconds['-j 1']) / MAPS * 1e3:.2f}", f"{measured * 1e3:.2f}", "100%")
        console.print(table)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("NO_COLOR", "1")
    main()
