"""Observations and search (MarkovJunior's `<observe>`, `search`): backward potentials, the goal
each observing model of MarkovJunior's suite reaches, search on the complete self-avoiding walks,
and the XML and TOML forms with their errors."""

from __future__ import annotations

import dataclasses
import itertools
import xml.etree.ElementTree as ET
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.rewrite.kinds.branches import BranchNode
from pipeline.rewrite.kinds.rules import RuleNode
from pipeline.rewrite.nodes.observation import backward_potentials
from pipeline.rewrite.nodes.search import all_children, state_hash
from pipeline.rewrite.program import Program, flatten, run
from pipeline.rewrite.program_error import ProgramError
from pipeline.rewrite.resources import ResourceFolder
from pipeline.rewrite.rule import KEEP, Alphabet, parse_rule
from pipeline.rewrite.toml_form import parse_node
from pipeline.rewrite.xml_form import load_model
from tests.test_rewrite_fields import SUITE


def suite(name: str) -> tuple[Program, int, int]:
    """A model of the suite with its size and step cap from models.xml."""
    for m in ET.parse(SUITE / "models.xml").getroot().iter("model"):
        if m.get("name") == name:
            prog = load_model((SUITE / "models" / f"{name}.xml").read_text(), ResourceFolder(SUITE, "resources").read)
            return prog, int(m.get("size", "16")), int(m.get("steps", "50000"))
    raise KeyError(name)


def test_backward_potentials_of_a_walker_match_a_hand_count() -> None:
    # A 4 x 1 row, RB=WR only as written: the head must end on the last cell, the first cell
    # (where it starts) must end W, the others B or W.
    alphabet = Alphabet("BRW")
    node = RuleNode("one", tuple(parse_rule("RB", "WR", alphabet, 1.0).variants("()")))
    flat = flatten(Program(alphabet, node))
    B, R, W = 1, 2, 4
    future = np.array([W, B | W, B | W, R], dtype=np.int64)
    pot = np.zeros((3, 4), dtype=np.int32)
    lo, hi = flat.rule_lo[1], flat.rule_hi[1]
    queue = np.empty(12, dtype=np.int64)
    done = np.empty((hi - lo, 4), dtype=np.bool_)
    backward_potentials(pot, 0, 3, 4, 1, 4, future, lo, hi, flat.rw, flat.rh, flat.roff, flat.waves, flat.outs, queue, done)
    # R three cells before the goal takes three steps; B is needed only where the head goes.
    assert pot.tolist() == [
        [-1, 0, 0, 1],  # B
        [3, 2, 1, 0],  # R
        [0, 0, 0, -1],  # W
    ]


def _observer(node: Any) -> tuple[RuleNode, list[Any]]:
    """The observing rule node of a tree and the path of branches to it."""
    if isinstance(node, RuleNode) and node.observes:
        return node, []
    for child in getattr(node, "children", ()):
        try:
            found, path = _observer(child)
        except LookupError:
            continue
        return found, [node, *path]
    raise LookupError("no observing node")


def _setup(name: str, prog: Program) -> Program:
    """The part of a model that runs before its observing node first finds its values."""
    root = prog.root
    assert isinstance(root, BranchNode)
    if name == "KnightPatrol":  # markov: observe fails until `B=G` puts the goal down once
        nodes = (dataclasses.replace(root.children[2], steps=1),)
    elif name == "RegularPath":  # the goal comes from the markov's `Y=G`
        inner = root.children[4]
        assert isinstance(inner, BranchNode)
        nodes = (*root.children[:4], dataclasses.replace(inner.children[2], steps=1))
    else:  # sequences: everything before the observing node
        observer, _ = _observer(root)
        nodes = root.children[: root.children.index(observer)]
    return Program(prog.alphabet, BranchNode("sequence", nodes), prog.origin)


OBSERVING = ["BishopParity", "DiagonalPath", "EuclideanPath", "KnightPatrol", "RegularPath", "SnellLaw", "StormySnellLaw"]


@pytest.mark.parametrize("name", OBSERVING)
def test_each_observing_model_of_the_suite_reaches_its_goal(name: str) -> None:
    prog, size, steps = suite(name)
    observer, _ = _observer(prog.root)
    goals = {o.value: (o.start, o.goal) for o in observer.observes}
    alone = Program(prog.alphabet, BranchNode("sequence", (observer,)))
    for seed in (1, 2, 3):
        before = run(_setup(name, prog), np.zeros((size, size), np.uint8), np.random.default_rng(seed), steps).state
        present = np.array([goals.get(int(v), (int(v), 0))[0] for v in before.ravel()]).reshape(before.shape)
        future = np.array([goals.get(int(v), (0, 1 << int(v)))[1] for v in before.ravel()]).reshape(before.shape)
        after = run(alone, before, np.random.default_rng(seed), 10**6).state
        assert ((future >> after) & 1).all(), f"{name} seed {seed}: cells outside their future"
        assert (after != present).any(), name
    # The whole model runs at its size and cap.
    result = run(prog, np.zeros((size, size), np.uint8), np.random.default_rng(1), steps)
    assert result.turns > 0


def test_match_lists_stay_exact_when_observations_rewrite_the_grid() -> None:
    prog, size, steps = suite("KnightPatrol")
    run(prog, np.zeros((24, 24), np.uint8), np.random.default_rng(4), 120, verify=True)


def test_search_finds_a_complete_self_avoiding_walk() -> None:
    prog, size, steps = suite("CompleteSAW")
    a = run(prog, np.zeros((size, size), np.uint8), np.random.default_rng(1), steps)
    values = prog.alphabet.values
    counts = {values[v]: int(c) for v, c in zip(*np.unique(a.state, return_counts=True))}
    # Every cell with both coordinates odd (81 of them) is on the walk: 80 moves of two cells.
    assert counts == {"B": 200, "R": 1, "W": 160}
    b = run(prog, np.zeros((size, size), np.uint8), np.random.default_rng(1), steps)
    assert np.array_equal(a.state, b.state) and a.turns == b.turns


def test_state_hash_is_fnv1a() -> None:
    rows = np.array([[0, 1, 2], [0, 1, 2], [2, 1, 0]], dtype=np.uint8)
    h = 0xCBF29CE484222325
    for b in (0, 1, 2):
        h = ((h ^ b) * 0x100000001B3) % 2**64
    assert int(state_hash(rows, 0)) == h == int(state_hash(rows, 1)) != int(state_hash(rows, 2))


def _all_node(values: str, rules: list[tuple[str, str]], symmetry: str) -> tuple[Any, int, int]:
    """The flat arrays of a lone `all` node and its rule range."""
    alphabet = Alphabet(values)
    variants = [v for i, o in rules for v in parse_rule(i, o, alphabet, 1.0).variants(symmetry)]
    flat = flatten(Program(alphabet, RuleNode("all", tuple(variants))))
    return flat, int(flat.rule_lo[1]), int(flat.rule_hi[1])


def _children(flat: Any, lo: int, hi: int, grid: np.ndarray) -> list[bytes]:
    my, mx = grid.shape
    rows = all_children(grid.ravel().astype(np.uint8), mx, my, lo, hi, flat.rw, flat.rh, flat.roff, flat.waves, flat.outs)
    return [bytes(row) for row in rows]


def _maximal_sets(flat: Any, lo: int, hi: int, grid: np.ndarray) -> dict[bytes, list[list[tuple[int, int, int]]]]:
    """Brute force: each state that applying a maximal set of non-overlapping matches makes, with
    the sets making it."""
    my, mx = grid.shape
    matches = []
    for r in range(lo, hi):
        w, h, base = int(flat.rw[r]), int(flat.rh[r]), int(flat.roff[r])
        for y in range(my - h + 1):
            for x in range(mx - w + 1):
                if all((flat.waves[base + q] >> grid[y + q // w, x + q % w]) & 1 for q in range(w * h)):
                    matches.append((r, x, y))

    def overlap(a: tuple[int, int, int], b: tuple[int, int, int]) -> bool:
        (ra, xa, ya), (rb, xb, yb) = a, b
        return xa < xb + flat.rw[rb] and xb < xa + flat.rw[ra] and ya < yb + flat.rh[rb] and yb < ya + flat.rh[ra]

    out: dict[bytes, list[list[tuple[int, int, int]]]] = {}
    for size in range(len(matches) + 1):
        for chosen in itertools.combinations(matches, size):
            if any(overlap(a, b) for a, b in itertools.combinations(chosen, 2)):
                continue
            if not all(any(overlap(m, c) for c in chosen) for m in matches):
                continue  # not maximal: some match fits beside them
            state = grid.copy()
            for r, x, y in chosen:
                w, h, base = int(flat.rw[r]), int(flat.rh[r]), int(flat.roff[r])
                for q in range(w * h):
                    if flat.outs[base + q] != KEEP:
                        state[y + q // w, x + q % w] = flat.outs[base + q]
            out.setdefault(bytes(state.ravel()), []).append(list(chosen))
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([0, 1, 2]), min_size=1, max_size=9))
def test_all_children_on_a_row_are_every_maximal_set_of_matches(row: list[int]) -> None:
    # Matches of one size on a row: the reference's enumeration reaches every maximal set, and
    # `*` outputs keep their cells.
    flat, lo, hi = _all_node("BWR", [("BW", "WB"), ("BB", "R*"), ("WB", "*R")], "()")
    grid = np.array([row], dtype=np.uint8)
    children = _children(flat, lo, hi, grid)
    assert set(children) == set(_maximal_sets(flat, lo, hi, grid))
    if not _maximal_sets(flat, lo, hi, grid).keys() - {bytes(grid.ravel())}:
        assert children == [bytes(grid.ravel())]  # nothing matches: the state itself


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.data())
def test_all_children_in_2d_are_maximal_sets_of_matches(mx: int, my: int, data: st.DataObject) -> None:
    cells = data.draw(st.lists(st.sampled_from([0, 1]), min_size=mx * my, max_size=mx * my))
    grid = np.array(cells, dtype=np.uint8).reshape(my, mx)
    # Cell-sized rules: a maximal set picks a rule at each cell, every combination comes.
    flat, lo, hi = _all_node("BWR", [("B", "W"), ("B", "R"), ("W", "B")], "()")
    assert set(_children(flat, lo, hi, grid)) == set(_maximal_sets(flat, lo, hi, grid))
    # Dominoes both ways: each child is a maximal set of them, though not every set comes.
    flat, lo, hi = _all_node("BWR", [("BB", "RR")], "(xy)")
    assert set(_children(flat, lo, hi, grid)) <= set(_maximal_sets(flat, lo, hi, grid))


def test_all_children_miss_the_maximal_sets_the_reference_misses() -> None:
    # Four dominoes; the cell (0, 1) is covered most (twice, first in reading order), so every
    # child holds a domino over it, and the maximal set of the two that avoid it never comes, as
    # in MarkovJunior's AllChildStates.
    grid = np.array([[1, 0], [0, 0], [0, 1], [0, 1]], dtype=np.uint8)  # W B / B B / B W / B W
    flat, lo, hi = _all_node("BWR", [("BB", "RR")], "(xy)")
    children = _children(flat, lo, hi, grid)
    maximal = _maximal_sets(flat, lo, hi, grid)
    missed = set(maximal) - set(children)
    assert set(children) < set(maximal) and len(missed) == 1
    (state,) = missed
    assert np.frombuffer(state, np.uint8).reshape(4, 2).tolist() == [[1, 2], [0, 2], [2, 1], [2, 1]]
    assert len(children) == len(set(children)) == 2  # one per domino over (0, 1)


def test_all_search_moves_every_head_each_step() -> None:
    # Two heads walk right to their goals together: a step of an `all` node moves both.
    node = {"search": True, "observe": [{"value": "G", "from": "B", "to": "R"}, {"value": "R", "to": "B"}]}
    row = np.array([[1, 0, 2, 1, 0, 2]], dtype=np.uint8)  # R B G R B G
    for kind, moved in (("all", [[0, 1, 0, 0, 1, 0]]), ("one", None)):
        prog = toml_program("BRGW", {kind: "RB=BR", **node})
        one_step = run(prog, row, np.random.default_rng(0), 1).state
        if moved is not None:
            assert one_step.tolist() == moved
        else:
            assert (one_step == 1).sum() == 2 and one_step.tolist() not in ([[0, 1, 0, 0, 1, 0]], [[0, 0, 1, 0, 0, 1]])
        assert run(prog, row, np.random.default_rng(0), 100).state.tolist() == [[0, 0, 1, 0, 0, 1]]


def test_all_search_solves_a_multi_agent_sokoban() -> None:
    # MultiSokoban9 (left out of the suite's list): three agents push every crate onto its target.
    prog = load_model((SUITE / "models" / "MultiSokoban9.xml").read_text())
    values = prog.alphabet.values
    result = run(prog, np.zeros((9, 9), np.uint8), np.random.default_rng(1), 50000)
    text = ["".join(values[v] for v in row) for row in result.state]
    assert [row[5:] for row in text[5:]] == ["WWWW"] * 4  # the targets, all under crates
    assert sum(row.count("W") for row in text) == 16 and sum(row.count("R") for row in text) == 3


def toml_program(values: str, node: dict[str, Any]) -> Program:
    alphabet = Alphabet(values)
    return Program(alphabet, parse_node(node, alphabet, "(xy)", ""))


def test_toml_observe_walks_a_head_to_its_goal() -> None:
    prog = toml_program("BRGW", {"sequence": [
        {"one": "B=R", "steps": 1},
        {"one": "B=G", "steps": 1},
        {"one": ["RB=WR", "R*/*B=W*/*R"], "observe": [
            {"value": "G", "from": "B", "to": "R"}, {"value": "R", "to": "W"}, {"value": "B", "to": "BW"}]},
    ]})
    for seed in range(4):
        state = run(prog, np.zeros((16, 16), np.uint8), np.random.default_rng(seed), 1000).state
        assert (state == 1).sum() == 1 and (state == 2).sum() == 0 and (state == 3).sum() >= 1


def test_toml_search_and_its_options() -> None:
    node = {"one": "RB=WR", "search": True, "limit": 50, "depth_coefficient": -1.0,
            "observe": [{"value": "G", "from": "B", "to": "R"}, {"value": "R", "to": "W"}, {"value": "B", "to": "BW"}]}
    prog = toml_program("BRGW", node)
    rule_node = prog.root
    assert isinstance(rule_node, RuleNode)
    assert (rule_node.search, rule_node.limit, rule_node.depth_coefficient) == (True, 50, -1.0)
    row = np.array([[1, 0, 0, 0, 2]], dtype=np.uint8)  # R . . . G
    state = run(prog, row, np.random.default_rng(0), 100).state
    assert state.tolist() == [[3, 3, 3, 3, 1]]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"search": True}, "only acts with observe"),
        ({"observe": [{"value": "G"}]}, "to: is required"),
        ({"observe": [{"value": "GB", "to": "R"}]}, "must be one value"),
        ({"observe": [{"value": "Q", "to": "R"}]}, "value=.Q. is not one of the values"),
        ({"observe": [{"value": "G", "to": "R", "at": 1}]}, "unknown key 'at'"),
        ({"observe": [{"value": "G", "to": "R"}], "limit": 5}, "^limit: only acts with search"),
        ({"observe": [{"value": "G", "to": "R"}], "search": False, "depth_coefficient": 1.0}, "^depth_coefficient: only acts with search"),
        ({"observe": [{"value": "G", "to": "R"}], "search": "yes"}, "true or false"),
    ],
)
def test_toml_observe_errors(extra: dict[str, Any], message: str) -> None:
    with pytest.raises(ProgramError, match=message):
        toml_program("BRGW", {"one": "RB=WR", **extra})


@pytest.mark.parametrize("extra", [{}, {"search": True}])
def test_toml_observe_on_prl_is_refused(extra: dict[str, Any]) -> None:
    # A prl node applies every match it draws: nothing for an observation to steer.
    with pytest.raises(ProgramError, match=r"^observe: .*a prl node applies each match"):
        toml_program("BRGW", {"prl": "RB=WR", **extra, "observe": [{"value": "G", "to": "R"}]})


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('<one in="RB" out="WR"><observe value="G" from="B"/></one>', "<observe> needs to"),
        ('<one in="RB" out="WR"><observe value="Q" to="R"/></one>', "value=.Q. is not one of the values"),
        ('<one in="RB" out="WR"><observe value="G" to="R" at="1"/></one>', "unknown attribute 'at'"),
        ('<prl in="RB" out="WR" search="True"><observe value="G" to="R"/></prl>', "<prl> has <observe>"),
        ('<prl in="RB" out="WR"><observe value="G" to="R"/></prl>', "<prl> has <observe>: fields and observations steer"),
        ('<one in="RB" out="WR" search="True" limit="x"><observe value="G" to="R"/></one>', "not a whole number"),
    ],
)
def test_xml_observe_errors(body: str, message: str) -> None:
    with pytest.raises(ProgramError, match=message):
        load_model(f'<sequence values="BRGW">{body}</sequence>')


def test_xml_search_attributes_load() -> None:
    prog, _, _ = suite("CompleteSAWSmart")
    observer, _ = _observer(prog.root)
    assert (observer.search, observer.limit, observer.depth_coefficient) == (True, 300, -1.0)
    values = prog.alphabet.values
    assert [(values[o.value], values[o.start]) for o in observer.observes][:1] == [("I", "B")]
