"""`pcg stats`: the statistics of a built pack, aggregated per stage over its maps, its
diversity (pipeline.diversity), as a table or in the forms scripts read them in (`--format
csv|json`, described in docs/commands.md)."""

from __future__ import annotations

import csv
import io
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Optional

import typer

from pipeline.commands.messages import console, user_errors
from pipeline.commands.options import CACHE, EXPORTS, JOBS

if TYPE_CHECKING:
    from pipeline.building.manifest import Manifest
    from pipeline.building.measures import Measured

Format = Literal["table", "csv", "json"]

# Raised with `--format json`, so a script can tell which shape it reads.
JSON_FORMAT = 1
CSV_HEADER = ("stage", "kind", "stat", "mean", "sd", "maps")

# The maze statistics in the order a table shows them; other numeric stats follow.
PREFERRED = ("cells", "dead_end_pct", "solution_pct", "diameter", "loops", "straightness")


def stage_stats(manifest: Manifest) -> dict[str, dict[str, tuple[float, float, int]]]:
    """Per stage (in recipe order) and numeric stat: (mean, standard deviation, maps)."""
    values: dict[str, dict[str, list[float]]] = {}
    for name in manifest.stages:
        for entry in manifest.maps:
            for key, value in (entry.stats_of(name) or {}).items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    values.setdefault(name, {}).setdefault(key, []).append(float(value))
    out: dict[str, dict[str, tuple[float, float, int]]] = {}
    for name, table in values.items():
        keys = [k for k in PREFERRED if k in table] + sorted(k for k in table if k not in PREFERRED)
        out[name] = {}
        for key in keys:
            xs = table[key]
            mean = sum(xs) / len(xs)
            sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
            out[name][key] = (round(mean, 9), round(sd, 9), len(xs))  # no 1e-16 noise for constant stats
    return out


def stage_kinds(manifest: Manifest) -> dict[str, str]:
    """Each stage's kind, as the manifest records it."""
    return {name: str(config.get("kind", "?")) for name, config in manifest.stages.items()}


def stats_json(manifest: Manifest, measured: dict[str, Measured] | None = None) -> str:
    """The statistics as one JSON document: `{"format": 1, "pack", "maps", "stages": [{"stage",
    "kind", "stats": {STAT: {"mean", "sd", "maps"}}, "diversity": {MEASURE: {"min", "median",
    "max", "distinct", "threshold", "nearest": [per map]}}, "playability": {"solvable",
    "maps"}}]}`, stages in recipe order and stats in table order (keys never sorted: order
    carries meaning, and it is stable); `diversity` and `playability` only for stages measured
    (their Levels still cached; playability for maps with a spawn and an exit)."""
    from pipeline.building.measures import record

    kinds = stage_kinds(manifest)
    measures = record(measured or {})
    stages = []
    for name, table in stage_stats(manifest).items():
        item: dict[str, Any] = {"stage": name, "kind": kinds.get(name, "?"), "stats": {k: {"mean": m, "sd": sd, "maps": n} for k, (m, sd, n) in table.items()}}
        item.update(measures.get(name, {}))
        stages.append(item)
    doc = {"format": JSON_FORMAT, "pack": manifest.pack["name"], "maps": len(manifest.maps), "stages": stages}
    return json.dumps(doc, indent=2) + "\n"


def stats_csv(manifest: Manifest) -> str:
    """The statistics as CSV, one row per stage and stat: `stage,kind,stat,mean,sd,maps`. Long
    rather than wide, so the columns are the same whichever stats a pack has."""
    kinds = stage_kinds(manifest)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for name, table in stage_stats(manifest).items():
        for key, (mean, sd, n) in table.items():
            writer.writerow((name, kinds.get(name, "?"), key, repr(mean), repr(sd), n))
    return buf.getvalue()


@user_errors
def stats(
    pack: Path = typer.Argument(
        ..., help="A recipe (its pack is built first if stale), or a built pack: its name under exports/, its folder or its manifest.json."
    ),
    format_: str = typer.Option("table", "--format", help="table (for people), csv or json (for scripts; docs/commands.md has their shapes)."),
    threshold: Optional[float] = typer.Option(
        None, "--threshold", min=0.0, max=1.0,
        help="Diversity: a map at least this far (share of tiles, or of the way) from every other map counts as distinct. Default: the pack's distinct, else 0.1.",
    ),
    jobs: Optional[int] = JOBS,
    out: Path = EXPORTS,
    cache: Path = CACHE,
) -> None:
    """Statistics of a pack: mean and spread per stage over its maps, and how varied its maps are.

    Stages whose Level an export stage writes are measured: their stats (dead ends, solution
    length, diameter, loops, straightness for mazes, see docs/mazes.md; critical_path and
    backtrack for locks), and their diversity: each map's distance to the nearest other map, by
    tiles and by the way from spawn to exit (docs/gameplay.md).
    """
    from pipeline.building.cache import LevelCache
    from pipeline.building.manifest import MANIFEST, load_manifest
    from pipeline.building.measures import pack_measures, threshold_of
    from pipeline.building.workspace import Workspace
    from pipeline.errors import PipelineError
    from pipeline.output import print_table
    from pipeline.output import table as new_table

    if format_ not in ("table", "csv", "json"):
        raise PipelineError([f"--format: table, csv or json (got {format_!r})"])
    shown = console()
    workspace = Workspace(out, cache)
    if pack.suffix == ".toml":
        from pipeline.building.request import BuildRequest
        from pipeline.commands.build import run_build
        from pipeline.recipe.load import load_recipe

        run_build(workspace, [load_recipe(pack)], [], BuildRequest.checked(pack, jobs=jobs), True, shown)
    folder = workspace.pack_folder(pack)
    manifest = load_manifest(folder / MANIFEST)
    summary = stage_stats(manifest)
    if not summary:
        raise PipelineError([f"{pack}: no stage of this pack has statistics (only stages that an export stage writes are measured)"])
    threshold = threshold_of(manifest) if threshold is None else threshold
    measured, unmeasured = pack_measures(manifest, LevelCache(cache), threshold)
    if format_ != "table":
        sys.stdout.write(stats_json(manifest, measured) if format_ == "json" else stats_csv(manifest))
        return
    keys = list(dict.fromkeys(k for table in summary.values() for k in table))
    table = new_table(shown, f"{manifest.pack['name']}: mean ± sd over {len(manifest.maps)} maps")
    table.add_column("stage")
    table.add_column("kind")
    for key in keys:
        table.add_column(key, justify="right")
    kinds = stage_kinds(manifest)
    for name, values in summary.items():
        cells = [f"{plain(values[k][0], 4)} ± {plain(values[k][1], 2)}" if k in values else "" for k in keys]
        table.add_row(name, kinds.get(name, "?"), *cells)
    print_table(shown, table)
    if any(m.spreads for m in measured.values()):
        table = new_table(shown, f"diversity: distance to the nearest other map; distinct: >= {threshold:g} from all")
        for col in ("stage", "measure", "min", "median", "max", "distinct"):
            table.add_column(col, justify="left" if col in ("stage", "measure") else "right")
        for name, found in measured.items():
            for spread in found.spreads:
                d = spread.summary()
                table.add_row(name, spread.measure, *(f"{d[k]:.3f}" for k in ("min", "median", "max")), f"{d['distinct']:.0%}")
        print_table(shown, table)
    for name, found in measured.items():
        if found.judged:
            shown.print(f"{name}: {found.solvable} of {found.judged} maps can be finished (exit reached from the spawn, keys and locks respected)")
    for line in unmeasured:
        shown.print(f"diversity not measured: {line}")


def plain(x: float, digits: int) -> str:
    """`x` to about `digits` significant digits, never in exponent form (160, not 1.6e+02)."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    text = f"{x:.{max(0, digits - 1 - math.floor(math.log10(abs(x))))}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text
