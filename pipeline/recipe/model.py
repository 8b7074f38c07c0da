"""The recipe's model: the `[pack]` table, each `[stage.NAME]` table as a StageSpec, and the
Recipe they make, with what the chain of stages implies (what each stage reads, what authored
properties it hands on). Loading and checking a recipe file is `pipeline.recipe.load`'s."""

from __future__ import annotations

import hashlib
import os
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from pipeline import registry
from pipeline.errors import KeyedError, toml_text
from pipeline.paths import check_plain_name
from pipeline.registry import Floor, StageParams


_MAP_SPEC = re.compile(r"^(0[1-9][0-9]?)?d?$")

# Every build plans each map (its keys, why it is stale) and keeps its manifest entry in memory.
# Measured on 2 cores with a two-stage recipe: 100,000 maps plan in 3.6 s (first build) to 6.8 s
# (no-op rebuild, reading a 150 MB manifest) at under 0.7 GB, and a no-op `pcg build` takes 12 s;
# both grow linearly, so 1,000,000 maps would take over a minute and several GB before anything
# is built or shown. Bigger packs are split into several recipes.
MAX_MAPS = 100_000


SEED_LIMIT = 2**63  # seeds are signed 64-bit in TOML
# A map index as a [pack.seeds] key: no leading zeros, so that "7" and "07" cannot both name map 7.
MapKey = Annotated[str, StringConstraints(pattern=r"^(0|[1-9][0-9]{0,5})$")]
Seed = Annotated[int, Field(ge=0, lt=SEED_LIMIT)]


class Reroll(BaseModel):
    """A `[pack.seeds]` entry written by `pcg reroll`: the map's seed and how often it was re-rolled."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seed: Seed = Field(description="The map's seed in place of the pack seed.")
    rerolls: int = Field(ge=1, description="How many times `pcg reroll` gave the map a new seed (the next re-roll derives from it).")


class Distinct(BaseModel):
    """`distinct = 0.1` or `[pack.distinct]`: no map closer than `min` to an earlier one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min: float = Field(gt=0, le=1, description="The least distance a map keeps from every earlier map (0: alike, 1: nothing alike), e.g. 0.3.")
    measure: Literal["tiles", "path"] = Field(
        "tiles", description='"tiles": the share of tiles that differ; "path": how differently the way from spawn to exit runs.'
    )
    stage: str | None = Field(None, description="The stage whose maps are compared; unset: the first export stage's input.")
    attempts: int = Field(20, ge=1, le=10_000, description="How many of a map's attempts (those its filters pass) are compared before it fails.")


def _number_or_table(schema: dict[str, Any]) -> None:
    """`distinct`'s JSON schema: the table, or the distance alone (TOML has no null)."""
    schema["anyOf"] = [s for s in schema["anyOf"] if s.get("type") != "null"] + [{"type": "number", "exclusiveMinimum": 0, "maximum": 1}]


def _distinct_shorthand(value: Any) -> Any:
    """`distinct = 0.1` is `[pack.distinct] min = 0.1`."""
    return {"min": value} if isinstance(value, (int, float)) and not isinstance(value, bool) else value


class PackConfig(BaseModel):
    """The `[pack]` table."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(
        description="Folder name of the pack under exports/.",
        json_schema_extra={"pattern": r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$"},  # for editors; the validator explains
    )
    seed: int = Field(ge=0, lt=2**63, description="Pack seed; map i's streams derive from (i, stage, seed).")
    maps: int = Field(
        1,
        ge=1,
        description="Number of maps in the pack.",
        json_schema_extra={"maximum": MAX_MAPS},  # for editors; the validator explains
    )
    map_name: str = Field("map_{map:03d}", description="File name of each map (without extension); {map} is its index.")
    description: str = Field("", description="Free text, copied into the manifest.")
    order_by: str | None = Field(
        None,
        pattern=r"^-?[^\s-]\S*$",
        description=(
            "A map stat (e.g. \"difficulty\"; \"-difficulty\" for high to low), or a stage's (\"caves.difficulty\"):"
            " write levels.json listing the maps in that order."
        ),
    )
    contact_sheet: Union[bool, str] = Field(
        True,
        description=(
            "Write contact_sheet.png: every map's preview with its index and key stats; or the name of the export stage"
            " whose previews it shows (true: the first that writes them)."
        ),
    )
    contact_stats: tuple[str, ...] | None = Field(
        None,
        description=(
            "Stats under each thumbnail of the contact sheet, of the map it shows or a stage's (\"caves.regions\");"
            " unset: the order_by stat, then the first of a few common ones."
        ),
    )
    plugins: tuple[str, ...] = Field(
        (), description="Python files defining stages of your own with @stage (relative to the recipe), e.g. [\"stages/vaults.py\"]."
    )
    seeds: dict[MapKey, Seed | Reroll] = Field(
        default_factory=dict,
        # Left out of the manifest's record when empty, so packs without overrides record what they always did.
        exclude_if=lambda seeds: not seeds,
        json_schema_extra={"additionalProperties": False},  # for editors: keys are map indices only
        description=(
            "Per-map seed overrides (`pcg pin`, `pcg reroll`, `pcg unpin` write them): map index = seed, or"
            " { seed, rerolls } for a re-rolled map. Such a map keeps its seed when the pack seed changes."
        ),
    )

    distinct: Distinct | None = Field(
        None,
        exclude_if=lambda distinct: distinct is None,  # packs without it record what they always did
        json_schema_extra=lambda schema: _number_or_table(schema),  # for editors: `distinct = 0.2` too
        description=(
            "Redraw a map closer than this to an earlier map of the pack: a distance (0.3), or a table"
            " {min, measure = \"tiles\" | \"path\", stage, attempts}."
        ),
    )

    @field_validator("distinct", mode="before")
    @classmethod
    def _distinct_number(cls, value: Any) -> Any:
        return _distinct_shorthand(value)

    @field_validator("name")
    @classmethod
    def _plain_name(cls, value: str) -> str:
        return check_plain_name(value)

    @field_validator("maps")
    @classmethod
    def _at_most(cls, value: int) -> int:
        if value > MAX_MAPS:
            raise ValueError(
                f"at most {MAX_MAPS:,} maps per pack, since every build plans and records each map in memory:"
                " split bigger packs into several recipes"
            )
        return value

    @field_validator("plugins")
    @classmethod
    def _plugins_once(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        first: dict[str, int] = {}
        for i, name in enumerate(value):
            if os.path.normpath(name) in first:
                raise KeyedError(str(i), f"{name!r} is the file of pack.plugins.{first[os.path.normpath(name)]} again")
            first[os.path.normpath(name)] = i
        return value

    @field_validator("map_name")
    @classmethod
    def _map_name(cls, value: str) -> str:
        # Only `{map}`, `{map:d}` or `{map:0Nd}`: any other field, index, attribute, conversion or
        # format spec can fail (`{map[0]}`) or give several maps one file name (`{map!s:.1}`).
        try:
            fields = [(name, spec, conv) for _, name, spec, conv in string.Formatter().parse(value) if name is not None]
        except ValueError as exc:
            raise ValueError(f"must be a file name pattern using only {{map}} ({exc})") from None
        if not fields:
            raise ValueError("must contain {map} so that every map gets its own file")
        for name, spec, conv in fields:
            if name != "map" or conv is not None or not _MAP_SPEC.match(spec):
                shown = "{" + name + (f"!{conv}" if conv else "") + (f":{spec}" if spec else "") + "}"
                raise ValueError(f"must be a file name pattern using only {{map}}, {{map:d}} or {{map:0Nd}} (not {shown})")
        for index in range(10):  # com{map} is a Windows device name from map 1 on
            check_plain_name(value.format(map=index))
        return value

    @field_validator("seeds", mode="before")
    @classmethod
    def _seed_table(cls, value: Any) -> Any:
        """One clear line per mistake, under the map's key (the typed check would report each
        mistake twice, once per form an entry may take)."""
        if not isinstance(value, dict):
            return value
        for key, entry in value.items():
            if not re.fullmatch(r"0|[1-9][0-9]{0,5}", key) or int(key) >= MAX_MAPS:
                raise KeyedError(key, f"keys are map indices 0..{MAX_MAPS - 1}, written without leading zeros")
            if isinstance(entry, dict):
                extra = sorted(set(entry) - {"seed", "rerolls"})
                if extra or "seed" not in entry or "rerolls" not in entry:
                    raise KeyedError(key, f"a re-rolled map is {{ seed = N, rerolls = K }} (got keys {', '.join(sorted(entry))})")
                seed, rerolls = entry["seed"], entry["rerolls"]
                if not _is_int(rerolls) or rerolls < 1:
                    raise KeyedError(f"{key}.rerolls", f"must be an integer >= 1 (got {toml_text(rerolls)})")
            else:
                seed = entry
            if not _is_int(seed) or not 0 <= seed < SEED_LIMIT:
                where = f"{key}.seed" if isinstance(entry, dict) else key
                raise KeyedError(where, f"a seed is an integer 0..2**63-1 (got {toml_text(seed)})")
        return value

    def stem(self, map_index: int) -> str:
        return self.map_name.format(map=map_index)

    def floor(self, map_index: int) -> Floor:
        """Where map `map_index` stands in the pack, for the stages that join maps."""
        above = self.stem(map_index - 1) if map_index > 0 else None
        below = self.stem(map_index + 1) if map_index + 1 < self.maps else None
        return Floor(map_index, self.maps, self.seed, above, below)

    def seed_of(self, map_index: int) -> int:
        """Map `map_index`'s seed: its `[pack.seeds]` override, else the pack seed."""
        override = self.seeds.get(str(map_index))
        if override is None:
            return self.seed
        return override if isinstance(override, int) else override.seed


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def recorded_seed(pack: dict[str, Any], map_index: int) -> int | None:
    """A map's seed as a manifest's record of `[pack]` has it (the JSON form of PackConfig)."""
    override = pack.get("seeds", {}).get(str(map_index))
    if override is None:
        return pack.get("seed")
    return override if isinstance(override, int) else override.get("seed")


@dataclass(frozen=True)
class StageSpec:
    """One `[stage.NAME]` table, validated."""

    name: str
    params: StageParams
    inputs: tuple[str, ...]

    @property
    def kind(self) -> str:
        return self.params.kind

    @property
    def is_exporter(self) -> bool:
        return registry.is_exporter(type(self.params))


@dataclass(frozen=True)
class Recipe:
    path: str  # as the user named it; used in every message
    text: str
    pack: PackConfig
    stages: tuple[StageSpec, ...]  # in an order where inputs come first

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    @cached_property
    def by_name(self) -> dict[str, StageSpec]:
        return {s.name: s for s in self.stages}

    @cached_property
    def exporters(self) -> tuple[StageSpec, ...]:
        return tuple(s for s in self.stages if s.is_exporter)

    def upstream(self, name: str) -> list[StageSpec]:
        """`name` and every stage it depends on, inputs first."""
        return upstream(self.stages, name)

    @cached_property
    def handed_on(self) -> dict[str, tuple[str, ...]]:
        """For each stage that starts its stats afresh (`passes_stats = False`), the authored map
        properties of the stages before it (`authored_reaching`), which the build hands on from
        its inputs: a hand-made map's `author` outlives a rule program run on it. Only stages
        with some."""
        out = {}
        for spec in self.stages:
            if spec.inputs and not spec.is_exporter and not spec.params.passes_stats:
                names = authored_reaching(self.stages, spec.name)
                if names:
                    out[spec.name] = names
        return out

    @cached_property
    def unused(self) -> tuple[str, ...]:
        """The stages no export stage reads, directly or through other stages: they never run
        (a filter whose `where` is misspelt would otherwise pass unnoticed)."""
        needed = {s.name for e in self.exporters for s in self.upstream(e.name)}
        return tuple(s.name for s in self.stages if s.name not in needed)

    def warnings(self) -> list[str]:
        """What is allowed but most likely a mistake, one line each."""
        lines = [f"{self.path}: stage.{name}: no export stage reads it, directly or through other stages, so it never runs" for name in self.unused]
        # Stages that share a file (three exporters of one tileset) share its warnings: once each.
        sharers: dict[str, list[str]] = {}
        for spec in self.stages:
            before = [(s.name, s.params) for s in self.upstream(spec.name) if s.name != spec.name]
            for warning in [*spec.params.warnings(), *spec.params.warnings_after(before)]:
                sharers.setdefault(warning, []).append(spec.name)
        for warning, names in sharers.items():
            also = f" (also {', '.join(f'stage.{n}' for n in names[1:])})" if len(names) > 1 else ""
            lines.append(f"{self.path}: stage.{names[0]}.{warning}{also}")
        lines += self._replaced_properties()
        return lines

    def _replaced_properties(self) -> list[str]:
        """A stat a stage adds under the name of a hand-made map's own property replaces it."""
        lines = []
        for spec in self.stages:
            if spec.inputs and not spec.is_exporter:
                for stat, source in authored_replaced(self.stages, spec.name):
                    lines.append(
                        f"{self.path}: stage.{spec.name}: adds the stat {stat!r}, which replaces the map property of that name"
                        f" written by hand (stage.{source}): rename the property, or read the stat instead"
                    )
        return lines


def upstream(stages: Sequence[StageSpec], name: str) -> list[StageSpec]:
    """`name` and every stage it depends on among `stages` (ordered inputs first), in that order."""
    needed = {name}
    for spec in reversed(stages):
        if spec.name in needed:
            needed.update(spec.inputs)
    return [s for s in stages if s.name in needed]


def distinct_stage(recipe: Recipe) -> str:
    """The stage whose maps `pack.distinct` compares: its own, else the first exporter's input."""
    distinct = recipe.pack.distinct
    if distinct is not None and distinct.stage is not None:
        return distinct.stage
    return recipe.exporters[0].inputs[0]


def authored_reaching(specs: Sequence[StageSpec], name: str, stats_only: bool = False) -> tuple[str, ...]:
    """The authored map properties (`authored_stats`) of every stage before stage `name`, in
    recipe order: what a stage that starts its stats afresh still hands on (`stats_only`: those
    that are also stats, `added_stats`, which leaves out object references)."""
    before = _before(specs, name)
    found = [
        stat
        for spec in specs
        if spec.name in before
        for stat in spec.params.authored_stats()
        if not stats_only or stat in (spec.params.added_stats() or ())
    ]
    return tuple(dict.fromkeys(found))


def authored_replaced(specs: Sequence[StageSpec], name: str) -> list[tuple[str, str]]:
    """(stat, stage that authored it) for each stat stage `name` adds under the name of a map
    property a person wrote (`authored_stats`) that reaches it: the stage's value replaces it."""
    adds = set(next(s for s in specs if s.name == name).params.added_stats() or ())
    before = _before(specs, name)
    out = []
    for stat in authored_reaching(specs, name):
        if stat in adds:
            source = next(s.name for s in specs if s.name in before and stat in s.params.authored_stats())
            out.append((stat, source))
    return out


def _before(specs: Sequence[StageSpec], name: str) -> set[str]:
    """The stages stage `name` reads, directly or through others (`specs` in recipe order)."""
    return {spec.name for spec in upstream(specs, name)} - {name}
