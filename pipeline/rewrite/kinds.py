"""The node kinds of a rule program, in one table: the names the TOML and XML readers accept and
the codes the compiled interpreter dispatches on (`nodes/`, one module per kind)."""

from __future__ import annotations

ONE, ALL, PRL, MARKOV, SEQUENCE, PATH, CONVOLUTION, CONVCHAIN = 0, 1, 2, 3, 4, 5, 6, 7
# Nodes that make a new grid and run their children on it (see program.run).
MAP, WFC = 8, 9

# Nodes that rewrite with rules, nodes that run other nodes, and the rest.
RULE_KINDS: tuple[str, ...] = ("one", "all", "prl")
BRANCH_KINDS: tuple[str, ...] = ("markov", "sequence")
OTHER_KINDS: tuple[str, ...] = ("path", "convolution", "convchain")
GRID_KINDS: tuple[str, ...] = ("map", "wfc")
NODE_KINDS: tuple[str, ...] = (*RULE_KINDS, *BRANCH_KINDS, *OTHER_KINDS, *GRID_KINDS)

CODES: dict[str, int] = {
    "one": ONE, "all": ALL, "prl": PRL, "markov": MARKOV, "sequence": SEQUENCE, "path": PATH,
    "convolution": CONVOLUTION, "convchain": CONVCHAIN, "map": MAP, "wfc": WFC,
}

# Kinds that keep a list of matches between turns (see nodes/matching.py).
MATCHING = (ONE, ALL)
