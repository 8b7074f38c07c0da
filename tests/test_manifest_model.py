"""The manifest's classes (pipeline.building.manifest): a manifest a build wrote reads into them and
writes back to the same bytes, every optional part included; one of another shape reads as
None, "no manifest", whatever part is wrong."""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path
from typing import Any, Callable

import pytest

import pipeline
from conftest import write_recipe
from pipeline.building.manifest import (
    ENV_KEYS, Manifest, MapEntry, RecipeRecord, StageRecord, encode, environment_id, read_manifest, write_manifest,
)

# Small mazes drawn apart (pack.distinct: a map redrawn records its attempt, the manifest its
# rule and measures), as TMX and as an LDtk project (a pack file).
RECIPE = """\
[pack]
name = "typed"
seed = 9
maps = 6
distinct = 0.1

[stage.maze]
use = "maze.backtracker"
cells = [6, 6]

[stage.tmx]
use = "export.tmx"
input = "maze"
tile_size = 8

[stage.ldtk]
use = "export.ldtk"
input = "maze"
tileset_name = "ldtk_symbols"
"""


def build(project: Path, maps: list[int] | None = None) -> None:
    result = pipeline.build(project / "recipes", out=project / "exports", cache=project / ".pcg-cache", jobs=1, maps=maps)
    assert result.ok, result


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The manifest of a pack with every part a manifest has: maps from an earlier recipe (a
    --map build after the seed changed) and from an earlier environment (numpy 1.0.0, as if
    an older one had built them), an attempt, pack.distinct, measures, pack files, a sheet."""
    project = tmp_path_factory.mktemp("typed")
    write_recipe(project, "typed", RECIPE)
    build(project)
    path = project / "exports" / "typed" / "manifest.json"
    data = json.loads(path.read_text())
    data["numpy"] = "1.0.0"
    older = environment_id({k: data[k] for k in ENV_KEYS})
    for entry in data["maps"]:
        entry["environment"] = older
    path.write_text(json.dumps(data))
    build(project)  # nothing to build: the manifest is written again, the environment kept as earlier
    write_recipe(project, "typed", RECIPE.replace("seed = 9", "seed = 10"))
    build(project, maps=[0])
    return path


def test_a_built_manifest_reads_and_writes_back_byte_for_byte(built: Path, tmp_path: Path) -> None:
    data = json.loads(built.read_text())
    assert {"earlier", "distinct", "measures", "pack_files", "contact_sheet"} <= data.keys()
    assert data["earlier"]["recipes"] and data["earlier"]["environments"]
    assert any("attempt" in m for m in data["maps"]) and all("config" in m for m in data["maps"])
    assert len({m["recipe"] for m in data["maps"]}) == 2

    manifest = read_manifest(built)
    assert manifest is not None
    assert encode(manifest) == built.read_bytes()
    assert list(manifest.to_json()) == list(data)  # the keys in the file's order
    copied = tmp_path / "manifest.json"
    assert write_manifest(copied, manifest) and copied.read_bytes() == built.read_bytes()
    # Each part alone, too.
    for m, entry in zip(data["maps"], manifest.maps):
        assert MapEntry.from_json(m) == entry and json.dumps(entry.to_json()) == json.dumps(m)
        for name, stage in m["stages"].items():
            assert StageRecord.from_json(stage) == entry.stages[name]
    record = {**data["recipe"], "pack": data["pack"], "stages": data["stages"]}
    assert RecipeRecord.from_json(record) == manifest.recipe and json.dumps(manifest.recipe.to_json()) == json.dumps(record)
    # A build's measuring takes the manifest to a worker process.
    assert pickle.loads(pickle.dumps(manifest)) == manifest


def test_the_typed_manifest_answers_what_the_builder_asks(built: Path) -> None:
    data = json.loads(built.read_text())
    manifest = read_manifest(built)
    assert manifest is not None
    first, later = manifest.maps[0], manifest.maps[1]
    assert first.recipe == manifest.recipe.sha256 != later.recipe
    assert manifest.recipe_of(later.recipe) == manifest.earlier.recipes[later.recipe]  # type: ignore[union-attr]
    assert manifest.recipe_of("0" * 64) is None
    assert manifest.environment_of(later.environment) == data["earlier"]["environments"][later.environment]
    assert manifest.environment_of(first.environment) == {k: data[k] for k in ENV_KEYS}
    assert manifest.stages is manifest.recipe.stages and manifest.pack["name"] == "typed"
    assert first.key_of("maze") == data["maps"][0]["stages"]["maze"]["key"] and first.key_of("nothing") is None
    assert first.stats_of("maze") == data["maps"][0]["stages"]["maze"]["stats"] and first.stats_of("tmx") is None
    assert manifest.distinct is not None and manifest.distinct.through == data["distinct"]["through"]


Edit = Callable[[dict[str, Any]], None]


def _set(*path: Any, to: Any) -> Edit:
    """An edit that sets the value at `path` (keys and list indices) to `to`."""

    def edit(data: dict[str, Any]) -> None:
        for key in path[:-1]:
            data = data[key]
        data[path[-1]] = to

    return edit


def _drop(*path: Any) -> Edit:
    """An edit that deletes the key at `path`."""

    def edit(data: dict[str, Any]) -> None:
        for key in path[:-1]:
            data = data[key]
        del data[path[-1]]

    return edit


# `*` stands for the one key of an earlier table, a sha256 or an id.
ILL_FORMED = {
    "another format": _set("format", to=2),
    "a map index that is text": _set("maps", 1, "index", to="1"),
    "a map index that is a bool": _set("maps", 1, "index", to=True),
    "a map without its stem": _drop("maps", 1, "stem"),
    "a map without files": _drop("maps", 1, "files"),
    "a file's sha256 that is a number": _set("maps", 1, "files", "map_001.tmx", to=5),
    "a map's stats that are a list": _set("maps", 1, "stats", to=[]),
    "an attempt that is text": _set("maps", 1, "attempt", to="1"),
    "a config that is a number": _set("maps", 1, "config", to=7),
    "a stage without its key": _drop("maps", 1, "stages", "maze", "key"),
    "a seed with text in it": _set("maps", 1, "stages", "maze", "seed", 0, to="x"),
    "a stage's files that are text": _set("maps", 1, "stages", "tmx", "files", to="map_001.tmx"),
    "a map that is a list": _set("maps", 1, to=[]),
    "maps that are an object": _set("maps", to={}),
    "no recipe": _drop("recipe"),
    "a recipe text that is a number": _set("recipe", "text", to=3),
    "no stages": _drop("stages"),
    "a stage configuration that is text": _set("stages", "maze", to="maze.backtracker"),
    "a pack that is a list": _set("pack", to=[]),
    "earlier recipes that are a list": _set("earlier", "recipes", to=[]),
    "an earlier recipe without its text": _drop("earlier", "recipes", "*", "text"),
    "an earlier environment that is text": _set("earlier", "environments", "*", to="numpy 1.0.0"),
    "a distinct through that is text": _set("distinct", "through", to="6"),
    "a distinct rule that is a list": _set("distinct", "rule", to=[]),
    "measures that are a null": _set("measures", to=None),
    "a pack file's sha256 that is a number": _set("pack_files", "ldtk/world.ldtk", to=0),
    "a contact sheet digest that is a number": _set("contact_sheet", to=1),
    "a version that is a number": _set("numpy", to=2),
}


@pytest.mark.parametrize("edit", ILL_FORMED.values(), ids=ILL_FORMED.keys())
def test_a_manifest_of_another_shape_reads_as_none(built: Path, tmp_path: Path, edit: Edit) -> None:
    data = json.loads(built.read_text())
    for block in ("recipes", "environments"):
        table = data["earlier"][block]
        table["*"] = table.pop(next(iter(table)))
    edited = copy.deepcopy(data)
    edit(edited)
    assert json.dumps(edited) != json.dumps(data)  # (a bool equals its int)
    assert Manifest.from_json(data) is not None and Manifest.from_json(edited) is None
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(edited))
    assert read_manifest(path) is None


def test_a_part_of_another_shape_reads_as_none() -> None:
    assert MapEntry.from_json({"index": 0}) is None
    assert MapEntry.from_json([]) is None
    assert StageRecord.from_json({"key": "k", "seed": [1, 2.5]}) is None
    assert StageRecord.from_json({"key": "k", "seed": [1, 2]}) == StageRecord("k", [1, 2])
    assert RecipeRecord.from_json({"path": "r.toml", "sha256": "s", "text": "t", "pack": {}}) is None
    assert Manifest.from_json(None) is None and Manifest.from_json("manifest") is None
