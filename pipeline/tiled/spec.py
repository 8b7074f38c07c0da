"""Tileset files (`tilesets/*.toml`): the user's own tilesheet, or art we draw, and how symbols
map onto it. Read when a recipe loads, so a bad tileset fails the recipe, not the build."""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path
from typing import Literal, Union

import tomli
from PIL import Image
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from pipeline.errors import KeyedError, did_you_mean, image_error_text, toml_text, validation_problems
from pipeline.level import check_colors, check_properties, near_colors
from pipeline.output import counted, spans
from pipeline.paths import check_plain_name
from pipeline.fsio import read_regular
from pipeline.tiled.art import Style
from pipeline.tiled.icons import Icon
from pipeline.tiled.autotile import SET_SIZE, WangKind
from pipeline.tiled.tileset import sheet_grid


TileProperty = Union[bool, int, float, str]


class VariantSpec(BaseModel):
    """Other tiles that draw a name now and then, so a floor does not repeat: tiles of one's own
    sheet, or for generated art, how many worn copies of the name's tile to draw."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tiles: tuple[int, ...] | None = Field(None, min_length=1, description="Own art: tile ids drawn in place of the name's own tile here and there.")
    count: int | None = Field(None, ge=1, le=8, description="Generated art: how many variants to draw (the tile with a crack and pebbles).")
    weights: tuple[float, ...] | None = Field(
        None, description="Each variant's weight against the name's own tile's 1, as Tiled's tile probability (unset: 1 each)."
    )

    @model_validator(mode="after")
    def _matching(self) -> VariantSpec:
        if (self.tiles is None) == (self.count is None):
            raise KeyedError("tiles", "give `tiles` (ids of your own image) or `count` (generated art), one of them")
        if self.tiles is not None:
            if min(self.tiles) < 0:
                raise KeyedError("tiles", f"tile ids are >= 0 (got {min(self.tiles)})")
            if len(set(self.tiles)) < len(self.tiles):
                raise KeyedError("tiles", "lists a tile twice: give it a larger weight instead")
        if self.weights is not None:
            many, what = (len(self.tiles), "tiles") if self.tiles is not None else (self.count or 0, "variants")
            if len(self.weights) != many:
                raise KeyedError("weights", f"gives {counted(len(self.weights), 'weight')} for {many} {what}: one each")
            bad = [w for w in self.weights if not (0 < w <= 1000)]
            if bad:
                raise KeyedError("weights", f"each is a number > 0 and <= 1000 (got {toml_text(bad[0])})")
        return self

    def weighted(self, first: int = 0) -> tuple[tuple[int, float], ...]:
        """(tile id, weight) of each variant; generated ones numbered from `first`."""
        ids = self.tiles if self.tiles is not None else tuple(range(first, first + (self.count or 0)))
        return tuple(zip(ids, self.weights or (1.0,) * len(ids)))


class AnimationSpec(BaseModel):
    """Frames a name's tile cycles through where the engine animates tiles (Tiled, Godot, Bevy)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    frames: tuple[int, ...] = Field(min_length=2, description="Tile ids shown in turn, usually from the name's own tile.")
    duration: Union[int, tuple[int, ...]] = Field(200, description="Milliseconds each frame shows: one for all, or one per frame.")

    @model_validator(mode="after")
    def _timed(self) -> AnimationSpec:
        if min(self.frames) < 0:
            raise KeyedError("frames", f"tile ids are >= 0 (got {min(self.frames)})")
        durations = (self.duration,) if isinstance(self.duration, int) else self.duration
        if not isinstance(self.duration, int) and len(durations) != len(self.frames):
            raise KeyedError("duration", f"gives {counted(len(durations), 'duration')} for {len(self.frames)} frames: one, or one each")
        bad = [d for d in durations if not 1 <= d <= 60_000]
        if bad:
            raise KeyedError("duration", f"is in milliseconds, 1..60000 (got {bad[0]})")
        return self

    def timed(self) -> tuple[tuple[int, int], ...]:
        """(tile id, milliseconds) of each frame."""
        durations = (self.duration,) * len(self.frames) if isinstance(self.duration, int) else self.duration
        return tuple(zip(self.frames, durations))


class AutotileSpec(BaseModel):
    """How one symbol is autotiled."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    set: WangKind = Field("blob", description="blob: 47 tiles (edges and corners); corner: 16 tiles (corners only).")
    first: int | None = Field(None, ge=0, description="Own art: id of the set's first tile; the set follows in the standard order.")
    tiles: tuple[int, ...] | None = Field(None, description="Own art: every tile id of the set, in the standard order.")
    on: str | None = Field(None, description="What the symbol meets: generated pieces are drawn over its tile, and it is the set's second colour (default: floor, else the first other symbol).")
    edge: Literal["inside", "outside"] = Field("inside", description="Whether the symbol runs on past the map's edge.")
    joins: tuple[str, ...] = Field((), description="Symbols the symbol runs on into, as if they were more of it (doors set in walls).")

    @model_validator(mode="after")
    def _one_source(self) -> AutotileSpec:
        if self.first is not None and self.tiles is not None:
            raise KeyedError("tiles", "give `first` or `tiles`, not both")
        if self.tiles is not None:
            if len(self.tiles) != SET_SIZE[self.set]:
                raise KeyedError("tiles", f"a {self.set} set has {SET_SIZE[self.set]} tiles (got {len(self.tiles)})")
            if min(self.tiles) < 0:
                raise KeyedError("tiles", "tile ids are >= 0")
        return self

    def tile_ids(self) -> tuple[int, ...] | None:
        """The set's tile ids in the user's sheet, or None for generated art."""
        if self.tiles is not None:
            return self.tiles
        if self.first is not None:
            return tuple(range(self.first, self.first + SET_SIZE[self.set]))
        return None


_GENERATED_ONLY = "belongs to generated art (a tileset without `image`)"


class TilesetSpec(BaseModel):
    """A tileset file. With `image`, the user's tilesheet and `tiles` mapping symbol names to
    its tile ids; without, art drawn from colours in a `style`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field("", description="Name of the tileset and its files in the pack (default: the file's name).")
    tile_size: tuple[int, int] = Field((16, 16), description="Tile width and height in pixels.")
    image: str | None = Field(None, description="The user's tilesheet PNG, relative to this file.")
    margin: int = Field(0, ge=0, le=256, description="Pixels around the tilesheet's edge.")
    spacing: int = Field(0, ge=0, le=256, description="Pixels between tiles.")
    extrude: int = Field(0, ge=0, le=16, description="Repeat each tile's border pixels this far out (margin and spacing grow to match).")
    style: Style = Field("flat", description="Generated art: flat, bevel, noise or outline.")
    tiles: dict[str, int] = Field(default_factory=dict, description="Own art: symbol (or object tile) name -> tile id.")
    colors: dict[str, str] = Field(default_factory=dict, description="Generated art: colour per name, over the symbols' own; new names become object tiles.")
    icons: dict[str, Icon] = Field(default_factory=dict, description="Generated art: names drawn as a picture (door, chest or key) in their colour.")
    properties: dict[str, dict[str, TileProperty]] = Field(default_factory=dict, description="Per-name tile properties; solid = true also gives the tile a full-tile collision box.")
    autotile: dict[str, AutotileSpec] = Field(default_factory=dict, description="Symbols drawn with a Wang set.")
    animations: dict[str, AnimationSpec] = Field(
        default_factory=dict, description="Own art: a name's tile animated through frames of your image (water, torches), where the engine animates tiles."
    )
    variants: dict[str, VariantSpec] = Field(
        default_factory=dict, description="Other tiles that draw a name here and there (a floor's cracks and moss): `tiles` of your image, or `count` drawn."
    )

    @field_validator("tile_size", mode="before")
    @classmethod
    def _square(cls, value: object) -> object:
        if isinstance(value, int) and not isinstance(value, bool):
            if not 1 <= value <= 1024:  # said as written, not as the pair it stands for
                raise ValueError(f"must be 1..1024 pixels (got {value})")
            return (value, value)
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"must be a whole number of pixels or [width, height] (got {toml_text(value)})")
        # A before-validator hands on Python objects, which strict mode checks as Python: a list
        # is not a tuple there, so turn it into one.
        return tuple(value) if isinstance(value, list) else value

    @field_validator("tile_size")
    @classmethod
    def _size(cls, value: tuple[int, int]) -> tuple[int, int]:
        if not all(1 <= v <= 1024 for v in value):
            raise ValueError(f"must be 1..1024 pixels (got {list(value)})")
        return value

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return check_plain_name(value) if value else value

    @field_validator("properties")
    @classmethod
    def _finite(cls, value: dict[str, dict[str, TileProperty]]) -> dict[str, dict[str, TileProperty]]:
        for name, props in value.items():
            check_properties(props, f"{name}.")
            # `solid` is what gives the tile its collision box: "true" or 1 would quietly give none.
            if "solid" in props and not isinstance(props["solid"], bool):
                raise KeyedError(f"{name}.solid", f"must be true or false (got {toml_text(props['solid'])}): solid = true gives the tile a collision box")
        return value

    @field_validator("colors")
    @classmethod
    def _colors(cls, value: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        # What is wrong first: colours in a tileset with `image` are the mistake, whatever they hold.
        if info.data.get("image") is not None:
            raise KeyedError("", _GENERATED_ONLY)
        check_colors(value)
        return value

    @field_validator("tiles")
    @classmethod
    def _tiles(cls, value: dict[str, int]) -> dict[str, int]:
        for name, tile_id in value.items():
            if tile_id < 0:
                raise KeyedError(name, f"tile ids are >= 0 (got {tile_id})")
        return value

    @model_validator(mode="after")
    def _art(self) -> TilesetSpec:
        if self.autotile and min(self.tile_size) < 3:
            raise KeyedError("tile_size", f"autotiled tiles need at least 3 x 3 pixels to draw their pieces (got {list(self.tile_size)})")
        if self.icons and min(self.tile_size) < 6:
            raise KeyedError("tile_size", f"icons need tiles of at least 6 x 6 pixels (got {list(self.tile_size)})")
        if self.image is None:
            for key in ("tiles", "animations"):
                if key in self.model_fields_set:
                    raise KeyedError(key, "belongs to a tileset with your own `image`")
            self._check_drawn_variants()
            for name, auto in self.autotile.items():
                if auto.tile_ids() is not None:
                    raise KeyedError(f"autotile.{name}", "`first`/`tiles` pick tiles of your own `image`; generated art draws them")
        else:
            for key in ("style", "icons"):  # `colors` is refused as it is read (_colors)
                if key in self.model_fields_set:
                    raise KeyedError(key, _GENERATED_ONLY)
            if not self.tiles:
                raise KeyedError("tiles", "is required with `image`: which tile draws each symbol, e.g. wall = 0")
            for name, auto in self.autotile.items():
                if auto.tile_ids() is None:
                    raise KeyedError(f"autotile.{name}", "needs `first` or `tiles` (its tiles in your image)")
            self._check_variants()
            animated: dict[int, str] = {}
            for name in self.animations:
                tile = self._plain_tile("animations", name)
                if tile in animated:  # a tile has one animation: one of the two would be lost
                    raise KeyedError(f"animations.{name}", f"{name!r} shares tile {tile} with {animated[tile]!r}, which is animated too: give one a tile of its own")
                animated[tile] = name
            drawn = list(dict.fromkeys([*self.tiles, *self.autotile]))
            for name in self.properties:
                if name not in drawn:
                    hint = did_you_mean(name, drawn) or f" (it has: {', '.join(drawn)})"
                    raise KeyedError(f"properties.{name}", f"names no tile of this tileset: none in `tiles` or `autotile`{hint}")
        return self

    def _plain_tile(self, table: str, name: str) -> int:
        """The tile of `name` in `tiles`, which `[table.name]` must name."""
        if name not in self.tiles:
            hint = did_you_mean(name, list(self.tiles)) or f" (it has: {', '.join(self.tiles)})"
            raise KeyedError(f"{table}.{name}", f"names no tile of `tiles`{hint}")
        return self.tiles[name]

    def _check_drawn_variants(self) -> None:
        for name, variant in self.variants.items():
            if variant.tiles is not None:
                raise KeyedError(f"variants.{name}.tiles", "picks tiles of your own `image`; generated art draws its variants: give `count`")
            if name in self.autotile or name in self.icons:
                kind = "an autotiled name is drawn by its Wang set's pieces" if name in self.autotile else "an icon is a picture"
                raise KeyedError(f"variants.{name}", f"{kind}: variants are for plain tiles")
            if min(self.tile_size) < 4:
                raise KeyedError("tile_size", f"drawn variants need tiles of at least 4 x 4 pixels (got {list(self.tile_size)})")

    def _check_variants(self) -> None:
        # A variant tile carries its name's properties: one that draws another name, or is its
        # own name's tile, would make a tile whose properties say two things.
        owner = {tile: f"the tile of {name!r}" for name, tile in self.tiles.items()}
        for name, auto in self.autotile.items():
            owner.update({tile: f"a piece of autotile.{name}" for tile in auto.tile_ids() or ()})
        for name, variant in self.variants.items():
            if variant.tiles is None:
                raise KeyedError(f"variants.{name}.count", "draws variants for generated art; with your own `image`, name them: tiles = [ids]")
            if name in self.autotile:
                raise KeyedError(f"variants.{name}", "an autotiled name is drawn by its Wang set's pieces: variants are for plain tiles")
            self._plain_tile("variants", name)
            for tile in variant.tiles:
                if tile in owner:
                    raise KeyedError(f"variants.{name}.tiles", f"tile {tile} is {owner[tile]}: a variant needs a tile of its own")
                owner[tile] = f"a variant of {name!r}"


class LoadedTileset(BaseModel):
    """A tileset file as read: the spec, and the digests and bytes of what it reads."""

    model_config = ConfigDict(frozen=True)

    spec: TilesetSpec
    path: str  # as the recipe wrote it
    digests: dict[str, str]  # path (as the recipe would write it) -> sha256
    # The spec's own image, read once as the recipe loads: maps are drawn from these bytes wherever
    # they are built (a Dask worker may not see this file system), and so always from the pixels
    # whose digest the manifest records, even if the file changes during the build.
    image: bytes = b""
    warnings: tuple[str, ...] = ()  # what is allowed but most likely a mistake (`leftover`)


def leftover(spec: TilesetSpec, width: int, height: int, image: str) -> str | None:
    """A warning when the sheet's whole tiles do not fill it: pixels past the last column or row
    (after the margin) most often mean a wrong tile_size, margin or spacing. Tiled takes such a
    sheet as it is, and so do we."""
    tw, th = spec.tile_size
    columns, rows = sheet_grid(width, height, tw, th, spec.margin, spec.spacing)
    right = width - 2 * spec.margin - columns * tw - (columns - 1) * spec.spacing
    bottom = height - 2 * spec.margin - rows * th - (rows - 1) * spec.spacing
    if right <= 0 and bottom <= 0:
        return None
    spare = " and ".join(f"{n} px {where}" for n, where in ((right, "on the right"), (bottom, "at the bottom")) if n > 0)
    return (
        f"{image} ({width} x {height} px) leaves {spare} outside its {columns} x {rows} whole {tw} x {th} tiles"
        f" (margin {spec.margin}, spacing {spec.spacing}): check tile_size, margin and spacing"
    )


def shared_tiles(spec: TilesetSpec) -> str | None:
    """A warning when names share a tile id: the tile carries the first name's properties
    (`name`, `symbol`), so a game reading the map cannot tell the cells of the others from it."""
    by_id: dict[int, list[str]] = {}
    for name, tile in spec.tiles.items():
        by_id.setdefault(tile, []).append(name)
    shared = [names for names in by_id.values() if len(names) > 1]
    if not shared:
        return None
    told = "; ".join(f"{', '.join(names[:-1])} and {names[-1]} share tile {spec.tiles[names[0]]}" for names in shared)
    return f"tiles: {told}: a map's cells of these look alike to a game too (one name in the tile's properties); give each a tile of its own if it should tell them apart"


def check_tile_ids(spec: TilesetSpec, width: int, height: int, image: str) -> str | None:
    """What is wrong with the tile ids of a spec for a width x height sheet, or None."""
    tw, th = spec.tile_size
    columns, rows = sheet_grid(width, height, tw, th, spec.margin, spec.spacing)
    if columns < 1 or rows < 1:
        return f"image: {image} ({width} x {height} px) holds no whole {tw} x {th} tile with margin {spec.margin} and spacing {spec.spacing}"
    count = columns * rows
    named = [(f"tiles.{n}", (i,)) for n, i in spec.tiles.items()]
    sets = [(f"autotile.{n}", a.tile_ids() or ()) for n, a in spec.autotile.items()]
    sets += [(f"variants.{n}.tiles", v.tiles) for n, v in spec.variants.items() if v.tiles is not None]
    sets += [(f"animations.{n}.frames", a.frames) for n, a in spec.animations.items()]
    for key, ids in named + sets:
        bad = sorted({i for i in ids if i >= count})
        if bad:
            which = f"tile {bad[0]} is" if len(bad) == 1 else f"tiles {spans(bad)} are"
            # Pixels left over beside the whole tiles are the likelier cause than the ids.
            spare = leftover(spec, width, height, image)
            return f"{key}: {which} past the end of {image}, which holds {counted(count, 'tile')} ({columns} x {rows}){f'; {spare}' if spare else ''}"
    return None


def load_tileset(recipe_dir: Path, relative: str) -> LoadedTileset:
    """Read and check a tileset file; KeyedError("tileset", ...) names the file and its key."""
    path = Path(os.path.normpath(recipe_dir / relative))  # "tilesets/x.toml", not "recipes/../tilesets/x.toml"
    try:
        data = read_regular(path)  # a FIFO here would hang the recipe's loading
    except OSError as exc:
        raise KeyedError("tileset", f"cannot read {path} ({exc.strerror or exc})") from None
    try:
        table = tomli.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, tomli.TOMLDecodeError) as exc:
        raise KeyedError("tileset", f"{path}: not valid TOML ({exc})") from None
    if not table:  # emptied or cut short by accident: the maps would quietly change to default art
        raise KeyedError("tileset", f"{path}: the tileset is empty (set at least tile_size, or your image and tiles; docs/tilesets.md)")
    try:
        # Through JSON, as recipes are: strict types, yet arrays still fill tuples.
        spec = TilesetSpec.model_validate_json(json.dumps(table, default=str), strict=True)
    except ValidationError as exc:
        problems = validation_problems(exc, "", TilesetSpec)
        raise KeyedError("tileset", f"{path}: " + "; ".join(p.lstrip(".") for p in problems)) from None
    if not spec.name:
        stem = Path(relative).stem
        try:
            check_plain_name(stem)
        except ValueError:
            raise KeyedError("tileset", f"{path}: name the tileset (`name = ...`): its file name {stem!r} is not a plain name") from None
        spec = spec.model_copy(update={"name": stem})
    digests = {relative: hashlib.sha256(data).hexdigest()}
    warnings = [w for name, props in spec.properties.items() for w in near_colors(props, f"properties.{name}.")]
    image_data = b""
    if spec.image is not None:
        image_rel = str(Path(relative).parent / spec.image)
        image_path = Path(os.path.normpath(recipe_dir / image_rel))
        try:
            image_data = read_regular(image_path)
            with Image.open(io.BytesIO(image_data)) as image:
                width, height = image.size
                image.load()  # every pixel: a cut-short PNG fails here, not in every map's export
        except (OSError, ValueError) as exc:
            raise KeyedError("tileset", f"{path}: image: cannot read {image_path} as an image ({image_error_text(exc)})") from None
        problem = check_tile_ids(spec, width, height, str(image_path))
        if problem:
            raise KeyedError("tileset", f"{path}: {problem}")
        digests[image_rel] = hashlib.sha256(image_data).hexdigest()
        warnings += [w for w in (leftover(spec, width, height, str(image_path)), shared_tiles(spec)) if w]
    return LoadedTileset(spec=spec, path=relative, digests=digests, image=image_data, warnings=tuple(f"{path}: {w}" for w in warnings))


def tileset_problem(spec: TilesetSpec | None, path: str | None, tile: str) -> str | None:
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
        known = ", ".join(spec.tiles) or "none"
        return f"its tileset file {path} has no {tile!r} in `tiles`{did_you_mean(tile, spec.tiles)} (it has: {known})"
    return None
