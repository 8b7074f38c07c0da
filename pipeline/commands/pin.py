"""`pcg pin`: write maps' seeds into their recipe, so a new pack seed leaves them as they are."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from pipeline.commands.messages import user_errors
from pipeline.commands.options import CACHE, EXPORTS
from pipeline.commands.seed_edits import MAP_ARG, PACK_OR_RECIPE, maps_of, seed_edited


@user_errors
def pin(
    pack: Path = PACK_OR_RECIPE,
    map_indices: List[int] = MAP_ARG,
    seed: Optional[int] = typer.Option(None, "--seed", help="Pin this seed rather than the map's current one."),
    out: Path = EXPORTS,
    cache: Path = CACHE,
) -> None:
    """Freeze maps' seeds into the recipe (\\[pack.seeds]), so a new pack seed leaves those maps as they are."""
    from pipeline.recipe.pins import pin as pin_map

    path, indices = maps_of(pack, map_indices, out, cache)
    for map_index in indices:
        seed_edited(pin_map(path, map_index, seed), "pinned")
