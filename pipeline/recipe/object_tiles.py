"""Object tiles checked as a recipe loads: a stage that draws its objects with a named tile
(`place.items` with `tile = "chest"`) needs every exporter downstream to have that tile, or
every map of the pack would fail at export, after the maps were made."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from pipeline.recipe.model import StageSpec


def check_object_tiles(specs: Sequence["StageSpec"], problems: list[str]) -> None:
    """One problem per stage, tile and exporter that cannot draw it; `specs` in input order."""
    for spec in specs:
        tiles = spec.params.object_tiles()
        if not tiles:
            continue
        for exporter in _exporters_fed_by(specs, spec.name):
            for tile, key in tiles.items():
                problem = exporter.params.object_tile_problem(tile)  # type: ignore[attr-defined]
                if problem is not None:
                    problems.append(f"stage.{spec.name}.{key}: {tile!r} cannot be drawn by stage.{exporter.name} ({exporter.kind}): {problem}")


def _exporters_fed_by(specs: Sequence["StageSpec"], name: str) -> list["StageSpec"]:
    """The export stages whose input comes, through any chain of stages, from stage `name`."""
    reached = {name}
    for spec in specs:  # inputs come first, so one pass reaches everything downstream
        if any(i in reached for i in spec.inputs):
            reached.add(spec.name)
    return [s for s in specs if s.is_exporter and s.name in reached]
