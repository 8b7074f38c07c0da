"""MarkovJunior model files (`.xml`), so that published 2D models run unchanged.

Every node kind of MarkovJunior's 2D language is read. What the engine does not implement (3D
options such as `transparent`, 3D tilesets) is refused with its name and line, never skipped: a
model that silently lost a part would run and produce something else. Rules drawn as images
(`file`, `fin`, `fout`) are read through a resource reader (see `resources`), from `rules/[<folder>/]<name>.png` as MarkovJunior finds them.
"""

from __future__ import annotations

import xml.parsers.expat
from dataclasses import dataclass, field

import numpy as np

from pipeline.rewrite import symmetry
from pipeline.rewrite.convchain import make_convchain
from pipeline.rewrite.kinds import BRANCH_KINDS, NODE_KINDS, RULE_KINDS
from pipeline.rewrite.program import (
    PRL_UNSTEERED, BranchNode, Field, MapNode, Node, Observe, Origin, PathNode, Program, RuleNode, WfcNode, make_field, make_map_rule, make_observe,
)
from pipeline.rewrite.resources import ResourceError, ResourceReader
from pipeline.rewrite.rule import KEEP, Alphabet, Rule, parse_pattern, parse_rule
from pipeline.rewrite.rule_image import ImageError, LegendImage, input_waves, output_values, read_image
from pipeline.rewrite.toml_form import ProgramError
from pipeline.rewrite.wfc import build as wfc_build
from pipeline.rewrite.wfc.overlap import OverlapModel
from pipeline.rewrite.wfc.tiles import Tileset

# Attributes that change nothing in a 2D run of the supported nodes: `d` marks a node's
# dimension and `comment` is documentation (the reference never reads either on a node);
# `vertices` adds 3D diagonals to paths; `periodic` is read only by convolution and wfc nodes
# (convchain always wraps), so anywhere else the reference ignores it.
_IGNORED = {"comment", "d", "vertices", "periodic"}
# `folder` is a grid's: the reference reads it on the root element only (and on `map`, which
# makes a grid of its own), for every rule image of the model.
_ROOT = {"values", "origin", "symmetry", "folder"}
_PATTERN_ATTRS = {"in", "out", "fin", "fout", "file", "legend"}
_RULE_ATTRS = {"p", "symmetry"} | _PATTERN_ATTRS
_RULE_NODE_ATTRS = {"steps", "symmetry", "p", "temperature", "search", "limit", "depthCoefficient"} | _PATTERN_ATTRS
_FIELD_ATTRS = {"for", "on", "to", "from", "recompute", "essential"}
_OBSERVE_ATTRS = {"value", "from", "to"}
_PATH_ATTRS = {"from", "to", "on", "color", "inertia", "longest", "edges"}
# After a wfc node that collapsed, nothing of its branch runs (the program ends with its
# children); after one that failed, the reference runs its next siblings in the same step, which
# a handover to a new grid cannot do here. Refused rather than run differently.
WFC_LAST = "<wfc> must be the last node of its branch (after a failed collapse MarkovJunior goes on with the nodes after it, which this engine does not)"
_MAP_ATTRS = {"scale", "values", "symmetry", "folder"}
_MAP_RULE_ATTRS = {"in", "out", "symmetry", "p"}  # p is read and unused, as in the reference
_CONVCHAIN_ATTRS = {"sample", "on", "black", "white", "n", "temperature", "steps", "symmetry"}
_UNSUPPORTED_ATTRS = {
    "folder": "folder on this node (MarkovJunior reads it only where a grid is made: on the model's root element and on map and wfc nodes)",
    "transparent": "transparent (a 3D rendering option)",
}


@dataclass(frozen=True)
class _Reading:
    """What every node of one model reads with: its alphabet and where its rule images are."""

    alphabet: Alphabet
    folder: str | None  # the grid's `folder` (the root's, a map's or a wfc's): rules/<folder>/<name>.png
    read: ResourceReader | None
    lines_3d: list[int] = field(default_factory=list)  # lines of 3D rules, which never match a 2D grid


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


def load_model(text: str, read_resource: ResourceReader | None = None) -> Program:
    """A Program from a MarkovJunior model file's text. `read_resource` gives the bytes of a
    resource file by its path in the resources folder (`rules/Chip.png`); without one, a model
    with rule images is refused (inline models in tests need none)."""
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
        if origin != "none" and len(alphabet.values) < 2:
            raise ProgramError(where, f"origin puts the second of the values in the grid, and values={values!r} has one")
    group = _symmetry(root, symmetry.DEFAULT)
    reading = _Reading(alphabet, root.attrs.get("folder"), read_resource)
    node = _node(root, reading, group, is_root=True)
    lines = sorted(set(reading.lines_3d))
    warnings = ()
    if lines:
        at = f"line {lines[0]}" if len(lines) == 1 else f"lines {lines[0]}, {lines[1]}{', ...' if len(lines) > 2 else ''}"
        warnings = (
            f"{at}: {'a 3D rule' if len(lines) == 1 else '3D rules'} (layers separated by spaces) never"
            f" {'matches' if len(lines) == 1 else 'match'} a 2D grid, as in MarkovJunior's 2D runs, and only 2D grids run here:"
            " a model made for 3D (d=\"3\" in models.xml) runs without them",
        )
    return Program(alphabet, node, origin, warnings)


def _collect_unions(el: Element, out: list[tuple[str, str]]) -> None:
    for child in el.children:
        if child.tag == "union":
            check_attrs(child, {"symbol", "values"})
            sym, vals = child.attrs.get("symbol"), child.attrs.get("values")
            if sym is None or vals is None:
                raise ProgramError(f"line {child.line}", "<union> needs symbol and values")
            out.append((sym, vals))
        elif child.tag in BRANCH_KINDS:
            _collect_unions(child, out)


def _node(el: Element, reading: _Reading, group: str, is_root: bool = False) -> Node:
    where = f"line {el.line}"
    root_attrs = _ROOT if is_root else set()
    group = _symmetry(el, group)
    if el.tag in BRANCH_KINDS:
        check_attrs(el, {"symmetry"} | root_attrs)
        kids = [c for c in el.children if c.tag != "union"]
        if not kids:
            raise ProgramError(where, f"<{el.tag}> has no child nodes")
        nodes = tuple(_node(c, reading, group) for c in kids)
        for c, node in zip(kids[:-1], nodes[:-1]):
            if isinstance(node, WfcNode):
                raise ProgramError(f"line {c.line}", WFC_LAST)
        return BranchNode(el.tag, nodes)  # type: ignore[arg-type]
    if el.tag == "map":
        check_attrs(el, _MAP_ATTRS | root_attrs)
        return _map(el, reading, group)
    if el.tag == "path":
        check_attrs(el, _PATH_ATTRS | root_attrs)
        no_children(el)
        return _path(el, reading.alphabet)
    if el.tag == "convolution":
        # Imported here: that module reads with this one's helpers.
        from pipeline.rewrite.xml_convolution import read_convolution

        return read_convolution(el, reading.alphabet, root_attrs)
    if el.tag == "convchain":
        check_attrs(el, _CONVCHAIN_ATTRS | root_attrs)
        no_children(el)
        return _convchain(el, reading, group)
    if el.tag in RULE_KINDS:
        check_attrs(el, _RULE_NODE_ATTRS | root_attrs)
        rule_elements = [c for c in el.children if c.tag == "rule"]
        for c in el.children:
            if c.tag not in ("rule", "field", "observe"):
                raise ProgramError(f"line {c.line}", f"unexpected <{c.tag}> inside <{el.tag}> (rules are <rule in=... out=...>)")
        on_node = sorted(_PATTERN_ATTRS & set(el.attrs))
        if rule_elements and on_node:
            # The reference reads patterns (and a legend) from the <rule> children only.
            raise ProgramError(where, f"<{el.tag}> has both {on_node[0]}= and <rule> children (patterns go on the rules)")
        rules: list[Rule] = []
        for rel in rule_elements or [el]:
            if rel is not el:
                check_attrs(rel, _RULE_ATTRS)
                no_children(rel)
            rules.extend(_rule(rel, reading, _symmetry(rel, group) if rel is not el else group))
        steps = int_attr(el, "steps", 0)
        fields = tuple(_field(c, reading.alphabet) for c in el.children if c.tag == "field")
        temperature = float_attr(el, "temperature", 0.0)
        observes = tuple(_observe(c, reading.alphabet) for c in el.children if c.tag == "observe")
        if el.tag == "prl" and (fields or observes):
            raise ProgramError(where, f"<prl> has <{'field' if fields else 'observe'}>: {PRL_UNSTEERED}")
        if not observes:
            # The reference reads search, limit and depthCoefficient only beside observations.
            return RuleNode(el.tag, tuple(rules), steps, fields, temperature)  # type: ignore[arg-type]
        return RuleNode(el.tag, tuple(rules), steps, fields, temperature, observes, *_search(el))  # type: ignore[arg-type]
    if el.tag == "wfc":
        if is_root:
            raise ProgramError(where, "<wfc> makes a grid from the one before it, so it cannot be the model's root (put it in a <sequence>)")
        return _wfc(el, reading, group)
    raise ProgramError(where, f"unknown node <{el.tag}> (supported: {', '.join(NODE_KINDS)})")


_WFC_ATTRS = {"values", "sample", "tileset", "tiles", "n", "periodic", "periodicInput", "shannon", "tries", "symmetry", "overlap", "folder"}


def _wfc(el: Element, reading: _Reading, group: str) -> WfcNode:
    """`<wfc sample="Flowers" n="3" values="..."><rule in="B" out="N|g"/>...</wfc>` (overlapping),
    or `<wfc tileset="Knots2D" [tiles="Knots2D/sub"] values="...">` (tiled; the rules' outputs
    are tile names); the other children are nodes run on the new grid."""
    where = f"line {el.line}"
    check_attrs(el, _WFC_ATTRS)
    if ("sample" in el.attrs) == ("tileset" in el.attrs):
        raise ProgramError(where, "<wfc> needs exactly one of sample (overlapping model) and tileset (tiled model)")
    if "values" not in el.attrs:
        raise ProgramError(where, "<wfc> needs a values attribute (the symbols of the grid it makes)")
    unions: list[tuple[str, str]] = []
    _collect_unions(el, unions)
    try:
        alphabet = Alphabet(el.attrs["values"].replace(" ", ""), tuple(unions))
    except ValueError as exc:
        raise ProgramError(where, f"values: {exc}") from None
    group = _symmetry(el, group)
    rule_elements = [rel for rel in el.children if rel.tag == "rule"]
    for rel in rule_elements:
        check_attrs(rel, {"in", "out"})
        no_children(rel)
    no_reader = "no resources folder to read it from (load the model through the rewrite stage)"
    try:
        model: OverlapModel | Tileset
        if "sample" in el.attrs:
            periodic_input = bool_attr(el, "periodicInput", True)
            model = wfc_build.overlap_model(reading.read, el.attrs["sample"], alphabet.values, int_attr(el, "n", 3), group, periodic_input, no_reader)
            # The reference reads the first character of each alternative.
            outs = [[name[:1] for name in rel.attrs.get("out", "").split("|")] for rel in rule_elements]
            n, periodic = model.n, True  # the reference's overlapping wave always wraps
        else:
            model = wfc_build.tiled_model(reading.read, el.attrs["tileset"], el.attrs.get("tiles"), alphabet.values, no_reader)
            outs = [rel.attrs.get("out", "").split("|") for rel in rule_elements]
            n, periodic = 1, bool_attr(el, "periodic")
        start = wfc_build.start_table(reading.alphabet, alphabet, model, [(rel.attrs.get("in", ""), out) for rel, out in zip(rule_elements, outs)])
        tries = int_attr(el, "tries", 1000)
        overlap = int_attr(el, "overlap", 0) if isinstance(model, Tileset) else 0
        wfc_build.check_counts(model, tries, overlap)
    except wfc_build.WfcError as exc:
        if exc.rule is not None:
            rel = rule_elements[exc.rule]
            raise ProgramError(f"line {rel.line}", f"<rule in={rel.attrs.get('in', '')!r} out={rel.attrs.get('out', '')!r}>: {exc.message}") from None
        raise ProgramError(where, f"<wfc {exc.key}=...>: {exc.message}") from None
    inner = _Reading(alphabet, el.attrs.get("folder"), reading.read, reading.lines_3d)
    kids = tuple(_node(c, inner, group) for c in el.children if c.tag not in ("rule", "union"))
    return WfcNode(alphabet, model, start, n, periodic, bool_attr(el, "shannon"), tries, kids, overlap)


def _rule(el: Element, reading: _Reading, group: str) -> list[Rule]:
    where = f"line {el.line}"
    attrs = el.attrs
    if "file" in attrs:
        both = [k for k in ("in", "out", "fin", "fout") if k in attrs]
        if both:
            raise ProgramError(where, f"<{el.tag}> has both file and {both[0]} (a file image holds the input and the output)")
    else:
        for text, image, side in (("in", "fin", "input"), ("out", "fout", "output")):
            if text in attrs and image in attrs:
                raise ProgramError(where, f"<{el.tag}> has both {text} and {image} for its {side}")
            if text not in attrs and image not in attrs:
                raise ProgramError(where, f"<{el.tag}> needs in and out patterns (or fin/fout images, or a file image)")
    try:
        p = float(attrs.get("p", "1"))
    except ValueError:
        raise ProgramError(where, f"p={attrs['p']!r} is not a number") from None
    try:
        if "in" in attrs and "out" in attrs:
            rules, deep = _written_rule(attrs["in"], attrs["out"], reading.alphabet, p, group)
            if deep:
                reading.lines_3d.append(el.line)
            return rules
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p must be between 0 and 1 (got {p})")
        inp, out = _image_patterns(el, reading)
        if inp.shape != out.shape:
            raise ValueError(f"input is {inp.shape[1]}x{inp.shape[0]} but output is {out.shape[1]}x{out.shape[0]}")
        return Rule(inp, out, p).variants(group)
    except ValueError as exc:
        raise ProgramError(where, str(exc)) from None


def _written_rule(inp: str, out: str, alphabet: Alphabet, p: float, group: str) -> tuple[list[Rule], bool]:
    """A rule from in/out text, which may be 3D (layers separated by spaces); and whether it is."""
    layers_in, layers_out = inp.strip().split(" "), out.strip().split(" ")
    if len(layers_in) == 1 and len(layers_out) == 1:
        return parse_rule(inp, out, alphabet, p).variants(group), False
    if len(layers_in) != len(layers_out):
        raise ValueError(f"input {inp!r} has {len(layers_in)} layers but output {out!r} has {len(layers_out)}")
    # Each layer is checked as a 2D rule would be (symbols, rectangles, sizes), as the reference
    # refuses a bad 3D pattern even in a 2D run.
    layers = [parse_rule(i, o, alphabet, p) for i, o in zip(layers_in, layers_out)]
    if any(r.inp.shape != layers[0].inp.shape for r in layers):
        raise ValueError(f"pattern {inp!r} has layers of different sizes")
    # A 3D rule is deeper than a 2D grid (one cell deep), so the reference finds no place for it:
    # it loads and never matches. An input whose cells accept no value at all (every wave 0) is
    # such a rule here: scan_rule gives up at its first cell, and the incremental table of
    # (rule, cell) pairs by value lists none of its cells, so it is never listed as a match.
    # Its orientations would be more rules that never match, so it is kept once.
    shape = layers[0].inp.shape
    return [Rule(np.zeros(shape, dtype=np.int64), np.full(shape, KEEP, dtype=np.uint8), p)], True


def _image_patterns(el: Element, reading: _Reading) -> tuple[np.ndarray, np.ndarray]:
    """Input waves and output values of a rule with `file`, or `fin` and/or `fout` images."""
    attrs, alphabet = el.attrs, reading.alphabet
    legend = attrs.get("legend")
    if legend is None:
        key = next(k for k in ("file", "fin", "fout") if k in attrs)
        raise ValueError(f"{key}={attrs[key]!r} needs a legend: the characters its colours stand for, in the order they first appear")
    if "file" in attrs:
        path, image = _read_image(attrs["file"], legend, reading)
        if image.width % 2:
            raise ValueError(
                f"rule image {path} is {image.width} pixels wide: a file image is the input and the output side by side, "
                "so its width must be even"
            )
        half = image.width // 2
        # Both halves keep the numbering of the whole image: one colour, one character.
        left, right = image.columns(0, half), image.columns(half, image.width)
        return _side(path, left, legend, alphabet, output=False), _side(path, right, legend, alphabet, output=True)
    if "fin" in attrs:
        path, image = _read_image(attrs["fin"], legend, reading)
        inp = _side(path, image, legend, alphabet, output=False)
    else:
        rows = _flat_pattern(attrs["in"])
        inp = np.array([[alphabet.wave(c) for c in row] for row in rows], dtype=np.int64)
    if "fout" in attrs:
        path, image = _read_image(attrs["fout"], legend, reading)
        out = _side(path, image, legend, alphabet, output=True)
    else:
        rows = _flat_pattern(attrs["out"])
        out = np.array([[alphabet.value(c) for c in row] for row in rows], dtype=np.uint8)
    return inp, out


def _flat_pattern(text: str) -> list[str]:
    if " " in text.strip():
        # A 3D pattern against a 2D image: the reference refuses the sizes as not matching.
        raise ValueError(f"pattern {text!r} has layers (3D) but the other side of the rule is a 2D image")
    return parse_pattern(text)


def _read_image(name: str, legend: str, reading: _Reading) -> tuple[str, LegendImage]:
    path = f"rules/{reading.folder}/{name}.png" if reading.folder else f"rules/{name}.png"
    if reading.read is None:
        raise ValueError(f"rule image {path}: no resources folder to read it from (models with rule images load through the rewrite stage)")
    try:
        data = reading.read(path)
    except ResourceError as exc:
        raise ValueError(f"rule image {path}: {exc}") from None
    try:
        return path, read_image(data, legend)
    except ImageError as exc:
        raise ValueError(f"rule image {path} {exc}") from None


def _side(path: str, image: LegendImage, legend: str, alphabet: Alphabet, output: bool) -> np.ndarray:
    try:
        return output_values(image, legend, alphabet) if output else input_waves(image, legend, alphabet)
    except ImageError as exc:
        raise ValueError(f"rule image {path}: {exc}") from None


def _map(el: Element, reading: _Reading, group: str) -> MapNode:
    """`<map scale="2 2 1" values="DA">` with `<rule in=... out=...>` children (inputs in the
    current grid's values, outputs in the new grid's, of any size) and the nodes to run after."""
    where = f"line {el.line}"
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
    unions: list[tuple[str, str]] = []
    _collect_unions(el, unions)
    try:
        alphabet = Alphabet(el.attrs["values"].replace(" ", ""), tuple(unions))
    except ValueError as exc:
        raise ProgramError(where, str(exc)) from None
    rules: list[Rule] = []
    for rel in (c for c in el.children if c.tag == "rule"):
        check_attrs(rel, _MAP_RULE_ATTRS)
        no_children(rel)
        if "in" not in rel.attrs or "out" not in rel.attrs:
            raise ProgramError(f"line {rel.line}", "a map's <rule> needs in (old grid's values) and out (new grid's values)")
        rule_group = _symmetry(rel, group)
        try:
            rules.extend(make_map_rule(reading.alphabet, alphabet, rel.attrs["in"], rel.attrs["out"], rule_group))
        except ValueError as exc:
            raise ProgramError(f"line {rel.line}", str(exc)) from None
    # A map makes a grid of its own, whose rule images come from its own `folder` (none: rules/),
    # not the root's, as in the reference.
    inner = _Reading(alphabet, el.attrs.get("folder"), reading.read, reading.lines_3d)
    kids = [c for c in el.children if c.tag not in ("rule", "union")]
    children = tuple(_node(c, inner, group) for c in kids)
    return MapNode(alphabet, (factors[0], factors[1]), tuple(rules), children)


def _fraction(text: str) -> tuple[int, int]:
    num, _, den = text.partition("/")
    n, d = int(num), int(den or "1")
    if n < 1 or d < 1:
        raise ValueError(text)
    return n, d


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


def _convchain(el: Element, reading: _Reading, group: str) -> Node:
    """`<convchain sample="Maze" on="B" black="D" white="A" n="2" steps="10"/>`. Its patterns take
    every orientation of the node's symmetry (inherited unless it sets its own: the reference
    always inherits, and ignores the attribute)."""
    where = f"line {el.line}"
    for key in ("sample", "on", "black", "white"):
        if not el.attrs.get(key):
            raise ProgramError(where, f"<convchain> needs {key}")
    n, temperature, steps = int_attr(el, "n", 3), float_attr(el, "temperature", 1.0), int_attr(el, "steps", 0)
    try:
        return make_convchain(
            reading.alphabet, reading.read, el.attrs["sample"], el.attrs["on"], el.attrs["black"], el.attrs["white"],
            n, temperature, steps, group,
            "no resources folder to read it from (models with samples load through the rewrite stage)",
        )
    except ValueError as exc:
        raise ProgramError(where, str(exc)) from None


def _field(el: Element, alphabet: Alphabet) -> Field:
    """`<field for="R" on="B" to="W"/>` (or `from=` instead of `to=`, counting the other way)."""
    check_attrs(el, _FIELD_ATTRS)
    no_children(el)
    where = f"line {el.line}"
    for key in ("for", "on"):
        if not el.attrs.get(key):
            raise ProgramError(where, f"<field> needs {key}")
    if ("from" in el.attrs) == ("to" in el.attrs):
        raise ProgramError(where, "<field> needs exactly one of to (distances from those cells) and from (inversed)")
    try:
        return make_field(
            alphabet, el.attrs["for"], el.attrs["on"], el.attrs.get("to", el.attrs.get("from", "")),
            inversed="from" in el.attrs, recompute=bool_attr(el, "recompute"), essential=bool_attr(el, "essential"),
        )
    except ValueError as exc:
        raise ProgramError(where, str(exc)) from None


def _observe(el: Element, alphabet: Alphabet) -> Observe:
    """`<observe value="G" from="B" to="R"/>`: G cells are B now and must end R."""
    check_attrs(el, _OBSERVE_ATTRS)
    no_children(el)
    where = f"line {el.line}"
    for key in ("value", "to"):
        if not el.attrs.get(key):
            raise ProgramError(where, f"<observe> needs {key}")
    try:
        return make_observe(alphabet, el.attrs["value"], el.attrs.get("from"), el.attrs["to"])
    except ValueError as exc:
        raise ProgramError(where, str(exc)) from None


def _search(el: Element) -> tuple[bool, int, float]:
    """(search, limit, depthCoefficient) of an observing node; limit -1 is no cap, and a negative
    depthCoefficient makes the search depth first."""
    where = f"line {el.line}"
    searching = bool_attr(el, "search")
    if searching and el.tag not in ("one", "all"):
        raise ProgramError(where, f"<{el.tag} search=True>: search is supported on <one> and <all> nodes only")
    text = el.attrs.get("limit", "-1")
    try:
        limit = int(text)
    except ValueError:
        raise ProgramError(where, f"limit={text!r} is not a whole number") from None
    text = el.attrs.get("depthCoefficient", "0.5")
    try:
        depth_coefficient = float(text)
    except ValueError:
        raise ProgramError(where, f"depthCoefficient={text!r} is not a number") from None
    if depth_coefficient != depth_coefficient or abs(depth_coefficient) == float("inf"):
        raise ProgramError(where, "depthCoefficient must be a finite number")
    return searching, max(limit, -1), depth_coefficient


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


def _symmetry(el: Element, inherited: str) -> str:
    name = el.attrs.get("symmetry")
    if name is None:
        return inherited
    try:
        return symmetry.check(name)
    except ValueError as exc:
        raise ProgramError(f"line {el.line}", str(exc)) from None


def check_attrs(el: Element, allowed: set[str]) -> None:
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


def bool_attr(el: Element, name: str, default: bool = False) -> bool:
    text = el.attrs.get(name, "true" if default else "false").lower()
    if text not in ("true", "false"):
        raise ProgramError(f"line {el.line}", f"{name}={el.attrs[name]!r} must be True or False")
    return text == "true"
