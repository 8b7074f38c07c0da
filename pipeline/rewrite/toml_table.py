"""What every kind's TOML reader works with: where the node is and how to read its children
(TomlContext), and the checks common to all tables (keys, probabilities, symmetry)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from pipeline.errors import toml_text
from pipeline.rewrite import symmetry
from pipeline.rewrite.node import Node
from pipeline.rewrite.program_error import ProgramError
from pipeline.rewrite.resources import ResourceReader
from pipeline.rewrite.rule import Alphabet

# Reads a child node's table: (table, the grid's alphabet, inherited symmetry group, where).
ChildReader = Callable[[Any, Alphabet, str, str], Node]


@dataclass(frozen=True)
class TomlContext:
    """A node's table as its kind reads it: the grid's `alphabet`, the symmetry `group` (the
    table's own `symmetry` already applied), `where` the table is (`markov[1]`), `read` for
    resource files (samples, tilesets) and `child` to read the nodes it holds."""

    alphabet: Alphabet
    group: str
    where: str
    read: ResourceReader | None
    child: ChildReader

    def key(self, name: str) -> str:
        """Where the table's key `name` is, for messages."""
        return f"{self.where}.{name}" if self.where else name


def symmetry_of(data: dict[str, Any], inherited: str, where: str) -> str:
    """The group a table's `symmetry` sets, else the one it inherits."""
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
