"""MarkovJunior's `convchain` node: pattern weights counted from a sample, the Metropolis sweep
over the `on` cells, `steps`, the XML and TOML forms, and the suite's models that use it."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from pydantic import ValidationError

from pipeline.rewrite.kinds.branches import BranchNode
from pipeline.rewrite.kinds.convchain import make_convchain
from pipeline.rewrite.kinds.convchain import ConvChainNode
from pipeline.rewrite.kinds.rules import RuleNode
from pipeline.rewrite.nodes.convchain_node import pattern_weights, read_sample
from pipeline.rewrite.program import Program, run
from pipeline.rewrite.program_error import ProgramError
from pipeline.rewrite.resources import ResourceError, ResourceFolder, ResourceReader
from pipeline.rewrite.rule import Alphabet, parse_rule
from pipeline.rewrite.xml_form import load_model
from pipeline.stages.rewrite import Rewrite

SUITE = Path(os.environ.get("MJ_SUITE", "/work/shared/markovjunior"))
needs_suite = pytest.mark.skipif(not (SUITE / "models.xml").is_file(), reason=f"MarkovJunior's model suite is not at {SUITE}")

WHITE = (255, 255, 255, 255)
BLACK = (0, 0, 0, 255)
# MarkovJunior's resources/samples/Maze.png, drawn here so that most tests need no suite.
MAZE = ["WWWW", "W...", "W.W.", "W..."]


def png(rows: list[str], colours: dict[str, tuple[int, int, int, int]] | None = None) -> bytes:
    colours = colours or {"W": WHITE, ".": BLACK}
    pixels = np.array([[colours[c] for c in row] for row in rows], dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels, "RGBA").save(out, "PNG")
    return out.getvalue()


def reader(files: dict[str, bytes]) -> ResourceReader:
    def read(path: str) -> bytes:
        if path not in files:
            raise ResourceError(f"cannot read resources/{path} (no such file)")
        return files[path]

    return read


def bits(rows: list[str]) -> np.ndarray:
    return np.array([[c == "W" for c in row] for row in rows])


def windows(white: np.ndarray, n: int) -> np.ndarray:
    """Pattern index of every n x n window of a grid (wrapping), bit dy * n + dx."""
    h, w = white.shape
    ys = (np.arange(h)[:, None] + np.arange(n)) % h
    xs = (np.arange(w)[:, None] + np.arange(n)) % w
    win = white[ys[:, None, :, None], xs[None, :, None, :]].reshape(-1, n, n)
    return (win.astype(np.int64) * (1 << np.arange(n * n)).reshape(n, n)).sum(axis=(1, 2))


ABC = Alphabet("BDAX")  # B: the substrate, D: black, A: white, X: anything else


def node(sample: list[str], n: int, group: str = "(xy)", temperature: float = 1.0, steps: int = 0) -> ConvChainNode:
    return make_convchain(ABC, reader({"samples/S.png": png(sample)}), "S", "B", "D", "A", n, temperature, steps, group, "")


def white_of(state: np.ndarray) -> np.ndarray:
    return state == ABC.values.index("A")


# --- the weights ---------------------------------------------------------------------------------


def test_a_sample_is_white_where_its_pixels_are_opaque_white() -> None:
    data = png(["Wgt."], {"W": WHITE, "g": (200, 200, 200, 255), "t": (255, 255, 255, 0), ".": BLACK})
    assert read_sample(data).tolist() == [[True, False, False, False]]
    with pytest.raises(ValueError, match="not an image"):
        read_sample(b"not a png")


def test_weights_of_tiny_samples_are_exact() -> None:
    rest = 0.1  # every pattern the sample lacks

    def expect(n: int, counts: dict[int, float]) -> np.ndarray:
        out = np.full(1 << (n * n), rest)
        for k, v in counts.items():
            out[k] = v
        return out

    # "WB" (one row, wrapping down onto itself): the window at x=0 is white in its left column
    # (bits 0 and 2: cell (dx, dy) is bit dy * n + dx), the one at x=1 in its right (bits 1, 3).
    wb = bits(["W."])
    assert np.array_equal(pattern_weights(wb, 2, "()"), expect(2, {5: 1, 10: 1}))
    assert np.array_equal(pattern_weights(wb, 2, "(x)"), expect(2, {5: 2, 10: 2}))
    # Up-down mirror images of a column pattern are itself: each window counts twice.
    assert np.array_equal(pattern_weights(wb, 2, "(y)"), expect(2, {5: 2, 10: 2}))
    # "WBB": windows 5 (left column), 0 (all black) and 10 (right column); rotations add the top
    # (3) and bottom (12) rows, and every orientation counts, duplicates too.
    wbb = bits(["W.."])
    assert np.array_equal(pattern_weights(wbb, 2, "()"), expect(2, {5: 1, 0: 1, 10: 1}))
    assert np.array_equal(pattern_weights(wbb, 2, "(xy+)"), expect(2, {0: 4, 3: 2, 5: 2, 10: 2, 12: 2}))
    assert np.array_equal(pattern_weights(wbb, 2, "(xy)"), expect(2, {0: 8, 3: 4, 5: 4, 10: 4, 12: 4}))
    # One white cell in a 2 x 2 sample, wrapping both ways: each corner pattern once.
    one = bits(["W.", ".."])
    assert np.array_equal(pattern_weights(one, 2, "()"), expect(2, {1: 1, 2: 1, 4: 1, 8: 1}))
    # n = 1: the share of white cells, each counted once per orientation.
    assert np.array_equal(pattern_weights(wbb, 1, "(xy)"), np.array([16.0, 8.0]))
    # n larger than the sample: the sample repeats.
    assert pattern_weights(one, 3, "()")[1 + 4 + 64 + 256] == 1


# --- the sweep -----------------------------------------------------------------------------------


def test_sweeps_bring_the_output_to_the_samples_patterns() -> None:
    # Maze at n = 3 has at most 16 * 8 of the 512 patterns: ~2% of a random grid's windows are
    # among them. After 20 sweeps at temperature 1 over half are (~60%); the Metropolis rule
    # inverted (accepting by the reciprocal weights) leaves none, flat weights (accepting every
    # flip) leave a random grid, and a hot chain (temperature 50) stays near random: an exponent
    # of temperature instead of 1 / temperature would make it greedier than temperature 1.
    good = node(MAZE, 3, steps=20)
    seen = good.weights > 0.1

    def share(cc: ConvChainNode, seed: int) -> float:
        state = run(Program(ABC, cc), np.zeros((32, 32), dtype=np.uint8), np.random.default_rng(seed), 100).state
        return float(seen[windows(white_of(state), 3)].mean())

    random_share = float(seen[windows(np.random.default_rng(0).random((32, 32)) < 0.5, 3)].mean())
    assert random_share < 0.06
    for seed in (1, 2):
        assert share(good, seed) > 0.4
        assert share(ConvChainNode(0, 1, 2, 3, good.weights, 50.0, 20), seed) < 0.15
        assert share(ConvChainNode(0, 1, 2, 3, 1 / good.weights, 1.0, 20), seed) < 0.02
        assert share(ConvChainNode(0, 1, 2, 3, np.ones_like(good.weights), 1.0, 20), seed) < 0.1


def test_the_nodes_symmetry_decides_which_orientations_it_draws() -> None:
    # Horizontal stripes: as written ("()") the output is horizontal stripes, never vertical
    # ones; with every orientation allowed, vertical stripes come too.
    stripes = ["W", "."]

    def shares(group: str, seed: int) -> tuple[float, float]:
        state = run(Program(ABC, node(stripes, 2, group, steps=30)), np.zeros((16, 16), dtype=np.uint8), np.random.default_rng(seed), 100).state
        idx = windows(white_of(state), 2)
        return float(np.isin(idx, [3, 12]).mean()), float(np.isin(idx, [5, 10]).mean())

    for seed in (0, 1, 2):
        horizontal, vertical = shares("()", seed)
        assert horizontal > 0.6 and vertical < 0.02
    assert max(shares("(xy)", seed)[1] for seed in (0, 1, 2)) > 0.3


def test_only_on_cells_change_and_they_end_black_or_white() -> None:
    rng = np.random.default_rng(5)
    start = rng.choice(4, size=(20, 23), p=[0.6, 0.1, 0.1, 0.2]).astype(np.uint8)  # B, D, A, X
    start[0, :] = 3
    result = run(Program(ABC, node(MAZE, 2, steps=6)), start, np.random.default_rng(1), 100)
    assert result.finished and result.turns == 6 + 1  # the turn the root fails counts, as in the reference
    on = start == 0
    assert np.array_equal(result.state[~on], start[~on])
    assert set(np.unique(result.state[on]).tolist()) == {1, 2}


def test_steps_count_the_painting_step_and_a_sweep_always_applies() -> None:
    def turns(steps: int, start: np.ndarray, max_steps: int = 100) -> tuple[int, bool, np.ndarray]:
        r = run(Program(ABC, node(MAZE, 2, steps=steps)), start, np.random.default_rng(0), max_steps)
        return r.turns, r.finished, r.state

    blank = np.zeros((8, 8), dtype=np.uint8)
    t, finished, state = turns(1, blank)
    # A run's turns count the last one, where the root fails.
    assert (t, finished) == (2, True) and set(np.unique(state).tolist()) == {1, 2}  # painted only
    assert turns(4, blank)[:2] == (5, True)
    assert turns(0, blank, max_steps=30)[:2] == (30, False)  # no limit: it never fails
    # No `on` cell: the painting step fails, and the node with it.
    t, finished, state = turns(5, np.full((8, 8), 3, dtype=np.uint8))
    assert (t, finished) == (1, True) and (state == 3).all()


def test_other_nodes_match_lists_follow_the_sweeps() -> None:
    # A `one` node keeps its matches between turns from the changes log: the sweeps between its
    # steps must log every flip (`verify` compares each update with a full rescan). Black 2 x 2
    # blocks are rare in a maze texture, so sweeps make a few now and then and the `one` node
    # marks one per turn until none is left, then lets the next sweep run.
    cc = node(MAZE, 2, steps=12)
    one = RuleNode("one", tuple(parse_rule("DD/DD", "DX/DD", ABC).variants("(xy)")))
    program = Program(ABC, BranchNode("markov", (one, cc)))
    for seed in range(3):
        result = run(program, np.zeros((16, 17), dtype=np.uint8), np.random.default_rng(seed), 1000, verify=True, record_frames=100)
        assert result.finished
        changed = [(a != b).sum() for a, b in zip(result.frames[:-1], result.frames[1:])]
        sweeps = [t for t, c in enumerate(changed) if c > 1]
        # The node applied after some sweep, not only after the painting step.
        assert any(changed[t + 1] == 1 for t in sweeps[1:] if t + 1 < len(changed))


# --- the XML and TOML forms ----------------------------------------------------------------------


def model(body: str, files: dict[str, bytes] | None = None) -> Program:
    text = f'<sequence values="BDAX">\n  {body}\n</sequence>'
    return load_model(text, reader({"samples/Maze.png": png(MAZE)} if files is None else files))


def test_xml_convchain_loads_with_the_references_defaults() -> None:
    prog = model('<convchain sample="Maze" on="B" black="D" white="A"/>')
    assert isinstance(prog.root, BranchNode)
    cc = prog.root.children[0]
    assert isinstance(cc, ConvChainNode)
    assert (cc.on, cc.black, cc.white, cc.n, cc.temperature, cc.steps) == (0, 1, 2, 3, 1.0, 0)
    assert np.array_equal(cc.weights, pattern_weights(bits(MAZE), 3, "(xy)"))
    # The node's symmetry is its branch's unless it sets one.
    inner = load_model(
        '<sequence values="BDA" symmetry="()">\n  <convchain sample="Maze" on="B" black="D" white="A" n="2" temperature="0.5" steps="7"/>\n</sequence>',
        reader({"samples/Maze.png": png(MAZE)}),
    ).root
    assert isinstance(inner, BranchNode) and isinstance(inner.children[0], ConvChainNode)
    c = inner.children[0]
    assert np.array_equal(c.weights, pattern_weights(bits(MAZE), 2, "()")) and (c.temperature, c.steps) == (0.5, 7)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('<convchain on="B" black="D" white="A"/>', "line 2: <convchain> needs sample"),
        ('<convchain sample="Maze" black="D" white="A"/>', "line 2: <convchain> needs on"),
        ('<convchain sample="Nope" on="B" black="D" white="A"/>', r"line 2: sample samples/Nope.png: cannot read resources/samples/Nope.png"),
        ('<convchain sample="Maze" on="B" black="Q" white="A"/>', "line 2: black='Q' must be one of the values"),
        ('<convchain sample="Maze" on="B" black="D" white="AD"/>', "line 2: white='AD' must be one of the values"),
        ('<convchain sample="Maze" on="B" black="D" white="A" n="5"/>', r"line 2: n=5 must be from 1 to 4"),
        ('<convchain sample="Maze" on="B" black="D" white="A" n="0"/>', r"line 2: n=0 must be from 1 to 4"),
        ('<convchain sample="Maze" on="B" black="D" white="A" n="two"/>', "line 2: n='two' is not a whole number"),
        ('<convchain sample="Maze" on="B" black="D" white="A" temperature="-1"/>', "line 2: temperature must be a number >= 0"),
        ('<convchain sample="Maze" on="B" black="D" white="A" symmetry="(z)"/>', "line 2: unknown symmetry"),
        ('<convchain sample="Maze" on="B" black="D" white="A" colour="A"/>', "line 2: <convchain> has an unknown attribute 'colour'"),
        ('<convchain sample="../Maze" on="B" black="D" white="A"/>', "must be the name of an image in the samples folder"),
        ('<convchain sample="Maze" on="B" black="D" white="A"><rule in="B" out="A"/></convchain>', "line 2: unexpected <rule> inside <convchain>"),
    ],
)
def test_xml_errors_name_the_line_and_the_file(body: str, message: str) -> None:
    with pytest.raises(ProgramError, match=message):
        model(body)


def test_xml_sample_that_is_no_image_and_a_model_without_a_reader() -> None:
    with pytest.raises(ProgramError, match=r"line 2: sample samples/Maze.png is not an image Pillow can read"):
        model('<convchain sample="Maze" on="B" black="D" white="A"/>', {"samples/Maze.png": b"GIF89a?"})
    with pytest.raises(ProgramError, match="line 2: sample samples/Maze.png: no resources folder"):
        load_model('<sequence values="BDA">\n<convchain sample="Maze" on="B" black="D" white="A"/></sequence>')


def inline(tmp_path: Path, program: dict[str, Any], **params: Any) -> Rewrite:
    return Rewrite.model_validate({"values": "BDA", "size": [12, 10], "program": program, **params}, context={"recipe_dir": tmp_path})


def write_sample(tmp_path: Path) -> None:
    (tmp_path / "mj" / "samples").mkdir(parents=True)
    (tmp_path / "mj" / "samples" / "Maze.png").write_bytes(png(MAZE))


CC = {"sample": "Maze", "on": "B", "black": "D", "white": "A", "n": 2, "steps": 5}


def test_toml_convchain_reads_its_sample_from_the_stages_resources(tmp_path: Path) -> None:
    write_sample(tmp_path)
    stage = inline(tmp_path, {"sequence": [{"convchain": CC}, {"all": "AD/DA=AD/AA"}]}, resources="mj")
    assert list(stage.files_read()) == ["mj/samples/Maze.png"]  # part of the cache key
    level = stage.run([], np.random.default_rng(2))
    assert set(np.unique(level.tiles).tolist()) <= {1, 2} and level.properties["rewrite_steps"] >= 5
    # The same program, symmetry as written.
    assert inline(tmp_path, {"convchain": {**CC, "symmetry": "()"}}, resources="mj")._program is not None


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"convchain": CC}, r'program.convchain: sample samples/Maze.png: an inline program reads samples from the stage\'s resources folder'),
        ({"convchain": "Maze"}, "program.convchain: must be a table"),
        ({"convchain": {**CC, "white": None}}, "program.convchain.white: is required"),
        ({"convchain": {**CC, "n": 7}}, "program.convchain: n=7 must be from 1 to 4"),
        ({"convchain": {**CC, "steps": -1}}, r"program.convchain.steps: must be a whole number >= 0"),
        ({"convchain": {**CC, "temperature": "hot"}}, r"program.convchain.temperature: must be a number >= 0"),
        ({"convchain": {**CC, "colour": "A"}}, "program.convchain: unknown key 'colour'"),
        ({"convchain": CC, "steps": 3}, "program: unknown key 'steps'"),
        ({"convchain": {**CC, "on": "Z"}}, "program.convchain: on='Z' must be one of the values"),
    ],
)
def test_toml_errors_name_the_place(tmp_path: Path, body: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        inline(tmp_path, body)


def test_toml_missing_sample_names_the_file(tmp_path: Path) -> None:
    write_sample(tmp_path)
    with pytest.raises(ValidationError, match=r"sample samples/Room.png: cannot read .*mj/samples/Room.png"):
        inline(tmp_path, {"convchain": {**CC, "sample": "Room"}}, resources="mj")


# --- the suite -----------------------------------------------------------------------------------


@needs_suite
@pytest.mark.parametrize("name", ["ChainMaze", "ChainDungeon", "ChainDungeonMaze"])
def test_the_suites_convchain_models_run_at_their_size(name: str) -> None:
    prog = load_model((SUITE / "models" / f"{name}.xml").read_text(), ResourceFolder(SUITE, "resources").read)
    for seed in (1, 2):
        result = run(prog, np.zeros((60, 60), dtype=np.uint8), np.random.default_rng(seed), 100_000)
        assert result.finished
        assert "B" not in {prog.alphabet.values[v] for v in np.unique(result.state)}  # every on cell painted
        if name == "ChainMaze":  # the dungeons flood their rooms' white afterwards
            white = result.state == prog.alphabet.values.index("A")
            assert 0.3 < white.mean() < 0.8


@needs_suite
def test_a_model_finds_its_sample_beside_its_folder() -> None:
    stage = Rewrite.model_validate({"program": "models/ChainMaze.xml", "size": [60, 60]}, context={"recipe_dir": SUITE})
    assert sorted(stage.files_read()) == ["models/ChainMaze.xml", "resources/samples/Maze.png"]
    level = stage.run([], np.random.default_rng(0))
    assert level.tiles.shape == (60, 60)
