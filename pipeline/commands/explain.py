"""`pcg explain`: what a build of a recipe would do and why, worked out from its plan without
building anything, for a table (people) or JSON (scripts, `--format json` in docs/commands.md)."""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, List, Literal, Optional

import typer

from pipeline.commands.messages import console, fail, user_errors
from pipeline.commands.options import CACHE, EXPORTS
from pipeline.output import counted

if TYPE_CHECKING:
    from rich.console import Console

    from pipeline.building.manifest import Manifest
    from pipeline.recipe.model import Recipe
    from pipeline.recipe.pins import Override

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


def explain_pack(recipe: Recipe, maps: list[int] | None, out: Path, cache: Path) -> PackExplanation:
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
        edited=tuple(str(rel) for rel in edited_pack_files(plan.pack_dir, recipe, plan.previous.pack_files if plan.previous else {})),
        owner=plan.owner,
        seeds=tuple(o for o in overrides(recipe) if not maps or o.map in maps),
        # With maps to build the sheet follows them anyway; with none, the recipe may still change it.
        sheet=sheet_change(plan.pack_dir, recipe, _kept(plan.previous, plan.obsolete), plan.stamps) if plan.previous and not plan.stale_maps and not maps else None,
        rechoose=plan.rechoose if not maps else None,
    )


def _kept(manifest: Manifest, obsolete: list[int]) -> Manifest:
    """The manifest as a build would leave it when it builds no map: without the maps dropped."""
    dropped = set(obsolete)
    return replace(manifest, maps=tuple(m for m in manifest.maps if m.index not in dropped))


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


@user_errors
def explain(
    targets: List[Path] = typer.Argument(
        None, help="Recipes or folders of them (default: recipes/), or built packs (a name under exports/, a folder or a manifest.json): the recipe each was built from."
    ),
    maps: Optional[List[int]] = typer.Option(None, "--map", help="Explain only this map index (repeatable)."),
    check: bool = typer.Option(False, "--check", help="Exit 1 if any pack is not up to date (for CI: the exports committed are what the recipes make)."),
    format_: str = typer.Option("table", "--format", help="table (for people) or json (for scripts; docs/commands.md has its shape)."),
    out: Path = EXPORTS,
    cache: Path = CACHE,
) -> None:
    """Show, per stage, whether it is fresh or stale and why, without building anything."""
    from pipeline.building.request import BuildRequest
    from pipeline.building.workspace import Workspace, recipe_of
    from pipeline.errors import PipelineError
    from pipeline.recipe.order import Deferred

    if format_ not in ("table", "json"):
        raise PipelineError([f"--format: table or json (got {format_!r})"])
    # A pack, as the other commands take one: a manifest, a pack folder, or a name that is no file.
    paths = [
        recipe_of(t, out, cache) if t.name == "manifest.json" or (t / "manifest.json").is_file() or (not t.exists() and t.suffix != ".toml") else t
        for t in targets or []
    ]
    request = BuildRequest.checked(paths, maps=maps)
    items, problems = Workspace(out, cache).requested(request)
    # Explaining reads each pack as it stands: one that loads only once another is built is told.
    recipes = [r for r in items if not isinstance(r, Deferred)]
    for waiting in [r for r in items if isinstance(r, Deferred)]:
        problems += [*waiting.problems, f"{waiting.path}: it reads files of another pack of these recipes, which `pcg build` makes first"]
    packs = []
    shown = console()
    for k, loaded in enumerate(recipes):
        packs.append(explain_pack(loaded, list(request.maps) if request.maps else None, out, cache))
        if format_ == "table":
            if k:
                shown.print()
            _print_explanation(shown, packs[-1])
            _print_pins(shown, loaded, packs[-1].seeds)
    if format_ == "json":
        sys.stdout.write(explanations_json(packs))
    stale = [p.pack for p in packs if not p.up_to_date and p.owner is None]
    if check and stale:
        problems.append(f"{', '.join(stale)}: not up to date ({len(stale)} of {counted(len(packs), 'pack')}); `pcg build` makes {'it' if len(stale) == 1 else 'them'}")
    for p in packs if check else []:
        if p.owner is not None:
            problems.append(f"{p.pack}: its folder {p.pack_dir} was built from {p.owner}; `pcg build {p.recipe} --force` gives it to that recipe")
    if problems:
        fail(problems)
        raise typer.Exit(1)


# The reasons `pcg explain` lists per stage, the commonest first.
SHOWN_REASONS = 3


def _print_explanation(shown: "Console", pack: PackExplanation) -> None:
    from rich.text import Text

    from pipeline.output import print_table, spans
    from pipeline.output import table as new_table

    table = new_table(shown, f"{pack.pack} ({pack.recipe}): {counted(pack.maps, 'map')}")
    for col in ("stage", "kind", "status", "why"):
        table.add_column(col)
    for stage in pack.stages:
        reasons = stage.reasons[:SHOWN_REASONS]
        why = "; ".join(r if pack.maps == 1 else f"{r} ({counted(n, 'map')})" for r, n in reasons)
        if len(stage.reasons) > SHOWN_REASONS:  # a file per map edited, say: the count tells how far it goes
            why += f"; and {counted(len(stage.reasons) - SHOWN_REASONS, 'other reason')}"
        if stage.cached_maps is not None:
            why = "; ".join(x for x in (why, f"cached for {stage.cached_maps}/{pack.maps} maps") if x)
        status = {"fresh": "[green]fresh[/green]", "stale": f"[yellow]stale[/yellow] {stage.stale_maps}/{pack.maps}"}.get(stage.status, "")
        if stage.status == "unused":
            status, why = "[yellow]unused[/yellow]", "no export stage reads it: it never runs"
        table.add_row(stage.stage, stage.kind, status, Text(why))
    print_table(shown, table)
    if pack.owner is not None:
        shown.print(f"{pack.pack_dir} was built from {pack.owner}: `pcg build` refuses to replace it without --force.")
    if pack.obsolete:
        shown_maps = f"map {pack.obsolete[0]}" if len(pack.obsolete) == 1 else f"maps {spans(list(pack.obsolete))}"
        shown.print(f"The pack no longer has {shown_maps}: `pcg build` removes {'its' if len(pack.obsolete) == 1 else 'their'} files.")
    for rel in pack.edited:
        shown.print(f"{pack.pack_dir / rel} was edited since the last build: `pcg build` makes it again.")
    if pack.sheet is not None:
        what = {
            "written": "draws it again (the recipe changed what it shows)",
            "missing": "draws it again (it is missing)",
            "edited": "draws it again (it was edited since the last build)",
            "removed": "removes it",
        }
        shown.print(f"{pack.pack_dir / 'contact_sheet.png'}: `pcg build` {what[pack.sheet]}.")
    if pack.rechoose:
        shown.print(f"{pack.rechoose}: `pcg build` makes attempts of them, and rebuilds those whose attempt changes.")
    if pack.rebuild:
        shown.print(f"`pcg build` would rebuild {len(pack.rebuild)} of {counted(pack.maps, 'map')}.")
    elif pack.owner is None:  # else the line above says what a build would do: refuse
        removes = bool(pack.obsolete) or pack.sheet == "removed"
        remakes = bool(pack.edited) or pack.sheet in ("written", "missing", "edited")
        only = " and ".join(w for w, does in (("remove", removes), ("remake", remakes)) if does)
        if only or not pack.rechoose:
            shown.print(f"No stage to run: `pcg build` would only {only} those files." if only else "Up to date: `pcg build` would run no stage.")


def _print_pins(shown: "Console", recipe: Recipe, pins: tuple[Override, ...]) -> None:
    from rich.markup import escape

    from pipeline.output import print_table
    from pipeline.output import table as new_table

    if not pins:
        return
    # A line, not a table title: a title wraps to the width of this narrow table.
    own = "a seed of its own" if len(pins) == 1 else "seeds of their own"
    shown.print(escape(f"{counted(len(pins), 'map')} with {own} in [pack.seeds] (the pack seed is {recipe.pack.seed}):"), soft_wrap=True)
    table = new_table(shown)
    for col in ("map", "seed", "how"):
        table.add_column(col)
    for o in pins:
        table.add_row(str(o.map), str(o.seed), o.how + ("" if o.in_pack else f" (unused: the pack has {recipe.pack.maps} maps)"))
    print_table(shown, table)
