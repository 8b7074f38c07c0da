"""The TOML form of `wfc` nodes: docs/rewrite.md's example runs, TOML and XML forms of one model make
the same grid, the overlapping output is made of the sample's patterns, errors name the key and
the file, and a WFC recipe builds through the CLI into a TMX map.

Samples and tilesets are copied from MarkovJunior's own suite (see test_rewrite_wfc.SUITE)."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from conftest import docs_toml, pcg, write_recipe
from pipeline.rewrite.kinds.rules import RuleNode
from pipeline.rewrite.kinds.wfc import WfcNode
from pipeline.rewrite.program import Program, run
from pipeline.rewrite.resources import ResourceFolder
from pipeline.rewrite.rule import Alphabet
from pipeline.rewrite.toml_form import parse_node
from pipeline.rewrite.wfc.overlap import OverlapModel, read_sample
from pipeline.rewrite.wfc.tiles import Tileset
from pipeline.rewrite.xml_form import load_model
from pipeline.stages.rewrite import Rewrite
import test_rewrite_wfc
from test_rewrite_wfc import SUITE, windows

pytestmark = test_rewrite_wfc.pytestmark  # skipped without MarkovJunior's suite
FLOWERS = {"sample": "Flowers", "n": 3, "shannon": True}


def readme_example() -> dict[str, Any]:
    return tomllib.loads(docs_toml("rewrite.md", "**Wave function collapse**"))["stage"]["meadow"]


def copy_resources(project: Path) -> None:
    """The project's resources/: Flowers.png and the Knots2D tileset, as docs/rewrite.md says."""
    (project / "recipes").mkdir()
    (project / "resources" / "samples").mkdir(parents=True)
    shutil.copy(SUITE / "resources" / "samples" / "Flowers.png", project / "resources" / "samples")
    shutil.copytree(SUITE / "resources" / "tilesets" / "Knots2D", project / "resources" / "tilesets" / "Knots2D")
    shutil.copy(SUITE / "resources" / "tilesets" / "Knots2D.xml", project / "resources" / "tilesets")


def stage(project: Path, **params: Any) -> Rewrite:
    return Rewrite.model_validate(params, context={"recipe_dir": project / "recipes"})


def sample_windows(n: int, images: int) -> set[bytes]:
    """The sample's n x n windows (wrapping) in the first `images` orientations of MarkovJunior's
    order: as written, mirrored, turned, ..."""
    sample = read_sample((SUITE / "resources" / "samples" / "Flowers.png").read_bytes())
    out: set[bytes] = set()
    for raw in windows(sample, n):
        win = np.frombuffer(raw, np.uint8).reshape(n, n)
        found = [win, win[:, ::-1]]
        for _ in range(3):
            found += [np.rot90(found[-2]), np.rot90(found[-2])[:, ::-1]]
        out.update(np.ascontiguousarray(im).tobytes() for im in found[:images])
    return out


def test_the_readme_example_runs_and_is_made_of_the_samples_patterns(tmp_path: Path) -> None:
    copy_resources(tmp_path)
    params = readme_example()
    assert params.pop("use") == "rewrite" and params["resources"] == "../resources"
    rewrite = stage(tmp_path, **params)
    assert list(rewrite.files_read()) == ["../resources/samples/Flowers.png"]  # part of the cache key
    level = rewrite.run([], np.random.default_rng(1))
    assert level.tiles.shape == (30, 40)
    names = [s.name for s in level.alphabet]
    assert sorted(names) == ["flower", "sky", "soil", "stem"]
    # The rewrite's grid, in its own values: every 3 x 3 window (wrapping, as the wave does) is
    # one of the sample's, as drawn or mirrored (symmetry "(x)").
    chars = np.array([s.char for s in level.alphabet])
    state = chars[level.tiles]
    grid = np.vectorize("zYgN".index, otypes=[np.uint8])(state)
    assert windows(grid, 3) <= sample_windows(3, 2)
    assert set(state[-2:].ravel()) <= set("Ng") and set(state[:-2].ravel()) <= set("zgY")
    assert "Y" in state and level.properties["rewrite_steps"] > 2


def xml_and_toml(xml: str, values: str, group: str, toml: dict[str, Any]) -> tuple[Program, Program]:
    read = ResourceFolder(SUITE, "resources").read
    alphabet = Alphabet(values)
    return load_model(xml, read), Program(alphabet, parse_node(toml, alphabet, group, "", read))


def test_toml_and_xml_overlapping_make_the_same_grid() -> None:
    from_xml, from_toml = xml_and_toml(
        (SUITE / "models" / "WaveFlowers.xml").read_text(),
        "BW",
        "(x)",
        {"sequence": [{"all": "B/*/*=W/*/*"}, {"wfc": {**FLOWERS, "periodic": True, "tries": 1000}, "values": "zYgN", "rules": ["B=N|g", "W=z|g|Y"]}]},
    )
    for seed in (1, 2):
        a = run(from_xml, np.zeros((24, 30), np.uint8), np.random.default_rng(seed), 10**6)
        b = run(from_toml, np.zeros((24, 30), np.uint8), np.random.default_rng(seed), 10**6)
        assert a.values == b.values == "zYgN" and a.turns == b.turns and np.array_equal(a.state, b.state)


def test_toml_and_xml_tiled_make_the_same_grid_and_run_the_then_nodes() -> None:
    # MarkovJunior's TilePath: a river of tiles between two red ends, then coloured by its children.
    from_xml, from_toml = xml_and_toml(
        (SUITE / "models" / "TilePath.xml").read_text(),
        "BAR",
        "(xy)",
        {
            "sequence": [
                {"all": "***/*B*/***=***/*A*/***"},
                {"one": "BBB/BAA/BAA=***/***/**R", "symmetry": "()"},
                {"one": "AAB/AAB/BBB=R**/***/***", "symmetry": "()"},
                {
                    "wfc": {"tileset": "Knots2D"},
                    "values": "EUIR",
                    "rules": ["B=Empty", "A=Empty|Line|Turn", "R=End"],
                    "then": [{"one": "EEE/EUE=***/*I*"}, {"all": "IU=*I"}, {"one": "EEE/EIE=***/*R*"}],
                },
            ]
        },
    )
    wfc = from_toml.root.children[-1]  # type: ignore[union-attr]
    assert isinstance(wfc, WfcNode) and isinstance(wfc.model, Tileset) and not wfc.periodic and wfc.n == 1
    assert all(isinstance(c, RuleNode) for c in wfc.children)
    for seed in (3, 4):
        a = run(from_xml, np.zeros((10, 10), np.uint8), np.random.default_rng(seed), 10**6)
        b = run(from_toml, np.zeros((10, 10), np.uint8), np.random.default_rng(seed), 10**6)
        assert a.values == b.values == "EUIR" and a.turns == b.turns and np.array_equal(a.state, b.state)
        assert a.state.shape == (50, 50)


def test_toml_options_reach_the_node() -> None:
    read = ResourceFolder(SUITE, "resources").read
    alphabet = Alphabet("BW")
    node = parse_node(
        {"wfc": {"sample": "Flowers", "n": 2, "periodic_input": False, "tries": 7}, "values": "zYgN", "symmetry": "()", "rules": "W=z"},
        alphabet, "(xy)", "", read,
    )
    assert isinstance(node, WfcNode) and isinstance(node.model, OverlapModel)
    assert (node.model.n, node.model.group, node.model.periodic_input, node.tries, node.shannon) == (2, "()", False, 7, False)
    assert node.start[1].tolist() == [True, False, False, False] and node.start[0].all()
    tiled = parse_node({"wfc": {"tileset": "Knots2D", "periodic": True, "overlap": 1, "shannon": True}, "values": "IE"}, alphabet, "(xy)", "", read)
    assert isinstance(tiled, WfcNode) and tiled.periodic and tiled.overlap == 1 and tiled.shannon and tiled.start.all()


RULES = ["B=N|g", "W=z|g|Y"]


@pytest.mark.parametrize(
    ("program", "message"),
    [
        ({"wfc": {"sample": "Nope"}, "values": "zYgN"}, r"program.wfc.sample: samples/Nope.png cannot read .*resources/samples/Nope.png"),
        ({"sequence": [{"all": "B=W"}, {"wfc": {"sample": "Nope"}, "values": "zYgN"}]}, r"program.sequence\[1\].wfc.sample: samples/Nope.png"),
        ({"wfc": {"tileset": "Missing"}, "values": "IE"}, r"program.wfc.tileset: tilesets/Missing.xml cannot read"),
        ({"wfc": {"tileset": "Knots2D", "tiles": "Gone"}, "values": "IE"}, r"program.wfc.tiles: tilesets/Gone/Empty.vox cannot read"),
        ({"wfc": {"sample": "Flowers"}, "values": "zY"}, r"program.wfc.sample: samples/Flowers.png has 4 colours but values='zY' names 2"),
        ({"wfc": {"tileset": "Knots2D"}, "values": "I"}, r"program.wfc.tileset: the tiles of tilesets/Knots2D.xml have 2 colours"),
        ({"wfc": {"sample": "../Flowers"}, "values": "zYgN"}, r"program.wfc.sample: '../Flowers' must be the name of a sample image"),
        ({"wfc": {"sample": "Flowers", "tileset": "Knots2D"}, "values": "zYgN"}, r"program.wfc: must be a table with one of sample"),
        ({"wfc": "Flowers", "values": "zYgN"}, r"program.wfc: must be a table"),
        ({"wfc": {"sample": "Flowers", "tiles": "X"}, "values": "zYgN"}, r"program.wfc: unknown key 'tiles'"),
        ({"wfc": {"sample": "Flowers"}, "values": "zYgN", "scale": 2}, r"program: unknown key 'scale'"),
        ({"wfc": {"sample": "Flowers"}}, r"program.values: is required"),
        ({"wfc": {"sample": "Flowers", "periodic": False}, "values": "zYgN"}, r"program.wfc.periodic: an overlapping wave always wraps"),
        ({"wfc": {"sample": "Flowers", "n": 0}, "values": "zYgN"}, r"program.wfc.n: must be at least 1"),
        ({"wfc": {"sample": "Flowers", "tries": 0}, "values": "zYgN"}, r"program.wfc.tries: must be at least 1"),
        ({"wfc": {"sample": "Flowers", "shannon": 1}, "values": "zYgN"}, r"program.wfc.shannon: must be true or false"),
        ({"wfc": {"tileset": "Knots2D", "overlap": 5}, "values": "IE"}, r"program.wfc.overlap: overlap=5 must be from 0 to less than the tiles' size 5"),
        ({"wfc": {"sample": "Flowers"}, "values": "zYgN", "rules": ["Q=z"]}, r"program.rules\[0\]: 'Q' must be one value of the grid before the wfc \('BW'\)"),
        ({"wfc": {"sample": "Flowers"}, "values": "zYgN", "rules": ["B=N", "W=X|z"]}, r"program.rules\[1\]: 'X' is not a value of this wfc"),
        ({"wfc": {"sample": "Flowers"}, "values": "zYgN", "rules": ["B=N", "B=g"]}, r"program.rules\[1\]: 'B' is given twice"),
        ({"wfc": {"sample": "Flowers"}, "values": "zYgN", "rules": "B="}, r"program.rules: 'B' must become something"),
        ({"wfc": {"sample": "Flowers"}, "values": "zYgN", "rules": ["BN|g"]}, r'program.rules\[0\]: a wfc rule is a string "OLD=NEW\|NEW"'),
        ({"wfc": {"tileset": "Knots2D"}, "values": "IE", "rules": ["B=Loop"]}, r"program.rules\[0\]: unknown tile 'Loop' \(tiles: Empty, Line"),
        ({"wfc": {"sample": "Flowers"}, "values": "zYgN", "then": [{"one": "B=W"}]}, r"program.then\[0\].one: .*'B'"),
    ],
)
def test_toml_errors_name_the_key_and_the_file(tmp_path: Path, program: dict[str, Any], message: str) -> None:
    copy_resources(tmp_path)
    with pytest.raises(ValidationError, match=message):
        stage(tmp_path, values="BW", size=[8, 8], program=program, resources="../resources")


def test_an_inline_wfc_needs_the_resources_folder(tmp_path: Path) -> None:
    copy_resources(tmp_path)
    with pytest.raises(ValidationError, match=r'program.wfc.sample: samples/Flowers.png: an inline program reads samples and tilesets from the stage\'s resources folder: set resources = "..."'):
        stage(tmp_path, values="BW", size=[8, 8], program={"wfc": FLOWERS, "values": "zYgN"})


def test_a_wfc_recipe_builds_through_the_cli_into_a_tmx_map(tmp_path: Path) -> None:
    copy_resources(tmp_path)  # and recipes/, where the docs' recipe lives
    write_recipe(tmp_path, "meadow", '[pack]\nname = "meadow"\nseed = 5\nmaps = 2\n' + docs_toml("rewrite.md", "**Wave function collapse**") + """
[stage.tmx]
use = "export.tmx"
input = "meadow"
""")
    pcg("build", "recipes/meadow.toml", cwd=tmp_path)
    maps = sorted((tmp_path / "exports" / "meadow").rglob("*.tmx"))
    assert len(maps) == 2
    text = maps[0].read_text()
    assert 'width="40" height="30"' in text
