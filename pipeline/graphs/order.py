"""The order rooms are laid out in: loops first, each as soon as it opens, then the branches.

A loop is the hard part of a layout (its last room must meet two rooms already placed), so the
order starts with the graph's shortest loop and then takes "ears": the shortest path of new
rooms between two rooms already placed (or from one back to itself), placed from both ends in
turn, so that the search closes each loop, in its middle, while its rooms are still fresh and
cheap to move. Rooms on no loop come last, breadth first. Each step of an ear knows the room at
the other end of the gap still open and in how many hops, so the search can drop positions from
which the loop cannot close.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    node: int
    placed: tuple[int, ...]  # neighbours placed before it
    target: int = -1  # the placed room across the gap its ear still has to close (-1: none)
    hops: int = 0  # connections from this room to `target`
    ear: int = -1  # the first step of its ear (-1: not on one)


def two_core(adj: list[list[int]]) -> set[int]:
    """The rooms on a loop or on a path between loops (leaves peeled off until none is left)."""
    degree = [len(a) for a in adj]
    alive = set(range(len(adj)))
    leaves = deque(i for i in alive if degree[i] <= 1)
    while leaves:
        i = leaves.popleft()
        if i not in alive:
            continue
        alive.discard(i)
        for j in adj[i]:
            if j in alive:
                degree[j] -= 1
                if degree[j] <= 1:
                    leaves.append(j)
    return alive


def _shortest_cycle(adj: list[list[int]], core: set[int], roots: list[int] | None = None) -> list[int]:
    best: list[int] = []
    for root in roots if roots is not None else sorted(core):
        # Breadth first from root; the first edge closing two branches gives the shortest loop through root.
        parent = {root: -1}
        depth = {root: 0}
        queue = deque([root])
        found: list[int] = []
        while queue and not found:
            u = queue.popleft()
            if best and 2 * depth[u] + 1 >= len(best):
                break
            for v in adj[u]:
                if v not in core or v == parent[u]:
                    continue
                if v in depth:
                    a = _path_up(u, parent)
                    b = _path_up(v, parent)
                    if a[-1] == b[-1] and len(set(a) & set(b)) == 1:  # meet only at root
                        found = a[::-1] + b[:-1]
                        break
                    continue
                parent[v] = u
                depth[v] = depth[u] + 1
                queue.append(v)
        if found and (not best or len(found) < len(best)):
            best = found
    # rotate so the loop starts at root and runs around it
    return best


def _path_up(u: int, parent: dict[int, int]) -> list[int]:
    out = [u]
    while parent[out[-1]] != -1:
        out.append(parent[out[-1]])
    return out


def _shortest_ear(adj: list[list[int]], core: set[int], placed: set[int]) -> tuple[list[int], int, int] | None:
    """The shortest path of unplaced core rooms from a placed room to a placed room (the same
    one only around a loop of at least three rooms): its new rooms, the room it ends at and the
    room it starts from."""
    best: tuple[list[int], int, int] | None = None
    for u in sorted(placed):
        if not any(v in core and v not in placed for v in adj[u]):
            continue
        parent = {u: -1}
        branch = {u: -1}  # the first room after u on the way to each room
        queue = deque([u])
        depth = {u: 0}
        while queue:
            x = queue.popleft()
            if best is not None and depth[x] >= len(best[0]):
                break
            for v in adj[x]:
                if v == parent[x] or (x == u and v in placed):
                    continue
                if v in placed:
                    if v != u:
                        path = _path_up(x, parent)[::-1][1:]
                        if best is None or len(path) < len(best[0]):
                            best = (path, v, u)
                    continue
                if v not in core:
                    continue
                if v in depth:
                    # Two branches from u meet: a loop through u alone.
                    if branch[v] != branch[x] and x != u:
                        path = _path_up(x, parent)[::-1][1:] + _path_up(v, parent)[:-1]
                        if best is None or len(path) < len(best[0]):
                            best = (path, u, u)
                    continue
                parent[v] = x
                branch[v] = v if x == u else branch[x]
                depth[v] = depth[x] + 1
                queue.append(v)
    return best


def placement_order(adj: list[list[int]], first: int = 0, around: int = -1) -> list[Step]:
    """The steps to place every room in. `around`: a room whose shortest loop goes first (the
    search puts the loop it keeps failing on first when it starts over); else the graph's
    shortest loop, or `first` in a graph without loops."""
    n = len(adj)
    core = two_core(adj)
    order: list[int] = []
    targets: dict[int, tuple[int, int, int]] = {}
    placed: set[int] = set()

    def take(nodes: list[int], end: int = -1, start: int = -1) -> None:
        if end < 0:
            order.extend(nodes)
            placed.update(nodes)
            return
        # An ear's rooms from both ends in turn, the middle one last: both ends claim their
        # walls of the rooms the loop hangs on while those are free, and the gap between the
        # two growing ends is what each room must keep closable.
        first = len(order)
        left, right = 0, len(nodes) - 1
        ends = [start, end]  # the placed room at each end of the gap
        side = 0
        while left <= right:
            k = left if side == 0 else right
            v = nodes[k]
            # connections to the other end's room: the rooms between, plus one
            hops = (right + 1 - k) if side == 0 else (k - left + 1)
            order.append(v)
            placed.add(v)
            targets[v] = (ends[1 - side], hops, first)
            ends[side] = v
            if side == 0:
                left += 1
            else:
                right -= 1
            side = 1 - side

    if core:
        cycle = (_shortest_cycle(adj, core, [around]) if around in core else []) or _shortest_cycle(adj, core)
        take([cycle[0]])
        take(cycle[1:], cycle[0], cycle[0])
    else:
        take([first])
    while len(placed) < n:
        ear = _shortest_ear(adj, core, placed) if core - placed else None
        if ear is not None:
            take(*ear)
            continue
        # A branch room: one towards a loop first (the 2-core), else breadth first.
        frontier = [v for u in order for v in adj[u] if v not in placed]
        on_core = [v for v in frontier if v in core]
        take([(on_core or frontier)[0]])
    position = {v: k for k, v in enumerate(order)}
    steps = []
    for v in order:
        before = tuple(sorted((u for u in adj[v] if position[u] < position[v]), key=position.__getitem__))
        end, hops, ear = targets.get(v, (-1, 0, -1))
        steps.append(Step(v, before, end, hops, ear))
    return steps
