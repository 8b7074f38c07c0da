"""The one data type every stage passes along: a tile grid plus what it means."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Any, Union

import numpy as np

from pipeline.level.art import Art, ArtTile
from pipeline.errors import KeyedError, did_you_mean

# Characters for symbols that need one (a char clash when alphabets merge, a name read from a
# file): a fixed order, so the same inputs always get the same chars.
SPARE_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

# "#rrggbb": how recipes and tileset files write a colour.
RGB_COLOR = re.compile(r"^#[0-9a-fA-F]{6}$")


class Color(str):
    """A colour-typed property value, "#rrggbb" (or "#aarrggbb"): a string that Tiled shows
    with a colour picker and engines read as a colour."""

    def __new__(cls, value: str) -> Color:
        digits = value[1:]
        if not value.startswith("#") or len(digits) not in (6, 8) or any(c not in "0123456789abcdefABCDEF" for c in digits):
            raise ValueError(f'a colour is "#rrggbb" or "#aarrggbb" (got {value!r})')
        return super().__new__(cls, value.lower())

    def argb(self) -> str:
        """Tiled's form: always with alpha first."""
        return self if len(self) == 9 else "#ff" + self[1:]


class FilePath(str):
    """A file-typed property value (Tiled's `file`): a path as the map it came from wrote it,
    relative to that map's folder. A string that Tiled shows with a file picker."""


@dataclass(frozen=True)
class ObjectRef:
    """An object-typed property value (Tiled's `object`): the object of the same Level whose
    `ref` is `target` ("": none). Exporters write the id they give that object, so a reference
    still points at its object after objects are renumbered, merged or placed twice."""

    target: str


class ObjectId(int):
    """An object reference as exporters write it: the id the map gives the object (0: none)."""


PropertyValue = Union[bool, int, float, str, ObjectRef]  # a Color and a FilePath are a str

# The map properties an exporter gives every map it writes, saying where it came from
# (`plan.export_provenance`).
PROVENANCE = ("pack", "map", "seed", "stages", "attempt")


def typed_property(value: PropertyValue) -> PropertyValue:
    """A recipe's property value as maps carry it: a string "#rrggbb" is a colour (Tiled's
    `color` type, LDtk's Color), on objects and on tiles alike."""
    return Color(value) if isinstance(value, str) and RGB_COLOR.match(value) else value


# `"#ffcc0"` or Tiled's own `"#80ffcc00"` are meant as colours, but are not `"#rrggbb"`.
_NEAR_COLOR = re.compile(r"^#[0-9a-fA-F]{3,8}$|^#\w{6}$")


def near_colors(properties: dict[str, PropertyValue], prefix: str = "") -> list[str]:
    """Warnings for string values that look meant as colours but go out as strings."""
    return [
        f'{prefix}{key}: {value!r} looks like a colour but is not "#rrggbb", so it is written as a string'
        for key, value in properties.items()
        if isinstance(value, str) and _NEAR_COLOR.match(value) and not RGB_COLOR.match(value)
    ]


def check_colors(colors: dict[str, str]) -> None:
    """Refuse any value that is not a colour "#rrggbb": a KeyedError naming its key, or for
    several, one error listing them all (each would be one more build to find)."""
    bad = [(key, color) for key, color in colors.items() if not RGB_COLOR.match(color)]
    if len(bad) == 1:
        raise KeyedError(bad[0][0], f'must be a colour "#rrggbb" (got {bad[0][1]!r})')
    if bad:
        shown = ", ".join(f"{key} = {color!r}" for key, color in bad)
        raise KeyedError("", f'must each be a colour "#rrggbb" (got {shown})')


# Characters XML 1.0 cannot hold, even escaped: a TMX with one does not load in Tiled.
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def check_properties(properties: dict[str, PropertyValue], prefix: str = "") -> None:
    """Refuse what a Tiled file cannot hold (a KeyedError naming the key): NaN and infinity,
    which TOML accepts but Tiled JSON (and so Phaser and our manifest) cannot; control
    characters in names and text, which TOML accepts but TMX's XML cannot."""
    for key, value in properties.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise KeyedError(f"{prefix}{key}", f"must be a finite number (got {value}): Tiled JSON has no NaN or infinity")
        if found := NOT_XML.search(key):  # under the table's key, quoted: the key itself would garble the message
            message = f"the name {key!r} holds the control character {found.group()!r}, which a TMX file (XML) cannot: remove it"
            raise KeyedError(prefix.rstrip("."), message)
        if isinstance(value, str) and (found := NOT_XML.search(value)):
            raise KeyedError(f"{prefix}{key}", f"holds the control character {found.group()!r}, which a TMX file (XML) cannot: remove it")


def _settle(properties: dict[str, PropertyValue], what: str) -> str | None:
    """Turn numpy scalars into Python's in place; what is wrong with the first value that is
    not a property value."""
    for name, value in properties.items():
        if isinstance(value, (np.bool_, np.integer, np.floating, np.str_)):
            value = properties[name] = value.item()
        if not isinstance(value, (bool, int, float, str, ObjectRef)):
            return f"{what} {name!r} is {_type_name(value)}, not a number, true/false or text"
        if isinstance(value, float) and not math.isfinite(value):
            return f"{what} {name!r} is {value}, which no map file can hold"
    return None


def _type_name(value: object) -> str:
    kind = type(value)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _py(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _number(value: object) -> float | None:
    """A finite coordinate as a Python float, or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def with_object_ids(objects: list[MapObject]) -> list[MapObject]:
    """`objects` with every object reference as the id a map file gives the object it names:
    objects are numbered 1, 2, ... in order; a reference to no object of the map is 0, none."""
    ids = object_positions(objects)
    return [replace(o, properties=object_ids(o.properties, ids)) if any(isinstance(v, ObjectRef) for v in o.properties.values()) else o for o in objects]


def object_ids(properties: dict[str, PropertyValue], positions: dict[str, int]) -> dict[str, PropertyValue]:
    """`properties` (an object's or the map's) with each object reference as the id of the
    object it names (`positions`: `object_positions` of the map's objects; ids count from 1)."""
    return {k: ObjectId(positions[v.target] + 1 if v.target in positions else 0) if isinstance(v, ObjectRef) else v for k, v in properties.items()}


def object_positions(objects: list[MapObject]) -> dict[str, int]:
    """Where each `ref` is in `objects` (`settle_values` holds them unique)."""
    return {o.ref: k for k, o in reversed(list(enumerate(objects))) if o.ref}


def dangling_references(properties: dict[str, PropertyValue], objects: list[MapObject]) -> list[str]:
    """Warnings for references (the map's own, and its objects') to objects the map no longer
    has: a maze carved into a hand-made map leaves its `boss` behind, and the export says none."""
    positions = object_positions(objects)
    lines = []
    for whose, props in [("the map", properties), *((f"object {o.name!r}", o.properties) for o in objects)]:
        for name, v in props.items():
            if isinstance(v, ObjectRef) and v.target and v.target not in positions:
                lines.append(f"references: property {name!r} of {whose} names an object this map no longer has, so it is written as none")
    return lines


def own_refs(
    objects: list[MapObject], taken: set[str], prefix: str, properties: dict[str, PropertyValue] | None = None
) -> tuple[list[MapObject], dict[str, PropertyValue]]:
    """`objects` (a prefab's, a map laid over another) with refs of their own beside `taken`:
    each ref gets `prefix`, repeated until none is taken, and each reference among them, and
    among `properties` (their map's own), follows it; a reference to an object not among them
    names none (it named none in its file). Returns the objects and the properties."""
    own = {o.ref for o in objects if o.ref}
    head = prefix
    while any(head + ref in taken for ref in own):
        head += prefix

    def moved(props: dict[str, PropertyValue]) -> dict[str, PropertyValue]:
        return {k: ObjectRef(head + v.target if v.target in own else "") if isinstance(v, ObjectRef) else v for k, v in props.items()}

    return [replace(o, ref=head + o.ref if o.ref else "", properties=moved(o.properties)) for o in objects], moved(properties or {})


@dataclass(frozen=True)
class Symbol:
    """One tile value: a single character (MarkovJunior style), a name exporters map to tiles, a colour."""

    char: str
    name: str
    color: str  # "#rrggbb"

    def rgb(self) -> tuple[int, int, int]:
        c = self.color.lstrip("#")
        return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)


@dataclass(frozen=True)
class MapObject:
    """A point (w = h = 0) or rectangle in tile units, exported as a Tiled object; with `tile`
    (the name of a tile in the exported tileset) a tile object drawn in the tile at (x, y); with
    `points` ((x, y) pairs in tiles, relative to x, y) a polyline through them."""

    name: str
    type: str
    x: float
    y: float
    w: float = 0.0
    h: float = 0.0
    properties: dict[str, PropertyValue] = field(default_factory=dict)
    tile: str = ""
    # A plain default, not a factory: Levels pickled before the field existed still read as ().
    points: tuple[tuple[float, float], ...] = ()
    # What an ObjectRef names the object by, unique within its Level ("": nothing refers to it).
    ref: str = ""
    # A tile object drawn by hand: its tile in the Level's art (pipeline.drawn_art), which
    # exporters draw rather than `tile`, at the object's own position and size. A plain
    # default, as `points`.
    art: ArtTile | None = None


@dataclass
class Level:
    """A map being generated.

    `tiles` holds one alphabet index per tile; `alphabet[0]` is the fill symbol. Extra per-tile data
    goes in `layers`, spawn points and rooms in `objects`, stats and provenance in `properties`.
    """

    tiles: np.ndarray
    alphabet: tuple[Symbol, ...]
    layers: dict[str, np.ndarray] = field(default_factory=dict)
    objects: list[MapObject] = field(default_factory=list)
    properties: dict[str, PropertyValue] = field(default_factory=dict)
    # Arrays a stage hands to the stages it feeds that are not per tile, by a name the two agree
    # on: a recording rewrite stage's frames for its GIF. Not exported, not carried further.
    attachments: dict[str, np.ndarray] = field(default_factory=dict)
    # What the stage that made this Level has to tell the user of this map ("placed 8 of 500
    # chests"): the build prints each once per pack, with the maps it came from, as a warning
    # naming the stage. Not exported; a stage's notes are its own (its inputs' are not repeated).
    notes: list[str] = field(default_factory=list)
    # Art drawn by hand (a map load.tmx read, prefabs stamped): tilesets and layers of Tiled
    # gids beside `tiles`, which exporters draw where a cell has some (pipeline.drawn_art says
    # how, and when a cell loses it). A plain default: Levels pickled before it existed read None.
    art: Art | None = None

    def __post_init__(self) -> None:
        if self.tiles.ndim != 2 or self.tiles.dtype != np.uint8:
            raise ValueError(f"Level.tiles must be a 2-D uint8 array (got {self.tiles.dtype} {self.tiles.shape})")
        if not self.alphabet:
            raise ValueError("Level.alphabet is empty")
        # Exporters map symbols to tiles by name, and rewrite rules by char: both must be unique.
        if len({s.name for s in self.alphabet}) < len(self.alphabet) or len({s.char for s in self.alphabet}) < len(self.alphabet):
            raise ValueError(f"Level.alphabet repeats a symbol name or char: {self.alphabet}")
        for name, layer in self.layers.items():
            if layer.shape != self.tiles.shape:
                raise ValueError(f"layer {name!r} has shape {layer.shape}, tiles have {self.tiles.shape}")

    def settle_values(self) -> str | None:
        """Make numpy numbers among the properties and object coordinates Python's (a plugin's
        `count = mask.sum()`: written untyped in TMX, and no JSON encoder takes them), and say
        what no map file can hold, as the words after "a Level" ("whose property 'x' is nan..."):
        a property value of another type or not finite, an object off every number line, two
        objects with one ref, a map without tiles. Not checked on construction, as `unknown_tiles` is not."""
        if self.tiles.size == 0:
            return f"without tiles ({self.tiles.shape[1]} x {self.tiles.shape[0]})"
        problem = _settle(self.properties, "property")
        refs: dict[str, int] = {}
        for k, obj in enumerate(self.objects):
            if problem is not None:
                break
            where = f"object {k + 1} ({obj.name!r})"
            coordinates = (obj.x, obj.y, obj.w, obj.h, *(c for p in obj.points for c in p))
            if any(_number(v) is None for v in coordinates):
                problem = f"{where} has a position, size or point that is not a finite number"
            elif obj.ref and refs.setdefault(obj.ref, k) != k:
                problem = f"{where} has the ref {obj.ref!r} of object {refs[obj.ref] + 1}: a reference to it would be ambiguous"
            else:
                if any(isinstance(v, np.generic) for v in coordinates):
                    # numpy coordinates as Python's, which every writer takes (ints stay ints)
                    obj = replace(
                        obj, x=_py(obj.x), y=_py(obj.y), w=_py(obj.w), h=_py(obj.h), points=tuple((_py(x), _py(y)) for x, y in obj.points)
                    )
                    self.objects[k] = obj
                problem = _settle(obj.properties, f"{where} property")
        return None if problem is None else f"whose {problem}"

    def unknown_tiles(self) -> str | None:
        """What is wrong if `tiles` holds indices past the alphabet: every exporter would draw
        them as empty tiles, so a stage returning such a Level has a bug. Not checked on
        construction, which stages do many times a map; the build checks what each stage returns."""
        symbols = len(self.alphabet)
        if self.tiles.size == 0 or int(self.tiles.max()) < symbols:
            return None
        wrong = self.tiles >= symbols
        y, x = (int(i[0]) for i in np.nonzero(wrong))
        return (
            f"{int(np.count_nonzero(wrong))} {'tile holds' if np.count_nonzero(wrong) == 1 else 'tiles hold'} an index past the alphabet's {symbols} symbols"
            f" (0..{symbols - 1}), the first at x={x}, y={y}: index {int(self.tiles[y, x])}"
        )

    @property
    def height(self) -> int:
        return int(self.tiles.shape[0])

    @property
    def width(self) -> int:
        return int(self.tiles.shape[1])

    def index_of(self, name: str) -> int:
        """Alphabet index of the symbol called `name` (or whose char is `name`)."""
        for i, sym in enumerate(self.alphabet):
            if sym.name == name or sym.char == name:
                return i
        names = [s.name for s in self.alphabet]
        raise KeyError(f"no symbol {name!r} in this level's alphabet{did_you_mean(name, names)} ({', '.join(names)})")

    def with_properties(self, **props: PropertyValue) -> Level:
        return replace(self, properties={**self.properties, **props})

    def to_text(self) -> str:
        """The tiles as text, for a REPL, a test or a diff: one line per symbol of the alphabet
        (`char name #rrggbb`, fill symbol first), a blank line, then one row of chars per tile row:

            B wall #000000
            W floor #ffffff

            BBBBB
            BWWWB
            BBBBB

        Only the tiles and the alphabet: layers, objects, properties and attachments are left out, so
        `Level.from_text(level.to_text())` gives the same tiles and alphabet and nothing else."""
        used = int(self.tiles.max(initial=0))
        if used >= len(self.alphabet):
            raise ValueError(f"tile value {used} has no symbol: the alphabet has {len(self.alphabet)}")
        header = [f"{s.char} {s.name} {s.color}" for s in self.alphabet]
        chars = np.array([s.char for s in self.alphabet])
        rows = ["".join(row) for row in chars[self.tiles]]
        return "\n".join([*header, "", *rows]) + "\n"

    @classmethod
    def from_text(cls, text: str) -> Level:
        """The Level `to_text` wrote (tiles and alphabet; no layers, objects or properties).
        A symbol line is its char, a space, its name, a space and its colour; a char of the grid
        that no symbol line declares is a ValueError naming its line and column."""
        lines = text.splitlines()
        if "" not in lines:
            raise ValueError("a level text is symbol lines, a blank line, then the rows of tiles")
        blank = lines.index("")
        alphabet: list[Symbol] = []
        for number, line in enumerate(lines[:blank], start=1):
            # The char is the line's first character, whatever it is (it may be '#' or a space).
            name, _, color = line[2:].rpartition(" ")
            if len(line) < 4 or line[1] != " " or not name or not RGB_COLOR.match(color):
                raise ValueError(f"line {number}: a symbol line is 'CHAR NAME #rrggbb' (got {line!r})")
            alphabet.append(Symbol(char=line[0], name=name, color=color))
        rows = lines[blank + 1 :]
        while rows and not rows[-1]:
            rows.pop()  # trailing newlines, as editors leave them
        if not rows:
            raise ValueError("a level text needs at least one row of tiles after the blank line")
        index = {s.char: i for i, s in enumerate(alphabet)}
        tiles = np.zeros((len(rows), len(rows[0])), dtype=np.uint8)
        for y, row in enumerate(rows):
            number = blank + 2 + y
            if len(row) != tiles.shape[1]:
                raise ValueError(f"line {number}: {len(row)} tiles, the first row has {tiles.shape[1]}")
            for x, char in enumerate(row):
                if char not in index:
                    raise ValueError(f"line {number}, column {x + 1}: {char!r} is not a symbol of the alphabet")
                tiles[y, x] = index[char]
        return cls(tiles=tiles, alphabet=tuple(alphabet))
