"""Stage kinds: the params-model base class, the `@stage` decorator and the lookup table of the
built-in kinds and those of installed packages (the entry-point group `pcg_pipeline.stages`).

A stage is a pydantic model of its parameters with a pure `run`. The executor only sees this
interface: it never knows what a stage does inside.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import re
import sys
import traceback
from collections.abc import Mapping
from importlib.metadata import EntryPoint, entry_points
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterator, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict

from pipeline.errors import PipelineError
from pipeline.level import Level, PropertyValue

if TYPE_CHECKING:
    from PIL import Image

    from pipeline.best import BestOf, Tried
    from pipeline.level.art import ArtTileset

# Installed packages declare their stage modules under this entry-point group.
ENTRY_POINT_GROUP = "pcg_pipeline.stages"

# How a worker rebuilds a plugin file's stage params: set by pipeline.recipe.plugins, the only module
# that makes such stages (the registry knows nothing else of plugin files).
remake_plugin_params: Callable[[str, str, bytes, str], "StageParams"] | None = None

# Keys of a [stage.NAME] table that belong to the recipe, not to the stage's params.
RESERVED_KEYS = ("use", "input", "inputs")

# Every built-in kind and the module that defines it. A recipe imports the modules of the kinds
# it uses alone (`lookup`): importing all of them costs every command about 0.08 s, a no-change
# build a sixth of its time. `kinds()` imports them all, for listings. A new stage module gets
# its line here (tests/test_registry.py checks the table against the `@stage` lines).
BUILTIN_KINDS: dict[str, str] = {
    "compose.overlay": "pipeline.stages.compose.overlay",
    "dungeon.blob_map": "pipeline.stages.dungeon.blob_map",
    "dungeon.bsp": "pipeline.stages.dungeon.bsp",
    "dungeon.cellular_caves": "pipeline.stages.dungeon.cellular_caves",
    "dungeon.drunkard_walk": "pipeline.stages.dungeon.drunkard_walk",
    "dungeon.rooms_and_mazes": "pipeline.stages.dungeon.rooms_and_mazes",
    "export.gif": "pipeline.stages.export.gif",
    "export.ldtk": "pipeline.stages.export.ldtk",
    "export.lua": "pipeline.stages.export.lua",
    "export.png": "pipeline.stages.export.png",
    "export.tmj": "pipeline.stages.export.tmj",
    "export.tmx": "pipeline.stages.export.tmx",
    "filter": "pipeline.stages.filter",
    "layout.graph": "pipeline.stages.layout.graph",
    "load.tmx": "pipeline.stages.load.tmx",
    "maze.aldous_broder": "pipeline.stages.maze.aldous_broder",
    "maze.backtracker": "pipeline.stages.maze.backtracker",
    "maze.binary_tree": "pipeline.stages.maze.binary_tree",
    "maze.eller": "pipeline.stages.maze.eller",
    "maze.growing_tree": "pipeline.stages.maze.growing_tree",
    "maze.hunt_and_kill": "pipeline.stages.maze.hunt_and_kill",
    "maze.kruskal": "pipeline.stages.maze.kruskal",
    "maze.prim_modified": "pipeline.stages.maze.prim_modified",
    "maze.prim_simplified": "pipeline.stages.maze.prim_simplified",
    "maze.prim_true": "pipeline.stages.maze.prim_true",
    "maze.recursive_division": "pipeline.stages.maze.recursive_division",
    "maze.serpentine": "pipeline.stages.maze.serpentine",
    "maze.sidewinder": "pipeline.stages.maze.sidewinder",
    "maze.small_rooms": "pipeline.stages.maze.small_rooms",
    "maze.spiral": "pipeline.stages.maze.spiral",
    "maze.wilson": "pipeline.stages.maze.wilson",
    "place.items": "pipeline.stages.place.items",
    "place.lock_key": "pipeline.stages.place.lock_key",
    "place.path": "pipeline.stages.place.path",
    "place.prefabs": "pipeline.stages.place.prefabs",
    "place.rooms": "pipeline.stages.place.rooms",
    "place.spawn_exit": "pipeline.stages.place.spawn_exit",
    "place.stairs": "pipeline.stages.place.stairs",
    "post.braid": "pipeline.stages.post.braid",
    "post.cut_walls": "pipeline.stages.post.cut_walls",
    "post.prune_dead_ends": "pipeline.stages.post.prune_dead_ends",
    "puzzle.flood_it": "pipeline.stages.puzzle.flood_it",
    "regions.connect": "pipeline.stages.regions.connect",
    "regions.distance": "pipeline.stages.regions.distance",
    "regions.label": "pipeline.stages.regions.label",
    "rewrite": "pipeline.stages.rewrite",
}
STAGE_MODULES: tuple[str, ...] = tuple(sorted(set(BUILTIN_KINDS.values())))


@dataclass(frozen=True)
class Origin:
    """Where a stage kind that is not built in comes from: its code is part of the cache key of
    every stage of that kind, so editing a plugin makes what it built stale."""

    name: str  # for messages: a plugin file as a recipe names it, or an installed package's module
    # The cache key's part: of the plugin file's source, or of an installed package's name,
    # version and module source (a new version of the package makes its output stale).
    sha256: str
    # A plugin file's source and path travel with its stages' params to workers that never
    # loaded it (a process pool, Dask): see StageParams.__reduce_ex__.
    source: bytes | None = None
    path: str = ""


class StageParams(BaseModel):
    """Base of every stage: the fields are the stage's recipe parameters."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: ClassVar[str] = ""
    version: ClassVar[int] = 0
    defined_in: ClassVar[Origin | None] = None  # the built-in kinds have none
    # How many input Levels the stage accepts (min, max).
    arity: ClassVar[tuple[int, int]] = (0, 0)
    # The stage may turn a map down (raise errors.Rejected): the build then makes the map again
    # from the next attempt's seeds, and a change to the stage starts every map over at attempt 0.
    may_reject: ClassVar[bool] = False
    # The map properties (stats) the stage adds, so that a recipe ordering maps by a stat no
    # stage writes fails as it loads. None: not declared (a plugin may leave it), not checked.
    adds_stats: ClassVar[tuple[str, ...] | None] = None
    # Whether the Level made keeps its input's properties (most stages add to them; a maze carved
    # into an input, or a rule program, describes new tiles and starts afresh): which names a
    # filter or `order_by` after it can read. With several inputs, a later input's value of a
    # name wins (`compose.overlay` keeps its top's).
    passes_stats: ClassVar[bool] = True
    # What compiling the kind's kernels costs a first build, counted in maze generators (about
    # 0.6 s of CPU each, `python -m bench.compile_cost`). A first build starts the packs with the
    # most to compile first: a long compile started last leaves the other workers waiting for it.
    compile_weight: ClassVar[int] = 1

    def added_stats(self) -> tuple[str, ...] | None:
        """The map properties this stage adds (`adds_stats`); overridden where they depend on
        the params (`place.items` adds `items_<type>`)."""
        return self.adds_stats

    def authored_stats(self) -> tuple[str, ...]:
        """The map properties this stage gives that a person wrote (a hand-made map's own, from
        `load.tmx`): they reach every later stage, even one that starts its stats afresh
        (`passes_stats = False`, a rule program), which a build hands them on through."""
        return ()

    def read_stats(self) -> dict[str, str]:
        """The map properties this stage reads from its input, each with the param that names it
        (`filter` reads `difficulty` from `where`): a recipe naming one that no stage before it
        adds fails as it loads, not on every map of the build."""
        return {}

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        raise NotImplementedError

    # The stage joins a map to the maps beside it in the pack (stairs between floors): it is run
    # with `run_on_floor`, and its cache key holds the map's Floor.
    reads_floor: ClassVar[bool] = False

    def run_on_floor(self, inputs: list[Level], rng: np.random.Generator, floor: Floor) -> Level:
        """`run`, for a stage that needs to know where its map stands in the pack (`reads_floor`)."""
        return self.run(inputs, rng)

    def best_of(self) -> BestOf | None:
        """For a stage that may reject maps: compare several attempts that pass and keep the best
        (see pipeline.best). None: the first attempt that passes is kept."""
        return None

    def rejection_report(self, tried: list[Tried], total: int) -> str | None:
        """The failure message when none of `total` attempts passed, from what the stage saw in
        the attempts it turned down (`Rejected.values`); None: the last rejection's message."""
        return None

    def embeds(self) -> list[StageParams]:
        """Stages whose code this one runs as part of its own (rooms and mazes runs the maze
        generator it names): their kinds and versions are part of this stage's cache key, so
        bumping an embedded stage makes every stage that embeds it stale too."""
        return []

    def files_read(self) -> dict[str, str]:
        """Files besides the recipe that this stage reads, as {path: sha256 of the content read
        when the recipe loaded}: part of the stage's cache key, and recorded in the manifest."""
        return {}

    def art_tilesets(self) -> list[ArtTileset]:
        """The tilesets of the hand-drawn art (pipeline.drawn_art) this stage may put on the
        Levels it makes, read as the recipe loads: the exporters after it write each into the
        pack (their files are known before any map is made). A stage that pastes art from maps
        it read (`load.tmx`, `place.prefabs`) returns theirs; one that only passes its
        input's on returns none."""
        return []

    def globs_read(self) -> list[str]:
        """Glob patterns, relative to the recipe, whose matches the stage reads (`files_read`
        has what they matched as the recipe loaded): `pcg watch` loads the recipe again when a
        file starts or stops matching one."""
        return []

    def object_tiles(self) -> dict[str, str]:
        """The tiles this stage draws the objects it adds with, as {tile name: the parameter that
        names it}: the recipe fails to load when an exporter downstream cannot draw one."""
        return {}

    def input_problems(self, inputs: int) -> list[str]:
        """What is wrong with these parameters for a stage given `inputs` input Levels, as
        "key: message" lines, found as the recipe loads rather than as each map is made."""
        return []

    def warnings(self) -> list[str]:
        """What these parameters allow but most likely got wrong, as "key: message" lines;
        `pcg build` prints them (a tilesheet whose tiles do not fill it)."""
        return []

    def warnings_after(self, upstream: list[tuple[str, StageParams]]) -> list[str]:
        """As `warnings`, for what these parameters most likely got wrong given the stages
        before this one in the recipe, as (name, params), inputs first (`place.prefabs` without
        `over` on a map drawn by hand)."""
        return []

    def companions(self, name: str) -> list[tuple[str, StageParams]]:
        """Exporters this stage's own options ask for, as (suffix, params): each becomes a stage
        `NAME.SUFFIX` fed by this one (a rewrite stage with `record = true` adds its GIF)."""
        return []

    def __reduce_ex__(self, protocol: Any) -> Any:
        origin = type(self).defined_in
        if origin is None or origin.source is None:
            return super().__reduce_ex__(protocol)
        # A plugin file's classes live in a module no worker can import by name: the worker
        # loads the plugin from its source (once per process) and rebuilds the params there.
        return remake_plugin_params, (origin.name, origin.path, origin.source, self.kind), self.__getstate__()


@dataclass(frozen=True)
class Floor:
    """Where a map stands in its pack, for the stages that join maps (`reads_floor`): its
    index, the pack's map count and seed (the same for every map, pinned ones too), and the
    file stems of the maps before and after it (None at the ends)."""

    index: int
    maps: int
    pack_seed: int
    above: str | None
    below: str | None


@dataclass(frozen=True)
class PackContext:
    """What an exporter's once-per-pack step (`Exporter.pack_files`) knows: the pack, and the
    maps the manifest lists with files of this stage, by map index, with those files' digests."""

    pack_dir: Path
    pack: str
    seed: int
    maps: list[tuple[int, str, dict[str, str]]]  # (index, stem, {path: sha256})
    # Every file of those maps, whichever stage wrote it (path -> sha256): a pack file made from
    # all the maps of a folder (the Tiled project of two exporters writing there) reads them all.
    files: dict[str, str] = field(default_factory=dict)
    # Make the files even if those on disk look current: --force, or one edited since the last
    # build recorded it (a project saved in LDtk keeps the header that says what it was made of).
    rewrite: bool = False


@dataclass(frozen=True)
class ExportContext:
    """What an exporter knows about the map it writes, besides the Level itself."""

    stem: str  # file name of this map without extension, e.g. "map_007"
    provenance: dict[str, PropertyValue] = field(default_factory=dict)
    # What the exporter drew of this map but most likely not as meant, as "key: message" lines
    # (a legend's misspelt tile name); the build prints each line once per pack.
    warnings: list[str] = field(default_factory=list)


class Exporter(StageParams):
    """Base of export stages: they turn a Level into files instead of another Level.

    File paths are relative to the pack folder and use `/`.
    """

    arity: ClassVar[tuple[int, int]] = (1, 1)
    adds_stats: ClassVar[tuple[str, ...] | None] = ()

    def outputs(self, stem: str) -> list[str]:
        """The files `export` writes for the map called `stem` (checked when a recipe loads)."""
        raise NotImplementedError

    def shared_outputs(self) -> list[str]:
        """Those of `outputs` that every map shares (a tileset): several export stages may write
        one, as long as they write the same bytes (checked as the files are written)."""
        return []

    def shared_variant(self, path: str) -> str:
        """What besides the maps shapes the bytes of the shared output `path`: two export stages
        whose variants differ cannot write one file alike (refused as the recipe loads)."""
        return ""

    def export(self, level: Level, ctx: ExportContext) -> dict[str, bytes]:
        raise NotImplementedError

    def object_tile_problem(self, tile: str) -> str | None:
        """Why this exporter cannot draw an object with the tile called `tile`, when that is
        known as the recipe loads; None when it can, may (it depends on the map), or draws no tiles."""
        return None

    def preview_file(self, stem: str) -> str | None:
        """The one of `outputs` that pictures the map, for the pack's contact sheet."""
        return None

    def pack_outputs(self) -> list[str]:
        """The files `pack_files` writes (`pcg verify` claims and compares them)."""
        return []

    def editor_files(self) -> list[str]:
        """Files an editor writes beside this stage's files while a user works in them (the
        session file Tiled keeps beside a project it opened): theirs, neither made nor claimed
        by a build, nor reported by `pcg verify` as added by hand."""
        return []

    def shared_pack_outputs(self) -> list[str]:
        """Those of `pack_outputs` that other export stages may write too, made alike from the
        same maps (the Tiled project of a folder two exporters write maps into)."""
        return []

    def pack_files(self, ctx: PackContext) -> dict[str, bytes]:
        """Files made once per pack from what its maps' files hold (an index of them), written
        once the maps are (the manifest records their digests); nothing when those on disk are
        current. Paths as in `outputs`."""
        return {}

    def thumbnail(self, level: Level) -> Image.Image | None:
        """The contact sheet's thumbnail of the preview `export` draws of `level` (a PIL image
        equal to `pipeline.thumbnail.from_preview` of it), drawn small; None: the sheet makes it
        from the preview file."""
        return None


S = TypeVar("S", bound=type[StageParams])
_KINDS: dict[str, type[StageParams]] = {}
_loaded = False
_broken: Exception | None = None  # an installed plugin package that failed to load

_KIND_NAME = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$")

# Set while a plugin file runs: its kinds go here, not in the global table, since a plugin file
# belongs to the recipes that name it (see pipeline.recipe.plugins).
_collecting: tuple[dict[str, type[StageParams]], Origin] | None = None


@contextlib.contextmanager
def collecting(origin: Origin) -> Iterator[dict[str, type[StageParams]]]:
    """Collect the kinds that `@stage` registers while a plugin file runs, instead of
    registering them for every recipe."""
    global _collecting
    kinds()  # the built-in kinds register themselves, not into the plugin's table
    found: dict[str, type[StageParams]] = {}
    before, _collecting = _collecting, (found, origin)
    try:
        yield found
    finally:
        _collecting = before


def arity_problem(cls: type[StageParams], given: int) -> str | None:
    """What is wrong with giving a stage kind `given` input Levels ("takes 1 input (got 2)"), or
    None. A stage of one's own whose class never set `arity` takes none, which it says."""
    lo, hi = cls.arity
    if lo <= given <= hi:
        return None
    want = f"{lo}" if lo == hi else f"{lo} to {hi}"
    problem = f"{cls.kind} takes {want} input{'' if lo == hi == 1 else 's'} (got {given})"
    if cls.defined_in is not None and not any("arity" in vars(k) for k in cls.__mro__ if k is not StageParams):
        problem += ": its class sets none, which is (0, 0); one input is arity = (1, 1)"
    return problem


def stage(kind: str, version: int) -> Callable[[S], S]:
    """Register a StageParams subclass under a dotted kind name such as `maze.backtracker`."""

    def register(cls: S) -> S:
        if not (isinstance(cls, type) and issubclass(cls, StageParams)):
            # Its own name, not its module's cache name or an address.
            what = f"the class {cls.__name__}" if isinstance(cls, type) else f"{getattr(cls, '__name__', 'a ' + type(cls).__name__)}"
            raise TypeError(f"@stage({kind!r}) decorates {what}, which is not a subclass of StageParams (or Exporter)")
        if not isinstance(kind, str) or not _KIND_NAME.match(kind):
            raise ValueError(f"stage kind {kind!r} must be a dotted lower-case name such as 'mygame.vaults'")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise ValueError(f"stage {kind!r}: version must be an integer >= 1 (got {version!r})")
        if not cls.__doc__:
            raise RuntimeError(f"stage {kind!r} needs a docstring: `pcg stages` shows it to users")
        if cls.run is StageParams.run and not issubclass(cls, Exporter):
            raise TypeError(f"stage {kind!r} must define run(self, inputs, rng) -> Level")
        if issubclass(cls, Exporter) and (cls.export is Exporter.export or cls.outputs is Exporter.outputs):
            raise TypeError(f"export stage {kind!r} must define outputs(self, stem) and export(self, level, ctx)")
        # A recipe's stage table reads these keys as its wiring: a parameter so named could never be set.
        reserved = [k for k in RESERVED_KEYS if k in cls.model_fields]
        if reserved:
            raise TypeError(f"stage {kind!r}: parameter {reserved[0]!r} is a key recipes use to wire stages ({', '.join(RESERVED_KEYS)}): rename it")
        if _collecting is not None:
            found, origin = _collecting
            other = kinds().get(kind)
            if other is not None or kind in found:
                if other is None:
                    where = "defined twice in this file"
                else:
                    where = f"the stage of {other.defined_in.name}" if other.defined_in is not None else "a built-in stage"
                raise RuntimeError(f"stage kind {kind!r} is {where}: give yours another name")
            cls.defined_in = origin
            found[kind] = cls
        else:
            if kind in _KINDS and _KINDS[kind] is not cls:
                raise RuntimeError(f"stage kind {kind!r} registered twice")
            cls.defined_in = _module_origin(cls)
            _KINDS[kind] = cls
        cls.kind = kind
        cls.version = version
        return cls

    return register


def _module_origin(cls: type[StageParams]) -> Origin | None:
    """Built-in kinds have none; a kind defined elsewhere (a build script, a module imported
    before the stages are used) is keyed by its module's source, so editing it makes its output
    stale. Installed packages add their name and version (pipeline.recipe.plugins)."""
    module = sys.modules.get(cls.__module__)
    if cls.__module__.split(".")[0] == "pipeline" or module is None:
        return None
    return Origin(name=cls.__module__, sha256=hashlib.sha256(module_source(module)).hexdigest())


def module_source(module: Any) -> bytes:
    """The source file's bytes of a module, or nothing when it has no file (a notebook cell)."""
    source = getattr(module, "__file__", None)
    try:
        return Path(source).read_bytes() if source else b""
    except OSError:
        return b""


def registered() -> dict[str, type[StageParams]]:
    """The kinds registered so far, without importing any (for the plugin loader)."""
    return dict(_KINDS)


# Deeper than any real nesting; a stage that (through others) embeds itself is a bug, not a recipe.
_MAX_EMBED_DEPTH = 16


def embedded_versions(params: StageParams) -> dict[str, int]:
    """Kind -> version of every stage `params` embeds, recursively, sorted by kind."""
    found: dict[str, int] = {}

    def walk(p: StageParams, depth: int) -> None:
        if depth > _MAX_EMBED_DEPTH:
            raise RuntimeError(f"stage {params.kind!r} embeds stages more than {_MAX_EMBED_DEPTH} deep (a cycle?)")
        for inner in p.embeds():
            found[inner.kind] = inner.version
            walk(inner, depth + 1)

    walk(params, 1)
    return dict(sorted(found.items()))


def stage_config(params: StageParams) -> dict[str, Any]:
    """What identifies a stage's work, for its cache key: kind, version, parameters, the kinds
    and versions of the stages it embeds, and the files it reads. Keys absent when empty, so
    that stages embedding nothing and reading nothing keep the keys they always had."""
    config: dict[str, Any] = {"kind": params.kind, "version": params.version, "params": params.model_dump(mode="json")}
    embeds = embedded_versions(params)
    if embeds:
        config["embeds"] = embeds
    files = params.files_read()
    if files:
        config["files"] = files
    if params.defined_in is not None:
        # The code's digest alone: the name a recipe gives a plugin file is not its code, and two
        # recipes may name one file by different paths.
        config["plugin"] = params.defined_in.sha256
    return config


def kinds() -> dict[str, type[StageParams]]:
    """Every built-in stage kind and those of installed plugin packages, sorted by name."""
    global _loaded
    if not _loaded:
        for module in STAGE_MODULES:
            importlib.import_module(module)
        _loaded = True  # before the packages: their kinds are checked against the built-in ones
        global _broken
        try:
            _load_installed()
        except Exception as exc:  # every later call fails the same way, not with kinds missing
            _broken = exc
    if _broken is not None:
        raise _broken
    return dict(sorted(_KINDS.items()))


def _load_installed() -> None:
    """Import every module that installed packages list under the entry-point group: their
    `@stage` classes register like built-in ones. A broken one is a PipelineError naming it."""
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: (e.name, e.value)):
        _load_entry_point(ep)


def _load_entry_point(ep: EntryPoint) -> None:
    package = f" (package {ep.dist.name})" if ep.dist is not None else ""
    before = set(registered())
    try:
        ep.load()
    except Exception as exc:
        # The deepest frame outside Python's import machinery: the package's line at fault.
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if "importlib" not in f.filename]
        where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
        raise PipelineError(
            [f"plugin {ep.name} = {ep.value!r}{package}, entry point {ENTRY_POINT_GROUP}: {type(exc).__name__}: {exc}{where}"]
        ) from None
    release = f"{ep.dist.name}=={ep.dist.version}\n".encode() if ep.dist is not None else b""
    for kind, cls in registered().items():
        if kind not in before:
            module = sys.modules.get(cls.__module__)
            digest = hashlib.sha256(release + module_source(module)).hexdigest()
            cls.defined_in = Origin(name=cls.__module__, sha256=digest)


def get(kind: str) -> type[StageParams]:
    found = lookup(kind)
    if found is None:
        raise KeyError(kind)
    return found


def lookup(kind: str) -> type[StageParams] | None:
    """The class of `kind`, importing only its module when it is built in; None if unknown."""
    module = BUILTIN_KINDS.get(kind)
    if module is not None:
        # Never through kinds(): a broken installed plugin package fails the recipes that use
        # installed kinds, not those using built-in ones (whichever loaded first).
        importlib.import_module(module)
        return _KINDS[kind]
    return kinds().get(kind)


class KindTable(Mapping[str, type[StageParams]]):
    """The kinds a recipe may use (built-in, installed, and `extra`: its plugin files' kinds),
    as a mapping that imports a built-in kind's module only when that kind is looked up; going
    through all of them (to suggest a name) imports every one."""

    def __init__(self, extra: dict[str, type[StageParams]] | None = None):
        self.extra = extra or {}

    def __getitem__(self, kind: str) -> type[StageParams]:
        found = self.extra.get(kind) or lookup(kind)
        if found is None:
            raise KeyError(kind)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(sorted({**kinds(), **self.extra}))

    def __len__(self) -> int:
        return len({**kinds(), **self.extra})


def is_exporter(cls: type[StageParams]) -> bool:
    return issubclass(cls, Exporter)


def param_rows(cls: type[StageParams]) -> list[dict[str, str]]:
    """Name, type, default, constraints and description of each parameter, for `pcg stages`."""
    schema = cls.model_json_schema()
    rows = []
    for field_name, info in cls.model_fields.items():
        name = info.alias or field_name  # what a recipe writes (`from`, a Python keyword, is an alias)
        prop = schema["properties"].get(name, {})
        bounds = _bounds_suffix(prop).strip()
        rows.append(
            {
                "name": name,
                "type": _schema_type(prop, schema.get("$defs", {})),
                "default": "required" if info.is_required() else _toml_value(info.get_default(call_default_factory=True)),
                "constraints": bounds,
                "doc": info.description or "",
            }
        )
    return rows


_BOUNDS = {"exclusiveMinimum": ">", "minimum": ">=", "exclusiveMaximum": "<", "maximum": "<="}
_JSON_TYPES = {"integer": "int", "number": "float", "string": "str", "boolean": "bool", "array": "list", "object": "table"}


def _schema_type(prop: dict[str, Any], defs: dict[str, Any]) -> str:
    """A short TOML-flavoured type: `int`, `[int, int]`, `"csv" | "base64"`."""
    if "$ref" in prop:
        prop = defs.get(prop["$ref"].rsplit("/", 1)[-1], {})
    if "enum" in prop:
        return " | ".join(_toml_value(v) for v in prop["enum"])
    if "const" in prop:
        return _toml_value(prop["const"])
    if "anyOf" in prop:
        parts = [_schema_type(p, defs) + _bounds_suffix(p) for p in prop["anyOf"]]
        # A range of a bounded value (pipeline.ranges) reads better by its meaning than twice over.
        pair = f"[{parts[0]}, {parts[0]}]"
        return " | ".join("[min, max]" if part == pair else part for part in parts)
    if "prefixItems" in prop:
        return "[" + ", ".join(_schema_type(p, defs) + _bounds_suffix(p) for p in prop["prefixItems"]) + "]"
    if prop.get("type") == "array" and "items" in prop:
        return f"[{_schema_type(prop['items'], defs)}, ...]"
    return _JSON_TYPES.get(prop.get("type", ""), prop.get("type", "any"))


def _bounds_suffix(prop: dict[str, Any]) -> str:
    return "".join(f" {op} {prop[k]}" for k, op in _BOUNDS.items() if k in prop)


def _toml_value(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return str(value)
