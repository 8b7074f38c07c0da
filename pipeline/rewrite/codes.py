"""The codes the compiled interpreter (machine.py) dispatches on, one per node kind: numba
switches on integers, and each kind's unit (kinds/) writes its code when it is flattened."""

from __future__ import annotations

ONE, ALL, PRL, MARKOV, SEQUENCE, PATH, CONVOLUTION, CONVCHAIN = 0, 1, 2, 3, 4, 5, 6, 7
# Nodes that make a new grid and run their children on it (see program.run).
MAP, WFC = 8, 9

# Kinds that keep a list of matches between turns (see nodes/matching.py).
MATCHING = (ONE, ALL)
