"""Planning: every stage's cache key from configuration alone, and what is stale and why.

Nothing runs here, so `pcg explain` and `pcg build` agree on what a build will do before it starts.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Iterator, cast

from pipeline.building.cache import LevelCache
from pipeline.building.distinct import rule as distinct_rule
from pipeline.building.journal import Journal
from pipeline.level import PropertyValue
from pipeline.building.manifest import MANIFEST, Manifest, MapEntry, RecipeRecord, project_path, recipe_record
from pipeline.recipe.model import Recipe, recorded_seed
from pipeline.registry import Exporter, embedded_versions, stage_config
from pipeline.seeds import stage_seed
from pipeline.building.stamps import Stamps


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


@dataclass(frozen=True)
class StagePlan:
    """One stage of one map."""

    name: str
    key: str
    seed: tuple[int, ...]
    stale: bool
    reasons: tuple[str, ...]
    cached: bool = False  # intermediate stages of maps with work only: the Level is in the cache


@dataclass
class MapPlan:
    index: int
    stem: str
    stages: dict[str, StagePlan]
    run: tuple[str, ...] = ()  # stages to compute, in order
    exports: tuple[str, ...] = ()  # export stages to write
    attempt: int = 0  # the attempt (see seeds.stage_seed) the build starts from
    edited: tuple[str, ...] = ()  # files its stale exports wrote that differ on disk from the build's: lost edits
    refused: tuple[str, str] | None = None  # (stage, message): pack.distinct keeps no attempt of it; it fails unbuilt

    @property
    def stale(self) -> bool:
        return bool(self.exports)


@dataclass
class PackPlan:
    recipe: Recipe
    pack_dir: Path
    previous: Manifest | None  # the pack's last manifest
    recorded: dict[int, MapEntry] = field(default_factory=dict)  # its map entries, by index
    maps: list[MapPlan] = field(default_factory=list)
    obsolete: list[int] = field(default_factory=list)  # built maps the pack no longer has
    owner: str | None = None  # another recipe that built this pack folder, if any
    stamps: Stamps | None = None  # what the files of the pack looked like when last hashed
    damaged: bool = False  # a manifest.json is there but unreadable: every map is built again
    # pack.distinct. What the last build recorded: how many leading maps were chosen together by
    # this rule (0 if by another, or none), so that a build keeps their attempts; and, when a
    # build would choose maps again that nothing else makes stale, why (`pcg explain` says so).
    chosen: int = 0
    rechoose: str | None = None
    # Set by Builder.choose: the attempts its walk kept, by map chosen, and how many leading maps
    # the walk leaves chosen together once the build is done (see builder._through).
    picks: dict[int, int] | None = None
    through: int = 0
    redrawn: tuple[int, ...] = ()  # stale maps it keeps a later attempt of, to stand apart
    seconds: float = 0.0  # the choice took, before the build proper

    @property
    def stale_maps(self) -> list[MapPlan]:
        return [m for m in self.maps if m.stale]


class KeyMaker:
    """Cache keys for one recipe; the per-stage parts are computed once, not once per map."""

    def __init__(self, recipe: Recipe):
        self.recipe = recipe
        # Each stage's static part as canonical JSON fragments, key by key: a map's key text is
        # these spliced with its own few values, exactly canonical_json of the whole payload,
        # without encoding every stage's parameters again for each of thousands of maps.
        self.static: dict[str, dict[str, str]] = {}
        for spec in recipe.stages:
            static = stage_config(spec.params)
            self.static[spec.name] = {key: canonical_json(value) for key, value in static.items()}

    def keys(self, index: int, attempt: int = 0) -> dict[str, tuple[str, tuple[int, ...]]]:
        out: dict[str, tuple[str, tuple[int, ...]]] = {}
        pack = self.recipe.pack
        for spec in self.recipe.stages:
            seed = stage_seed(index, spec.name, pack.seed_of(index), attempt)
            parts = dict(self.static[spec.name])
            # Seeds are ints and keys hex: their canonical JSON is written out directly.
            parts["seed"] = "[" + ",".join(str(s) for s in seed) + "]"
            parts["inputs"] = "[" + ",".join(f'"{out[i][0]}"' for i in spec.inputs) + "]"
            if spec.name in self.recipe.handed_on:  # a part of its Level the build adds (none: keys as before)
                parts["handed_on"] = canonical_json(list(self.recipe.handed_on[spec.name]))
            if spec.params.reads_floor:  # where the map stands in the pack (none: keys as before)
                parts["floor"] = canonical_json(asdict(pack.floor(index)))
            if spec.is_exporter:
                # What an exporter writes also depends on the file names and provenance it is given.
                parts["stem"] = canonical_json(pack.stem(index))
                parts["provenance"] = canonical_json(export_provenance(self.recipe, index, spec.name, attempt))
            text = "{" + ",".join(f'"{key}":{parts[key]}' for key in sorted(parts)) + "}"
            out[spec.name] = (hashlib.sha256(text.encode()).hexdigest(), seed)
        return out


def export_provenance(recipe: Recipe, index: int, exporter: str, attempt: int = 0) -> dict[str, PropertyValue]:
    """What an exporter records about where a map came from (TMX map properties)."""
    chain = " > ".join(s.kind for s in recipe.upstream(exporter))
    out: dict[str, PropertyValue] = {"pack": recipe.pack.name, "map": index, "seed": recipe.pack.seed_of(index), "stages": chain}
    if attempt:
        out["attempt"] = attempt  # a filter rejected the earlier ones
    return out


# A key that differs for none of the reasons _why_stale knows.
UNEXPLAINED = "cache key changed"


def plan_pack(
    recipe: Recipe,
    exports_root: Path,
    cache: LevelCache,
    previous: Manifest | None,
    force: bool = False,
    only: list[int] | None = None,
    attempts: dict[int, int] | None = None,
    redrawn: dict[int, str] | None = None,
) -> PackPlan:
    """`attempts`: the attempt of each map given (pack.distinct's walk, or a manifest `pcg
    verify` rebuilds), in place of the recorded one; `redrawn`: why a map's was changed."""
    pack_dir = exports_root / recipe.pack.name
    plan = PackPlan(recipe=recipe, pack_dir=pack_dir, previous=previous, stamps=Stamps.for_pack(cache.root, recipe.pack.name))
    plan.damaged = previous is None and (pack_dir / MANIFEST).exists()  # or of another format
    # What planning needs of the last manifest, taken from it once: its maps by index, and each
    # recipe they were built from with its config_id (thousands of maps share one or a few).
    made_from: dict[str, tuple[RecipeRecord, str]] = {}
    recorded_rule = None
    if previous is not None:
        plan.recorded = previous.by_index()
        plan.obsolete = sorted(m.index for m in previous.maps if m.index >= recipe.pack.maps)
        if previous.recipe.path != project_path(recipe, exports_root.parent):
            plan.owner = previous.recipe.path
        made_from = {sha: (record, record.config_id) for sha, record in previous.recipes().items()}
        recorded_rule = previous.distinct.rule if previous.distinct is not None else None
    maker = KeyMaker(recipe)
    # Paths a build that did not finish may have written: its maps are out of the manifest.
    stopped = Journal(cache.root, pack_dir).leftover().planned
    # Keys are a function of the recipe's configuration (stage kinds, versions, parameters, the
    # files they read, plugin code, seeds) and the map index: a map built from exactly this
    # configuration has the keys it recorded, and need not hash them again.
    record = recipe_record(recipe, exports_root.parent)
    config = record.config_id if previous is not None and not force and previous.stages == record.stages else None
    digests: dict[str, str | None] = {}  # shared files (tilesets) are hashed once, not once per map
    # A pack's attempts as pack.distinct chose them hold for its rule alone: without it, each map
    # starts over at attempt 0, as its filters would choose.
    now_rule = distinct_rule(recipe)
    if now_rule is not None:
        _plan_choice(plan, previous, now_rule)
    indices = only if only is not None else range(recipe.pack.maps)
    for index in indices:
        prev = plan.recorded.get(index)
        # A map a filter once accepted at attempt a is current if its keys at attempt a still
        # match; if a filter stage (and so everything it judged) changed, it starts over at 0.
        recorded = prev.attempt if prev and not force else 0
        attempt = attempts.get(index, recorded) if attempts is not None else recorded
        if attempt == recorded and config and prev and prev.config == config and prev.stages.keys() == maker.static.keys():
            keys = {n: (s.key, tuple(s.seed)) for n, s in prev.stages.items()}
        else:
            keys = maker.keys(index, attempt)
        # Attempts given were judged from attempt 0 already (pack.distinct's walk, or verify's
        # record). A map with an attempt recorded has an entry.
        judge = None if attempts is not None and index in attempts else next(
            (s.name for s in recipe.stages if attempt and s.params.may_reject and prev is not None and prev.key_of(s.name) != keys[s.name][0]),
            "pack.distinct" if attempt and recorded_rule is not None and now_rule is None else None,
        )
        if judge is not None:
            attempt = 0
            keys = maker.keys(index)
        # Each map is compared with the recipe its files came from (a --map build can leave a
        # pack whose maps come from different versions of the recipe).
        before = made_from.get(prev.recipe) if prev else None
        stages: dict[str, StagePlan] = {}
        interrupted = prev is None and bool(stopped) and any(
            stopped.intersection(cast(Exporter, s.params).outputs(recipe.pack.stem(index))) for s in recipe.exporters
        )
        for spec in recipe.stages:
            key, seed = keys[spec.name]
            if force:
                reasons: list[str] = ["--force"]
            else:
                reasons = _why_stale(spec.name, index, key, prev, before, recipe, keys)
                if prev is None and plan.damaged:
                    reasons = ["manifest.json damaged, unreadable or of another format"]
                elif interrupted:
                    reasons = ["an earlier build stopped before it finished the map"]
                elif reasons == [UNEXPLAINED] and judge == "pack.distinct":
                    reasons = ["pack.distinct was removed, so the map starts over from attempt 0"]
                elif reasons == [UNEXPLAINED] and judge is not None:
                    # The filter judges anew: the map starts over, from other seeds than its kept attempt's.
                    reasons = [f"stage {judge!r} or a stage before it changed, so the map starts over from attempt 0"]
                elif reasons == [UNEXPLAINED] and attempt != recorded:
                    reasons = [(redrawn or {}).get(index) or f"pack.distinct keeps attempt {attempt} of it now (was {recorded})"]
                if not reasons and spec.is_exporter and prev is not None:
                    reasons = _outputs_changed(pack_dir, prev, spec.name, digests, plan.stamps)
            stages[spec.name] = StagePlan(spec.name, key, seed, bool(reasons), tuple(reasons))
        if not force and any(s.stale for s in stages.values()):
            # Which Levels the cache holds matters only to a map with work (a stat per stage).
            for spec in recipe.stages:
                if not spec.is_exporter:
                    stages[spec.name] = replace(stages[spec.name], cached=cache.has(stages[spec.name].key))
        mp = MapPlan(index=index, stem=recipe.pack.stem(index), stages=stages, attempt=attempt)
        mp.exports = tuple(s.name for s in recipe.exporters if stages[s.name].stale)
        mp.run = _stages_to_run(recipe, stages, mp.exports)
        if prev is not None:
            mp.edited = _edited(pack_dir, prev, mp.exports, digests, plan.stamps)
        plan.maps.append(mp)
    return plan


def _plan_choice(plan: PackPlan, previous: Manifest | None, now: dict[str, Any]) -> None:
    """How many leading maps keep the attempts pack.distinct chose for them, and why a build
    would choose the others again (when no stage of theirs is stale, `pcg explain` says so)."""
    maps = plan.recipe.pack.maps
    recorded = previous.distinct if previous is not None else None
    if recorded is None or recorded.rule != now:
        plan.chosen = 0
        if previous is not None:
            plan.rechoose = "pack.distinct changed (or the stage it compares): every map is chosen again"
        return
    plan.chosen = min(recorded.through, maps)
    if plan.chosen < maps:
        plan.rechoose = f"pack.distinct: maps {plan.chosen}..{maps - 1} are chosen again (a map failed, or a --map build changed one before them)"


def _stages_to_run(recipe: Recipe, stages: dict[str, StagePlan], exports: tuple[str, ...]) -> tuple[str, ...]:
    """The stale exports, plus every upstream stage whose Level is not cached (inputs first)."""
    needed: set[str] = set(exports)
    for spec in reversed(recipe.stages):
        if spec.name in needed and (spec.is_exporter or not stages[spec.name].cached):
            needed.update(spec.inputs)
    return tuple(s.name for s in recipe.stages if s.name in needed and (s.is_exporter or not stages[s.name].cached))


def _why_stale(
    name: str,
    index: int,
    key: str,
    prev: MapEntry | None,
    before: tuple[RecipeRecord, str] | None,
    recipe: Recipe,
    keys: dict[str, tuple[str, tuple[int, ...]]],
) -> list[str]:
    """Why stage `name` of map `index` is stale, given the map's entry in the last manifest
    (`prev`), and the recipe it was built from with that recipe's config_id (`before`)."""
    if prev is None:
        return ["not built yet"]
    if prev.key_of(name) == key:
        return []
    if before is None:
        return ["the recipe it was built from is not in the manifest"]
    built_from, built_config = before
    if name not in built_from.stages or name not in prev.stages:
        return ["new stage"]
    spec = recipe.by_name[name]
    old = built_from.stages[name]
    prev_seed, seed = recorded_seed(built_from.pack, index), recipe.pack.seed_of(index)
    reasons = []
    if old.get("kind") != spec.kind:
        reasons.append(f"stage kind changed ({old.get('kind')} -> {spec.kind})")
    elif old.get("version") != spec.params.version:
        reasons.append(f"stage version changed ({old.get('version')} -> {spec.params.version})")
    embeds, old_embeds = embedded_versions(spec.params), old.get("embeds", {})
    for kind in sorted(set(embeds) | set(old_embeds)):
        if embeds.get(kind) != old_embeds.get(kind):
            was, now = old_embeds.get(kind, "none"), embeds.get(kind, "none")
            reasons.append(f"embedded stage {kind} changed (version {was} -> {now})")
    params = spec.params.model_dump(mode="json")
    old_params = old.get("params", {})
    changed = [k for k in sorted(set(params) | set(old_params)) if params.get(k) != old_params.get(k)]
    if changed and old.get("kind") == spec.kind:
        shown = ", ".join(f"{k}: {' -> '.join(_difference(canonical_json(old_params.get(k)), canonical_json(params.get(k))))}" for k in changed)
        reasons.append(f"params changed ({shown})")
    files, old_files = spec.params.files_read(), old.get("files", {})
    # A glob (prefabs = "prefabs/*.tmx") reads a file new to it, or no longer reads one: say which.
    for what, names in (
        ("file it reads changed", [f for f in sorted(files.keys() & old_files.keys()) if files[f] != old_files[f]]),
        ("new file it reads", sorted(files.keys() - old_files.keys())),
        ("file it no longer reads", sorted(old_files.keys() - files.keys())),
    ):
        if names:
            reasons.append(f"{what} ({', '.join(names)})")
    origin = spec.params.defined_in
    if (origin.sha256 if origin else None) != old.get("plugin") and old.get("kind") == spec.kind:
        reasons.append(f"plugin code changed ({origin.name if origin else 'now built in'})")
    if prev_seed != seed:
        reasons.append(_seed_change(built_from.pack, recipe, index, prev_seed, seed))
    if list(old.get("inputs", [])) != list(spec.inputs):
        reasons.append("inputs changed (" + ", ".join(old.get("inputs", [])) + " -> " + ", ".join(spec.inputs) + ")")
    else:
        for inp in spec.inputs:
            if prev.key_of(inp) != keys[inp][0]:
                reasons.append(f"input {inp!r} changed")
    if not reasons and spec.is_exporter and built_from.pack != recipe.pack.model_dump(mode="json"):
        reasons.append("pack name or map_name changed")
    if not reasons and prev.config not in (None, built_config):
        # Kept from before a build in which every map failed: the manifest no longer holds the
        # configuration it was built from, only the recipe text, which is the same.
        reasons.append("built before a change the recipe text does not show (plugin code, a file it reads, or a stage version)")
    return reasons or [UNEXPLAINED]


def _seed_change(before: dict[str, Any], recipe: Recipe, index: int, prev_seed: int | None, seed: int) -> str:
    """Why a map's seed changed: the pack seed, or its own [pack.seeds] entry."""
    was, now = before.get("seeds", {}).get(str(index)), recipe.pack.seeds.get(str(index))
    if was is None and now is None:
        return f"pack seed changed ({prev_seed} -> {seed})"
    what = "unpinned" if now is None else "pinned" if isinstance(now, int) else f"re-rolled ({now.rerolls}x)"
    return f"map seed {what} ({prev_seed} -> {seed})"


def _difference(old: str, new: str, width: int = 30) -> tuple[str, str]:
    """Two values as short texts that still show where they differ: a long value is cut around
    its first difference from the other (a table of layers differs late, after a long prefix)."""
    if len(old) <= width and len(new) <= width:
        return old, new
    start = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
    start = max(0, start - 10)
    return tuple(  # type: ignore[return-value]
        ("..." if start else "") + text[start : start + width] + ("..." if len(text) > start + width else "") for text in (old, new)
    )


def _on_disk(pack_dir: Path, prev: MapEntry, name: str, digests: dict[str, str | None], stamps: Stamps) -> Iterator[tuple[str, str | None, str | None]]:
    """Each file export stage `name` wrote for the map last time: (path, its sha256 on disk or
    None, the sha256 the build recorded), hashed once per plan (`digests`: shared files recur)."""
    recorded = prev.files
    stage = prev.stages.get(name)
    for rel in (stage.files or ()) if stage is not None else ():
        if rel not in digests:
            digests[rel] = stamps.digest(pack_dir / rel, rel)
        yield rel, digests[rel], recorded.get(rel)


def _edited(pack_dir: Path, prev: MapEntry, exports: tuple[str, ...], digests: dict[str, str | None], stamps: Stamps) -> tuple[str, ...]:
    """The files these exports wrote for the map last time that are on disk with other bytes,
    whatever else makes them stale (a recipe edit, --force): the build replaces an edit there."""
    edited = [rel for name in exports for rel, now, then in _on_disk(pack_dir, prev, name, digests, stamps) if now is not None and then is not None and now != then]
    return tuple(dict.fromkeys(edited))


def _outputs_changed(pack_dir: Path, prev: MapEntry, name: str, digests: dict[str, str | None], stamps: Stamps) -> list[str]:
    for rel, now, then in _on_disk(pack_dir, prev, name, digests, stamps):
        if now is None:
            return [f"output missing on disk ({rel})"]
        if now != then:
            return [f"output modified on disk ({rel})"]
    return []
