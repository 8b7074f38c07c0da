"""The `path` node (MarkovJunior's PathNode): draw a shortest path from a `from` cell to a `to`
cell over `on` cells, in `color` (default: the first `from` value); `inertia` prefers going
straight, `longest` the farthest goal, `edges` diagonal steps. Its data, its TOML form
`{ path = { from = "R", to = "W", on = "B", color = "D" } }`, its XML form `<path from= to= on=/>`,
and its row in the flattened program; its kernel is nodes/path_node.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pipeline.errors import toml_text
from pipeline.rewrite.codes import PATH
from pipeline.rewrite.flat import FlatRows, Visit
from pipeline.rewrite.node import Node
from pipeline.rewrite.nodes import path_node
from pipeline.rewrite.program_error import ProgramError
from pipeline.rewrite.rule import Alphabet
from pipeline.rewrite.toml_table import TomlContext, no_extra
from pipeline.rewrite.xml_element import Element, XmlContext, bool_attr, check_attrs, no_children

NAMES: tuple[str, ...] = ("path",)

_PATH_OPTIONS = ("from", "to", "on", "color", "inertia", "longest", "edges")
_PATH_ATTRS = {"from", "to", "on", "color", "inertia", "longest", "edges"}


@dataclass(frozen=True)
class PathNode(Node):
    """`path`: a shortest path from a `from` cell to a `to` cell over `on` cells, drawn in `color`."""

    start: int  # bit sets of values
    finish: int
    on: int
    color: int  # value index
    inertia: bool = False
    longest: bool = False
    edges: bool = False


def read_toml(data: dict[str, Any], ctx: TomlContext) -> PathNode:
    """A path node from its table."""
    no_extra(data, ("path",), ctx.where)
    return _parse_path(data["path"], ctx.alphabet, ctx.key("path"))


def _parse_path(body: Any, alphabet: Alphabet, where: str) -> PathNode:
    if not isinstance(body, dict):
        raise ProgramError(where, 'must be a table such as { from = "R", to = "W", on = "B" }')
    no_extra(body, _PATH_OPTIONS, where)
    for key in ("from", "to", "on"):
        if not isinstance(body.get(key), str) or not body[key]:
            raise ProgramError(f"{where}.{key}", "is required: a string of values")
    flags = {}
    for key in ("inertia", "longest", "edges"):
        flags[key] = body.get(key, False)
        if not isinstance(flags[key], bool):
            raise ProgramError(f"{where}.{key}", "must be true or false")
    if set(body["from"]) <= set(body["to"]):
        # MarkovJunior draws from a start cell that is not a goal: with none, the node never runs.
        raise ProgramError(f"{where}.from", f"every value of from ({body['from']!r}) is also in to ({body['to']!r}): a path starts at a from cell that is not a to cell, so none would be drawn")
    color = body.get("color", body["from"][0])
    try:
        return PathNode(
            start=alphabet.waves(body["from"]),
            finish=alphabet.waves(body["to"]),
            on=alphabet.waves(body["on"]),
            color=alphabet.value(color) if isinstance(color, str) and len(color) == 1 else _bad_color(color),
            **flags,
        )
    except ValueError as exc:
        raise ProgramError(where, str(exc)) from None


def _bad_color(color: Any) -> int:
    raise ValueError(f"color must be one value character (got {toml_text(color)})")


def read_xml(el: Element, ctx: XmlContext) -> PathNode:
    """A path node from its element."""
    check_attrs(el, _PATH_ATTRS | ctx.root_attrs)
    no_children(el)
    return _path(el, ctx.grid.alphabet)


def _path(el: Element, alphabet: Alphabet) -> PathNode:
    where = f"line {el.line}"
    for key in ("from", "to", "on"):
        if not el.attrs.get(key):
            raise ProgramError(where, f"<path> needs {key}")
    try:
        return PathNode(
            start=alphabet.waves(el.attrs["from"]),
            finish=alphabet.waves(el.attrs["to"]),
            on=alphabet.waves(el.attrs["on"]),
            color=alphabet.value(el.attrs.get("color", el.attrs["from"][0])),
            inertia=bool_attr(el, "inertia"),
            longest=bool_attr(el, "longest"),
            edges=bool_attr(el, "edges"),
        )
    except ValueError as exc:
        raise ProgramError(where, str(exc)) from None


def flatten(node: PathNode, k: int, rows: FlatRows, visit: Visit) -> None:
    """Node k's row: its path parameters."""
    rows.kinds[k] = PATH
    flags = (
        (path_node.INERTIA if node.inertia else 0)
        | (path_node.LONGEST if node.longest else 0)
        | (path_node.EDGES if node.edges else 0)
    )
    rows.paths[k] = [node.start, node.finish, node.on, node.color, flags]
