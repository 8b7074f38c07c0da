"""The layout search's parts, each against what it promises: the generator's loops share no
connection, the placement order closes every loop from both ends, the reach bounds hold in
every layout found, and the compiled look-ahead keeps exactly the positions a plain one does."""

from __future__ import annotations

from collections import deque
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pipeline.graphs.layout as layout
from pipeline.graphs.check import layout_problems
from pipeline.graphs.generate import GraphShape, generate, least_rooms
from pipeline.graphs.layout import Problem, lay_out, reach_bounds
from pipeline.graphs.model import Edge, LevelGraph, Node
from pipeline.graphs.order import placement_order
from pipeline.stages.layout.graph import LayoutGraph

EDGAR = Path(__file__).resolve().parents[2] / "shared" / "edgar"
ROLES = (("shop", 1), ("treasure", 1), ("secret", 1))


def _connected(edges: list[tuple[int, int]], a: int, b: int, n: int) -> bool:
    adj: list[list[int]] = [[] for _ in range(n)]
    for u, v in edges:
        adj[u].append(v)
        adj[v].append(u)
    seen = {a}
    queue = deque([a])
    while queue:
        u = queue.popleft()
        for v in adj[u]:
            if v not in seen:
                seen.add(v)
                queue.append(v)
    return b in seen


def _shortest_path(edges: list[tuple[int, int]], a: int, b: int, n: int) -> list[int]:
    adj: list[list[int]] = [[] for _ in range(n)]
    for u, v in edges:
        adj[u].append(v)
        adj[v].append(u)
    parent = {a: a}
    queue = deque([a])
    while queue:
        u = queue.popleft()
        for v in sorted(adj[u]):
            if v not in parent:
                parent[v] = u
                queue.append(v)
    path = [b]
    while path[-1] != a:
        path.append(parent[path[-1]])
    return path


def shares_a_connection_between_loops(graph: LevelGraph) -> bool:
    """Whether some connection lies on two loops: then without it its ends are still joined by
    a way that has a connection on a loop (a cactus leaves only connections on no loop)."""
    at = graph.index()
    edges = [(at[e.a], at[e.b]) for e in graph.edges]
    n = len(graph.nodes)
    for k, (a, b) in enumerate(edges):
        rest = edges[:k] + edges[k + 1 :]
        if not _connected(rest, a, b, n):
            continue  # on no loop
        way = _shortest_path(rest, a, b, n)
        for u, v in zip(way, way[1:]):
            others = [e for e in rest if {e[0], e[1]} != {u, v}]
            if _connected(others, u, v, n):
                return True
    return False


def test_the_check_for_shared_connections_finds_them() -> None:
    def graph(edges: str) -> LevelGraph:
        names = sorted(set(edges.replace(" ", "")))
        return LevelGraph([Node(x) for x in names], [Edge(p[0], p[1]) for p in edges.split()])

    assert not shares_a_connection_between_loops(graph("ab bc cd da"))
    assert not shares_a_connection_between_loops(graph("ab bc ca cd de ec"))  # two loops, one room shared
    assert shares_a_connection_between_loops(graph("ab bc cd da ac"))  # a square and its diagonal
    assert shares_a_connection_between_loops(graph("ab bc cd da be ed"))  # a theta: b-c-d, b-a-d, b-e-d


@settings(max_examples=40, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), rooms=st.integers(10, 60), loops=st.integers(0, 6), locks=st.integers(0, 3))
def test_generated_graphs_have_every_loop_asked_and_no_two_share_a_connection(seed: int, rooms: int, loops: int, locks: int) -> None:
    rooms = max(rooms, least_rooms(loops, locks, 3))
    graph = generate(GraphShape(rooms, loops, locks, ROLES), np.random.default_rng(seed))
    assert graph.problems() == []
    assert len(graph.nodes) == rooms and graph.cycles() == loops
    assert not shares_a_connection_between_loops(graph)
    degrees = np.bincount([graph.index()[x] for e in graph.edges for x in (e.a, e.b)], minlength=rooms)
    assert degrees.max() <= 4


def _orders() -> list[tuple[str, list[list[int]]]]:
    out = []
    for seed in range(6):
        g = generate(GraphShape(30, 5, 1, ROLES), np.random.default_rng(seed))
        out.append((f"generated {seed}", g.neighbours()))
    if (EDGAR / "Maps").is_dir():
        for name in ("41vertices.yml", "17vertices.yml", "Thesis/example2_corridors.yml"):
            st_ = LayoutGraph.model_validate({"graph": name}, context={"recipe_dir": str(EDGAR / "Maps")})
            assert st_._graph is not None
            out.append((name, st_._graph.with_corridors(st_._corridors).neighbours()))
    return out


@pytest.mark.parametrize(("name", "adj"), _orders(), ids=lambda x: x if isinstance(x, str) else "")
def test_the_order_closes_each_loop_from_both_ends(name: str, adj: list[list[int]]) -> None:
    steps = placement_order(adj)
    at = {s.node: k for k, s in enumerate(steps)}
    assert sorted(at) == list(range(len(adj)))
    for k, s in enumerate(steps):
        assert set(s.placed) == {v for v in adj[s.node] if at[v] < k}
        if k:
            assert s.placed, "every room after the first joins a room placed before it"
        if s.ear < 0:
            continue
        ear = [t for t in steps if t.ear == s.ear]
        assert at[ear[0].node] == s.ear and [at[t.node] for t in ear] == list(range(s.ear, s.ear + len(ear)))
        assert at[s.target] < k and s.hops >= 1
        if s.hops == 1:
            assert s is ear[-1] and s.target in adj[s.node] and len(s.placed) == 2, "the ear's last room closes the loop"
        if s.hops == 2:
            # The next room stands between this one and the other end (what `two_hops` reads).
            nxt = steps[k + 1].node
            assert s.node in adj[nxt] and s.target in adj[nxt]
    # Both ends of each ear are taken before its middle: its first two rooms hang on rooms
    # placed before the ear.
    for start in sorted({s.ear for s in steps if s.ear >= 0}):
        ear = [t for t in steps if t.ear == start]
        if len(ear) >= 3:
            assert all(at[p] < start for p in ear[0].placed) and all(at[p] < start for p in ear[1].placed)


def _generated_problem(seed: int, rooms: int, loops: int) -> Problem:
    st_ = LayoutGraph.model_validate({"generate": {"rooms": rooms, "loops": loops, "locks": 1}}, context={"recipe_dir": "."})
    graph = st_._drawn_graph(np.random.default_rng(seed))
    return st_._problem_for(graph, reuse=False)


@pytest.mark.parametrize("seed", range(4))
def test_the_reach_bounds_hold_in_every_layout_found(seed: int) -> None:
    """They are only ever to drop positions no layout can use: every layout keeps them."""
    problem = _generated_problem(seed, 40, 5)
    placement = lay_out(problem, np.random.default_rng(seed), 20.0)
    steps = placement_order(problem.adj)
    checked = 0
    for k, (s, reach) in enumerate(zip(steps, reach_bounds(problem, steps))):
        for node, sx, sy in zip(reach.nodes.tolist(), reach.span_x.tolist(), reach.span_y.tolist()):
            v, p = s.node, node
            dx = int(placement.x[p] - placement.x[v])
            dy = int(placement.y[p] - placement.y[v])
            w_v, h_v = problem.widths[placement.variant[v]], problem.heights[placement.variant[v]]
            w_p, h_p = problem.widths[placement.variant[p]], problem.heights[placement.variant[p]]
            assert -(sx + w_p - 1) <= dx <= sx + w_v - 1, (k, v, p)
            assert -(sy + h_p - 1) <= dy <= sy + h_v - 1, (k, v, p)
            checked += 1
    assert checked > 0


def _plain_look_ahead(problem: Problem, step, later, i, cx, cy, ct, tried, px, py, pt, where) -> tuple[list[int], int]:  # type: ignore[no-untyped-def]
    """What `_look_ahead` keeps, the slow way: each candidate placed, each later room's positions
    listed beside its placed neighbours and tested against every placed room."""
    kept: list[int] = []
    starved = -1
    for c in tried.tolist():
        px[i], py[i], pt[i] = cx[c], cy[c], ct[c]
        where[step.node] = i
        homeless = -1
        for room in later:
            x, y, t = layout._joined_positions(problem, room, px, py, pt, where)
            if not (problem.blockers(x, y, t, px, py, pt, i + 1) < 0).any():
                homeless = room.node
                break
        where[step.node] = -1
        if homeless < 0:
            kept.append(c)
            if len(kept) == layout.TRIES:
                break
        elif starved < 0:
            starved = homeless
    return kept, -1 if kept else starved


@pytest.mark.parametrize("source", ["generated", "edgar"])
def test_the_compiled_look_ahead_keeps_what_a_plain_one_does(source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if source == "generated":
        problem = _generated_problem(3, 30, 4)
    else:
        if not (EDGAR / "Maps").is_dir():
            pytest.skip("Edgar's maps are not beside the project")
        st_ = LayoutGraph.model_validate({"graph": "Thesis/example2_corridors.yml"}, context={"recipe_dir": str(EDGAR / "Maps")})
        assert st_._graph is not None
        problem = st_._problem_for(st_._graph.with_corridors(st_._corridors), reuse=False)
    compiled = layout._look_ahead
    compared = {"calls": 0, "kept": 0, "emptied": 0}

    def both(problem, step, later, i, cx, cy, ct, tried, px, py, pt, where):  # type: ignore[no-untyped-def]
        kept, starved = compiled(problem, step, later, i, cx, cy, ct, tried, px, py, pt, where)
        plain = _plain_look_ahead(problem, step, later, i, cx, cy, ct, tried, px.copy(), py.copy(), pt.copy(), where.copy())
        assert (kept.tolist(), starved) == plain
        compared["calls"] += 1
        compared["kept"] += len(kept)
        compared["emptied"] += not len(kept)
        return kept, starved

    monkeypatch.setattr(layout, "_look_ahead", both)
    placement = lay_out(problem, np.random.default_rng(5), 60.0)
    assert compared["calls"] > 20 and compared["kept"] > 0
    assert len(placement.x) == len(problem.graph.nodes)


def test_a_200_room_graph_with_10_loops_lays_out() -> None:
    """The size Edgar stops well short of (`python -m bench.graphs` times a sample)."""
    st_ = LayoutGraph.model_validate({"generate": {"rooms": 200, "loops": 10, "locks": 2}, "time_limit": 60}, context={"recipe_dir": "."})
    level = st_.run([], np.random.default_rng(2))
    assert layout_problems(level) == []
    assert level.properties["rooms"] == 200 and level.properties["cycles"] == 10
