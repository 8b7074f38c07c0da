"""Prefabs: hand-made rooms drawn in Tiled, stamped into a generated map where they fit."""

from __future__ import annotations

import math
import posixpath
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Callable, ClassVar, Union

import numpy as np
from pydantic import Field, PrivateAttr, ValidationInfo, field_validator, model_validator

from pipeline.level.alphabets import merge_alphabets
from pipeline.stages.common.count import count_type, draw_count, most_of
from pipeline.drawn_art import mirrored_tile, paste_art, turned_art
from pipeline.level.art import Art, ArtTileset
from pipeline.stages.common.bands import BandStage, in_band, walking_fraction
from pipeline.errors import KeyedError, PipelineError, Rejected, did_you_mean
from pipeline.level import Level, MapObject, PropertyValue, Symbol, own_refs
from pipeline.output import counted
from pipeline.registry import StageParams, stage
from pipeline.tiled.as_level.file import read_map_file
from pipeline.tiled.read.error import MapFileError

PrefabCount = count_type(10_000)
# 4-connectivity, as regions.label by default. scipy is imported where used: it costs every
# command that lists the stage kinds (all of them import this module) a third of a second.
_FOUR = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], dtype=bool)


@dataclass(frozen=True)
class _Prefab:
    """One prefab file as read when the recipe loads."""

    file: str  # relative to the recipe, as matched by the glob
    tiles: np.ndarray  # (h, w) uint8 indices into `alphabet`
    filled: np.ndarray  # (h, w) bool: False on empty cells (gid 0), which keep the map's tile
    alphabet: tuple[Symbol, ...]
    objects: tuple[MapObject, ...]
    properties: tuple[tuple[str, PropertyValue], ...]  # the prefab map's own, for its rectangle
    art: Art | None = None  # its tiles as drawn (pipeline.drawn_art), stamped with its symbols


@dataclass(frozen=True)
class _Variant:
    """A prefab turned `rotation` degrees clockwise after an optional left-right mirror."""

    prefab: _Prefab
    rotation: int
    mirrored: bool
    tiles: np.ndarray
    filled: np.ndarray
    objects: tuple[MapObject, ...]
    art: Art | None = None


# How many placements of earlier prefab stages `added_stats` leaves room for.
EARLIER_PLACEMENTS = 32
# A weight's bound: far beyond any odds a person means, and a sum of weights stays finite.
MAX_WEIGHT = 1e9


@stage("place.prefabs", version=6)
class Prefabs(BandStage):
    """Stamp hand-made rooms drawn in Tiled (vaults, shops, boss rooms) into the map where they
    fit. `prefabs` is a glob of Tiled maps relative to the recipe (`"prefabs/*.tmx"`), read as
    `load.tmx` reads a map (each painted tile's `symbol` property); `count` prefabs are placed
    per map (`[min, max]`: drawn per map), going through the prefabs in a random order, each
    used once before any is used again. `required` files (a boss room) go into every map, once
    each and first, and are not drawn for `count`; with `weights` ({file = weight}, 1 for a file
    not named, 0 never drawn) each of the `count` placements draws its prefab by weight. With
    `rotate` and `mirror` a prefab may be turned by 90-degree steps and flipped left-right.

    A prefab's painted tiles replace the map's; its empty cells (no tile) keep the map's tile.
    Its symbols merge with the map's by name. A placement is valid when it lies inside the map,
    no painted cell covers another prefab or a point object of the map (nor, with `over`, a
    symbol not listed), every door of the prefab (a tile whose symbol is `door`) has a walkable
    tile of the map next to it outside the prefab, and the map's walkable tiles (every symbol
    but `walls`) form no more separate areas than before: a connected map stays connected.
    Positions are tried in a random order from the map's seed, up to `tries` per prefab.
    Without `over`, a prefab may cover any tile: on a map drawn by hand (`load.tmx`) the recipe
    is warned as it loads, as the prefab may erase a room drawn there.

    A prefab whose walkable tiles have no door, or with a door that no cell outside the prefab
    touches, can never be placed: an error when the recipe loads, naming the file. So is one
    larger than the map however it is turned (when the map is made). When a prefab finds no
    place in a map, the map is made again from the next seeds (as a `filter` does), up to
    `attempts` times; then the map fails, naming the prefab.

    With `distance_from` (an object type, e.g. "spawn") and `band`, a prefab's middle must lie
    within that band of the walking distance from the object (fractions of the farthest
    tile's; a wall cell counts as the nearest walkable tile): `band = [0.7, 1]` keeps a boss
    room to the far part of the map, away from the spawn.

    Objects of a prefab come along, moved, turned and mirrored with it (in tiles), with the
    properties `prefab` (its file) and `prefab_index` (which placement); each placement also
    adds a rectangle of type `prefab` named after the file, with the prefab map's own properties,
    those two, `turned` (degrees) and `mirrored`. Layers are kept, and set to 0 under
    painted cells (run region stages after this one). Properties: `prefabs` (how many were
    placed) and `prefab_1`, `prefab_2`, ... such as `"prefabs/vault.tmx at (12, 4) rot 90
    mirrored"` (the top-left tile of the placed prefab).

    A prefab keeps its art, as `load.tmx`'s map does: its painted cells are exported with the
    tiles drawn in it (its tilesets, layers and flips, turned and mirrored with it) and the
    rest of the map with the pack's tileset; its tile objects keep their tile (mirrored with it;
    a turned prefab's tile objects stay upright). A cell a later stage gives another symbol
    shows the pack's tile for it.
    """

    arity: ClassVar[tuple[int, int]] = (1, 1)
    may_reject: ClassVar[bool] = True

    prefabs: str = Field(description='Tiled maps (.tmx, .tmj) to stamp: a glob relative to the recipe, e.g. "prefabs/*.tmx".')
    count: PrefabCount = Field(
        1, description="How many prefabs to place per map, or [min, max]: a number drawn per map from the map's seed."
    )
    rotate: bool = Field(False, description="Let prefabs turn by 90, 180 and 270 degrees.")
    mirror: bool = Field(False, description="Let prefabs flip left-right (and, with rotate, every other way).")
    door: str = Field("door", min_length=1, description="Symbol of the prefab tiles that must meet the map's walkable tiles.")
    over: tuple[str, ...] = Field(
        (), description='Painted cells may cover only these symbols of the map (e.g. ["wall"]: carved into the rock); empty: any.'
    )
    layer: str | None = Field(None, description="The one tile layer of each prefab to read (unset: all of them, upper tiles over lower).")
    # Both left out of the params when unset, so stages built before they existed keep their keys.
    required: tuple[str, ...] = Field(
        (), exclude_if=lambda files: not files,
        description='Prefab files (as the glob matches them, e.g. "prefabs/boss.tmx") placed in every map, once each and before the drawn ones; never drawn for count.',
    )
    weights: dict[str, Annotated[float, Field(ge=0, le=MAX_WEIGHT, allow_inf_nan=False)]] = Field(
        {}, exclude_if=lambda weights: not weights,
        description='How often each file is drawn for count, e.g. {"prefabs/shop.tmx" = 3}: 1 for a file not named, 0 never (unset: each once before any twice).',
    )
    tries: int = Field(500, ge=1, le=1_000_000, description="Most positions tested for connectivity per prefab and map.")
    attempts: int = Field(10, ge=1, le=100_000, description="Most times a map is made again when a prefab finds no place in it.")

    _prefabs: tuple[_Prefab, ...] = PrivateAttr(())
    _files: dict[str, str] = PrivateAttr(default_factory=dict)
    _art_tilesets: tuple[ArtTileset, ...] = PrivateAttr(())
    _not_drawn: tuple[str, ...] = PrivateAttr(())

    # Named as the glob is written (`./prefabs/boss.tmx`) or as it matched: the same file.
    @field_validator("required")
    @classmethod
    def _normal_files(cls, files: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(posixpath.normpath(f) for f in files)

    @field_validator("weights")
    @classmethod
    def _normal_keys(cls, weights: dict[str, float]) -> dict[str, float]:
        return {posixpath.normpath(f): w for f, w in weights.items()}

    @model_validator(mode="after")
    def _load(self, info: ValidationInfo) -> Prefabs:
        recipe_dir = Path((info.context or {}).get("recipe_dir", "."))
        files = _glob(recipe_dir, self.prefabs)
        prefabs: list[_Prefab] = []
        digests: dict[str, str] = {}
        art: dict[str, ArtTileset] = {}
        not_drawn: list[str] = []
        for relative in files:
            shown = recipe_dir / relative
            try:
                loaded = read_map_file(recipe_dir, relative, self.layer)
                prefab = _Prefab(
                    relative, loaded.level.tiles, loaded.filled, loaded.level.alphabet, tuple(loaded.level.objects),
                    tuple(loaded.level.properties.items()), loaded.level.art,
                )
                self._check_doors(prefab)
            except MapFileError as exc:
                raise KeyedError("prefabs", f"{shown}: {exc}") from None
            prefabs.append(prefab)
            digests.update(loaded.files)
            for ts in loaded.art_tilesets:
                art.setdefault(ts.key, ts)
            not_drawn += [f"prefabs: {relative}: {line}" for line in loaded.not_drawn]
        self._art_tilesets = tuple(art.values())
        self._not_drawn = tuple(not_drawn)
        self._prefabs = tuple(prefabs)
        self._files = dict(sorted(digests.items()))
        self._check_choice(files)
        return self

    def _check_choice(self, files: list[str]) -> None:
        """`required` and `weights` name files the glob matched, and leave something to draw."""
        for key, named in (("required", list(self.required)), ("weights", list(self.weights))):
            for name in named:
                if name not in files:
                    raise KeyedError(key, f"{name!r} is not among the files {self.prefabs!r} matches: {', '.join(files)}{did_you_mean(name, files)}")
        if len(set(self.required)) != len(self.required):
            twice = next(f for f in self.required if self.required.count(f) > 1)
            raise KeyedError("required", f"names {twice!r} twice (a required prefab goes into every map once)")
        for name in self.weights:
            if name in self.required:
                raise KeyedError(f"weights.{name}", "is a required file, placed in every map and never drawn: its weight would do nothing")
        pool = [f for f in files if f not in self.required and self.weights.get(f, 1.0) > 0]
        if most_of(self.count) > 0 and not pool:
            every = all(f in self.required for f in files)
            why, fix = ("is required", "take one out of required") if every else ("is required or weighs 0", "give one a weight")
            raise KeyedError("count", f"draws up to {counted(most_of(self.count), 'prefab')}, but every file {self.prefabs!r} matches {why}: set count = 0, or {fix}")

    def _check_doors(self, prefab: _Prefab) -> None:
        """Refuse a prefab that no map could take: walkable tiles with no door, or a door with
        no outside to open onto."""
        level = Level(tiles=prefab.tiles, alphabet=prefab.alphabet)
        names = {s.name for s in prefab.alphabet}
        walkable = prefab.filled & self._prefab_walkable(level)
        doors = self._doors(prefab.tiles, prefab.filled, prefab.alphabet)
        if not prefab.filled.any():
            raise MapFileError("has no tiles: a prefab is the tiles painted in it")
        if walkable.any() and not doors.any():
            hint = "" if self.door in names else f" (it uses no symbol {self.door!r})"
            raise MapFileError(
                f"has walkable tiles but no door{hint}: paint `{self.door}` tiles on its edge, where it meets the map's floor"
            )
        inner = doors & ~_outside_neighbour(prefab.filled)
        if inner.any():
            y, x = (int(v[0]) for v in np.nonzero(inner))
            raise MapFileError(
                f"the door at cell ({x}, {y}) is not on the prefab's edge: nothing outside the prefab (the map, or an empty cell) is next to it"
            )

    def _prefab_walkable(self, level: Level) -> np.ndarray:
        """Walkable tiles of a prefab, which need not use every symbol of `walls`."""
        present = tuple(n for n in self.walls if any(s.name == n or s.char == n for s in level.alphabet))
        if not present:
            return np.ones(level.tiles.shape, dtype=bool)
        return self.mask(level, present, "walls", invert=True)

    def _doors(self, tiles: np.ndarray, filled: np.ndarray, alphabet: tuple[Symbol, ...]) -> np.ndarray:
        index = next((i for i, s in enumerate(alphabet) if s.name == self.door), None)
        if index is None:
            return np.zeros(tiles.shape, dtype=bool)
        return filled & (tiles == index)

    def warnings_after(self, upstream: list[tuple[str, StageParams]]) -> list[str]:
        # Stamped over anything, a prefab can erase what a person drew: said before a map is lost.
        drawn = [(name, str(getattr(params, "file", ""))) for name, params in upstream if params.kind == "load.tmx"]
        if self.over or not drawn:
            return []
        name, file = drawn[0]
        return [
            f"over: unset, so prefabs may be stamped over any tile of {file} (stage.{name}), a map drawn by hand, rooms included;"
            ' set over = ["wall"] (the symbols they may cover)'
        ]

    def files_read(self) -> dict[str, str]:
        return dict(self._files)

    def art_tilesets(self) -> list[ArtTileset]:
        return list(self._art_tilesets)

    def warnings(self) -> list[str]:
        return [*super().warnings(), *self._not_drawn]

    def globs_read(self) -> list[str]:
        return [self.prefabs]

    def added_stats(self) -> tuple[str, ...]:
        # A stage after another numbers on from its placements, which the recipe cannot know
        # as it loads: room for those of a few earlier stages.
        most = most_of(self.count) + len(self.required) + EARLIER_PLACEMENTS
        return ("prefabs", *(f"prefab_{k}" for k in range(1, most + 1)))

    # ----------------------------------------------------------------------------------------

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        level = inputs[0]
        if not self._prefabs:  # only a validated stage has them
            raise PipelineError(["place.prefabs: the stage was not validated (make it with model_validate)"])
        count = draw_count(self.count, rng)
        chosen = self._choose(count, rng)

        # Every prefab's symbols join the map's alphabet, in file order, placed or not: every
        # map of a pack then has the same symbols, so exporters write one tileset for all.
        alphabet = level.alphabet
        remaps: dict[str, np.ndarray] = {}
        for prefab in self._prefabs:
            used = np.unique(prefab.tiles[prefab.filled])
            alphabet, sub = merge_alphabets(alphabet, tuple(prefab.alphabet[i] for i in used))
            remap = np.zeros(len(prefab.alphabet), dtype=np.uint8)
            remap[used] = sub
            remaps[prefab.file] = remap

        tiles = level.tiles.copy()
        work = Level(tiles=tiles, alphabet=alphabet)
        walk_table = self.table(work, self.walls, "walls", invert=True).view(np.bool_)
        walk = walk_table[tiles]
        free = np.ones(tiles.shape, dtype=bool)  # cells a prefab may paint
        free[_object_cells(level)] = False  # nor on a point object or an earlier stage's prefab
        if self.over:
            free &= self.mask(work, self.over, "over")
        areas = _areas(walk)
        # Where a prefab's middle may lie: the band of the walking distance, as the map came in.
        middles = in_band(walking_fraction(level, walk, self.distance_from, "distance_from"), self.band, everywhere=True) if self.distance_from else None
        layers = {name: layer.copy() for name, layer in level.layers.items()}
        objects = list(level.objects)
        props: dict[str, Union[bool, int, float, str]] = {}
        # A second prefab stage numbers on from the first's placements, as one list of them
        # (counted from their rectangles: a stage in between may not pass the `prefabs` stat on).
        stamped: list[tuple[_Variant, int, int]] = []  # their art is pasted once the map's tiles are final
        earlier = max(
            (i for o in level.objects if o.type == "prefab" and isinstance(i := o.properties.get("prefab_index"), int) and not isinstance(i, bool)),
            default=0,
        )

        for k, prefab in enumerate(chosen, start=earlier + 1):
            remap = remaps[prefab.file]
            variants = [v for v in self._variants(prefab) if v.tiles.shape[0] <= tiles.shape[0] and v.tiles.shape[1] <= tiles.shape[1]]
            if not variants:
                h, w = prefab.tiles.shape
                fits_turned = w <= tiles.shape[0] and h <= tiles.shape[1]
                turned = " however it is turned" if self.rotate else (" (set rotate = true to let it turn)" if fits_turned else "")
                raise PipelineError(
                    [f"prefabs: {prefab.file} ({w} x {h} tiles) is larger than the map ({tiles.shape[1]} x {tiles.shape[0]}){turned}"]
                )
            found = self._place(variants, remap, walk_table, walk, free, areas, rng, middles)
            if found is None:
                raise Rejected(
                    f"prefabs: {prefab.file} (placement {k - earlier} of {len(chosen)}) finds no place in this map where its doors meet the"
                    f" walkable tiles and the walkable area stays connected{' with its middle in the band' if middles is not None else ''}"
                    f" (loosen over{' or band' if middles is not None else ''}, allow rotate and mirror, or make room)",
                    self.attempts,
                )
            v, y, x = found
            stamped.append(found)
            h, w = v.tiles.shape
            painted = np.zeros(tiles.shape, dtype=bool)
            painted[y : y + h, x : x + w] = v.filled
            tiles[painted] = remap[v.tiles[v.filled]]
            walk = walk_table[tiles]
            free &= ~painted
            areas = _areas(walk)
            for layer in layers.values():
                layer[painted] = 0
            mirrored = " mirrored" if v.mirrored else ""
            props[f"prefab_{k}"] = f"{prefab.file} at ({x}, {y}) rot {v.rotation}{mirrored}"
            stem = posixpath.splitext(posixpath.basename(prefab.file))[0]
            # The prefab map's own properties go on its rectangle (whose references name the
            # placement's objects); its objects move with it.
            placed = [
                MapObject(stem, "prefab", float(x), float(y), float(w), float(h),
                          {**dict(prefab.properties), "prefab": prefab.file, "prefab_index": k, "turned": v.rotation, "mirrored": v.mirrored}),
                *(replace(obj, x=obj.x + x, y=obj.y + y, properties={**obj.properties, "prefab": prefab.file, "prefab_index": k}) for obj in v.objects),
            ]
            # Each placement's objects refer to each other: never to another placement's copy of
            # the same prefab, nor to objects of the map (or an earlier prefab stage) of that id.
            objects += own_refs(placed, {o.ref for o in objects if o.ref}, f"{k}:")[0]

        out = Level(
            tiles=tiles, alphabet=alphabet, layers=layers, objects=objects,
            properties={**level.properties, "prefabs": earlier + len(chosen), **props}, art=level.art,
        )
        # A painted cell shows the prefab's art, or (none drawn there) the pack's tile: never the
        # art of the map it covers.
        for v, y, x in stamped:
            paste_art(out, Level(tiles=v.tiles, alphabet=v.prefab.alphabet, art=v.art), x, y, v.filled)
        return out

    def _choose(self, count: int, rng: np.random.Generator) -> list[_Prefab]:
        """The prefabs this map gets, in order: the required ones, then `count` drawn."""
        if not self.required and not self.weights:  # the draw every earlier version made
            order = rng.permutation(len(self._prefabs))
            return [self._prefabs[int(order[k % len(order)])] for k in range(count)]
        by_file = {p.file: p for p in self._prefabs}
        pool = [p for p in self._prefabs if p.file not in self.required]
        if self.weights:
            weights = np.array([self.weights.get(p.file, 1.0) for p in pool])
            drawn = rng.choice(len(pool), size=count, p=weights / weights.sum()).tolist() if count else []
        else:
            order = rng.permutation(len(pool))
            drawn = [int(order[k % len(order)]) for k in range(count)]
        return [by_file[f] for f in self.required] + [pool[i] for i in drawn]

    def _variants(self, prefab: _Prefab) -> list[_Variant]:
        out = []
        for mirrored in (False, True) if self.mirror else (False,):
            for rotation in (0, 90, 180, 270) if self.rotate else (0,):
                out.append(_turn(prefab, rotation, mirrored))
        return out

    def _place(
        self, variants: list[_Variant], remap: np.ndarray, walk_table: np.ndarray, walk: np.ndarray, free: np.ndarray, areas: int, rng: np.random.Generator,
        middles: np.ndarray | None = None,
    ) -> tuple[_Variant, int, int] | None:
        """A valid (variant, y, x), or None. Every test but connectivity is done for all
        positions at once; connectivity is tested on candidates in a random order. `middles`:
        the cells a prefab's middle may lie on (None: any)."""
        ok_per_variant = [self._candidates(v, walk, free) for v in variants]
        if middles is not None:
            for v, ok in zip(variants, ok_per_variant):
                h, w = v.tiles.shape
                ok &= middles[h // 2 : h // 2 + ok.shape[0], w // 2 : w // 2 + ok.shape[1]]
        positions = [np.flatnonzero(ok) for ok in ok_per_variant]
        starts = np.cumsum([0] + [p.size for p in positions])
        total = int(starts[-1])
        if total == 0:
            return None
        stamps = [walk_table[remap[v.tiles]] & v.filled for v in variants]
        # A sample, not a shuffle of every candidate: a big map has millions of them.
        tried = rng.choice(total, size=min(self.tries, total), replace=False)
        for c in tried.tolist():
            i = int(np.searchsorted(starts, c, side="right")) - 1
            v = variants[i]
            y, x = divmod(int(positions[i][c - int(starts[i])]), ok_per_variant[i].shape[1])
            if _stays_connected(walk, v.filled, stamps[i], y, x, areas):
                return v, y, x
        return None

    def _candidates(self, v: _Variant, walk: np.ndarray, free: np.ndarray) -> np.ndarray:
        """Bool grid over top-left positions: inside the map, painting only free cells, every
        door next to a walkable tile outside the prefab."""
        H, W = walk.shape
        h, w = v.tiles.shape
        blocked = _correlate(~free, v.filled)
        ok = ~blocked
        doors = self._doors(v.tiles, v.filled, v.prefab.alphabet)
        if doors.any():
            padded = np.pad(walk, 1)  # off the map is not walkable
            outside = ~np.pad(v.filled, 1)  # the prefab's empty cells and its surroundings
            for dy, dx in zip(*np.nonzero(doors)):
                touches = np.zeros_like(ok)
                for ny, nx in ((dy - 1, dx), (dy + 1, dx), (dy, dx - 1), (dy, dx + 1)):
                    if outside[ny + 1, nx + 1]:
                        touches |= padded[ny + 1 : ny + 1 + H - h + 1, nx + 1 : nx + 1 + W - w + 1]
                ok &= touches
        return ok


# --------------------------------------------------------------------------------------------


def _glob(recipe_dir: Path, pattern: str) -> list[str]:
    """Files matching `pattern` under the recipe folder, sorted, as paths relative to it."""
    if not pattern or Path(pattern).is_absolute():
        raise KeyedError("prefabs", f"must be a glob relative to the recipe, such as \"prefabs/*.tmx\" (got {pattern!r})")
    try:
        matches = sorted(p for p in recipe_dir.glob(pattern) if p.is_file())
    except (ValueError, NotImplementedError, OSError) as exc:
        raise KeyedError("prefabs", f"cannot match {pattern!r} ({exc})") from None
    if not matches:
        raise KeyedError("prefabs", f"no file matches {pattern!r} in {recipe_dir} (a glob relative to the recipe, such as \"prefabs/*.tmx\")")
    return [p.relative_to(recipe_dir).as_posix() for p in matches]


def _turn(prefab: _Prefab, rotation: int, mirrored: bool) -> _Variant:
    """The prefab mirrored left-right (if asked), then turned clockwise; objects follow, as
    points and rectangles in tile units."""
    tiles, filled = prefab.tiles, prefab.filled
    h, w = tiles.shape
    objects = list(prefab.objects)
    if mirrored:
        tiles, filled = np.fliplr(tiles), np.fliplr(filled)
        objects = [_with_points(replace(o, x=w - o.x - o.w, art=mirrored_tile(o.art)), o, lambda px, py: (-px, py)) for o in objects]
    for _ in range(rotation // 90):
        # Clockwise: (x, y) in an h-tall grid goes to (h - y, x); a rectangle's corner moves to
        # the one that is top-left after the turn, and a polyline's points (relative to x, y) turn.
        h = tiles.shape[0]
        tiles, filled = np.rot90(tiles, -1), np.rot90(filled, -1)
        objects = [_with_points(replace(o, x=h - o.y - o.h, y=o.x, w=o.h, h=o.w), o, lambda px, py: (-py, px)) for o in objects]
    art = turned_art(prefab.art, rotation, mirrored) if prefab.art is not None else None
    return _Variant(prefab, rotation, mirrored, np.ascontiguousarray(tiles), np.ascontiguousarray(filled), tuple(objects), art)


def _outside_neighbour(filled: np.ndarray) -> np.ndarray:
    """Cells with a 4-neighbour outside the prefab: off its edge, or one of its empty cells."""
    outside = ~np.pad(filled, 1)
    return outside[:-2, 1:-1] | outside[2:, 1:-1] | outside[1:-1, :-2] | outside[1:-1, 2:]


def _with_points(moved: MapObject, original: MapObject, turn: Callable[[float, float], tuple[float, float]]) -> MapObject:
    points = getattr(original, "points", ())
    if not points:
        return moved
    return replace(moved, points=tuple(turn(px, py) for px, py in points))


def _correlate(grid: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Over every top-left position of `mask` inside `grid`: whether a True cell of `mask`
    lands on a True cell of `grid` (FFT for big grids, so no per-cell loop)."""
    if not grid.any():
        return np.zeros((grid.shape[0] - mask.shape[0] + 1, grid.shape[1] - mask.shape[1] + 1), dtype=bool)
    from scipy import signal

    hits = signal.correlate(grid.astype(np.float32), mask.astype(np.float32), mode="valid")
    return hits > 0.5


def _object_cells(level: Level) -> np.ndarray:
    """Tiles holding a point object of the map (spawn, exit, items), or under the rectangle of
    an earlier stage's prefab: a prefab never buries the one or cuts into the other."""
    cells = np.zeros(level.tiles.shape, dtype=bool)
    for o in level.objects:
        if o.w == 0 and o.h == 0 and 0 <= o.y < level.height and 0 <= o.x < level.width:
            cells[int(o.y), int(o.x)] = True
        elif o.type == "prefab" and o.w > 0 and o.h > 0:
            cells[max(0, int(o.y)) : max(0, int(math.ceil(o.y + o.h))), max(0, int(o.x)) : max(0, int(math.ceil(o.x + o.w)))] = True
    return cells


def _areas(walk: np.ndarray) -> int:
    from scipy import ndimage

    return int(ndimage.label(walk, structure=_FOUR)[1])


def _stays_connected(walk: np.ndarray, filled: np.ndarray, stamp: np.ndarray, y: int, x: int, areas: int) -> bool:
    """Whether painting `stamp` (walkable prefab cells) at (y, x) leaves at most `areas`
    separate walkable areas.

    First around the prefab alone: if the walkable tiles of the prefab and a one-tile ring
    around it form one area, every path of the map that crossed the prefab's place can go
    round through that area, so no area splits and the prefab is no island. Otherwise the
    whole map is labelled (the parts may meet further away)."""
    H, W = walk.shape
    h, w = filled.shape
    y0, x0, y1, x1 = max(y - 1, 0), max(x - 1, 0), min(y + h + 1, H), min(x + w + 1, W)
    window = walk[y0:y1, x0:x1].copy()
    sub = window[y - y0 : y - y0 + h, x - x0 : x - x0 + w]
    sub[filled] = stamp[filled]
    if _areas(window) <= 1:
        return True
    whole = walk.copy()
    region = whole[y : y + h, x : x + w]
    region[filled] = stamp[filled]
    return _areas(whole) <= areas
