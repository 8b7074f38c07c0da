"""The `filter` stage: keep a map only if its properties pass a test, else make it again."""

from __future__ import annotations

import ast
import operator
from typing import Any, Callable, ClassVar

import numpy as np
from pydantic import Field, field_validator

from pipeline.errors import PipelineError, Rejected
from pipeline.level import Level, PropertyValue
from pipeline.registry import StageParams, stage

_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Eq: operator.eq, ast.NotEq: operator.ne,
}


@stage("filter", version=1)
class Filter(StageParams):
    """Pass a map on only if its properties satisfy `where`. `where` compares property names
    with numbers, strings or true/false, joined by `and`, `or`, `not` and parentheses, e.g.
    `"difficulty >= 8"` or `"regions == 1 and path_length > 40"`. A map that fails is made again
    from the next seeds (every stage of it, as attempt 1, 2, ...), up to `attempts` tries; the
    attempt that passed is recorded in the manifest and the TMX properties, so the map still
    rebuilds bit for bit.
    """

    arity: ClassVar[tuple[int, int]] = (1, 1)
    adds_stats: ClassVar[tuple[str, ...] | None] = ()
    may_reject: ClassVar[bool] = True

    where: str = Field(description='The test, e.g. "difficulty >= 8 and moves_greedy < 14".')
    attempts: int = Field(100, ge=1, le=100_000, description="Most tries per map before the map fails.")

    @field_validator("where")
    @classmethod
    def _parse(cls, value: str) -> str:
        _compile(value)
        return value

    def run(self, inputs: list[Level], rng: np.random.Generator) -> Level:
        level = inputs[0]
        if not _compile(self.where)(level.properties):
            shown = ", ".join(f"{name} = {level.properties[name]}" for name in _names(self.where) if name in level.properties)
            raise Rejected(f"where {self.where!r} failed ({shown})", self.attempts)
        return level


def _names(text: str) -> list[str]:
    return sorted({n.id for n in ast.walk(ast.parse(text, mode="eval")) if isinstance(n, ast.Name)})


def _compile(text: str) -> Callable[[dict[str, PropertyValue]], bool]:
    """The test as a function of a map's properties; only comparisons and boolean logic."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError as exc:
        raise ValueError(f"cannot read {text!r}: {exc.msg}") from None

    def value(node: ast.expr) -> Callable[[dict[str, PropertyValue]], Any]:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool)):
            constant = node.value
            return lambda props: constant
        if isinstance(node, ast.Name) and node.id in ("true", "false"):
            flag = node.id == "true"
            return lambda props: flag
        if isinstance(node, ast.Name):
            name = node.id

            def lookup(props: dict[str, PropertyValue]) -> PropertyValue:
                if name not in props:
                    raise PipelineError([f"where: the map has no property {name!r} (it has: {', '.join(sorted(props))})"])
                return props[name]

            return lookup
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            negative = -node.operand.value  # type: ignore[operator]
            return lambda props: negative
        raise ValueError(f"{ast.unparse(node)!r} is not a property name or a constant")

    def test(node: ast.expr) -> Callable[[dict[str, PropertyValue]], bool]:
        if isinstance(node, ast.BoolOp):
            parts = [test(v) for v in node.values]
            if isinstance(node.op, ast.And):
                return lambda props: all(p(props) for p in parts)
            return lambda props: any(p(props) for p in parts)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            inner = test(node.operand)
            return lambda props: not inner(props)
        if isinstance(node, ast.Compare):
            terms = [value(node.left)] + [value(c) for c in node.comparators]
            ops = []
            for op in node.ops:
                if type(op) not in _COMPARE:
                    raise ValueError(f"{text!r}: only <, <=, >, >=, == and != compare")
                ops.append(_COMPARE[type(op)])

            def compare(props: dict[str, PropertyValue]) -> bool:
                values = [t(props) for t in terms]
                try:
                    return all(op(a, b) for op, a, b in zip(ops, values, values[1:]))
                except TypeError:
                    raise PipelineError([f"where: cannot compare {values} in {text!r}"]) from None

            return compare
        raise ValueError(f"{text!r}: write comparisons joined by and / or, e.g. \"difficulty >= 8\"")

    return test(tree)
