"""The recipe as a manifest keeps it: enough to build its maps again (`pcg verify`) and to say
what changed since (planning)."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.building.manifest.reading import IllFormed, or_none
from pipeline.recipe.model import Recipe
from pipeline.registry import StageParams, stage_config


@dataclass(frozen=True, slots=True)
class RecipeRecord:
    """One recipe a pack's maps were built from: where it is, its text and the sha256 of that
    text, and what the text does not show (each stage's configuration, with plugin code and the
    files it reads).

    In a manifest the latest build's recipe is split over the top level (`recipe`: path, sha256,
    text; then `pack` and `stages`), and each earlier one sits under `earlier.recipes`, keyed by
    its sha256. `to_json` gives the record whole: path, sha256, text, pack, stages."""

    path: str  # relative to the project, the folder that holds exports/ (`project_path`)
    sha256: str
    text: str
    # Free-form, kept as the JSON they are: `pack` is the recipe's [pack] table as PackConfig
    # writes it, and each of `stages` is what `stage_config` records of a stage (kind, version,
    # inputs, params, and embeds, files or plugin as the kind has them). Planning compares them
    # whole with the recipe's, and reads the few keys it explains changes by.
    pack: dict[str, Any]
    stages: dict[str, dict[str, Any]]

    @property
    def config_id(self) -> str:
        """What a map was built from, in one string: the recipe text and every stage's recorded
        configuration, which also holds what the text does not (plugin code, files read). A plugin
        edited under an unchanged recipe changes it, so a map kept from before, when every map failed
        after the edit, is not taken for one built from the edit."""
        return hashlib.sha256(json.dumps([self.sha256, self.stages], sort_keys=True).encode()).hexdigest()[:16]

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256, "text": self.text, "pack": self.pack, "stages": self.stages}

    @classmethod
    def from_json(cls, data: Any) -> RecipeRecord | None:
        """The record `to_json` gives; None if `data` is not one."""
        return or_none(read_recipe, data)


def read_recipe(data: Any) -> RecipeRecord:
    """A recipe record (`RecipeRecord.to_json`'s form); raises IllFormed or KeyError if it is not one."""
    if type(data) is not dict:
        raise IllFormed
    path, sha256, text, pack, stages = data["path"], data["sha256"], data["text"], data["pack"], data["stages"]
    if not (type(path) is str and type(sha256) is str and type(text) is str and type(pack) is dict and type(stages) is dict):
        raise IllFormed
    for config in stages.values():
        if type(config) is not dict:
            raise IllFormed
    return RecipeRecord(path, sha256, text, pack, stages)


def project_path(recipe: Recipe, project_root: Path) -> str:
    """The recipe's path relative to the project (the folder that holds exports/), so that the
    manifest does not depend on how the user spelled it."""
    return Path(os.path.relpath(os.path.abspath(recipe.path), os.path.abspath(project_root))).as_posix()


def recipe_record(recipe: Recipe, project_root: Path) -> RecipeRecord:
    """The recipe as the manifest keeps it."""
    return RecipeRecord(
        path=project_path(recipe, project_root),
        sha256=recipe.sha256,
        text=recipe.text,
        pack=recipe.pack.model_dump(mode="json"),
        # The stage's identity as its cache key has it (kind, version, params, embedded stages,
        # files read), plus where its inputs come from.
        stages={s.name: _stage_record(s.params, s.inputs) for s in recipe.stages},
    )


def _stage_record(params: StageParams, inputs: tuple[str, ...] | list[str]) -> dict[str, Any]:
    config = stage_config(params)
    # Inputs after the version, as manifests have always listed them.
    return {"kind": config.pop("kind"), "version": config.pop("version"), "inputs": list(inputs), **config}
