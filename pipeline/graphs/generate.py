"""Level graphs drawn at random, in the spirit of Dormans' cyclic generation.

A level is a main path from the start to the boss, split by its locks into stretches; loops are
added inside a stretch (a second way between two of its rooms), never across a lock, so every
lock stays a door the player must open, and never along another loop's way, so no room is walled
in by loops (every room keeps the outside of the graph for its branches); the remaining rooms hang off the path as branches (dead
ends: treasure, secrets, the rooms keys lie in). Roles go where a designer would put them: the
boss at the end of the main path, a shop about halfway, treasure and secrets in dead ends (a
secret off a loop's room when there is one). Each lock's key lies in a branch of a stretch
before it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.graphs.model import BOSS, START, Edge, LevelGraph, Node

# Roles placed in dead ends; any other role goes on a room of the main path.
DEAD_END_ROLES = ("treasure", "secret")
KEY_COLOURS = ("red", "blue", "green", "yellow", "purple", "orange", "white", "black")


@dataclass(frozen=True)
class GraphShape:
    rooms: int
    loops: int
    locks: int
    roles: tuple[tuple[str, int], ...]  # (role, count), in the order to place them


class ShapeError(ValueError):
    """Numbers that make no graph (too few rooms for the loops, locks and roles asked)."""


def _path_least(loops: int, locks: int) -> int:
    return max(2, locks + 1 + (1 if loops else 0))


def least_rooms(loops: int, locks: int, roles: int) -> int:
    """The fewest rooms a graph of these loops, locks and extra roles needs: a main path with a
    door per lock, a room per loop, a branch per key and a room per role."""
    return _path_least(loops, locks) + loops + locks + roles


def generate(shape: GraphShape, rng: np.random.Generator) -> LevelGraph:
    n, loops, locks = shape.rooms, shape.loops, shape.locks
    extra = sum(c for _, c in shape.roles)
    if n < least_rooms(loops, locks, extra):
        raise ShapeError(
            f"{n} rooms cannot hold {loops} loops, {locks} locks and {extra} rooms of other roles: it takes {least_rooms(loops, locks, extra)}"
        )
    # The main path: about a third of the rooms, and longer with many loops (each takes a
    # stretch of connections on no other loop; see below).
    spine_len = min(max(n // 3 + int(rng.integers(0, 3)), _path_least(loops, locks), 2 * loops + locks + 1), n - loops - locks - extra)
    names = [f"r{k}" for k in range(n)]
    edges: list[tuple[int, int]] = [(k, k + 1) for k in range(spine_len - 1)]
    stretch = [0] * n  # which stretch (between locks) each room is in
    # Locked doors on the path: the door into the boss room first, then others spread before it.
    lock_edges = _lock_positions(spine_len, locks, rng)
    for k in range(spine_len):
        stretch[k] = sum(1 for e in lock_edges if e < k)
    used = spine_len
    adjacency: list[set[int]] = [set() for _ in range(n)]
    bridges: list[set[int]] = [set() for _ in range(n)]  # connections on no loop
    for a, b in edges:
        adjacency[a].add(b)
        adjacency[b].add(a)
        bridges[a].add(b)
        bridges[b].add(a)

    def join(a: int, b: int, on_a_loop: bool = False) -> None:
        edges.append((a, b))
        adjacency[a].add(b)
        adjacency[b].add(a)
        if not on_a_loop:
            bridges[a].add(b)
            bridges[b].add(a)

    # Rooms each loop adds (one or two: loops of four to six rooms), and the branches that
    # grow first so that loops have more places to go.
    loop_rooms = [1] * loops
    spare = n - spine_len - locks - extra - loops
    for k in range(loops):
        if spare > 0 and rng.integers(0, 2):
            loop_rooms[k] += 1
            spare -= 1
    # Rooms kept back for loops that find no two rooms far enough apart (see below).
    kept = min(max(spare, 0), loop_rooms.count(1))
    for _ in range(max(spare, 0) - kept):
        hosts = [r for r in range(used) if r != spine_len - 1 and len(adjacency[r]) < 3]
        host = hosts[int(rng.integers(len(hosts)))]
        stretch[used] = stretch[host]
        join(host, used)
        used += 1
    on_loop: set[int] = set()
    # Loops: a new path between two rooms of one stretch, two or three connections apart along
    # connections on no loop yet. So no two loops share a connection (they may share a room):
    # every room stays on the outside of the graph, where its branches can go. Loops that
    # share connections pile up into knots, rooms walled in by loops, that need their branches
    # inside holes no set of rectangles leaves.
    for made, size in enumerate(loop_rooms):
        ends = [a for a in range(used) if a != spine_len - 1 and len(adjacency[a]) < 4]
        can_end = set(ends)
        near = [(a, b, hops) for a in ends for b, hops in _within(bridges, a, 3) if a < b and b in can_end and stretch[a] == stretch[b]]
        spots = [(a, b) for a, b, hops in near if hops >= 2]
        spots = [(a, b) for a, b in spots if a not in on_loop and b not in on_loop] or spots
        if not spots:
            # No two rooms far enough apart: a loop beside one connection, of two new rooms
            # where there are rooms kept back (four rooms round), else of three rooms.
            spots = [(a, b) for a, b, _ in near]
            if kept > 0 and size == 1:
                size, kept = 2, kept - 1
        to_spare = n - used - locks - sum(loop_rooms[made:])
        if not spots and to_spare > 0:
            # Every connection is on a loop already: one new room off a room with doors to
            # spare, or two off a room with one, make a connection that is not.
            hosts = [r for r in ends if len(adjacency[r]) < 3] or ([r for r in ends if len(adjacency[r]) < 4] if to_spare > 1 else [])
            if hosts:
                host = hosts[int(rng.integers(len(hosts)))]
                for _ in range(1 if len(adjacency[host]) < 3 else 2):
                    stretch[used] = stretch[host]
                    join(host, used)
                    host, used = used, used + 1
                spots = [(min(bridges[host]), host)]
        if not spots:
            break
        a, b = spots[int(rng.integers(len(spots)))]
        path = list(range(used, used + size))
        for r in path:
            stretch[r] = stretch[a]
        used += size
        chain = [a, *path, b]
        for u, v in zip(chain, chain[1:]):
            join(u, v, on_a_loop=True)
        on_loop.update(chain)
        # The old way between a and b is on this loop now.
        way = _bridge_path(bridges, a, b)
        for u, v in zip(way, way[1:]):
            bridges[u].discard(v)
            bridges[v].discard(u)
    # Branches: every lock's key gets a dead end in a stretch before its door, the rest anywhere
    # but the boss room.
    key_room: dict[int, int] = {}
    for k, door in enumerate(sorted(lock_edges)):
        hosts = [r for r in range(used) if stretch[r] <= k and r != spine_len - 1 and len(adjacency[r]) < 4]
        host = hosts[int(rng.integers(len(hosts)))]
        stretch[used] = stretch[host]
        join(host, used)
        key_room[door] = used
        used += 1
    while used < n:
        hosts = [r for r in range(used) if r != spine_len - 1 and len(adjacency[r]) < 4]
        host = hosts[int(rng.integers(len(hosts)))]
        stretch[used] = stretch[host]
        join(host, used)
        used += 1
    roles = _roles(shape, n, spine_len, adjacency, on_loop, set(key_room.values()), rng)
    lock_of = {(d, d + 1): KEY_COLOURS[k % len(KEY_COLOURS)] + ("" if k < len(KEY_COLOURS) else str(k // len(KEY_COLOURS))) for k, d in enumerate(sorted(lock_edges))}
    key_of = {lock_of[(d, d + 1)]: key_room[d] for d in lock_edges}
    nodes = [Node(names[r], role=roles.get(r, "")) for r in range(n)]
    out_edges = []
    for a, b in edges:
        lock = lock_of.get((a, b), "")
        out_edges.append(Edge(names[a], names[b], lock=lock, key=names[key_of[lock]] if lock else ""))
    return LevelGraph(nodes, out_edges)


def _within(adj: list[set[int]], start: int, most: int) -> list[tuple[int, int]]:
    """The rooms at most `most` connections from `start`, with their distance, nearest first."""
    out = [(start, 0)]
    seen = {start}
    for room, hops in out:
        if hops < most:
            for v in sorted(adj[room]):
                if v not in seen:
                    seen.add(v)
                    out.append((v, hops + 1))
    return out


def _bridge_path(bridges: list[set[int]], a: int, b: int) -> list[int]:
    """The rooms on the way from a to b along connections on no loop (a tree: one way)."""
    parent = {a: a}
    queue = [a]
    for u in queue:
        for v in sorted(bridges[u]):
            if v not in parent:
                parent[v] = u
                queue.append(v)
    way = [b]
    while way[-1] != a:
        way.append(parent[way[-1]])
    return way[::-1]


def _lock_positions(spine_len: int, locks: int, rng: np.random.Generator) -> list[int]:
    """Path edges (k: between rooms k and k + 1) to lock: the boss door, then others."""
    if locks == 0:
        return []
    doors = [spine_len - 2]
    others = list(range(0, spine_len - 2))
    picked = sorted(rng.choice(len(others), size=min(locks - 1, len(others)), replace=False).tolist()) if locks > 1 and others else []
    return sorted(doors + [others[k] for k in picked])


def _roles(shape: GraphShape, n: int, spine_len: int, adjacency: list[set[int]], on_loop: set[int], key_rooms: set[int], rng: np.random.Generator) -> dict[int, str]:
    roles = {0: START, spine_len - 1: BOSS}
    dead_ends = [r for r in range(n) if len(adjacency[r]) == 1 and r not in roles and r not in key_rooms]
    for role, count in shape.roles:
        for _ in range(count):
            if role in DEAD_END_ROLES:
                pool = [r for r in dead_ends if r not in roles]
                if role == "secret":
                    pool = [r for r in pool if any(h in on_loop for h in adjacency[r])] or pool
            else:
                middle = spine_len // 2
                pool = sorted((r for r in range(1, spine_len - 1) if r not in roles), key=lambda r: (abs(r - middle), r))[:2]
            pool = pool or [r for r in range(n) if r not in roles and r not in key_rooms]
            if not pool:
                raise ShapeError(f"no room left for a room of role {role!r}: ask for more rooms")
            roles[pool[int(rng.integers(len(pool)))]] = role
    return roles
