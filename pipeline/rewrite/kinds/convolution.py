"""The `convolution` node (MarkovJunior's ConvolutionNode): a cellular automaton step, every cell
rewritten at once by the counts of values among its neighbours; `steps` limits it to that many
steps. Its data, its TOML and XML forms and its row in the flattened program; its kernel is
nodes/convolution_node.py. The TOML form:

    { convolution = [ { rule = "A=D", values = "D", sum = "5..8" }, { rule = "D=A", values = "A", sum = "6..8" } ],
      neighborhood = "Moore", periodic = true, steps = 10 }

`convolution` holds a rule or a list of rules, tried in order for each cell. A rule is `"IN=OUT"`
(one value each side: it fires whatever the neighbours are) or a table with `rule`, and
optionally `values` (the values whose neighbours are counted) with `sum` (the counts that fire
it: `"5..8"`, `"0,1,4..8"` or a number) and `p`. `neighborhood` is `"Moore"` (8 neighbours) or
`"VonNeumann"` (4); `periodic` wraps the grid's edges; `steps` limits the node to that many steps.

The XML form:

    <convolution neighborhood="Moore" periodic="True" steps="10">
      <rule in="A" out="D" values="D" sum="5..8"/>
      <rule in="D" out="A" values="A" sum="6..8" p="0.5"/>
    </convolution>

A node without `<rule>` children is its own single rule (`in`, `out`, `values`, `sum`, `p` on the
node), as in the reference; a rule without `values` and `sum` fires whatever the neighbours are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pipeline.errors import toml_text
from pipeline.rewrite.codes import CONVOLUTION
from pipeline.rewrite.flat import FlatRows, Visit
from pipeline.rewrite.node import Node
from pipeline.rewrite.nodes import convolution_node
from pipeline.rewrite.nodes.convolution_node import NEIGHBORHOODS
from pipeline.rewrite.program_error import ProgramError
from pipeline.rewrite.rule import Alphabet
from pipeline.rewrite.toml_table import TomlContext, no_extra, probability
from pipeline.rewrite.xml_element import Element, XmlContext, bool_attr, check_attrs, int_attr, no_children

NAMES: tuple[str, ...] = ("convolution",)

_NODE_OPTIONS = ("convolution", "neighborhood", "periodic", "steps")
_RULE_OPTIONS = ("rule", "values", "sum", "p")
_NODE_ATTRS = {"neighborhood", "periodic", "steps"}
_RULE_ATTRS = {"in", "out", "values", "sum", "p"}


@dataclass(frozen=True)
class ConvolutionRule:
    """Turn an `input` cell into `output`, with probability `p`, when the number of its neighbours
    holding any of `values` is one of `sums` (always, when `values` is empty)."""

    input: int  # value indices
    output: int
    values: tuple[int, ...] = ()  # a value listed twice counts twice, as in the reference
    sums: tuple[int, ...] = ()
    p: float = 1.0


def make_convolution_rule(alphabet: Alphabet, inp: str, out: str, values: str | None, sums: str | None, p: float) -> ConvolutionRule:
    """A ConvolutionRule from its symbols as a program writes them; `sums` as `"0,1,4..8"`."""
    for name, text in (("in", inp), ("out", out)):
        if len(text) != 1 or text not in alphabet.values:
            raise ValueError(f"{name}={text!r} must be one value (values are {alphabet.values!r})")
    if values is not None and sums is None:
        raise ValueError(f"values={values!r} needs sum= (the neighbour counts that fire the rule)")
    if sums is not None and values is None:
        raise ValueError(f"sum={sums!r} needs values= (the values whose neighbours are counted)")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be between 0 and 1 (got {p})")
    counted: tuple[int, ...] = ()
    allowed: tuple[int, ...] = ()
    if values is not None and sums is not None:
        if not values:
            raise ValueError("values must name at least one value to count")
        unknown = [c for c in values if c not in alphabet.values]
        if unknown:
            raise ValueError(f"values={values!r}: {unknown[0]!r} is not a value (values are {alphabet.values!r})")
        counted = tuple(alphabet.values.index(c) for c in values)
        allowed = convolution_node.parse_sums(sums)
    return ConvolutionRule(alphabet.values.index(inp), alphabet.values.index(out), counted, allowed, p)


@dataclass(frozen=True)
class ConvolutionNode(Node):
    """`convolution`: every cell rewritten at once by the first of `rules` that fires."""

    rules: tuple[ConvolutionRule, ...]  # the first that fires rewrites the cell
    neighborhood: Literal["Moore", "VonNeumann"]
    periodic: bool = False
    steps: int = 0

    def never_fire(self, values: str) -> list[str]:
        """What rules count more neighbours than a cell has: the reference takes them, and
        they never fire."""
        around = 8 if self.neighborhood == "Moore" else 4
        lines = []
        for rule in self.rules:
            most = around * max((rule.values.count(v) for v in set(rule.values)), default=0)
            if rule.values and min(rule.sums) > most:
                counted = "".join(values[v] for v in rule.values)
                lines.append(
                    f"convolution rule {values[rule.input]}={values[rule.output]} counting {counted!r}: sum {_spans(rule.sums)} is more than"
                    f" a cell's {around} {self.neighborhood} neighbours can hold ({most}), so the rule never fires"
                )
        return lines


def _spans(sums: tuple[int, ...]) -> str:
    return f"{sums[0]}..{sums[-1]}" if len(sums) > 1 and sums[-1] - sums[0] == len(sums) - 1 else ",".join(map(str, sums))


def read_toml(data: dict[str, Any], ctx: TomlContext) -> ConvolutionNode:
    """A ConvolutionNode from its table."""
    alphabet, where = ctx.alphabet, ctx.where
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
        _toml_rule(item, alphabet, f"{here}convolution[{i}]" if isinstance(body, list) else f"{here}convolution")
        for i, item in enumerate(items)
    )
    return ConvolutionNode(rules, neighborhood, periodic, steps)


def _toml_rule(item: Any, alphabet: Alphabet, where: str) -> ConvolutionRule:
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


def read_xml(el: Element, ctx: XmlContext) -> ConvolutionNode:
    """A ConvolutionNode from its element."""
    alphabet, root_attrs = ctx.grid.alphabet, ctx.root_attrs
    where = f"line {el.line}"
    for c in el.children:
        if c.tag != "rule":
            raise ProgramError(f"line {c.line}", f"unexpected <{c.tag}> inside <convolution> (rules are <rule in=... out=... values=... sum=...>)")
    rule_elements = el.children
    if rule_elements:
        # On the root, `values` is the grid's alphabet, not a rule's.
        stray = sorted((_RULE_ATTRS - root_attrs) & set(el.attrs))
        if stray:
            raise ProgramError(where, f"<convolution> has both {stray[0]}= and <rule> children (the reference reads rules from the children only)")
        check_attrs(el, _NODE_ATTRS | root_attrs)
    else:
        check_attrs(el, _NODE_ATTRS | _RULE_ATTRS | root_attrs)
    neighborhood = el.attrs.get("neighborhood")
    if neighborhood is None:
        raise ProgramError(where, f"<convolution> needs neighborhood ({' or '.join(NEIGHBORHOODS)})")
    if neighborhood not in NEIGHBORHOODS:
        raise ProgramError(where, f"neighborhood={neighborhood!r} is not a 2D neighbourhood ({' or '.join(NEIGHBORHOODS)})")
    rules: list[ConvolutionRule] = []
    for rel in rule_elements or [el]:
        if rel is not el:
            check_attrs(rel, _RULE_ATTRS)
            no_children(rel)
        rules.append(_xml_rule(rel, alphabet))
    return ConvolutionNode(tuple(rules), neighborhood, bool_attr(el, "periodic"), int_attr(el, "steps", 0))  # type: ignore[arg-type]


def _xml_rule(el: Element, alphabet: Alphabet) -> ConvolutionRule:
    where = f"line {el.line}"
    for key in ("in", "out"):
        if key not in el.attrs:
            raise ProgramError(where, f"<{el.tag}> needs {key} (one value)")
    text = el.attrs.get("p", "1")
    try:
        p = float(text)
    except ValueError:
        raise ProgramError(where, f"p={text!r} is not a number") from None
    try:
        return make_convolution_rule(alphabet, el.attrs["in"], el.attrs["out"], el.attrs.get("values"), el.attrs.get("sum"), p)
    except ValueError as exc:
        raise ProgramError(where, str(exc)) from None


def flatten(node: ConvolutionNode, k: int, rows: FlatRows, visit: Visit) -> None:
    """Node k's row: its rules, neighbourhood and steps."""
    rows.kinds[k] = CONVOLUTION
    rows.conv_rules.extend(node.rules)
    rows.steps[k] = node.steps
    rows.conv_flags[k] = (convolution_node.MOORE if node.neighborhood == "Moore" else 0) | (
        convolution_node.PERIODIC if node.periodic else 0
    )
