"""The first step of an observing node since its reset, kept out of the turn loop.

Everything an observing `one`/`all` node does before its match upkeep (the present, the future,
its potentials or a searched plan) happens here, in one call made only for such nodes: inline in
`machine.run_program`, the plan's growing store was a variable rebound inside the turn loop and
the extra live values slowed every plain `one` step (3-15%) though none of it ran.
"""

from __future__ import annotations

import numpy as np

from pipeline.jit import compiled
from pipeline.rewrite.nodes.observation import start_observation
from pipeline.rewrite.nodes.search import plan

# traj_at[nnodes] holds the rows of the plan store in use (each plan is appended after them).
USED = -1


@compiled
def start_observing(
    c: int,
    all_at_once: bool,  # an `all` node: its plan's steps are maximal sets of matches
    state: np.ndarray,
    mx: int,
    my: int,
    xb: int,
    ncolors: int,
    observes: np.ndarray,
    observe_lo: np.ndarray,
    observe_hi: np.ndarray,
    futures: np.ndarray,  # int64[slots, cells]: a future per observing node
    future_slot: np.ndarray,
    future_set: np.ndarray,  # bool per node: its future is set since its last reset
    search: np.ndarray,
    store: np.ndarray,
    field_slot: np.ndarray,
    lo: int,
    hi: int,
    rw: np.ndarray,
    rh: np.ndarray,
    roff: np.ndarray,
    waves: np.ndarray,
    outs: np.ndarray,
    changes: np.ndarray,
    nchanges: int,
    count: np.ndarray,
    rng: np.random.Generator,
    plans: list,  # [uint8[rows, cells]]: the searching nodes' trajectories, a state per row
    traj_at: np.ndarray,  # int64[nodes + 1]: a node's first plan row; the last entry: rows used
    traj_len: np.ndarray,  # int64[nodes]: a node's plan length, -1 without a plan
) -> tuple[np.ndarray, int]:
    """Set node `c`'s present and future (and its potentials, or its plan when it searches);
    `future_set[c]` says afterwards whether an observed value was on the grid (if not, the node
    fails this step). Returns the change log and its length."""
    future = futures[future_slot[c]]
    ready, changes, nchanges = start_observation(
        state, mx, my, xb, ncolors, observes, observe_lo[c], observe_hi[c], future,
        search[c, 0] == 0, store, field_slot[c] * ncolors, lo, hi, rw, rh, roff, waves, outs, changes, nchanges, count,
    )
    future_set[c] = ready
    traj_len[c] = -1
    if ready and search[c, 0] > 0:
        grown, at, length = plan(
            state, mx, my, xb, ncolors, future, lo, hi, rw, rh, roff, waves, outs, all_at_once,
            np.int64(search[c, 1]), search[c, 2], rng, plans[0], traj_at[USED],
        )
        plans[0] = grown
        traj_at[c] = at
        traj_len[c] = length
        traj_at[USED] = at + max(length, 0)
    return changes, nchanges
