"""MarkovJunior model files (`.xml`), so that published 2D models run unchanged.

Everything the engine does not implement (3D, fields, observations, search, `map`, `wfc`, ...)
is refused with its name and line, never skipped: a model that silently lost a node would run
and produce something else.
"""

from __future__ import annotations

import xml.parsers.expat
from dataclasses import dataclass, field

from pipeline.rewrite import symmetry
from pipeline.rewrite.kinds import BRANCH_KINDS, NODE_KINDS, RULE_KINDS
from pipeline.rewrite.program import Field, make_field, BranchNode, Node, Origin, PathNode, Program, RuleNode
from pipeline.rewrite.rule import Alphabet, Rule, parse_rule
from pipeline.rewrite.toml_form import ProgramError

# Attributes the reference reads but that change nothing in 2D (`d` marks a node's dimension;
# `comment` is documentation; `vertices` adds 3D diagonals to paths).
_IGNORED = {"comment", "d", "vertices"}
_ROOT = {"values", "origin", "symmetry"}
_RULE_ATTRS = {"in", "out", "p", "symmetry"}
_RULE_NODE_ATTRS = {"steps", "symmetry", "in", "out", "p", "temperature"}
_FIELD_ATTRS = {"for", "on", "to", "from", "recompute", "essential"}
_PATH_ATTRS = {"from", "to", "on", "color", "inertia", "longest", "edges"}
_UNSUPPORTED_NODES = {
    "map": "map nodes (grids of another size)",
    "convolution": "convolution nodes",
    "convchain": "convchain nodes",
    "wfc": "wave function collapse nodes",
    "observe": "observations (constraint solving)",
}
_UNSUPPORTED_ATTRS = {
    "search": "search (needs observations)",
    "limit": "limit (needs search)",
    "depthCoefficient": "depthCoefficient (needs search)",
    "fin": "rule patterns from image files",
    "fout": "rule patterns from image files",
    "file": "rule patterns from image files",
    "legend": "rule patterns from image files",
    "folder": "rule patterns from image files",
    "transparent": "transparent (a 3D rendering option)",
}


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    line: int
    children: list[Element] = field(default_factory=list)


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


def load_model(text: str) -> Program:
    """A Program from a MarkovJunior model file's text."""
    root = parse_xml(text)
    where = f"line {root.line}"
    values = root.attrs.get("values")
    if values is None:
        raise ProgramError(where, f"<{root.tag}> needs a values attribute (the grid's symbols)")
    unions: list[tuple[str, str]] = []
    _collect_unions(root, unions)
    try:
        alphabet = Alphabet(values.replace(" ", ""), tuple(unions))
    except ValueError as exc:
        raise ProgramError(where, str(exc)) from None
    origin: Origin = "none"
    if "origin" in root.attrs:
        name = root.attrs["origin"].lower()
        # Older models write origin="True" for what is now origin="Center".
        if name in ("center", "true"):
            origin = "center"
        elif name == "random":
            origin = "random"
        elif name != "false":
            raise ProgramError(where, f"unknown origin {root.attrs['origin']!r} (Center or Random)")
    group = _symmetry(root, symmetry.DEFAULT)
    return Program(alphabet, _node(root, alphabet, group, is_root=True), origin)


def _collect_unions(el: Element, out: list[tuple[str, str]]) -> None:
    for child in el.children:
        if child.tag == "union":
            _check_attrs(child, {"symbol", "values"})
            sym, vals = child.attrs.get("symbol"), child.attrs.get("values")
            if sym is None or vals is None:
                raise ProgramError(f"line {child.line}", "<union> needs symbol and values")
            out.append((sym, vals))
        elif child.tag in BRANCH_KINDS:
            _collect_unions(child, out)


def _node(el: Element, alphabet: Alphabet, group: str, is_root: bool = False) -> Node:
    where = f"line {el.line}"
    if el.tag in _UNSUPPORTED_NODES:
        raise ProgramError(where, f"<{el.tag}>: {_UNSUPPORTED_NODES[el.tag]} are not supported")
    root_attrs = _ROOT if is_root else set()
    group = _symmetry(el, group)
    if el.tag in BRANCH_KINDS:
        _check_attrs(el, {"symmetry"} | root_attrs)
        kids = [c for c in el.children if c.tag != "union"]
        if not kids:
            raise ProgramError(where, f"<{el.tag}> has no child nodes")
        return BranchNode(el.tag, tuple(_node(c, alphabet, group) for c in kids))  # type: ignore[arg-type]
    if el.tag == "path":
        _check_attrs(el, _PATH_ATTRS | root_attrs)
        _no_children(el)
        return _path(el, alphabet)
    if el.tag in RULE_KINDS:
        _check_attrs(el, _RULE_NODE_ATTRS | root_attrs)
        rule_elements = [c for c in el.children if c.tag == "rule"]
        for c in el.children:
            if c.tag not in ("rule", "field"):
                if c.tag in _UNSUPPORTED_NODES:
                    raise ProgramError(f"line {c.line}", f"<{c.tag}>: {_UNSUPPORTED_NODES[c.tag]} are not supported")
                raise ProgramError(f"line {c.line}", f"unexpected <{c.tag}> inside <{el.tag}> (rules are <rule in=... out=...>)")
        if rule_elements and ("in" in el.attrs or "out" in el.attrs):
            raise ProgramError(where, f"<{el.tag}> has both in/out attributes and <rule> children")
        rules: list[Rule] = []
        for rel in rule_elements or [el]:
            if rel is not el:
                _check_attrs(rel, _RULE_ATTRS)
                _no_children(rel)
            rules.extend(_rule(rel, alphabet, _symmetry(rel, group) if rel is not el else group))
        steps = _int(el, "steps", 0)
        fields = tuple(_field(c, alphabet) for c in el.children if c.tag == "field")
        temperature = _float(el, "temperature", 0.0)
        return RuleNode(el.tag, tuple(rules), steps, fields, temperature)  # type: ignore[arg-type]
    raise ProgramError(where, f"unknown node <{el.tag}> (supported: {', '.join(NODE_KINDS)})")


def _rule(el: Element, alphabet: Alphabet, group: str) -> list[Rule]:
    where = f"line {el.line}"
    if "in" not in el.attrs or "out" not in el.attrs:
        raise ProgramError(where, f"<{el.tag}> needs in and out patterns")
    try:
        p = float(el.attrs.get("p", "1"))
        return parse_rule(el.attrs["in"], el.attrs["out"], alphabet, p).variants(group)
    except ValueError as exc:
        raise ProgramError(where, str(exc)) from None


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
            inertia=_bool(el, "inertia"),
            longest=_bool(el, "longest"),
            edges=_bool(el, "edges"),
        )
    except ValueError as exc:
        raise ProgramError(where, str(exc)) from None


def _field(el: Element, alphabet: Alphabet) -> Field:
    """`<field for="R" on="B" to="W"/>` (or `from=` instead of `to=`, counting the other way)."""
    _check_attrs(el, _FIELD_ATTRS)
    _no_children(el)
    where = f"line {el.line}"
    for key in ("for", "on"):
        if not el.attrs.get(key):
            raise ProgramError(where, f"<field> needs {key}")
    if ("from" in el.attrs) == ("to" in el.attrs):
        raise ProgramError(where, "<field> needs exactly one of to (distances from those cells) and from (inversed)")
    try:
        return make_field(
            alphabet, el.attrs["for"], el.attrs["on"], el.attrs.get("to", el.attrs.get("from", "")),
            inversed="from" in el.attrs, recompute=_bool(el, "recompute"), essential=_bool(el, "essential"),
        )
    except ValueError as exc:
        raise ProgramError(where, str(exc)) from None


def _float(el: Element, name: str, default: float) -> float:
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


def _symmetry(el: Element, inherited: str) -> str:
    name = el.attrs.get("symmetry")
    if name is None:
        return inherited
    try:
        return symmetry.check(name)
    except ValueError as exc:
        raise ProgramError(f"line {el.line}", str(exc)) from None


def _check_attrs(el: Element, allowed: set[str]) -> None:
    for name in el.attrs:
        if name in allowed or name in _IGNORED:
            continue
        if name in _UNSUPPORTED_ATTRS:
            raise ProgramError(f"line {el.line}", f"<{el.tag} {name}=...>: {_UNSUPPORTED_ATTRS[name]} is not supported")
        raise ProgramError(f"line {el.line}", f"<{el.tag}> has an unknown attribute {name!r} (known: {', '.join(sorted(allowed))})")


def _no_children(el: Element) -> None:
    for c in el.children:
        if c.tag in _UNSUPPORTED_NODES:
            raise ProgramError(f"line {c.line}", f"<{c.tag}>: {_UNSUPPORTED_NODES[c.tag]} are not supported")
        raise ProgramError(f"line {c.line}", f"unexpected <{c.tag}> inside <{el.tag}>")


def _int(el: Element, name: str, default: int) -> int:
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


def _bool(el: Element, name: str) -> bool:
    text = el.attrs.get(name, "false").lower()
    if text not in ("true", "false"):
        raise ProgramError(f"line {el.line}", f"{name}={el.attrs[name]!r} must be True or False")
    return text == "true"
