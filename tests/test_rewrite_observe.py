"""Observations and search (MarkovJunior's `<observe>`, `search`): backward potentials, the goal
each observing model of MarkovJunior's suite reaches, search on the complete self-avoiding walks,
and the XML and TOML forms with their errors."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from typing import Any

import numpy as np
import pytest

from pipeline.rewrite.nodes.observation import backward_potentials
from pipeline.rewrite.nodes.search import state_hash
from pipeline.rewrite.program import BranchNode, Program, RuleNode, flatten, run
from pipeline.rewrite.resources import ResourceFolder
from pipeline.rewrite.rule import Alphabet, parse_rule
from pipeline.rewrite.toml_form import ProgramError, parse_node
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
        ({"observe": [{"value": "Q", "to": "R"}]}, "not a value"),
        ({"observe": [{"value": "G", "to": "R", "at": 1}]}, "unknown key 'at'"),
        ({"observe": [{"value": "G", "to": "R"}], "limit": 5}, "only acts with search"),
        ({"observe": [{"value": "G", "to": "R"}], "search": "yes"}, "true or false"),
    ],
)
def test_toml_observe_errors(extra: dict[str, Any], message: str) -> None:
    with pytest.raises(ProgramError, match=message):
        toml_program("BRGW", {"one": "RB=WR", **extra})


def test_toml_search_on_all_is_refused() -> None:
    with pytest.raises(ProgramError, match="one nodes only"):
        toml_program("BRGW", {"all": "RB=WR", "search": True, "observe": [{"value": "G", "to": "R"}]})


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('<one in="RB" out="WR"><observe value="G" from="B"/></one>', "<observe> needs to"),
        ('<one in="RB" out="WR"><observe value="Q" to="R"/></one>', "not a value"),
        ('<one in="RB" out="WR"><observe value="G" to="R" at="1"/></one>', "unknown attribute 'at'"),
        ('<all in="RB" out="WR" search="True"><observe value="G" to="R"/></all>', "one> nodes only"),
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
