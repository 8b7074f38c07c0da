"""The rewrite engine: MarkovJunior's semantics node by node, incremental matching against a full
rescan, the example programs' guarantees, model files, and the stage through the CLI."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import ndimage, stats

from conftest import RECIPES, dead_ends, pcg, write_recipe
import pipeline
from pipeline.recipe.load import load_recipe
from pipeline.rewrite.program import Program, run
from pipeline.rewrite.program_error import ProgramError
from pipeline.rewrite.rule import Alphabet, parse_rule
from pipeline.rewrite.toml_form import parse_node
from pipeline.rewrite.xml_form import load_model


def program(values: str, node: dict[str, Any], origin: bool = False, group: str = "(xy)") -> Program:
    alphabet = Alphabet(values)
    return Program(alphabet, parse_node(node, alphabet, group, ""), "center" if origin else "none")


def grid(rows: str, values: str) -> np.ndarray:
    return np.array([[values.index(c) for c in row] for row in rows.split("/")], dtype=np.uint8)


def text(state: np.ndarray, values: str) -> str:
    return "/".join("".join(values[v] for v in row) for row in state)


def run_text(prog: Program, rows: str, seed: int = 0, max_steps: int = 10_000) -> str:
    values = prog.alphabet.values
    return text(run(prog, grid(rows, values), np.random.default_rng(seed), max_steps).state, values)


# --- symmetry ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("group", "asymmetric", "row"),
    [("()", 1, 1), ("(x)", 2, 2), ("(y)", 2, 1), ("(x)(y)", 4, 2), ("(xy+)", 4, 4), ("(xy)", 8, 4)],
)
def test_symmetry_groups_give_the_distinct_variants(group: str, asymmetric: int, row: int) -> None:
    alphabet = Alphabet("ABCD")
    # A 2x2 pattern with four different cells has no symmetry of its own: one variant per element.
    assert len(parse_rule("AB/CD", "AB/CD", alphabet).variants(group)) == asymmetric
    # RBB's mirror image is its half turn, so (xy) gives 4 rules, and (y) maps the row to itself.
    assert len(parse_rule("ABB", "CCA", alphabet).variants(group)) == row


def test_variants_are_the_rotations_and_mirrors() -> None:
    alphabet = Alphabet("ABCD")
    shapes = {text(r.out, "ABCD") for r in parse_rule("AB/CD", "AB/CD", alphabet).variants("(xy)")}
    assert shapes == {"AB/CD", "BA/DC", "BD/AC", "DB/CA", "DC/BA", "CD/AB", "CA/DB", "AC/BD"}
    turned = {text(r.out, "ABCD") for r in parse_rule("AB/CD", "AB/CD", alphabet).variants("(xy+)")}
    assert turned == {"AB/CD", "BD/AC", "DC/BA", "CA/DB"}


# --- rule nodes --------------------------------------------------------------------------------


def test_one_chooses_uniformly_among_the_matches_of_all_its_rules() -> None:
    # In BBBBBB, "BB=RR" matches at 5 places and "B=G" at 6: each of the 11 is 1/11.
    prog = program("BRG", {"one": ["BB=RR", "B=G"], "steps": 1}, group="()")
    outcomes = Counter(run_text(prog, "BBBBBB", seed) for seed in range(2200))
    assert len(outcomes) == 11
    assert stats.chisquare(list(outcomes.values())).pvalue > 0.001, outcomes


def test_all_writes_no_overlapping_matches_and_leaves_no_free_one() -> None:
    # "BB=RG" left to right: overlapping writes would leave an R not followed by G; a match left
    # unapplied though its cells were free would leave a BB.
    prog = program("BWRG", {"all": "BB=RG", "steps": 1}, group="()")
    rng = np.random.default_rng(5)
    for seed in range(200):
        row = "".join(rng.choice(["B", "B", "B", "W"], size=30))
        out = run_text(prog, row, seed)
        assert "BB" not in out, (row, out)
        assert out.count("R") == out.count("RG") == out.count("G"), (row, out)


@settings(max_examples=40, deadline=None)
@given(st.integers(3, 12), st.integers(3, 12), st.integers(0, 2**32 - 1))
def test_all_on_2d_patterns_never_overlaps(w: int, h: int, seed: int) -> None:
    # Every application writes a whole 2x2 block of Rs; an overlap would cut one short.
    prog = program("BWR", {"all": "BB/BB=RR/RR", "steps": 1})
    rng = np.random.default_rng(seed)
    start = (rng.random((h, w)) < 0.15).astype(np.uint8)
    out = run(prog, start, rng, 10).state
    red = out == 2
    labels, count = ndimage.label(red)
    for k in range(1, count + 1):
        assert (labels == k).sum() % 4 == 0
    free = (out == 0)
    assert not (free[:-1, :-1] & free[1:, :-1] & free[:-1, 1:] & free[1:, 1:]).any()


def test_prl_applies_every_match_with_probability_p() -> None:
    prog = program("BR", {"prl": "B=R", "p": 0.3, "steps": 1})
    out = run(prog, np.zeros((100, 100), np.uint8), np.random.default_rng(1), 10).state
    # Binomial(10000, 0.3): the mean 3000 +- 5 standard deviations (46 each).
    assert abs(int(out.sum()) - 3000) < 230


def test_prl_applies_overlapping_matches_where_all_does_not() -> None:
    # Both "BB" windows of "BBB" are matches of the grid as it was: prl writes both, all one.
    assert run_text(program("BR", {"prl": "BB=RR", "steps": 1}, group="()"), "BBB") == "RRR"
    assert {run_text(program("BR", {"all": "BB=RR", "steps": 1}, group="()"), "BBB", seed) for seed in range(20)} == {"RRB", "BRR"}


@pytest.mark.parametrize("kind", ["one", "all", "prl"])
def test_steps_limits_successful_applications(kind: str) -> None:
    # Each step of `one` turns one B; of `all` and `prl`, every B next to an R.
    prog = program("BR", {kind: "RB=RR", "steps": 3}, group="()")
    assert run_text(prog, "RBBBBBBB") == "RRRRBBBB"


def test_a_lone_rule_node_runs_until_no_match_is_left() -> None:
    assert run_text(program("BR", {"one": "B=R"}), "BBB/BBB") == "RRR/RRR"


# --- branches ----------------------------------------------------------------------------------


def test_markov_restarts_from_its_first_child_every_step() -> None:
    # Markov: every B turned R is at once turned G, since "R=G" comes first.
    prog = program("BRG", {"markov": [{"one": "R=G"}, {"one": "B=R"}]})
    assert run_text(prog, "BBBB") == "GGGG"


def test_sequence_runs_each_child_until_it_fails() -> None:
    # Sequence: "R=G" fails at once (no R yet), then "B=R" runs to the end: nothing turns G.
    prog = program("BRG", {"sequence": [{"one": "R=G"}, {"one": "B=R"}]})
    assert run_text(prog, "BBBB") == "RRRR"


def test_a_nested_branch_takes_over_until_it_finishes() -> None:
    # Once the inner sequence applies it runs on later steps by itself: two Bs turn R before
    # the markov's first child, "R=W", gets a turn. Were the markov asked first each step, the
    # first R would be W before the second appeared.
    prog = program("BRW", {"markov": [{"one": "R=W"}, {"sequence": [{"one": "B=R", "steps": 2}]}]})
    assert sorted(run_text(prog, "BBBB", max_steps=2)) == sorted("RRBB")
    # Turn 3 is the inner sequence failing (a turn of its own), turns 4 and 5 are "R=W".
    assert sorted(run_text(prog, "BBBB", max_steps=4)) == sorted("RWBB")
    assert sorted(run_text(prog, "BBBB", max_steps=5)) == sorted("WWBB")
    assert run_text(prog, "BBBB") == "WWWW"


def test_a_finished_nested_sequence_is_tried_again_from_a_reset_state() -> None:
    # MarkovJunior's Branch.Go: when a nested branch that had taken over fails, control returns
    # to the parent, whose next step calls that child again, reset. With a `steps = 1` rule
    # inside, the inner sequence thus applies once per round until nothing matches.
    prog = program("BR", {"sequence": [{"sequence": [{"one": "B=R", "steps": 1}]}]})
    assert run_text(prog, "BBBBB") == "RRRRR"


def test_max_steps_stops_the_run() -> None:
    prog = program("BR", {"one": "B=R"})
    result = run(prog, np.zeros((10, 10), np.uint8), np.random.default_rng(0), 7)
    assert not result.finished and result.turns == 7 and int(result.state.sum()) == 7


# --- incremental matching ----------------------------------------------------------------------

_RULES = ["AB=BA", "AA=AB", "B/A=A/B", "AB/BC=CA/AB", "A*B=BBA", "C=A", "BB=CC", "?C=C*", "A?A=*C*"]
_NODE = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["one", "all", "prl"]),
        "rules": st.lists(st.sampled_from(_RULES), min_size=1, max_size=3),
        "steps": st.integers(0, 5),
        "symmetry": st.sampled_from(["()", "(x)", "(xy+)", "(xy)"]),
    }
)


def _build(nodes: list[dict[str, Any]], branch: str) -> dict[str, Any]:
    return {branch: [{n["kind"]: n["rules"], "steps": n["steps"], "symmetry": n["symmetry"]} for n in nodes]}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_NODE, min_size=1, max_size=4),
    st.sampled_from(["markov", "sequence"]),
    st.integers(2, 9),
    st.integers(2, 9),
    st.integers(0, 2**32 - 1),
)
def test_incremental_matches_agree_with_a_full_rescan(nodes: list[dict[str, Any]], branch: str, w: int, h: int, seed: int) -> None:
    alphabet = Alphabet("ABC", (("?", "AB"),))
    prog = Program(alphabet, parse_node(_build(nodes, branch), alphabet, "(xy)", ""))
    rng = np.random.default_rng(seed)
    start = rng.integers(0, 3, size=(h, w)).astype(np.uint8)
    run(prog, start, rng, 300, verify=True)  # raises at the first disagreement


def test_the_rescan_check_can_fail() -> None:
    # The verifier must notice a wrong match list: corrupt one through a rule whose shifts lie.
    from pipeline.rewrite import machine
    from pipeline.rewrite.program import flatten

    prog = program("AB", {"markov": [{"one": "AB=BA"}]})
    flat = flatten(prog)
    flat = flat._replace(pair_ptr=np.zeros_like(flat.pair_ptr))  # incremental scans now find nothing new
    state = np.array([0, 1, 0, 1, 0, 1, 0, 0], dtype=np.uint8)  # 6 cells in a row of 8
    outcome, *_ = machine.run_program(
        state, 6, 1, 3, 2, *flat.arguments(), np.random.default_rng(0), 100, 0, np.empty((0, 8), np.uint8), 1 << 22, np.zeros(8 * 4, np.bool_)
    )
    assert outcome == machine.MISMATCH


CHURN = {"sequence": [{"one": "B=R", "steps": 3}, {"markov": [{"one": "RB=BR"}, {"prl": "RW=WR"}, {"all": "BW=WB"}]}]}


def test_a_compacted_change_log_runs_as_a_whole_one() -> None:
    """A checked run compacts its log every few turns (program._run_leg) and compares every match
    update with a full rescan; its grid is the unchecked run's, whose log is never compacted."""
    prog = program("BWR", CHURN)
    start = np.random.default_rng(1).integers(0, 2, size=(9, 11)).astype(np.uint8)
    checked = run(prog, start, np.random.default_rng(5), 3000, verify=True)
    plain = run(prog, start, np.random.default_rng(5), 3000)
    assert checked.turns == plain.turns == 3000 and np.array_equal(checked.state, plain.state)


def test_a_program_that_never_settles_runs_in_bounded_memory(tmp_path: Path) -> None:
    """`prl` churns for ever: its change log grew by every turn's changes, 4.5 GB in a million
    turns on a 12 x 10 grid, until the run died of it before max_steps said anything."""
    import subprocess
    import sys

    write_recipe(tmp_path, "churn", (
        '[pack]\nname = "churn"\nseed = 1\nmaps = 1\n\n[stage.r]\nuse = "rewrite"\nsize = [12, 10]\nvalues = "BWR"\n'
        'max_steps = 400000\non_max_steps = "stop"\nprogram = { sequence = [ {one = "B=R", steps = 3}, { prl = "RB=BR" } ] }\n\n'
        '[stage.png]\nuse = "export.png"\ninput = "r"\n'
    ))
    code = (
        "import resource, pipeline\n"
        "assert pipeline.build('recipes', jobs=1).ok\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)\n"
    )
    peak_mb = int(subprocess.run([sys.executable, "-c", code], cwd=tmp_path, check=True, capture_output=True, text=True).stdout)
    assert peak_mb < 900, f"{peak_mb} MB for a 12 x 10 grid"  # about 300 (numba and all); 1.8 GB before


# --- the example programs ----------------------------------------------------------------------


def _stage(recipe: str, name: str) -> Any:
    return load_recipe(RECIPES / f"{recipe}.toml").by_name[name].params


def _assert_perfect_on_even_lattice(walk: np.ndarray) -> None:
    """Cells at even coordinates, passages between: a spanning tree of the cells."""
    h, w = walk.shape
    cells = np.zeros_like(walk)
    cells[::2, ::2] = True
    assert walk[cells].all(), "a lattice cell was never reached"
    assert not walk[1::2, 1::2].any(), "an odd-odd cell is open"
    ncells = int(cells.sum())
    assert int(walk.sum()) == 2 * ncells - 1, "passages != cells - 1: a loop or a gap"
    assert ndimage.label(walk)[1] == 1


@pytest.mark.parametrize(("recipe", "transient"), [("dfs_maze", "GR"), ("growth_maze", "")])
@settings(max_examples=15, deadline=None)
@given(st.integers(1, 20), st.integers(1, 20), st.integers(0, 2**32 - 1))
def test_maze_programs_make_perfect_mazes(recipe: str, transient: str, cw: int, ch: int, seed: int) -> None:
    # The depth-first program (RBB=GGR, RGG=WWR) and the growth program (WBB=WAW).
    stage = _stage(recipe, "maze")
    w, h = 2 * cw + 1, 2 * ch + 1
    # The origin is the centre cell; with odd sizes and (w // 2) even it sits on the lattice.
    w += 2 * ((w // 2) % 2)
    h += 2 * ((h // 2) % 2)
    result = run(stage._program, np.zeros((h, w), np.uint8), np.random.default_rng(seed), 10**7)
    assert result.finished
    values = stage._program.alphabet.values
    for symbol in transient:  # marks of the walk that must all be gone at the end
        assert not (result.state == values.index(symbol)).any()
    _assert_perfect_on_even_lattice(result.state != values.index("B"))


@pytest.mark.parametrize("seed", range(12))
def test_nystrom_program_is_connected_with_no_dead_ends(seed: int) -> None:
    stage = _stage("nystrom", "dungeon")
    size = (39, 39) if seed % 2 else (31, 51)  # (n - 1) / 2 odd: a wall border
    result = run(stage._program, np.zeros(size, np.uint8), np.random.default_rng(seed), 10**7)
    assert result.finished
    walk = result.state == stage._program.alphabet.values.index("W")
    assert set(np.unique(result.state)) <= {0, 2}  # only wall and floor are left
    assert ndimage.label(walk)[1] == 1
    assert dead_ends(walk) == 0


def test_snake_program_plays_until_the_snake_is_stuck() -> None:
    stage = _stage("snake", "game")
    values = stage._program.alphabet.values
    result = run(stage._program, np.zeros((29, 29), np.uint8), np.random.default_rng(3), 10**6)
    assert result.finished
    counts = Counter(values[v] for v in result.state.ravel())
    assert counts["R"] == 1 and counts["P"] == 1  # one head, one tail
    assert counts["G"] >= 3  # it ate and grew
    body = np.isin(result.state, [values.index(c) for c in "RGP"])
    assert ndimage.label(body)[1] == 1  # one unbroken snake


def test_flowers_grow_from_the_ground_up() -> None:
    stage = _stage("flowers", "garden")
    values = stage._program.alphabet.values
    state = run(stage._program, np.zeros((40, 60), np.uint8), np.random.default_rng(2), 10**6).state
    ground = int(np.argmax((state == values.index("N")).any(axis=1))) - 1  # the grass row
    assert (state[:ground] != values.index("N")).all() and (state[ground + 1 :] == values.index("N")).sum() > 0
    plants = np.isin(state, [values.index(c) for c in "EPY"])
    assert (state == values.index("Y")).any()
    labels, count = ndimage.label(plants, structure=np.ones((3, 3)))
    assert count >= 2
    for k in range(1, count + 1):
        rows = np.nonzero((labels == k).any(axis=1))[0]
        assert rows.max() >= ground, "a plant floats above the ground"
        assert rows.max() <= ground + 1, "a plant grew down into the soil"


# --- program files and errors ------------------------------------------------------------------


def test_toml_program_errors_name_the_place() -> None:
    alphabet = Alphabet("BRGW")
    cases = {
        "markov[1].one: unknown symbol 'X'": {"markov": [{"one": "RBB=GGR"}, {"one": "RBX=GGR"}]},
        "one: input 'RB' is 2x1 but output 'GGR' is 3x1": {"one": "RB=GGR"},
        "sequence[0]: a node needs exactly one of": {"sequence": [{"rule": "B=R"}]},
        "symmetry: unknown symmetry '(z)'": {"one": "B=R", "symmetry": "(z)"},
        "one: pattern 'RB/R' is not a rectangle": {"one": "RB/R=GG/G"},
        "all: output symbol '?' is not a value": {"all": "B=?"},
        "path.on: is required": {"path": {"from": "R", "to": "W"}},
    }
    for expected, node in cases.items():
        with pytest.raises(ProgramError) as info:
            parse_node(node, alphabet, "(xy)", "")
        assert expected in str(info.value), (expected, str(info.value))


@pytest.mark.parametrize(
    ("xml", "expected"),
    [
        ('<one values="BW" in="B" out="W" transparent="True"/>', "line 1: <one transparent=...>: transparent (a 3D rendering option) is not supported"),
        ('<sequence values="BW">\n  <wfc sample="x"/>\n</sequence>', "line 2: <wfc> needs a values attribute"),
        ('<markov values="BW"><oops/></markov>', "unknown node <oops>"),
        ('<prl values="BW" in="B" out="W" search="True"><observe value="W" to="B"/></prl>', "<prl> has <observe>: fields and observations steer"),
        ('<one values="BW" in="B" out="W" colour="x"/>', "unknown attribute 'colour'"),
        ('<one in="B" out="W"/>', "needs a values attribute"),
        ('<one values="BW" in="B" out="W"', "not well-formed XML"),
        ('<one values="B" origin="True" in="B" out="B"/>', "line 1: origin puts the second of the values in the grid, and values='B' has one"),
    ],
)
def test_unsupported_model_features_are_named_not_skipped(xml: str, expected: str) -> None:
    with pytest.raises(ProgramError) as info:
        load_model(xml)
    assert expected in str(info.value)


def test_model_files_load_with_unions_symmetry_and_origin() -> None:
    prog = load_model(
        '<sequence values="BRW" origin="Center" symmetry="()">\n'
        '  <union symbol="?" values="RW"/>\n'
        '  <one in="?B" out="*R" steps="3" comment="grow right"/>\n'
        '  <prl><rule in="R" out="W" p="1.0" symmetry="(xy)"/></prl>\n'
        "</sequence>"
    )
    assert prog.origin == "center" and prog.alphabet.unions == (("?", "RW"),)
    assert run_text(prog, "BBBBBBB") == "BBBWWWW"


def test_the_stage_runs_model_files_and_keys_their_content(tmp_path: Path) -> None:
    (tmp_path / "recipes" / "rules").mkdir(parents=True)
    model = tmp_path / "recipes" / "rules" / "fill.xml"
    model.write_text('<one values="BW" in="BB" out="WW" steps="2"/>')
    write_recipe(
        tmp_path,
        "fill",
        '[pack]\nname = "fill"\nseed = 1\nmaps = 1\n\n'
        '[stage.fill]\nuse = "rewrite"\nsize = [9, 1]\nprogram = "rules/fill.xml"\n'
        'legend = { B = "wall", W = "floor" }\n\n'
        '[stage.png]\nuse = "export.png"\ninput = "fill"\n'
    )
    pcg("build", "recipes/fill.toml", cwd=tmp_path)
    assert "Nothing to do" in pcg("build", "recipes/fill.toml", cwd=tmp_path).stdout
    model.write_text('<one values="BW" in="BB" out="WW" steps="3"/>')
    explained = pcg("explain", "recipes/fill.toml", cwd=tmp_path).stdout
    assert "file it reads changed (rules/fill.xml)" in explained
    pcg("build", "recipes/fill.toml", cwd=tmp_path)
    model.write_text('<one values="BW" in="BB" out="WW" transparent="True"/>')
    bad = pcg("build", "recipes/fill.toml", cwd=tmp_path, check=False)
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert "stage.fill.program:" in bad.stderr and "transparent (a 3D rendering option) is not supported" in bad.stderr


def test_max_steps_error_names_the_stage(tmp_path: Path) -> None:
    write_recipe(
        tmp_path,
        "loop",
        '[pack]\nname = "loop"\nseed = 1\nmaps = 1\n\n'
        '[stage.spin]\nuse = "rewrite"\nsize = [4, 1]\nvalues = "BW"\nmax_steps = 50\n'
        'program = { one = ["B=W", "W=B"] }\n\n'
        '[stage.png]\nuse = "export.png"\ninput = "spin"\n'
    )
    result = pcg("build", "recipes/loop.toml", cwd=tmp_path, check=False)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "spin" in result.stderr and "still running after 50 steps" in result.stderr


def test_recording_writes_a_gif_next_to_the_map(tmp_path: Path) -> None:
    from PIL import Image

    write_recipe(
        tmp_path,
        "rec",
        '[pack]\nname = "rec"\nseed = 1\nmaps = 1\n\n'
        '[stage.maze]\nuse = "rewrite"\nsize = [21, 21]\nvalues = "BRGW"\norigin = true\nrecord = true\nrecord_frames = 20\n'
        'program = { markov = [ { one = "RBB=GGR" }, { one = "RGG=WWR" } ] }\n\n'
        '[stage.png]\nuse = "export.png"\ninput = "maze"\n'
    )
    pcg("build", "recipes/rec.toml", cwd=tmp_path)
    gif = Image.open(tmp_path / "exports" / "rec" / "map_000.maze.gif")
    assert 10 <= gif.n_frames <= 20
    gif.seek(gif.n_frames - 1)
    preview = Image.open(tmp_path / "exports" / "rec" / "colour_maps" / "map_000.png").convert("RGB")
    last = gif.convert("RGB").resize(preview.size, Image.Resampling.NEAREST)
    assert np.array_equal(np.asarray(last), np.asarray(preview))  # the last frame is the map
    assert math.isclose(gif.info["duration"], 1000) or gif.n_frames > 1


def test_an_export_gif_of_ones_own_takes_the_place_of_the_added_one(tmp_path: Path) -> None:
    # To slow the GIF down one wrote an export.gif stage, and got two GIFs, the added one too.
    from PIL import Image

    from pipeline.errors import RecipeError
    from pipeline.recipe.load import load_recipe

    path = write_recipe(
        tmp_path,
        "rec",
        '[pack]\nname = "rec"\nseed = 1\nmaps = 1\n\n'
        '[stage.maze]\nuse = "rewrite"\nsize = [9, 9]\nvalues = "BRGW"\norigin = true\nrecord = true\n'
        'program = { markov = [ { one = "RBB=GGR" }, { one = "RGG=WWR" } ] }\n\n'
        '[stage.slow]\nuse = "export.gif"\ninput = "maze"\ndir = "gifs"\nframe_ms = 200\n',
    )
    assert [s.name for s in load_recipe(tmp_path / path).stages] == ["maze", "slow"]
    pcg("build", "recipes/rec.toml", cwd=tmp_path)
    assert [p.relative_to(tmp_path / "exports" / "rec").as_posix() for p in (tmp_path / "exports" / "rec").rglob("*.gif")] == ["gifs/map_000.gif"]
    assert Image.open(tmp_path / "exports" / "rec" / "gifs" / "map_000.gif").info["duration"] == 200
    # `inputs` of one stage reads as `input`; an input written as a list is one error line, not a traceback.
    text = (tmp_path / path).read_text()
    (tmp_path / path).write_text(text.replace('input = "maze"', 'inputs = ["maze"]'))
    assert [s.name for s in load_recipe(tmp_path / path).stages] == ["maze", "slow"]
    (tmp_path / path).write_text(text.replace('input = "maze"', 'input = ["maze"]'))
    with pytest.raises(RecipeError, match=r"stage.slow.input: must be the name of another stage \(got \['maze'\]\)"):
        load_recipe(tmp_path / path)


def test_origin_marks_the_centre_of_an_input_too() -> None:
    maze = pipeline.generate("maze.backtracker", seed=1, cells=(3, 3))  # 7 x 7, B walls and W floors
    marked = pipeline.generate("rewrite", inputs=maze, values="BRW", origin=True, program={"one": "R=R", "steps": 1})
    expected = np.where(maze.tiles == 0, 0, 2)
    expected[3, 3] = 1
    assert "".join(s.char for s in marked.alphabet) == "BRW"
    assert np.array_equal(marked.tiles, expected)


def test_a_legend_name_that_is_another_values_default_is_refused() -> None:
    # C is `cyan` by default (MarkovJunior's palette): W named cyan too would name two symbols alike.
    from pydantic import ValidationError

    from pipeline.stages.rewrite import Rewrite

    with pytest.raises(ValidationError, match=r"legend\.W: 'cyan' is also the name value 'C' has by default: give C a legend name too"):
        Rewrite.model_validate({"size": [5, 5], "values": "BCW", "legend": {"W": "cyan"}, "program": {"one": "B=W"}})
    named = Rewrite.model_validate({"size": [5, 5], "values": "BCW", "legend": {"W": "cyan", "C": "water"}, "program": {"one": "B=W"}})
    assert [s.name for s in named.run([], np.random.default_rng(0)).alphabet] == ["black", "water", "cyan"]
