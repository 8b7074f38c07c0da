"""Object tiles checked as a recipe loads: a stage that draws its objects with a named tile
(`place.items` with `tile = "chest"`) needs every exporter downstream to have that tile, or
every map of the pack would fail at export, after the maps were made."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from pipeline.recipe.model import StageSpec
    from pipeline.tiled.spec import TilesetSpec


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


def tileset_problem(spec: "TilesetSpec | None", path: str | None, tile: str) -> str | None:
    """Why a Tiled exporter drawing with `spec` (read from the file `path`; None: the tileset it
    generates from the map's symbols) has no tile `tile`, if that is certain before any map is
    made. A generated-art file draws the map's symbols besides its `colors`, so a name it lacks
    may still be a symbol: that is left to the export."""
    if spec is None:
        return (
            "it has no `tileset` file, and its generated tileset has only the map's symbols; set its `tileset`"
            f" to a file whose `colors` (or `tiles`) name {tile!r}, such as tilesets/dungeon.toml, or leave"
            " the object tile unset for point objects"
        )
    if spec.image is not None and tile not in spec.tiles and tile not in spec.autotile:
        from pipeline.errors import did_you_mean

        known = ", ".join(spec.tiles) or "none"
        return f"its tileset file {path} has no {tile!r} in `tiles`{did_you_mean(tile, spec.tiles)} (it has: {known})"
    return None
