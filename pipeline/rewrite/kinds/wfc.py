"""The `wfc` node (MarkovJunior's WFCNode): wave function collapse on a new grid of its own
values, then its children on that grid, like `map`. Its data, its TOML and XML forms and its row
in the flattened program (a leaf where the machine hands over to program.run, which collapses
the grid with wfc/go.py; wfc/build.py builds its model). Its TOML form is shaped like a `map`:

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
Its XML form is `<wfc sample= n= values=>` or `<wfc tileset= values=>`, its `<rule in= out=>`
children the start rules and its other children the nodes run on the new grid.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.errors import toml_text
from pipeline.rewrite.codes import WFC
from pipeline.rewrite.flat import FlatRows, Visit
from pipeline.rewrite.node import Node
from pipeline.rewrite.program_error import ProgramError
from pipeline.rewrite.rule import Alphabet
from pipeline.rewrite.toml_table import TomlContext, no_extra
from pipeline.rewrite.wfc import build
from pipeline.rewrite.wfc.overlap import OverlapModel
from pipeline.rewrite.wfc.tiles import Tileset
from pipeline.rewrite.xml_element import Element, Grid, XmlContext, bool_attr, check_attrs, int_attr, no_children

NAMES: tuple[str, ...] = ("wfc",)

_NODE_OPTIONS = ("wfc", "values", "rules", "symmetry", "then")
_SAMPLE_OPTIONS = ("sample", "n", "periodic_input", "periodic", "shannon", "tries")
_TILESET_OPTIONS = ("tileset", "tiles", "periodic", "overlap", "shannon", "tries")
_WFC_ATTRS = {"values", "sample", "tileset", "tiles", "n", "periodic", "periodicInput", "shannon", "tries", "symmetry", "overlap", "folder"}
_NO_READER = 'an inline program reads samples and tilesets from the stage\'s resources folder: set resources = "..."'
# After a wfc node that collapsed, nothing of its branch runs (the program ends with its
# children); after one that failed, the reference runs its next siblings in the same step, which
# a handover to a new grid cannot do here. Refused rather than run differently.
WFC_LAST = "<wfc> must be the last node of its branch (after a failed collapse MarkovJunior goes on with the nodes after it, which this engine does not)"


@dataclass(frozen=True, eq=False)
class WfcNode(Node):
    """`wfc` (see wfc/go.py): collapse a new grid of `alphabet`'s values from a sample's NxN
    patterns (OverlapModel) or a tileset (Tileset, one tile per old cell), then run `children`
    in sequence on it. `start[v, k]`: an old cell of value v may become choice k, a value of
    the sample (overlapping: the value at a pattern's top-left corner) or a tile variant."""

    alphabet: Alphabet
    model: OverlapModel | Tileset
    start: np.ndarray  # bool (old values, choices)
    n: int  # pattern size (1 for tiles)
    periodic: bool
    shannon: bool
    tries: int
    children: tuple[Node, ...]
    overlap: int = 0  # tiles: cells shared by neighbouring tiles


def read_toml(data: dict[str, Any], ctx: TomlContext) -> WfcNode:
    """A WfcNode from its table."""
    no_extra(data, _NODE_OPTIONS, ctx.where)
    alphabet, group, read, key = ctx.alphabet, ctx.group, ctx.read, ctx.key

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
    children = tuple(ctx.child(child, inner, group, f"{key('then')}[{i}]") for i, child in enumerate(then))
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


def read_xml(el: Element, ctx: XmlContext) -> WfcNode:
    """`<wfc sample="Flowers" n="3" values="..."><rule in="B" out="N|g"/>...</wfc>` (overlapping),
    or `<wfc tileset="Knots2D" [tiles="Knots2D/sub"] values="...">` (tiled; the rules' outputs
    are tile names); the other children are nodes run on the new grid."""
    where = f"line {el.line}"
    if ctx.is_root:
        raise ProgramError(where, "<wfc> makes a grid from the one before it, so it cannot be the model's root (put it in a <sequence>)")
    reading = ctx.grid
    check_attrs(el, _WFC_ATTRS)
    if ("sample" in el.attrs) == ("tileset" in el.attrs):
        raise ProgramError(where, "<wfc> needs exactly one of sample (overlapping model) and tileset (tiled model)")
    if "values" not in el.attrs:
        raise ProgramError(where, "<wfc> needs a values attribute (the symbols of the grid it makes)")
    unions = ctx.unions(el)
    try:
        alphabet = Alphabet(el.attrs["values"].replace(" ", ""), unions)
    except ValueError as exc:
        raise ProgramError(where, f"values: {exc}") from None
    group = ctx.group
    rule_elements = [rel for rel in el.children if rel.tag == "rule"]
    for rel in rule_elements:
        check_attrs(rel, {"in", "out"})
        no_children(rel)
    no_reader = "no resources folder to read it from (load the model through the rewrite stage)"
    try:
        model: OverlapModel | Tileset
        if "sample" in el.attrs:
            periodic_input = bool_attr(el, "periodicInput", True)
            model = build.overlap_model(reading.read, el.attrs["sample"], alphabet.values, int_attr(el, "n", 3), group, periodic_input, no_reader)
            # The reference reads the first character of each alternative.
            outs = [[name[:1] for name in rel.attrs.get("out", "").split("|")] for rel in rule_elements]
            n, periodic = model.n, True  # the reference's overlapping wave always wraps
        else:
            model = build.tiled_model(reading.read, el.attrs["tileset"], el.attrs.get("tiles"), alphabet.values, no_reader)
            outs = [rel.attrs.get("out", "").split("|") for rel in rule_elements]
            n, periodic = 1, bool_attr(el, "periodic")
        start = build.start_table(reading.alphabet, alphabet, model, [(rel.attrs.get("in", ""), out) for rel, out in zip(rule_elements, outs)])
        tries = int_attr(el, "tries", 1000)
        overlap = int_attr(el, "overlap", 0) if isinstance(model, Tileset) else 0
        build.check_counts(model, tries, overlap)
    except build.WfcError as exc:
        if exc.rule is not None:
            rel = rule_elements[exc.rule]
            raise ProgramError(f"line {rel.line}", f"<rule in={rel.attrs.get('in', '')!r} out={rel.attrs.get('out', '')!r}>: {exc.message}") from None
        raise ProgramError(where, f"<wfc {exc.key}=...>: {exc.message}") from None
    inner = Grid(alphabet, el.attrs.get("folder"), reading.read, reading.lines_3d)
    kids = tuple(ctx.child(c, inner, group) for c in el.children if c.tag not in ("rule", "union"))
    return WfcNode(alphabet, model, start, n, periodic, bool_attr(el, "shannon"), tries, kids, overlap)


def flatten(node: WfcNode, k: int, rows: FlatRows, visit: Visit) -> None:
    """Node k's row: a leaf here, as the machine stops when it reaches a node that makes a new
    grid, and `program.run` goes on from there."""
    rows.kinds[k] = WFC
