"""Rules and the alphabet they are written in.

`RBB=GGR` rewrites a red-black-black row into green-green-red; rows of a 2D pattern are
separated by `/` (`BBB/BWB=BBB/BBB`). In the input, `*` matches any value and a union symbol
matches any of its values; in the output, `*` leaves the cell as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pipeline.rewrite import symmetry

KEEP = 255  # output cell that leaves the grid unchanged
MAX_VALUES = 62  # input cells are int64 bit sets of values


class UnionError(ValueError):
    """A union that cannot be, naming its symbol (a recipe reports it under `unions.SYMBOL`)."""

    def __init__(self, symbol: str, message: str):
        super().__init__(message)
        self.symbol = symbol


@dataclass(frozen=True)
class Alphabet:
    """The grid's values (one character each, the first is the fill) and the input wildcards."""

    values: str
    unions: tuple[tuple[str, str], ...] = ()  # (symbol, values it stands for)

    def __post_init__(self) -> None:
        if not self.values:
            raise ValueError("values must name at least one symbol")
        if len(self.values) > MAX_VALUES:
            raise ValueError(f"at most {MAX_VALUES} values (got {len(self.values)})")
        for ch in self.values:
            if ch in "*=/ " or not ch.isprintable():
                raise ValueError(f"{ch!r} cannot be a value: *, =, / and spaces are rule syntax")
        repeated = sorted({c for c in self.values if self.values.count(c) > 1})
        if repeated:
            raise ValueError(f"values repeat {', '.join(map(repr, repeated))}")
        for sym, vals in self.unions:
            if len(sym) != 1 or sym in self.values or sym in "*=/ ":
                raise UnionError(sym, f"union symbol {sym!r} must be one character that is not a value or rule syntax")
            unknown = [c for c in vals if c not in self.values]
            if unknown or not vals:
                raise UnionError(sym, f"union {sym!r} = {vals!r}: {'unknown values ' + repr(''.join(unknown)) if unknown else 'no values'}")

    def wave(self, ch: str) -> int:
        """Bit set of the values an input character accepts."""
        if ch == "*":
            return (1 << len(self.values)) - 1
        i = self.values.find(ch)
        if i >= 0:
            return 1 << i
        for sym, vals in self.unions:
            if sym == ch:
                return sum(1 << self.values.index(c) for c in vals)
        rows = "; rows of a pattern are separated by /, e.g. \"BB/BW=BB/BB\"" if ch in "\n\t\r" else ""
        raise ValueError(f"unknown symbol {ch!r} (values are {self.values!r}{self._union_note()}){rows}")

    def waves(self, chars: str) -> int:
        """Bit set of the values that any of `chars` accepts (`from = "RG"` in a path or field)."""
        total = 0
        for ch in chars:
            total |= self.wave(ch)
        return total

    def value(self, ch: str) -> int:
        """Index of an output character; `*` is KEEP."""
        if ch == "*":
            return KEEP
        i = self.values.find(ch)
        if i < 0:
            raise ValueError(f"output symbol {ch!r} is not a value (values are {self.values!r}; unions match only in inputs)")
        return i

    def _union_note(self) -> str:
        return "; unions " + ", ".join(s for s, _ in self.unions) if self.unions else ""


@dataclass(frozen=True, eq=False)
class Rule:
    """One orientation of a rule: input bit sets and output values, both [y, x]."""

    inp: np.ndarray  # int64 (h, w)
    out: np.ndarray  # uint8 (h, w), KEEP where the output is `*`
    p: float = 1.0  # chance that a `prl` node applies a match

    def rotated(self) -> Rule:
        return Rule(np.ascontiguousarray(np.rot90(self.inp)), np.ascontiguousarray(np.rot90(self.out)), self.p)

    def mirrored(self) -> Rule:
        return Rule(np.ascontiguousarray(self.inp[:, ::-1]), np.ascontiguousarray(self.out[:, ::-1]), self.p)

    def same(self, other: Rule) -> bool:
        return (
            self.inp.shape == other.inp.shape
            and bool(np.array_equal(self.inp, other.inp))
            and bool(np.array_equal(self.out, other.out))
        )

    def variants(self, group: str) -> list[Rule]:
        return symmetry.variants(self, group, Rule.rotated, Rule.mirrored, Rule.same)


def parse_pattern(text: str) -> list[str]:
    """Rows of a pattern such as `BBB/BWB`, checked to be a rectangle."""
    if " " in text.strip():
        shown = text.strip() if len(text.strip()) <= 40 else text.strip()[:37] + "..."  # a 3D pattern runs to hundreds
        raise ValueError(f"pattern {shown!r} has layers (separated by spaces): only 2D patterns are supported (a 3D model?)")
    rows = text.strip().split("/")
    if not rows[0] or any(len(r) != len(rows[0]) for r in rows):
        raise ValueError(f"pattern {text!r} is not a rectangle (every row, split by /, needs the same length)")
    return rows


def parse_rule(inp: str, out: str, alphabet: Alphabet, p: float = 1.0) -> Rule:
    """A rule from its input and output patterns."""
    rows_in = parse_pattern(inp)
    rows_out = parse_pattern(out)
    if (len(rows_in), len(rows_in[0])) != (len(rows_out), len(rows_out[0])):
        raise ValueError(
            f"input {inp!r} is {len(rows_in[0])}x{len(rows_in)} but output {out!r} is {len(rows_out[0])}x{len(rows_out)}"
        )
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be between 0 and 1 (got {p})")
    waves = np.array([[alphabet.wave(c) for c in row] for row in rows_in], dtype=np.int64)
    values = np.array([[alphabet.value(c) for c in row] for row in rows_out], dtype=np.uint8)
    return Rule(waves, values, p)


def split_rule(text: str) -> tuple[str, str]:
    """`"RBB=GGR"` -> ("RBB", "GGR")."""
    if text.count("=") != 1:
        raise ValueError(f"rule {text!r} must be INPUT=OUTPUT, e.g. \"RBB=GGR\"")
    left, right = text.split("=")
    return left.strip(), right.strip()
