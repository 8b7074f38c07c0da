"""What the TMX, Tiled JSON and Lua exporters share: the tileset, the layers, the engine profile and
the preview drawn from the tilesheet."""

from __future__ import annotations

import posixpath
from dataclasses import replace
from typing import Any, ClassVar, Literal

from pydantic import Field, PrivateAttr, field_serializer, field_validator, model_validator

from pipeline.errors import KeyedError, PipelineError
from pipeline.level import Level, dangling_references, object_ids, object_positions, with_object_ids
from pipeline.paths import check_plain_name, join, relative_to
from pipeline.registry import ExportContext, PackContext
from pipeline.stages.export.drawn_map import DrawnMapExporter
from pipeline.tiled.chunks import DEFAULT_CHUNK, MIN_CHUNK
from pipeline.tiled.drawn import FOLDER, as_tileset
from pipeline.tiled.drawing import LayerSpec
from pipeline.tiled.profile_rules import profile_objects, profile_tileset
from pipeline.tiled.profiles import PROFILES, Format, ProfileName, layer_format, resolve
from pipeline.tiled.project import OBJECT_TYPES_SUFFIX, PROJECT_SUFFIX, SESSION_SUFFIX, is_current, project_files, sources_key
from pipeline.tiled.read.error import MapFileError
from pipeline.tiled.read.objects import map_objects
from pipeline.tiled.tileset import Tileset
from pipeline.tiled.tmx import TileLayer, TmxMap
from pipeline.tiled.validate import check_map
from pipeline.tiled.world import WORLD_FILE, map_pixels, world_json
from pipeline.tiled.values import data_layer, values_paths, values_tileset


class TiledMapExporter(DrawnMapExporter):
    """Base of `export.tmx`, `export.tmj` and `export.lua`; subclasses set `format` and write the map file."""

    format: ClassVar[Format]

    profile: ProfileName = Field("tiled", description="Engine the files are for: tiled, phaser, godot, unity, love or bevy (docs/engines.md says what each changes).")
    embed_tileset: bool | None = Field(None, description="Embed the tileset in every map (unset: as the profile prefers).")
    encoding: Literal["auto", "csv", "base64"] | None = Field(
        None,
        description="Tile layer data encoding. auto: csv for maps of up to 256 x 256 tiles, base64 + zlib for bigger ones. Unset: auto (csv with profile phaser, base64 with godot; base64 when compression is zlib or gzip).",
    )
    compression: Literal["none", "zlib", "gzip"] | None = Field(
        None, description="Compression of base64 layer data (unset: none for small maps, zlib for big ones with encoding auto; zlib with profile godot)."
    )
    world: bool = Field(
        False, exclude_if=lambda world: not world,
        description="Also write maps.world beside the maps: a Tiled world with every map of the pack side by side, in the pack's order (floors joined by place.stairs, first to last), which Tiled opens as one.",
    )
    infinite: bool = Field(
        False, exclude_if=lambda infinite: not infinite,
        description="Write infinite maps: each layer cut into square chunks of `chunk` tiles, the empty ones left out, which streaming engines load a piece at a time (Tiled, YATI, SuperTiled2Unity, bevy_ecs_tiled and Phaser read them; pytmx does not).",
    )
    chunk: int = Field(
        DEFAULT_CHUNK, ge=MIN_CHUNK, le=256, exclude_if=lambda chunk: chunk == DEFAULT_CHUNK,
        description="With infinite: the side of a chunk in tiles (Tiled's default 16; 32 or 64 for big worlds).",
    )
    heat_layers: tuple[str, ...] = Field(
        ("distance",), description="Data layers pictured in 16 bands from 0 to their largest value; the others by value mod 16 (labels)."
    )
    project: str = Field(
        "maps", exclude_if=lambda project: project == "maps",
        description=(
            "Also write DIR/PROJECT.tiled-project, a Tiled project declaring a class for each object type the maps hold, with a typed"
            " member for each property, and enums for room roles, door sides and stairs directions (and DIR/PROJECT.objecttypes.json,"
            ' the same classes for Tiled 1.8). The maps of one folder share it. "": no project, and the maps name no enum.'
        ),
    )

    _project = field_validator("project")(classmethod(lambda cls, v: check_plain_name(v) if v else v))

    _options: dict[str, Any] = PrivateAttr(default_factory=dict)

    @field_validator("layers")
    @classmethod
    def _unique_layers(cls, value: tuple[LayerSpec, ...]) -> tuple[LayerSpec, ...]:
        names = [layer.name for layer in value]
        for name in names:
            if names.count(name) > 1 or name == "objects":
                raise KeyedError(name, "layer names must be unique and not 'objects' (the object layer's)")
        return value

    @model_validator(mode="after")
    def _resolve_profile(self) -> TiledMapExporter:
        options, problems = resolve(
            self.profile,
            self.format,
            {"embed_tileset": self.embed_tileset, "encoding": self.encoding, "compression": self.compression},
        )
        if problems:
            raise KeyedError(*problems[0])
        if options["compression"] != "none" and options["encoding"] == "csv":
            raise KeyedError("compression", 'needs encoding = "base64" (CSV data is never compressed)')
        if "chunk" in self.model_fields_set and not self.infinite:
            raise KeyedError("chunk", "only with infinite = true (a finite map has no chunks)")
        if self.infinite and self.format == "lua":
            raise KeyedError("infinite", "export.lua writes finite maps (use export.tmx or export.tmj for infinite ones)")
        if self.infinite and self.world and self.profile == "bevy":
            raise KeyedError("infinite", "not with world = true for profile 'bevy': bevy_ecs_tiled loads no infinite map inside a world")
        self._options = options
        return self

    def wanted_data_layers(self) -> bool | tuple[str, ...]:
        # A profile whose engine would draw them over the map writes them only when asked for.
        if "data_layers" not in self.model_fields_set and not PROFILES[self.profile].data_layers:
            return False
        return self.data_layers

    @field_serializer("data_layers")
    def _written_data_layers(self, value: bool | tuple[str, ...]) -> bool | tuple[str, ...]:
        # The stage's identity (its cache key) holds what it writes: `data_layers = true` asked
        # for under such a profile is another stage than the option left unset.
        return self.wanted_data_layers()

    def warnings(self) -> list[str]:
        shows = PROFILES[self.profile].shows_hidden_layers
        asked = shows and "data_layers" in self.model_fields_set and self.data_layers not in (False, ())
        return super().warnings() + ([f"data_layers: {shows}"] if asked else [])

    @property
    def _embedded(self) -> bool:
        return bool(self._options["embed_tileset"])

    def _tileset_paths(self) -> tuple[str, str]:
        name = self._spec.name
        return f"tilesets/{name}.{'tsx' if self.format == 'tmx' else 'tsj'}", f"tilesets/{name}.png"

    def _values_paths(self) -> tuple[str, str] | None:
        """The values tileset's files, whenever data layers may be written: the files of a map are
        known before it is made, so they are written even for maps that have no layers."""
        if self.wanted_data_layers() in (False, ()):
            return None
        return values_paths(self._spec.name, self.format)

    def _art_description(self, stem: str) -> str:
        return f"{FOLDER}/{stem}.{'tsx' if self.format == 'tmx' else 'tsj'}"

    def shared_outputs(self) -> list[str]:
        description, sheet = self._tileset_paths()
        out = [sheet] if self._embedded else [description, sheet]
        values = self._values_paths()
        if values:
            out += [values[1]] if self._embedded else list(values)
        for ts, stem in self._art_sets:
            out += [self._art_image(stem, ts)] if self._embedded else [self._art_description(stem), self._art_image(stem, ts)]
        return out

    def shared_variant(self, path: str) -> str:
        # A profile that renames tile properties (godot's data_) writes another tileset file.
        prefix = PROFILES[self.profile].tile_property_prefix
        described = [self._tileset_paths()[0], *(self._art_description(stem) for _, stem in self._art_sets)]
        return f"profile {self.profile!r} names tile properties {prefix}NAME" if prefix and path in described else ""

    def _data_layers(self, level: Level, taken: list[str], firstgid: int, compression: str) -> list[TileLayer]:
        names = self._data_layer_names(level)
        clashes = [n for n in names if n in taken or n == "objects"]
        if clashes:
            raise PipelineError([f"data_layers: layer {clashes[0]!r} has the name of a tile layer or of the object layer; rename one"])
        return [data_layer(n, level.layers[n], n in self.heat_layers, firstgid, compression) for n in names]

    def outputs(self, stem: str) -> list[str]:
        preview = self.preview_file(stem)
        return [join(self.dir, f"{stem}.{self.format}"), *self.shared_outputs(), *([preview] if preview else [])]

    def write_map(self, tmap: TmxMap) -> bytes:
        raise NotImplementedError

    def _project_paths(self) -> dict[str, str]:
        """The project's files by suffix (none without a project)."""
        return {suffix: join(self.dir, f"{self.project}{suffix}") for suffix in (PROJECT_SUFFIX, OBJECT_TYPES_SUFFIX)} if self.project else {}

    def pack_outputs(self) -> list[str]:
        return ([join(self.dir, WORLD_FILE)] if self.world else []) + list(self._project_paths().values())

    def editor_files(self) -> list[str]:
        # Tiled keeps the state of a project it opened (open maps, folders) in a file beside it.
        return [join(self.dir, f"{self.project}{SESSION_SUFFIX}")] if self.project else []

    def shared_pack_outputs(self) -> list[str]:
        # The project is its folder's: made from every TMX and TMJ map there, whichever stage
        # wrote it, so a .tmx and a .tmj exporter writing into one folder write it alike.
        return list(self._project_paths().values())

    def pack_files(self, ctx: PackContext) -> dict[str, bytes]:
        made: dict[str, bytes] = {}
        if self.world:
            mine = [path for _, stem, files in ctx.maps if (path := join(self.dir, f"{stem}.{self.format}")) in files]
            made[join(self.dir, WORLD_FILE)] = world_json([(relative_to(path, self.dir), map_pixels(ctx.pack_dir / path)) for path in mine])
        paths = self._project_paths()
        folder = posixpath.dirname(join(self.dir, "map"))
        # Every Tiled map of the folder, by path: (path in the pack, sha256).
        maps = sorted((path, digest) for path, digest in ctx.files.items() if posixpath.dirname(path) == folder and path.endswith((".tmx", ".tmj")))
        if paths and maps:
            key = sources_key(self.project, maps)
            if ctx.rewrite or not is_current(ctx.pack_dir / paths[PROJECT_SUFFIX], ctx.pack_dir / paths[OBJECT_TYPES_SUFFIX], key):
                objects = []
                for path, _ in maps:
                    try:
                        objects += map_objects(ctx.pack_dir / path)
                    except (OSError, MapFileError) as exc:
                        raise PipelineError([f"{ctx.pack_dir / path}: cannot read its objects for the Tiled project ({exc}); rebuild the pack with --force"]) from None
                made.update({paths[suffix]: data for suffix, data in project_files(self.project, objects, key).items()})
        return made

    def write_tileset(self, tileset: Tileset) -> bytes:
        raise NotImplementedError

    def export(self, level: Level, ctx: ExportContext) -> dict[str, bytes]:
        built, drawn, art = self._drawn_map(level, ctx)
        ctx.warnings.extend(dangling_references(level.properties, level.objects))
        description_path, sheet_path = self._tileset_paths()
        tileset = built.tileset
        # The image path is relative to the file that holds the tileset: the map, or the .tsx/.tsj.
        tileset = replace(tileset, image=relative_to(sheet_path, self.dir if self._embedded else "tilesets"))
        tileset = profile_tileset(PROFILES[self.profile], tileset)
        pack_gids = self._object_gids(level, built)
        object_gids = art.object_gids(level, pack_gids) if art else pack_gids
        layers = art.merged(drawn) if art else drawn
        values = self._values_paths()
        encoding, compression = layer_format(self._options, level.width * level.height)
        data: list[TileLayer] = []
        more: list[tuple[int, Tileset, str | None]] = []
        files: dict[str, bytes] = {}
        for firstgid, ts, stem in art.tilesets if art else ():
            image = self._art_image(stem, ts)
            written = profile_tileset(PROFILES[self.profile], as_tileset(ts, relative_to(image, self.dir if self._embedded else FOLDER)))
            more.append((firstgid, written, None if self._embedded else relative_to(self._art_description(stem), self.dir)))
        # Every art tileset the recipe can carry is written for every map (the files of a map
        # are known before it is made), as the values tileset is.
        for ts, stem in self._art_sets:
            files[self._art_image(stem, ts)] = ts.image
            if not self._embedded:
                written = profile_tileset(PROFILES[self.profile], as_tileset(ts, relative_to(self._art_image(stem, ts), FOLDER)))
                files[self._art_description(stem)] = self.write_tileset(written)
        if values:
            # After the main tileset, whose size the tileset (not the map) fixes, and the art's.
            values_first = art.next_gid if art else 1 + tileset.tilecount
            data = self._data_layers(level, [name for name, _ in layers], values_first, compression)
            values_sheet = values[1]
            values_set, files[values_sheet] = values_tileset(
                *self._spec.tile_size, relative_to(values_sheet, self.dir if self._embedded else "tilesets")
            )
            if data:
                more.append((values_first, values_set, None if self._embedded else relative_to(values[0], self.dir)))
        tmap = TmxMap(
            width=level.width,
            height=level.height,
            tile_width=tileset.tile_width,
            tile_height=tileset.tile_height,
            tileset=tileset,
            tileset_source=None if self._embedded else relative_to(description_path, self.dir),
            layers=[TileLayer(name, gids) for name, gids in layers] + data,
            objects=profile_objects(PROFILES[self.profile], with_object_ids(list(level.objects))),
            object_gids=object_gids,
            properties={**object_ids(level.properties, object_positions(level.objects)), **ctx.provenance},
            encoding=encoding,  # type: ignore[arg-type]  # layer_format gives one of the writer's
            compression=compression,  # type: ignore[arg-type]
            more_tilesets=more,
            chunk=self.chunk if self.infinite else None,
            enums=bool(self.project),
        )
        files.update({join(self.dir, f"{ctx.stem}.{self.format}"): self.write_map(tmap), sheet_path: built.png})
        if not self._embedded:
            files[description_path] = self.write_tileset(tmap.tileset)
            if values:
                files[values[0]] = self.write_tileset(values_set)
        check_map(level.width, level.height, drawn, tileset, 1, [g for g in pack_gids if g], files, sheet_path)
        if values:
            check_map(level.width, level.height, [(d.name, d.gids) for d in data], values_set, values_first, [], files, values[1])
        preview = self.preview_file(ctx.stem)
        if preview:
            files[preview] = self._preview(level, built, drawn, art)
        return files

