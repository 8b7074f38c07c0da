"""Convolution nodes (MarkovJunior's `<convolution>`): cellular automaton steps checked cell for
cell against a slow obvious step, Game of Life patterns, neighbourhoods, sums, `p`, `steps`, the
upkeep of other nodes' match lists, the XML and TOML forms and their errors, and the suite's
models that use them."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

import numpy as np
import pytest

from pipeline.rewrite.kinds.convolution import ConvolutionNode
from pipeline.rewrite.nodes.convolution_node import parse_sums
from pipeline.rewrite.program import Program, run
from pipeline.rewrite.program_error import ProgramError
from pipeline.rewrite.resources import ResourceFolder
from pipeline.rewrite.rule import Alphabet
from pipeline.rewrite.toml_form import parse_node
from pipeline.rewrite.xml_form import load_model
from test_rewrite_fields import SUITE, grid

LIFE = """<sequence values="DA"><convolution neighborhood="Moore" periodic="{periodic}" steps="{steps}">
  <rule in="D" out="A" sum="3" values="A"/>
  <rule in="A" out="D" sum="0,1,4..8" values="A"/>
</convolution></sequence>"""


def life(state: np.ndarray, steps: int, periodic: bool = True) -> np.ndarray:
    prog = load_model(LIFE.format(periodic=periodic, steps=steps))
    return run(prog, state, np.random.default_rng(0), 10**6).state


def toml_program(values: str, node: dict[str, Any]) -> Program:
    alphabet = Alphabet(values)
    return Program(alphabet, parse_node(node, alphabet, "(xy)", ""))


def reference_step(state: np.ndarray, node: ConvolutionNode) -> np.ndarray:
    """One step the slow obvious way: every cell from the old grid, the first rule that fires."""
    h, w = state.shape
    new = state.copy()
    for y in range(h):
        for x in range(w):
            for rule in node.rules:
                if state[y, x] != rule.input or rule.output == rule.input:
                    continue
                if rule.values:
                    total = 0
                    for dy in (-1, 0, 1):
                        for dx in (-1, 0, 1):
                            if (dx, dy) == (0, 0) or (node.neighborhood == "VonNeumann" and dx and dy):
                                continue
                            ny, nx = y + dy, x + dx
                            if node.periodic:
                                ny, nx = ny % h, nx % w
                            elif not (0 <= ny < h and 0 <= nx < w):
                                continue
                            total += rule.values.count(int(state[ny, nx]))
                    if total not in rule.sums:
                        continue
                new[y, x] = rule.output
                break
    return new


@pytest.mark.parametrize("neighborhood", ["Moore", "VonNeumann"])
@pytest.mark.parametrize("periodic", [False, True])
@pytest.mark.parametrize("shape", [(7, 9), (1, 6), (5, 2)])
def test_a_step_is_the_obvious_step_cell_for_cell(neighborhood: str, periodic: bool, shape: tuple[int, int]) -> None:
    gen = np.random.default_rng([len(neighborhood), int(periodic), *shape])
    for _ in range(4):
        rules = []
        for _ in range(int(gen.integers(1, 4))):
            inp, out = gen.choice(list("ABC"), 2)
            if gen.random() < 0.2:
                rules.append(f"{inp}={out}")  # unconditional
                continue
            values = "".join(gen.choice(list("ABC"), int(gen.integers(1, 4))))  # repeats count twice
            sums = ",".join(str(s) for s in sorted(set(gen.integers(0, 9, 3).tolist())))
            rules.append({"rule": f"{inp}={out}", "values": values, "sum": sums})
        prog = toml_program("ABC", {"convolution": rules, "neighborhood": neighborhood, "periodic": periodic, "steps": 1})
        state = gen.integers(0, 3, shape).astype(np.uint8)
        assert isinstance(prog.root, ConvolutionNode)
        expected = reference_step(state, prog.root)
        result = run(prog, state, np.random.default_rng(0), 10)
        assert (result.state == expected).all(), (rules, state)
        # One step that changed something, then the node is spent (or it changed nothing at once).
        assert result.turns == (2 if (expected != state).any() else 1)


def test_game_of_life_blinker_has_period_two() -> None:
    start = np.zeros((7, 7), np.uint8)
    start[3, 2:5] = 1
    once = life(start, 1)
    assert (np.argwhere(once) == [[2, 3], [3, 3], [4, 3]]).all()
    assert (life(start, 2) == start).all()
    assert (life(start, 7) == once).all()


GLIDER = np.array([[0, 1, 0], [0, 0, 1], [1, 1, 1]], np.uint8)


def test_game_of_life_glider_moves_one_cell_diagonally_in_four_steps() -> None:
    start = np.zeros((10, 12), np.uint8)
    start[1:4, 2:5] = GLIDER
    for k in range(1, 4):
        assert not (life(start, k) == np.roll(start, (1, 1), (0, 1))).all()
    assert (life(start, 4) == np.roll(start, (1, 1), (0, 1))).all()
    assert (life(start, 12) == np.roll(start, (3, 3), (0, 1))).all()


def test_a_glider_wraps_around_a_periodic_grid_and_not_a_bounded_one() -> None:
    start = np.zeros((6, 6), np.uint8)
    start[0:3, 0:3] = GLIDER
    # 4 * 6 steps take it once around both ways, back to where it started.
    assert (life(start, 24) == start).all()
    moved = np.roll(start, (4, 4), (0, 1))
    assert moved[0].any() and moved[:, 0].any()  # it lies across both edges by then
    assert (life(start, 16) == moved).all()
    assert (life(start, 16, periodic=False) != moved).any()


@pytest.mark.parametrize(
    ("neighborhood", "expected"),
    [
        ("Moore", "AAA/AAA/AAA"),
        ("VonNeumann", "DAD/AAA/DAD"),
    ],
)
def test_neighbourhoods_count_eight_or_four_cells_from_the_old_grid(neighborhood: str, expected: str) -> None:
    prog = load_model(
        f'<sequence values="DA"><convolution neighborhood="{neighborhood}" steps="1" in="D" out="A" values="A" sum="1..8"/></sequence>'
    )
    start = grid("DDDDD/DDDDD/DDADD/DDDDD/DDDDD", "DA")
    got = run(prog, start, np.random.default_rng(0), 10).state
    # Only the old A's neighbours turn: cells the step itself turned do not spread it further.
    assert (got[1:4, 1:4] == grid(expected, "DA")).all()
    assert got.sum() == grid(expected, "DA").sum()


def test_cells_beyond_a_bounded_edge_count_nothing_and_a_periodic_one_wraps() -> None:
    start = grid("ADDD/DDDD/DDDD", "DA")
    for periodic, turned in ((False, {(0, 1), (1, 0), (1, 1)}), (True, {(0, 1), (1, 0), (1, 1), (0, 3), (2, 0), (2, 3), (1, 3), (2, 1)})):
        prog = toml_program("DA", {"convolution": {"rule": "D=A", "values": "A", "sum": "1"}, "neighborhood": "Moore", "periodic": periodic, "steps": 1})
        got = run(prog, start, np.random.default_rng(0), 10).state
        assert {tuple(c) for c in np.argwhere(got)} == turned | {(0, 0)}


def test_the_first_rule_that_fires_wins_and_a_rule_without_values_always_fires() -> None:
    start = grid("ABA/BBB", "ABC")
    node = {"convolution": [{"rule": "B=C", "values": "A", "sum": "2"}, "B=A", "A=B"], "neighborhood": "Moore", "steps": 1}
    got = run(toml_program("ABC", node), start, np.random.default_rng(0), 10).state
    assert (got == grid("BCB/ACA", "ABC")).all()


def test_a_rule_that_would_not_change_its_cell_lets_the_next_one_try() -> None:
    node = {"convolution": ["A=A", "A=B"], "neighborhood": "Moore", "steps": 1}
    got = run(toml_program("AB", node), grid("AA", "AB"), np.random.default_rng(0), 10).state
    assert (got == grid("BB", "AB")).all()


@pytest.mark.parametrize(
    ("text", "sums"),
    [("5..8", (5, 6, 7, 8)), ("3", (3,)), ("0,1,4..8", (0, 1, 4, 5, 6, 7, 8)), ("2..2, 7", (2, 7)), ("8,1..3,2", (1, 2, 3, 8))],
)
def test_sum_intervals_parse(text: str, sums: tuple[int, ...]) -> None:
    assert parse_sums(text) == sums


@pytest.mark.parametrize(("text", "message"), [("5..x", "neither"), ("8..5", "empty"), ("28", "0 to 27"), ("", "neither"), ("1..2..3", "neither"), ("-1", "neither"), ("5...8", "neither")])
def test_bad_sum_intervals_are_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_sums(text)


def test_p_turns_about_that_share_of_the_cells_and_p_zero_none() -> None:
    start = np.zeros((100, 100), np.uint8)
    half = toml_program("AB", {"convolution": {"rule": "A=B", "p": 0.3}, "neighborhood": "Moore", "steps": 1})
    share = run(half, start, np.random.default_rng(5), 10).state.mean()
    assert 0.27 < share < 0.33
    never = toml_program("AB", {"convolution": {"rule": "A=B", "p": 0.0}, "neighborhood": "Moore"})
    result = run(never, start, np.random.default_rng(5), 10)
    assert result.state.sum() == 0 and result.turns == 1 and result.finished  # changed nothing: it fails


def test_steps_limit_the_node_and_a_branch_reset_renews_them() -> None:
    start = np.zeros((21, 21), np.uint8)
    start[10, 10] = 1
    grow = {"convolution": {"rule": "D=A", "values": "A", "sum": "1..8"}, "neighborhood": "VonNeumann", "steps": 3}
    got = run(toml_program("DA", grow), start, np.random.default_rng(0), 100)
    assert got.turns == 4 and got.state.sum() == 1 + 4 + 8 + 12  # a diamond of radius 3
    # In a sequence that a markov node runs again, the sequence's reset when it fails renews the
    # count, so rounds of 3 steps repeat until the grid is full (else: one diamond).
    again = {"markov": [{"sequence": [grow]}]}
    got = run(toml_program("DA", again), start, np.random.default_rng(0), 100)
    assert got.finished and got.state.all()


def test_other_nodes_match_lists_follow_what_a_convolution_writes() -> None:
    # The `one` node keeps its matches between turns while the convolution grows A; `verify`
    # compares every incremental update with a full rescan, so a missed change fails the run.
    prog = load_model("""<markov values="DAB">
      <one in="AAA" out="ABA"/>
      <convolution neighborhood="Moore"><rule in="D" out="A" sum="3..8" values="AB"/></convolution>
    </markov>""")
    start = np.random.default_rng(2).choice(3, (30, 30), p=[0.6, 0.3, 0.1]).astype(np.uint8)
    result = run(prog, start, np.random.default_rng(3), 10**5, verify=True)
    assert result.finished and (result.state == 2).sum() > (start == 2).sum()


def test_a_convolution_without_rule_children_is_its_own_rule_and_can_be_the_root() -> None:
    prog = load_model('<sequence values="DA"><convolution neighborhood="VonNeumann" in="D" out="A"/></sequence>')
    node = prog.root.children[0]  # type: ignore[union-attr]
    assert isinstance(node, ConvolutionNode) and node.rules[0].values == ()
    assert run(prog, np.zeros((3, 3), np.uint8), np.random.default_rng(0), 10).state.all()
    # A root that is its own rule reads the grid's `values` as the rule's too, as the reference
    # does, which then needs a sum.
    with pytest.raises(ProgramError, match="line 1: values='DA' needs sum="):
        load_model('<convolution values="DA" neighborhood="VonNeumann" in="D" out="A"/>')
    fire = load_model((SUITE / "models" / "ForestFireCA.xml").read_text())
    assert isinstance(fire.root, ConvolutionNode) and len(fire.root.rules) == 4 and not fire.root.periodic


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('<convolution><rule in="D" out="A"/></convolution>', "line 2: <convolution> needs neighborhood"),
        ('<convolution neighborhood="NoCorners"><rule in="D" out="A"/></convolution>', "line 2: neighborhood='NoCorners'"),
        ('<convolution neighborhood="Moore">\n<rule in="D" out="A" values="A"/></convolution>', "line 3: values='A' needs sum="),
        ('<convolution neighborhood="Moore">\n<rule in="D" out="A" sum="1"/></convolution>', "line 3: sum='1' needs values="),
        ('<convolution neighborhood="Moore">\n<rule in="D" out="A" sum="1..x" values="A"/></convolution>', "line 3: sum='1..x'"),
        ('<convolution neighborhood="Moore"><rule in="DA" out="A"/></convolution>', "in='DA' must be one value"),
        ('<convolution neighborhood="Moore"><rule in="D" out="*"/></convolution>', "out='\\*' must be one value"),
        ('<convolution neighborhood="Moore"><rule in="D" out="A" values="Q" sum="1"/></convolution>', "values='Q': 'Q' is not a value"),
        ('<convolution neighborhood="Moore"><rule in="D" out="A" p="x"/></convolution>', "p='x' is not a number"),
        ('<convolution neighborhood="Moore"><rule in="D" out="A" p="2"/></convolution>', "p must be between 0 and 1"),
        ('<convolution neighborhood="Moore"><rule in="D"/></convolution>', "needs out"),
        ('<convolution neighborhood="Moore" periodic="yes"><rule in="D" out="A"/></convolution>', "periodic='yes' must be True or False"),
        ('<convolution neighborhood="Moore" steps="x"><rule in="D" out="A"/></convolution>', "steps='x'"),
        ('<convolution neighborhood="Moore" in="D"><rule in="D" out="A"/></convolution>', "has both in= and <rule> children"),
        ('<convolution neighborhood="Moore" symmetry="()"><rule in="D" out="A"/></convolution>', "unknown attribute 'symmetry'"),
        ('<convolution neighborhood="Moore"><rule in="D" out="A" on="A"/></convolution>', "unknown attribute 'on'"),
        ('<convolution neighborhood="Moore">\n<field for="A" on="D" to="A"/></convolution>', "line 3: unexpected <field>"),
    ],
)
def test_xml_errors_name_the_line_and_attribute(body: str, message: str) -> None:
    with pytest.raises(ProgramError, match=message):
        load_model(f'<sequence values="DA">\n{body}</sequence>')


@pytest.mark.parametrize(
    ("node", "message"),
    [
        ({"convolution": "D=A"}, "neighborhood: must be 'Moore' or 'VonNeumann' \\(got None\\)"),
        ({"convolution": "D=A", "neighborhood": "moore"}, "neighborhood: must be 'Moore' or 'VonNeumann'"),
        ({"convolution": "D=A", "neighborhood": "Moore", "periodic": "yes"}, "periodic: must be true or false"),
        ({"convolution": "D=A", "neighborhood": "Moore", "steps": -1}, "steps: must be a whole number"),
        ({"convolution": "D=A", "neighborhood": "Moore", "symmetry": "()"}, "unknown key 'symmetry'"),
        ({"convolution": [], "neighborhood": "Moore"}, "convolution: needs at least one rule"),
        ({"convolution": ["D=A", "DA=AA"], "neighborhood": "Moore"}, r"convolution\[1\]: in='DA' must be one value"),
        ({"convolution": [{"rule": "D=A", "values": "A"}], "neighborhood": "Moore"}, r"convolution\[0\]: values='A' needs sum="),
        ({"convolution": [{"rule": "D=A", "values": "A", "sum": [1]}], "neighborhood": "Moore"}, r"convolution\[0\].sum: must be counts"),
        ({"convolution": [{"rule": "D=A", "values": 1, "sum": 1}], "neighborhood": "Moore"}, r"convolution\[0\].values: must be a string"),
        ({"convolution": [{"rule": "D=A", "values": "A", "sum": "9..3"}], "neighborhood": "Moore"}, "is empty"),
        ({"convolution": [{"rule": "D=A", "p": 1.5}], "neighborhood": "Moore"}, r"convolution\[0\].p: must be a number from 0 to 1"),
        ({"convolution": [{"rule": "D=A", "on": "A"}], "neighborhood": "Moore"}, "unknown key 'on'"),
        ({"convolution": [{"values": "A"}], "neighborhood": "Moore"}, "needs `rule"),
        ({"convolution": "D", "neighborhood": "Moore"}, "a convolution rule is"),
    ],
)
def test_toml_errors_name_the_place(node: dict[str, Any], message: str) -> None:
    with pytest.raises(ProgramError, match=message):
        parse_node({"sequence": [node]}, Alphabet("DA"), "(xy)", "")


def test_toml_and_xml_forms_read_the_same_node() -> None:
    xml = load_model(LIFE.format(periodic=True, steps=5)).root.children[0]  # type: ignore[union-attr]
    toml = parse_node(
        {"convolution": [{"rule": "D=A", "values": "A", "sum": 3}, {"rule": "A=D", "values": "A", "sum": "0,1,4..8"}],
         "neighborhood": "Moore", "periodic": True, "steps": 5},
        Alphabet("DA"), "(xy)", "",
    )
    assert xml == toml


UNLOCKED = ["Cave", "CaveContour", "ConnectedCaves", "ConstrainedCaves", "ForestFireCA", "GameOfLife", "LostCity",
            "OpenCave", "Rosettes", "SelectLargeCaves"]


def test_the_suite_models_with_convolutions_run_at_their_size() -> None:
    sizes = {m.get("name"): m for m in ET.parse(SUITE / "models.xml").getroot().iter("model")}
    for name in UNLOCKED:
        entry = sizes[name]
        size, steps = int(entry.get("size", "16")), int(entry.get("steps", "50000"))
        prog = load_model((SUITE / "models" / f"{name}.xml").read_text(), ResourceFolder(SUITE, "resources").read)
        result = run(prog, np.zeros((size, size), np.uint8), np.random.default_rng(1), 10**7 if steps < 0 else steps)
        assert result.turns > 0, name
        assert len(np.unique(result.state)) >= 2, f"{name} drew a single value"
