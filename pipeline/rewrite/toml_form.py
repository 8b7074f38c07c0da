"""Programs written in a recipe: TOML tables that mirror the node tree.

    program = { markov = [ { one = "RBB=GGR" }, { one = "RGG=WWR" } ] }

A rule node is a table with one of `one`, `all`, `prl` holding a rule or a list of rules, plus
optional `steps`, `symmetry`, `p`, and `fields` (with `temperature`) that guide which match is
applied; a rule is `"IN=OUT"` or a table `{ rule = "IN=OUT",
p = 0.5, symmetry = "()" }`. A branch is `{ markov = [...] }` or `{ sequence = [...] }` with an
optional `symmetry`. `{ path = { from = "R", to = "W", on = "B", color = "D" } }` draws paths.
"""

from __future__ import annotations

from typing import Any

from pipeline.rewrite import symmetry
from pipeline.rewrite.kinds import BRANCH_KINDS, NODE_KINDS, RULE_KINDS
from pipeline.rewrite.program import Field, make_field, BranchNode, Node, PathNode, RuleNode
from pipeline.rewrite.rule import Alphabet, Rule, parse_rule, split_rule

_RULE_NODE_OPTIONS = ("steps", "symmetry", "p", "fields", "temperature")
_FIELD_OPTIONS = ("for", "on", "to", "from", "recompute", "essential")
_PATH_OPTIONS = ("from", "to", "on", "color", "inertia", "longest", "edges")


class ProgramError(ValueError):
    """A problem at a place in a program: `where` is a path such as `markov[1].one`."""

    def __init__(self, where: str, message: str):
        self.where = where
        self.message = message
        super().__init__(f"{where}: {message}" if where else message)


def parse_node(data: Any, alphabet: Alphabet, group: str, where: str) -> Node:
    if not isinstance(data, dict):
        raise ProgramError(where, f"a node must be a table such as {{ one = \"RBB=GGR\" }} (got {data!r})")
    kinds = [k for k in data if k in NODE_KINDS]
    if len(kinds) != 1:
        found = ", ".join(kinds) if kinds else "none"
        raise ProgramError(where, f"a node needs exactly one of {', '.join(NODE_KINDS)} (found {found})")
    kind = kinds[0]
    here = f"{where}.{kind}" if where else kind
    if kind == "wfc":
        raise ProgramError(here, "wfc nodes come from MarkovJunior .xml models only (they need a sample image or a tileset)")
    group = _symmetry(data, group, where)
    if kind in BRANCH_KINDS:
        _no_extra(data, (kind, "symmetry"), where)
        body = data[kind]
        if not isinstance(body, list) or not body:
            raise ProgramError(here, "must be a non-empty list of nodes")
        return BranchNode(kind, tuple(parse_node(child, alphabet, group, f"{here}[{i}]") for i, child in enumerate(body)))  # type: ignore[arg-type]
    if kind == "path":
        _no_extra(data, ("path",), where)
        return _parse_path(data["path"], alphabet, here)
    _no_extra(data, (kind, *_RULE_NODE_OPTIONS), where)
    steps = data.get("steps", 0)
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
        raise ProgramError(f"{where}.steps" if where else "steps", f"must be a whole number >= 0 (got {steps!r})")
    p = _probability(data.get("p", 1.0), f"{where}.p" if where else "p")
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
        raise ProgramError(f"{where}.temperature" if where else "temperature", f"must be a number >= 0 (got {temperature!r})")
    if temperature and not fields:
        raise ProgramError(f"{where}.temperature" if where else "temperature", "only acts with fields (as in MarkovJunior): add fields, or remove it")
    return RuleNode(kind, tuple(rules), steps, fields, float(temperature))  # type: ignore[arg-type]


def _parse_fields(body: Any, alphabet: Alphabet, where: str) -> tuple[Field, ...]:
    """`fields = [ { for = "R", on = "B", to = "W", recompute = true } ]`."""
    if not isinstance(body, list):
        raise ProgramError(where, 'must be a list of tables such as { for = "R", on = "B", to = "W" }')
    out = []
    for i, item in enumerate(body):
        spot = f"{where}[{i}]"
        if not isinstance(item, dict):
            raise ProgramError(spot, 'a field is a table such as { for = "R", on = "B", to = "W" }')
        _no_extra(item, _FIELD_OPTIONS, spot)
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
        _no_extra(item, ("rule", "p", "symmetry"), where)
        if "rule" not in item:
            raise ProgramError(where, 'a rule table needs `rule = "IN=OUT"`')
        group = _symmetry(item, group, where)
        p = _probability(item.get("p", p), f"{where}.p")
        item = item["rule"]
    if not isinstance(item, str):
        raise ProgramError(where, f'a rule is a string "IN=OUT" or a table {{ rule = "IN=OUT", p = 0.5 }} (got {item!r})')
    try:
        inp, out = split_rule(item)
        return parse_rule(inp, out, alphabet, p).variants(group)
    except ValueError as exc:
        raise ProgramError(where, str(exc)) from None


def _parse_path(body: Any, alphabet: Alphabet, where: str) -> PathNode:
    if not isinstance(body, dict):
        raise ProgramError(where, 'must be a table such as { from = "R", to = "W", on = "B" }')
    _no_extra(body, _PATH_OPTIONS, where)
    for key in ("from", "to", "on"):
        if not isinstance(body.get(key), str) or not body[key]:
            raise ProgramError(f"{where}.{key}", "is required: a string of values")
    flags = {}
    for key in ("inertia", "longest", "edges"):
        flags[key] = body.get(key, False)
        if not isinstance(flags[key], bool):
            raise ProgramError(f"{where}.{key}", "must be true or false")
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
    raise ValueError(f"color must be one value character (got {color!r})")


def _symmetry(data: dict[str, Any], inherited: str, where: str) -> str:
    if "symmetry" not in data:
        return inherited
    try:
        return symmetry.check(data["symmetry"])
    except (ValueError, TypeError) as exc:
        raise ProgramError(f"{where}.symmetry" if where else "symmetry", str(exc)) from None


def _probability(p: Any, where: str) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
        raise ProgramError(where, f"must be a number from 0 to 1 (got {p!r})")
    return float(p)


def _no_extra(data: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
    extra = [k for k in data if k not in allowed]
    if extra:
        raise ProgramError(where, f"unknown key {extra[0]!r} here (allowed: {', '.join(allowed)})")
