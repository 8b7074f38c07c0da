"""Programs written in a recipe: TOML tables that mirror the node tree.

    program = { markov = [ { one = "RBB=GGR" }, { one = "RGG=WWR" } ] }

A rule node is a table with one of `one`, `all`, `prl` holding a rule or a list of rules, plus
optional `steps`, `symmetry`, `p`, and `fields` or `observe` (with `temperature`; `observe` also
with `search`, `limit`, `depth_coefficient`) that guide which match is applied; a rule is `"IN=OUT"` or a table `{ rule = "IN=OUT",
p = 0.5, symmetry = "()" }`. A branch is `{ markov = [...] }` or `{ sequence = [...] }` with an
optional `symmetry`. `{ path = { from = "R", to = "W", on = "B", color = "D" } }` draws paths.
`{ map = ["B=DD/DA"], scale = [2, 2], values = "DA", then = [...] }` draws a new grid, twice the
size and in the values `DA`, and runs the `then` nodes on it.
`{ convolution = [...], neighborhood = "Moore" }` is a cellular automaton step.
`{ convchain = { sample = "Maze", on = "B", black = "D", white = "A", n = 2, steps = 10 } }`
resamples the `on` cells after `samples/Maze.png`, read through the stage's resources folder.
`{ wfc = { sample = "Flowers", n = 3 }, values = "zYgN", rules = ["B=N|g"], then = [...] }`
collapses a new grid after a sample's patterns (or a `tileset`'s tiles), as a map does.
This module reads what every node has (its one kind, its `symmetry`); the kind's unit in
kinds/, found in kind_table.KINDS, reads the rest.
"""

from __future__ import annotations

from typing import Any

from pipeline.errors import did_you_mean, toml_text
from pipeline.rewrite.kind_table import KINDS, NODE_KINDS
from pipeline.rewrite.node import Node
from pipeline.rewrite.program_error import ProgramError
from pipeline.rewrite.resources import ResourceReader
from pipeline.rewrite.rule import Alphabet
from pipeline.rewrite.toml_table import TomlContext, symmetry_of


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
    group = symmetry_of(data, group, where)

    def child(data: Any, alphabet: Alphabet, group: str, where: str) -> Node:
        return parse_node(data, alphabet, group, where, read)

    return KINDS[kinds[0]].read_toml(data, TomlContext(alphabet, group, where, read, child))
