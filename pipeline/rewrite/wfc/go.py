"""Running a wfc node's collapse: from the old grid to the new one.

MarkovJunior spends turns on a wfc node as follows: one to set the wave up (start bans,
propagation and the search for a good seed), one per observation of the run it keeps, and one
more that finds nothing left to observe and writes the new grid; only then do the children run.
When the start is contradictory or no try succeeds, the node fails on its first turn.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pipeline.rewrite.kinds.wfc import WfcNode
from pipeline.rewrite.wfc import solver
from pipeline.rewrite.wfc.overlap import OverlapModel


class WfcResult(NamedTuple):
    state: np.ndarray | None  # (H, W) uint8 values of node.alphabet; None when the node fails
    turns: int  # turns MarkovJunior spends on the node itself (0 when it fails)
    frames: np.ndarray  # (f, H, W): the grid as the collapse went (with `record`), else empty


def new_size(node: WfcNode, w: int, h: int) -> tuple[int, int]:
    """(W, H) of the grid the node makes from a w x h grid."""
    if isinstance(node.model, OverlapModel):
        return w, h
    step = node.model.size - node.overlap
    return step * w + node.overlap, step * h + node.overlap


def go_wfc(node: WfcNode, state: np.ndarray, rng: np.random.Generator, record: int = 0) -> WfcResult:
    """Collapse the node's wave over `state` ((h, w) values of the old alphabet, not modified),
    keeping up to `record` evenly spaced pictures of the collapse."""
    h, w = state.shape
    model = node.model
    if isinstance(model, OverlapModel):
        found = model.patterns(w, h)
        choices, weights, ptr, data = found.patterns, found.weights, found.prop_ptr, found.prop_data
        # A pattern may start where the old value allows the value at its top-left corner.
        table = node.start[:, choices[:, 0, 0]] if len(choices) else np.zeros((len(node.start), 0), np.bool_)
    else:
        choices, weights, ptr, data = model.tiles, model.weights, model.prop_ptr, model.prop_data
        table = node.start
    nothing = np.zeros((0, 1, 1), dtype=np.uint8)
    if len(weights) == 0:
        return WfcResult(None, 0, nothing)
    allowed = np.ascontiguousarray(table[state.reshape(-1)])
    chosen = np.empty(w * h, dtype=np.int64)
    shots = np.empty((record, w * h), dtype=np.int64)
    status, observations, nframes, _ = solver.solve(
        w, h, node.n, node.periodic, ptr, data, weights, allowed, node.shannon, node.tries, rng, chosen, shots
    )
    if status != solver.OK:
        return WfcResult(None, 0, nothing)
    out = _draw(node, choices, chosen.reshape(h, w))
    frames = np.stack([_draw(node, choices, shots[f].reshape(h, w)) for f in range(nframes)]) if nframes else nothing
    return WfcResult(out, observations + 2, frames)


def _draw(node: WfcNode, choices: np.ndarray, picks: np.ndarray) -> np.ndarray:
    """The new grid from each node's pattern or tile (-1, no choice, draws the first)."""
    picks = np.maximum(picks, 0)
    h, w = picks.shape
    if isinstance(node.model, OverlapModel):
        # Every cell is the top-left corner of its own node's pattern (the wave is periodic).
        return np.ascontiguousarray(choices[picks, 0, 0], dtype=np.uint8)
    s, ov = node.model.size, node.overlap
    if ov == 0:
        return np.ascontiguousarray(choices[picks].transpose(0, 2, 1, 3).reshape(h * s, w * s), dtype=np.uint8)
    big_w, big_h = new_size(node, w, h)
    out = np.zeros((big_h, big_w), dtype=np.uint8)
    for y in range(h):  # one row of tiles at a time; later tiles cover shared cells
        for x in range(w):
            out[y * (s - ov) : y * (s - ov) + s, x * (s - ov) : x * (s - ov) + s] = choices[picks[y, x]]
    return out
