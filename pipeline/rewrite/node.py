"""What every node of a rule program is: the kinds' units (kinds/) each subclass it with their
data, so that a node holding children needs none of the other kinds to name their type."""

from __future__ import annotations


class Node:
    """A node of a rule program (a frozen dataclass of one of the kinds in kind_table.KINDS)."""

    __slots__ = ()
