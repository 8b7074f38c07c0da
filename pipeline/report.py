"""`pcg stats`: the statistics of a built pack, aggregated per stage over its maps, its
diversity (pipeline.diversity), and the forms scripts read them in (`--format csv|json`,
described in docs/commands.md)."""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from pipeline.cache import LevelCache
    from pipeline.diversity import Spread

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
    kinds = stage_kinds(manifest)
    stages = []
    for name, table in stage_stats(manifest).items():
        item: dict[str, Any] = {"stage": name, "kind": kinds.get(name, "?"), "stats": {k: {"mean": m, "sd": sd, "maps": n} for k, (m, sd, n) in table.items()}}
        found = (measured or {}).get(name)
        if found is not None and found.spreads:
            item["diversity"] = {s.measure: {**s.summary(), "threshold": s.threshold, "nearest": list(s.nearest)} for s in found.spreads}
        if found is not None and found.judged:
            item["playability"] = {"solvable": found.solvable / found.judged, "maps": found.judged}
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


@dataclass(frozen=True)
class Measured:
    """What `pcg stats` measures of a stage's Levels over the pack's maps, besides their stats."""

    spreads: list[Spread]  # diversity: one per measure
    solvable: int  # maps whose exit can be reached from the spawn, keys and locks respected
    judged: int  # maps with a spawn and an exit to judge


def measure_pack(manifest: dict[str, Any], cache: LevelCache, threshold: float) -> tuple[dict[str, Measured], list[str]]:
    """Per stage with statistics, its diversity and playability over the pack's maps, from the
    Levels in the build cache; and the stages left out, each with why (a Level no longer cached)."""
    from pipeline.diversity import diversity
    from pipeline.playability import solvable

    out: dict[str, Measured] = {}
    missing: list[str] = []
    for name in stage_stats(manifest):
        levels = []
        for entry in sorted(manifest["maps"], key=lambda m: m["index"]):
            key = entry["stages"].get(name, {}).get("key")
            level = cache.load(key) if key else None
            if level is None:
                missing.append(f"{name}: map {entry['index']} is no longer in the build cache (build the recipe again to measure it)")
                break
            levels.append(level)
        else:
            # What blocks, as the stage itself says (`walls` of a placement stage), else walls.
            walls = manifest["stages"].get(name, {}).get("params", {}).get("walls") or ["wall"]
            verdicts = [v for v in (solvable(lv, tuple(walls)) for lv in levels) if v is not None]
            out[name] = Measured(diversity(levels, threshold, tuple(walls)), sum(verdicts), len(verdicts))
    return out, missing
