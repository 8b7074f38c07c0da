"""Flood-it: how many paint-bucket moves a board takes, greedily and at best."""

from __future__ import annotations

from typing import ClassVar, Iterator

import numpy as np
from pydantic import Field

from pipeline.level import Level
from pipeline.registry import StageParams, stage
from pipeline.stages.regions.label import label_regions


@stage("puzzle.flood_it", version=1)
class FloodIt(StageParams):
    """Rate a blob map as a flood-it puzzle: how many moves solve it. From the top-left tile,
    each move paints the flooded area one colour, which joins every touching patch of that
    colour; the board is solved when it is one colour. Records `moves_greedy` (always the colour
    that floods the most tiles; ties to the first colour), and for boards of at most
    `optimal_max_patches` patches `moves_optimal` (a shortest solution, by iterative-deepening
    search; left out if `search_budget` states do not settle it). `difficulty` is the optimal
    count when known, else the greedy one.
    """

    arity: ClassVar[tuple[int, int]] = (1, 1)
    adds_stats: ClassVar[tuple[str, ...] | None] = ("moves_greedy", "patches", "moves_optimal", "difficulty")

    optimal_max_patches: int = Field(60, ge=0, le=400, description="Largest board (in patches) solved exactly.")
    search_budget: int = Field(200_000, ge=1, le=100_000_000, description="Most search states for the exact solution.")

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        level = inputs[0]
        board = Board.from_tiles(level.tiles)
        greedy = board.greedy_moves()
        props: dict[str, int | bool] = {"moves_greedy": greedy, "patches": board.count}
        optimal = board.optimal_moves(greedy, self.search_budget) if board.count <= self.optimal_max_patches else None
        if optimal is not None:
            props["moves_optimal"] = optimal
        props["difficulty"] = optimal if optimal is not None else greedy
        return Level(tiles=level.tiles, alphabet=level.alphabet, layers=dict(level.layers), objects=list(level.objects),
                     properties={**level.properties, **props})


class Board:
    """A board as its patches (same-colour connected parts): colours, sizes and neighbours as
    bit sets. Tiles outside the flooded area never change colour, so a position is just the
    set of patches flooded so far."""

    def __init__(self, colour: list[int], size: list[int], near: list[int]):
        self.colour = colour
        self.size = size
        self.near = near
        self.count = len(colour)
        self.by_colour: dict[int, int] = {}
        for p, c in enumerate(colour):
            self.by_colour[c] = self.by_colour.get(c, 0) | 1 << p
        self.all = (1 << self.count) - 1

    @classmethod
    def from_tiles(cls, tiles: np.ndarray) -> Board:
        # Label each colour's patches; patch 0 is the one holding the top-left tile.
        patch = np.zeros(tiles.shape, dtype=np.int64)
        colour: list[int] = []
        size: list[int] = []
        first = int(tiles[0, 0])
        for c in [first] + sorted(int(v) for v in np.unique(tiles) if v != first):
            labels, sizes = label_regions(tiles == c)
            where = labels > 0
            if c == first:
                # Keep the origin's patch first: swap its label with label 1.
                k = int(labels[0, 0])
                labels = np.where(labels == k, 1, np.where(labels == 1, k, labels))
                sizes = sizes.copy()
                sizes[[0, k - 1]] = sizes[[k - 1, 0]]
            patch[where] = labels[where] + len(colour) - 1
            colour += [c] * len(sizes)
            size += [int(s) for s in sizes]
        near = [0] * len(colour)
        for a, b in ((patch[:, :-1], patch[:, 1:]), (patch[:-1, :], patch[1:, :])):
            diff = a != b
            for p, q in set(zip(a[diff].tolist(), b[diff].tolist())):
                near[p] |= 1 << q
                near[q] |= 1 << p
        return cls(colour, size, near)

    def around(self, patches: int) -> int:
        """Every patch touching one of `patches`."""
        border = 0
        for p in _members(patches):
            border |= self.near[p]
        return border

    def grow(self, flooded: int, colour: int) -> int:
        """The flooded set after painting it `colour`."""
        return flooded | (self.around(flooded) & self.by_colour.get(colour, 0) & ~flooded)

    def cells(self, patches: int) -> int:
        return sum(self.size[p] for p in _members(patches))

    def greedy_moves(self) -> int:
        flooded, moves = 1, 0
        while flooded != self.all:
            best, best_cells = flooded, -1
            for c in sorted(self.by_colour):
                grown = self.grow(flooded, c)
                cells = self.cells(grown)
                if grown != flooded and cells > best_cells:
                    best, best_cells = grown, cells
            flooded = best
            moves += 1
        return moves

    def _lower_bound(self, flooded: int) -> int:
        # Each colour left outside needs a move of its own, and the farthest patch needs as
        # many moves as its distance (in patches) from the flood: both are admissible.
        left = sum(1 for mask in self.by_colour.values() if mask & ~flooded)
        frontier, seen, dist = flooded, flooded, 0
        while seen != self.all:
            frontier = self.around(frontier) & ~seen
            if not frontier:
                break
            seen |= frontier
            dist += 1
        return max(left, dist)

    def optimal_moves(self, upper: int, budget: int) -> int | None:
        """Fewest moves, by iterative deepening (IDA*) from the lower bound up to `upper` (a
        known solution); None if more than `budget` positions would be needed."""
        spent = 0

        def solvable(flooded: int, moves_left: int) -> bool | None:
            nonlocal spent
            if flooded == self.all:
                return True
            if self._lower_bound(flooded) > moves_left:
                return False
            spent += 1
            if spent > budget:
                return None
            # Colours that touch the flood, most tiles gained first (finds solutions early).
            options = sorted(
                {self.grow(flooded, c) for c in self.by_colour} - {flooded},
                key=lambda g: (-self.cells(g), g),
            )
            for grown in options:
                found = solvable(grown, moves_left - 1)
                if found is None or found:
                    return found
            return False

        for bound in range(self._lower_bound(1), upper):
            found = solvable(1, bound)
            if found is None:
                return None
            if found:
                return bound
        return upper


def _members(patches: int) -> Iterator[int]:
    """The patch numbers in a bit set, lowest first."""
    while patches:
        low = patches & -patches
        yield low.bit_length() - 1
        patches ^= low
