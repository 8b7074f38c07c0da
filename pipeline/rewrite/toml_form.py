"""Programs written in a recipe: TOML tables that mirror the node tree.

    program = { markov = [ { one = "RBB=GGR" }, { one = "RGG=WWR" } ] }

A rule node is a table with one of `one`, `all`, `prl` holding a rule or a list of rules, plus
optional `steps`, `symmetry`, `p`, and `fields` or `observe` (with `temperature`; `observe` also
with `search`, `limit`, `depth_coefficient`) that guide which match is applied; a rule is `"IN=OUT"` or a table `{ rule = "IN=OUT",
p = 0.5, symmetry = "()" }`. A branch is `{ markov = [...] }` or `{ sequence = [...] }` with an
optional `symmetry`. `{ path = { from = "R", to = "W", on = "B", color = "D" } }` draws paths.
`{ map = ["B=DD/DA"], scale = [2, 2], values = "DA", then = [...] }` draws a new grid, twice the
size and in the values `DA`, and runs the `then` nodes on it.
`{ convolution = [...], neighborhood = "Moore" }` is a cellular automaton step (toml_convolution.py).
`{ convchain = { sample = "Maze", on = "B", black = "D", white = "A", n = 2, steps = 10 } }`
resamples the `on` cells after `samples/Maze.png`, read through the stage's resources folder.
`{ wfc = { sample = "Flowers", n = 3 }, values = "zYgN", rules = ["B=N|g"], then = [...] }`
collapses a new grid after a sample's patterns (or a `tileset`'s tiles), as a map does (toml_wfc.py).
"""

from __future__ import annotations

from typing import Any

from pipeline.errors import did_you_mean, toml_text
from pipeline.rewrite import symmetry
from pipeline.rewrite.kinds import BRANCH_KINDS, NODE_KINDS
from pipeline.rewrite.convchain import make_convchain
from pipeline.rewrite.program import PRL_UNSTEERED, BranchNode, Field, MapNode, Node, Observe, PathNode, RuleNode, WfcNode, make_field, make_map_rule, make_observe
from pipeline.rewrite.resources import ResourceReader
from pipeline.rewrite.rule import Alphabet, Rule, parse_rule, split_rule

_RULE_NODE_OPTIONS = ("steps", "symmetry", "p", "fields", "temperature", "observe", "search", "limit", "depth_coefficient")
_FIELD_OPTIONS = ("for", "on", "to", "from", "recompute", "essential")
_PATH_OPTIONS = ("from", "to", "on", "color", "inertia", "longest", "edges")
_MAP_OPTIONS = ("map", "scale", "values", "then", "symmetry")
_CONVCHAIN_OPTIONS = ("sample", "on", "black", "white", "n", "temperature", "steps", "symmetry")


class ProgramError(ValueError):
    """A problem at a place in a program: `where` is a path such as `markov[1].one`."""

    def __init__(self, where: str, message: str):
        self.where = where
        self.message = message
        super().__init__(f"{where}: {message}" if where else message)


def parse_node(data: Any, alphabet: Alphabet, group: str, where: str, read: ResourceReader | None = None) -> Node:
    """A node from its TOML table; `read` gives resource files (samples, tilesets) by path in
    the stage's resources folder."""
    if not isinstance(data, dict):
        raise ProgramError(where, f"a node must be a table such as {{ one = \"RBB=GGR\" }} (got {toml_text(data)})")
    kinds = [k for k in data if k in NODE_KINDS]
    if len(kinds) != 1:
        found = ", ".join(kinds) if kinds else "none"
        # A misspelt kind is the likely mistake: name the key that comes closest to one.
        close = next(((str(key), h) for key in data if (h := did_you_mean(str(key), NODE_KINDS))), None) if not kinds else None
        hint = f" ({close[0]!r}: {close[1].removeprefix(' (')}" if close else ""
        raise ProgramError(where, f"a node needs exactly one of {', '.join(NODE_KINDS)} (found {found}){hint}")
    kind = kinds[0]
    here = f"{where}.{kind}" if where else kind
    group = _symmetry(data, group, where)
    if kind == "wfc":
        # Imported here: that module reads with this one's helpers.
        from pipeline.rewrite.toml_wfc import parse_wfc

        return parse_wfc(data, alphabet, group, where, read)
    if kind in BRANCH_KINDS:
        no_extra(data, (kind, "symmetry"), where)
        body = data[kind]
        if not isinstance(body, list) or not body:
            raise ProgramError(here, "must be a non-empty list of nodes")
        nodes = tuple(parse_node(child, alphabet, group, f"{here}[{i}]", read) for i, child in enumerate(body))
        for i, node in enumerate(nodes[:-1]):
            if isinstance(node, WfcNode):
                raise ProgramError(f"{here}[{i}]", "a wfc node must be the last of its branch (after a failed collapse MarkovJunior goes on with the nodes after it, which this engine does not)")
            if isinstance(node, MapNode):
                # The run goes on with the map's `then` on the new grid, never back to this branch.
                raise ProgramError(f"{here}[{i}]", "a map node must be the last of its branch: the nodes after it would never run; put them in its `then`")
        return BranchNode(kind, nodes)  # type: ignore[arg-type]
    if kind == "convolution":
        # Imported here: that module reads with this one's helpers.
        from pipeline.rewrite.toml_convolution import parse_convolution

        return parse_convolution(data, alphabet, where)
    if kind == "path":
        no_extra(data, ("path",), where)
        return _parse_path(data["path"], alphabet, here)
    if kind == "map":
        no_extra(data, _MAP_OPTIONS, where)
        return _parse_map(data, alphabet, group, where, read)
    if kind == "convchain":
        no_extra(data, ("convchain",), where)
        return _parse_convchain(data["convchain"], alphabet, group, here, read)
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
        group = _symmetry(item, group, where)
        p = probability(item.get("p", p), f"{where}.p")
        item = item["rule"]
    if not isinstance(item, str):
        raise ProgramError(where, f'a rule is a string "IN=OUT" or a table {{ rule = "IN=OUT", p = 0.5 }} (got {toml_text(item)})')
    try:
        inp, out = split_rule(item)
        return parse_rule(inp, out, alphabet, p).variants(group)
    except ValueError as exc:
        raise ProgramError(where, str(exc)) from None


def _parse_map(data: dict[str, Any], alphabet: Alphabet, group: str, where: str, read: ResourceReader | None) -> MapNode:
    """`{ map = ["B=DD/DA"], scale = [2, 2], values = "DA", then = [...] }`: rules from this grid's
    values to the new grid's (outputs of any size), its scale along x and y (a whole number, or
    [numerator, denominator]), its values, and the nodes that run on it."""
    def key(name: str) -> str:
        return f"{where}.{name}" if where else name

    values = data.get("values")
    if not isinstance(values, str):
        raise ProgramError(key("values"), 'is required: the new grid\'s symbols, e.g. "DA"')
    try:
        inner = Alphabet(values)
    except ValueError as exc:
        raise ProgramError(key("values"), str(exc)) from None
    scale = data.get("scale")
    if not isinstance(scale, list) or len(scale) != 2:
        raise ProgramError(key("scale"), f"must be [x, y], each a whole number or [numerator, denominator] (got {toml_text(scale)})")
    factors = tuple(_factor(s, f"{key('scale')}[{i}]") for i, s in enumerate(scale))
    body = data["map"]
    items = body if isinstance(body, list) else [body]
    if not items:
        raise ProgramError(key("map"), "needs at least one rule")
    rules: list[Rule] = []
    for i, item in enumerate(items):
        spot = f"{key('map')}[{i}]" if isinstance(body, list) else key("map")
        if not isinstance(item, str):
            raise ProgramError(spot, f'a map rule is a string "IN=OUT" (got {toml_text(item)})')
        try:
            rules.extend(make_map_rule(alphabet, inner, *split_rule(item), group))
        except ValueError as exc:
            raise ProgramError(spot, str(exc)) from None
    then = data.get("then", [])
    if not isinstance(then, list):
        raise ProgramError(key("then"), "must be a list of nodes to run on the new grid")
    children = tuple(parse_node(child, inner, group, f"{key('then')}[{i}]", read) for i, child in enumerate(then))
    return MapNode(inner, factors, tuple(rules), children)  # type: ignore[arg-type]


def _factor(value: Any, where: str) -> tuple[int, int]:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value, 1
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in value)
    ):
        return value[0], value[1]
    raise ProgramError(where, f"must be a whole number >= 1 or [numerator, denominator] (got {toml_text(value)})")


def _parse_path(body: Any, alphabet: Alphabet, where: str) -> PathNode:
    if not isinstance(body, dict):
        raise ProgramError(where, 'must be a table such as { from = "R", to = "W", on = "B" }')
    no_extra(body, _PATH_OPTIONS, where)
    for key in ("from", "to", "on"):
        if not isinstance(body.get(key), str) or not body[key]:
            raise ProgramError(f"{where}.{key}", "is required: a string of values")
    flags = {}
    for key in ("inertia", "longest", "edges"):
        flags[key] = body.get(key, False)
        if not isinstance(flags[key], bool):
            raise ProgramError(f"{where}.{key}", "must be true or false")
    if set(body["from"]) <= set(body["to"]):
        # MarkovJunior draws from a start cell that is not a goal: with none, the node never runs.
        raise ProgramError(f"{where}.from", f"every value of from ({body['from']!r}) is also in to ({body['to']!r}): a path starts at a from cell that is not a to cell, so none would be drawn")
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


def _parse_convchain(body: Any, alphabet: Alphabet, group: str, where: str, read: ResourceReader | None) -> Node:
    if not isinstance(body, dict):
        raise ProgramError(where, 'must be a table such as { sample = "Maze", on = "B", black = "D", white = "A" }')
    no_extra(body, _CONVCHAIN_OPTIONS, where)
    for key in ("sample", "on", "black", "white"):
        if not isinstance(body.get(key), str) or not body[key]:
            raise ProgramError(f"{where}.{key}", "is required: a string" + (" (the sample's name)" if key == "sample" else " (one value)"))
    numbers = {"n": 3, "steps": 0}
    for key in numbers:
        value = body.get(key, numbers[key])
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ProgramError(f"{where}.{key}", f"must be a whole number >= 0 (got {toml_text(value)})")
        numbers[key] = value
    temperature = body.get("temperature", 1.0)
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)):
        raise ProgramError(f"{where}.temperature", f"must be a number >= 0 (got {toml_text(temperature)})")
    group = _symmetry(body, group, where)
    try:
        return make_convchain(
            alphabet, read, body["sample"], body["on"], body["black"], body["white"], numbers["n"], float(temperature),
            numbers["steps"], group, 'an inline program reads samples from the stage\'s resources folder: set resources = "..."',
        )
    except ValueError as exc:
        raise ProgramError(where, str(exc)) from None


def _bad_color(color: Any) -> int:
    raise ValueError(f"color must be one value character (got {toml_text(color)})")


def _symmetry(data: dict[str, Any], inherited: str, where: str) -> str:
    if "symmetry" not in data:
        return inherited
    try:
        return symmetry.check(data["symmetry"])
    except (ValueError, TypeError) as exc:
        raise ProgramError(f"{where}.symmetry" if where else "symmetry", str(exc)) from None


def probability(p: Any, where: str) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
        raise ProgramError(where, f"must be a number from 0 to 1 (got {toml_text(p)})")
    return float(p)


def no_extra(data: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
    extra = [k for k in data if k not in allowed]
    if extra:
        raise ProgramError(where, f"unknown key {extra[0]!r} here (allowed: {', '.join(allowed)})")
