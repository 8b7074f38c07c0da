"""`pcg reroll`: give maps new seeds in their recipe (and, with --build, build them)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from pipeline.commands.messages import console, user_errors
from pipeline.commands.options import CACHE, EXPORTS, JOBS
from pipeline.commands.seed_edits import MAP_ARG, PACK_OR_RECIPE, maps_of, seed_edited


@user_errors
def reroll(
    pack: Path = PACK_OR_RECIPE,
    map_indices: List[int] = MAP_ARG,
    build_: bool = typer.Option(False, "--build", help="Then build the pack (only those maps are stale)."),
    jobs: Optional[int] = JOBS,
    out: Path = EXPORTS,
    cache: Path = CACHE,
) -> None:
    """Give maps new seeds, written into the recipe (\\[pack.seeds]); the other maps keep theirs."""
    from pipeline.recipe.pins import reroll as reroll_map

    path, indices = maps_of(pack, map_indices, out, cache)
    for map_index in indices:
        change = reroll_map(path, map_index)
        seed_edited(change, f"re-rolled ({change.rerolls}x)")
    if build_:
        from pipeline.building.request import BuildRequest
        from pipeline.building.workspace import Workspace
        from pipeline.commands.build import run_build
        from pipeline.recipe.load import load_recipe

        run_build(Workspace(out, cache), [load_recipe(path)], [], BuildRequest.checked(path, jobs=jobs), False, console())
