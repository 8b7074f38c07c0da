"""What the TMX and Tiled JSON exporters share: the tileset, the layers, the engine profile and
the preview drawn from the tilesheet."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

from pydantic import Field, PositiveInt, PrivateAttr, ValidationInfo, field_validator, model_validator

from pipeline.errors import KeyedError, PipelineError
from pipeline.level import Level
from pipeline.paths import check_plain_name, check_relative_dir, join, relative_to
from pipeline.registry import ExportContext, Exporter
from pipeline.tiled.art import Style
from pipeline.tiled.drawing import LayerSpec, draw_layers, object_gid
from pipeline.tiled.profile_rules import profile_objects, profile_tileset
from pipeline.tiled.profiles import PROFILES, Format, ProfileName, resolve
from pipeline.tiled.render import preview_png
from pipeline.tiled.spec import LoadedTileset, TilesetSpec, load_tileset
from pipeline.tiled.tilesheet import BuiltTileset, build_tileset
from pipeline.tiled.tileset import Tileset
from pipeline.tiled.tmx import TileLayer, TmxMap
from pipeline.tiled.validate import check_map
from pipeline.tiled.values import data_layer, values_paths, values_tileset

if TYPE_CHECKING:
    from PIL import Image

# Options that describe the generated tileset when the recipe names no tileset file.
_GENERATED = ("tile_size", "margin", "spacing", "style")


class TiledMapExporter(Exporter):
    """Base of `export.tmx` and `export.tmj`; subclasses set `format` and write the map file."""

    format: ClassVar[Format]

    dir: str = Field(".", description="Folder inside the pack for the map files.")
    tileset: str | None = Field(None, description="Tileset file (tilesets/*.toml), relative to the recipe; unset: one tile per symbol in its colour.")
    tileset_name: str = Field("symbols", description="Name of the tileset and its files under tilesets/ (with a tileset file: its `name`, unless set here).")
    tile_size: PositiveInt = Field(16, le=1024, description="Without a tileset file: tile width and height in pixels.")
    margin: int = Field(0, ge=0, le=64, description="Without a tileset file: pixels around the tilesheet's edge.")
    spacing: int = Field(0, ge=0, le=64, description="Without a tileset file: pixels between tiles in the tilesheet.")
    style: Style = Field("flat", description="Without a tileset file: flat, bevel, noise or outline.")
    layers: tuple[LayerSpec, ...] = Field((), description='Tile layers, each {name, symbols, tile, autotile}; unset: one layer of every symbol.')
    layer_name: str = Field("tiles", min_length=1, description="Name of the single tile layer when `layers` is unset.")
    profile: ProfileName = Field("tiled", description="Engine the files are for: tiled, phaser, godot, unity, love or bevy (docs/engines.md says what each changes).")
    embed_tileset: bool | None = Field(None, description="Embed the tileset in every map (unset: as the profile prefers).")
    encoding: Literal["csv", "base64"] | None = Field(None, description="Tile layer data encoding (unset: csv; base64 with profile godot).")
    compression: Literal["none", "zlib", "gzip"] | None = Field(None, description="Compression of base64 layer data (unset: none; zlib with profile godot).")
    preview: bool = Field(True, description="Also write a PNG of each map drawn from the tilesheet, as the engine shows it.")
    preview_dir: str | None = Field(None, description="Folder inside the pack for the previews (unset: `previews` inside `dir`).")
    data_layers: bool | tuple[str, ...] = Field(
        True,
        description="The Level's layers (region, distance...) as hidden tile layers with their exact values in the property `values`: true = all, false = none, or the names.",
    )
    heat_layers: tuple[str, ...] = Field(
        ("distance",), description="Data layers pictured in 16 bands from 0 to their largest value; the others by value mod 16 (labels)."
    )

    _loaded: LoadedTileset | None = PrivateAttr(None)
    _tileset_spec: TilesetSpec | None = PrivateAttr(None)  # what draws the maps: the file's, or one from the options
    _options: dict[str, Any] = PrivateAttr(default_factory=dict)

    _dirs = field_validator("dir", "preview_dir")(classmethod(lambda cls, v: v if v is None else check_relative_dir(v)))
    _name = field_validator("tileset_name")(classmethod(lambda cls, v: check_plain_name(v)))

    @field_validator("layers")
    @classmethod
    def _unique_layers(cls, value: tuple[LayerSpec, ...]) -> tuple[LayerSpec, ...]:
        names = [layer.name for layer in value]
        for name in names:
            if names.count(name) > 1 or name == "objects":
                raise KeyedError(name, "layer names must be unique and not 'objects' (the object layer's)")
        return value

    @model_validator(mode="after")
    def _resolve(self, info: ValidationInfo) -> TiledMapExporter:
        if self.tileset is not None:
            given = [k for k in _GENERATED if k in self.model_fields_set]
            if given:
                raise KeyedError(given[0], f"comes from the tileset file {self.tileset!r}; remove it here")
            self._loaded = load_tileset(Path((info.context or {}).get("recipe_dir", ".")), self.tileset)
            self._tileset_spec = self._loaded.spec
            if "tileset_name" in self.model_fields_set:
                # One file drawing maps of different symbols in one pack needs a name per symbol set.
                self._tileset_spec = self._loaded.spec.model_copy(update={"name": self.tileset_name})
        else:
            self._tileset_spec = TilesetSpec(
                name=self.tileset_name, tile_size=(self.tile_size, self.tile_size), margin=self.margin, spacing=self.spacing, style=self.style
            )
        options, problems = resolve(
            self.profile,
            self.format,
            {"embed_tileset": self.embed_tileset, "encoding": self.encoding, "compression": self.compression},
        )
        if problems:
            raise KeyedError(*problems[0])
        if options["compression"] != "none" and options["encoding"] != "base64":
            raise KeyedError("compression", 'needs encoding = "base64" (CSV data is never compressed)')
        self._options = options
        return self

    @property
    def _spec(self) -> TilesetSpec:
        return cast(TilesetSpec, self._tileset_spec)  # set when the parameters were validated

    def files_read(self) -> dict[str, str]:
        return dict(self._loaded.digests) if self._loaded else {}

    def object_tile_problem(self, tile: str) -> str | None:
        from pipeline.object_tiles import tileset_problem

        return tileset_problem(self._loaded.spec if self._loaded else None, self.tileset, tile)

    @property
    def _embedded(self) -> bool:
        return bool(self._options["embed_tileset"])

    def _tileset_paths(self) -> tuple[str, str]:
        name = self._spec.name
        return f"tilesets/{name}.{'tsx' if self.format == 'tmx' else 'tsj'}", f"tilesets/{name}.png"

    def _values_paths(self) -> tuple[str, str] | None:
        """The values tileset's files, whenever data layers may be written: the files of a map are
        known before it is made, so they are written even for maps that have no layers."""
        if self.data_layers is False or self.data_layers == ():
            return None
        return values_paths(self._spec.name, self.format)

    def shared_outputs(self) -> list[str]:
        description, sheet = self._tileset_paths()
        out = [sheet] if self._embedded else [description, sheet]
        values = self._values_paths()
        if values:
            out += [values[1]] if self._embedded else list(values)
        return out

    def _data_layers(self, level: Level, taken: list[str], firstgid: int) -> list[TileLayer]:
        if self.data_layers is True:
            names = sorted(level.layers)
        elif self.data_layers is False:
            names = []
        else:
            names = list(self.data_layers)
            missing = [n for n in names if n not in level.layers]
            if missing:
                known = ", ".join(sorted(level.layers)) or "none"
                raise PipelineError([f"data_layers: the map has no layer {missing[0]!r} (it has: {known})"])
        clashes = [n for n in names if n in taken or n == "objects"]
        if clashes:
            raise PipelineError([f"data_layers: layer {clashes[0]!r} has the name of a tile layer or of the object layer; rename one"])
        return [data_layer(n, level.layers[n], n in self.heat_layers, firstgid, self._options["compression"]) for n in names]

    def outputs(self, stem: str) -> list[str]:
        preview = self.preview_file(stem)
        return [join(self.dir, f"{stem}.{self.format}"), *self.shared_outputs(), *([preview] if preview else [])]

    def preview_file(self, stem: str) -> str | None:
        if not self.preview:
            return None
        return join(self.preview_dir if self.preview_dir is not None else join(self.dir, "previews"), f"{stem}.png")

    def write_map(self, tmap: TmxMap) -> bytes:
        raise NotImplementedError

    def write_tileset(self, tileset: Tileset) -> bytes:
        raise NotImplementedError

    def _draw(self, level: Level) -> tuple[BuiltTileset, list[tuple[str, Any]]]:
        """The tileset for the map's alphabet and the map's tile layers drawn with it."""
        loaded = self._loaded
        built = build_tileset(self._spec, level.alphabet, loaded.image if loaded else b"")
        return built, draw_layers(level, built, list(self.layers) or [LayerSpec(name=self.layer_name)])

    def thumbnail(self, level: Level) -> Image.Image | None:
        if not self.preview:
            return None
        from pipeline.thumbnail import drawn_small

        built, drawn = self._draw(level)
        return drawn_small([g for _, g in drawn], built)

    def export(self, level: Level, ctx: ExportContext) -> dict[str, bytes]:
        built, drawn = self._draw(level)
        description_path, sheet_path = self._tileset_paths()
        tileset = built.tileset
        # The image path is relative to the file that holds the tileset: the map, or the .tsx/.tsj.
        tileset = replace(tileset, image=relative_to(sheet_path, self.dir if self._embedded else "tilesets"))
        tileset = profile_tileset(PROFILES[self.profile], tileset)
        object_gids = [object_gid(obj, built) if obj.tile else 0 for obj in level.objects]
        values = self._values_paths()
        data: list[TileLayer] = []
        more: list[tuple[int, Tileset, str | None]] = []
        files: dict[str, bytes] = {}
        if values:
            # After the main tileset, whose size the tileset (not the map) fixes.
            values_first = 1 + tileset.tilecount
            data = self._data_layers(level, [name for name, _ in drawn], values_first)
            values_sheet = values[1]
            values_set, files[values_sheet] = values_tileset(
                *self._spec.tile_size, relative_to(values_sheet, self.dir if self._embedded else "tilesets")
            )
            if data:
                more = [(values_first, values_set, None if self._embedded else relative_to(values[0], self.dir))]
        tmap = TmxMap(
            width=level.width,
            height=level.height,
            tile_width=tileset.tile_width,
            tile_height=tileset.tile_height,
            tileset=tileset,
            tileset_source=None if self._embedded else relative_to(description_path, self.dir),
            layers=[TileLayer(name, gids) for name, gids in drawn] + data,
            objects=profile_objects(PROFILES[self.profile], list(level.objects)),
            object_gids=object_gids,
            properties={**level.properties, **ctx.provenance},
            encoding=self._options["encoding"],
            compression=self._options["compression"],
            more_tilesets=more,
        )
        files.update({join(self.dir, f"{ctx.stem}.{self.format}"): self.write_map(tmap), sheet_path: built.png})
        if not self._embedded:
            files[description_path] = self.write_tileset(tmap.tileset)
            if values:
                files[values[0]] = self.write_tileset(values_set)
        check_map(level.width, level.height, drawn, tileset, 1, [g for g in object_gids if g], files, sheet_path)
        if values:
            check_map(level.width, level.height, [(d.name, d.gids) for d in data], values_set, 1 + tileset.tilecount, [], files, values[1])
        preview = self.preview_file(ctx.stem)
        if preview:
            files[preview] = preview_png([g for _, g in drawn], built)
        return files

