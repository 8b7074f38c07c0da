"""`pcg explain`: what a build of a recipe would do and why, worked out from its plan without
building anything, for a table (people) or JSON (scripts, `--format json` in docs/commands.md)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from pipeline.recipe.pins import Override
    from pipeline.recipe.model import Recipe

# Raised with `--format json` only if its shape changes, so a script can tell which it reads.
JSON_FORMAT = 1

Status = Literal["fresh", "stale", "unused"]


@dataclass(frozen=True)
class StageExplanation:
    stage: str
    kind: str
    status: Status
    stale_maps: int
    reasons: tuple[tuple[str, int], ...]  # each reason with how many maps it holds for, commonest first
    cached_maps: int | None  # maps whose Level is in the cache; None for an exporter, which writes files


@dataclass(frozen=True)
class PackExplanation:
    pack: str
    recipe: str
    pack_dir: Path
    maps: int
    stages: tuple[StageExplanation, ...]
    rebuild: tuple[int, ...]  # maps `pcg build` would build again
    obsolete: tuple[int, ...]  # built maps the pack no longer has: their files go
    edited: tuple[str, ...]  # the pack's own files (an LDtk project...) edited since the build, in its folder
    owner: str | None  # another recipe that built the pack folder: `pcg build` refuses without --force
    sheet: str | None = None  # what a build would do to contact_sheet.png: "written", "missing", "edited" or "removed" (contact_sheet.sheet_change)
    seeds: tuple[Override, ...] = ()  # the maps with a seed of their own in [pack.seeds] (of `maps`, if given)
    rechoose: str | None = None  # why pack.distinct would choose maps again that nothing else makes stale

    @property
    def up_to_date(self) -> bool:
        """`pcg build` would change nothing (and would not refuse)."""
        return not (self.rebuild or self.obsolete or self.edited or self.sheet or self.owner is not None or self.rechoose)


def explain(recipe: Recipe, maps: list[int] | None, out: Path, cache: Path) -> PackExplanation:
    """What `pcg build` of `recipe` (of only `maps`, if given) would do, and why."""
    from pipeline.building.builder import Builder
    from pipeline.building.cache import LevelCache
    from pipeline.building.contact_sheet import sheet_change
    from pipeline.building.pack_files import edited_pack_files
    from pipeline.recipe.pins import overrides

    levels = LevelCache(cache)
    plan = Builder(exports_root=out, cache=levels, only=sorted(set(maps)) if maps else None).plan(recipe)
    stages = []
    for spec in recipe.stages:
        states = [m.stages[spec.name] for m in plan.maps]
        stale = [s for s in states if s.stale]
        reasons = Counter(r for s in stale for r in s.reasons)
        cached = None if spec.is_exporter else sum(levels.has(s.key) for s in states)  # the plan checks only maps with work
        if spec.name in recipe.unused:  # it never runs: nothing about it is stale
            stages.append(StageExplanation(spec.name, spec.kind, "unused", 0, (), cached))
            continue
        stages.append(StageExplanation(spec.name, spec.kind, "stale" if stale else "fresh", len(stale), tuple(reasons.most_common()), cached))
    return PackExplanation(
        pack=recipe.pack.name,
        recipe=str(recipe.path),
        pack_dir=plan.pack_dir,
        maps=len(plan.maps),
        stages=tuple(stages),
        rebuild=tuple(m.index for m in plan.stale_maps),
        obsolete=tuple(plan.obsolete),
        edited=tuple(str(rel) for rel in edited_pack_files(plan.pack_dir, recipe, (plan.previous or {}).get("pack_files", {}))),
        owner=plan.owner,
        seeds=tuple(o for o in overrides(recipe) if not maps or o.map in maps),
        # With maps to build the sheet follows them anyway; with none, the recipe may still change it.
        sheet=sheet_change(plan.pack_dir, recipe, _kept(plan.previous, plan.obsolete), plan.stamps) if plan.previous and not plan.stale_maps and not maps else None,
        rechoose=plan.rechoose if not maps else None,
    )


def _kept(manifest: dict[str, Any], obsolete: list[int]) -> dict[str, Any]:
    """The manifest as a build would leave it when it builds no map: without the maps dropped."""
    dropped = set(obsolete)
    return {**manifest, "maps": [m for m in manifest["maps"] if m["index"] not in dropped]}


def explanations_json(packs: list[PackExplanation]) -> str:
    """One JSON document: `{"format": 1, "packs": [{"pack", "recipe", "folder", "up_to_date", "maps",
    "rebuild", "obsolete", "edited", "owner", "contact_sheet", "distinct", "seeds": [{"map", "seed", "rerolls", "in_pack"}], "stages": [{"stage", "kind", "status",
    "stale_maps", "cached_maps", "reasons": [{"reason", "maps"}]}]}]}`; packs, stages and
    reasons in the order the table shows them, and every reason (the table shows three)."""
    doc = {
        "format": JSON_FORMAT,
        "packs": [
            {
                "pack": p.pack,
                "recipe": p.recipe,
                "folder": str(p.pack_dir),
                "up_to_date": p.up_to_date,
                "maps": p.maps,
                "rebuild": list(p.rebuild),
                "obsolete": list(p.obsolete),
                "edited": list(p.edited),
                "owner": p.owner,
                "contact_sheet": p.sheet,
                "distinct": p.rechoose,
                "seeds": [{"map": o.map, "seed": o.seed, "rerolls": o.rerolls, "in_pack": o.in_pack} for o in p.seeds],
                "stages": [
                    {
                        "stage": s.stage,
                        "kind": s.kind,
                        "status": s.status,
                        "stale_maps": s.stale_maps,
                        "cached_maps": s.cached_maps,
                        "reasons": [{"reason": r, "maps": n} for r, n in s.reasons],
                    }
                    for s in p.stages
                ],
            }
            for p in packs
        ],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
