"""What every kind's XML reader works with: a small element tree with line numbers, the grid a
node runs on and how to read its children (XmlContext), and the checks common to all elements
(attributes, numbers, symmetry)."""

from __future__ import annotations

import xml.parsers.expat
from dataclasses import dataclass, field
from typing import Callable, Collection

from pipeline.rewrite import symmetry
from pipeline.rewrite.node import Node
from pipeline.rewrite.program_error import ProgramError
from pipeline.rewrite.resources import ResourceReader
from pipeline.rewrite.rule import Alphabet

# Attributes that change nothing in a 2D run of the supported nodes: `d` marks a node's
# dimension and `comment` is documentation (the reference never reads either on a node);
# `vertices` adds 3D diagonals to paths; `periodic` is read only by convolution and wfc nodes
# (convchain always wraps), so anywhere else the reference ignores it.
_IGNORED = {"comment", "d", "vertices", "periodic"}
_UNSUPPORTED_ATTRS = {
    "folder": "folder on this node (MarkovJunior reads it only where a grid is made: on the model's root element and on map and wfc nodes)",
    "transparent": "transparent (a 3D rendering option)",
}


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    line: int
    children: list[Element] = field(default_factory=list)


@dataclass(frozen=True)
class Grid:
    """What every node on one grid reads with: its alphabet and where its rule images are."""

    alphabet: Alphabet
    folder: str | None  # the grid's `folder` (the root's, a map's or a wfc's): rules/<folder>/<name>.png
    read: ResourceReader | None
    lines_3d: list[int] = field(default_factory=list)  # lines of 3D rules, which never match a 2D grid


# Reads a child node's element: (element, its grid, inherited symmetry group).
ChildReader = Callable[[Element, Grid, str], Node]


@dataclass(frozen=True)
class XmlContext:
    """A node's element as its kind reads it: the `grid` it runs on, the symmetry `group` (the
    element's own `symmetry` already applied), `root_attrs` (the grid's attributes, allowed on
    the model's root node only; empty elsewhere), `child` to read the nodes it holds and
    `branches`, the tags whose `<union>`s belong to the grid of the element above them."""

    grid: Grid
    group: str
    root_attrs: frozenset[str]
    child: ChildReader
    branches: tuple[str, ...]

    @property
    def is_root(self) -> bool:
        return bool(self.root_attrs)

    def unions(self, el: Element) -> tuple[tuple[str, str], ...]:
        """The unions declared for the grid `el` makes (in it and in its branches)."""
        found: list[tuple[str, str]] = []
        collect_unions(el, self.branches, found)
        return tuple(found)


def parse_xml(text: str) -> Element:
    """A small element tree with line numbers (ElementTree's C parser keeps none)."""
    parser = xml.parsers.expat.ParserCreate()
    stack: list[Element] = []
    roots: list[Element] = []

    def start(tag: str, attrs: dict[str, str]) -> None:
        el = Element(tag, dict(attrs), parser.CurrentLineNumber)
        (stack[-1].children if stack else roots).append(el)
        stack.append(el)

    def end(tag: str) -> None:
        stack.pop()

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        parser.Parse(text, True)
    except xml.parsers.expat.ExpatError as exc:
        raise ProgramError("", f"not well-formed XML: {exc}") from None
    return roots[0]


def collect_unions(el: Element, through: Collection[str], out: list[tuple[str, str]]) -> None:
    """The `<union symbol= values=>` children of `el` and of the elements of tags `through` in it."""
    for child in el.children:
        if child.tag == "union":
            check_attrs(child, {"symbol", "values"})
            sym, vals = child.attrs.get("symbol"), child.attrs.get("values")
            if sym is None or vals is None:
                raise ProgramError(f"line {child.line}", "<union> needs symbol and values")
            out.append((sym, vals))
        elif child.tag in through:
            collect_unions(child, through, out)


def symmetry_of(el: Element, inherited: str) -> str:
    """The group an element's `symmetry` sets, else the one it inherits."""
    name = el.attrs.get("symmetry")
    if name is None:
        return inherited
    try:
        return symmetry.check(name)
    except ValueError as exc:
        raise ProgramError(f"line {el.line}", str(exc)) from None


def check_attrs(el: Element, allowed: Collection[str]) -> None:
    for name in el.attrs:
        if name in allowed or name in _IGNORED:
            continue
        if name in _UNSUPPORTED_ATTRS:
            raise ProgramError(f"line {el.line}", f"<{el.tag} {name}=...>: {_UNSUPPORTED_ATTRS[name]} is not supported")
        raise ProgramError(f"line {el.line}", f"<{el.tag}> has an unknown attribute {name!r} (known: {', '.join(sorted(allowed))})")


def no_children(el: Element) -> None:
    for c in el.children:
        raise ProgramError(f"line {c.line}", f"unexpected <{c.tag}> inside <{el.tag}>")


def int_attr(el: Element, name: str, default: int) -> int:
    text = el.attrs.get(name)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        raise ProgramError(f"line {el.line}", f"{name}={text!r} is not a whole number") from None
    if value < 0:
        raise ProgramError(f"line {el.line}", f"{name} must be >= 0")
    return value


def float_attr(el: Element, name: str, default: float) -> float:
    text = el.attrs.get(name)
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        raise ProgramError(f"line {el.line}", f"{name}={text!r} is not a number") from None
    if not value >= 0 or value == float("inf"):
        raise ProgramError(f"line {el.line}", f"{name} must be a number >= 0")
    return value


def bool_attr(el: Element, name: str, default: bool = False) -> bool:
    text = el.attrs.get(name, "true" if default else "false").lower()
    if text not in ("true", "false"):
        raise ProgramError(f"line {el.line}", f"{name}={el.attrs[name]!r} must be True or False")
    return text == "true"
