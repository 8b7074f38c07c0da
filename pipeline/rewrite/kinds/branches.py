"""The branch nodes `markov` and `sequence` (MarkovJunior's MarkovNode and SequenceNode), which
run other nodes: a markov node runs, each step, the first child that applies, and fails when
none does; a sequence runs each child until it fails, then the next, and fails after the last.
Their data, their TOML form `{ markov = [...] }` (with an optional `symmetry`), their XML form
`<markov>...</markov>`, and their rows in the flattened program; machine.py runs them itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pipeline.rewrite.codes import MARKOV, SEQUENCE
from pipeline.rewrite.flat import FlatRows, Visit
from pipeline.rewrite.kinds.map import MapNode
from pipeline.rewrite.kinds.wfc import WFC_LAST, WfcNode
from pipeline.rewrite.node import Node
from pipeline.rewrite.program_error import ProgramError
from pipeline.rewrite.toml_table import TomlContext, no_extra
from pipeline.rewrite.xml_element import Element, XmlContext, check_attrs

NAMES: tuple[str, ...] = ("markov", "sequence")
BranchKind = Literal["markov", "sequence"]
_CODES = {"markov": MARKOV, "sequence": SEQUENCE}


@dataclass(frozen=True)
class BranchNode(Node):
    """`markov` or `sequence` over `children`."""

    kind: BranchKind
    children: tuple[Node, ...]


def read_toml(data: dict[str, Any], ctx: TomlContext) -> BranchNode:
    """A branch from its table: its children read with the branch's symmetry."""
    kind = next(k for k in NAMES if k in data)
    here = ctx.key(kind)
    no_extra(data, (kind, "symmetry"), ctx.where)
    body = data[kind]
    if not isinstance(body, list) or not body:
        raise ProgramError(here, "must be a non-empty list of nodes")
    nodes = tuple(ctx.child(child, ctx.alphabet, ctx.group, f"{here}[{i}]") for i, child in enumerate(body))
    for i, node in enumerate(nodes[:-1]):
        if isinstance(node, WfcNode):
            raise ProgramError(f"{here}[{i}]", "a wfc node must be the last of its branch (after a failed collapse MarkovJunior goes on with the nodes after it, which this engine does not)")
        if isinstance(node, MapNode):
            # The run goes on with the map's `then` on the new grid, never back to this branch.
            raise ProgramError(f"{here}[{i}]", "a map node must be the last of its branch: the nodes after it would never run; put them in its `then`")
    return BranchNode(kind, nodes)  # type: ignore[arg-type]


def read_xml(el: Element, ctx: XmlContext) -> BranchNode:
    """A branch from its element: its children (but `<union>`s, which are its grid's)."""
    where = f"line {el.line}"
    check_attrs(el, {"symmetry"} | ctx.root_attrs)
    kids = [c for c in el.children if c.tag != "union"]
    if not kids:
        raise ProgramError(where, f"<{el.tag}> has no child nodes")
    nodes = tuple(ctx.child(c, ctx.grid, ctx.group) for c in kids)
    for c, node in zip(kids[:-1], nodes[:-1]):
        if isinstance(node, WfcNode):
            raise ProgramError(f"line {c.line}", WFC_LAST)
    return BranchNode(el.tag, nodes)  # type: ignore[arg-type]


def flatten(node: BranchNode, k: int, rows: FlatRows, visit: Visit) -> None:
    """Node k's row, then its children's subtrees after it."""
    rows.kinds[k] = _CODES[node.kind]
    for child in node.children:
        rows.kids[k].append(visit(child, k))
