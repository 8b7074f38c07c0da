"""The TOML form of a wfc node (wfc/go.py says what it does), shaped like a `map` node:

    { wfc = { sample = "Flowers", n = 3, shannon = true }, values = "zYgN",
      rules = ["B=N|g", "W=z|g|Y"], symmetry = "(x)", then = [ { all = "zY=*z" } ] }
    { wfc = { tileset = "Knots2D", periodic = true }, values = "IE", rules = ["D=Empty", "B=Empty|Line|Turn|Cross"] }

`wfc` holds the model: `sample` (overlapping: `samples/<sample>.png`, with `n`, default 3, and
`periodic_input`, default true) or `tileset` (tiled: `tilesets/<tileset>.xml`, its tiles from
`tilesets/<tiles>/`, with `periodic`, default false, and `overlap`), both read through the
stage's resources folder, and `shannon` (default false) and `tries` (default 1000). `values`
are the new grid's symbols, the sample's colours in the order they first appear; each rule
`"OLD=A|B"` lets the cells of value OLD become only A or B (values of the new grid, or tile
names); `symmetry` is the sample's patterns' (and the `then` nodes'); `then` runs on the new grid.
"""

from __future__ import annotations

from typing import Any

from pipeline.errors import toml_text
from pipeline.rewrite.program import WfcNode
from pipeline.rewrite.resources import ResourceReader
from pipeline.rewrite.rule import Alphabet
from pipeline.rewrite.toml_form import ProgramError, no_extra, parse_node
from pipeline.rewrite.wfc import build
from pipeline.rewrite.wfc.overlap import OverlapModel
from pipeline.rewrite.wfc.tiles import Tileset

_NODE_OPTIONS = ("wfc", "values", "rules", "symmetry", "then")
_SAMPLE_OPTIONS = ("sample", "n", "periodic_input", "periodic", "shannon", "tries")
_TILESET_OPTIONS = ("tileset", "tiles", "periodic", "overlap", "shannon", "tries")
_NO_READER = 'an inline program reads samples and tilesets from the stage\'s resources folder: set resources = "..."'


def parse_wfc(data: dict[str, Any], alphabet: Alphabet, group: str, where: str, read: ResourceReader | None) -> WfcNode:
    """A WfcNode from its table (`group` already includes the table's own `symmetry`)."""
    no_extra(data, _NODE_OPTIONS, where)

    def key(name: str) -> str:
        return f"{where}.{name}" if where else name

    body = data["wfc"]
    here = key("wfc")
    if not isinstance(body, dict) or ("sample" in body) == ("tileset" in body):
        raise ProgramError(here, 'must be a table with one of sample (overlapping) and tileset (tiled), such as { sample = "Flowers", n = 3 }')
    overlapping = "sample" in body
    no_extra(body, _SAMPLE_OPTIONS if overlapping else _TILESET_OPTIONS, here)
    for name in ("sample", "tileset", "tiles"):
        if name in body and (not isinstance(body[name], str) or not body[name]):
            raise ProgramError(f"{here}.{name}", f"must be a name (got {body[name]!r})")
    flags = {name: _flag(body, name, default, here) for name, default in (("shannon", False), ("periodic", overlapping), ("periodic_input", True))}
    if overlapping and not flags["periodic"]:
        raise ProgramError(f"{here}.periodic", "an overlapping wave always wraps around the grid's edges, as in MarkovJunior (remove it)")
    numbers = {name: _whole(body, name, default, here) for name, default in (("n", 3), ("tries", 1000), ("overlap", 0))}
    values = data.get("values")
    if not isinstance(values, str):
        raise ProgramError(key("values"), 'is required: the new grid\'s symbols, e.g. "zYgN" (a sample\'s colours in the order they first appear)')
    try:
        inner = Alphabet(values)
    except ValueError as exc:
        raise ProgramError(key("values"), str(exc)) from None
    rules = _rules(data.get("rules", []), key("rules"))
    try:
        model: OverlapModel | Tileset
        if overlapping:
            model = build.overlap_model(read, body["sample"], inner.values, numbers["n"], group, flags["periodic_input"], _NO_READER)
        else:
            model = build.tiled_model(read, body["tileset"], body.get("tiles"), inner.values, _NO_READER)
        start = build.start_table(alphabet, inner, model, rules)
        build.check_counts(model, numbers["tries"], numbers["overlap"])
    except build.WfcError as exc:
        if exc.rule is not None:
            listed = isinstance(data.get("rules", []), list)
            raise ProgramError(f"{key('rules')}[{exc.rule}]" if listed else key("rules"), exc.message) from None
        raise ProgramError(f"{here}.{exc.key}", exc.message) from None
    then = data.get("then", [])
    if not isinstance(then, list):
        raise ProgramError(key("then"), "must be a list of nodes to run on the new grid")
    children = tuple(parse_node(child, inner, group, f"{key('then')}[{i}]", read) for i, child in enumerate(then))
    n = numbers["n"] if overlapping else 1
    return WfcNode(inner, model, start, n, flags["periodic"], flags["shannon"], numbers["tries"], children, numbers["overlap"])


def _rules(body: Any, where: str) -> list[tuple[str, list[str]]]:
    """`["B=N|g", "W=z"]` as (old value, what it may become)."""
    items = body if isinstance(body, list) else [body]
    out = []
    for i, item in enumerate(items):
        spot = f"{where}[{i}]" if isinstance(body, list) else where
        if not isinstance(item, str) or item.count("=") != 1:
            raise ProgramError(spot, f'a wfc rule is a string "OLD=NEW|NEW", an old value and what it may become (got {toml_text(item)})')
        old, new = item.split("=")
        out.append((old, new.split("|") if new else []))
    return out


def _flag(body: dict[str, Any], name: str, default: bool, where: str) -> bool:
    value = body.get(name, default)
    if not isinstance(value, bool):
        raise ProgramError(f"{where}.{name}", f"must be true or false (got {toml_text(value)})")
    return value


def _whole(body: dict[str, Any], name: str, default: int, where: str) -> int:
    value = body.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ProgramError(f"{where}.{name}", f"must be a whole number (got {toml_text(value)})")
    return value
