"""Potential fields and temperature (MarkovJunior's `<field>`): the distances, how they steer
`one` and `all` nodes, the TOML and XML forms, and every 2D model of MarkovJunior's own suite that
the engine reads, run at its listed size and step cap."""

from __future__ import annotations

import collections
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.rewrite.nodes.fields import compute_potential
from pipeline.rewrite.program import Program, run
from pipeline.rewrite.program_error import ProgramError
from pipeline.rewrite.resources import ResourceFolder
from pipeline.rewrite.rule import Alphabet
from pipeline.rewrite.toml_form import parse_node
from pipeline.rewrite.xml_form import load_model

import os

# MarkovJunior's suite sits beside the project (../shared/markovjunior); a clone elsewhere (CI)
# finds it through $MJ_SUITE or the team's shared folder.
SUITE = next(
    (p for p in (Path(os.environ.get("MJ_SUITE", "")), Path(__file__).resolve().parents[2] / "shared" / "markovjunior",
                 Path("/work/shared/markovjunior")) if str(p) != "." and (p / "models.xml").is_file()),
    Path("/work/shared/markovjunior"),
)


def program(values: str, node: dict[str, Any]) -> Program:
    alphabet = Alphabet(values)
    return Program(alphabet, parse_node(node, alphabet, "(xy)", ""))


def grid(rows: str, values: str) -> np.ndarray:
    return np.array([[values.index(c) for c in row] for row in rows.split("/")], dtype=np.uint8)


def bfs(state: np.ndarray, zero: set[int], on: set[int]) -> np.ndarray:
    """The reference distances, the slow obvious way."""
    h, w = state.shape
    out = np.full((h, w), -1)
    front = [(y, x) for y in range(h) for x in range(w) if state[y, x] in zero]
    for y, x in front:
        out[y, x] = 0
    queue = collections.deque(front)
    while queue:
        y, x = queue.popleft()
        for ny, nx in ((y, x - 1), (y, x + 1), (y - 1, x), (y + 1, x)):
            if 0 <= ny < h and 0 <= nx < w and out[ny, nx] == -1 and state[ny, nx] in on:
                out[ny, nx] = out[y, x] + 1
                queue.append((ny, nx))
    return out


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.integers(1, 12), st.integers(0, 2**32 - 1))
def test_potentials_are_breadth_first_distances_over_the_substrate(w: int, h: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    state = rng.integers(0, 3, size=(h, w)).astype(np.uint8)
    xb = max(w - 1, 1).bit_length()
    padded = np.zeros((h, 1 << xb), dtype=np.uint8)
    padded[:, :w] = state
    potential = np.zeros(padded.size, dtype=np.int32)
    found = compute_potential(padded.ravel(), w, h, xb, 0b001, 0b010, potential, np.empty(padded.size, dtype=np.int64))
    expected = bfs(state, {0}, {1})
    assert found == bool((state == 0).any())
    if found:
        assert np.array_equal(potential.reshape(h, -1)[:, :w], expected)


WALK = {"for": "R", "to": "W", "on": "B", "recompute": True, "essential": True}


def test_a_field_at_temperature_0_walks_a_shortest_path_around_walls() -> None:
    # R steps onto B cells, guided by its distance to W; X walls are not on the field's substrate.
    prog = program("BRWX", {"markov": [{"one": "RW=BR"}, {"one": "RB=BR", "fields": [WALK]}]})
    rows = "RBBBBBBBB/BBBBXBBBB/XXXXXBBBB/BBBBBBBBB/WBBBBBBBB"
    state = grid(rows, "BRWX")
    for seed in range(5):
        result = run(prog, state, np.random.default_rng(seed), 1000)
        # Every step brings R one cell nearer, for as many turns as the distance; in one more
        # the field has no W left and, being essential, fails the node and so the run.
        assert result.finished
        assert result.turns == bfs(state, {2}, {0, 1})[0, 0] + 1
        assert (result.state == 1).sum() == 1 and result.state[4, 0] == 1


def test_an_inversed_field_walks_away() -> None:
    # The field runs over R's own cell too (on = "BR"), and follows it (recompute).
    away = {"for": "R", "from": "W", "on": "BR", "recompute": True}
    prog = program("BRW", {"one": "RB=BR", "steps": 4, "fields": [away]})
    result = run(prog, grid("WBRBBBBBBB", "BRW"), np.random.default_rng(0), 100)
    assert "".join("BRW"[v] for v in result.state[0]) == "WBBBBBRBBB"
    towards = program("BRW", {"one": "RB=BR", "steps": 1, "fields": [{"for": "R", "to": "W", "on": "BR", "recompute": True}]})
    result = run(towards, grid("WBRBBBBBBB", "BRW"), np.random.default_rng(0), 100)
    assert "".join("BRW"[v] for v in result.state[0]) == "WRBBBBBBBB"


def test_temperature_spreads_the_choice_and_0_does_not() -> None:
    # From the middle of a row, the walker's first step: always towards W at temperature 0;
    # at a high temperature, both ways.
    def first_steps(temperature: float) -> set[int]:
        field = {"for": "R", "to": "W", "on": "BR"}
        prog = program("BRW", {"one": "RB=BR", "steps": 1, "fields": [field], "temperature": temperature})
        start = grid("WBBBBRBBBBB", "BRW")
        return {int(np.argmax(run(prog, start, np.random.default_rng(s), 10).state[0] == 1)) for s in range(40)}

    assert first_steps(0.0) == {4}
    assert first_steps(50.0) == {4, 6}


def test_all_with_a_field_applies_the_best_matches_first() -> None:
    # Every B next to R may turn R, but a cell must not be written twice in the step: best first
    # means the cells nearest W win.
    prog = program("BRW", {"all": "RB=RR", "steps": 1, "fields": [{"for": "R", "to": "W", "on": "BR"}]})
    result = run(prog, grid("WBBBRBBBB", "BRW"), np.random.default_rng(3), 10)
    assert "".join("BRW"[v] for v in result.state[0]) == "WBBRRBBBB"


@pytest.mark.parametrize(
    ("node", "message"),
    [
        ({"one": "RB=BR", "temperature": 1.0}, "only acts with fields"),
        ({"one": "RB=BR", "fields": [{"for": "R", "on": "B"}]}, "exactly one of to"),
        ({"one": "RB=BR", "fields": [{"for": "R", "on": "B", "to": "Q"}]}, "unknown symbol 'Q'"),
        ({"one": "RB=BR", "fields": [{"for": "R", "on": "B", "to": "W", "recompute": 1}]}, "true or false"),
        ({"one": "RB=BR", "fields": {"for": "R"}}, "must be a list"),
        ({"prl": "RB=BR", "fields": [{"for": "R", "on": "B", "to": "W"}]}, "^fields: .*a prl node applies each match"),
    ],
)
def test_field_errors_name_the_place(node: dict[str, Any], message: str) -> None:
    with pytest.raises(ProgramError, match=message):
        program("BRW", node)


def test_xml_field_on_prl_is_refused() -> None:
    with pytest.raises(ProgramError, match="<prl> has <field>"):
        load_model('<sequence values="BRW"><prl in="RB" out="BR"><field for="R" on="B" to="W"/></prl></sequence>')


def test_xml_fields_and_temperature_load() -> None:
    prog = load_model((SUITE / "models" / "GoToGradient.xml").read_text())
    guided = prog.root.children[1]  # type: ignore[union-attr]
    assert guided.temperature == 1.0
    assert [(f.value, f.recompute, f.essential, f.inversed) for f in guided.fields] == [(1, True, True, False)]


def suite_models() -> list[tuple[str, int, int]]:
    """(name, size, step cap) of the 2D entries of models.xml (no d="3", no height)."""
    out = []
    for m in ET.parse(SUITE / "models.xml").getroot().iter("model"):
        if m.get("d") == "3" or m.get("height"):
            continue
        steps = int(m.get("steps", "50000"))
        out.append((m.get("name", ""), int(m.get("size", "16")), 10**7 if steps < 0 else steps))
    return out


# The suite's longest test, in shards the test workers share out (one took 78 s alone, the last
# minute of `make test` on two cores).
SHARDS = 4


@pytest.mark.parametrize("shard", range(SHARDS))
def test_every_2d_model_of_the_suite_runs_at_its_size(shard: int) -> None:
    """All 115 of them: 54 ran before fields, rule images and the compatibility cases, then map,
    convolution, convchain, observe and search, and wfc nodes made it every one."""
    models = suite_models()
    assert len(models) == 115
    models = models[shard::SHARDS]

    def one(model: tuple[str, int, int]) -> tuple[str, Any, Any]:
        name, size, steps = model
        prog = load_model((SUITE / "models" / f"{name}.xml").read_text(), ResourceFolder(SUITE, "resources").read)
        return name, prog, run(prog, np.zeros((size, size), np.uint8), np.random.default_rng(1), steps)

    # Two at a time: the compiled machine releases the GIL, and this is the suite's longest test.
    with ThreadPoolExecutor(2) as pool:
        ran = list(pool.map(one, models))
    for name, prog, result in ran:
        assert result.turns > 0, name
        assert len(np.unique(result.state)) >= 2, f"{name} drew a single value"
        if "<wfc" in (SUITE / "models" / f"{name}.xml").read_text() or "<map" in (SUITE / "models" / f"{name}.xml").read_text():
            assert result.values != prog.alphabet.values, f"{name} never reached its new grid"
