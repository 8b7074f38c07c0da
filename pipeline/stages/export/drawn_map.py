"""What the exporters that draw maps with a tileset share (`export.tmx`, `export.tmj`,
`export.lua`, `export.ldtk`): the tileset options, the tile layers drawn with that tileset, and
the preview and contact-sheet thumbnail drawn from it. One set of options resolved one way, so
that every exporter of a pack draws the same tilesheet."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import Field, PositiveInt, PrivateAttr, ValidationInfo, field_validator, model_validator

from pipeline.drawn_art import valid_art
from pipeline.level.art import ArtTileset
from pipeline.errors import KeyedError, PipelineError
from pipeline.level import Level
from pipeline.paths import check_plain_name, check_relative_dir, join
from pipeline.registry import ExportContext, Exporter
from pipeline.tiled.art import Style
from pipeline.tiled.drawing import LayerSpec, draw_layers, object_gid, undrawn_symbols
from pipeline.tiled.drawn import FOLDER, MapArt, map_art, stems, with_art_atlas
from pipeline.tiled.render import preview_png
from pipeline.tiled.spec import LoadedTileset, TilesetSpec, load_tileset, tileset_problem
from pipeline.tiled.tilesheet import BuiltTileset, build_tileset

if TYPE_CHECKING:
    from PIL import Image

# Options that describe the generated tileset when the recipe names no tileset file.
_GENERATED = ("tile_size", "margin", "spacing", "style")


class DrawnMapExporter(Exporter):
    """Base of the exporters that draw each map with a tileset and may write its preview."""

    dir: str = Field(".", description="Folder inside the pack for the map files.")
    tileset: str | None = Field(None, description="Tileset file (tilesets/*.toml), relative to the recipe; unset: one tile per symbol in its colour.")
    tileset_name: str = Field("symbols", description="Name of the tileset and its files under tilesets/ (with a tileset file: its `name`, unless set here).")
    tile_size: PositiveInt = Field(16, le=1024, description="Without a tileset file: tile width and height in pixels.")
    margin: int = Field(0, ge=0, le=64, description="Without a tileset file: pixels around the tilesheet's edge.")
    spacing: int = Field(0, ge=0, le=64, description="Without a tileset file: pixels between tiles in the tilesheet.")
    style: Style = Field("flat", description="Without a tileset file: flat, bevel, noise or outline.")
    layers: tuple[LayerSpec, ...] = Field((), description='Tile layers, each {name, symbols, tile, autotile}; unset: one layer of every symbol.')
    layer_name: str = Field("tiles", min_length=1, description="Name of the single tile layer when `layers` is unset.")
    preview: bool = Field(
        True,
        description="Also write a PNG of each map drawn from the tilesheet, as the engine shows it, with its objects (tile objects as their tile; points, rectangles and paths as markers).",
    )
    preview_dir: str | None = Field(None, description="Folder inside the pack for the previews (unset: `previews` inside `dir`).")
    preview_style: Literal["debug", "clean"] = Field(
        "debug", exclude_if=lambda style: style == "debug",
        description="debug: previews and contact-sheet thumbnails mark the objects (room outlines, spawn and exit discs, paths) for tuning; clean: only what the game draws, tiles and tile objects (store pages, level-select thumbnails).",
    )
    data_layers: bool | tuple[str, ...] = Field(
        True,
        description="The Level's data layers (region, distance...) with their exact values (TMX: hidden tile layers with the property `values`; LDtk: level fields NAME_values): true = all, false = none, or the names.",
    )

    _loaded: LoadedTileset | None = PrivateAttr(None)
    # The tilesets of hand-drawn art the stages before this one may put on its maps (set as the
    # recipe loads, `bind_art`), each with its file name under tilesets/drawn/.
    _art_sets: tuple[tuple[ArtTileset, str], ...] = PrivateAttr(())
    _art_left: frozenset[str] = PrivateAttr(frozenset())  # keys of drawn tilesets of another tile size
    _art_warnings: tuple[str, ...] = PrivateAttr(())
    _tileset_spec: TilesetSpec | None = PrivateAttr(None)  # what draws the maps: the file's, or one from the options

    _dirs = field_validator("dir", "preview_dir")(classmethod(lambda cls, v: v if v is None else check_relative_dir(v)))
    _name = field_validator("tileset_name")(classmethod(lambda cls, v: check_plain_name(v)))

    @model_validator(mode="after")
    def _resolve_tileset(self, info: ValidationInfo) -> DrawnMapExporter:
        if self.tileset is not None:
            given = [k for k in _GENERATED if k in self.model_fields_set]
            if given:
                raise KeyedError(given[0], f"comes from the tileset file {self.tileset!r}; remove it here")
            self._loaded = load_tileset(Path((info.context or {}).get("recipe_dir", ".")), self.tileset)
            self._tileset_spec = self._loaded.spec
            # A floor tile misspelt would otherwise fail every map of the pack at export.
            for layer in self.layers:
                problem = tileset_problem(self._loaded.spec, self.tileset, layer.tile) if layer.tile else None
                if problem is not None:
                    raise KeyedError(f"layers.{layer.name}.tile", problem)
            if "tileset_name" in self.model_fields_set:
                # One file drawing maps of different symbols in one pack needs a name per symbol set.
                self._tileset_spec = self._loaded.spec.model_copy(update={"name": self.tileset_name})
        else:
            self._tileset_spec = TilesetSpec(
                name=self.tileset_name, tile_size=(self.tile_size, self.tile_size), margin=self.margin, spacing=self.spacing, style=self.style
            )
        return self

    def bind_art(self, tilesets: list[tuple[str, ArtTileset]]) -> list[str]:
        """Take the tilesets of drawn art that reach this exporter, as (the stage that reads
        them, tileset): their files join the pack's. Returns the problems, as "key: message"
        lines. Art whose tiles are not the pack's size would be drawn off the grid, or scaled
        (blurring pixel art): its cells are drawn with the pack's tiles, as before art was
        kept, and the recipe is warned as it loads, naming the key and the file."""
        width, height = self._spec.tile_size
        kept: list[ArtTileset] = []
        left: set[str] = set()
        warnings = []
        for stage_name, ts in tilesets:
            if ts.key in left or any(t.key == ts.key for t in kept):
                continue
            if (ts.tile_width, ts.tile_height) != (width, height):
                key = "tileset" if self.tileset else "tile_size"
                fix = (
                    f"set tile_size = {ts.tile_width}" if not self.tileset and ts.tile_width == ts.tile_height
                    else f"draw the pack with a tileset file of {ts.tile_width} x {ts.tile_height}-pixel tiles"
                )
                warnings.append(
                    f"{key}: the pack's tiles are {width} x {height} pixels, but stage.{stage_name} draws with tileset {ts.name!r}"
                    f" ({ts.source}) of {ts.tile_width} x {ts.tile_height}-pixel tiles, so its cells are drawn with the pack's tiles"
                    f" for their symbols: {fix} to keep the art, or redraw the map in {width} x {height}"
                )
                left.add(ts.key)
                continue
            kept.append(ts)
        self._art_sets = tuple(zip(kept, stems(kept)))
        self._art_left = frozenset(left)
        self._art_warnings = tuple(warnings)
        return []

    def _art_image(self, stem: str, ts: ArtTileset) -> str:
        return f"{FOLDER}/{stem}{ts.extension}"

    def _art_images(self) -> list[str]:
        return [self._art_image(stem, ts) for ts, stem in self._art_sets]

    @property
    def _spec(self) -> TilesetSpec:
        return cast(TilesetSpec, self._tileset_spec)  # set when the parameters were validated

    def files_read(self) -> dict[str, str]:
        return dict(self._loaded.digests) if self._loaded else {}

    def warnings(self) -> list[str]:
        own = [f"tileset: {warning}" for warning in self._loaded.warnings] if self._loaded else []
        return own + list(self._art_warnings)

    def object_tile_problem(self, tile: str) -> str | None:
        
        return tileset_problem(self._loaded.spec if self._loaded else None, self.tileset, tile)

    def wanted_data_layers(self) -> bool | tuple[str, ...]:
        """`data_layers`, or what an exporter makes of it unset (a profile may leave them out)."""
        return self.data_layers

    def _data_layer_names(self, level: Level) -> list[str]:
        """The Level's data layers this exporter writes, as `data_layers` picks them."""
        wanted = self.wanted_data_layers()
        if wanted is True:
            return sorted(level.layers)
        if wanted is False:
            return []
        missing = [n for n in wanted if n not in level.layers]
        if missing:
            known = ", ".join(sorted(level.layers)) or "none"
            raise PipelineError([f"data_layers: the map has no layer {missing[0]!r} (it has: {known})"])
        return list(wanted)

    def preview_file(self, stem: str) -> str | None:
        if not self.preview:
            return None
        return join(self.preview_dir if self.preview_dir is not None else join(self.dir, "previews"), f"{stem}.png")

    def _draw(self, level: Level, ctx: ExportContext | None = None) -> tuple[BuiltTileset, list[tuple[str, Any]]]:
        """The tileset for the map's alphabet and the map's tile layers drawn with it; what
        looks misnamed goes to the export's warnings."""
        loaded = self._loaded
        built = build_tileset(self._spec, level.alphabet, loaded.image if loaded else b"")
        if ctx is not None:
            ctx.warnings.extend(f"tileset: {line}" for line in built.warnings)
        if not self.layers:
            # One layer of every symbol, the recipe's `layers` unset: a symbol without a tile is the tileset's.
            return built, draw_layers(level, built, [LayerSpec(name=self.layer_name)], key=f"tileset ({self.tileset})" if self.tileset else "tileset")
        if ctx is not None:
            ctx.warnings.extend(undrawn_symbols(level, list(self.layers)))
        return built, draw_layers(level, built, list(self.layers))

    @staticmethod
    def _object_gids(level: Level, built: BuiltTileset) -> list[int]:
        """Each object's tile (0 for an object without one), as the tileset numbers them."""
        return [object_gid(obj, built) if obj.tile and obj.art is None else 0 for obj in level.objects]

    def _map_art(self, level: Level, first: int) -> MapArt | None:
        """The map's hand-drawn art (what the rule leaves of it), its tilesets numbered from gid
        `first`; None for a map without."""
        return map_art(valid_art(level), level, list(self._art_sets), first, self._art_left)

    def _drawn_map(self, level: Level, ctx: ExportContext | None = None) -> tuple[BuiltTileset, list[tuple[str, Any]], MapArt | None]:
        """`_draw`, and the map's art numbered after the pack's tileset."""
        built, drawn = self._draw(level, ctx)
        return built, drawn, self._map_art(level, 1 + built.tileset.tilecount)

    def _preview(self, level: Level, built: BuiltTileset, drawn: list[tuple[str, Any]], art: MapArt | None = None) -> bytes:
        built, layers, gids = self._pictured(level, built, drawn, art)
        return preview_png(layers, built, level.objects, gids, self.preview_style == "debug")

    def _pictured(self, level: Level, built: BuiltTileset, drawn: list[tuple[str, Any]], art: MapArt | None) -> tuple[BuiltTileset, list[Any], list[int]]:
        """What previews draw: the tile layers and object gids, with the tileset's atlas, the
        art's tiles in it when the map has art."""
        gids = self._object_gids(level, built)
        if art is None:
            return built, [g for _, g in drawn], gids
        return with_art_atlas(built, [g for _, g in art.merged(drawn)], art.object_gids(level, gids), art)

    def thumbnail(self, level: Level) -> Image.Image | None:
        if not self.preview:
            return None
        from pipeline.thumbnail import drawn_small

        built, drawn, art = self._drawn_map(level)
        built, layers, gids = self._pictured(level, built, drawn, art)
        return drawn_small(layers, built, level.objects, gids, self.preview_style == "debug")
