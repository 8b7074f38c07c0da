"""The Python API: `pipeline.build` makes what `pcg build` makes, `pipeline.generate` runs one
stage, `Level.to_text`/`from_text` round-trip, and `import pipeline` stays light."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytmx
import pytest

import pipeline
from conftest import ROOT, assert_perfect_maze, pcg, recipe_text, tree_digests, write_recipe
from pipeline.errors import PipelineError
from pipeline.level import Level, Symbol

PACK = Path("exports/small")


def test_import_pipeline_imports_no_numpy_numba_or_pydantic() -> None:
    # `pcg --help` imports the package: the API must load only when used.
    code = (
        "import sys, pipeline, pipeline.api\n"
        "heavy = [m for m in ('numpy', 'numba', 'pydantic') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "assert callable(pipeline.build) and callable(pipeline.generate)\n"
        "print(pipeline.__version__)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == pipeline.__version__


def test_lazy_names_resolve_and_build_stays_the_function_after_the_builder_loads() -> None:
    import pipeline.building.builder  # noqa: F401  (a submodule import sets an attribute of the package)

    assert callable(pipeline.build) and pipeline.build is pipeline.api.build
    assert pipeline.Level is Level and pipeline.PipelineError is PipelineError
    assert {"build", "generate", "Level", "BuildResult"} <= set(dir(pipeline))
    with pytest.raises(AttributeError):
        pipeline.no_such_name  # noqa: B018


def test_build_writes_what_pcg_build_writes_and_prints_nothing(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    cli = tmp_path / "cli"
    shutil.copytree(project / "recipes", cli / "recipes")
    printed = pcg("build", "recipes", "-j", "1", cwd=cli).stdout

    monkeypatch.chdir(project)
    seen: list[tuple[str, int, int]] = []
    result = pipeline.build(jobs=2, progress=lambda pack, done, total: seen.append((pack, done, total)))
    assert capfd.readouterr() == ("", "")
    assert tree_digests(project / PACK) == tree_digests(cli / PACK)  # manifest.json included

    assert result.ok and result.problems == ()
    small = result["small"]
    assert (small.name, small.recipe, small.maps, small.built, small.failures) == ("small", "recipes/small.toml", 6, 6, ())
    assert "built 6/6 maps" in printed and small.seconds > 0
    assert f"({small.files_written} files written;" in printed
    assert seen[0] == ("small", 0, 6) and seen[-1] == ("small", 6, 6)
    assert [d for _, d, _ in seen] == sorted(d for _, d, _ in seen)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.problems = ()  # type: ignore[misc]

    again = pipeline.build("recipes", jobs=1)
    assert again.ok and again["small"].up_to_date and again["small"].built == 0 and again["small"].files_written == 0
    assert tree_digests(project / PACK) == tree_digests(cli / PACK)


def test_build_takes_paths_out_cache_and_maps(project: Path, tmp_path: Path) -> None:
    # Absolute paths, from any current folder; one map alone gives that map's bytes.
    out, cache = tmp_path / "elsewhere", tmp_path / "cache"
    result = pipeline.build(project / "recipes" / "small.toml", out=out, cache=cache, jobs=1, maps=[4])
    assert result.ok and result["small"].built == 1
    assert (out / "small" / "map_004.tmx").is_file() and not (out / "small" / "map_003.tmx").exists()
    with pytest.raises(PipelineError, match=r"small.toml: maps 6: the pack has maps 0..5"):
        pipeline.build([project / "recipes"], out=out, cache=cache, maps=[6])
    # One index alone, as `pcg build --map 0` takes it; 0 is a map, not "no maps: all of them".
    result = pipeline.build(project / "recipes" / "small.toml", out=out, cache=cache, jobs=1, maps=0)
    assert result["small"].built == 1 and result["small"].maps == 1


def test_recipe_problems_are_in_the_result_and_the_other_recipes_build(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    write_recipe(project, "broken", recipe_text(name="broken").replace("maze.backtracker", "maze.backtraker"))
    result = pipeline.build(jobs=1)
    assert not result.ok
    assert result.problems == (
        "recipes/broken.toml: stage.maze.use: unknown stage kind 'maze.backtraker' (did you mean 'maze.backtracker'?)",
    )
    assert [p.name for p in result.packs] == ["small"] and result["small"].built == 6
    assert not (project / "exports" / "broken").exists()


def test_map_failures_are_in_the_result_not_raised(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    text = recipe_text(name="picky", maps=2) + '\n[stage.picky]\nuse = "filter"\ninput = "maze"\nwhere = "dead_ends > 100000"\nattempts = 1\n'
    path = write_recipe(project, "picky", text.replace('input = "maze"\ntile_size', 'input = "picky"\ntile_size'))
    result = pipeline.build(path, jobs=1)
    assert not result.ok and result.problems == ()
    assert [(f.map, f.stage) for f in result.failures] == [(0, "picky"), (1, "picky")]
    assert "dead_ends > 100000" in result.failures[0].message


def test_unusable_arguments_raise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PipelineError, match="no recipes/ folder"):
        pipeline.build()
    (tmp_path / "empty").mkdir()
    with pytest.raises(PipelineError, match=r"no recipes \(\*\.toml\) found in empty"):
        pipeline.build("empty")
    with pytest.raises(PipelineError, match="jobs: must be a whole number >= 1"):
        pipeline.build("empty", jobs=0)
    with pytest.raises(PipelineError, match="cache_max: not a size"):
        pipeline.build("empty", cache_max="lots")


def test_generate_makes_a_perfect_maze() -> None:
    level = pipeline.generate("maze.backtracker", seed=1, cells=(5, 4))
    assert isinstance(level, Level)
    assert_perfect_maze(level.tiles, 5, 4)
    assert level.properties["dead_ends"] >= 1
    level.tiles[0, 0] = 1  # the caller's to change
    again = pipeline.generate("maze.backtracker", seed=1, cells=[5, 4])
    assert again.tiles[0, 0] == 0
    assert not np.array_equal(pipeline.generate("maze.backtracker", seed=2, cells=(5, 4)).tiles, again.tiles)


def test_generate_is_deterministic_across_processes() -> None:
    code = "import pipeline; print(pipeline.generate('maze.backtracker', seed=1, cells=(5, 4)).to_text())"
    texts = [subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True).stdout for _ in range(2)]
    assert texts[0] == texts[1] == pipeline.generate("maze.backtracker", seed=1, cells=(5, 4)).to_text() + "\n"


def test_generate_takes_inputs_and_leaves_them_alone() -> None:
    maze = pipeline.generate("maze.backtracker", seed=3, cells=(8, 8))
    before = maze.tiles.copy()
    braided = pipeline.generate("post.braid", seed=3, inputs=[maze], fraction=1.0)
    assert np.array_equal(maze.tiles, before) and maze.tiles.flags.writeable
    # One input Level need not be in a list.
    assert np.array_equal(pipeline.generate("post.braid", seed=3, inputs=maze, fraction=1.0).tiles, braided.tiles)
    assert braided.properties["dead_ends"] < maze.properties["dead_ends"]
    assert braided.tiles.flags.writeable


def test_generate_reads_files_relative_to_the_current_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT / "recipes")
    room = pipeline.generate("load.tmx", file="maps/start.tmx", empty="wall")
    assert room.width > 1 and {"wall", "floor"} <= {s.name for s in room.alphabet}
    assert any(o.type == "spawn" for o in room.objects)
    monkeypatch.chdir(ROOT)
    with pytest.raises(PipelineError, match="load.tmx.file"):
        pipeline.generate("load.tmx", file="maps/start.tmx")


@pytest.mark.parametrize(
    ("kind", "kwargs", "message"),
    [
        ("maze.backtraker", {}, "kind: unknown stage kind 'maze.backtraker' (did you mean 'maze.backtracker'?)"),
        # Not by spelling (maze.eller is closer): by a word of its name.
        ("cave.cellular", {}, "kind: unknown stage kind 'cave.cellular' (did you mean 'dungeon.cellular_caves'?)"),
        ("mygame.chests", {}, "kind: unknown stage kind 'mygame.chests' (a plugin's? pass its file in plugins=[...])"),
        (None, {}, "kind: must be a stage kind's name such as 'maze.backtracker' (got NoneType)"),
        ("maze.backtracker", {"cellz": (5, 4)}, "maze.backtracker.cellz: unknown parameter (did you mean 'cells'?)"),
        ("maze.backtracker", {"cells": (100000, 4)}, "maze.backtracker.cells.0: must be <= "),
        ("maze.backtracker", {"cells": ("5", 4)}, "maze.backtracker.cells.0: must be a whole number or [min, max] (got '5')"),
        ("maze.backtracker", {"seed": -1}, "seed: must be a whole number from 0"),
        ("post.braid", {}, "inputs: post.braid takes 1 input (got 0)"),
        ("post.braid", {"input": "maze"}, "input: not a parameter here"),
        ("export.tmx", {}, "export.tmx: is an export stage"),
    ],
)
def test_generate_refuses_bad_arguments_naming_the_key(kind: str, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(PipelineError) as caught:
        pipeline.generate(kind, **kwargs)  # type: ignore[arg-type]
    assert any(p.startswith(message) for p in caught.value.problems), caught.value.problems


def test_generate_checks_parameters_beside_their_inputs_as_a_recipe_does() -> None:
    maze = pipeline.generate("maze.backtracker", seed=1, cells=(3, 3))
    with pytest.raises(PipelineError) as caught:
        pipeline.generate("rewrite", inputs=maze, size=[5, 5], values="BW", program={"one": "B=W"})
    assert caught.value.problems == ["rewrite.size: only for a rewrite stage without an input (the input sets the size)"]


def test_generate_runs_a_plugins_stage_named_by_its_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    dungeon = pipeline.generate("dungeon.bsp", seed=3, size=(40, 30))
    lit = pipeline.generate("demo.torches", seed=3, inputs=[dungeon], plugins=["recipes/stages/torches.py"], spacing=3)
    assert lit.properties["torches"] == sum(o.type == "torch" for o in lit.objects) > 0
    with pytest.raises(PipelineError, match=r"kind: unknown stage kind 'demo.torches'"):
        pipeline.generate("demo.torches", seed=3, inputs=[dungeon])  # a plugin's kinds are the caller's to name
    with pytest.raises(PipelineError, match=r"plugins: recipes/stages/nope.py: no such plugin file"):
        pipeline.generate("demo.torches", inputs=[dungeon], plugins=["recipes/stages/nope.py"])


def test_text_round_trips_tiles_and_alphabet() -> None:
    maze = pipeline.generate("maze.backtracker", seed=1, cells=(5, 4))
    text = maze.to_text()
    rows = text.split("\n\n")[1].splitlines()
    assert len(rows) == 9 and all(len(r) == 11 for r in rows)
    back = Level.from_text(text)
    assert np.array_equal(back.tiles, maze.tiles) and back.tiles.dtype == np.uint8
    assert back.alphabet == maze.alphabet
    assert back.to_text() == text

    # Any char, even '#' or a space, and names with spaces.
    odd = Level(
        tiles=np.array([[0, 1, 2], [2, 1, 0]], dtype=np.uint8),
        alphabet=(Symbol(" ", "empty space", "#000000"), Symbol("#", "wall", "#ffffff"), Symbol("é", "gem", "#aabbcc")),
    )
    assert odd.to_text() == "  empty space #000000\n# wall #ffffff\né gem #aabbcc\n\n #é\né# \n"
    again = Level.from_text(odd.to_text())
    assert np.array_equal(again.tiles, odd.tiles) and again.alphabet == odd.alphabet


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("B wall #000000\nBB\n", "a blank line"),
        ("B wall\n\nB\n", "line 1: a symbol line"),
        ("B wall #000000\n\nBB\nB\n", "line 4: 1 tiles, the first row has 2"),
        ("B wall #000000\n\nBX\n", "line 3, column 2: 'X' is not a symbol"),
        ("B wall #000000\n\n", "at least one row"),
    ],
)
def test_from_text_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Level.from_text(text)


def test_generate_refuses_what_a_plugins_stage_returns_that_no_build_would_take(tmp_path: Path) -> None:
    plugin = tmp_path / "bad.py"
    plugin.write_text(
        "from pipeline.level import Level\nfrom pipeline.registry import StageParams, stage\n\n"
        "@stage('demo.shift', version=1)\nclass Shift(StageParams):\n    'Shifts tiles past the alphabet.'\n"
        "    arity = (1, 1)\n    by: int = 7\n\n    def run(self, inputs, rng):\n"
        "        return 'nothing' if self.by == 0 else Level(tiles=inputs[0].tiles + self.by, alphabet=inputs[0].alphabet)\n"
    )
    maze = pipeline.generate("maze.backtracker", seed=3, cells=(4, 4))
    with pytest.raises(PipelineError, match=r"demo.shift: returned a Level whose \d+ tiles hold an index past the alphabet's 2 symbols"):
        pipeline.generate("demo.shift", inputs=maze, plugins=[plugin])
    with pytest.raises(PipelineError, match=r"demo.shift: returned str, not a Level"):
        pipeline.generate("demo.shift", inputs=maze, plugins=[plugin], by=0)


def test_generate_draws_again_when_a_stage_turns_its_level_down(tmp_path: Path) -> None:
    # A stage that passes one draw in four, as place.prefabs finds a place on some tries only.
    plugin = tmp_path / "picky.py"
    plugin.write_text(
        "from pipeline.errors import Rejected\nfrom pipeline.registry import StageParams, stage\n\n"
        "@stage('demo.picky', version=1)\nclass Picky(StageParams):\n    'Passes one draw in four.'\n"
        "    arity = (1, 1)\n    may_reject = True\n    attempts: int = 30\n\n    def run(self, inputs, rng):\n"
        "        draw = float(rng.random())\n"
        "        if draw > 0.25:\n            raise Rejected(f'drew {draw:.2f}', self.attempts)\n"
        "        level = inputs[0]\n        level.properties['draw'] = draw\n        return level\n"
    )
    maze = pipeline.generate("maze.backtracker", seed=3, cells=(4, 4))
    first = pipeline.generate("demo.picky", seed=5, inputs=maze, plugins=[plugin])
    again = pipeline.generate("demo.picky", seed=5, inputs=maze, plugins=[plugin])
    assert first.properties["draw"] <= 0.25 and first.properties["draw"] == again.properties["draw"]
    with pytest.raises(PipelineError, match=r"^demo.picky: drew 0\.\d\d; none of 1 attempt passed \(raise attempts to try more\)$"):
        pipeline.generate("demo.picky", seed=6, inputs=maze, plugins=[plugin], attempts=1)
    with pytest.raises(PipelineError, match=r"filter.where: its input has no property 'dead_endz' \(did you mean 'dead_ends'\?\)"):
        pipeline.generate("filter", inputs=maze, where="dead_endz > 1")
    # A filter draws nothing: asking it again would give the same verdict, so it is not asked.
    with pytest.raises(PipelineError) as verdict:
        pipeline.generate("filter", inputs=maze, where="dead_ends > 100000", attempts=3)
    assert "attempt" not in str(verdict.value) and str(verdict.value).startswith("filter: "), verdict.value


def test_export_writes_a_level_as_a_pack_would(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A script's own Level, written as a build writes a map: the same bytes as the pack's.
    monkeypatch.chdir(tmp_path)
    write_recipe(tmp_path, "one", recipe_text(name="one", seed=4, maps=1).replace('[stage.preview]\nuse = "export.png"\ninput = "maze"\nscale = 2\n', ""))
    assert pipeline.build("recipes").ok
    maze = pipeline.generate("maze.backtracker", seed=1, cells=(9, 7))
    written = pipeline.export("export.tmx", maze, "out", stem="level", tile_size=8)
    assert [p.relative_to("out").as_posix() for p in written] == [
        "level.tmx", "previews/level.png", "tilesets/symbols.png", "tilesets/symbols.tsx", "tilesets/symbols_values.png", "tilesets/symbols_values.tsx"
    ]
    assert (tmp_path / "out" / "tilesets" / "symbols.tsx").read_bytes() == (tmp_path / "exports" / "one" / "tilesets" / "symbols.tsx").read_bytes()
    assert pytmx.TiledMap(str(tmp_path / "out" / "level.tmx")).width == maze.width
    assert pipeline.export("export.tmx", maze, "again", stem="level", tile_size=8) and all(
        (tmp_path / "again" / p.relative_to("out")).read_bytes() == p.read_bytes() for p in written
    )
    # An LDtk project of the one level, which LDtk's own reader takes.
    ldtk = pipeline.export("export.ldtk", maze, "ldtk_out", tile_size=8)
    project = next(p for p in ldtk if p.suffix == ".ldtk")
    ldtkpy = pytest.importorskip("ldtkpy.api")
    assert len(ldtkpy.ldtk_json_from_dict(json.loads(project.read_text())).levels) == 1
    with pytest.raises(PipelineError, match=r"maze.backtracker: is not an export stage"):
        pipeline.export("maze.backtracker", maze, "x")
    with pytest.raises(PipelineError, match=r"export.tmx.tile_sise: unknown parameter \(did you mean 'tile_size'\?\)"):
        pipeline.export("export.tmx", maze, "x", tile_sise=8)
    with pytest.raises(PipelineError, match=r"^stem: must be a plain name of letters, digits and _ \. - \(no slashes or '\.\.'\) \(got '\.\./up'\)$"):
        pipeline.export("export.tmx", maze, "x", stem="../up")
    with pytest.raises(PipelineError, match=r"^stem: 'CON' is a device name on Windows"):
        pipeline.export("export.tmx", maze, "x", stem="CON")
    (tmp_path / "a_file").write_text("not a folder")
    with pytest.raises(PipelineError, match=r"a_file"):
        pipeline.export("export.tmx", maze, "a_file", tile_size=8)
