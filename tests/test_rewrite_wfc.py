"""MarkovJunior's `wfc` node: the suite's wfc models load (overlapping from a sample, tiled from a
tileset of `.vox` tiles), and `go_wfc` collapses a new grid whose every NxN window is a pattern
of the sample, whose adjacent tiles the tileset allows, and whose start rules hold.

The models and resources come from MarkovJunior's own suite (SUITE, or $MJ_SUITE), read in place."""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from pipeline.rewrite.kinds.branches import BranchNode
from pipeline.rewrite.kinds.rules import RuleNode
from pipeline.rewrite.kinds.wfc import WfcNode
from pipeline.rewrite.node import Node
from pipeline.rewrite.program import Program
from pipeline.rewrite.program_error import ProgramError
from pipeline.rewrite.resources import ResourceFolder
from pipeline.rewrite.wfc.go import go_wfc, new_size
from pipeline.rewrite.wfc.overlap import OverlapModel
from pipeline.rewrite.wfc.tiles import Tileset
from pipeline.rewrite.wfc.vox import EMPTY, read_vox
from pipeline.rewrite.xml_form import load_model

SUITE = Path(os.environ.get("MJ_SUITE", "/work/shared/markovjunior"))
pytestmark = pytest.mark.skipif(not (SUITE / "models.xml").is_file(), reason=f"MarkovJunior's model suite is not at {SUITE}")
WFC_MODELS = ("Knots2D", "Sewers", "TileDungeon", "TilePath", "WaveBrickWall", "WaveDungeon", "WaveFlowers")


def suite_model(name: str) -> Program:
    return load_model((SUITE / "models" / f"{name}.xml").read_text(encoding="utf-8"), ResourceFolder(SUITE, "resources").read)


def wfc_of(node: Node) -> WfcNode:
    if isinstance(node, WfcNode):
        return node
    if isinstance(node, BranchNode):
        for child in node.children:
            try:
                return wfc_of(child)
            except LookupError:
                pass
    raise LookupError("no wfc node")


def windows(grid: np.ndarray, n: int) -> set[bytes]:
    """Every n x n window of a grid read periodically."""
    h, w = grid.shape
    wrapped = np.pad(grid, ((0, n - 1), (0, n - 1)), mode="wrap")
    return {wrapped[y : y + n, x : x + n].tobytes() for y in range(h) for x in range(w)}


def sample_windows(model: OverlapModel, group_images: int) -> set[bytes]:
    out: set[bytes] = set()
    for win in map(lambda b: np.frombuffer(b, np.uint8).reshape(model.n, model.n), windows(model.sample, model.n)):
        images = [win, win[:, ::-1]]
        for _ in range(3):
            images += [np.rot90(images[-2]), np.rot90(images[-2])[:, ::-1]]
        out.update(np.ascontiguousarray(im).tobytes() for im in images[:group_images])
    return out


@pytest.mark.parametrize("name", WFC_MODELS)
def test_the_suite_wfc_models_load(name: str) -> None:
    node = wfc_of(suite_model(name).root)
    assert node.tries == 1000
    if name in ("Knots2D", "TileDungeon", "TilePath"):
        assert isinstance(node.model, Tileset) and node.n == 1 and not node.periodic
    else:
        assert isinstance(node.model, OverlapModel) and node.n == 3 and node.periodic
    # The children are read with the new grid's values.
    for child in node.children:
        if isinstance(child, RuleNode):
            assert all(int(r.inp.max()) < 1 << len(node.alphabet.values) for r in child.rules)


def test_overlapping_output_is_made_of_the_samples_patterns_and_keeps_the_start_rules() -> None:
    node = wfc_of(suite_model("WaveFlowers").root)  # symmetry (x), shannon, 60 x 60
    assert isinstance(node.model, OverlapModel)
    old = np.ones((60, 60), np.uint8)  # W, with the two bottom rows B, as the model's <all> leaves them
    old[-2:] = 0
    result = go_wfc(node, old, np.random.default_rng(3))
    assert result.state is not None and result.state.shape == (60, 60)
    # Patterns at every position of the output grid, each in its identity and its mirror image.
    found = node.model.patterns(60, 60)
    assert found.weights.sum() == 60 * 60 * 2
    allowed = sample_windows(node.model, 2)
    assert windows(result.state, 3) <= allowed
    values = node.alphabet.values
    assert set(result.state[-2:].ravel()) <= {values.index("N"), values.index("g")}
    assert set(result.state[:-2].ravel()) <= {values.index(c) for c in "zgY"}
    # One turn to set up, one per observation, one to find none left.
    assert 2 < result.turns <= 60 * 60 + 2
    again = go_wfc(node, old, np.random.default_rng(3))
    assert again.state is not None and np.array_equal(again.state, result.state) and again.turns == result.turns


def test_periodic_shannon_brick_wall() -> None:
    node = wfc_of(suite_model("WaveBrickWall").root)
    assert isinstance(node.model, OverlapModel) and node.shannon
    result = go_wfc(node, np.zeros((20, 20), np.uint8), np.random.default_rng(0))
    assert result.state is not None
    assert windows(result.state, 3) <= sample_windows(node.model, 1)  # symmetry ()


def tile_indices(tileset: Tileset, block: np.ndarray) -> set[int]:
    return {t for t in range(len(tileset.tiles)) if np.array_equal(tileset.tiles[t], block)}


@pytest.mark.parametrize("name, size, seed", [("Knots2D", 12, 1), ("TilePath", 10, 2), ("TileDungeon", 12, 3)])
def test_tiled_output_has_only_allowed_neighbours(name: str, size: int, seed: int) -> None:
    node = wfc_of(suite_model(name).root)
    tileset = node.model
    assert isinstance(tileset, Tileset)
    old = np.zeros((size, size), np.uint8)  # the model's <all> turns the inner cells to value 1
    old[1:-1, 1:-1] = 1
    result = go_wfc(node, old, np.random.default_rng(seed))
    assert result.state is not None
    s = tileset.size
    assert result.state.shape == (size * s, size * s) == new_size(node, size, size)[::-1]
    picks = [[tile_indices(tileset, result.state[y * s : y * s + s, x * s : x * s + s]) for x in range(size)] for y in range(size)]
    p = len(tileset.tiles)
    allowed = np.zeros((4, p, p), bool)
    for d in range(4):
        for t in range(p):
            allowed[d, t, tileset.prop_data[tileset.prop_ptr[d, t] : tileset.prop_ptr[d, t + 1]]] = True
    for y in range(size):
        for x in range(size):
            assert picks[y][x], (x, y)
            if x + 1 < size:
                assert any(allowed[0, a, b] for a in picks[y][x] for b in picks[y][x + 1]), (x, y)
            if y + 1 < size:
                assert any(allowed[1, a, b] for a in picks[y][x] for b in picks[y + 1][x]), (x, y)
            if old[y, x] == 0:  # every model maps its border value to one tile
                rule_tiles = set(np.flatnonzero(node.start[0]))
                assert picks[y][x] & rule_tiles, (x, y)


def test_a_forced_wave_takes_two_turns() -> None:
    node = wfc_of(suite_model("Knots2D").root)  # D -> Empty: nothing left to observe
    result = go_wfc(node, np.zeros((4, 4), np.uint8), np.random.default_rng(0))
    assert result.state is not None and result.turns == 2
    assert set(result.state.ravel()) == {node.alphabet.values.index("I")}


def test_vox_tile() -> None:
    vox = read_vox((SUITE / "resources" / "tilesets" / "Knots2D" / "Line.vox").read_bytes())
    assert vox.size == (5, 5, 1)
    assert vox.voxels[0, 2].tolist() == [2] * 5
    assert vox.voxels[0, 0].tolist() == [4] * 5
    assert vox.palette is not None and vox.palette.shape == (256, 4)
    assert EMPTY not in vox.voxels


def png(rows: list[str]) -> bytes:
    colours = {"B": (0, 0, 0, 255), "W": (255, 255, 255, 255), "R": (255, 0, 0, 255)}
    image = Image.new("RGBA", (len(rows[0]), len(rows)))
    image.putdata([colours[c] for row in rows for c in row])
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


def reader(files: dict[str, bytes]):
    suite = ResourceFolder(SUITE, "resources").read

    def read(path: str) -> bytes:
        if path in files:
            return files[path]
        return suite(path)

    return read


CHECKER = png(["BW", "WB"])


def test_contradictory_start_returns_none() -> None:
    # In a checkerboard no 2 x 2 pattern has B at two neighbouring corners.
    model = '<sequence values="A"><wfc sample="Checker" n="2" values="BW"><rule in="A" out="B"/></wfc></sequence>'
    node = wfc_of(load_model(model, reader({"samples/Checker.png": CHECKER})).root)
    failed = go_wfc(node, np.zeros((4, 4), np.uint8), np.random.default_rng(0))
    assert failed.state is None and failed.turns == 0
    free = '<sequence values="A"><wfc sample="Checker" n="2" values="BW"/></sequence>'
    node = wfc_of(load_model(free, reader({"samples/Checker.png": CHECKER})).root)
    result = go_wfc(node, np.zeros((4, 4), np.uint8), np.random.default_rng(0))
    assert result.state is not None and result.turns == 3  # one observation settles a checkerboard
    assert windows(result.state, 2) <= windows(np.array([[0, 1], [1, 0]], np.uint8), 2)


@pytest.mark.parametrize(
    "model, words",
    [
        ('<sequence values="A"><wfc sample="Nope" values="BW"/></sequence>', ["line 1", "samples/Nope.png"]),
        ('<sequence values="A"><wfc sample="Checker" values="B"/></sequence>', ["samples/Checker.png", "2 colours"]),
        ('<sequence values="A"><wfc sample="Checker" tileset="Knots2D" values="BW"/></sequence>', ["exactly one of sample"]),
        ('<sequence values="A">\n<wfc sample="Checker" values="BW">\n<rule in="Q" out="B"/></wfc></sequence>', ["line 3", "in='Q'"]),
        ('<sequence values="A"><wfc sample="Checker" values="BW"><rule in="A" out="X"/></wfc></sequence>', ["'X'"]),
        ('<sequence values="A">\n<wfc tileset="Knots2D" values="IE">\n<rule in="A" out="Loop"/></wfc></sequence>', ["line 3", "unknown tile 'Loop'"]),
        ('<sequence values="A"><wfc tileset="Knots2D" values="I"/></sequence>', ["tilesets/Knots2D.xml", "2 colours"]),
        ('<sequence values="A"><wfc tileset="Knots2D" tiles="Gone" values="IE"/></sequence>', ["tilesets/Gone/Empty.vox"]),
        ('<sequence values="A"><wfc tileset="Bad" values="IE"/></sequence>', ["tilesets/Bad.xml line 2", "unknown tile 'Nothing'"]),
        ('<sequence values="A"><wfc tileset="Missing" values="IE"/></sequence>', ["tilesets/Missing.xml"]),
        ('<sequence values="A"><wfc sample="Checker" values="BW" limit="3"/></sequence>', ["limit"]),
        ('<sequence values="A"><wfc sample="Checker" values="BW" tries="0"/></sequence>', ["tries"]),
        ('<wfc sample="Checker" values="A"/>', ["root"]),
        ('<sequence values="A"><wfc sample="Checker" values="BW"><one in="A" out="B"/></wfc></sequence>', ["'A'"]),
    ],
)
def test_xml_errors_name_the_line_and_the_file(model: str, words: list[str]) -> None:
    bad = b'<tileset><tiles><tile name="Empty"/></tiles><neighbors>\n<neighbor left="Empty" right="Nothing"/></neighbors></tileset>'
    files = {"samples/Checker.png": CHECKER, "tilesets/Bad.xml": bad, "tilesets/Bad/Empty.vox": (SUITE / "resources/tilesets/Knots2D/Empty.vox").read_bytes()}
    with pytest.raises(ProgramError) as info:
        load_model(model, reader(files))
    for word in words:
        assert word in str(info.value)



def test_a_truncated_vox_tile_is_a_clear_error() -> None:
    import struct

    from pipeline.rewrite.wfc.vox import VoxError

    size = b"SIZE" + struct.pack("<ii", 12, 0) + struct.pack("<iii", 2, 2, 1)
    with pytest.raises(VoxError, match="XYZI chunk is too short"):
        read_vox(b"VOX " + struct.pack("<i", 150) + size + b"XYZI" + struct.pack("<ii", 0, 0))


def test_a_wfc_must_be_the_last_node_of_its_branch() -> None:
    # After a failed collapse the reference goes on with the nodes after it; refused, not run otherwise.
    text = '<sequence values="BW">\n<wfc sample="Flowers" values="zYgN"><rule in="B" out="N"/></wfc>\n<one in="B" out="W"/></sequence>'
    with pytest.raises(ProgramError, match="line 2: <wfc> must be the last node of its branch"):
        load_model(text, ResourceFolder(SUITE, "resources").read)
