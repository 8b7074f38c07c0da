"""The TOML form of a convolution node (nodes/convolution_node.py says what it does):

    { convolution = [ { rule = "A=D", values = "D", sum = "5..8" }, { rule = "D=A", values = "A", sum = "6..8" } ],
      neighborhood = "Moore", periodic = true, steps = 10 }

`convolution` holds a rule or a list of rules, tried in order for each cell. A rule is `"IN=OUT"`
(one value each side: it fires whatever the neighbours are) or a table with `rule`, and
optionally `values` (the values whose neighbours are counted) with `sum` (the counts that fire
it: `"5..8"`, `"0,1,4..8"` or a number) and `p`. `neighborhood` is `"Moore"` (8 neighbours) or
`"VonNeumann"` (4); `periodic` wraps the grid's edges; `steps` limits the node to that many steps.
"""

from __future__ import annotations

from typing import Any

from pipeline.errors import toml_text
from pipeline.rewrite.nodes.convolution_node import NEIGHBORHOODS
from pipeline.rewrite.program import ConvolutionNode, ConvolutionRule, make_convolution_rule
from pipeline.rewrite.rule import Alphabet
from pipeline.rewrite.toml_form import ProgramError, no_extra, probability

_NODE_OPTIONS = ("convolution", "neighborhood", "periodic", "steps")
_RULE_OPTIONS = ("rule", "values", "sum", "p")


def parse_convolution(data: dict[str, Any], alphabet: Alphabet, where: str) -> ConvolutionNode:
    """A ConvolutionNode from its table; `where` names the table in errors."""
    no_extra(data, _NODE_OPTIONS, where)
    here = f"{where}." if where else ""
    neighborhood = data.get("neighborhood")
    if neighborhood not in NEIGHBORHOODS:
        raise ProgramError(f"{here}neighborhood", f"must be {' or '.join(map(repr, NEIGHBORHOODS))} (got {toml_text(neighborhood)})")
    periodic = data.get("periodic", False)
    if not isinstance(periodic, bool):
        raise ProgramError(f"{here}periodic", f"must be true or false (got {toml_text(periodic)})")
    steps = data.get("steps", 0)
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
        raise ProgramError(f"{here}steps", f"must be a whole number >= 0, 0 for no limit (got {toml_text(steps)})")
    body = data["convolution"]
    items = body if isinstance(body, list) else [body]
    if not items:
        raise ProgramError(f"{here}convolution", "needs at least one rule")
    rules = tuple(
        _rule(item, alphabet, f"{here}convolution[{i}]" if isinstance(body, list) else f"{here}convolution")
        for i, item in enumerate(items)
    )
    return ConvolutionNode(rules, neighborhood, periodic, steps)


def _rule(item: Any, alphabet: Alphabet, where: str) -> ConvolutionRule:
    values = sums = None
    p = 1.0
    if isinstance(item, dict):
        no_extra(item, _RULE_OPTIONS, where)
        if "rule" not in item:
            raise ProgramError(where, 'a rule table needs `rule = "IN=OUT"`')
        values = item.get("values")
        if values is not None and not isinstance(values, str):
            raise ProgramError(f"{where}.values", f"must be a string of values (got {toml_text(values)})")
        sums = item.get("sum")
        if isinstance(sums, int) and not isinstance(sums, bool):
            sums = str(sums)
        if sums is not None and not isinstance(sums, str):
            raise ProgramError(f"{where}.sum", f'must be counts such as "5..8" or "0,1,4..8" (got {toml_text(sums)})')
        p = probability(item.get("p", 1.0), f"{where}.p")
        item = item["rule"]
    if not isinstance(item, str) or item.count("=") != 1:
        raise ProgramError(where, f'a convolution rule is "IN=OUT" or a table {{ rule = "IN=OUT", values = "A", sum = "5..8" }} (got {toml_text(item)})')
    inp, out = (side.strip() for side in item.split("="))
    try:
        return make_convolution_rule(alphabet, inp, out, values, sums, p)
    except ValueError as exc:
        raise ProgramError(where, str(exc)) from None
