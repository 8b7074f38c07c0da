"""A map's entry in the manifest: how it was made, and the sha256 of every file it wrote."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pipeline.building.manifest.reading import IllFormed, or_none, text_table

# Map entries and their stages are slotted but not frozen: a frozen dataclass sets each field
# through object.__setattr__, which made reading a 1,000-map manifest 2 ms (a sixth) slower, on
# every build. They are read-only all the same: a build keeps the entries of maps it does not
# rebuild, shared between the last manifest and the next, and makes new ones for the others.


@dataclass(slots=True)
class StageRecord:
    """One stage of one map: the stage's cache key and seed tuple (`seeds.stage_seed`); for an
    export stage, the files it wrote (paths in the pack folder); for a stage whose Level an
    export stage writes, that Level's stats."""

    # Lists, as the JSON has them: copying each map's into tuples made reading a 1,000-map
    # manifest 0.5 ms slower, and a seed is made a tuple where a key is made of it.
    key: str
    seed: list[int]
    files: list[str] | None = None  # export stages only (None: not one)
    # Free-form: each stage kind reports stats of its own, of any JSON type (numbers, text such
    # as a maze's "entrance": "1,1"); they are shown, sorted by and averaged, never relied on.
    stats: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "seed": self.seed}
        if self.files is not None:
            out["files"] = self.files
        if self.stats is not None:
            out["stats"] = self.stats
        return out

    @classmethod
    def from_json(cls, data: Any) -> StageRecord | None:
        """The record `to_json` gives; None if `data` is not one."""
        return or_none(read_stage, data)


@dataclass(slots=True)
class MapEntry:
    """One map of a pack: its index and file stem, per stage its key and seed (`stages`), the
    sha256 of each file it has in the pack (`files`), and where those files came from: the
    recipe (`recipe`, a sha256: `Manifest.recipe_of`), its configuration (`config`) and the
    environment (`environment`, an id: `Manifest.environment_of`). A map rebuilt by a --map build,
    or kept when its rebuild failed, may come from other ones than the pack's latest build."""

    index: int
    stem: str
    recipe: str
    environment: str
    stages: dict[str, StageRecord]
    # Free-form, as StageRecord.stats: the stats of every export stage's input merged (the last
    # one's win a name both have), what `order_by` and the gallery read without a stage name.
    stats: dict[str, Any]
    files: dict[str, str]  # path in the pack folder -> sha256
    attempt: int = 0  # the attempt a filter or pack.distinct kept (seeds.stage_seed); 0, the first, is not written
    config: str | None = None  # RecipeRecord.config_id of the recipe it was built from; None in manifests from before it was recorded

    def key_of(self, stage: str) -> str | None:
        """The cache key of stage `stage` of the map; None if the entry has no such stage."""
        record = self.stages.get(stage)
        return record.key if record is not None else None

    def stats_of(self, stage: str) -> dict[str, Any] | None:
        """The stats of stage `stage`'s Level; None if the entry records none (a stage no
        export stage writes, or no such stage)."""
        record = self.stages.get(stage)
        return record.stats if record is not None else None

    def to_json(self) -> dict[str, Any]:
        # Keys in the order manifests have always had them.
        out: dict[str, Any] = {"index": self.index, "stem": self.stem}
        if self.attempt:
            out["attempt"] = self.attempt
        out["recipe"] = self.recipe
        if self.config is not None:
            out["config"] = self.config
        out["environment"] = self.environment
        out["stages"] = {name: stage.to_json() for name, stage in self.stages.items()}
        out["stats"] = self.stats
        out["files"] = self.files
        return out

    @classmethod
    def from_json(cls, data: Any) -> MapEntry | None:
        """The entry `to_json` gives; None if `data` is not one."""
        return or_none(read_entry, data)


def read_stage(data: Any) -> StageRecord:
    """A stage record; raises IllFormed or KeyError if `data` is not one."""
    if type(data) is not dict:
        raise IllFormed
    key, seed, files, stats = data["key"], data["seed"], data.get("files"), data.get("stats")
    if type(key) is not str or type(seed) is not list or not (stats is None or type(stats) is dict):
        raise IllFormed
    for part in seed:
        if type(part) is not int:
            raise IllFormed
    if files is not None:
        if type(files) is not list:
            raise IllFormed
        for path in files:
            if type(path) is not str:
                raise IllFormed
    return StageRecord(key, seed, files, stats)


def read_entry(data: Any) -> MapEntry:
    """A map entry; raises IllFormed or KeyError if `data` is not one. Every build of a pack reads
    each of its maps' entries: this is kept to plain checks, in one pass."""
    if type(data) is not dict:
        raise IllFormed
    index, stem, recipe, environment = data["index"], data["stem"], data["recipe"], data["environment"]
    stages, stats, files = data["stages"], data["stats"], data["files"]
    attempt, config = data.get("attempt", 0), data.get("config")
    if not (
        type(index) is int and type(stem) is str and type(recipe) is str and type(environment) is str
        and type(stages) is dict and type(stats) is dict and type(attempt) is int and (config is None or type(config) is str)
    ):
        raise IllFormed
    return MapEntry(
        index, stem, recipe, environment, {name: read_stage(stage) for name, stage in stages.items()}, stats, text_table(files), attempt, config
    )
