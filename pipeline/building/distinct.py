"""`pack.distinct`: each map's attempt, chosen so that no map stands closer than `min` to an
earlier one.

The rule is sequential, so the pack is the same however many workers make it: map i keeps the
first of its attempts that passes its filters and stands at least `min` (`diversity`'s distance)
from every earlier map as kept; a map none of whose first `attempts` passing attempts does fails,
and the maps after it are compared with the others. A map is made again (redrawn) as a filter makes it
again: every stage from the next attempt's seeds, the attempt recorded in the manifest.

Attempts are made in parallel, in rounds: every map's first passing attempt at once, then the
rule is walked in map order, and each map that has no attempt apart from the maps kept before it
asks for its next one; those are made at once, and so on. A map kept while an earlier one waits
may lose its place when that one settles (it is walked again each round), so the last walk, in
which no map waits, is the rule itself. Nothing here writes a pack file: the attempts' Levels go
to the build cache, and the build then exports the kept ones as usual.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from typing import Any

from pipeline.diversity import Kept, Print
from pipeline.recipe.model import Distinct, distinct_stage, Recipe

# A map still too close asks for 1, 2, 4... attempts in the rounds it waits, at most this many
# at once: a map that needs many attempts takes few rounds (each walks the rule again), while
# one that needs one more wastes none.
MOST_AT_ONCE = 8
# Bumped when the distance changes: every map is chosen again, as for a new `min`.
DISTANCE_VERSION = 1


def rule(recipe: Recipe) -> dict[str, Any] | None:
    """What decides which attempts a pack keeps (the manifest records it): `distinct` with its
    compared stage resolved, and the distance's version. None for a pack without `distinct`."""
    distinct = recipe.pack.distinct
    if distinct is None:
        return None
    return {**distinct.model_dump(mode="json"), "stage": distinct_stage(recipe), "version": DISTANCE_VERSION}


@dataclass
class _Map:
    fixed: int | None  # an attempt kept as recorded: the map is not chosen again in this build
    made: dict[int, Print] = field(default_factory=dict)  # its passing attempts made, by attempt
    next: int = 0  # the first attempt not asked for yet
    rounds: int = 0  # rounds it has waited: it asks for twice as many attempts each round
    # The first attempt from which the map cannot be made (a stage failed there, or no attempt
    # from there passes the filters), and why: (stage, message).
    failure: tuple[int, tuple[str, str]] | None = None

    @property
    def tried(self) -> list[tuple[int, Print]]:
        """Its passing attempts in order, up to the first it cannot be made from."""
        end = self.failure[0] if self.failure is not None else None
        return sorted((a, p) for a, p in self.made.items() if end is None or a < end)


@dataclass(frozen=True)
class Choice:
    """The last walk: the attempt kept per map chosen, why a map was redrawn, and the maps that fail."""

    picks: dict[int, int]
    redrawn: dict[int, str]
    refused: dict[int, tuple[str, str]]


class Chooser:
    """The rule's state between rounds: `wanted()` walks it and says which attempts to make next;
    `add` takes what a probe made; once nothing is wanted, `choice()` is the answer."""

    def __init__(self, distinct: Distinct, order: list[int], fixed: dict[int, int]):
        self.distinct = distinct
        self.order = order
        self.maps = {i: _Map(fixed.get(i), next=fixed.get(i, 0)) for i in order}
        self._choice = Choice({}, {}, {})
        # The maps before the first one the last walk waited for: settled, since each depends on
        # the maps before it alone; a walk keeps them as they are, measuring nothing.
        self._settled = 0

    def add(self, index: int, start: int, attempt: int, made: Print | None, failure: tuple[str, str] | None) -> None:
        """What a probe from attempt `start` made: the first passing attempt from there, and its
        measure; or the failure it met instead."""
        m = self.maps[index]
        if failure is not None or made is None:
            if m.failure is None or start < m.failure[0]:
                m.failure = (start, failure or ("-", "no measure came back"))
            return
        m.made[attempt] = made  # probes from several starts may find one attempt: kept once
        m.next = max(m.next, attempt + 1)

    def wanted(self) -> list[tuple[int, int]]:
        """(map, attempt to start from) for every map the walk cannot settle yet."""
        kept = Kept()
        picks: dict[int, int] = {}
        redrawn: dict[int, str] = {}
        refused: dict[int, tuple[str, str]] = {}
        wanted: list[tuple[int, int]] = []
        least, most = self.distinct.min, self.distinct.attempts
        before = self._choice
        for position, index in enumerate(self.order):
            m = self.maps[index]
            if position < self._settled:
                if index in before.picks:
                    kept.add(index, next(made for attempt, made in m.tried if attempt == before.picks[index]))
                    picks[index] = before.picks[index]
                    if index in before.redrawn:
                        redrawn[index] = before.redrawn[index]
                else:
                    refused[index] = before.refused[index]
                continue
            if m.fixed is not None:  # kept as it is, whatever its distance
                if m.tried:
                    kept.add(index, m.tried[0][1])
                    picks[index] = m.tried[0][0]
                elif m.failure is not None:
                    refused[index] = m.failure[1]
                else:
                    wanted.append((index, m.next))
                continue
            candidates = m.tried[:most]
            pick, closest = self._first_apart(kept, candidates)
            if pick is not None:
                kept.add(index, pick[1])
                picks[index] = pick[0]
                if closest is not None:
                    redrawn[index] = f"redrawn: attempt {closest[1]} was {closest[0]:.4f} from map {closest[2]} (pack.distinct {least:g})"
            elif m.failure is not None:
                refused[index] = m.failure[1]
            elif len(candidates) < most:
                # Ask for more at once the longer it waits: fewer rounds for a map that needs many.
                ask = min(2**m.rounds, most - len(candidates), MOST_AT_ONCE)
                wanted += [(index, m.next + k) for k in range(ask)]
            elif closest is not None:
                refused[index] = (
                    "pack.distinct",
                    f"none of its first {most} attempts stands {least:g} apart from the maps before it: the farthest,"
                    f" attempt {closest[1]}, is {closest[0]:.4f} from map {closest[2]} (lower pack.distinct.min, or raise"
                    " pack.distinct.attempts)",
                )
        self._choice = Choice(picks, redrawn, refused)
        self._settled = self.order.index(wanted[0][0]) if wanted else len(self.order)
        for index, start in wanted:
            m = self.maps[index]
            m.next = max(m.next, start + 1)
        for index in dict.fromkeys(index for index, _ in wanted):
            self.maps[index].rounds += 1
        return wanted

    def _first_apart(self, kept: Kept, candidates: list[tuple[int, Print]]) -> tuple[tuple[int, Print] | None, tuple[float, int, int | None] | None]:
        """The first candidate at least `min` from every map kept, and the farthest of those
        before it (distance, attempt, the map it is nearest to), if any."""
        closest: tuple[float, int, int | None] | None = None
        for attempt, made in candidates:
            distance, near = kept.nearest(made)
            if distance >= self.distinct.min:
                return (attempt, made), closest
            if closest is None or distance > closest[0]:
                closest = (distance, attempt, near)
        return None, closest

    def choice(self) -> Choice:
        return self._choice
