"""What `pcg pin`, `pcg reroll` and `pcg unpin` share: how they take a pack and its maps, and
the line each prints for a map whose seed it edited (or found as asked already)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from pipeline.commands.messages import console
from pipeline.commands.options import PACK_HELP

if TYPE_CHECKING:
    from pipeline.recipe.pins import SeedChange

MAP_ARG = typer.Argument(..., metavar="MAP", help="The map's index in the pack (0 is the first); several for several maps.")
PACK_OR_RECIPE = typer.Argument(..., help=PACK_HELP + " A pack leads to the recipe its manifest records.")


def maps_of(pack: Path, map_indices: list[int], out: Path, cache: Path) -> tuple[Path, list[int]]:
    """The recipe of `pack` and the maps named, each once, all checked before any is edited."""
    from pipeline.building.request import missing_maps
    from pipeline.building.workspace import recipe_of
    from pipeline.errors import PipelineError
    from pipeline.recipe.load import load_recipe

    path = recipe_of(pack, out, cache)
    bad = missing_maps([load_recipe(path)], map_indices, "map")
    if bad:
        raise PipelineError(bad)
    return path, list(dict.fromkeys(map_indices))


def seed_edited(change: "SeedChange", what: str) -> None:
    from rich.markup import escape

    where = escape(change.recipe)
    if not change.written:
        if change.rerolls:
            state = f"is already re-rolled ({change.rerolls}x) to {change.seed}"
        else:
            state = f"is already pinned at {change.seed}" if change.pinned else f"already follows the pack seed ({change.seed})"
        console().print(f"{where}: map {change.map} {state}; nothing changed", soft_wrap=True)
        return
    seeds = f"seed {change.seed}" if change.before == change.seed else f"seed {change.before} -> {change.seed}"
    console().print(f"{where}: map {change.map} {what} ({seeds})", soft_wrap=True)
