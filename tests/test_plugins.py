"""Stages of your own: plugin files named by a recipe, and installed packages' entry points."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from conftest import RECIPES, SMALL_RECIPE, pcg, tree_digests, write_recipe
from pipeline.level import Level, Symbol
from pipeline.errors import RecipeError
from pipeline.recipe.load import load_recipe

TORCHES = RECIPES / "stages" / "torches.py"

PLUGIN_RECIPE = """\
[pack]
name = "{name}"
seed = 11
maps = {maps}
plugins = ["stages/torches.py"]

[stage.dungeon]
use = "dungeon.bsp"
size = [40, 30]

[stage.torches]
use = "demo.torches"
input = "dungeon"
spacing = 3

[stage.preview]
use = "export.png"
input = "torches"

[stage.tmj]
use = "export.tmj"
input = "torches"
tile_size = 8
"""


def plugin_project(root: Path, name: str = "lit", maps: int = 6) -> Path:
    (root / "recipes" / "stages").mkdir(parents=True)
    shutil.copy(TORCHES, root / "recipes" / "stages" / "torches.py")
    write_recipe(root, name, PLUGIN_RECIPE.format(name=name, maps=maps))
    return root


def torches_of(pack: Path, stem: str = "map_000") -> list[dict]:
    doc = json.loads((pack / f"{stem}.tmj").read_text())
    return [o for layer in doc["layers"] if layer["type"] == "objectgroup" for o in layer["objects"] if o["type"] == "torch"]


def test_a_plugin_stage_builds_the_same_bytes_serially_and_with_two_workers(tmp_path: Path) -> None:
    serial = plugin_project(tmp_path / "serial")
    parallel = plugin_project(tmp_path / "parallel")
    pcg("build", "recipes", "-q", "-j", "1", cwd=serial)
    pcg("build", "recipes", "-q", "-j", "2", cwd=parallel)
    assert tree_digests(serial / "exports" / "lit") == tree_digests(parallel / "exports" / "lit")
    assert torches_of(serial / "exports" / "lit"), "the plugin stage placed no torch"
    manifest = json.loads((serial / "exports" / "lit" / "manifest.json").read_text())
    assert manifest["stages"]["torches"]["plugin"] == hashlib.sha256(TORCHES.read_bytes()).hexdigest()


def test_the_key_is_the_plugins_code_not_the_path_a_recipe_names_it_by(tmp_path: Path) -> None:
    """Two recipes naming one plugin file by different paths share its classes in a process:
    each recipe's keys and manifest stay the same whichever of them loads first."""
    project = plugin_project(tmp_path, maps=1)
    (project / "recipes" / "sub").mkdir()
    (project / "recipes" / "sub" / "other.toml").write_text(
        PLUGIN_RECIPE.format(name="other", maps=1).replace('"stages/torches.py"', '"../stages/torches.py"')
    )
    pcg("build", "recipes/sub/other.toml", "recipes/lit.toml", "-q", cwd=project)
    first = (project / "exports" / "lit" / "manifest.json").read_bytes()
    pcg("build", "recipes/lit.toml", "-q", "--force", cwd=project)
    assert (project / "exports" / "lit" / "manifest.json").read_bytes() == first


def test_a_plugin_stage_runs_on_a_dask_local_cluster(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    serial = plugin_project(tmp_path / "serial", maps=4)
    dask = plugin_project(tmp_path / "dask", maps=4)
    pcg("build", "recipes", "-q", cwd=serial)
    out = pcg("build", "recipes", "--dask-local", "2", cwd=dask).stdout
    assert "built 4/4 maps" in out
    assert tree_digests(serial / "exports" / "lit") == tree_digests(dask / "exports" / "lit")


def test_a_worker_that_never_loaded_the_plugin_rebuilds_its_params_from_the_source(tmp_path: Path) -> None:
    """What a process pool or a Dask worker does: unpickle the params in a fresh interpreter that
    cannot see the plugin file (it is deleted first) and run them."""
    project = plugin_project(tmp_path)
    spec = load_recipe(project / "recipes" / "lit.toml").by_name["torches"]
    payload = tmp_path / "params.pickle"
    payload.write_bytes(pickle.dumps(spec.params))
    shutil.rmtree(project / "recipes" / "stages")
    script = textwrap.dedent(
        f"""
        import pickle
        import numpy as np
        from pipeline.level import Level, Symbol
        params = pickle.loads(open({str(payload)!r}, "rb").read())
        tiles = np.zeros((6, 9), np.uint8); tiles[3:, :] = 1
        level = Level(tiles=tiles, alphabet=(Symbol("B", "wall", "#000000"), Symbol("W", "floor", "#ffffff")))
        out = params.run([level], np.random.default_rng(1))
        print(type(params).kind, params.spacing, out.properties["torches"])
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    tiles = np.zeros((6, 9), np.uint8)
    tiles[3:, :] = 1
    level = Level(tiles=tiles, alphabet=(Symbol("B", "wall", "#000000"), Symbol("W", "floor", "#ffffff")))
    here = spec.params.run([level], np.random.default_rng(1)).properties["torches"]
    assert proc.stdout.split() == ["demo.torches", "3", str(here)]


def test_editing_a_plugin_makes_its_stages_stale_and_only_them(tmp_path: Path) -> None:
    project = plugin_project(tmp_path, maps=2)
    pcg("build", "recipes", "-q", cwd=project)
    pack = project / "exports" / "lit"
    before = torches_of(pack)
    plugin = project / "recipes" / "stages" / "torches.py"
    # Same code, torches moved half a tile: a change of output the cache must not hide.
    plugin.write_text(plugin.read_text().replace("float(x) + 0.5, float(y) + 0.5", "float(x) + 0.5, float(y) + 1.0"))
    explain = pcg("explain", "recipes/lit.toml", cwd=project).stdout
    assert "plugin code changed (stages/torches.py)" in explain
    out = pcg("build", "recipes", cwd=project).stdout
    assert "torches x2" in out and "dungeon x" not in out  # the dungeon came from the cache
    after = torches_of(pack)
    assert [t["y"] for t in after] == [t["y"] + 4 for t in before]  # 8-pixel tiles: half a tile


def test_a_plugin_edit_every_map_fails_on_stays_stale_until_a_build_passes(tmp_path: Path) -> None:
    """The failed build records the new plugin in the manifest while keeping every map's old
    files: the next build must not take those maps for ones built by the new code."""
    project = plugin_project(tmp_path, maps=2)
    pcg("build", "recipes", "-q", cwd=project)
    plugin = project / "recipes" / "stages" / "torches.py"
    good = plugin.read_text()
    plugin.write_text(good.replace("        level = inputs[0]\n", "        raise ValueError('no torches today')\n", 1))
    for _ in range(2):
        failed = pcg("build", "recipes", cwd=project, check=False)
        assert failed.returncode == 1 and "no torches today" in failed.stderr, failed.stdout + failed.stderr
        # The line is the plugin's as the recipe names it, not its copy's in the cache folder.
        line = good.splitlines().index("        level = inputs[0]") + 1
        assert f"(at stages/torches.py:{line})" in " ".join(failed.stderr.split()), failed.stderr
    explain = pcg("explain", "recipes/lit.toml", cwd=project).stdout
    assert "built before a change the recipe text does not show (plugin code, a file it reads, or a stage version)" in explain, explain
    # Back to the code the maps were built by: they are current again, with nothing to run.
    plugin.write_text(good)
    assert "Nothing to do" in pcg("build", "recipes", cwd=project).stdout
    assert pcg("verify", "lit", cwd=project).returncode == 0


RUN_BUGS = {
    # Every exporter would draw these tiles as nothing; the map fails instead.
    "tiles past the alphabet": (
        "        return Level(tiles=level.tiles,",
        "        return Level(tiles=level.tiles + 7,",
        "returned a Level whose",
    ),
    "sys.exit": ("        level = inputs[0]\n", "        import sys; sys.exit(2)\n", "called sys.exit(2) (at stages/torches.py:{line}): a stage raises"),
    # What no map file can hold: blamed on the plugin's stage, not on the exporter that trips on it.
    "a property of no kind": (
        '"torches": len(torches)}',
        '"torches": object()}',
        "torches returned a Level whose property 'torches' is object, not a number, true/false or text",
    ),
    "a property that is not finite": ('"torches": len(torches)}', '"torches": float("nan")}', "property 'torches' is nan, which no map file can hold"),
    "an object off the map's numbers": (
        "float(x) + 0.5, float(y) + 0.5)",
        "float('nan'), float(y) + 0.5)",
        "('torch_1') has a position, size or point that is not a finite number",
    ),
    "no tiles": (
        "        return Level(tiles=level.tiles, alphabet=level.alphabet, layers=dict(level.layers),",
        "        return Level(tiles=level.tiles[:0, :0], alphabet=level.alphabet,",
        "returned a Level without tiles (0 x 0)",
    ),
    # Raised in the library (Level's own check), but the line to fix is the plugin's.
    "a bad layer": (
        "layers=dict(level.layers),",
        "layers={'junk': np.zeros((3, 3), dtype=np.int32)},",
        "ValueError: layer 'junk' has shape (3, 3), tiles have (30, 40) (at stages/torches.py:{line})",
    ),
}


@pytest.mark.parametrize("case", sorted(RUN_BUGS))
def test_a_plugin_stage_with_a_bug_fails_its_maps_in_one_line_and_the_build_goes_on(tmp_path: Path, case: str) -> None:
    old, new, expected = RUN_BUGS[case]
    project = plugin_project(tmp_path, maps=2)
    write_recipe(project, "small", SMALL_RECIPE)
    plugin = project / "recipes" / "stages" / "torches.py"
    source = plugin.read_text()
    assert old in source
    plugin.write_text(source.replace(old, new, 1))
    line = next(i for i, text in enumerate(plugin.read_text().splitlines(), 1) if new.strip().splitlines()[0] in text)
    proc = pcg("build", "recipes", "-j", "1", cwd=project, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr + proc.stdout, proc.stdout + proc.stderr
    err = " ".join(proc.stderr.split())
    assert "2 maps failed" in err and expected.format(line=line) in err, proc.stderr
    assert not (project / "exports" / "lit" / "map_000.tmj").exists()
    assert (project / "exports" / "small" / "manifest.json").is_file()  # built after the failures


def test_numpy_numbers_a_plugin_returns_are_written_as_numbers(tmp_path: Path) -> None:
    # `mask.sum()` is numpy.int64: it went out untyped in TMX, and the manifest could not take it.
    project = plugin_project(tmp_path, maps=1)
    plugin = project / "recipes" / "stages" / "torches.py"
    plugin.write_text(
        plugin.read_text()
        .replace('"torches": len(torches)}', '"torches": keep.sum(), "share": np.float32(0.5), "lit": np.bool_(True)}')
        .replace('MapObject(f"torch_{k + 1}", "torch", float(x) + 0.5, float(y) + 0.5)', 'MapObject(f"torch_{k + 1}", "torch", np.float32(x) + 0.5, np.int64(y), properties={"k": np.int32(k)})')
    )
    pcg("build", "recipes", "-q", cwd=project)
    doc = json.loads((project / "exports" / "lit" / "map_000.tmj").read_text())
    props = {p["name"]: (p["type"], p["value"]) for p in doc["properties"]}
    assert props["torches"][0] == "int" and props["share"] == ("float", 0.5) and props["lit"] == ("bool", True)
    torches = torches_of(project / "exports" / "lit")
    assert all(p == [{"name": "k", "type": "int", "value": k}] for k, p in enumerate(t["properties"][:1] for t in torches))
    assert all(t["x"] % 8 == 4 and t["y"] % 8 == 0 for t in torches)  # numpy positions, written as numbers
    assert pcg("verify", "lit", cwd=project).returncode == 0


def test_a_plugin_listed_twice_is_said_so(tmp_path: Path) -> None:
    project = plugin_project(tmp_path, maps=1)
    write_recipe(project, "lit", PLUGIN_RECIPE.format(name="lit", maps=1).replace('["stages/torches.py"]', '["stages/torches.py", "./stages/torches.py"]'))
    proc = pcg("build", "recipes", cwd=project, check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == ["error: recipes/lit.toml: pack.plugins.1: './stages/torches.py' is the file of pack.plugins.0 again"], proc.stderr


BROKEN = {
    "syntax": ("def oops(:\n", "line 1: syntax error"),
    "no docstring": (
        "from pipeline.registry import StageParams, stage\n\n@stage('demo.bare', version=1)\nclass Bare(StageParams):\n    pass\n",
        "line 3: RuntimeError: stage 'demo.bare' needs a docstring",
    ),
    "built-in name": (
        "from pipeline.registry import StageParams, stage\n\n@stage('maze.wilson', version=1)\nclass W(StageParams):\n    'Mine.'\n\n    def run(self, inputs, rng):\n        return inputs[0]\n",
        "line 3: RuntimeError: stage kind 'maze.wilson' is a built-in stage: give yours another name",
    ),
    "not a stage class": (
        "from pipeline.registry import stage\n\n@stage('demo.thing', version=1)\nclass Thing:\n    'Not a StageParams.'\n",
        "line 3: TypeError: @stage('demo.thing') decorates the class Thing, which is not a subclass of StageParams",
    ),
    "no run": (
        "from pipeline.registry import StageParams, stage\n\n@stage('demo.idle', version=1)\nclass Idle(StageParams):\n    'Does nothing.'\n",
        "line 3: TypeError: stage 'demo.idle' must define run(self, inputs, rng) -> Level",
    ),
    "import error": ("import numpy\nimport not_a_module_anywhere\n", "line 2: ModuleNotFoundError: No module named 'not_a_module_anywhere'"),
    "no stage": ("X = 1\n", "defines no stage (decorate a StageParams subclass"),
    "sys.exit": ("import sys\nsys.exit(3)\n", "line 2: called sys.exit(3) as it loaded"),
    "parameter type": (
        "import numpy as np\nfrom pipeline.registry import StageParams, stage\n\n@stage('demo.typed', version=1)\n"
        "class Typed(StageParams):\n    'Bad type.'\n    gold: np.ndarray = None\n",
        "line 5: a parameter has type <class 'numpy.ndarray'>, which a recipe cannot give: use int, float, bool, str,",
    ),
    "undefined parameter type": (
        "from pipeline.registry import StageParams, stage\n\n@stage('demo.vague', version=1)\nclass Vague(StageParams):\n"
        "    'Names a type it never imports.'\n    spacing: 'NoSuchType' = 4\n\n    def run(self, inputs, rng):\n        return inputs[0]\n",
        "stage 'demo.vague': a parameter's type, 'NoSuchType', is not defined in the file (import it)",
    ),
    "wiring key as a parameter": (
        "from pipeline.registry import StageParams, stage\n\n@stage('demo.wired', version=1)\nclass Wired(StageParams):\n"
        "    'Takes input.'\n    input: str = 'x'\n\n    def run(self, inputs, rng):\n        return inputs[0]\n",
        "line 3: TypeError: stage 'demo.wired': parameter 'input' is a key recipes use to wire stages (use, input, inputs): rename it",
    ),
    "a file beside it": (
        "from helpers import bonus\n",
        "line 1: ModuleNotFoundError: No module named 'helpers' (a plugin is loaded as one file: it cannot import the files beside it;",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_plugin_is_one_clear_message_naming_the_file(tmp_path: Path, case: str) -> None:
    source, expected = BROKEN[case]
    (tmp_path / "recipes" / "stages").mkdir(parents=True)
    (tmp_path / "recipes" / "stages" / "bad.py").write_text(source)
    (tmp_path / "recipes" / "stages" / "helpers.py").write_text("def bonus():\n    return 7\n")
    write_recipe(tmp_path, "bad", PLUGIN_RECIPE.format(name="bad", maps=1).replace("torches.py", "bad.py"))
    proc = pcg("build", "recipes/bad.toml", cwd=tmp_path, check=False)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert f"recipes/bad.toml: pack.plugins: stages/bad.py: {expected}" in " ".join(proc.stderr.split()), proc.stderr
    # Its stage kind is not reported unknown besides: the one problem is the plugin.
    assert "unknown stage kind" not in proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr  # one line, pydantic's advice and all
    assert not (tmp_path / "exports" / "bad").exists()


def test_a_missing_plugin_file_and_two_files_defining_one_kind_are_recipe_errors(tmp_path: Path) -> None:
    project = plugin_project(tmp_path)
    shutil.copy(TORCHES, project / "recipes" / "stages" / "again.py")
    text = PLUGIN_RECIPE.format(name="twice", maps=1).replace('["stages/torches.py"]', '["stages/torches.py", "stages/again.py", "stages/nope.py"]')
    # The plugin's stages are not checked while it does not load: their stats are unknown.
    text = text.replace("maps = 1\n", 'maps = 1\norder_by = "torches"\n')
    write_recipe(project, "twice", text)
    proc = pcg("build", "recipes/twice.toml", cwd=project, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    err = " ".join(proc.stderr.split())
    assert "recipes/twice.toml: pack.plugins: stages/again.py: stage kind 'demo.torches' is also defined by stages/torches.py" in err
    assert "recipes/twice.toml: pack.plugins: stages/nope.py: no such plugin file" in err
    assert proc.stderr.count("error:") == 2, proc.stderr


def test_a_plugin_belongs_to_the_recipes_that_name_it(tmp_path: Path) -> None:
    """Another recipe of the same build cannot use its kinds by accident of load order."""
    project = plugin_project(tmp_path, maps=1)
    write_recipe(project, "other", PLUGIN_RECIPE.format(name="other", maps=1).replace('plugins = ["stages/torches.py"]\n', ""))
    proc = pcg("build", "recipes", cwd=project, check=False)
    assert proc.returncode == 1
    assert "recipes/other.toml: stage.torches.use: unknown stage kind 'demo.torches'" in " ".join(proc.stderr.split())
    assert (project / "exports" / "lit" / "map_000.tmj").is_file()  # the good recipe still built


def test_stages_and_schema_show_a_projects_plugin_stages(tmp_path: Path) -> None:
    project = plugin_project(tmp_path)
    listed = pcg("stages", "-r", "recipes", cwd=project).stdout
    line = next(line for line in listed.splitlines() if "demo.torches" in line)
    assert line.endswith("(from stages/torches.py)"), line
    assert "demo.torches" not in pcg("stages", cwd=project).stdout
    full = pcg("stages", "demo.torches", "-r", "recipes/lit.toml", cwd=project).stdout
    assert "demo.torches  (version 1, 1 input, from stages/torches.py)" in full
    assert "spacing: int = 4  (>= 1 <= 100)" in full
    schema = json.loads(pcg("schema", "-r", "recipes", cwd=project).stdout)
    stage_table = schema["properties"]["stage"]["additionalProperties"]
    assert "demo.torches" in stage_table["properties"]["use"]["enum"]


def _installed_package(site: Path, body: str) -> dict[str, str]:
    """A package installed the way pip leaves one: its module and a dist-info declaring the
    entry point. Returns the environment that puts it on the path."""
    site.mkdir()
    (site / "mygame_stages.py").write_text(body)
    info = site / "mygame_stages-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mygame-stages\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pcg_pipeline.stages]\nmygame = mygame_stages\n")
    return {**os.environ, "PYTHONPATH": str(site), "COLUMNS": "200", "NO_COLOR": "1"}


def test_an_installed_package_adds_stages_through_its_entry_point(tmp_path: Path) -> None:
    env = _installed_package(tmp_path / "site", TORCHES.read_text().replace("demo.torches", "mygame.torches"))
    write_recipe(tmp_path, "pkg", PLUGIN_RECIPE.format(name="pkg", maps=2).replace('plugins = ["stages/torches.py"]\n', "").replace("demo.torches", "mygame.torches"))
    run = lambda *args: subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)  # noqa: E731
    listed = run("stages")
    assert any(line.split()[:1] == ["mygame.torches"] for line in listed.stdout.splitlines()), listed.stdout + listed.stderr
    shown = run("stages", "mygame.torches")
    assert "mygame.torches  (version 1, 1 input, from mygame_stages)" in shown.stdout, shown.stderr
    built = run("build", "recipes", "-j", "2")
    assert built.returncode == 0, built.stderr
    assert torches_of(tmp_path / "exports" / "pkg")
    manifest = json.loads((tmp_path / "exports" / "pkg" / "manifest.json").read_text())
    module = (tmp_path / "site" / "mygame_stages.py").read_bytes()
    # The package's name and version are in the key with its module: an upgrade rebuilds.
    assert manifest["stages"]["torches"]["plugin"] == hashlib.sha256(b"mygame-stages==1.0\n" + module).hexdigest()


def test_a_broken_installed_package_is_one_clear_message(tmp_path: Path) -> None:
    env = _installed_package(tmp_path / "site", "import numpy\nraise ValueError('half-installed')\n")
    proc = subprocess.run([sys.executable, "-m", "pipeline", "stages"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "plugin mygame = 'mygame_stages' (package mygame-stages), entry point pcg_pipeline.stages: ValueError: half-installed at mygame_stages.py:2" in " ".join(proc.stderr.split())


COMPILED_PLUGIN = '''
import numpy as np
from pipeline.jit import compiled
from pipeline.level import Level
from pipeline.registry import StageParams, stage


@compiled
def _invert(tiles):
    out = tiles.copy()
    for i in range(out.size):
        out.flat[i] = 1 - out.flat[i]
    return out


@stage("demo.invert", version=1)
class Invert(StageParams):
    """Walls become floor and floor becomes walls (a numba kernel of the plugin's own)."""

    arity = (1, 1)

    def run(self, inputs, rng):
        level = inputs[0]
        return Level(tiles=_invert(np.ascontiguousarray(level.tiles)), alphabet=level.alphabet)
'''


def test_a_plugin_with_a_compiled_kernel_runs_where_its_file_is_not(tmp_path: Path) -> None:
    """numba caches a kernel by its source file: a worker without the plugin file still
    compiles and caches it (from the copy named after the plugin's digest)."""
    (tmp_path / "recipes" / "stages").mkdir(parents=True)
    (tmp_path / "recipes" / "stages" / "invert.py").write_text(COMPILED_PLUGIN)
    text = PLUGIN_RECIPE.format(name="inv", maps=1).replace("torches.py", "invert.py").replace('use = "demo.torches"', 'use = "demo.invert"').replace("spacing = 3\n", "")
    write_recipe(tmp_path, "inv", text)
    spec = load_recipe(tmp_path / "recipes" / "inv.toml").by_name["torches"]
    payload = tmp_path / "params.pickle"
    payload.write_bytes(pickle.dumps(spec.params))
    shutil.rmtree(tmp_path / "recipes")
    script = textwrap.dedent(
        f"""
        import pickle
        import numpy as np
        from pipeline.level import Level, Symbol
        params = pickle.loads(open({str(payload)!r}, "rb").read())
        tiles = np.zeros((3, 4), np.uint8); tiles[1, 1:3] = 1
        level = Level(tiles=tiles, alphabet=(Symbol("B", "wall", "#000000"), Symbol("W", "floor", "#ffffff")))
        print(params.run([level], np.random.default_rng(0)).tiles.sum())
        """
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["10"]
    assert list((tmp_path / "numba" / "plugins").glob("*-invert.py"))


def test_a_filter_reading_a_plugins_property_is_checked_only_when_the_plugin_declares_it(tmp_path: Path) -> None:
    """A plugin stage may leave `adds_stats` out: then any name a filter reads after it may be right."""
    plugin_project(tmp_path)
    recipe = tmp_path / "recipes" / "lit.toml"
    recipe.write_text(recipe.read_text().replace('input = "torches"\n', 'input = "keep"\n') + '\n[stage.keep]\nuse = "filter"\ninput = "torches"\nwhere = "torchez > 0"\n')
    with pytest.raises(RecipeError, match=r"stage\.keep\.where: its input has no property 'torchez' \(did you mean 'torches'\?\)"):
        load_recipe(recipe)
    plugin = tmp_path / "recipes" / "stages" / "torches.py"
    plugin.write_text(plugin.read_text().replace('    adds_stats: ClassVar[tuple[str, ...]] = ("torches",)\n', ""))
    keep = next(s for s in load_recipe(recipe).stages if s.name == "keep")
    assert keep.params.read_stats() == {"torchez": "where"}


def test_a_plugin_stage_without_arity_given_an_input_is_told_where_the_number_comes_from(tmp_path: Path) -> None:
    project = plugin_project(tmp_path, maps=1)
    plugin = project / "recipes" / "stages" / "torches.py"
    plugin.write_text(plugin.read_text().replace("    arity: ClassVar[tuple[int, int]] = (1, 1)  # one input Level\n", ""))
    proc = pcg("build", "recipes", cwd=project, check=False)
    assert proc.returncode == 1
    assert "stage.torches.input: demo.torches takes 0 inputs (got 1): its class sets none, which is (0, 0); one input is arity = (1, 1)" in proc.stderr, proc.stderr
