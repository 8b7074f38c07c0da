"""`pcg unpin`: take maps' seeds out of their recipe, so they follow the pack seed again."""

from __future__ import annotations

from pathlib import Path
from typing import List

from pipeline.commands.messages import user_errors
from pipeline.commands.options import CACHE, EXPORTS
from pipeline.commands.seed_edits import MAP_ARG, PACK_OR_RECIPE, maps_of, seed_edited


@user_errors
def unpin(
    pack: Path = PACK_OR_RECIPE,
    map_indices: List[int] = MAP_ARG,
    out: Path = EXPORTS,
    cache: Path = CACHE,
) -> None:
    """Remove maps' seeds from the recipe (\\[pack.seeds]): they follow the pack seed again."""
    from pipeline.recipe.pins import unpin as unpin_map

    path, indices = maps_of(pack, map_indices, out, cache)
    for map_index in indices:
        seed_edited(unpin_map(path, map_index), "unpinned")
