"""What the exporters that draw maps with a tileset share (`export.tmx`, `export.tmj`,
`export.lua`, `export.ldtk`): the tileset options, the tile layers drawn with that tileset, and
the preview and contact-sheet thumbnail drawn from it. One set of options resolved one way, so
that every exporter of a pack draws the same tilesheet."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pydantic import Field, PositiveInt, PrivateAttr, ValidationInfo, field_validator, model_validator

from pipeline.errors import KeyedError, PipelineError
from pipeline.level import Level
from pipeline.object_tiles import tileset_problem
from pipeline.paths import check_plain_name, check_relative_dir, join
from pipeline.registry import ExportContext, Exporter
from pipeline.tiled.art import Style
from pipeline.tiled.drawing import LayerSpec, draw_layers, object_gid, undrawn_symbols
from pipeline.tiled.render import preview_png
from pipeline.tiled.spec import LoadedTileset, TilesetSpec, load_tileset
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
    data_layers: bool | tuple[str, ...] = Field(
        True,
        description="The Level's data layers (region, distance...) with their exact values (TMX: hidden tile layers with the property `values`; LDtk: level fields NAME_values): true = all, false = none, or the names.",
    )

    _loaded: LoadedTileset | None = PrivateAttr(None)
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

    @property
    def _spec(self) -> TilesetSpec:
        return cast(TilesetSpec, self._tileset_spec)  # set when the parameters were validated

    def files_read(self) -> dict[str, str]:
        return dict(self._loaded.digests) if self._loaded else {}

    def warnings(self) -> list[str]:
        return [f"tileset: {warning}" for warning in self._loaded.warnings] if self._loaded else []

    def object_tile_problem(self, tile: str) -> str | None:
        from pipeline.object_tiles import tileset_problem

        return tileset_problem(self._loaded.spec if self._loaded else None, self.tileset, tile)

    def _data_layer_names(self, level: Level) -> list[str]:
        """The Level's data layers this exporter writes, as `data_layers` picks them."""
        if self.data_layers is True:
            return sorted(level.layers)
        if self.data_layers is False:
            return []
        missing = [n for n in self.data_layers if n not in level.layers]
        if missing:
            known = ", ".join(sorted(level.layers)) or "none"
            raise PipelineError([f"data_layers: the map has no layer {missing[0]!r} (it has: {known})"])
        return list(self.data_layers)

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
        return [object_gid(obj, built) if obj.tile else 0 for obj in level.objects]

    def _preview(self, level: Level, built: BuiltTileset, drawn: list[tuple[str, Any]]) -> bytes:
        return preview_png([g for _, g in drawn], built, level.objects, self._object_gids(level, built))

    def thumbnail(self, level: Level) -> Image.Image | None:
        if not self.preview:
            return None
        from pipeline.thumbnail import drawn_small

        built, drawn = self._draw(level)
        return drawn_small([g for _, g in drawn], built, level.objects, self._object_gids(level, built))
