"""The golden table of stage outputs: the rule "any change to a stage's output for the same seed
bumps its `version`", checked.

For every registered stage kind, `tests/golden.json` records the sha256 digest of what the kind
makes from a fixed fixture (a tiny recipe, below) at a fixed seed, next to its version, the
versions of the stages it embeds and of the stages that make its input. `tests/test_golden.py`
recomputes the table and fails when an output changed while those versions did not.

Refresh the table (after a version bump, a new kind, a changed fixture) with

    make golden            # = .venv/bin/python tests/golden.py

It prints what changed, and refuses (writing nothing) when a kind's output changed although
nothing recorded about it did: that is the missing version bump the table exists to catch.
`make golden FORCE=1` (`--force`) records it anyway, for output changes that are not the
stage's own doing, such as a pinned dependency upgrade (numpy streams, pillow's PNG bytes).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import hashlib
import json
import numbers
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import tomli

from pipeline import registry
from pipeline.drawn_art import carry_art
from pipeline.errors import RecipeError, Rejected
from pipeline.level import Color, FilePath, Level, ObjectRef
from pipeline.recipe.load import load_recipe
from pipeline.recipe.model import Recipe, StageSpec
from pipeline.registry import ExportContext, Exporter, StageParams
from pipeline.seeds import rng_for, stage_seed
from pipeline.building.worker import freeze, private_copy

ROOT = Path(__file__).resolve().parents[1]
TABLE = Path(__file__).resolve().parent / "golden.json"
TILESETS = ROOT / "tilesets"

# Bump when the way digests are computed here changes: every entry then reads as a stale table
# ("run make golden"), not as stages that changed their output.
DIGEST_FORMAT = 1

# The fixture of every kind is map 0 of a pack with this seed: each stage draws from
# rng_for(stage_seed(0, STAGE_NAME, SEED)), exactly as `pcg build` would.
SEED = 20261130
MAP_INDEX = 0
# Stages that join maps (stairs) see the fixture's map as the first of this many floors: the
# fixture pack has one map, which has no floor to join.
FLOORS = 3
CONTEXT = ExportContext(stem="map_000", provenance={"pack": "golden", "map": MAP_INDEX, "seed": SEED, "stages": "golden fixture"})

# --------------------------------------------------------------------------------------------
# Fixtures: [stage.NAME] tables of a tiny recipe per kind. Every stage of the kind in it is a
# subject (several give several variants); the other stages make their inputs, seeded as in a
# build. Kinds without an entry get their defaults, and a stock input if they need one
# (_DEFAULT_INPUT). Keep them small: the whole table must compute in a few seconds.
# --------------------------------------------------------------------------------------------

_MAZE = """
[stage.maze]
use = "maze.backtracker"
cells = [12, 9]
"""

_DUNGEON = """
[stage.dungeon]
use = "dungeon.bsp"
size = [40, 30]
"""

# Random wall/floor noise: many separate regions, for the region stages to join and label.
_NOISE = """
[stage.noise]
use = "rewrite"
size = [31, 21]
values = "BW"
legend = { B = "wall", W = "floor" }
program = { prl = "B=W", p = 0.5, steps = 1 }
"""

_BLOBS = """
[stage.board]
use = "dungeon.blob_map"
size = [10, 10]
colors = 5
"""

# Rooms and mazes: the dungeon with doors.
_ROOMS = """
[stage.rooms]
use = "dungeon.rooms_and_mazes"
size = [31, 21]
room_attempts = 30
room_size = [3, 7]
"""

# A dungeon with everything an exporter writes: doors, a room layer, spawn, exit, tile objects
# with typed properties (a colour among them), a region layer.
_FURNISHED = _ROOMS + """
[stage.placed]
use = "place.spawn_exit"
input = "rooms"

[stage.chests]
use = "place.items"
input = "placed"
type = "chest"
count = 4
spacing = 5
tile = "chest"
properties = { gold = 25, weight = 2.5, locked = false, glow = "#ffa300" }

[stage.regions]
use = "regions.label"
input = "chests"
"""

# A rewrite run that records frames (it brings its own export.gif stage, `grow.gif`).
_RECORDED = """
[stage.grow]
use = "rewrite"
size = [15, 15]
values = "BRGW"
origin = true
legend = { B = "wall", R = "head", G = "visited", W = "floor" }
program = { markov = [ { one = "RBB=GGR" }, { one = "RGG=WWR" } ] }
record = true
record_frames = 12
"""

# Tiled exporters: your own art (image tileset, autotiled walls, three layers, tile objects),
# and generated art with compressed base64 data and an embedded tileset.
def _tiled(kind: str, options: str = "") -> str:
    return _FURNISHED + f"""
[stage.art]
use = "{kind}"
input = "regions"
dir = "art"
tileset = "tilesets/stone.toml"
{options}layers = [
  {{ name = "floor", tile = "floor" }},
  {{ name = "walls", symbols = ["wall"] }},
  {{ name = "doors", symbols = ["door"] }},
]

[stage.generated]
use = "{kind}"
input = "placed"
dir = "generated"
tileset_name = "generated"
tile_size = 8
style = "outline"
embed_tileset = true
encoding = "base64"
compression = "zlib"
preview = false
"""


FIXTURES: dict[str, str] = {
    # Fan-in: rooms alone, a maze in the rock around them, the rooms painted back on.
    "compose.overlay": _ROOMS + """maze = "none"

[stage.maze]
use = "maze.backtracker"
input = "rooms"
carve_on = ["wall"]
margin = 1

[stage.subject]
use = "compose.overlay"
inputs = ["maze", "rooms"]

[stage.doors_only]
use = "compose.overlay"
inputs = ["maze", "rooms"]
symbols = ["door"]
where = ["wall"]
""",
    # Generators whose defaults are bigger than a fixture needs.
    "dungeon.bsp": _DUNGEON.replace("[stage.dungeon]", "[stage.subject]"),
    "dungeon.cellular_caves": '[stage.subject]\nuse = "dungeon.cellular_caves"\nsize = [40, 30]\n',
    "dungeon.drunkard_walk": '[stage.subject]\nuse = "dungeon.drunkard_walk"\nsize = [40, 30]\n',
    "dungeon.rooms_and_mazes": _ROOMS.replace("[stage.rooms]", "[stage.subject]"),
    # A graph with a loop, a locked gate, a locked shortcut and a one-way door.
    "layout.graph": """[stage.subject]
use = "layout.graph"
nodes = [{ name = "in", role = "start" }, "hall", { name = "shop", role = "shop" }, "cellar", { name = "boss", role = "boss" }]
edges = [
  ["in", "hall"], ["hall", "shop"], ["shop", "cellar"], { from = "cellar", to = "hall", lock = "iron", one_way = true },
  { from = "hall", to = "boss", lock = "gold" },
]
""",
    # Rules, as a generator recording its run, and on another stage's map.
    "rewrite": _RECORDED + _MAZE + """
[stage.retract]
use = "rewrite"
input = "maze"
values = "BW"
program = { all = "BBB/BWB=BBB/BBB", steps = 6 }
""",
    # A map that passes, and one that is turned down.
    "filter": _BLOBS + """
[stage.rated]
use = "puzzle.flood_it"
input = "board"

[stage.passes]
use = "filter"
input = "rated"
where = "difficulty >= 1 and not (patches < 1) or moves_greedy == -1"

[stage.fails]
use = "filter"
input = "rated"
where = "difficulty > 1000"
attempts = 3
""",
    "puzzle.flood_it": _BLOBS + '\n[stage.subject]\nuse = "puzzle.flood_it"\ninput = "board"\n',
    # Maze post-processing on a backtracker maze.
    "post.braid": _MAZE + '\n[stage.subject]\nuse = "post.braid"\ninput = "maze"\nfraction = 0.7\n',
    "post.cut_walls": _MAZE + '\n[stage.subject]\nuse = "post.cut_walls"\ninput = "maze"\nwalls = 4\n',
    "post.prune_dead_ends": _MAZE + '\n[stage.subject]\nuse = "post.prune_dead_ends"\ninput = "maze"\nkeep = 0.2\npasses = 2\n',
    # Placement on a BSP dungeon (and rooms found without a room layer, in caves); on a maze,
    # whose recorded entrance and exit it sets to its own.
    "place.spawn_exit": _DUNGEON + _MAZE + """
[stage.on_maze]
use = "place.spawn_exit"
input = "maze"

[stage.diameter]
use = "place.spawn_exit"
input = "dungeon"

[stage.corners]
use = "place.spawn_exit"
input = "dungeon"
at = "corners"
spawn_corner = "top_right"
exit_corner = "bottom_left"
""",
    "place.items": _DUNGEON + """
[stage.placed]
use = "place.spawn_exit"
input = "dungeon"

[stage.subject]
use = "place.items"
input = "placed"
type = "chest"
count = 6
spacing = 4
tile = "chest"
properties = { gold = 25, weight = 2.5, locked = false, glow = "#ffa300", note = "x" }
""",
    # A path between spawn and exit on a dungeon, and one from a maze's recorded entrance to its exit.
    "place.path": _DUNGEON + _MAZE + """
[stage.placed]
use = "place.spawn_exit"
input = "dungeon"

[stage.subject]
use = "place.path"
input = "placed"

[stage.maze_path]
use = "place.path"
input = "maze"
name = "solution"
""",
    # Two nested locks on a maze (its recorded entrance and exit stand in for spawn and exit),
    # one on a dungeon with its door symbol.
    "place.lock_key": _DUNGEON + _MAZE + """
[stage.locked_maze]
use = "place.lock_key"
input = "maze"
locks = 2
names = ["bronze", "gold"]

[stage.placed]
use = "place.spawn_exit"
input = "dungeon"

[stage.subject]
use = "place.lock_key"
input = "placed"
""",
    # The first of FLOORS floors: stairs down only, dug to where the dungeon's tile is wall.
    "place.stairs": _DUNGEON + """
[stage.subject]
use = "place.stairs"
input = "dungeon"
""",
    "place.rooms": _DUNGEON + """
[stage.caves]
use = "dungeon.cellular_caves"
size = [40, 30]

[stage.from_layer]
use = "place.rooms"
input = "dungeon"

[stage.found]
use = "place.rooms"
input = "caves"
min_size = 3
""",
    # Region stages on noise (many regions), and distances from spawn and from the doors.
    "regions.connect": _NOISE + """
[stage.joined]
use = "regions.connect"
input = "noise"

[stage.largest]
use = "regions.connect"
input = "noise"
mode = "largest"
""",
    "regions.label": _NOISE + """
[stage.four]
use = "regions.label"
input = "noise"

[stage.eight]
use = "regions.label"
input = "noise"
connectivity = 8
layer = "region8"
""",
    "regions.distance": _DUNGEON + _ROOMS + """
[stage.placed]
use = "place.spawn_exit"
input = "dungeon"

[stage.from_spawn]
use = "regions.distance"
input = "placed"
from_object = "spawn"

[stage.from_doors]
use = "regions.distance"
input = "rooms"
from_symbol = "door"
""",
    # Hand-made rooms (recipes/prefabs/*.tmx, their tileset prefab.tsx, copied beside the fixture),
    # stamped into rock turned and mirrored, and one of them anywhere.
    "place.prefabs": _DUNGEON + """
[stage.carved]
use = "place.prefabs"
input = "dungeon"
prefabs = "prefabs/*.tmx"
count = 1
rotate = true
mirror = true
over = ["wall"]

[stage.anywhere]
use = "place.prefabs"
input = "dungeon"
prefabs = "prefabs/v*.tmx"
count = [1, 3]

[stage.again]
use = "place.prefabs"
input = "carved"
prefabs = "prefabs/v*.tmx"
count = 1
rotate = true

[stage.weighed]
use = "place.prefabs"
input = "dungeon"
prefabs = "prefabs/*.tmx"
required = ["prefabs/shop.tmx"]
weights = { "prefabs/vault.tmx" = 3 }
count = 2
rotate = true
""",
    # A hand-made Tiled map (recipes/maps/start.tmx, its tileset room.tsx), copied beside the fixture.
    "load.tmx": '[stage.subject]\nuse = "load.tmx"\nfile = "maps/start.tmx"\n',
    # Exporters.
    "export.png": _FURNISHED + '\n[stage.subject]\nuse = "export.png"\ninput = "regions"\nscale = 2\n',
    # The GIF a recording stage adds (grow.gif), and one written in the recipe, which takes the
    # place of the added one of the stage it reads (again).
    "export.gif": _RECORDED + _RECORDED.replace("[stage.grow]", "[stage.again]")
    + '\n[stage.slow]\nuse = "export.gif"\ninput = "again"\ndir = "slow"\nscale = 3\nframe_ms = 100\n',
    "export.tmx": _tiled("export.tmx"),
    "export.tmj": _tiled("export.tmj", 'profile = "phaser"\n'),
    "export.lua": _tiled("export.lua"),
    # Your own art with autotiled walls, three layers, tile objects and a polyline (the path from
    # spawn to exit); and generated art, one layer, no preview.
    "export.ldtk": _FURNISHED + """
[stage.route]
use = "place.path"
input = "regions"

[stage.art]
use = "export.ldtk"
input = "route"
dir = "art"
tileset = "tilesets/stone.toml"
layers = [
  { name = "floor", tile = "floor" },
  { name = "walls", symbols = ["wall"] },
  { name = "doors", symbols = ["door"] },
]

[stage.generated]
use = "export.ldtk"
input = "placed"
dir = "generated"
tileset_name = "generated"
tile_size = 8
style = "outline"
preview = false
""",
}

# The input of a kind that needs one and has no fixture of its own, by the family in its name.
_DEFAULT_INPUT = {"maze": _MAZE, "post": _MAZE, "puzzle": _BLOBS}


def stage_kinds() -> dict[str, type[StageParams]]:
    """Every kind the pipeline registers (not the ones tests register for a while), by name."""
    return {kind: cls for kind, cls in registry.kinds().items() if cls.__module__ in registry.STAGE_MODULES}


def fixture_recipe(kind: str) -> str:
    """The recipe text of `kind`'s fixture."""
    cls = stage_kinds()[kind]
    body = FIXTURES.get(kind)
    if body is None:
        if cls.arity[0] == 0:
            body = f'[stage.subject]\nuse = "{kind}"\n'
        else:
            stock = _DEFAULT_INPUT.get(kind.split(".")[0], _DUNGEON)
            source = next(iter(tomli.loads(stock)["stage"]))
            body = stock + f'\n[stage.subject]\nuse = "{kind}"\ninput = "{source}"\n'
    text = f'[pack]\nname = "golden"\nseed = {SEED}\nmaps = 1\n\n{body.strip()}\n'
    if not registry.is_exporter(cls):
        # A recipe must export something; this stage is never run.
        first = next(name for name, table in tomli.loads(body)["stage"].items() if table.get("use") == kind)
        text += f'\n[stage.golden_export]\nuse = "export.png"\ninput = "{first}"\n'
    return text


# --------------------------------------------------------------------------------------------
# Digests: canonical JSON of everything a stage hands on (never hash(), never set order).
# --------------------------------------------------------------------------------------------


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def sha256_of(value: Any) -> str:
    return hashlib.sha256(canonical(value).encode("ascii")).hexdigest()


def _array(a: np.ndarray) -> dict[str, Any]:
    if a.dtype.hasobject:
        raise GoldenError(f"an array of dtype {a.dtype} has no canonical bytes")
    return {"dtype": a.dtype.str, "shape": list(a.shape), "sha256": hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()}


def _value(value: Any) -> list[Any]:
    """A property value with its type: 1, 1.0, true and "#ffa300" vs Color("#ffa300") differ."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return ["bool", value]
    if isinstance(value, numbers.Integral):
        return ["int", int(value)]
    if isinstance(value, numbers.Real):
        return ["float", float(value)]
    if isinstance(value, Color):
        return ["color", str(value)]
    if isinstance(value, FilePath):
        return ["file", str(value)]
    if isinstance(value, ObjectRef):
        return ["object", value.target]
    if isinstance(value, str):
        return ["string", value]
    raise GoldenError(f"property value {value!r} of type {type(value).__name__} is not a PropertyValue")


def _properties(props: dict[str, Any]) -> list[list[Any]]:
    return [[key, *_value(props[key])] for key in sorted(props)]


def _record(obj: Any, known: set[str]) -> dict[str, Any]:
    """Every field of a dataclass instance; a field this module does not know fails loudly, so
    that a new field of Level, MapObject or Symbol is never left out of the digest."""
    fields = {f.name for f in dataclasses.fields(obj)}
    if fields != known:
        raise GoldenError(f"{type(obj).__name__} has fields {sorted(fields ^ known)} that tests/golden.py does not digest: teach it, and bump DIGEST_FORMAT")
    out: dict[str, Any] = {}
    for name in sorted(fields):
        value = getattr(obj, name)
        if name == "points":
            # Left out when empty, so that digests made before MapObject had points still hold.
            if value:
                out[name] = [[_value(x), _value(y)] for x, y in value]
        elif name == "ref":
            if value:  # the same, for refs
                out[name] = _value(value)
        elif name == "art":
            if value is not None:  # the same, for hand-drawn tile objects
                out[name] = [value.tileset, value.tile, value.flips]
        elif isinstance(value, dict):
            out[name] = _properties(value)
        else:
            out[name] = _value(value)
    return out


_SYMBOL_FIELDS = {"char", "name", "color"}
_OBJECT_FIELDS = {"name", "type", "x", "y", "w", "h", "properties", "tile", "points", "ref", "art"}
_LEVEL_FIELDS = {"tiles", "alphabet", "layers", "objects", "properties", "attachments", "notes", "art"}


def level_record(level: Level) -> dict[str, Any]:
    fields = {f.name for f in dataclasses.fields(level)}
    if fields != _LEVEL_FIELDS:
        raise GoldenError(f"Level has fields {sorted(fields ^ _LEVEL_FIELDS)} that tests/golden.py does not digest: teach it, and bump DIGEST_FORMAT")
    return {
        "tiles": _array(level.tiles),
        "alphabet": [_record(s, _SYMBOL_FIELDS) for s in level.alphabet],
        "layers": [[name, _array(level.layers[name])] for name in sorted(level.layers)],
        "objects": [_record(o, _OBJECT_FIELDS) for o in level.objects],
        "properties": _properties(level.properties),
        # A recording's frames under the key they had when they were a field of their own, so
        # that the digests recorded then still hold; any other attachment in a key of its own.
        "frames": _array(level.attachments["frames"]) if "frames" in level.attachments else None,
        **(
            {"attachments": [[n, _array(a)] for n, a in sorted(level.attachments.items()) if n != "frames"]}
            if set(level.attachments) - {"frames"}
            else {}
        ),
        # Only where there are some, so that the digests recorded before notes existed still hold.
        **({"notes": list(level.notes)} if level.notes else {}),
        # The same for hand-drawn art: its tilesets by identity, its layers, what each cell was drawn for.
        **(
            {"art": {
                "tilesets": [ts.key for ts in level.art.tilesets],
                "layers": [[name, _array(gids)] for name, gids in level.art.layers.items()],
                "drawn_for": _array(level.art.drawn_for),
                "symbols": list(level.art.symbols),
            }}
            if level.art is not None
            else {}
        ),
    }


def level_digest(level: Level) -> str:
    return sha256_of(level_record(level))


def files_digest(files: dict[str, bytes]) -> str:
    return sha256_of([[path, hashlib.sha256(files[path]).hexdigest()] for path in sorted(files)])


# --------------------------------------------------------------------------------------------
# Running a fixture.
# --------------------------------------------------------------------------------------------


class GoldenError(Exception):
    pass


@dataclass(frozen=True)
class Entry:
    version: int
    embeds: dict[str, int]  # kind -> version of the stages it embeds (registry.embedded_versions)
    upstream: dict[str, int]  # kind -> version of the stages (and their embeds) making its input
    fixture: str  # digest of the fixture: recipe text, files it reads, seed, export context
    input: str | None  # digest of the input Levels, None for a generator
    digest: str  # digest of the output: Levels (or a filter's verdict), or exported files

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Entry:
        return cls(**{f.name: data.get(f.name) for f in dataclasses.fields(cls)})


Run = tuple[StageSpec, list[Level], Level]


def compute(kind: str) -> Entry:
    """Run `kind`'s fixture now: its golden entry as the code stands."""
    return _compute(kind)[0]


@functools.cache
def computed(kind: str) -> tuple[Entry, tuple[Run, ...]]:
    """`kind`'s entry and stage runs, computed once per process: for tests that check the code
    as it stands (never call it while a test patches a stage). The Levels are frozen."""
    return _compute(kind)


def stage_runs(kind: str) -> list[Run]:
    """Every stage of `kind` in its fixture (exporters and rejected maps left out) with the
    Levels it took and made: for checks over every kind besides the digests."""
    return list(computed(kind)[1])


def _compute(kind: str) -> tuple[Entry, tuple[Run, ...]]:
    with fixture(kind) as (recipe, text):
        runner = _Runner(recipe)
        entry = _run(kind, recipe, text, runner)
        runs = []
        for spec in recipe.stages:
            if spec.kind != kind or spec.is_exporter:
                continue
            try:
                made = runner.level_of(spec.name)
            except Rejected:
                continue
            runs.append((spec, [runner.level_of(i) for i in spec.inputs], made))
        return entry, tuple(runs)


@contextlib.contextmanager
def fixture(kind: str) -> Iterator[tuple[Recipe, str]]:
    """`kind`'s fixture recipe, loaded from a folder with the files it reads."""
    text = fixture_recipe(kind)
    with tempfile.TemporaryDirectory(prefix="golden-") as tmp:
        folder = Path(tmp)
        if "tilesets/" in text:
            shutil.copytree(TILESETS, folder / "tilesets")
        if "maps/" in text:
            shutil.copytree(ROOT / "recipes" / "maps", folder / "maps")
        if "prefabs/" in text:
            shutil.copytree(ROOT / "recipes" / "prefabs", folder / "prefabs")
        path = folder / "golden.toml"
        path.write_text(text, encoding="utf-8")
        try:
            recipe = load_recipe(path)
        except RecipeError as exc:
            problems = "; ".join(p.replace(f"{path}: ", "") for p in exc.problems)
            raise GoldenError(f"the fixture of {kind} does not load ({problems}): give {kind} one in FIXTURES, tests/golden.py") from None
        yield recipe, text


class _Runner:
    """Runs a fixture's stages as pipeline.building.worker runs a map: inputs first, each stage its own
    copies, outputs frozen."""

    def __init__(self, recipe: Recipe):
        self.recipe = recipe
        self.levels: dict[str, Level] = {}

    def level_of(self, name: str) -> Level:
        if name not in self.levels:
            spec = self.recipe.by_name[name]
            inputs = [private_copy(self.level_of(i)) for i in spec.inputs]
            rng = rng_for(stage_seed(MAP_INDEX, name, self.recipe.pack.seed))
            if spec.params.reads_floor:  # as a build runs it: the fixture's map is the first of FLOORS
                floor = dataclasses.replace(self.recipe.pack.floor(MAP_INDEX), maps=FLOORS, below=self.recipe.pack.stem(MAP_INDEX + 1))
                level = spec.params.run_on_floor(inputs, rng, floor)
            else:
                level = spec.params.run(inputs, rng)
            if not isinstance(level, Level):
                raise GoldenError(f"stage {name} ({spec.kind}) returned {type(level).__name__}, not a Level")
            carry_art(inputs, level)
            freeze(level)
            self.levels[name] = level
        return self.levels[name]


def _run(kind: str, recipe: Recipe, text: str, runner: _Runner) -> Entry:
    subjects = [s for s in recipe.stages if s.kind == kind]
    if not subjects:
        raise GoldenError(f"the fixture of {kind} has no stage of that kind")
    names = {s.name for s in subjects}
    makers = [s for s in recipe.stages if s.name not in names and any(s in recipe.upstream(n) for n in names)]
    upstream: dict[str, int] = {}
    for spec in makers:
        upstream[spec.kind] = spec.params.version
        upstream.update(registry.embedded_versions(spec.params))
    embeds: dict[str, int] = {}
    for spec in subjects:
        embeds.update(registry.embedded_versions(spec.params))
    files_read: dict[str, str] = {}
    for spec in recipe.stages:
        files_read.update(spec.params.files_read())
    fixture = sha256_of(
        {
            "format": DIGEST_FORMAT,
            "recipe": text,
            "files": files_read,
            "map": MAP_INDEX,
            "context": {"stem": CONTEXT.stem, "provenance": _properties(CONTEXT.provenance)},
        }
    )

    level_of = runner.level_of
    inputs = {s.name: [level_digest(level_of(i)) for i in s.inputs if i not in names] for s in subjects}
    outputs = {s.name: _output(s, level_of) for s in subjects}
    return Entry(
        version=subjects[0].params.version,
        embeds=dict(sorted(embeds.items())),
        upstream=dict(sorted(upstream.items())),
        fixture=fixture,
        input=sha256_of(inputs) if any(inputs.values()) else None,
        digest=sha256_of(outputs),
    )


def _output(spec: StageSpec, level_of: Any) -> Any:
    if isinstance(spec.params, Exporter):
        files = spec.params.export(level_of(spec.inputs[0]), CONTEXT)
        return {"files": files_digest(files)}
    try:
        return {"level": level_digest(level_of(spec.name))}
    except Rejected as rejected:
        return {"rejected": True, "attempts": rejected.attempts}


def compute_all(kinds: list[str] | None = None) -> tuple[dict[str, Entry], dict[str, str]]:
    """Entries of `kinds` (default: every kind), and the error of each fixture that failed."""
    entries: dict[str, Entry] = {}
    errors: dict[str, str] = {}
    for kind in kinds if kinds is not None else list(stage_kinds()):
        try:
            entries[kind] = compute(kind)
        except Exception as exc:  # reported per kind, with the rest still checked
            errors[kind] = f"{type(exc).__name__}: {exc}"
    return entries, errors


# --------------------------------------------------------------------------------------------
# Comparing with the table.
# --------------------------------------------------------------------------------------------

REFRESH = "run `make golden`"


@dataclass(frozen=True)
class Problem:
    kind: str
    category: str  # "new", "removed", "stale" (refresh the table) or "bump" (a version bump is missing)
    message: str  # for the test: what is wrong and what to do
    change: str = ""  # for the refresh: what it records


def _changes(label: str, old: dict[str, int], new: dict[str, int]) -> list[str]:
    return [f"{label} {k} {old.get(k, 'none')} -> {new.get(k, 'none')}" for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]


def check_kind(kind: str, recorded: Entry | None, current: Entry) -> Problem | None:
    if recorded is None:
        return Problem(kind, "new", f"{kind} is a new stage kind with no entry in tests/golden.json: {REFRESH} to record it", f"version {current.version}")
    reasons = []
    if recorded.version != current.version:
        reasons.append(f"version {recorded.version} -> {current.version}")
    reasons += _changes("embedded", recorded.embeds or {}, current.embeds)
    reasons += _changes("input stage", recorded.upstream or {}, current.upstream)
    if recorded.fixture != current.fixture:
        reasons.append("its fixture in tests/golden.py changed")
    if reasons:
        output = "output changed" if recorded.digest != current.digest else "output unchanged"
        return Problem(kind, "stale", f"{kind}: {', '.join(reasons)} since tests/golden.json was written: {REFRESH}", f"{', '.join(reasons)}; {output}")
    if recorded.digest == current.digest:
        return None
    if recorded.input != current.input:
        makers = ", ".join(f"{k} (version {v})" for k, v in current.upstream.items())
        return Problem(
            kind,
            "bump",
            f"input of {kind} changed but none of the stages making it changed version ({makers}):"
            f" one of them changed its output; bump its version in @stage(...) (and {REFRESH})",
        )
    return Problem(
        kind,
        "bump",
        f"output of {kind} changed but its version is still {current.version}: bump version in @stage(...) (and {REFRESH})",
    )


def check_table(recorded: dict[str, Entry], current: dict[str, Entry]) -> list[Problem]:
    """Every problem, kind by kind (sorted): kinds missing from or extra in the table included."""
    problems = []
    for kind in sorted(set(recorded) | set(current)):
        if kind not in current:
            problems.append(Problem(kind, "removed", f"tests/golden.json names {kind}, which is no longer a registered stage kind: {REFRESH}", "no longer registered"))
            continue
        problem = check_kind(kind, recorded.get(kind), current[kind])
        if problem:
            problems.append(problem)
    return problems


def load_table(path: Path = TABLE) -> dict[str, Entry]:
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {kind: Entry.from_json(entry) for kind, entry in data["kinds"].items()}


def dump_table(entries: dict[str, Entry]) -> str:
    data = {
        "about": "sha256 of every stage kind's output on its fixture (tests/golden.py); checked by tests/test_golden.py. Refresh: make golden",
        "kinds": {kind: entries[kind].to_json() for kind in sorted(entries)},
    }
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=True) + "\n"


def refresh(path: Path = TABLE, force: bool = False, out: Any = sys.stdout) -> int:
    """Recompute the table and write it; refuse (exit status 1, nothing written) when a fixture
    fails or, unless `force`, when an output changed without a version bump."""
    recorded = load_table(path)
    current, errors = compute_all()
    for kind, error in errors.items():
        print(f"error  {kind}: its fixture failed: {error}", file=out)
    if errors:
        print(f"{path.name} not written: fix the fixtures above (tests/golden.py FIXTURES).", file=out)
        return 1
    problems = check_table(recorded, current)
    bumps = [p for p in problems if p.category == "bump"]
    for problem in problems:
        if problem.category == "bump" and force:
            print(f"{'forced':<8} {problem.kind}: output changed at the same version (recorded as asked)", file=out)
        elif problem.category == "bump":
            print(f"{'REFUSED':<8} {problem.message}", file=out)
        else:
            print(f"{ {'stale': 'updated'}.get(problem.category, problem.category):<8} {problem.kind}: {problem.change}", file=out)
    if bumps and not force:
        print(
            f"{path.name} not written: {len(bumps)} kind(s) changed output without a version bump. Bump their version,"
            " or if the change is not theirs (a dependency upgrade), run `make golden FORCE=1`.",
            file=out,
        )
        return 1
    text = dump_table(current)
    if path.exists() and path.read_text(encoding="utf-8") == text:
        print(f"{path.name} is up to date ({len(current)} kinds).", file=out)
    else:
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} ({len(current)} kinds, {len(problems)} changed).", file=out)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make golden", description=__doc__.split("\n\n")[0])
    parser.add_argument("--force", action="store_true", help="record outputs that changed without a version bump")
    parser.add_argument("--table", type=Path, default=TABLE, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    return refresh(args.table, force=args.force)


if __name__ == "__main__":
    sys.exit(main())
