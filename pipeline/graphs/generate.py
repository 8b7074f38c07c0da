"""Level graphs drawn at random, in the spirit of Dormans' cyclic generation.

A level is a main path from the start to the boss, split by its locks into stretches; loops are
added inside a stretch (a second way between two of its rooms), never across a lock, so every
lock stays a door the player must open; the remaining rooms hang off the path as branches (dead
ends: treasure, secrets, the rooms keys lie in). Roles go where a designer would put them: the
boss at the end of the main path, a shop about halfway, treasure and secrets in dead ends (a
secret off a loop's room when there is one). Each lock's key lies in a branch of a stretch
before it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.graphs.model import BOSS, START, Edge, LevelGraph, Node, hops_from

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
    # The main path: about a third of the rooms.
    spine_len = min(max(n // 3 + int(rng.integers(0, 3)), _path_least(loops, locks)), n - loops - locks - extra)
    names = [f"r{k}" for k in range(n)]
    edges: list[tuple[int, int]] = [(k, k + 1) for k in range(spine_len - 1)]
    stretch = [0] * n  # which stretch (between locks) each room is in
    # Locked doors on the path: the door into the boss room first, then others spread before it.
    lock_edges = _lock_positions(spine_len, locks, rng)
    for k in range(spine_len):
        stretch[k] = sum(1 for e in lock_edges if e < k)
    used = spine_len
    adjacency: list[set[int]] = [set() for _ in range(n)]
    for a, b in edges:
        adjacency[a].add(b)
        adjacency[b].add(a)

    def join(a: int, b: int) -> None:
        edges.append((a, b))
        adjacency[a].add(b)
        adjacency[b].add(a)

    on_loop: set[int] = set()
    # Loops: a new path of one or two rooms between two rooms of one stretch, two or three apart
    # (loops of four to six rooms), on rooms not yet on a loop where there are such: loops that
    # share rooms pile up into knots no set of rectangles can lay out.
    for made in range(loops):
        spots = [(a, b) for a in range(used) for b in range(used) if a < b and stretch[a] == stretch[b] and a != spine_len - 1 and b != spine_len - 1]
        hops = {a: hops_from(adjacency, a) for a in sorted({a for a, _ in spots})}
        spots = [(a, b) for a, b in spots if len(adjacency[a]) < 4 and len(adjacency[b]) < 4 and 2 <= hops[a][b] <= 3]
        spots = [(a, b) for a, b in spots if a not in on_loop and b not in on_loop] or [(a, b) for a, b in spots if len(adjacency[a]) < 3 and len(adjacency[b]) < 3] or spots
        if not spots:
            break
        a, b = spots[int(rng.integers(len(spots)))]
        room_left = n - used - locks - extra - (loops - 1 - made)
        new = 1 + int(rng.integers(0, 2)) if room_left >= 2 else 1
        path = list(range(used, used + new))
        for r in path:
            stretch[r] = stretch[a]
        used += new
        chain = [a, *path, b]
        for u, v in zip(chain, chain[1:]):
            join(u, v)
        on_loop.update(chain)
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
