"""The `filter` stage: keep a map only if its properties pass a test, else make it again."""

from __future__ import annotations

import ast
import functools
import operator
import re
from typing import Any, Callable, ClassVar, Literal, Union

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, SerializationInfo, SerializerFunctionWrapHandler, field_validator, model_serializer, model_validator

from pipeline.best import NOT_MEASURED, Aim, BestOf, Tried, failure_report
from pipeline.errors import PipelineError, Rejected, toml_text
from pipeline.level import Level, ObjectRef, PropertyValue
from pipeline.registry import StageParams, stage

_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Eq: operator.eq, ast.NotEq: operator.ne,
}


class Best(BaseModel):
    """`best = { stat = "difficulty", of = 8, aim = "max" }`: compare `of` passing attempts."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    stat: str = Field(min_length=1, description="The property compared, e.g. \"difficulty\".")
    of: int = Field(ge=2, le=10_000, description="How many attempts that pass `where` to compare.")
    aim: Union[Literal["max", "min"], float, tuple[float, float]] = Field(
        "max", description='"max", "min", a target number, or a band [low, high]: inside the band first, then the closest.'
    )

    @field_validator("aim")
    @classmethod
    def _band(cls, value: Aim) -> Aim:
        if isinstance(value, tuple) and value[0] > value[1]:
            raise ValueError(f"a band must be [low, high] with low <= high (got {list(value)})")
        return value


@stage("filter", version=2)
class Filter(StageParams):
    """Pass a map on only if its properties satisfy `where`, or keep the best of several attempts.
    `where` compares property names with numbers, strings or true/false, joined by `and`, `or`,
    `not` and parentheses, e.g. `"difficulty >= 8"` or `"regions == 1 and path_length > 40"`. A
    map that fails is made again from the next seeds (every stage of it, as attempt 1, 2, ...), up
    to `attempts` tries; the attempt kept is recorded in the manifest and the TMX properties, so
    the map still rebuilds bit for bit. The first attempt that passes is kept, unless `best =
    {stat, of, aim}` asks for the best of `of` passing attempts by `stat` (every one of them is
    made, so a map costs `of` times as much). When no attempt passes, the map fails with the best
    value each tested property reached and their spread.
    """

    arity: ClassVar[tuple[int, int]] = (1, 1)
    adds_stats: ClassVar[tuple[str, ...] | None] = ()
    may_reject: ClassVar[bool] = True

    where: str = Field("", description='The test, e.g. "difficulty >= 8 and moves_greedy < 14"; empty: every attempt passes (with best).')
    attempts: int = Field(100, ge=1, le=100_000, description="Most tries per map before the map fails.")
    best: Best | None = Field(
        None, description='Keep the best of several passing attempts, e.g. {stat = "difficulty", of = 8, aim = "max"} (aim: "max", "min", a number, or [low, high]).'
    )

    @field_validator("where")
    @classmethod
    def _parse(cls, value: str) -> str:
        if value.strip():
            _compile(value)
            impossible = _never_passes(value)
            if impossible:
                raise ValueError(impossible)
        return value

    @model_validator(mode="after")
    def _enough(self) -> Filter:
        if not self.where.strip() and self.best is None:
            raise ValueError("give where (a test), best (a choice), or both")
        if self.best is not None and self.best.of > self.attempts:
            raise ValueError(f"best.of = {self.best.of} is more than attempts = {self.attempts}")
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict[str, Any]:
        # Without best, the params (and so the cache keys and manifests) are what they were
        # before best existed: filters built then stay fresh.
        data: dict[str, Any] = handler(self)
        if data.get("best", 0) is None:
            del data["best"]
        return data

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        level = inputs[0]
        # An object reference (a hand-made map's `boss`) is no stat to compare: not measured.
        props = {k: v for k, v in level.properties.items() if not isinstance(v, ObjectRef)}
        if self.where.strip() and not _compile(self.where)(props):
            names = _names(self.where)
            shown = ", ".join(f"{name} = {props[name]}" if name in props else f"{name} {NOT_MEASURED}" for name in names)
            raise Rejected(f"where {self.where!r} failed ({shown})", self.attempts, {name: props.get(name, NOT_MEASURED) for name in names})
        if self.best is not None and self.best.stat not in props:  # as in where: not passed
            raise Rejected(f"best: {self.best.stat} {NOT_MEASURED}", self.attempts, {self.best.stat: NOT_MEASURED})
        return level

    def read_stats(self) -> dict[str, str]:
        names = {name: "where" for name in _names(self.where)} if self.where.strip() else {}
        if self.best is not None:
            names.setdefault(self.best.stat, "best.stat")
        return names

    def best_of(self) -> BestOf | None:
        if self.best is None:
            return None
        return BestOf(stat=self.best.stat, of=self.best.of, aim=self.best.aim, attempts=self.attempts)

    def rejection_report(self, tried: list[Tried], total: int) -> str | None:
        aims = _aims(self.where)
        if self.best is not None:
            aims[self.best.stat] = self.best.aim
        return failure_report(self.where or f"best: {self.best.stat if self.best else '?'} measured", tried, aims, total)


class _Missing:
    """A stat a map lacks, in a test: not a value any comparison can pass."""


MISSING = _Missing()


@functools.lru_cache(maxsize=64)  # as _compile: every turned-down attempt reports them
def _names(text: str) -> tuple[str, ...]:
    return tuple(sorted({n.id for n in ast.walk(ast.parse(text, mode="eval")) if isinstance(n, ast.Name)} - {"true", "false"}))


_LOWER = (ast.Gt, ast.GtE)
_UPPER = (ast.Lt, ast.LtE)


def _aims(text: str) -> dict[str, Aim]:
    """Which way is better for each property that `text` bounds by numbers in comparisons joined
    by `and`: up for `x >= 8`, down for `x < 3`, into [low, high] for `3 <= x <= 9` or `x == 5`.
    Properties under `or` or `not` get none (there, closer to passing has no one direction)."""
    aims: dict[str, Aim] = {}
    for name, ((low, _), (high, _)) in _bounds(text).items():
        if low is not None and high is not None:
            aims[name] = (low, high)
        else:
            aims[name] = "max" if low is not None else "min"
    return aims


Bound = tuple[float | None, bool]  # the bound (None: none), and whether it is strict (`>`, `<`)


def _bounds(text: str) -> dict[str, tuple[Bound, Bound]]:
    """The (lower, upper) bound by numbers that comparisons joined by `and` put on each property,
    by name, sorted; the tighter of two bounds, and of equal ones the strict."""
    if not text.strip():
        return {}
    tree = ast.parse(text, mode="eval").body
    terms = tree.values if isinstance(tree, ast.BoolOp) and isinstance(tree.op, ast.And) else [tree]
    low: dict[str, Bound] = {}
    high: dict[str, Bound] = {}
    for term in terms:
        if not isinstance(term, ast.Compare):
            continue
        sides = [term.left, *term.comparators]
        for op, left, right in zip(term.ops, sides, sides[1:]):
            if isinstance(left, ast.Name) and _is_number(right):
                name, bound, op_type = left.id, _number(right), type(op)
            elif isinstance(right, ast.Name) and _is_number(left):
                # `8 <= x` bounds x as `x >= 8` does: mirror the operator.
                mirror = {ast.Lt: ast.Gt, ast.LtE: ast.GtE, ast.Gt: ast.Lt, ast.GtE: ast.LtE}
                name, bound, op_type = right.id, _number(left), mirror.get(type(op), type(op))
            else:
                continue
            if op_type in _LOWER or op_type is ast.Eq:
                low[name] = max(low.get(name, (bound, False)), (bound, op_type is ast.Gt))
            if op_type in _UPPER or op_type is ast.Eq:
                # The tighter upper bound is the lower number; of equal ones, the strict.
                high[name] = min(high.get(name, (bound, False)), (bound, op_type is ast.Lt), key=lambda b: (b[0], not b[1]))
    return {name: (low.get(name, (None, False)), high.get(name, (None, False))) for name in sorted(set(low) | set(high))}


def _never_passes(text: str) -> str | None:
    """Why `text` can pass no map, when its `and`-joined bounds on one property leave no value:
    `dead_ends >= 5 and dead_ends < 3` would spend every attempt of every map to find that out."""
    for name, ((low, low_strict), (high, high_strict)) in _bounds(text).items():
        if low is not None and high is not None and (low > high or (low == high and (low_strict or high_strict))):
            return f"can never pass: {name} would have to be {'>' if low_strict else '>='} {low:g} and {'<' if high_strict else '<='} {high:g}"
    return None


def _is_numeral(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _is_number(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool)


def _number(node: ast.expr) -> float:
    if isinstance(node, ast.UnaryOp):
        return -float(node.operand.value)  # type: ignore[attr-defined]
    return float(node.value)  # type: ignore[attr-defined]


# A pack's maps (and every attempt of each) run the same few tests: parse each once a process.
@functools.lru_cache(maxsize=64)
def _compile(text: str) -> Callable[[dict[str, PropertyValue]], bool]:
    """The test as a function of a map's properties; only comparisons and boolean logic."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError as exc:
        # Quoted once: the error adds the value it was given.
        hint = " (to compare, write ==)" if re.search(r"(?<![=<>!])=(?!=)", text) else ""
        hint = hint or (" (write and, or, not)" if re.search(r"&&|\|\||!(?!=)", text) else "")
        raise ValueError(f"cannot read it: {exc.msg}{hint}") from None

    def value(node: ast.expr) -> Callable[[dict[str, PropertyValue]], Any]:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool)):
            constant = node.value
            return lambda props: constant
        if isinstance(node, ast.Name) and node.id in ("true", "false"):
            flag = node.id == "true"
            return lambda props: flag
        if isinstance(node, ast.Name):
            name = node.id

            def lookup(props: dict[str, PropertyValue]) -> PropertyValue | _Missing:
                # The recipe's check lets only stats its stages add reach here: one missing is one
                # a stage leaves out when it cannot settle it (moves_optimal over its budget).
                return props.get(name, MISSING)

            return lookup
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            negative = -node.operand.value  # type: ignore[operator]
            return lambda props: negative
        raise ValueError(f"{ast.unparse(node)!r} is not a property name or a constant")

    # Three-valued, as SQL's NULL: None is "not measured". A comparison reading a stat the map
    # lacks is None, `not` keeps it None, `and`/`or` decide without it when the other side can:
    # so no test passes on a stat nobody measured, and `x < 5 or y > 8` passes on y alone.
    def test(node: ast.expr) -> Callable[[dict[str, PropertyValue]], bool | None]:
        if isinstance(node, ast.BoolOp):
            parts = [test(v) for v in node.values]
            decisive = isinstance(node.op, ast.Or)  # the value that settles it: True for or, False for and

            def join(props: dict[str, PropertyValue]) -> bool | None:
                unknown = False
                for part in parts:
                    result = part(props)
                    if result is decisive:
                        return decisive
                    unknown = unknown or result is None
                return None if unknown else not decisive

            return join
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = test(node.operand)

            def negate(props: dict[str, PropertyValue]) -> bool | None:
                result = inner(props)
                return None if result is None else not result

            return negate
        if isinstance(node, ast.Compare):
            terms = [value(node.left)] + [value(c) for c in node.comparators]
            named = [n.id if isinstance(n, ast.Name) and n.id not in ("true", "false") else None for n in (node.left, *node.comparators)]
            ops = []
            for op, left, right in zip(node.ops, [node.left, *node.comparators], node.comparators):
                if type(op) not in _COMPARE:
                    raise ValueError(f"{text!r}: only <, <=, >, >=, == and != compare")
                # A quoted number ordered against a stat (`path_length >= "60"`) fails every map as
                # it is built; texts ordered against texts (`theme < "m"`) are a test of their own.
                quoted = next((n.value for n in (left, right) if isinstance(n, ast.Constant) and isinstance(n.value, str) and _is_numeral(n.value)), None)
                if quoted is not None and not isinstance(op, (ast.Eq, ast.NotEq)):
                    raise ValueError(f"orders by the text {quoted!r}, a number in quotes: write numbers without quotes")
                ops.append(_COMPARE[type(op)])

            def compare(props: dict[str, PropertyValue]) -> bool | None:
                values = [t(props) for t in terms]
                if any(v is MISSING for v in values):
                    return None
                for pair in zip(values, values[1:], named, named[1:]):
                    if _kind(pair[0]) != _kind(pair[1]):  # never equal (Python's 0 == false aside), nor ordered
                        raise PipelineError([f"where: {_mismatch(*pair)} in {text!r}"])
                return all(op(a, b) for op, a, b in zip(ops, values, values[1:]))

            return compare
        raise ValueError(f"{text!r}: write comparisons joined by and / or, e.g. \"difficulty >= 8\"")

    whole = test(tree)
    return lambda props: whole(props) is True


def _kind(value: Any) -> str:
    # numpy's bool is not Python's: a plugin's stat may be either.
    return "text" if isinstance(value, str) else "true/false" if isinstance(value, (bool, np.bool_)) else "a number"


def _mismatch(a: Any, b: Any, name_a: str | None, name_b: str | None) -> str:
    """Values of two kinds compared (text, a number, true/false), a stat the test reads named first."""
    (v1, n1), (v2, n2) = ((a, name_a), (b, name_b)) if name_a or not name_b else ((b, name_b), (a, name_a))
    first = f"{n1!r} is {_kind(v1)} ({toml_text(v1)})" if n1 else f"{_kind(v1)} {toml_text(v1)}"
    article = "" if _kind(v2) == "true/false" else "the " + _kind(v2).removeprefix("a ") + " "
    second = f"{n2!r}, {_kind(v2)} ({toml_text(v2)})" if n2 else f"{article}{toml_text(v2)}"
    return f"{first}, compared with {second}: a stat compares only with a value of its own kind"
