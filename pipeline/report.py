"""`pcg stats`: the statistics of a built pack, aggregated per stage over its maps."""

from __future__ import annotations

import math
from typing import Any

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
            out[name][key] = (mean, round(sd, 9), len(xs))  # no 1e-16 noise for constant stats
    return out
