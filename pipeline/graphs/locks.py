"""Keys and locks on a level graph, placed so that the level can be finished, and proven so.

A locked connection opens for whoever holds its key (a key opens every door of its lock's name,
and is never used up); a one-way connection is passable only from its first room. A key goes in
a room reachable from the start without it: the keys are placed lock by lock, each in a room the
player can reach with the keys placed before, so locks may nest (the second key behind the first
door). The proof is a search over (room, keys held): the goal is reachable from the start, no
place the player can get to cuts the goal off (a one-way door cannot strand them), and each lock
really gates something (without its key, some room cannot be reached).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from pipeline.graphs.model import BOSS, EXIT, START, LevelGraph, hops_from


class UnsolvableLevel(ValueError):
    """A graph whose keys and locks cannot make a level that can be finished (the message says why)."""


@dataclass
class Solution:
    start: int
    goal: int
    keys: dict[str, int]  # lock name -> the room its key lies in
    critical_path: int  # rooms entered on the shortest walk that fetches the keys and reaches the goal
    walk: list[int] = field(default_factory=list)
    gates: dict[str, str] = field(default_factory=dict)  # lock name -> "rooms" (cuts some off) or "shortcut"
    cuts_goal: dict[str, bool] = field(default_factory=dict)  # lock name -> whether the goal is out of reach without its key


def start_and_goal(graph: LevelGraph) -> tuple[int, int]:
    """The room with role start (else the first), and the goal: the room with role exit, else
    boss, else the room farthest from the start."""
    roles = [n.role for n in graph.nodes]
    start = roles.index(START) if START in roles else 0
    for role in (EXIT, BOSS):
        if role in roles:
            return start, roles.index(role)
    dist = hops_from(graph.neighbours(), start)
    far = max(range(len(dist)), key=lambda i: (dist[i], -i))
    return start, far


class _Moves:
    """The rooms each room leads to, each with the lock (bit) it needs, 0 for none."""

    def __init__(self, graph: LevelGraph, bits: dict[str, int]):
        at = graph.index()
        self.out: list[list[tuple[int, int]]] = [[] for _ in graph.nodes]
        for e in graph.edges:
            need = bits.get(e.lock, 0) if e.lock else 0
            a, b = at[e.a], at[e.b]
            self.out[a].append((b, need))
            if not e.one_way:
                self.out[b].append((a, need))


def _reach(moves: _Moves, start: int, key_rooms: dict[int, int], n: int, banned: int = 0) -> tuple[dict[tuple[int, int], tuple[int, int] | None], set[int]]:
    """Every (room, keys held) reachable from the start, with how it was reached; `banned`:
    key bits never picked up. Keys are picked up on entering their room."""

    def pick(room: int, held: int) -> int:
        return held | (key_rooms.get(room, 0) & ~banned)

    first = (start, pick(start, 0))
    came: dict[tuple[int, int], tuple[int, int] | None] = {first: None}
    queue = deque([first])
    rooms = {start}
    while queue:
        room, held = queue.popleft()
        for nxt, need in moves.out[room]:
            if need & ~held:
                continue
            state = (nxt, pick(nxt, held))
            if state not in came:
                came[state] = (room, held)
                rooms.add(nxt)
                queue.append(state)
    return came, rooms


def reaches(graph: LevelGraph, start: int, goal: int) -> bool:
    """Whether a player can get from `start` to `goal`, picking up each lock's key in the room
    its edges give (`Edge.key`; a lock without one has no key) and passing a locked connection
    only once holding its key."""
    at = graph.index()
    locks = list(dict.fromkeys(e.lock for e in graph.edges if e.lock))
    bits = {lock: 1 << k for k, lock in enumerate(locks)}
    key_rooms: dict[int, int] = {}
    for lock, room in {e.lock: e.key for e in graph.edges if e.lock and e.key}.items():
        key_rooms[at[room]] = key_rooms.get(at[room], 0) | bits[lock]
    _, rooms = _reach(_Moves(graph, bits), start, key_rooms, len(graph.nodes))
    return goal in rooms


def solve(graph: LevelGraph, rng: np.random.Generator, start: int, goal: int) -> Solution:
    """Place every lock's key (where the graph does not say) and prove the level; raises
    UnsolvableLevel naming the lock or the room that makes it unfinishable."""
    at = graph.index()
    names = [n.name for n in graph.nodes]
    locks = list(dict.fromkeys(e.lock for e in graph.edges if e.lock))
    if len(locks) > 30:
        raise UnsolvableLevel(f"{len(locks)} lock names: a level holds at most 30")
    bits = {lock: 1 << k for k, lock in enumerate(locks)}
    moves = _Moves(graph, bits)
    given = {e.lock: e.key for e in graph.edges if e.lock and e.key}
    for lock, room in given.items():
        if room not in at:
            raise UnsolvableLevel(f"the key of lock {lock!r} is to lie in {room!r}, which the graph does not have")
    # Lock by lock, each key in a room reachable with the keys placed so far.
    keys: dict[str, int] = {}
    key_rooms: dict[int, int] = {}
    pending = list(locks)
    while pending:
        _, rooms = _reach(moves, start, key_rooms, len(names))
        progress = False
        for lock in list(pending):
            if lock in given:
                room = at[given[lock]]
                if room not in rooms:
                    continue
            else:
                opens = [e for e in graph.edges if e.lock == lock and (at[e.a] in rooms or at[e.b] in rooms)]
                if not opens:
                    continue
                # Rather a room off the way (a dead end, away from the start) than the start itself.
                choices = sorted(rooms - {start, goal}) or sorted(rooms)
                room = int(choices[int(rng.integers(len(choices)))])
            keys[lock] = room
            key_rooms[room] = key_rooms.get(room, 0) | bits[lock]
            pending.remove(lock)
            progress = True
            break
        if not progress:
            lock = pending[0]
            if lock in given:
                raise UnsolvableLevel(f"the key of lock {lock!r} lies in {given[lock]!r}, which cannot be reached from {names[start]!r} without it")
            raise UnsolvableLevel(f"no door of lock {lock!r} can be reached from {names[start]!r}: it is behind locks whose keys are behind it")
    came, rooms = _reach(moves, start, key_rooms, len(names))
    ends = [s for s in came if s[0] == goal]
    if not ends:
        raise UnsolvableLevel(f"the goal {names[goal]!r} cannot be reached from the start {names[start]!r}, keys and all")
    gates: dict[str, str] = {}
    cuts_goal: dict[str, bool] = {}
    for lock in locks:
        # A lock gates the rooms it cuts off, or a shortcut: a way between two rooms that is
        # longer without its doors (the way back to the hall once the gallery is open).
        _, without = _reach(moves, start, key_rooms, len(names), banned=bits[lock])
        gates[lock] = "rooms" if without < rooms else "shortcut"
        cuts_goal[lock] = goal not in without
        if without >= rooms and not _shortens(moves, sorted(rooms), bits[lock]):
            door = next(e for e in graph.edges if e.lock == lock)
            raise UnsolvableLevel(
                f"lock {lock!r} on {door.a}-{door.b} gates nothing: every way between rooms is as short without it (lock that way too, or move the lock)"
            )
    stuck = _strandings(moves, came, key_rooms, goal)
    if stuck is not None:
        raise UnsolvableLevel(f"a player who goes to {names[stuck]!r} can no longer reach the goal {names[goal]!r} (a one-way door with no way back)")
    # The shortest walk: states were searched breadth first, so the first goal state is nearest.
    state: tuple[int, int] | None = min(ends, key=lambda s: _depth(came, s))
    walk = []
    while state is not None:
        walk.append(state[0])
        state = came[state]
    walk.reverse()
    return Solution(start, goal, keys, len(walk), walk, gates, cuts_goal)


def _shortens(moves: _Moves, rooms: list[int], bit: int) -> bool:
    """Whether the doors of lock `bit` make some way between two of `rooms` shorter (or possible)."""
    for source in rooms:
        with_doors = _steps(moves, source, 0)
        without = _steps(moves, source, bit)
        if any(without.get(room, 1 << 30) > d for room, d in with_doors.items()):
            return True
    return False


def _steps(moves: _Moves, source: int, closed: int) -> dict[int, int]:
    """Fewest moves from `source` to each room, every door open but those of `closed`."""
    dist = {source: 0}
    queue = deque([source])
    while queue:
        u = queue.popleft()
        for v, need in moves.out[u]:
            if need & closed or v in dist:
                continue
            dist[v] = dist[u] + 1
            queue.append(v)
    return dist


def _depth(came: dict[tuple[int, int], tuple[int, int] | None], state: tuple[int, int]) -> int:
    d = 0
    s: tuple[int, int] | None = state
    while s is not None and came[s] is not None:
        s = came[s]
        d += 1
    return d


def _strandings(moves: _Moves, came: dict[tuple[int, int], tuple[int, int] | None], key_rooms: dict[int, int], goal: int) -> int | None:
    """A room of a reachable state from which the goal cannot be reached, or None."""
    back: dict[tuple[int, int], list[tuple[int, int]]] = {s: [] for s in came}
    for room, held in came:
        for nxt, need in moves.out[room]:
            if need & ~held:
                continue
            state = (nxt, held | key_rooms.get(nxt, 0))
            if state in back:
                back[state].append((room, held))
    good = {s for s in came if s[0] == goal}
    queue = deque(good)
    while queue:
        for prev in back[queue.popleft()]:
            if prev not in good:
                good.add(prev)
                queue.append(prev)
    bad = sorted(s for s in came if s not in good)
    return bad[0][0] if bad else None
