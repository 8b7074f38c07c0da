"""Choosing among a map's attempts: the best of N by a stat, and what a map whose attempts all
failed reports about them.

A stage that may reject maps (`filter`) judges one attempt at a time. Keeping the first attempt
that passes piles maps up at the threshold (`difficulty >= 8` gives mostly 8s); `BestOf` makes
the build compare N passing attempts and keep the one whose stat is best, and `failure_report`
says how close the attempts came, so that tuning a test is not blind.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Literal, Union

from pipeline.errors import PipelineError
from pipeline.level import PropertyValue

# "max", "min", a target number, or a band [low, high]
Aim = Union[Literal["max", "min"], float, tuple[float, float]]


@dataclass(frozen=True)
class BestOf:
    """Compare `of` attempts that pass and keep the best by `stat` (ties: the earliest attempt),
    trying at most `attempts` in all."""

    stat: str
    of: int
    aim: Aim
    attempts: int

    def score(self, properties: dict[str, PropertyValue]) -> float:
        """Higher is better. A band scores 0 inside and minus the distance to it outside, so an
        attempt in the band beats any outside it, and among those outside the closest wins."""
        if self.stat not in properties:
            raise PipelineError([f"best: the map has no property {self.stat!r} (it has: {', '.join(sorted(properties))})"])
        value = properties[self.stat]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
            raise PipelineError([f"best: property {self.stat!r} is {value!r}, not a number"])
        return aim_score(self.aim, float(value))


def aim_score(aim: Aim, value: float) -> float:
    if aim == "max":
        return value
    if aim == "min":
        return -value
    low, high = (aim, aim) if isinstance(aim, (int, float)) else aim
    return -max(low - value, value - high, 0.0)


def describe_aim(aim: Aim) -> str:
    if isinstance(aim, str):
        return "highest" if aim == "max" else "lowest"
    if isinstance(aim, (int, float)):
        return f"closest to {number(aim)}"
    return f"in [{number(aim[0])}, {number(aim[1])}], else closest"


def number(value: float) -> str:
    if isinstance(value, int) or float(value).is_integer():
        return str(int(value))
    return f"{value:.4g}"


# One attempt a stage turned down: (attempt, the values of the properties its test names).
Tried = tuple[int, dict[str, PropertyValue]]
# The value an attempt's record holds for a stat its map lacks (one a stage leaves out when it
# cannot settle it, as flood_it's moves_optimal beyond its search_budget).
NOT_MEASURED = "not measured"


def failure_report(test: str, tried: list[Tried], aims: dict[str, Aim], total: int) -> str:
    """`no attempt of 20 passed `difficulty >= 8`: best difficulty 7 (attempt 13); spread 2-7,
    median 4`: per property the test names, the best value reached (where `aims` says which way
    is better) and the spread of the values over the attempts."""
    names = sorted({name for _, values in tried for name in values})
    parts = []
    unmeasured = False
    for name in names:
        seen = [(attempt, values[name]) for attempt, values in tried if name in values]
        missing = sum(v == NOT_MEASURED for _, v in seen)
        if missing:
            unmeasured = True
            parts.append(f"{name} not measured in {missing} of {len(seen)} attempts")
            seen = [(a, v) for a, v in seen if v != NOT_MEASURED]
            if not seen:
                continue
        numeric = [(a, float(v)) for a, v in seen if isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v)]
        if len(numeric) < len(seen):
            shown = sorted({str(v) for _, v in seen})
            parts.append(f"{name} was {', '.join(shown[:5])}{', ...' if len(shown) > 5 else ''}")
            continue
        values = [v for _, v in numeric]
        text = f"spread {number(min(values))}-{number(max(values))}, median {number(statistics.median(values))}"
        if name in aims:
            # max() keeps the first of equal scores: ties go to the earliest attempt.
            attempt, value = max(numeric, key=lambda av: aim_score(aims[name], av[1]))
            text = f"best {name} {number(value)} (attempt {attempt}); {text}"
        else:
            text = f"{name} {text}"
        parts.append(text)
    head = f"no attempt of {total} passed `{test}`"
    hint = "raise attempts, loosen where, or let the stage measure what it left out" if unmeasured else "raise attempts, or loosen where"
    return head + (": " + "; ".join(parts) if parts else "") + f" ({hint})"
