"""`manifest.json`: how every map of a pack was made, and the sha256 of every file it wrote.

Layout (format 1):

- the latest build's environment (`tool_version`, `python`, `numpy`, `bit_generator`, `numba`,
  `pillow`, `zlib`), its recipe (`recipe`: path, sha256, text), `pack` and `stages`;
- `maps`: per map its stem, per stage the cache key and seed tuple, its stats, the sha256 of each
  file, and `recipe` / `environment`: which recipe and environment its files came from;
- `earlier`: the recipes and environments that maps not rebuilt by the latest build (a `--map`
  build, a failed map) still come from, so `pcg verify` rebuilds every map from its own recipe;
- `distinct`, `measures`, `pack_files`, `contact_sheet`: what a build records of the pack as a
  whole, when it has them.

In Python the document is a `Manifest` (`document`), its maps `MapEntry`s with a `StageRecord`
per stage (`entry`), its recipes `RecipeRecord`s (`recipe`): each reads its JSON with `from_json`
(None for anything of another shape: a damaged manifest is no manifest, and the pack rebuilds)
and gives it back with `to_json`, key for key and in the same order, so a manifest read and
written again has the same bytes. Keys the format does not have are not kept.
"""

from __future__ import annotations

from pipeline.building.manifest.document import FORMAT, DistinctRecord, Earlier, Manifest, assemble
from pipeline.building.manifest.entry import MapEntry, StageRecord
from pipeline.building.manifest.environment import ENV_KEYS, environment, environment_id
from pipeline.building.manifest.file import MANIFEST, encode, load_manifest, read_manifest, write_manifest
from pipeline.building.manifest.recipe import RecipeRecord, project_path, recipe_record

__all__ = [
    "ENV_KEYS",
    "FORMAT",
    "MANIFEST",
    "DistinctRecord",
    "Earlier",
    "Manifest",
    "MapEntry",
    "RecipeRecord",
    "StageRecord",
    "assemble",
    "encode",
    "environment",
    "environment_id",
    "load_manifest",
    "project_path",
    "read_manifest",
    "recipe_record",
    "write_manifest",
]
