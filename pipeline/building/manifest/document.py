"""The manifest as a whole: the latest build's environment and recipe, every map's entry, and
what the build records of the pack besides (earlier recipes, pack.distinct, measures, pack
files, the contact sheet)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from pipeline.building.manifest.entry import MapEntry, read_entry
from pipeline.building.manifest.environment import ENV_KEYS, environment_id
from pipeline.building.manifest.reading import IllFormed, or_none, text_table
from pipeline.building.manifest.recipe import RecipeRecord, read_recipe

FORMAT = 1
TOOL = "pcg-pipeline"


@dataclass(frozen=True, slots=True)
class Earlier:
    """The recipes (by sha256) and environments (by id) that maps the latest build did not
    rebuild (a --map build, a failed map) still come from, so that `pcg verify` rebuilds every
    map from its own recipe. Written with both tables, each sorted."""

    recipes: dict[str, RecipeRecord] = field(default_factory=dict)
    # An environment is a table of versions (ENV_KEYS), as `environment()` gives it: its id is
    # the hash of that table, and `pcg verify` compares it key by key with this machine's.
    environments: dict[str, dict[str, str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        # Each recipe without its sha256, which is its key.
        recipes = {sha: {"path": r.path, "text": r.text, "pack": r.pack, "stages": r.stages} for sha, r in self.recipes.items()}
        return {"recipes": recipes, "environments": self.environments}

    @classmethod
    def from_json(cls, data: Any) -> Earlier | None:
        """The block `to_json` gives; None if `data` is not one."""
        return or_none(read_earlier, data)


@dataclass(frozen=True, slots=True)
class DistinctRecord:
    """pack.distinct as the latest build applied it: its rule, and how many leading maps were
    chosen together under it, whose attempts the next build keeps (`plan._plan_choice`)."""

    # Free-form: `distinct.rule`, the recipe's `distinct` table with the stage it compares and
    # the distance's version; only ever compared whole with the recipe's.
    rule: dict[str, Any] | None = None
    through: int = 0

    def to_json(self) -> dict[str, Any]:
        # A build always records a rule; a block without one is read (as no rule) and kept so.
        return {"rule": self.rule, "through": self.through} if self.rule is not None else {"through": self.through}

    @classmethod
    def from_json(cls, data: Any) -> DistinctRecord | None:
        """The block `to_json` gives; None if `data` is not one."""
        return or_none(read_distinct, data)


@dataclass(frozen=True, slots=True)
class Manifest:
    """A pack's `manifest.json` (format 1): how every map was made, and the sha256 of every file
    it wrote (module `pipeline.building.manifest` describes the layout). Frozen: a build makes
    the next manifest from the last with `dataclasses.replace`; `to_json` gives the JSON written,
    key for key and in the same order as manifests have always been written."""

    format: ClassVar[int] = FORMAT

    recipe: RecipeRecord  # the latest build's
    maps: tuple[MapEntry, ...]
    environment: dict[str, str]  # the latest build's versions (ENV_KEYS), at the top level in the JSON
    tool: str = TOOL
    earlier: Earlier | None = None
    distinct: DistinctRecord | None = None  # for a recipe with pack.distinct
    # Free-form: `measures.record`'s JSON, per stage its diversity and playability. A manifest
    # edited by hand may hold anything there: `measures.recorded_at` checks it where it is read.
    measures: dict[str, Any] | None = None
    pack_files: dict[str, str] = field(default_factory=dict)  # files made once per pack (an LDtk project) -> sha256; none: no key
    contact_sheet: str | None = None  # the sha256 of contact_sheet.png, if the pack has one

    @property
    def pack(self) -> dict[str, Any]:
        """The latest recipe's [pack] table (RecipeRecord.pack)."""
        return self.recipe.pack

    @property
    def stages(self) -> dict[str, dict[str, Any]]:
        """The latest recipe's stages, in recipe order (RecipeRecord.stages)."""
        return self.recipe.stages

    def by_index(self) -> dict[int, MapEntry]:
        """The map entries by map index."""
        return {m.index: m for m in self.maps}

    def recipe_of(self, sha256: str) -> RecipeRecord | None:
        """The recorded recipe with this sha256, the latest or an earlier one."""
        if self.recipe.sha256 == sha256:
            return self.recipe
        return self.earlier.recipes.get(sha256) if self.earlier is not None else None

    def recipes(self) -> dict[str, RecipeRecord]:
        """Every recipe recorded, by sha256 (`recipe_of` each)."""
        earlier = self.earlier.recipes if self.earlier is not None else {}
        return {**earlier, self.recipe.sha256: self.recipe}

    def environment_of(self, env_id: str) -> dict[str, str] | None:
        """The recorded environment with this id, the latest or an earlier one."""
        current = {k: self.environment.get(k) for k in ENV_KEYS}  # a key it lacks hashes as None, as it always has
        if environment_id(current) == env_id:  # type: ignore[arg-type]
            return current  # type: ignore[return-value]
        return self.earlier.environments.get(env_id) if self.earlier is not None else None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"format": FORMAT, "tool": self.tool, **self.environment}
        out["recipe"] = {"path": self.recipe.path, "sha256": self.recipe.sha256, "text": self.recipe.text}
        out["pack"] = self.recipe.pack
        out["stages"] = self.recipe.stages
        out["maps"] = [m.to_json() for m in self.maps]
        if self.earlier is not None:
            out["earlier"] = self.earlier.to_json()
        if self.distinct is not None:
            out["distinct"] = self.distinct.to_json()
        if self.measures is not None:
            out["measures"] = self.measures
        if self.pack_files:
            out["pack_files"] = self.pack_files
        if self.contact_sheet is not None:
            out["contact_sheet"] = self.contact_sheet
        return out

    @classmethod
    def from_json(cls, data: Any) -> Manifest | None:
        """The manifest `to_json` gives; None for anything else (another format, a part of
        another shape): the builder then takes the pack for one without a manifest."""
        return or_none(read_document, data)


def read_earlier(data: Any) -> Earlier:
    """The `earlier` block; raises IllFormed (or KeyError, TypeError) if `data` is not one."""
    if type(data) is not dict:
        raise IllFormed
    recipes, environments = data.get("recipes", {}), data.get("environments", {})
    if type(recipes) is not dict or type(environments) is not dict:
        raise IllFormed
    return Earlier(
        {sha: read_recipe({**record, "sha256": sha}) for sha, record in recipes.items()},
        {env_id: text_table(env) for env_id, env in environments.items()},
    )


def read_distinct(data: Any) -> DistinctRecord:
    """The `distinct` block; raises IllFormed if `data` is not one."""
    if type(data) is not dict:
        raise IllFormed
    rule, through = data.get("rule"), data.get("through", 0)
    if not (rule is None or type(rule) is dict) or type(through) is not int:
        raise IllFormed
    return DistinctRecord(rule, through)


def read_document(data: Any) -> Manifest:
    """A whole manifest; raises IllFormed (or KeyError, TypeError) if `data` is not one."""
    if type(data) is not dict or type(data.get("format")) is not int or data["format"] != FORMAT:
        raise IllFormed
    recipe, maps, tool = data["recipe"], data["maps"], data.get("tool", TOOL)
    if type(recipe) is not dict or type(maps) is not list or type(tool) is not str:
        raise IllFormed
    env = {k: data[k] for k in ENV_KEYS if k in data}
    measures, pack_files, sheet = data.get("measures"), data.get("pack_files", {}), data.get("contact_sheet")
    # Each optional block may be absent; present, it has its shape (a null has none).
    if ("measures" in data and type(measures) is not dict) or not (sheet is None or type(sheet) is str):
        raise IllFormed
    return Manifest(
        recipe=read_recipe({"path": recipe["path"], "sha256": recipe["sha256"], "text": recipe["text"], "pack": data["pack"], "stages": data["stages"]}),
        maps=tuple([read_entry(m) for m in maps]),
        environment=text_table(env),
        tool=tool,
        earlier=read_earlier(data["earlier"]) if "earlier" in data else None,
        distinct=read_distinct(data["distinct"]) if "distinct" in data else None,
        measures=measures,
        pack_files=text_table(pack_files),
        contact_sheet=sheet,
    )


def assemble(recipe: RecipeRecord, maps: list[MapEntry], previous: Manifest | None, env: dict[str, str]) -> Manifest:
    """A manifest for the latest build's recipe record, env and map entries; `previous` supplies
    the records of recipes and environments that retained entries still come from."""
    env_id = environment_id(env)
    recipes: dict[str, RecipeRecord] = {}
    environments: dict[str, dict[str, str]] = {}
    for entry in maps:
        if entry.recipe != recipe.sha256 and previous is not None:
            old = previous.recipe_of(entry.recipe)
            if old is not None:
                recipes[entry.recipe] = old
        if entry.environment != env_id and previous is not None:
            old_env = previous.environment_of(entry.environment)
            if old_env is not None:
                environments[entry.environment] = old_env
    earlier = Earlier(dict(sorted(recipes.items())), dict(sorted(environments.items()))) if recipes or environments else None
    return Manifest(recipe=recipe, maps=tuple(maps), environment=env, earlier=earlier)
