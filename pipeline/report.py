"""`pcg stats`: the statistics of a built pack, aggregated per stage over its maps, its
diversity (pipeline.diversity), and the forms scripts read them in (`--format csv|json`,
described in docs/commands.md)."""

from __future__ import annotations

import csv
import io
import json
import math
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from pipeline.building.measures import Measured

Format = Literal["table", "csv", "json"]

# Raised with `--format json`, so a script can tell which shape it reads.
JSON_FORMAT = 1
CSV_HEADER = ("stage", "kind", "stat", "mean", "sd", "maps")

# The maze statistics in the order a table shows them; other numeric stats follow.
PREFERRED = ("cells", "dead_end_pct", "solution_pct", "diameter", "loops", "straightness")


def stage_stats(manifest: dict[str, Any]) -> dict[str, dict[str, tuple[float, float, int]]]:
    """Per stage (in recipe order) and numeric stat: (mean, standard deviation, maps)."""
    values: dict[str, dict[str, list[float]]] = {}
    for name in manifest["stages"]:
        for entry in manifest["maps"]:
            for key, value in entry["stages"].get(name, {}).get("stats", {}).items():
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


def stage_kinds(manifest: dict[str, Any]) -> dict[str, str]:
    """Each stage's kind, as the manifest records it."""
    return {name: str(entry.get("kind", "?")) for name, entry in manifest["stages"].items()}


def stats_json(manifest: dict[str, Any], measured: dict[str, Measured] | None = None) -> str:
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
    doc = {"format": JSON_FORMAT, "pack": manifest["pack"]["name"], "maps": len(manifest["maps"]), "stages": stages}
    return json.dumps(doc, indent=2) + "\n"


def stats_csv(manifest: dict[str, Any]) -> str:
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
