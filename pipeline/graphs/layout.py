"""Laying a level graph out: a position and a template for every room, no two rooms overlapping,
every connection a door.

A depth-first search over the placement order (`order.py`: loops first, each closed as soon as
it opens): each room takes a position from the configuration spaces of the neighbours already
placed (their intersection, when a room closes a loop), in a random order weighted by its
templates' weights; a position overlapping a placed room is skipped (a compiled test against
every placed room). On the way round a loop, positions too far from the loop's end for the rooms
left to span are dropped, nearer ones tried first; two rooms from the end, only positions from
which the last room could touch both (`Problem.two_hops`); and a position that leaves no place
for a room it pins down (a loop's last) is not tried. A room tries a few positions (`TRIES`);
one with none left sends the search back to the latest room that took its places away
(conflict-directed backjumping), not merely the room before. A search that spends its budget of
steps starts over with the random stream where it is, so a bad early choice costs one budget,
not the whole time limit; the time limit ends it with the loop or room that failed most.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from pipeline.graphs.config_space import ConfigSpace, config_space, key_offsets, offset_keys
from pipeline.graphs.model import Edge, LevelGraph
from pipeline.graphs.order import Step, placement_order
from pipeline.graphs.templates import RoomTemplate
from pipeline.jit import compiled


class LayoutFailed(Exception):
    """No layout within the time limit (the message names the loop or room that failed most)."""


@dataclass
class Problem:
    """A graph (corridor rooms included) and, per room, the template variants it may take."""

    graph: LevelGraph
    variants: list[RoomTemplate]
    pools: list[np.ndarray]  # per node: indices into variants
    weights: np.ndarray  # per variant: how often it is chosen, relative to the others of a pool

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
        self.stride = len(self.variants)

    def pool_offsets(self, a: int, node: int, socket: str) -> np.ndarray:
        """Keys (`placed_keys`) of every (offset, variant) at which `node` can stand beside a
        room of variant `a`, joined through door spots of `socket`: sorted, unique."""
        key = (a, node, socket)
        if key not in self._pooled:
            parts = []
            for t in self.pools[node].tolist():
                space = self.space(a, t, socket)
                parts.append(offset_keys(space.offsets[:, 0], space.offsets[:, 1]) * self.stride + t)
            self._pooled[key] = np.sort(np.concatenate(parts)) if parts else np.zeros(0, np.int64)
        return self._pooled[key]

    def two_hops(self, end: int, a: int, middle: int, last: int) -> tuple[np.ndarray | None, np.ndarray]:
        """Where room `last` can stand, joined to room `end` (of variant `a`) through room
        `middle`: the offsets from `end` as (offset, variant) keys, sorted (None where too many
        to list), and boxes (x0, x1, y0, y1) per variant of `last` and of `middle` that hold
        them. The exact sum of two configuration spaces costs their sizes multiplied, which is
        cheap through a corridor and millions between big rooms; there the boxes serve (two
        rings of offsets add up to nearly their whole box, unless one room is far smaller)."""
        key = (end, a, middle, last)
        if key not in self._two:
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
            self._two[key] = (exact, boxes)
        return self._two[key]

    def blockers(self, cx: np.ndarray, cy: np.ndarray, ct: np.ndarray, px: np.ndarray, py: np.ndarray, pt: np.ndarray, n: int) -> np.ndarray:
        """`_blockers` of these candidates against the first `n` placed rooms."""
        return _blockers(cx, cy, ct, px, py, pt, n, self.kinds, self.offsets, self.widths, self.heights)

    def space(self, a: int, b: int, socket: str) -> ConfigSpace:
        key = (a, b, socket)
        if key not in self._spaces:
            self._spaces[key] = _cached_space(self.variants[a], self.variants[b], socket)
        return self._spaces[key]


# Config spaces by the templates' digests, shared by every map a process lays out.
_SPACES: dict[tuple[str, str, str], ConfigSpace] = {}


def _cached_space(a: RoomTemplate, b: RoomTemplate, socket: str) -> ConfigSpace:
    key = (a.digest(), b.digest(), socket)
    if key not in _SPACES:
        if len(_SPACES) > 50_000:
            _SPACES.clear()
        _SPACES[key] = config_space(a, b, socket)
    return _SPACES[key]


@dataclass
class Placement:
    x: np.ndarray  # per node: its template's top-left tile
    y: np.ndarray
    variant: np.ndarray  # per node: index into Problem.variants


def lay_out(problem: Problem, rng: np.random.Generator, time_limit: float, first: int = 0) -> Placement:
    steps = placement_order(problem.adj, first)
    pinned = pinned_rooms(problem.adj, steps)
    n = len(steps)
    budget = BUDGET_BASE + BUDGET_PER_ROOM * n
    deadline = time.monotonic() + time_limit
    fails = np.zeros(len(problem.graph.nodes), dtype=np.int64)
    around = -1
    while True:
        found = _search(problem, steps, pinned, rng, budget, deadline, fails)
        if found is not None:
            x, y, v = found
            return Placement(x, y, v)
        if time.monotonic() >= deadline:
            raise _failure(problem, steps, fails, time_limit)
        # Start over with the loop of the room that failed most placed first, while its
        # neighbours are few and free to move (fail first), once that room changes.
        worst = int(np.argmax(fails))
        if worst != around:
            around = worst
            steps = placement_order(problem.adj, first, around)
            pinned = pinned_rooms(problem.adj, steps)


def pinned_rooms(adj: list[list[int]], steps: list[Step]) -> list[list[Step]]:
    """Per step, the rooms yet to come that it pins down: neighbours of its room placed later
    that have another neighbour placed by then, each as a Step with those neighbours."""
    at = {s.node: k for k, s in enumerate(steps)}
    out: list[list[Step]] = []
    for k, s in enumerate(steps):
        later = []
        for y in adj[s.node]:
            if at[y] > k:
                held = tuple(sorted((v for v in adj[y] if at[v] <= k), key=at.__getitem__))
                if len(held) >= 2:
                    later.append(Step(y, held))
        out.append(later)
    return out


def _failure(problem: Problem, steps: list[Step], fails: np.ndarray, time_limit: float) -> LayoutFailed:
    names = [nd.name for nd in problem.graph.nodes]
    worst = [int(i) for i in np.argsort(-fails, kind="stable")[:1] if fails[i] > 0]
    if not worst:
        return LayoutFailed(f"no layout found in {time_limit:g} s")
    step = next(s for s in steps if s.node == worst[0])
    if step.target >= 0:
        loop = [names[s.node] for s in steps if s.target == step.target and s.hops >= 1] + [names[step.target]]
        what = f"the loop through {', '.join(loop)} did not close"
    else:
        beside = ", ".join(names[p] for p in step.placed)
        what = f"the room {names[worst[0]]!r} did not fit beside {beside}" if beside else f"no room could be laid out around {names[worst[0]]!r}"
    return LayoutFailed(f"no layout found in {time_limit:g} s: {what}")


def _search(
    problem: Problem, steps: list[Step], pinned: list[list[Step]], rng: np.random.Generator, budget: int, deadline: float, fails: np.ndarray
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
    i = 0
    spent = 0
    while i < len(steps):
        if frames[i] is None:
            frames[i], conflicts[i] = _candidates(problem, steps, pinned, i, px, py, pt, where, rng)
            cursor[i] = 0
        cx, cy, ct = frames[i]  # type: ignore[misc]
        k = cursor[i]
        if k >= len(cx):
            fails[steps[i].node] += 1
            if not conflicts[i]:
                return None  # nothing placed before could make room: start over
            back = max(conflicts[i])
            conflicts[back] |= conflicts[i] - {back}
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
        if spent > budget or (spent & 63 == 0 and time.monotonic() >= deadline):
            return None
    x = np.zeros(n_nodes, dtype=np.int32)
    y = np.zeros(n_nodes, dtype=np.int32)
    v = np.zeros(n_nodes, dtype=np.int32)
    for k, s in enumerate(steps):
        x[s.node], y[s.node], v[s.node] = px[k], py[k], pt[k]
    return x, y, v


def _candidates(
    problem: Problem, steps: list[Step], pinned: list[list[Step]], i: int, px: np.ndarray, py: np.ndarray, pt: np.ndarray,
    where: np.ndarray, rng: np.random.Generator,
) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], set[int]]:
    """Step i's free positions, in the order to try them, and the steps that limited them."""
    step = steps[i]
    conflict = {int(where[p]) for p in step.placed}
    target = int(where[step.target]) if step.target >= 0 else -1
    stride = problem.stride
    keys = _joined(problem, step, px, py, pt, where)
    if keys is None:  # the first room, at the origin
        keys = _ORIGIN * stride + problem.pools[step.node].astype(np.int64)
    elif len(keys) == 0:
        return _EMPTY, conflict
    cx, cy, ct = _positions(keys, stride)
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
    bias = None
    if target >= 0 and step.hops > 2:
        # The rest of the loop spans at most the rooms on it, side by side: drop positions
        # farther from its end than that, and try nearer ones first (a walk that wanders off
        # leaves the last rooms no way back).
        conflict.add(target)
        rest = [steps[i + j].node for j in range(1, step.hops)]
        w_rest = int(problem.pool_w[rest].sum()) - len(rest)
        h_rest = int(problem.pool_h[rest].sum()) - len(rest)
        wt, ht = int(problem.widths[pt[target]]) - 1, int(problem.heights[pt[target]]) - 1
        dx = px[target] - cx
        dy = py[target] - cy
        lo_x, hi_x = -(w_rest + wt), w_rest + problem.widths[ct] - 1
        lo_y, hi_y = -(h_rest + ht), h_rest + problem.heights[ct] - 1
        near = (lo_x <= dx) & (dx <= hi_x) & (lo_y <= dy) & (dy <= hi_y)
        cx, cy, ct = cx[near], cy[near], ct[near]
        bias = np.maximum(
            np.abs(2 * dx[near] - (lo_x + hi_x[near])) / (hi_x[near] - lo_x + 1.0),
            np.abs(2 * dy[near] - (lo_y + hi_y[near])) / (hi_y[near] - lo_y + 1.0),
        )
    # A weighted random order (each candidate's exponential clock, rate its template's weight),
    # of which a room tries the first few that are free: enough to get past a neighbour in the
    # way; more would only retry the same mistake made further back.
    clock = rng.exponential(size=len(cx)) / problem.weights[ct]
    if bias is not None:
        clock = clock * (1.0 + BIAS * bias * bias)
    order = np.argsort(clock, kind="stable")
    cx, cy, ct = cx[order], cy[order], ct[order]
    blocker = problem.blockers(cx, cy, ct, px, py, pt, i)
    ok = blocker < 0
    conflict.update(np.unique(blocker[~ok]).tolist())
    free = np.flatnonzero(ok)
    if pinned[i]:
        # Look ahead: keep the positions that leave a place for every room this one pins down
        # (a neighbour yet to come that another placed room holds too: a loop's last room).
        closing = []
        for c in free[:LOOKAHEAD].tolist():
            px[i], py[i], pt[i] = cx[c], cy[c], ct[c]
            where[step.node] = i
            if all(_has_place(problem, later, i + 1, px, py, pt, where) for later in pinned[i]):
                closing.append(c)
                if len(closing) == TRIES:
                    break
        where[step.node] = -1
        free = np.array(closing, dtype=np.int64)
    free = free[:TRIES]
    return (cx[free], cy[free], ct[free]), conflict


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


def _has_place(problem: Problem, step: Step, i: int, px: np.ndarray, py: np.ndarray, pt: np.ndarray, where: np.ndarray) -> bool:
    """Whether step i's room has a free position beside its placed neighbours."""
    keys = _joined(problem, step, px, py, pt, where)
    if keys is None:
        return True
    return bool((problem.blockers(*_positions(keys, problem.stride), px, py, pt, i) < 0).any())


BIAS = 8.0

# The most sums of two configuration spaces' offsets `two_hops` lists exactly.
EXACT_SUMS = 400_000

# How many free positions of a room that pins others down are tried for places for them.
LOOKAHEAD = 48

# How many free positions a room tries before the search goes back.
TRIES = 4
BUDGET_BASE, BUDGET_PER_ROOM = 400, 40

_ORIGIN = int(offset_keys(np.array([0]), np.array([0]))[0])
_EMPTY = (np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.int32))


@compiled
def _blockers(
    cx: np.ndarray, cy: np.ndarray, ct: np.ndarray, px: np.ndarray, py: np.ndarray, pt: np.ndarray, n: int,
    kinds: np.ndarray, offsets: np.ndarray, widths: np.ndarray, heights: np.ndarray,
) -> np.ndarray:
    """For each candidate, the first of the `n` placed rooms it overlaps other than wall on
    wall (its step), or -1 where it overlaps none."""
    out = np.empty(cx.shape[0], dtype=np.int64)
    for c in range(cx.shape[0]):
        x0 = cx[c]
        y0 = cy[c]
        t = ct[c]
        w = widths[t]
        h = heights[t]
        base = offsets[t]
        ok = True
        for j in range(n):
            u = pt[j]
            ux = px[j]
            uy = py[j]
            uw = widths[u]
            uh = heights[u]
            lo_x = max(x0, ux)
            hi_x = min(x0 + w, ux + uw)
            lo_y = max(y0, uy)
            hi_y = min(y0 + h, uy + uh)
            if lo_x >= hi_x or lo_y >= hi_y:
                continue
            ubase = offsets[u]
            for yy in range(lo_y, hi_y):
                for xx in range(lo_x, hi_x):
                    a = kinds[base + (yy - y0) * w + (xx - x0)]
                    b = kinds[ubase + (yy - uy) * uw + (xx - ux)]
                    if a != 0 and b != 0 and (a != 1 or b != 1):
                        ok = False
                        break
                if not ok:
                    break
            if not ok:
                out[c] = j
                break
        if ok:
            out[c] = -1
    return out
