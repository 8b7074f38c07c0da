"""`pcg list`: the recipes with their pack, size, stages and build state."""

from __future__ import annotations

from pathlib import Path
from typing import List

import typer

from pipeline.commands.messages import console, fail, user_errors
from pipeline.commands.options import CACHE, EXPORTS, TARGETS


@user_errors
def list_(
    targets: List[Path] = TARGETS,
    out: Path = EXPORTS,
    cache: Path = CACHE,
) -> None:
    """List the recipes with their pack, size, stages and build state."""
    from rich.text import Text

    from pipeline.building.request import BuildRequest
    from pipeline.building.workspace import Workspace
    from pipeline.output import print_table
    from pipeline.output import table as new_table
    from pipeline.recipe.order import Deferred, pack_name, upstream

    workspace = Workspace(out, cache)
    recipes, problems = workspace.requested(BuildRequest.checked(targets))
    builder = workspace.builder()
    shown = console()
    table = new_table(shown)
    for col in ("recipe", "pack", "maps", "stages", "state"):
        table.add_column(col, overflow="fold")
    after = upstream(recipes, out)
    by_path = {r.path: r for r in recipes}
    for recipe in recipes:
        # A recipe that reads other packs of the run builds after them, and loads only then.
        reads = ", ".join(pack_name(by_path[p]) for p in after[recipe.path])
        if isinstance(recipe, Deferred):
            table.add_row(Text(recipe.path), recipe.pack_name, "", "", f"[yellow]loads once {reads} is built[/yellow]")
            continue
        plan = builder.plan(recipe)
        stale = len(plan.stale_maps)
        state = "[green]up to date[/green]" if not stale else f"[yellow]{stale} stale[/yellow]"
        state += f" (builds after {reads})" if reads else ""
        table.add_row(Text(recipe.path), recipe.pack.name, str(recipe.pack.maps), ", ".join(s.name for s in recipe.stages), state)
    print_table(shown, table)
    if problems:
        fail(problems)
        raise typer.Exit(1)
