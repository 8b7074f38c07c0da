"""`map` nodes: a new grid of another scale and other values, drawn by rules from the current one,
with the reference's wrap-around, write order and step count; the XML and TOML forms; the suite's
map models; recordings across the change of grid; and a recipe built through the CLI."""

from __future__ import annotations

import io
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from conftest import docs_toml, pcg, write_recipe
from pipeline.rewrite.kinds.map import MapNode
from pipeline.rewrite.program import Program, draw_map, every_value, run
from pipeline.rewrite.program_error import ProgramError
from pipeline.rewrite.resources import ResourceError, ResourceFolder
from pipeline.rewrite.rule import Alphabet
from pipeline.rewrite.toml_form import parse_node
from pipeline.rewrite.xml_form import load_model
from pipeline.stages.export.gif import FRAME_COLORS, FRAMES, render_gif
from pipeline.stages.rewrite import Rewrite
from test_rewrite_fields import SUITE, grid


def toml_program(values: str, node: dict[str, Any]) -> Program:
    alphabet = Alphabet(values)
    return Program(alphabet, parse_node(node, alphabet, "()", ""))


def drawn(program: Program, rows: str) -> str:
    """What the program's first node (a map) draws from `rows`, as rows of its values."""
    node = program.root
    assert isinstance(node, MapNode)
    out = draw_map(node, grid(rows, program.alphabet.values))
    return "/".join("".join(node.alphabet.values[v] for v in row) for row in out)


def test_outputs_land_at_scaled_cells_and_the_rest_is_the_first_value() -> None:
    prog = toml_program("BW", {"map": "W=AA/AD", "scale": [2, 2], "values": "DA"})
    assert drawn(prog, "BWB/WBB") == "DDAADD/DDADDD/AADDDD/ADDDDD"


def test_inputs_and_outputs_wrap_around_the_edges() -> None:
    assert drawn(toml_program("BW", {"map": "WB=A", "scale": [1, 1], "values": "DA"}), "BBW") == "DDA"
    assert drawn(toml_program("BW", {"map": "W=DA", "scale": [1, 1], "values": "DA"}), "BBW") == "ADD"


def test_later_matches_and_later_rules_overwrite_earlier_ones() -> None:
    # Row by row, cell by cell: the match at x=1 writes its A over the D the one at x=0 wrote
    # (writing offset by offset instead would leave "ADD").
    assert drawn(toml_program("BW", {"map": "W=AD", "scale": [1, 1], "values": "DA"}), "WWB") == "AAD"
    assert drawn(toml_program("BW", {"map": ["W=A", "W=D"], "scale": [1, 1], "values": "DAX"}), "WB") == "DD"
    assert drawn(toml_program("BW", {"map": ["W=D", "W=X"], "scale": [1, 1], "values": "DAX"}), "WB") == "XD"


def test_fractional_scales_shrink_the_grid() -> None:
    prog = toml_program("BW", {"map": "W=A", "scale": [[1, 2], 1], "values": "DA"})
    # Cells 0..3 map to x 0, 0, 1, 1: W at x=3 lands on 1.
    assert drawn(prog, "BBBW/BBBB") == "DA/DD"


def prog_nodes() -> list[dict[str, Any]]:
    """One rule twice, then a map whose child runs three steps on the new grid."""
    return [{"one": "B=W", "steps": 2}, {"map": "W=AA/AA", "scale": [2, 2], "values": "DAR", "then": [{"one": "A=R", "steps": 3}]}]


def test_a_map_takes_one_step_and_its_children_run_on_the_new_grid_then_the_program_ends() -> None:
    prog = toml_program("BW", {"sequence": prog_nodes()})
    # After a map the reference has nowhere to return to, so a node there would never run: the
    # TOML form refuses one rather than leave it silently unused.
    with pytest.raises(ProgramError, match=r"sequence\[1\]: a map node must be the last of its branch: the nodes after it would never run"):
        toml_program("BW", {"sequence": [*prog_nodes(), {"one": "B=W"}]})
    result = run(prog, np.zeros((3, 3), np.uint8), np.random.default_rng(3), 100)
    # 2 steps of `one`, the step whose `one` fails and whose map draws, 3 steps of the child,
    # and the step in which the child and so the map fail.
    assert result.turns == 2 + 1 + 3 + 1 and result.finished
    assert result.values == "DAR" and result.state.shape == (6, 6)
    assert np.bincount(result.state.ravel(), minlength=3).tolist() == [28, 5, 3]
    capped = run(prog, np.zeros((3, 3), np.uint8), np.random.default_rng(3), 4)
    assert capped.turns == 4 and not capped.finished and capped.values == "DAR"


@pytest.mark.parametrize("name, size", [("MarchingSquares", 20), ("MazeMap", 30), ("OddScale", 8)])
def test_the_suite_map_models_run(name: str, size: int) -> None:
    prog = load_model((SUITE / "models" / f"{name}.xml").read_text(), ResourceFolder(SUITE, "resources").read)
    result = run(prog, np.zeros((size, size), np.uint8), np.random.default_rng(5), 100_000)
    assert result.finished and len(np.unique(result.state)) >= 2
    scale = {"MarchingSquares": 3, "MazeMap": 2, "OddScale": 2}[name]
    assert result.state.shape == (size * scale, size * scale)
    if name == "MazeMap":
        # Every cell became one of four 2x2 pieces, each with a wall at top left and a floor at
        # bottom right: the map covered the whole grid.
        d, a = result.values.index("D"), result.values.index("A")
        assert (result.state[0::2, 0::2] == d).all() and (result.state[1::2, 1::2] == a).all()
    if name == "MarchingSquares":
        # A 2x2 window of the random grid picks one of 16 pieces; all-black gives all D.
        assert result.values == "DA"
        assert result.turns == 3  # prl, then the map, then the map's (empty) sequence ends


def test_xml_map_errors_name_the_line() -> None:
    def load(body: str) -> Program:
        return load_model(f'<sequence values="BW">\n{body}\n</sequence>')

    with pytest.raises(ProgramError, match="line 2: <map> needs scale"):
        load('<map values="DA"><rule in="B" out="D"/></map>')
    with pytest.raises(ProgramError, match="line 2: scale='2 2' needs three parts"):
        load('<map scale="2 2" values="DA"/>')
    with pytest.raises(ProgramError, match=r"line 2: scale='2 x 1': each part"):
        load('<map scale="2 x 1" values="DA"/>')
    with pytest.raises(ProgramError, match="line 2: <map> needs values"):
        load('<map scale="2 2 1"/>')
    with pytest.raises(ProgramError, match="line 3: output symbol 'W' is not a value"):
        load('<map scale="2 2 1" values="DA">\n<rule in="B" out="W"/></map>')
    with pytest.raises(ProgramError, match="line 3: unknown symbol 'A'"):
        load('<map scale="2 2 1" values="DA">\n<rule in="A" out="D"/></map>')
    # Children are read in the new grid's values.
    with pytest.raises(ProgramError, match="line 3: unknown symbol 'W'"):
        load('<map scale="2 2 1" values="DA">\n<one in="W" out="D"/></map>')
    prog = load('<map scale="1/2 3 1" values="DA"><rule in="B" out="D"/><one in="D" out="A"/></map>')
    node = prog.root.children[0]  # type: ignore[union-attr]
    assert isinstance(node, MapNode) and node.scale == ((1, 2), (3, 1)) and len(node.children) == 1
    assert every_value(prog) == "BWDA"


def test_toml_map_errors_name_the_key() -> None:
    def parse(node: dict[str, Any]) -> None:
        toml_program("BW", {"sequence": [node]})

    base: dict[str, Any] = {"map": "B=D", "scale": [2, 2], "values": "DA"}
    with pytest.raises(ProgramError, match=r"sequence\[0\]\.values: is required"):
        parse({k: v for k, v in base.items() if k != "values"})
    with pytest.raises(ProgramError, match=r"sequence\[0\]\.scale: must be \[x, y\]"):
        parse({**base, "scale": 2})
    with pytest.raises(ProgramError, match=r"sequence\[0\]\.scale\[1\]: must be a whole number >= 1"):
        parse({**base, "scale": [2, 0]})
    with pytest.raises(ProgramError, match=r"sequence\[0\]\.map: output symbol 'W'"):
        parse({**base, "map": "B=W"})
    with pytest.raises(ProgramError, match=r"sequence\[0\]\.then\[0\]\.one: unknown symbol 'B'"):
        parse({**base, "then": [{"one": "B=A"}]})
    with pytest.raises(ProgramError, match=r"unknown key 'size'"):
        parse({**base, "size": 3})


def stage(**params: Any) -> Rewrite:
    return Rewrite.model_validate(params, context={"recipe_dir": Path(".")})


def test_a_recording_shows_both_grids_in_their_own_colours() -> None:
    rewrite = stage(
        values="BW", size=[6, 4], record=True, record_frames=50,
        colors={"A": "#00ff00"}, legend={"A": "floor"},
        program={"sequence": [
            {"one": "B=W", "steps": 3},
            {"map": "W=AA/AA", "scale": [2, 2], "values": "DA", "then": [{"one": "D=A", "steps": 2}]},
        ]},
    )
    level = rewrite.run([], np.random.default_rng(0))
    assert [s.char for s in level.alphabet] == ["D", "A"] and level.alphabet[1].name == "floor"
    assert level.tiles.shape == (8, 12)
    frames, colors = level.attachments[FRAMES], level.attachments[FRAME_COLORS]
    assert frames.shape[1:] == (8, 12) and len(frames) == 3 + 1 + 2 + 1 + 1
    assert colors.shape == (4, 3) and colors[1].tolist() == [0, 255, 0]  # D A, then B W
    assert set(np.unique(frames[0])) == {2}  # the first frame: all B of the old grid
    gif = Image.open(io.BytesIO(render_gif(level, 1, 50)))
    # (PIL folds the last two frames into one: the final turn changed nothing.)
    assert gif.n_frames == len(frames) - 1 and gif.size == (12, 8)
    gif.seek(0)
    assert gif.convert("RGB").getpixel((0, 0)) == tuple(colors[2])


def test_a_map_recipe_builds_through_the_cli(tmp_path: Path) -> None:
    write_recipe(tmp_path, "rooms", """\
[pack]
name = "rooms"
seed = 7
maps = 2

[stage.grid]
use = "rewrite"
values = "BOEIN"
size = [12, 9]
symmetry = "()"
program = { sequence = [
  { all = ["B=O", "B=E", "B=I", "B=N"] },
  { map = ["O=DD/DA", "E=DD/AA", "I=DA/DA", "N=DA/AA"], scale = [2, 2], values = "DA" },
] }
legend = { D = "wall", A = "floor" }

[stage.tmx]
use = "export.tmx"
input = "grid"
""")
    pcg("build", "recipes/rooms.toml", cwd=tmp_path)
    maps = sorted((tmp_path / "exports" / "rooms").rglob("*.tmx"))
    assert len(maps) == 2
    text = maps[0].read_text()
    assert 'width="24" height="18"' in text


def test_the_readme_map_example_runs() -> None:
    params = tomllib.loads(docs_toml("rewrite.md", "**Maps** draw"))["stage"]["rooms"]
    assert params.pop("use") == "rewrite"
    level = stage(**params).run([], np.random.default_rng(1))
    assert level.tiles.shape == (24, 32) and [s.name for s in level.alphabet] == ["wall", "floor"]
    assert level.properties["rewrite_steps"] == 1 + 1 + 20 + 1


def test_a_maps_rule_images_come_from_its_own_folder_not_the_roots() -> None:
    asked: list[str] = []

    def read(path: str) -> bytes:
        asked.append(path)
        raise ResourceError("not here")

    model = '<sequence values="BW" folder="Root">\n<map scale="1 1 1" values="DA">\n<rule in="B" out="D"/>\n<one file="Piece" legend="DA"/>\n</map></sequence>'
    with pytest.raises(ProgramError):
        load_model(model, read)
    assert asked == ["rules/Piece.png"]
    with pytest.raises(ProgramError):
        load_model(model.replace('values="DA"', 'values="DA" folder="Own"'), read)
    assert asked[-1] == "rules/Own/Piece.png"


def test_a_map_too_large_is_a_clear_error() -> None:
    prog = toml_program("BW", {"map": "B=D", "scale": [10_000, 10_000], "values": "DA"})
    with pytest.raises(ValueError, match="at most 64 M"):
        run(prog, np.zeros((2, 2), np.uint8), np.random.default_rng(0), 10)
