"""Building a wfc node's model as both program readers do: the sample or tileset comes through a
resource reader (`samples/<name>.png`, `tilesets/<name>.xml` and `tilesets/<tiles>/<tile>.vox`,
as MarkovJunior finds them), and the start rules become the table of which old value may become
which choice. Errors are WfcError, naming the reader's key they are about and the file."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from pipeline.rewrite.pixels import ImageError
from pipeline.rewrite.program_error import ProgramError
from pipeline.rewrite.resources import ResourceError, ResourceReader
from pipeline.rewrite.rule import Alphabet
from pipeline.rewrite.wfc.overlap import OverlapModel, read_sample
from pipeline.rewrite.wfc.tiles import Tileset, TilesetError, XmlElement, load_tileset
from pipeline.rewrite.wfc.vox import VoxError, read_vox
from pipeline.rewrite.xml_element import parse_xml


class WfcError(ValueError):
    """A wfc node that cannot be built: `key` is what it is about (`sample`, `tileset`, `tiles`,
    `n`, `tries`, `overlap`, `rules`), `rule` the index of the start rule at fault, if any."""

    def __init__(self, key: str, message: str, rule: int | None = None):
        self.key = key
        self.message = message
        self.rule = rule
        super().__init__(message)


def _reader(read: ResourceReader | None, key: str, path: str, no_reader: str) -> ResourceReader:
    if read is None:
        raise WfcError(key, f"{path}: {no_reader}")
    return read


def _name(key: str, name: str) -> None:
    # A name, not a path: the reader resolves it inside the resources folder.
    parts = name.replace("\\", "/").split("/")
    if not name or any(p in ("", ".", "..") for p in parts) or (key != "tiles" and len(parts) > 1):
        raise WfcError(key, f"{name!r} must be the name of a {'sample image' if key == 'sample' else 'tileset'} in the resources folder")


def overlap_model(
    read: ResourceReader | None, sample: str, values: str, n: int, group: str, periodic_input: bool, no_reader: str
) -> OverlapModel:
    """The overlapping model of `samples/<sample>.png` for a wfc node of `values`; `no_reader`
    says why `read` is None, for the message then."""
    _name("sample", sample)
    if n < 1:
        raise WfcError("n", f"must be at least 1 (got {n})")
    path = f"samples/{sample}.png"
    read = _reader(read, "sample", path, no_reader)
    try:
        pixels = read_sample(read(path))
    except (ResourceError, ImageError) as exc:
        raise WfcError("sample", f"{path} {exc}") from None
    colours = int(pixels.max()) + 1
    if colours > len(values):
        raise WfcError("sample", f"{path} has {colours} colours but values={values!r} names {len(values)}")
    return OverlapModel(pixels, colours, n, group, periodic_input)


def tiled_model(read: ResourceReader | None, tileset: str, tiles: str | None, values: str, no_reader: str) -> Tileset:
    """The tiled model of `tilesets/<tileset>.xml`, its tiles read from `tilesets/<tiles>/`
    (`tiles` defaults to the tileset's name)."""
    _name("tileset", tileset)
    folder = tileset if tiles is None else tiles
    _name("tiles", folder)
    path = f"tilesets/{tileset}.xml"
    read = _reader(read, "tileset", path, no_reader)
    try:
        root: XmlElement = parse_xml(read(path).decode("utf-8"))
    except (ResourceError, UnicodeDecodeError) as exc:
        raise WfcError("tileset", f"{path} {exc}") from None
    except ProgramError as exc:
        raise WfcError("tileset", f"{path}: {exc.message}") from None

    def read_tile(tile: str):  # type: ignore[no-untyped-def]
        tile_path = f"tilesets/{folder}/{tile}.vox"
        try:
            return read_vox(read(tile_path))
        except (ResourceError, VoxError) as exc:
            # Named under the attribute that chose the folder: `tiles` only when the model gives it.
            raise WfcError("tileset" if tiles is None else "tiles", f"{tile_path} {exc}") from None

    try:
        model = load_tileset(root, read_tile, path)
    except TilesetError as exc:
        at = f" line {exc.line}" if exc.line else ""
        raise WfcError("tileset", f"{path}{at}: {exc}") from None
    if model.colours > len(values):
        raise WfcError("tileset", f"the tiles of {path} have {model.colours} colours but values={values!r} names {len(values)}")
    return model


def start_table(old: Alphabet, new: Alphabet, model: OverlapModel | Tileset, rules: Sequence[tuple[str, Sequence[str]]]) -> np.ndarray:
    """`start[v, k]`: whether an old cell of value v may become choice k (a value of `new` for
    the overlapping model, a tile variant for the tiled one). Each rule is (old value, the values
    or tile names it may become); values no rule names may become anything."""
    width = len(model.weights) if isinstance(model, Tileset) else len(new.values)
    start = np.ones((len(old.values), width), dtype=np.bool_)
    seen: set[str] = set()
    for i, (value, outs) in enumerate(rules):
        if len(value) != 1 or value not in old.values:
            raise WfcError("rules", f"{value!r} must be one value of the grid before the wfc ({old.values!r})", i)
        if value in seen:
            raise WfcError("rules", f"{value!r} is given twice in this wfc", i)
        seen.add(value)
        if not outs:
            raise WfcError("rules", f"{value!r} must become something", i)
        row = np.zeros(width, dtype=np.bool_)
        for name in outs:
            if isinstance(model, Tileset):
                if name not in model.names:
                    raise WfcError("rules", f"unknown tile {name!r} (tiles: {', '.join(model.names)})", i)
                row |= model.names[name]
            elif len(name) != 1 or name not in new.values:
                raise WfcError("rules", f"{name!r} is not a value of this wfc ({new.values!r})", i)
            else:
                row[new.values.index(name)] = True
        start[old.value(value)] = row
    return start


def check_counts(model: OverlapModel | Tileset, tries: int, overlap: int) -> None:
    """`tries` at least 1; a tiled model's `overlap` below its tiles' size."""
    if tries < 1:
        raise WfcError("tries", f"must be at least 1 (got {tries})")
    if overlap < 0 or (isinstance(model, Tileset) and overlap >= model.size):
        size = model.size if isinstance(model, Tileset) else 1
        raise WfcError("overlap", f"overlap={overlap} must be from 0 to less than the tiles' size {size}")
