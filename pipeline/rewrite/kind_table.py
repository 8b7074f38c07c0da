"""The node kinds of a rule program, in one table: the names the TOML and XML readers accept,
each with the unit (kinds/) that reads its table or element and flattens it. The codes the
compiled interpreter dispatches on are in codes.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from pipeline.rewrite.flat import FlatRows, Visit
from pipeline.rewrite.kinds import branches, convchain, convolution, path, rules, wfc
from pipeline.rewrite.kinds import map as map_kind
from pipeline.rewrite.node import Node
from pipeline.rewrite.toml_table import TomlContext
from pipeline.rewrite.xml_element import Element, XmlContext


@dataclass(frozen=True)
class KindUnit:
    """What a node kind does: `node` is its data class; `read_toml` reads its table (which
    holds its name as a key), `read_xml` its element (tagged with its name), and `flatten`
    writes its row (node, its number, the rows, and how to number its children)."""

    node: type[Node]
    read_toml: Callable[[dict[str, Any], TomlContext], Node]
    read_xml: Callable[[Element, XmlContext], Node]
    flatten: Callable[[Any, int, FlatRows, Visit], None]


def _unit(module: Any, node: type[Node]) -> KindUnit:
    return KindUnit(node, module.read_toml, module.read_xml, module.flatten)


_RULES = _unit(rules, rules.RuleNode)
_BRANCHES = _unit(branches, branches.BranchNode)
# Every name of each unit, in the order messages list them: nodes that rewrite with rules, nodes
# that run other nodes, the rest, and the nodes that make a new grid.
KINDS: dict[str, KindUnit] = {
    "one": _RULES,
    "all": _RULES,
    "prl": _RULES,
    "markov": _BRANCHES,
    "sequence": _BRANCHES,
    "path": _unit(path, path.PathNode),
    "convolution": _unit(convolution, convolution.ConvolutionNode),
    "convchain": _unit(convchain, convchain.ConvChainNode),
    "map": _unit(map_kind, map_kind.MapNode),
    "wfc": _unit(wfc, wfc.WfcNode),
}
NODE_KINDS: tuple[str, ...] = tuple(KINDS)
BRANCH_KINDS: tuple[str, ...] = branches.NAMES

_BY_TYPE: dict[type, KindUnit] = {unit.node: unit for unit in KINDS.values()}


def unit_of(node: Node) -> KindUnit:
    """The unit of a node's kind."""
    return _BY_TYPE[type(node)]
