"""The rule nodes `one`, `all` and `prl` (MarkovJunior's OneNode, AllNode, ParallelNode): their
data, their TOML and XML forms, and their rows in the flattened program. Their kernels are in
nodes/ (matching.py, all_node.py, prl_node.py; fields.py, observation.py and search.py for the
fields and observations that steer one and all nodes), dispatched by machine.py.

- `one`: apply one match, chosen uniformly among all current matches of all its rules;
- `all`: apply a random maximal set of matches whose written cells do not overlap, in one step;
- `prl`: apply every match at once, each with its rule's probability `p`.
A rule node's `steps` limits it to that many successful steps (0: no limit).

TOML: a table with one of `one`, `all`, `prl` holding a rule or a list of rules, plus optional
`steps`, `symmetry`, `p`, and `fields` or `observe` (with `temperature`; `observe` also with
`search`, `limit`, `depth_coefficient`) that guide which match is applied; a rule is `"IN=OUT"`
or a table `{ rule = "IN=OUT", p = 0.5, symmetry = "()" }`. XML: `<one in=... out=...>` or
`<one>` with `<rule>`, `<field>` and `<observe>` children (xml_rule.py reads the patterns).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pipeline.errors import toml_text
from pipeline.rewrite.codes import ALL, ONE, PRL
from pipeline.rewrite.flat import FlatRows, Visit
from pipeline.rewrite.node import Node
from pipeline.rewrite.nodes import fields
from pipeline.rewrite.program_error import ProgramError
from pipeline.rewrite.rule import Alphabet, Rule, parse_rule, split_rule
from pipeline.rewrite.toml_table import TomlContext, no_extra, probability, symmetry_of
from pipeline.rewrite.xml_element import Element, XmlContext, bool_attr, check_attrs, float_attr, int_attr, no_children, symmetry_of as xml_symmetry_of
from pipeline.rewrite.xml_rule import read_rule

NAMES: tuple[str, ...] = ("one", "all", "prl")
RuleKind = Literal["one", "all", "prl"]
_CODES = {"one": ONE, "all": ALL, "prl": PRL}

_RULE_NODE_OPTIONS = ("steps", "symmetry", "p", "fields", "temperature", "observe", "search", "limit", "depth_coefficient")
_FIELD_OPTIONS = ("for", "on", "to", "from", "recompute", "essential")
_PATTERN_ATTRS = {"in", "out", "fin", "fout", "file", "legend"}
_RULE_ATTRS = {"p", "symmetry"} | _PATTERN_ATTRS
_RULE_NODE_ATTRS = {"steps", "symmetry", "p", "temperature", "search", "limit", "depthCoefficient"} | _PATTERN_ATTRS
_FIELD_ATTRS = {"for", "on", "to", "from", "recompute", "essential"}
_OBSERVE_ATTRS = {"value", "from", "to"}


@dataclass(frozen=True)
class Field:
    """A potential field guiding a rule node's choice (see nodes/fields.py): distances over `on`
    cells from the `zero` cells, for the cells that get `value`."""

    value: int  # value index
    zero: int  # bit sets of values
    on: int
    inversed: bool = False  # `zero` are the `from` cells (else the `to` cells)
    recompute: bool = False  # on every step (else on the first after a reset)
    essential: bool = False  # no zero cell makes the node fail


def make_field(alphabet: Alphabet, value: str, on: str, zero: str, inversed: bool, recompute: bool, essential: bool) -> Field:
    """A Field from its symbols as a program writes them (`for`, `on`, `to` or `from`)."""
    if len(value) != 1:
        raise ValueError(f"for={value!r} must be one value")
    if not zero:
        raise ValueError("a field needs the symbols it counts from (to or from)")
    return Field(_one_value(alphabet, "for", value), alphabet.waves(zero), alphabet.waves(on), inversed, recompute, essential)


def _one_value(alphabet: Alphabet, key: str, ch: str) -> int:
    # Alphabet.value's own message is about rule outputs.
    if ch not in alphabet.values:
        raise ValueError(f"{key}={ch!r} is not one of the values {alphabet.values!r}")
    return alphabet.value(ch)


@dataclass(frozen=True)
class Observe:
    """What a rule node is told about the end (see nodes/observation.py): cells holding `value`
    are really `start` now and must end in one of the values of `goal` (a bit set)."""

    value: int  # value indices
    start: int
    goal: int


def make_observe(alphabet: Alphabet, value: str, start: str | None, goal: str) -> Observe:
    """An Observe from its symbols as a program writes them (`value`, `from`, `to`)."""
    if len(value) != 1:
        raise ValueError(f"value={value!r} must be one value")
    if start is not None and len(start) != 1:
        raise ValueError(f"from={start!r} must be one value")
    if not goal:
        raise ValueError("an observation needs to= (the values its cells may end in)")
    observed = _one_value(alphabet, "value", value)
    return Observe(observed, observed if start is None else _one_value(alphabet, "from", start), alphabet.waves(goal))


@dataclass(frozen=True)
class RuleNode(Node):
    """`one`, `all` or `prl`: rewrite the grid by `rules` (see the module's docstring)."""

    kind: RuleKind
    rules: tuple[Rule, ...]  # every orientation, already expanded by symmetry
    steps: int = 0
    fields: tuple[Field, ...] = ()
    temperature: float = 0.0  # used with fields or observations, as in the reference
    observes: tuple[Observe, ...] = ()
    search: bool = False  # plan the way to the observed future first (needs observes)
    limit: int = -1  # states a search keeps per attempt; -1: no cap
    depth_coefficient: float = 0.5


# MarkovJunior computes a prl node's fields and observations but never chooses by them: they can
# only stop the node, which this engine does not copy (it would run every match regardless).
PRL_UNSTEERED = "fields and observations steer which matches one and all nodes apply; a prl node applies each match by its p and chooses none"


def read_toml(data: dict[str, Any], ctx: TomlContext) -> RuleNode:
    """A rule node from its table."""
    kind = next(k for k in NAMES if k in data)
    alphabet, group, where = ctx.alphabet, ctx.group, ctx.where
    here = ctx.key(kind)
    no_extra(data, (kind, *_RULE_NODE_OPTIONS), where)
    steps = data.get("steps", 0)
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
        raise ProgramError(f"{where}.steps" if where else "steps", f"must be a whole number >= 0, 0 for no limit (got {toml_text(steps)})")
    p = probability(data.get("p", 1.0), f"{where}.p" if where else "p")
    body = data[kind]
    items = body if isinstance(body, list) else [body]
    if not items:
        raise ProgramError(here, "needs at least one rule")
    rules: list[Rule] = []
    for i, item in enumerate(items):
        spot = f"{here}[{i}]" if isinstance(body, list) else here
        rules.extend(_parse_rule(item, alphabet, group, p, spot))
    fields = _parse_fields(data.get("fields", []), alphabet, f"{where}.fields" if where else "fields")
    temperature = data.get("temperature", 0.0)
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not 0 <= temperature < float("inf"):
        raise ProgramError(f"{where}.temperature" if where else "temperature", f"must be a number >= 0 (got {toml_text(temperature)})")
    observes = _parse_observes(data.get("observe", []), alphabet, f"{where}.observe" if where else "observe")
    if kind == "prl" and (fields or observes):
        key = "fields" if fields else "observe"
        raise ProgramError(f"{where}.{key}" if where else key, PRL_UNSTEERED)
    if temperature and not fields and not observes:
        raise ProgramError(f"{where}.temperature" if where else "temperature", "only acts with fields or observe (as in MarkovJunior): add them, or remove it")
    search = _parse_search(data, kind, bool(observes), where)
    return RuleNode(kind, tuple(rules), steps, fields, float(temperature), observes, *search)  # type: ignore[arg-type]


def _parse_observes(body: Any, alphabet: Alphabet, where: str) -> tuple[Observe, ...]:
    """`observe = [ { value = "G", from = "B", to = "R" } ]` (`from` defaults to `value`)."""
    if not isinstance(body, list):
        raise ProgramError(where, 'must be a list of tables such as { value = "G", from = "B", to = "R" }')
    out = []
    for i, item in enumerate(body):
        spot = f"{where}[{i}]"
        if not isinstance(item, dict):
            raise ProgramError(spot, 'an observation is a table such as { value = "G", from = "B", to = "R" }')
        no_extra(item, ("value", "from", "to"), spot)
        for key in ("value", "to"):
            if not isinstance(item.get(key), str) or not item[key]:
                raise ProgramError(f"{spot}.{key}", "is required: a string of values")
        start = item.get("from")
        if start is not None and not isinstance(start, str):
            raise ProgramError(f"{spot}.from", "must be one value")
        try:
            out.append(make_observe(alphabet, item["value"], start, item["to"]))
        except ValueError as exc:
            raise ProgramError(spot, str(exc)) from None
    return tuple(out)


def _parse_search(data: dict[str, Any], kind: str, observes: bool, where: str) -> tuple[bool, int, float]:
    """(search, limit, depth_coefficient): only with observations, and only on `one` and `all` nodes."""
    spot = f"{where}." if where else ""
    given = [k for k in ("search", "limit", "depth_coefficient") if k in data]
    if given and not observes:
        raise ProgramError(f"{spot}{given[0]}", "only acts with observe (as in MarkovJunior): add observations, or remove it")
    search = data.get("search", False)
    if not isinstance(search, bool):
        raise ProgramError(f"{spot}search", "must be true or false")
    if search and kind not in ("one", "all"):
        raise ProgramError(f"{spot}search", "is supported on one and all nodes only")
    if not search and ("limit" in data or "depth_coefficient" in data):
        raise ProgramError(f"{spot}{'limit' if 'limit' in data else 'depth_coefficient'}", "only acts with search = true")
    limit = data.get("limit", -1)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < -1:
        raise ProgramError(f"{spot}limit", f"must be a whole number, -1 for no cap (got {toml_text(limit)})")
    dc = data.get("depth_coefficient", 0.5)
    if isinstance(dc, bool) or not isinstance(dc, (int, float)) or not -float("inf") < dc < float("inf"):
        raise ProgramError(f"{spot}depth_coefficient", f"must be a number (got {toml_text(dc)})")
    return search, limit, float(dc)


def _parse_fields(body: Any, alphabet: Alphabet, where: str) -> tuple[Field, ...]:
    """`fields = [ { for = "R", on = "B", to = "W", recompute = true } ]`."""
    if not isinstance(body, list):
        raise ProgramError(where, 'must be a list of tables such as { for = "R", on = "B", to = "W" }')
    out = []
    for i, item in enumerate(body):
        spot = f"{where}[{i}]"
        if not isinstance(item, dict):
            raise ProgramError(spot, 'a field is a table such as { for = "R", on = "B", to = "W" }')
        no_extra(item, _FIELD_OPTIONS, spot)
        for key in ("for", "on"):
            if not isinstance(item.get(key), str) or not item[key]:
                raise ProgramError(f"{spot}.{key}", "is required: a string of values")
        if ("to" in item) == ("from" in item):
            raise ProgramError(spot, "needs exactly one of to (distances from those cells) and from (inversed)")
        zero = item.get("to", item.get("from"))
        if not isinstance(zero, str):
            raise ProgramError(spot, "to / from must be a string of values")
        flags = {}
        for key in ("recompute", "essential"):
            flags[key] = item.get(key, False)
            if not isinstance(flags[key], bool):
                raise ProgramError(f"{spot}.{key}", "must be true or false")
        try:
            out.append(make_field(alphabet, item["for"], item["on"], zero, inversed="from" in item, **flags))
        except ValueError as exc:
            raise ProgramError(spot, str(exc)) from None
    return tuple(out)


def _parse_rule(item: Any, alphabet: Alphabet, group: str, p: float, where: str) -> list[Rule]:
    if isinstance(item, dict):
        no_extra(item, ("rule", "p", "symmetry"), where)
        if "rule" not in item:
            raise ProgramError(where, 'a rule table needs `rule = "IN=OUT"`')
        group = symmetry_of(item, group, where)
        p = probability(item.get("p", p), f"{where}.p")
        item = item["rule"]
    if not isinstance(item, str):
        raise ProgramError(where, f'a rule is a string "IN=OUT" or a table {{ rule = "IN=OUT", p = 0.5 }} (got {toml_text(item)})')
    try:
        inp, out = split_rule(item)
        return parse_rule(inp, out, alphabet, p).variants(group)
    except ValueError as exc:
        raise ProgramError(where, str(exc)) from None


def read_xml(el: Element, ctx: XmlContext) -> RuleNode:
    """A rule node from its element."""
    where = f"line {el.line}"
    reading, group, root_attrs = ctx.grid, ctx.group, ctx.root_attrs
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
        rules.extend(read_rule(rel, reading, xml_symmetry_of(rel, group) if rel is not el else group))
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


def flatten(node: RuleNode, k: int, rows: FlatRows, visit: Visit) -> None:
    """Node k's row: its rules, and the fields and observations that steer it."""
    rows.kinds[k] = _CODES[node.kind]
    rows.rules.extend(node.rules)
    rows.steps[k] = node.steps
    if node.fields:
        # One field per value, the last given winning, in value order: the reference
        # keeps them in an array indexed by value.
        by_value = {f.value: f for f in node.fields}
        for value in sorted(by_value):
            f = by_value[value]
            flags = (
                (fields.RECOMPUTE if f.recompute else 0)
                | (fields.ESSENTIAL if f.essential else 0)
                | (fields.INVERSED if f.inversed else 0)
            )
            rows.field_rows.append([f.value, f.zero, f.on, flags])
            if f.inversed:
                rows.inversed[k] |= 1 << f.value
        rows.field_hi[k] = len(rows.field_rows)
        rows.slots[k] = max(rows.slots) + 1
        rows.temperature[k] = node.temperature
    if node.observes:
        # One observation per value, the last given winning, as in the reference.
        by_value = {o.value: o for o in node.observes}
        rows.observe_rows.extend([o.value, o.start, o.goal] for _, o in sorted(by_value.items()))
        rows.observe_hi[k] = len(rows.observe_rows)
        rows.future_slots[k] = max(rows.future_slots) + 1
        if node.search:
            rows.searches[k] = [1.0, float(node.limit), node.depth_coefficient]
        elif rows.slots[k] < 0:
            rows.slots[k] = max(rows.slots) + 1  # backward potentials live where fields' would
        rows.temperature[k] = node.temperature
