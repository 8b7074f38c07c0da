"""The `map` node (MarkovJunior's MapNode): draw a new grid (another scale, other values) from
the current one by rules, then run its children on it as a sequence; the program ends when they
do. Its data, its TOML form `{ map = ["B=DD/DA"], scale = [2, 2], values = "DA", then = [...] }`,
its XML form `<map scale="2 2 1" values="DA"><rule in= out=/>...</map>`, and its row in the
flattened program (a leaf where the machine hands over to program.run, which draws the grid
with nodes/map_node.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.errors import toml_text
from pipeline.rewrite.codes import MAP
from pipeline.rewrite.flat import FlatRows, Visit
from pipeline.rewrite.node import Node
from pipeline.rewrite.program_error import ProgramError
from pipeline.rewrite.rule import Alphabet, Rule, parse_pattern, split_rule
from pipeline.rewrite.toml_table import TomlContext, no_extra
from pipeline.rewrite.xml_element import Element, Grid, XmlContext, check_attrs, no_children, symmetry_of

NAMES: tuple[str, ...] = ("map",)

_MAP_OPTIONS = ("map", "scale", "values", "then", "symmetry")
_MAP_ATTRS = {"scale", "values", "symmetry", "folder"}
_MAP_RULE_ATTRS = {"in", "out", "symmetry", "p"}  # p is read and unused, as in the reference


@dataclass(frozen=True)
class MapNode(Node):
    """A new grid drawn from the current one (see nodes/map_node.py), on which `children` run."""

    alphabet: Alphabet  # the new grid's values
    scale: tuple[tuple[int, int], tuple[int, int]]  # (numerator, denominator) along x, then y
    rules: tuple[Rule, ...]  # inputs in the old grid's values, outputs in the new one's
    children: tuple[Node, ...]


def make_map_rule(old: Alphabet, new: Alphabet, inp: str, out: str, group: str) -> list[Rule]:
    """A map rule's orientations from its patterns as a program writes them: the input in the
    current grid's values, the output (of any size) in the new grid's."""
    waves = np.array([[old.wave(c) for c in row] for row in parse_pattern(inp)], dtype=np.int64)
    values = np.array([[new.value(c) for c in row] for row in parse_pattern(out)], dtype=np.uint8)
    return Rule(waves, values).variants(group)


def read_toml(data: dict[str, Any], ctx: TomlContext) -> MapNode:
    """`{ map = ["B=DD/DA"], scale = [2, 2], values = "DA", then = [...] }`: rules from this grid's
    values to the new grid's (outputs of any size), its scale along x and y (a whole number, or
    [numerator, denominator]), its values, and the nodes that run on it."""
    no_extra(data, _MAP_OPTIONS, ctx.where)
    alphabet, group, key = ctx.alphabet, ctx.group, ctx.key
    values = data.get("values")
    if not isinstance(values, str):
        raise ProgramError(key("values"), 'is required: the new grid\'s symbols, e.g. "DA"')
    try:
        inner = Alphabet(values)
    except ValueError as exc:
        raise ProgramError(key("values"), str(exc)) from None
    scale = data.get("scale")
    if not isinstance(scale, list) or len(scale) != 2:
        raise ProgramError(key("scale"), f"must be [x, y], each a whole number or [numerator, denominator] (got {toml_text(scale)})")
    factors = tuple(_factor(s, f"{key('scale')}[{i}]") for i, s in enumerate(scale))
    body = data["map"]
    items = body if isinstance(body, list) else [body]
    if not items:
        raise ProgramError(key("map"), "needs at least one rule")
    rules: list[Rule] = []
    for i, item in enumerate(items):
        spot = f"{key('map')}[{i}]" if isinstance(body, list) else key("map")
        if not isinstance(item, str):
            raise ProgramError(spot, f'a map rule is a string "IN=OUT" (got {toml_text(item)})')
        try:
            rules.extend(make_map_rule(alphabet, inner, *split_rule(item), group))
        except ValueError as exc:
            raise ProgramError(spot, str(exc)) from None
    then = data.get("then", [])
    if not isinstance(then, list):
        raise ProgramError(key("then"), "must be a list of nodes to run on the new grid")
    children = tuple(ctx.child(child, inner, group, f"{key('then')}[{i}]") for i, child in enumerate(then))
    return MapNode(inner, factors, tuple(rules), children)  # type: ignore[arg-type]


def _factor(value: Any, where: str) -> tuple[int, int]:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value, 1
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in value)
    ):
        return value[0], value[1]
    raise ProgramError(where, f"must be a whole number >= 1 or [numerator, denominator] (got {toml_text(value)})")


def read_xml(el: Element, ctx: XmlContext) -> MapNode:
    """`<map scale="2 2 1" values="DA">` with `<rule in=... out=...>` children (inputs in the
    current grid's values, outputs in the new grid's, of any size) and the nodes to run after."""
    where = f"line {el.line}"
    check_attrs(el, _MAP_ATTRS | ctx.root_attrs)
    reading, group = ctx.grid, ctx.group
    scale = el.attrs.get("scale")
    if scale is None:
        raise ProgramError(where, '<map> needs scale, e.g. scale="2 2 1" (x, y and z; a part may be a fraction such as 1/3)')
    parts = scale.split()
    if len(parts) != 3:
        raise ProgramError(where, f"scale={scale!r} needs three parts separated by spaces (x y z)")
    try:
        factors = [_fraction(part) for part in parts]
    except ValueError:
        raise ProgramError(where, f"scale={scale!r}: each part is a whole number or a fraction such as 1/3") from None
    if "values" not in el.attrs:
        raise ProgramError(where, "<map> needs values (the new grid's symbols)")
    unions = ctx.unions(el)
    try:
        alphabet = Alphabet(el.attrs["values"].replace(" ", ""), unions)
    except ValueError as exc:
        raise ProgramError(where, str(exc)) from None
    rules: list[Rule] = []
    for rel in (c for c in el.children if c.tag == "rule"):
        check_attrs(rel, _MAP_RULE_ATTRS)
        no_children(rel)
        if "in" not in rel.attrs or "out" not in rel.attrs:
            raise ProgramError(f"line {rel.line}", "a map's <rule> needs in (old grid's values) and out (new grid's values)")
        rule_group = symmetry_of(rel, group)
        try:
            rules.extend(make_map_rule(reading.alphabet, alphabet, rel.attrs["in"], rel.attrs["out"], rule_group))
        except ValueError as exc:
            raise ProgramError(f"line {rel.line}", str(exc)) from None
    # A map makes a grid of its own, whose rule images come from its own `folder` (none: rules/),
    # not the root's, as in the reference.
    inner = Grid(alphabet, el.attrs.get("folder"), reading.read, reading.lines_3d)
    kids = [c for c in el.children if c.tag not in ("rule", "union")]
    children = tuple(ctx.child(c, inner, group) for c in kids)
    return MapNode(alphabet, (factors[0], factors[1]), tuple(rules), children)


def _fraction(text: str) -> tuple[int, int]:
    num, _, den = text.partition("/")
    n, d = int(num), int(den or "1")
    if n < 1 or d < 1:
        raise ValueError(text)
    return n, d


def flatten(node: MapNode, k: int, rows: FlatRows, visit: Visit) -> None:
    """Node k's row: a leaf here, as the machine stops when it reaches a node that makes a new
    grid, and `program.run` goes on from there."""
    rows.kinds[k] = MAP
