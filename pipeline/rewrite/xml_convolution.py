"""MarkovJunior's `<convolution>` in model files (nodes/convolution_node.py says what it does):

    <convolution neighborhood="Moore" periodic="True" steps="10">
      <rule in="A" out="D" values="D" sum="5..8"/>
      <rule in="D" out="A" values="A" sum="6..8" p="0.5"/>
    </convolution>

A node without `<rule>` children is its own single rule (`in`, `out`, `values`, `sum`, `p` on the
node), as in the reference; a rule without `values` and `sum` fires whatever the neighbours are.
"""

from __future__ import annotations

from pipeline.rewrite.nodes.convolution_node import NEIGHBORHOODS
from pipeline.rewrite.program import ConvolutionNode, ConvolutionRule, make_convolution_rule
from pipeline.rewrite.rule import Alphabet
from pipeline.rewrite.toml_form import ProgramError
from pipeline.rewrite.xml_form import Element, bool_attr, check_attrs, int_attr, no_children

_NODE_ATTRS = {"neighborhood", "periodic", "steps"}
_RULE_ATTRS = {"in", "out", "values", "sum", "p"}


def read_convolution(el: Element, alphabet: Alphabet, root_attrs: set[str]) -> ConvolutionNode:
    """A ConvolutionNode from its element; `root_attrs` are the grid's, allowed when it is the root."""
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
        rules.append(_rule(rel, alphabet))
    return ConvolutionNode(tuple(rules), neighborhood, bool_attr(el, "periodic"), int_attr(el, "steps", 0))  # type: ignore[arg-type]


def _rule(el: Element, alphabet: Alphabet) -> ConvolutionRule:
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
