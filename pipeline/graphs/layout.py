"""Laying a level graph out: a position and a template for every room, no two rooms overlapping,
every connection a door.

A depth-first search over the placement order (`order.py`: loops first, each closed as soon as
it opens, its rooms taken from both ends in turn): each room takes a position from the
configuration spaces of the neighbours already placed (their intersection, when a room closes a
loop), in a random order weighted by its templates' weights, and a position overlapping a placed
room is skipped (compiled tests against the placed rooms near it). What keeps it from dead ends:

- reach: a room must still meet some placed rooms through rooms to come (its loop's other end,
  the rooms of loops it shares); positions farther from them than those rooms can span are
  dropped (`reach_bounds`), and two rooms from closing a loop, so are the positions from which
  the last room could not touch both ends (`Problem.two_hops`);
- look-ahead: a position that leaves no place for a room it may crowd out (a loop's last room,
  a neighbour yet to come of this room or of one it joins) is not tried (`_look_ahead`);
- the open: a room with neighbours to come tries positions away from the placed rooms first,
  so the layout grows outwards instead of walking into pockets among its own rooms.

A room tries a few positions (`TRIES`); one with none left sends the search back to the latest
room that took its places away (conflict-directed backjumping), not merely the room before; a
loop, or a run of rooms, that keeps failing sends it back past itself. A search that spends its
budget of steps goes back some rooms before the room that failed most, a few times, then starts
over with the random stream where it is; the time limit ends it with the loop or room that
failed most.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from pipeline.graphs.config_space import _HALF as _HALF_K
from pipeline.graphs.config_space import _SHIFT as _SHIFT_K
from pipeline.graphs.config_space import ConfigSpace, config_space, key_offsets, offset_keys
from pipeline.graphs.model import Edge, LevelGraph
from pipeline.graphs.order import Step, placement_order
from pipeline.graphs.templates import RoomTemplate
from pipeline.jit import compiled


T = TypeVar("T")


class LayoutFailed(Exception):
    """No layout within the time limit (the message names the loop or room that failed most)."""


class Unjoinable(LayoutFailed):
    """A connection no pair of its rooms' templates can make: the templates' fault, which no
    search, time limit or redraw mends."""


@dataclass
class Problem:
    """A graph (corridor rooms included) and, per room, the template variants it may take."""

    graph: LevelGraph
    variants: list[RoomTemplate]
    pools: list[np.ndarray]  # per node: indices into variants
    weights: np.ndarray  # per variant: how often it is chosen, relative to the others of a pool
    not_beside: bool = False  # no two rooms joined (directly or by a corridor room) of one template

    def __post_init__(self) -> None:
        self.adj = self.graph.neighbours()
        at = self.graph.index()
        self.edge_of: dict[tuple[int, int], Edge] = {}
        for e in self.graph.edges:
            self.edge_of[(at[e.a], at[e.b])] = e
            self.edge_of[(at[e.b], at[e.a])] = e
        self.kinds = np.concatenate([v.kinds.ravel() for v in self.variants]).astype(np.uint8)
        sizes = np.array([v.kinds.size for v in self.variants], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.widths = np.array([v.width for v in self.variants], dtype=np.int32)
        self.heights = np.array([v.height for v in self.variants], dtype=np.int32)
        self.pool_w = np.array([self.widths[p].max() for p in self.pools], dtype=np.int64)
        self.pool_h = np.array([self.heights[p].max() for p in self.pools], dtype=np.int64)
        self._spaces: dict[tuple[int, int, str], ConfigSpace] = {}
        self._two: dict[tuple[int, int, int, int], tuple[np.ndarray | None, np.ndarray]] = {}
        self._pooled: dict[tuple[int, int, str], np.ndarray] = {}
        self._pooled_xy: dict[tuple[int, int, str], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._beside: dict[tuple[int, int, str], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._pool_sets = [set(p.tolist()) for p in self.pools]
        self.stride = len(self.variants)
        # What the offset tables below depend on besides the rooms' pools: every map a stage
        # lays out has the same variants, so its tables are made once per process.
        self._sig = tuple(v.digest() for v in self.variants)
        # Per variant, its template (turns of one template are one); per room, the rooms it
        # must not share one with under `not_beside`: its neighbours, through corridor rooms.
        names = sorted({v.name for v in self.variants})
        self.template_of = np.array([names.index(v.name) for v in self.variants], dtype=np.int64)
        corridor = [nd.corridor for nd in self.graph.nodes]
        self.rivals = [
            sorted({w for u in self.adj[v] for w in ((x for x in self.adj[u] if x != v) if corridor[u] else (u,))}) if not corridor[v] else []
            for v in range(len(self.graph.nodes))
        ]

    def pool_offsets(self, a: int, node: int, socket: str) -> np.ndarray:
        """Keys (`placed_keys`) of every (offset, variant) at which `node` can stand beside a
        room of variant `a`, joined through door spots of `socket`: sorted, unique."""
        key = (a, node, socket)
        if key not in self._pooled:
            self._pooled[key] = _shared(("pooled", self._sig, a, tuple(self.pools[node].tolist()), socket), lambda: self._pool_offsets(a, node, socket))
        return self._pooled[key]

    def _pool_offsets(self, a: int, node: int, socket: str) -> np.ndarray:
        parts = []
        for t in self.pools[node].tolist():
            space = self.space(a, t, socket)
            parts.append(offset_keys(space.offsets[:, 0], space.offsets[:, 1]) * self.stride + t)
        return np.sort(np.concatenate(parts)) if parts else np.zeros(0, np.int64)

    def pool_positions(self, a: int, node: int, socket: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`pool_offsets` as (dx, dy, variant) arrays, in the same order."""
        key = (a, node, socket)
        if key not in self._pooled_xy:
            self._pooled_xy[key] = _positions(self.pool_offsets(a, node, socket), self.stride)
        return self._pooled_xy[key]

    def beside_table(self, node: int, other: int, socket: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per variant of `node`'s pool, where `other` may stand beside it (`pool_offsets`),
        packed: starts (stride + 1 entries, a variant's keys from its start to the next's), the
        keys, and per variant the box (x0, y0, x1, y1) those rooms stand in."""
        key = (node, other, socket)
        if key not in self._beside:
            shared = ("beside", self._sig, tuple(self.pools[node].tolist()), tuple(self.pools[other].tolist()), socket)
            self._beside[key] = _shared(shared, lambda: self._beside_table(node, other, socket))
        return self._beside[key]

    def _beside_table(self, node: int, other: int, socket: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        starts = np.zeros(self.stride + 1, dtype=np.int64)
        boxes = np.zeros((self.stride, 4), dtype=np.int64)
        parts = []
        for t in range(self.stride):
            part = self.pool_offsets(t, other, socket) if t in self._pool_sets[node] else _NO_KEYS
            parts.append(part)
            starts[t + 1] = starts[t] + len(part)
            if len(part):
                x, y, v = _positions(part, self.stride)
                boxes[t] = (x.min(), y.min(), (x + self.widths[v]).max(), (y + self.heights[v]).max())
        return starts, np.concatenate(parts), boxes

    def two_hops(self, end: int, a: int, middle: int, last: int) -> tuple[np.ndarray | None, np.ndarray]:
        """Where room `last` can stand, joined to room `end` (of variant `a`) through room
        `middle`: the offsets from `end` as (offset, variant) keys, sorted (None where too many
        to list), and boxes (x0, x1, y0, y1) per variant of `last` and of `middle` that hold
        them. The exact sum of two configuration spaces costs their sizes multiplied, which is
        cheap through a corridor and millions between big rooms; there the boxes serve (two
        rings of offsets add up to nearly their whole box, unless one room is far smaller)."""
        key = (end, a, middle, last)
        if key not in self._two:
            shared = ("two", self._sig, a, tuple(self.pools[middle].tolist()), tuple(self.pools[last].tolist()),
                      self.edge_of[(end, middle)].socket, self.edge_of[(middle, last)].socket)
            self._two[key] = _shared(shared, lambda: self._two_hops(end, a, middle, last))
        return self._two[key]

    def _two_hops(self, end: int, a: int, middle: int, last: int) -> tuple[np.ndarray | None, np.ndarray]:
        boxes = np.zeros((self.stride, len(self.pools[middle]), 4), dtype=np.int64)
        boxes[:, :, 0] = 1  # empty (x0 > x1) unless a space joins them
        pairs = []
        for j, m in enumerate(self.pools[middle].tolist()):
            s1 = self.space(a, m, self.edge_of[(end, middle)].socket).offsets
            if len(s1) == 0:
                continue
            for t in self.pools[last].tolist():
                s2 = self.space(m, t, self.edge_of[(middle, last)].socket).offsets
                if len(s2):
                    lo, hi = s1.min(axis=0) + s2.min(axis=0), s1.max(axis=0) + s2.max(axis=0)
                    boxes[t, j] = (lo[0], hi[0], lo[1], hi[1])
                    pairs.append((s1, s2, t))
        exact = None
        if sum(len(s1) * len(s2) for s1, s2, _ in pairs) <= EXACT_SUMS:
            parts = [
                offset_keys((s1[:, 0][:, None] + s2[:, 0][None, :]).ravel(), (s1[:, 1][:, None] + s2[:, 1][None, :]).ravel()) * self.stride + t
                for s1, s2, t in pairs
            ]
            exact = np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)
        return exact, boxes

    def blockers(self, cx: np.ndarray, cy: np.ndarray, ct: np.ndarray, px: np.ndarray, py: np.ndarray, pt: np.ndarray, n: int) -> np.ndarray:
        """`_blockers` of these candidates against the first `n` placed rooms."""
        return _blockers(cx, cy, ct, px, py, pt, n, self.kinds, self.offsets, self.widths, self.heights, len(cx))

    def space(self, a: int, b: int, socket: str) -> ConfigSpace:
        key = (a, b, socket)
        if key not in self._spaces:
            self._spaces[key] = _shared(("space", self._sig[a], self._sig[b], socket), lambda: config_space(self.variants[a], self.variants[b], socket))
        return self._spaces[key]


# Configuration spaces and the tables of offsets made from them (`Problem`), by the variants'
# digests and what else they depend on, shared by every map a process lays out.
_TABLES: dict[tuple[object, ...], object] = {}


def _shared(key: tuple[object, ...], make: Callable[[], T]) -> T:
    if key not in _TABLES:
        if len(_TABLES) > 50_000:
            _TABLES.clear()
        _TABLES[key] = make()
    return _TABLES[key]  # type: ignore[return-value]


@dataclass
class Placement:
    x: np.ndarray  # per node: its template's top-left tile
    y: np.ndarray
    variant: np.ndarray  # per node: index into Problem.variants


def lay_out(problem: Problem, rng: np.random.Generator, time_limit: float, first: int = 0) -> Placement:
    never = unjoinable(problem)
    if never:
        raise Unjoinable(never)  # at once: searching would spend the whole time limit
    plan = _plan(problem, first)
    budget = BUDGET_BASE + BUDGET_PER_ROOM * len(plan[0])
    deadline = time.monotonic() + time_limit
    fails = np.zeros(len(problem.graph.nodes), dtype=np.int64)
    around = -1
    while True:
        found = _search(problem, *plan, rng, budget, deadline, fails)
        if found is not None:
            x, y, v = found
            return Placement(x, y, v)
        if time.monotonic() >= deadline:
            raise _failure(problem, plan[0], fails, time_limit)
        # Start over with the loop of the room that failed most placed first, while its
        # neighbours are few and free to move (fail first), once that room changes.
        worst = int(np.argmax(fails))
        if worst != around:
            around = worst
            plan = _plan(problem, first, around)


def unjoinable(problem: Problem) -> str | None:
    """What keeps a connection from ever being a door, whatever the layout: no template of the
    one room has a door spot that meets one of the other's (one length, one socket); None when
    every connection can be made."""
    at = problem.graph.index()
    for e in problem.graph.edges:
        a, b = at[e.a], at[e.b]
        if any(len(problem.pool_offsets(int(v), b, e.socket)) for v in problem.pools[a]):
            continue
        sides = "; ".join(f"{_room(problem, n)}: {_doors(problem, n)}" for n in (a, b))
        socket = f" of socket {e.socket!r}" if e.socket else ""
        return f"the rooms {e.a!r} and {e.b!r} can never be joined: no door{socket} of the one's templates meets one of the other's ({sides}); two rooms join only through doors of one length and socket"
    return None


def _room(problem: Problem, node: int) -> str:
    return f"{'the corridor room ' if problem.graph.nodes[node].corridor else ''}{problem.graph.nodes[node].name}"


def _doors(problem: Problem, node: int) -> str:
    """The templates of a room's pool and the door spots they have, by length and socket."""
    out = {}
    for v in problem.pools[node].tolist():
        t = problem.variants[v]
        kinds = sorted({(d.length, d.socket) for d in t.doors})
        spots = ", ".join(f"length {n}" + (f" socket {s!r}" if s else "") for n, s in kinds) or "none"
        out.setdefault(t.name, f"{t.name!r} (doors {spots})")
    return ", ".join(out.values())


def _plan(problem: Problem, first: int, around: int = -1) -> tuple[list[Step], list[list[Step]], list[Reach]]:
    """The placement order and, per step, the rooms it may crowd out and its reach."""
    steps = placement_order(problem.adj, first, around)
    return steps, pinned_rooms(problem.adj, steps), reach_bounds(problem, steps)


def pinned_rooms(adj: list[list[int]], steps: list[Step]) -> list[list[Step]]:
    """Per step, the rooms yet to come that it may crowd out: those placed later beside its own
    room or beside a placed neighbour of it, each as a Step with its neighbours placed by then.
    A room held by two (a loop's last) must fit between them; one held by one needs a free
    stretch of wall beside it, which this room may be about to take."""
    at = {s.node: k for k, s in enumerate(steps)}
    out: list[list[Step]] = []
    for k, s in enumerate(steps):
        later = []
        near = sorted({y for r in (s.node, *s.placed) for y in adj[r] if at[y] > k}, key=at.__getitem__)
        for y in near:
            held = tuple(sorted((v for v in adj[y] if at[v] <= k), key=at.__getitem__))
            later.append(Step(y, held))
        out.append(later)
    return out


@dataclass
class Reach:
    """How far a step's room may stand from each placed room it must still meet through rooms
    yet to come: since every connection becomes a door, any path between the two bounds their
    distance by the rooms on it, side by side (the sizes of its rooms in between, less the wall
    each shares with the next); the least such sum over the paths, per axis."""

    nodes: np.ndarray  # placed rooms
    span_x: np.ndarray  # per room: the least width of the rooms between, walls shared
    span_y: np.ndarray
    end: int  # the index in `nodes` of the step's loop's other end (-1: none)


def reach_bounds(problem: Problem, steps: list[Step]) -> list[Reach]:
    """Per step, its `Reach` to the rooms placed before it (not its neighbours, which it joins
    directly), found by a shortest-path search through the rooms placed after it."""
    at = {s.node: k for k, s in enumerate(steps)}
    adj = problem.adj
    out = []
    for k, s in enumerate(steps):
        per_axis = []
        for size in (problem.pool_w, problem.pool_h):
            best: dict[int, int] = {}
            seen = {s.node: 0}
            heap = [(0, s.node)]
            while heap:
                d, u = heapq.heappop(heap)
                if d > seen.get(u, d):
                    continue
                for v in adj[u]:
                    if at[v] < k:
                        if u != s.node and d < best.get(v, d + 1):
                            best[v] = d
                        continue
                    nd = d + int(size[v]) - 1
                    if v != s.node and nd < seen.get(v, nd + 1):
                        seen[v] = nd
                        heapq.heappush(heap, (nd, v))
            per_axis.append(best)
        rooms = sorted(per_axis[0], key=at.__getitem__)
        out.append(Reach(
            np.array(rooms, dtype=np.int64),
            np.array([per_axis[0][r] for r in rooms], dtype=np.int64),
            np.array([per_axis[1][r] for r in rooms], dtype=np.int64),
            rooms.index(s.target) if s.target in rooms else -1,
        ))
    return out


def _failure(problem: Problem, steps: list[Step], fails: np.ndarray, time_limit: float) -> LayoutFailed:
    names = [nd.name for nd in problem.graph.nodes]
    worst = [int(i) for i in np.argsort(-fails, kind="stable")[:1] if fails[i] > 0]
    if not worst:
        return LayoutFailed(f"no layout found in {time_limit:g} s")
    step = next(s for s in steps if s.node == worst[0])
    if step.ear >= 0:
        rooms = [s for s in steps if s.ear == step.ear]
        ends = [p for s in rooms for p in s.placed if p not in {r.node for r in rooms}]
        loop = [names[s.node] for s in rooms] + sorted({names[p] for p in ends})
        what = f"the loop through {', '.join(loop)} did not close"
    else:
        beside = ", ".join(names[p] for p in step.placed)
        what = f"the room {names[worst[0]]!r} did not fit beside {beside}" if beside else f"no room could be laid out around {names[worst[0]]!r}"
    return LayoutFailed(f"no layout found in {time_limit:g} s: {what}")


def _search(
    problem: Problem, steps: list[Step], pinned: list[list[Step]], reach: list[Reach], rng: np.random.Generator, budget: int, deadline: float,
    fails: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """One depth-first search with conflict-directed backjumping: a room with no position left
    sends the search back to the latest room that took one of its positions away (a neighbour
    that gave its offsets, a room one overlapped), not merely to the room before it."""
    n_nodes = len(problem.graph.nodes)
    px = np.zeros(len(steps), dtype=np.int32)
    py = np.zeros(len(steps), dtype=np.int32)
    pt = np.zeros(len(steps), dtype=np.int32)
    where = np.full(n_nodes, -1, dtype=np.int64)  # node -> its step, once placed
    frames: list[tuple[np.ndarray, np.ndarray, np.ndarray] | None] = [None] * len(steps)
    conflicts: list[set[int]] = [set() for _ in steps]
    cursor = [0] * len(steps)
    ear_fails = [0] * len(steps)
    strikes = [0] * len(steps)
    at = {s.node: k for k, s in enumerate(steps)}
    grows = [any(at[y] > k for y in problem.adj[s.node]) for k, s in enumerate(steps)]
    i = 0
    spent = 0
    rewinds = 0
    while i < len(steps):
        if frames[i] is None:
            frames[i], conflicts[i] = _candidates(problem, steps, pinned, reach[i], i, px, py, pt, where, rng, fails, grows[i])
            cursor[i] = 0
            ear_fails[i] = 0
        cx, cy, ct = frames[i]  # type: ignore[misc]
        k = cursor[i]
        if k >= len(cx):
            why = conflicts[i]
            if i:  # (the first room is not to blame for what cannot fit around it)
                fails[steps[i].node] += 1
            strikes[i] += 1
            past = -1  # the first of the rooms to go back past, as one
            if steps[i].ear >= 0:
                ear_fails[steps[i].ear] += 1
                if ear_fails[steps[i].ear] > EAR_TRIES:
                    # The loop has had its tries: what holds it is what the rooms it hangs on
                    # and the rooms in its way do.
                    past = steps[i].ear
            elif strikes[i] % STRIKES == 0:
                # A room that keeps running out of places at the end of a run of rooms (a
                # corridor of rooms walked into a pocket).
                past = max(0, i - WINDOW)
            if past >= 0:
                why = set().union(*conflicts[past : i + 1]) - set(range(past, i + 1))
            if not why:
                return None  # nothing placed before could make room: start over
            back = max(why)
            conflicts[back] |= why - {back}
            for j in range(back + 1, i + 1):
                frames[j] = None
                where[steps[j].node] = -1
            where[steps[back].node] = -1
            i = back
            continue
        cursor[i] = k + 1
        px[i], py[i], pt[i] = cx[k], cy[k], ct[k]
        where[steps[i].node] = i
        i += 1
        spent += 1
        if spent & 63 == 0 and time.monotonic() >= deadline:
            return None
        if spent > budget:
            # The budget is spent: start over from some rooms before the one that ran out of
            # places most, keeping the rooms before those (a layout that got far has most of
            # its rooms right), a few times; then from the first room.
            rewinds += 1
            if rewinds > REWINDS:
                return None
            hot = int(np.argmax(strikes))
            back = max(0, hot - REWIND)
            for j in range(back, len(steps)):
                frames[j] = None
                where[steps[j].node] = -1
                strikes[j] = 0
            i = back
            spent = 0
    x = np.zeros(n_nodes, dtype=np.int32)
    y = np.zeros(n_nodes, dtype=np.int32)
    v = np.zeros(n_nodes, dtype=np.int32)
    for k, s in enumerate(steps):
        x[s.node], y[s.node], v[s.node] = px[k], py[k], pt[k]
    return x, y, v


def _candidates(
    problem: Problem, steps: list[Step], pinned: list[list[Step]], reach: Reach, i: int, px: np.ndarray, py: np.ndarray, pt: np.ndarray,
    where: np.ndarray, rng: np.random.Generator, fails: np.ndarray, grows: bool,
) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], set[int]]:
    """Step i's free positions, in the order to try them, and the steps that limited them.
    `grows`: whether the room has neighbours to come."""
    step = steps[i]
    conflict = {int(where[p]) for p in step.placed}
    target = int(where[step.target]) if step.target >= 0 else -1
    stride = problem.stride
    if not step.placed:  # the first room, at the origin
        cx, cy, ct = _positions(_ORIGIN * stride + problem.pools[step.node].astype(np.int64), stride)
    else:
        cx, cy, ct = _joined_positions(problem, step, px, py, pt, where)
        if len(cx) == 0:
            return _EMPTY, conflict
    if target >= 0 and step.hops == 2:
        # Two rooms from closing the loop: keep the positions from which some template of the
        # next room could touch both this room and the loop's end.
        conflict.add(target)
        exact, boxes = problem.two_hops(step.target, int(pt[target]), steps[i + 1].node, step.node)
        if exact is not None:
            rel = offset_keys(cx - px[target], cy - py[target]) * stride + ct
            at = np.minimum(np.searchsorted(exact, rel), max(len(exact) - 1, 0))
            near = exact[at] == rel if len(exact) else np.zeros(len(rel), dtype=bool)
        else:
            box = boxes[ct]
            dx = (cx - px[target])[:, None]
            dy = (cy - py[target])[:, None]
            near = ((box[:, :, 0] <= dx) & (dx <= box[:, :, 1]) & (box[:, :, 2] <= dy) & (dy <= box[:, :, 3])).any(axis=1)
        cx, cy, ct = cx[near], cy[near], ct[near]
    if problem.not_beside and len(cx):
        # `repeat = "not_beside"`: the templates of the rooms it joins, placed already, are out.
        rivals = [int(where[r]) for r in problem.rivals[step.node] if where[r] >= 0]
        if rivals:
            taken = problem.template_of[pt[rivals]]
            keep = ~np.isin(problem.template_of[ct], taken)
            if not keep.all():
                conflict.update(rivals)
                cx, cy, ct = cx[keep], cy[keep], ct[keep]
    # One compiled call for the rest: at a few hundred candidates and a few dozen rooms, each
    # numpy call on its own cost more than its work.
    crowd = bool(i and grows and (step.ear < 0 or i - step.ear < 2))
    # A room tries at most the first LOOKAHEAD free positions, so the rooms in the way of the
    # first SOUGHT are what limited it; past them none are sought (a big graph's room has
    # thousands of positions, and testing them all was most of a step's time).
    want = SOUGHT
    cx, cy, ct, free, limited = _ordered(
        cx, cy, ct, i, px, py, pt, where[reach.nodes], reach.span_x, reach.span_y, reach.end, rng, problem.weights, crowd,
        problem.kinds, problem.offsets, problem.widths, problem.heights, want,
    )
    conflict.update(limited.tolist())
    if pinned[i] and len(free):
        # Look ahead: keep the positions that leave a place for every room this one may crowd
        # out (`pinned_rooms`: a neighbour yet to come of this room or of one it joins).
        kept, starved = _look_ahead(problem, step, pinned[i], i, cx, cy, ct, free[:LOOKAHEAD], px, py, pt, where)
        if not len(kept) and starved >= 0:
            fails[starved] += 1
        free = kept
    free = free[:TRIES]
    return (cx[free], cy[free], ct[free]), conflict


def _look_ahead(
    problem: Problem, step: Step, later: list[Step], i: int, cx: np.ndarray, cy: np.ndarray, ct: np.ndarray, tried: np.ndarray,
    px: np.ndarray, py: np.ndarray, pt: np.ndarray, where: np.ndarray,
) -> tuple[np.ndarray, int]:
    """The first `TRIES` of the candidates `tried` (indices) at which each room in `later` keeps
    a free position beside its placed neighbours and this room; else none, and the first room
    left without one (-1: none)."""
    stride = problem.stride
    fixed: list[np.ndarray] = []
    fixed_at, rel, has_fixed = [0], [], []
    table = np.zeros((len(later), stride + 1), dtype=np.int64)
    rel_box = np.zeros((len(later), stride, 4), dtype=np.int64)
    base = 0
    for r, room in enumerate(later):
        # Where its neighbours placed before this room let it stand (keys, moved where they stand) ...
        held = Step(room.node, tuple(h for h in room.placed if h != step.node))
        has_fixed.append(bool(held.placed))
        keys = _joined(problem, held, px, py, pt, where)
        fixed.append(keys if keys is not None else _NO_KEYS)
        fixed_at.append(fixed_at[-1] + len(fixed[-1]))
        # ... and, per template of this room, where it may stand beside it (keys from it).
        if step.node in room.placed:
            socket = problem.edge_of[(step.node, room.node)].socket
            table[r], part, rel_box[r] = problem.beside_table(step.node, room.node, socket)
            table[r] += base
            rel.append(part)
            base += len(part)
        else:
            table[r] = -1
    kept, starved = _look_ahead_kernel(
        cx, cy, ct, tried, px, py, pt, i,
        np.concatenate(fixed), np.array(fixed_at, dtype=np.int64), np.array(has_fixed),
        np.concatenate(rel) if rel else _NO_KEYS, table, rel_box,
        problem.kinds, problem.offsets, problem.widths, problem.heights, stride, TRIES,
    )
    return kept, (later[starved].node if starved >= 0 else -1)


def _joined(problem: Problem, step: Step, px: np.ndarray, py: np.ndarray, pt: np.ndarray, where: np.ndarray) -> np.ndarray | None:
    """Keys of the (position, variant) at which step's room joins every placed neighbour in
    `step.placed` through a door (the intersection of their configuration spaces, moved to
    where they stand); None without placed neighbours."""
    keys = None
    for p in step.placed:
        k = int(where[p])
        shift = (offset_keys(np.array([px[k]]), np.array([py[k]]))[0] - _ORIGIN) * problem.stride
        mine = problem.pool_offsets(int(pt[k]), step.node, problem.edge_of[(p, step.node)].socket) + shift
        keys = mine if keys is None else np.intersect1d(keys, mine, assume_unique=True)
        if len(keys) == 0:
            break
    return keys


def _positions(keys: np.ndarray, stride: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The x, y and variant of (position, variant) keys."""
    kx, ky = key_offsets(keys // stride)
    return kx.astype(np.int32), ky.astype(np.int32), (keys % stride).astype(np.int32)


def _joined_positions(problem: Problem, step: Step, px: np.ndarray, py: np.ndarray, pt: np.ndarray, where: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`_joined` as positions (x, y, variant); beside one room (most rooms), without the keys."""
    if len(step.placed) == 1:
        p = step.placed[0]
        k = int(where[p])
        dx, dy, t = problem.pool_positions(int(pt[k]), step.node, problem.edge_of[(p, step.node)].socket)
        return dx + px[k], dy + py[k], t
    keys = _joined(problem, step, px, py, pt, where)
    return _positions(keys, problem.stride) if keys is not None else _EMPTY


# How much a candidate's share of ground covered around it (`MARGIN` tiles out), and its
# nearness to the middle of the rooms placed, put it back in the order (a room with neighbours
# to come).
CROWD, MARGIN = 8.0, 6
OUTWARD = 30.0

# How much a candidate's distance from the middle of where a loop's other end lets it stand
# puts it back in the order.
NEARER = 4.0

# The most sums of two configuration spaces' offsets `two_hops` lists exactly.
EXACT_SUMS = 100_000

# How many free positions of a room that pins others down are tried for places for them.
LOOKAHEAD = 48
# How many free positions of a room are sought in the order it tries them, the rooms in the way
# of those making its conflicts. Twice LOOKAHEAD keeps nearly every search step for step as
# when all were sought (30 200-room graphs: 27 of 30 alike), 2.5 times faster per step.
SOUGHT = 2 * LOOKAHEAD

# How many times a loop's rooms may run out of positions before the search goes back past it.
EAR_TRIES = 8

# After how many times out of places a room not on a loop sends the search back past the
# WINDOW rooms before it.
STRIKES, WINDOW = 16, 4

# How many times a search that spends its budget goes back REWIND rooms before the room that ran
# out of places most, before it starts over from the first room.
REWINDS, REWIND = 6, 30

# How many free positions a room tries before the search goes back.
TRIES = 4
BUDGET_BASE, BUDGET_PER_ROOM = 200, 10

_ORIGIN = int(offset_keys(np.array([0]), np.array([0]))[0])
_NO_KEYS = np.zeros(0, np.int64)
_EMPTY = (np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.int32))


@compiled
def _nearby(cx: np.ndarray, cy: np.ndarray, ct: np.ndarray, px: np.ndarray, py: np.ndarray, pt: np.ndarray, n: int, widths: np.ndarray, heights: np.ndarray) -> np.ndarray:
    """The placed rooms (of the first `n`) whose boxes meet the box around every candidate: the
    only ones any candidate can overlap."""
    x0 = cx.min()
    y0 = cy.min()
    x1 = x0
    y1 = y0
    for c in range(cx.shape[0]):
        x1 = max(x1, cx[c] + widths[ct[c]])
        y1 = max(y1, cy[c] + heights[ct[c]])
    out = np.empty(n, dtype=np.int64)
    m = 0
    for j in range(n):
        if px[j] < x1 and px[j] + widths[pt[j]] > x0 and py[j] < y1 and py[j] + heights[pt[j]] > y0:
            out[m] = j
            m += 1
    return out[:m]


@compiled
def _covered(cx: np.ndarray, cy: np.ndarray, ct: np.ndarray, px: np.ndarray, py: np.ndarray, pt: np.ndarray, n: int,
             widths: np.ndarray, heights: np.ndarray, margin: int) -> np.ndarray:
    """Per candidate, the share of its box grown by `margin` (the ground around it) that the
    first `n` placed rooms' boxes cover."""
    out = np.zeros(cx.shape[0])
    if cx.shape[0] == 0:
        return out
    near = _nearby(cx - margin, cy - margin, ct, px, py, pt, n, widths + 2 * margin, heights + 2 * margin)
    for c in range(cx.shape[0]):
        x0 = cx[c] - margin
        y0 = cy[c] - margin
        x1 = cx[c] + widths[ct[c]] + margin
        y1 = cy[c] + heights[ct[c]] + margin
        area = 0
        for j in near:
            ox = min(x1, px[j] + widths[pt[j]]) - max(x0, px[j])
            oy = min(y1, py[j] + heights[pt[j]]) - max(y0, py[j])
            if ox > 0 and oy > 0:
                area += ox * oy
        out[c] = area / ((x1 - x0) * (y1 - y0))
    return out


@compiled
def _key_box(keys: np.ndarray, lo: int, hi: int, widths: np.ndarray, heights: np.ndarray, stride: int) -> tuple[int, int, int, int]:
    """The box (x0, y0, x1, y1) that the rooms at keys[lo:hi] stand in."""
    x0 = y0 = 1 << 30
    x1 = y1 = -(1 << 30)
    for q in range(lo, hi):
        off = keys[q] // stride
        t = keys[q] % stride
        x = off % _SHIFT_K - _HALF_K
        y = off // _SHIFT_K - _HALF_K
        x0 = min(x0, x)
        y0 = min(y0, y)
        x1 = max(x1, x + widths[t])
        y1 = max(y1, y + heights[t])
    return x0, y0, x1, y1


@compiled
def _free_key(
    keys: np.ndarray, lo: int, hi: int, shift: int, x0: int, y0: int, x1: int, y1: int, near: np.ndarray,
    px: np.ndarray, py: np.ndarray, pt: np.ndarray, n: int, kinds: np.ndarray, offsets: np.ndarray, widths: np.ndarray, heights: np.ndarray,
    stride: int,
) -> bool:
    """Whether one of keys[lo:hi] + shift, all standing in the box (x0, y0, x1, y1), is a
    position overlapping none of the first `n` placed rooms (stopping at the first). `near`:
    room for the indices of the rooms in that box."""
    k = 0
    for j in range(n):
        if px[j] < x1 and px[j] + widths[pt[j]] > x0 and py[j] < y1 and py[j] + heights[pt[j]] > y0:
            near[k] = j
            k += 1
    one_x = np.empty(1, dtype=np.int32)
    one_y = np.empty(1, dtype=np.int32)
    one_t = np.empty(1, dtype=np.int32)
    last = 0  # (in `near`) the room that blocked the key before
    for q in range(lo, hi):
        key = keys[q] + shift
        off = key // stride
        one_x[0] = off % _SHIFT_K - _HALF_K
        one_y[0] = off // _SHIFT_K - _HALF_K
        one_t[0] = key % stride
        # That room first: keys in order lie side by side, so one room in the way blocks a run
        # of them (this halved the look-ahead's time).
        if k and _overlaps(0, near[last], one_x, one_y, one_t, px, py, pt, kinds, offsets, widths, heights):
            continue
        free = True
        for q2 in range(k):
            if q2 != last and _overlaps(0, near[q2], one_x, one_y, one_t, px, py, pt, kinds, offsets, widths, heights):
                last = q2
                free = False
                break
        if free:
            return True
    return False


@compiled
def _look_ahead_kernel(
    cx: np.ndarray, cy: np.ndarray, ct: np.ndarray, tried: np.ndarray, px: np.ndarray, py: np.ndarray, pt: np.ndarray, i: int,
    fixed: np.ndarray, fixed_at: np.ndarray, has_fixed: np.ndarray, rel: np.ndarray, table: np.ndarray, rel_box: np.ndarray,
    kinds: np.ndarray, offsets: np.ndarray, widths: np.ndarray, heights: np.ndarray, stride: int, tries: int,
) -> tuple[np.ndarray, int]:
    """`_look_ahead`: per candidate in `tried` (placed as room i), whether each later room r
    has a free position: its keys beside this room (table[r]: per variant, a slice of `rel`;
    -1 when it is not beside this room; rel_box[r, variant]: the box they stand in from it)
    moved to the candidate, kept where in its fixed keys (fixed[fixed_at[r]:fixed_at[r + 1]],
    when has_fixed[r]); or its fixed keys alone."""
    kept = np.empty(min(tries, tried.shape[0]), dtype=np.int64)
    n_kept = 0
    starved = -1
    rooms = table.shape[0]
    # A room's fixed keys free of the rooms placed before this one, found once: each candidate
    # then only has itself to test them against.
    open_keys = np.empty(fixed.shape[0], dtype=np.int64)
    open_at = np.zeros(rooms + 1, dtype=np.int64)
    one_x = np.empty(1, dtype=np.int32)
    one_y = np.empty(1, dtype=np.int32)
    one_t = np.empty(1, dtype=np.int32)
    near = np.empty(i + 1, dtype=np.int64)
    m = 0
    for r in range(rooms):
        f0 = fixed_at[r]
        f1 = fixed_at[r + 1]
        x0, y0, x1, y1 = _key_box(fixed, f0, f1, widths, heights, stride)
        k = 0
        for j in range(i):
            if px[j] < x1 and px[j] + widths[pt[j]] > x0 and py[j] < y1 and py[j] + heights[pt[j]] > y0:
                near[k] = j
                k += 1
        last = 0
        for q in range(f0, f1):
            # (Decoded and tested here, as in `_free_key`, not through a shared helper: a
            # compiled call per position made the look-ahead a quarter slower, and twice as
            # slow with the room in the way first.)
            off = fixed[q] // stride
            one_x[0] = off % _SHIFT_K - _HALF_K
            one_y[0] = off // _SHIFT_K - _HALF_K
            one_t[0] = fixed[q] % stride
            if k and _overlaps(0, near[last], one_x, one_y, one_t, px, py, pt, kinds, offsets, widths, heights):
                continue
            free = True
            for q2 in range(k):
                if q2 != last and _overlaps(0, near[q2], one_x, one_y, one_t, px, py, pt, kinds, offsets, widths, heights):
                    last = q2
                    free = False
                    break
            if free:
                open_keys[m] = fixed[q]
                m += 1
        open_at[r + 1] = m
    for c in tried:
        px[i] = cx[c]
        py[i] = cy[c]
        pt[i] = ct[c]
        ok = True
        for r in range(rooms):
            t = ct[c]
            if has_fixed[r]:
                # Its open fixed keys: one beside this room (when it must be), not under it.
                lo = table[r, t]
                hi = table[r, t + 1]
                shift = ((cy[c] * _SHIFT_K) + cx[c]) * stride
                has = False
                for q in range(open_at[r], open_at[r + 1]):
                    key = open_keys[q]
                    if table[r, 0] >= 0:
                        want = key - shift
                        a = lo
                        b = hi
                        while a < b:
                            mid = (a + b) // 2
                            if rel[mid] < want:
                                a = mid + 1
                            else:
                                b = mid
                        if a >= hi or rel[a] != want:
                            continue
                    off = key // stride
                    one_x[0] = off % _SHIFT_K - _HALF_K
                    one_y[0] = off // _SHIFT_K - _HALF_K
                    one_t[0] = key % stride
                    if not _overlaps(0, i, one_x, one_y, one_t, px, py, pt, kinds, offsets, widths, heights):
                        has = True
                        break
            else:
                x0, y0, x1, y1 = cx[c] + rel_box[r, t, 0], cy[c] + rel_box[r, t, 1], cx[c] + rel_box[r, t, 2], cy[c] + rel_box[r, t, 3]
                shift = ((cy[c] * _SHIFT_K) + cx[c]) * stride
                has = _free_key(rel, table[r, t], table[r, t + 1], shift, x0, y0, x1, y1, near, px, py, pt, i + 1, kinds, offsets, widths, heights, stride)
            if not has:
                ok = False
                if starved < 0:
                    starved = r
                break
        if ok:
            kept[n_kept] = c
            n_kept += 1
            if n_kept == kept.shape[0]:
                break
    if n_kept:
        starved = -1
    return kept[:n_kept], starved


@compiled
def _ordered(
    cx: np.ndarray, cy: np.ndarray, ct: np.ndarray, i: int, px: np.ndarray, py: np.ndarray, pt: np.ndarray,
    reach_at: np.ndarray, span_x: np.ndarray, span_y: np.ndarray, end: int, rng: np.random.Generator, weights: np.ndarray, crowd: bool,
    kinds: np.ndarray, offsets: np.ndarray, widths: np.ndarray, heights: np.ndarray, want: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`_candidates` from the reach filter on, for step i: the candidates within reach of the
    placed rooms at steps `reach_at` (`Reach`; `end`: which of them is the loop's other end), in
    the order to try them, the indices of those free of the placed rooms, and the steps that
    limited them (a room out of reach, a room in the way). `crowd`: order by the open too."""
    limited = np.zeros(i, dtype=np.bool_)
    off = np.zeros(cx.shape[0])
    if reach_at.shape[0] and cx.shape[0]:
        # Every placed room this one must still meet through rooms to come: drop positions
        # farther from it than those rooms can span (a walk that wanders off leaves the last
        # rooms no way back).
        keep, cut, off = _within_reach(
            cx, cy, ct, px[reach_at], py[reach_at], pt[reach_at], span_x, span_y, widths, heights, end,
        )
        for r in range(reach_at.shape[0]):
            if cut[r]:
                limited[reach_at[r]] = True
        cx = cx[keep]
        cy = cy[keep]
        ct = ct[keep]
        off = off[keep]
    n = cx.shape[0]
    # A weighted random order (each candidate's exponential clock, rate its template's weight),
    # of which a room tries the first few that are free: enough to get past a neighbour in the
    # way; more would only retry the same mistake made further back.
    clock = rng.exponential(size=n) / weights[ct]
    if end >= 0:
        # On a loop, nearer its other end first: the two ends walk towards each other.
        clock = clock * (1.0 + NEARER * off * off)
    if crowd and n:
        # A room with neighbours to come would rather stand in the open, away from the rooms
        # placed, than in a pocket among them where its neighbours would find no place: the
        # layout grows outwards. Not so a loop's rooms past its two ends, which must meet.
        clock = clock * (1.0 + CROWD * _covered(cx, cy, ct, px, py, pt, i, widths, heights, MARGIN))
        mx = 0.0
        my = 0.0
        for j in range(i):
            mx += px[j] + widths[pt[j]] / 2
            my += py[j] + heights[pt[j]] / 2
        mx /= i
        my /= i
        d = np.empty(n)
        for c in range(n):
            d[c] = np.hypot(cx[c] + widths[ct[c]] / 2 - mx, cy[c] + heights[ct[c]] / 2 - my)
        far = max(d.max(), 1.0)
        clock = clock * (1.0 + OUTWARD * (1.0 - d / far))
    order = np.argsort(clock, kind="mergesort")
    cx = cx[order]
    cy = cy[order]
    ct = ct[order]
    blocker = _blockers(cx, cy, ct, px, py, pt, i, kinds, offsets, widths, heights, want)
    for b in blocker:
        if b >= 0:
            limited[b] = True
    return cx, cy, ct, np.nonzero(blocker == -1)[0], np.nonzero(limited)[0]


@compiled
def _within_reach(
    cx: np.ndarray, cy: np.ndarray, ct: np.ndarray, rx: np.ndarray, ry: np.ndarray, rt: np.ndarray, span_x: np.ndarray, span_y: np.ndarray,
    widths: np.ndarray, heights: np.ndarray, target: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The reach filter of `_candidates`: per candidate, whether it stands within the spans of
    every room r placed at (rx, ry) in variant rt; per room, whether it cut some candidate; and
    per candidate, how far from the middle of what room `target` allows it stands (0 at the
    middle, 1 at the edge; zeros without a target)."""
    keep = np.ones(cx.shape[0], dtype=np.bool_)
    cut = np.zeros(rx.shape[0], dtype=np.bool_)
    off = np.zeros(cx.shape[0])
    for r in range(rx.shape[0]):
        for c in range(cx.shape[0]):
            dx = rx[r] - cx[c]
            dy = ry[r] - cy[c]
            lo_x = -(span_x[r] + widths[rt[r]] - 1)
            hi_x = span_x[r] + widths[ct[c]] - 1
            lo_y = -(span_y[r] + heights[rt[r]] - 1)
            hi_y = span_y[r] + heights[ct[c]] - 1
            if not (lo_x <= dx <= hi_x and lo_y <= dy <= hi_y):
                keep[c] = False
                cut[r] = True
            if r == target:
                off[c] = max(abs(2 * dx - (lo_x + hi_x)) / (hi_x - lo_x + 1.0), abs(2 * dy - (lo_y + hi_y)) / (hi_y - lo_y + 1.0))
    return keep, cut, off


@compiled
def _overlaps(c: int, j: int, cx: np.ndarray, cy: np.ndarray, ct: np.ndarray, px: np.ndarray, py: np.ndarray, pt: np.ndarray,
              kinds: np.ndarray, offsets: np.ndarray, widths: np.ndarray, heights: np.ndarray) -> bool:
    """Whether candidate c overlaps placed room j other than wall on wall."""
    x0 = cx[c]
    y0 = cy[c]
    t = ct[c]
    w = widths[t]
    u = pt[j]
    ux = px[j]
    uy = py[j]
    uw = widths[u]
    lo_x = max(x0, ux)
    hi_x = min(x0 + w, ux + uw)
    lo_y = max(y0, uy)
    hi_y = min(y0 + heights[t], uy + heights[u])
    if lo_x >= hi_x or lo_y >= hi_y:
        return False
    base = offsets[t]
    ubase = offsets[u]
    for yy in range(lo_y, hi_y):
        for xx in range(lo_x, hi_x):
            a = kinds[base + (yy - y0) * w + (xx - x0)]
            b = kinds[ubase + (yy - uy) * uw + (xx - ux)]
            if a != 0 and b != 0 and (a != 1 or b != 1):
                return True
    return False


@compiled
def _blockers(
    cx: np.ndarray, cy: np.ndarray, ct: np.ndarray, px: np.ndarray, py: np.ndarray, pt: np.ndarray, n: int,
    kinds: np.ndarray, offsets: np.ndarray, widths: np.ndarray, heights: np.ndarray, want: int,
) -> np.ndarray:
    """For each candidate, in order, the first of the `n` placed rooms it overlaps other than
    wall on wall (its step), or -1 where it overlaps none; once `want` candidates are free, the
    rest are not looked at (-2)."""
    out = np.full(cx.shape[0], -2, dtype=np.int64)
    if cx.shape[0] == 0:
        return out
    near = _nearby(cx, cy, ct, px, py, pt, n, widths, heights)
    found = 0
    for c in range(cx.shape[0]):
        if found == want:
            break
        out[c] = -1
        for j in near:
            if _overlaps(c, j, cx, cy, ct, px, py, pt, kinds, offsets, widths, heights):
                out[c] = j
                break
        if out[c] == -1:
            found += 1
    return out
