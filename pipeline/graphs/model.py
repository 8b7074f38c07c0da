"""A level graph: the rooms a level has and which rooms connect, as a designer draws it."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pipeline.level import PropertyValue

# The roles the layout itself reads; a node may have any other word as its role.
START, BOSS, EXIT = "start", "boss", "exit"


@dataclass(frozen=True)
class Node:
    """A room of the graph. `templates`: the names of the room templates it may be drawn with
    (empty: the stage's default pool); `properties`: the designer's own, copied onto its room."""

    name: str
    role: str = ""
    templates: tuple[str, ...] = ()
    properties: dict[str, PropertyValue] = field(default_factory=dict)
    corridor: bool = False


@dataclass(frozen=True)
class Edge:
    """A connection: a door between rooms `a` and `b` (a corridor room between them when
    `corridor`). `lock`: the name of the key that opens it; `one_way`: passable only from `a`
    to `b`; `socket`: only door spots of this socket join (none: the spots without one)."""

    a: str
    b: str
    lock: str = ""
    one_way: bool = False
    corridor: bool | None = None  # None: as the stage says
    socket: str = ""
    key: str = ""  # the node the key lies in (empty: the stage chooses)


@dataclass
class LevelGraph:
    nodes: list[Node]
    edges: list[Edge]

    def index(self) -> dict[str, int]:
        return {n.name: i for i, n in enumerate(self.nodes)}

    def neighbours(self) -> list[list[int]]:
        """Per node, its neighbours' indices, in the order of the edges."""
        at = self.index()
        out: list[list[int]] = [[] for _ in self.nodes]
        for e in self.edges:
            out[at[e.a]].append(at[e.b])
            out[at[e.b]].append(at[e.a])
        return out

    def problems(self) -> list[str]:
        """What makes the graph no level: unknown or repeated names, self-loops, repeated edges,
        parts not connected to the rest."""
        out = []
        names = [n.name for n in self.nodes]
        seen: set[str] = set()
        for name in names:
            if name in seen:
                out.append(f"the room {name!r} is named twice")
            seen.add(name)
        if not names:
            return ["the graph has no rooms"]
        pairs: set[tuple[str, str]] = set()
        for e in self.edges:
            for end in (e.a, e.b):
                if end not in seen:
                    out.append(f"the connection {e.a}-{e.b} names the room {end!r}, which the graph does not have")
            if e.a == e.b:
                out.append(f"the connection {e.a}-{e.b} joins a room to itself")
            pair = (min(e.a, e.b), max(e.a, e.b))
            if pair in pairs:
                out.append(f"the connection {e.a}-{e.b} is given twice")
            pairs.add(pair)
        if out:
            return out
        reached = {0}
        todo = [0]
        adj = self.neighbours()
        while todo:
            for m in adj[todo.pop()]:
                if m not in reached:
                    reached.add(m)
                    todo.append(m)
        if len(reached) < len(names):
            cut = [names[i] for i in range(len(names)) if i not in reached]
            out.append(f"the rooms {', '.join(cut[:8])}{' ...' if len(cut) > 8 else ''} are not connected to {names[0]!r}")
        return out

    def cycles(self) -> int:
        """Independent loops: connections beyond a spanning tree."""
        return len(self.edges) - len(self.nodes) + 1

    def with_corridors(self, default: bool) -> LevelGraph:
        """The graph with a corridor room `a-b` on every connection that has one: the corridor
        takes the connection's lock, one-way rule and socket on its first door."""
        nodes = list(self.nodes)
        edges = []
        for e in self.edges:
            if e.corridor if e.corridor is not None else default:
                mid = f"{e.a}-{e.b}"
                nodes.append(Node(mid, templates=(), corridor=True))
                edges.append(Edge(e.a, mid, lock=e.lock, one_way=e.one_way, corridor=False, socket=e.socket, key=e.key))
                edges.append(Edge(mid, e.b, one_way=e.one_way, corridor=False, socket=e.socket))
            else:
                edges.append(e)
        return LevelGraph(nodes, edges)


def hops_from(adj: Sequence[Iterable[int]], start: int) -> list[int]:
    """Fewest connections from room `start` to each room (-1: not connected)."""
    dist = [-1] * len(adj)
    dist[start] = 0
    queue = deque([start])
    while queue:
        u = queue.popleft()
        for v in adj[u]:
            if dist[v] < 0:
                dist[v] = dist[u] + 1
                queue.append(v)
    return dist
