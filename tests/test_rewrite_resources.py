"""MarkovJunior models with resources: rule images (`file`, `fin`, `fout`, `legend`, `folder`),
found where MarkovJunior finds them or where the stage's `resources` points, part of the cache key;
and the compatibility cases that load as MarkovJunior loads them (`periodic`, 3D patterns).

The models come from MarkovJunior's own suite (SUITE, or $MJ_SUITE), read in place."""

from __future__ import annotations

import io
import re
import os
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from pydantic import ValidationError

from conftest import pcg, write_recipe
from pipeline.rewrite.kinds.branches import BranchNode
from pipeline.rewrite.kinds.convolution import ConvolutionNode
from pipeline.rewrite.kinds.rules import RuleNode
from pipeline.rewrite.program import Program, flatten, run
from pipeline.rewrite.program_error import ProgramError
from pipeline.rewrite.resources import ResourceError, ResourceFolder
from pipeline.rewrite.rule import KEEP, Alphabet
from pipeline.rewrite.rule_image import ImageError, input_waves, output_values, read_image
from pipeline.rewrite.xml_form import load_model
from pipeline.stages.rewrite import Rewrite

SUITE = Path(os.environ.get("MJ_SUITE", "/work/shared/markovjunior"))
pytestmark = pytest.mark.skipif(not (SUITE / "models.xml").is_file(), reason=f"MarkovJunior's model suite is not at {SUITE}")


def stage(recipe_dir: Path, **params: Any) -> Rewrite:
    return Rewrite.model_validate(params, context={"recipe_dir": recipe_dir})


def suite_model(name: str) -> Program:
    return load_model((SUITE / "models" / f"{name}.xml").read_text(encoding="utf-8"), ResourceFolder(SUITE, "resources").read)


def chars(array: np.ndarray, table: dict[int, str]) -> list[str]:
    return ["".join(table[int(v)] for v in row) for row in array]


def png(rows: list[str], colours: dict[str, tuple[int, int, int, int]]) -> bytes:
    """A PNG whose pixels are `colours[ch]` for each character of `rows`."""
    pixels = np.array([[colours[c] for c in row] for row in rows], dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels, "RGBA").save(out, "PNG")
    return out.getvalue()


# --- the suite's models run through the stage ----------------------------------------------------


@pytest.mark.parametrize(
    ("name", "size", "params", "least_values"),
    [
        ("BasicDijkstraDungeon", 24, {}, 2),
        ("BasicDijkstraFill", 24, {}, 2),
        # Circuit never stops on its own (its electrons run forever); MarkovJunior's models.xml
        # runs it for 1200 steps.
        ("Circuit", 29, {"max_steps": 1200, "on_max_steps": "stop"}, 6),
        ("DijkstraDungeon", 24, {}, 2),
        ("DungeonGrowth", 31, {}, 3),
    ],
)
def test_suite_models_with_rule_images_run_through_the_stage(name: str, size: int, params: dict[str, Any], least_values: int) -> None:
    rewrite = stage(SUITE, program=f"models/{name}.xml", size=[size, size], **params)
    images = [f for f in rewrite.files_read() if f.endswith(".png")]
    assert images and all(f.startswith("resources/rules/") for f in images)
    level = rewrite.run([], np.random.default_rng(7))
    values, counts = np.unique(level.tiles, return_counts=True)
    assert len(values) >= least_values, [level.alphabet[v].char for v in values]
    assert counts.min() >= 4, "a value present in only a few cells: the rooms did not grow"
    assert int(level.properties["rewrite_steps"]) > 5


def test_dungeon_growth_reads_the_rooms_of_its_root_folder() -> None:
    files = ResourceFolder(SUITE, "resources")
    prog = load_model((SUITE / "models" / "DungeonGrowth.xml").read_text(), files.read)
    assert sorted(files.digests) == sorted(f"resources/rules/DungeonGrowth/Room{k}.png" for k in range(1, 19))
    assert isinstance(prog.root, BranchNode)
    rooms = prog.root.children[1]
    assert isinstance(rooms, RuleNode) and rooms.kind == "one" and len(rooms.rules) > 18


def test_constrained_caves_reads_its_room_and_its_convolution() -> None:
    files = ResourceFolder(SUITE, "resources")
    prog = load_model((SUITE / "models" / "ConstrainedCaves.xml").read_text(), files.read)
    assert list(files.digests) == ["resources/rules/ConstrainedRoom.png"]
    assert isinstance(prog.root, BranchNode) and isinstance(prog.root.children[-2], ConvolutionNode)


def test_every_2d_model_of_the_suite_loads_or_names_what_is_unsupported() -> None:
    entries = [m for m in ET.parse(SUITE / "models.xml").getroot() if m.get("d") != "3" and m.get("height") is None]
    assert len(entries) == 115
    loaded = []
    for entry in entries:
        name = str(entry.get("name"))
        try:
            suite_model(name)
            loaded.append(name)
        except ProgramError as exc:
            assert "is not supported" in exc.message or "are not supported" in exc.message, (name, str(exc))
    new = {"BasicDijkstraDungeon", "BasicDijkstraFill", "Circuit", "DijkstraDungeon", "DungeonGrowth"}
    new |= {"GrowthCompetition", "StrangeDungeon"}
    # 54 entries loaded before rule images, periodic and 3D patterns; these make 61.
    assert new <= set(loaded) and len(loaded) >= 61


# --- rule images ---------------------------------------------------------------------------------


def test_a_file_image_is_input_left_output_right_with_colours_in_reading_order() -> None:
    # DijkstraRoom.png is 16 x 8. Reading its rows, the colours first met are: #1d2b53 (0, 0),
    # #5f574f (8, 0), #fff1e8 (9, 1), transparent #00000000 (0, 6), #000000 (2, 6), #ff004d
    # (11, 6): legend "?DW*BR" names them in that order. The left 8 columns are the input, the
    # right 8 the output; `?` is the model's union of B and D, which only the input uses.
    prog = suite_model("DijkstraDungeon")
    assert isinstance(prog.root, BranchNode)
    node = prog.root.children[0]
    assert isinstance(node, RuleNode) and node.steps == 1
    rule = node.rules[0]
    values = prog.alphabet.values  # BGWRDU
    waves = {1 << i: v for i, v in enumerate(values)} | {(1 << len(values)) - 1: "*", 1 | 1 << values.index("D"): "?"}
    assert chars(rule.inp, waves) == ["????????"] * 6 + ["**B?B***", "**BBB***"]
    assert chars(rule.out, dict(enumerate(values)) | {KEEP: "*"}) == (
        ["DDDDDDDD"] + ["DWWWWWWD"] * 4 + ["DDDWDDDD", "**BRB***", "**BBB***"]
    )
    # The model's default symmetry keeps the 8 orientations of this asymmetric room.
    assert len(node.rules) == 8


def test_colours_are_numbered_by_first_appearance_alpha_included() -> None:
    colours = {"k": (0, 0, 0, 255), "t": (0, 0, 0, 0), "w": (255, 255, 255, 255)}
    image = read_image(png(["wkwt", "ktkw"], colours), "ABC")
    # w first (0, 0), then k (1, 0), then t (3, 0); black and transparent black are two colours.
    assert image.index.tolist() == [[0, 1, 0, 2], [1, 2, 1, 0]]
    alphabet = Alphabet("ABC", (("?", "AB"),))
    assert input_waves(image, "AB?", alphabet).tolist() == [[1, 2, 1, 3], [2, 3, 2, 1]]
    assert output_values(image.columns(0, 2), "A*B", alphabet).tolist() == [[0, KEEP], [KEEP, 1]]
    with pytest.raises(ImageError, match=r"has 3 colours but legend 'AB' names 2"):
        read_image(png(["wkt"], colours), "AB")
    with pytest.raises(ImageError, match=r"colour #00000000 \(first at x=3, y=0\) is legend '\?': output symbol '\?' is not a value"):
        output_values(image, "AB?", alphabet)
    with pytest.raises(ImageError, match="is not an image"):
        read_image(b"not a png", "AB")


def test_fin_fout_folder_and_the_errors_of_image_rules() -> None:
    colours = {"b": (0, 0, 0, 255), "w": (255, 255, 255, 255)}
    files = {
        "rules/set/grow.png": png(["bbww", "bbbw"], colours),  # 4 x 2: BB/BB -> WW/BW under "BW"
        "rules/set/in.png": png(["bw"], colours),
        "rules/set/out.png": png(["ww"], colours),
        "rules/odd.png": png(["bwb"], colours),
    }

    def read(path: str) -> bytes:
        if path not in files:
            raise ResourceError(f"cannot read /res/{path} (No such file or directory)")
        return files[path]

    prog = load_model('<one values="BW" folder="set" file="grow" legend="BW" symmetry="()"/>', read)
    assert isinstance(prog.root, RuleNode)
    (rule,) = prog.root.rules
    assert rule.inp.tolist() == [[1, 1], [1, 1]] and rule.out.tolist() == [[1, 1], [0, 1]]

    prog = load_model('<one values="BW" folder="set" symmetry="()"><rule fin="in" fout="out" legend="BW"/></one>', read)
    assert isinstance(prog.root, RuleNode)
    # fin and fout are numbered each on its own: out.png is all white, so white is its first
    # colour, legend[0], B (in in.png, black came first and white is W).
    assert prog.root.rules[0].inp.tolist() == [[1, 2]] and prog.root.rules[0].out.tolist() == [[0, 0]]
    prog = load_model('<one values="BW" folder="set" in="BB" fout="out" legend="WB" symmetry="()"/>', read)
    assert isinstance(prog.root, RuleNode) and prog.root.rules[0].out.tolist() == [[1, 1]]

    cases = {
        '<one values="BW" file="odd" legend="BW"/>': "line 1: rule image rules/odd.png is 3 pixels wide",
        '<one values="BW" file="gone" legend="BW"/>': "line 1: rule image rules/gone.png: cannot read /res/rules/gone.png",
        '<one values="BW" folder="set" file="grow"/>': "file='grow' needs a legend",
        '<one values="BW" folder="set" file="grow" in="B" legend="BW"/>': "has both file and in",
        '<one values="BW" folder="set" in="B" fin="in" out="W" legend="BW"/>': "has both in and fin for its input",
        '<one values="BW" folder="set" in="BBB" fout="out" legend="BW"/>': "input is 3x1 but output is 2x1",
        '<one values="BW" folder="set" fin="in" legend="BW"/>': "needs in and out patterns",
        '<one values="BW" folder="set" file="grow" legend="?W"/>': "colour #000000ff (first at x=0, y=0) is legend '?': unknown symbol '?'",
        '<sequence values="BW">\n  <one folder="set" file="grow" legend="BW"/>\n</sequence>': "line 2: <one folder=...>: folder on this node",
        '<one values="BW" file="grow" legend="BW"><rule in="B" out="W"/></one>': "has both file= and <rule> children",
    }
    for xml, expected in cases.items():
        with pytest.raises(ProgramError) as info:
            load_model(xml, read)
        assert expected in str(info.value), (xml, str(info.value))
    with pytest.raises(ProgramError, match=r"rule image rules/set/grow.png: no resources folder"):
        load_model('<one values="BW" folder="set" file="grow" legend="BW"/>')


# --- resources through the stage: where they are found, the cache key, errors --------------------


def copy_model(project: Path, name: str, images: list[str], resources: str = "resources") -> None:
    (project / "models").mkdir(parents=True, exist_ok=True)
    shutil.copy(SUITE / "models" / f"{name}.xml", project / "models")
    for image in images:
        target = project / resources / "rules" / image
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SUITE / "resources" / "rules" / image, target)


def test_a_changed_rule_image_changes_the_files_read(tmp_path: Path) -> None:
    copy_model(tmp_path, "BasicDijkstraFill", ["BasicDijkstraRoom.png"])
    before = stage(tmp_path, program="models/BasicDijkstraFill.xml", size=[20, 20]).files_read()
    assert sorted(before) == ["models/BasicDijkstraFill.xml", "resources/rules/BasicDijkstraRoom.png"]
    # The same two colours, a smaller room: still a good rule image, with other bytes.
    room = tmp_path / "resources" / "rules" / "BasicDijkstraRoom.png"
    pixels = np.asarray(Image.open(room).convert("RGBA")).copy()
    pixels[1, 6] = pixels[0, 0]
    Image.fromarray(pixels).save(room)
    after = stage(tmp_path, program="models/BasicDijkstraFill.xml", size=[20, 20]).files_read()
    assert after["models/BasicDijkstraFill.xml"] == before["models/BasicDijkstraFill.xml"]
    assert after["resources/rules/BasicDijkstraRoom.png"] != before["resources/rules/BasicDijkstraRoom.png"]


def test_the_resources_param_points_elsewhere(tmp_path: Path) -> None:
    copy_model(tmp_path / "recipes", "BasicDijkstraFill", ["BasicDijkstraRoom.png"], resources="../mj")
    rewrite = stage(tmp_path / "recipes", program="models/BasicDijkstraFill.xml", resources="../mj", size=[20, 20])
    assert sorted(rewrite.files_read()) == ["../mj/rules/BasicDijkstraRoom.png", "models/BasicDijkstraFill.xml"]
    with pytest.raises(ValidationError, match="resources: is only for a MarkovJunior .xml program"):
        stage(tmp_path, program={"one": "B=W"}, values="BW", resources="mj", size=[4, 4])


def test_a_missing_resource_is_one_clear_error_through_the_cli(tmp_path: Path) -> None:
    copy_model(tmp_path / "recipes", "Circuit", [])  # no Chip.png
    write_recipe(
        tmp_path,
        "circuit",
        '[pack]\nname = "circuit"\nseed = 1\nmaps = 1\n\n'
        '[stage.chip]\nuse = "rewrite"\nsize = [29, 29]\nprogram = "models/Circuit.xml"\nmax_steps = 300\non_max_steps = "stop"\n\n'
        '[stage.png]\nuse = "export.png"\ninput = "chip"\n',
    )
    bad = pcg("build", "recipes/circuit.toml", cwd=tmp_path, check=False)
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    errors = [line for line in bad.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, bad.stderr
    # The model file, its line, the image as the model names it and the path looked for.
    assert "stage.chip.program: recipes/models/Circuit.xml: line 4: rule image rules/Chip.png: " in errors[0]
    assert "cannot read recipes/resources/rules/Chip.png (No such file or directory)" in errors[0], errors[0]
    copy_model(tmp_path / "recipes", "Circuit", ["Chip.png"])
    pcg("build", "recipes/circuit.toml", cwd=tmp_path)
    assert (tmp_path / "exports" / "circuit" / "colour_maps" / "map_000.png").is_file()


# --- compatibility: what MarkovJunior loads and ignores --------------------------------------------


def test_periodic_on_a_sequence_is_accepted() -> None:
    prog = load_model('<sequence values="BW" periodic="True">\n  <one in="B" out="W" steps="2"/>\n</sequence>')
    assert isinstance(prog.root, BranchNode)
    assert suite_model("GrowthCompetition").alphabet.values == "BEY"


def test_strange_dungeon_loads_and_its_3d_rule_never_fires() -> None:
    prog = suite_model("StrangeDungeon")
    assert isinstance(prog.root, BranchNode)
    deep = prog.root.children[2]
    assert isinstance(deep, RuleNode) and len(deep.rules) == 1
    assert deep.rules[0].inp.shape == (3, 3) and not deep.rules[0].inp.any()
    # The whole model runs as the model without that line: the rule matches nowhere and draws
    # no random numbers.
    text = (SUITE / "models" / "StrangeDungeon.xml").read_text()
    without = load_model("\n".join(line for line in text.splitlines() if 'd="3"' not in line))
    start = np.zeros((25, 25), dtype=np.uint8)
    a = run(prog, start, np.random.default_rng(5), 10**6)
    b = run(without, start, np.random.default_rng(5), 10**6)
    assert a.finished and np.array_equal(a.state, b.state) and len(np.unique(a.state)) >= 2

    # In a node of its own, on a grid of nothing but the value it asks for, it still never fires;
    # the incremental table lists no (rule, cell) pair for it.
    lone = load_model('<one values="BW" in="***/*B*/*** ***/*B*/*** ***/*B*/***" out="***/***/*** ***/*W*/*** ***/***/***"/>')
    result = run(lone, np.zeros((6, 6), dtype=np.uint8), np.random.default_rng(0), 100)
    assert result.finished and not result.state.any()
    assert flatten(lone).pair_ptr[-1] == 0


def test_3d_patterns_are_still_checked() -> None:
    with pytest.raises(ProgramError, match="input 'B B' has 2 layers but output 'W' has 1"):
        load_model('<one values="BW" in="B B" out="W"/>')
    with pytest.raises(ProgramError, match="unknown symbol 'X'"):
        load_model('<one values="BW" in="B X" out="W W"/>')
    with pytest.raises(ProgramError, match="layers of different sizes"):
        load_model('<one values="BW" in="B BB" out="W WW"/>')


def test_3d_rules_and_convolution_rules_that_never_fire_are_warned_of(tmp_path: Path) -> None:
    from pipeline.rewrite.program import program_warnings

    assert program_warnings(suite_model("StrangeDungeon")) == [
        "line 4: a 3D rule (layers separated by spaces) never matches a 2D grid, as in MarkovJunior's 2D runs, and only 2D grids"
        ' run here: a model made for 3D (d="3" in models.xml) runs without them'
    ]
    assert program_warnings(suite_model("DualRetraction3D"))[0].startswith("lines 11, 14: 3D rules (layers separated by spaces) never match")
    assert program_warnings(suite_model("Basic")) == []
    conv = load_model(
        '<convolution values="BW" neighborhood="VonNeumann">\n  <rule in="B" out="W" values="W" sum="5..8"/>\n'
        '  <rule in="W" out="B" values="BB" sum="5..8"/>\n  <rule in="W" out="B" values="B" sum="2,9"/>\n</convolution>'
    )
    # 'BB' counts each B twice: up to 8, so 5..8 can fire; 2,9 can fire at 2.
    assert program_warnings(conv) == [
        "convolution rule B=W counting 'W': sum 5..8 is more than a cell's 4 VonNeumann neighbours can hold (4), so the rule never fires"
    ]
    # Through a recipe, as a warning of the stage.
    model = tmp_path / "models" / "Strange.xml"
    model.parent.mkdir()
    model.write_text((SUITE / "models" / "StrangeDungeon.xml").read_text())
    assert stage(tmp_path, size=[29, 29], program="models/Strange.xml").warnings() == [
        "program: models/Strange.xml: " + program_warnings(suite_model("StrangeDungeon"))[0]
    ]


def test_xml_attribute_mistakes_name_the_attribute() -> None:
    with pytest.raises(ProgramError, match=r"^line 2: p='abc' is not a number$"):
        load_model('<sequence values="BW">\n  <one in="B" out="W" p="abc"/>\n</sequence>')
    with pytest.raises(ProgramError, match=r"^line 2: for='Q' is not one of the values 'BRW'$"):
        load_model('<one values="BRW" origin="True" in="RB" out="WR">\n  <field for="Q" to="W" on="B"/>\n</one>')
    with pytest.raises(ProgramError, match=r"^line 2: value='Q' is not one of the values 'BRW'$"):
        load_model('<one values="BRW" origin="True" in="RB" out="WR">\n  <observe value="Q" to="W"/>\n</one>')


def test_the_default_colours_are_markovjuniors_palette() -> None:
    from pipeline.rewrite.palette import NAMED

    text = (SUITE / "resources" / "palette.xml").read_text(encoding="utf-8-sig")
    theirs = {m[0]: "#" + m[1].lower() for m in re.findall(r'symbol="(.)" value="([0-9A-Fa-f]{6})"', text)}
    assert len(theirs) == 52 and {ch: color for ch, (_, color) in NAMED.items()} == theirs
    names = [name for name, _ in NAMED.values()]
    assert len(set(names)) == len(names) and NAMED["z"] == ("pure_white_2", "#cbdbfc") and NAMED["g"] == ("green_2", "#00b543")
