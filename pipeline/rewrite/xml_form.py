"""MarkovJunior model files (`.xml`), so that published 2D models run unchanged.

Every node kind of MarkovJunior's 2D language is read. What the engine does not implement (3D
options such as `transparent`, 3D tilesets) is refused with its name and line, never skipped: a
model that silently lost a part would run and produce something else. Rules drawn as images
(`file`, `fin`, `fout`) are read through a resource reader (see `resources`), from `rules/[<folder>/]<name>.png` as MarkovJunior finds them.
This module reads the model's root (its grid) and what every node has (its tag, its
`symmetry`); the kind's unit in kinds/, found in kind_table.KINDS, reads the rest.
"""

from __future__ import annotations

from pipeline.rewrite import symmetry
from pipeline.rewrite.kind_table import BRANCH_KINDS, KINDS, NODE_KINDS
from pipeline.rewrite.node import Node
from pipeline.rewrite.program import Origin, Program
from pipeline.rewrite.program_error import ProgramError
from pipeline.rewrite.resources import ResourceReader
from pipeline.rewrite.rule import Alphabet
from pipeline.rewrite.xml_element import Element, Grid, XmlContext, collect_unions, parse_xml, symmetry_of

# `folder` is a grid's: the reference reads it on the root element only (and on `map`, which
# makes a grid of its own), for every rule image of the model.
_ROOT = frozenset({"values", "origin", "symmetry", "folder"})


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
    collect_unions(root, BRANCH_KINDS, unions)
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
    group = symmetry_of(root, symmetry.DEFAULT)
    reading = Grid(alphabet, root.attrs.get("folder"), read_resource)
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


def _node(el: Element, grid: Grid, group: str, is_root: bool = False) -> Node:
    group = symmetry_of(el, group)
    unit = KINDS.get(el.tag)
    if unit is None:
        raise ProgramError(f"line {el.line}", f"unknown node <{el.tag}> (supported: {', '.join(NODE_KINDS)})")
    return unit.read_xml(el, XmlContext(grid, group, _ROOT if is_root else frozenset(), _node, BRANCH_KINDS))
