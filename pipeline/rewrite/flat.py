"""A rule program as the arrays the compiled interpreter runs (FlatProgram), and the rows they
are built from (FlatRows): each kind's unit (kinds/) writes its node's row when flattened."""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from pipeline.rewrite.codes import CONVCHAIN, CONVOLUTION, MATCHING
from pipeline.rewrite.node import Node
from pipeline.rewrite.nodes import convchain_node, convolution_node
from pipeline.rewrite.rule import Rule


# Numbers a child node (and its subtree) under its parent: (child, parent number) -> its number.
Visit = Callable[[Node, int], int]


class FlatProgram(NamedTuple):
    """The program as arrays. `machine.run_program` takes the arrays every program has as one
    tuple, and those of field-guided (and observing) choices, convolution, convchain and
    observing nodes as four more, each None when the program has no such node: numba then
    compiles the machine without that code, so a first build whose programs use none of them
    compiles none of it (their kernels are most of the machine's compile time: 49.5 s against
    11.8 s for a plain program with every kind compiled in). See `arguments`."""

    kind: np.ndarray
    parent: np.ndarray
    end: np.ndarray
    child_ptr: np.ndarray
    children: np.ndarray
    rule_lo: np.ndarray
    rule_hi: np.ndarray
    steps: np.ndarray
    path_params: np.ndarray
    rw: np.ndarray
    rh: np.ndarray
    roff: np.ndarray
    waves: np.ndarray
    outs: np.ndarray
    prob: np.ndarray
    pair_ptr: np.ndarray
    pair_rule: np.ndarray
    pair_x: np.ndarray
    pair_y: np.ndarray
    field_lo: np.ndarray  # fields of node k: rows field_lo[k] .. field_hi[k] - 1 of `fields`
    field_hi: np.ndarray
    fields: np.ndarray  # int64[f, 4]: value, zero wave, on wave, flags
    field_slot: np.ndarray  # node k's potentials: slot field_slot[k] of the run's store, or -1
    inversed: np.ndarray  # per node: bit set of the values whose fields are inversed
    temperature: np.ndarray
    conv_lo: np.ndarray  # convolution rules of node k: rows conv_lo[k] .. conv_hi[k] - 1
    conv_hi: np.ndarray
    conv_flags: np.ndarray  # per node: convolution_node.MOORE | PERIODIC
    conv_rules: np.ndarray  # int64[c, 4]: input, output, bit set of the sums that fire, conditional
    conv_counts: np.ndarray  # int64[c, ncolors]: how much a neighbour of each value adds to the sum
    conv_p: np.ndarray
    cc_params: np.ndarray  # int64[nodes, convchain_node.NPARAMS]
    cc_weights: np.ndarray  # float64: every convchain node's pattern weights, end to end
    observe_lo: np.ndarray  # observations of node k: rows observe_lo[k] .. observe_hi[k] - 1 of `observes`
    observe_hi: np.ndarray
    observes: np.ndarray  # int64[o, 3]: value, from value, to wave
    future_slot: np.ndarray  # node k's future: row future_slot[k] of the run's futures, or -1
    search: np.ndarray  # float64[k, 3]: searches (0/1), limit, depthCoefficient

    def arguments(self) -> tuple[Any, ...]:
        """(core, steering, convolution, convchain, observation) as `machine.run_program` takes them:
        plain tuples, which numba's dispatcher types in C where a named tuple costs more than a
        microsecond a run in Python (a short model's run is ~200 us)."""
        core = (*self[: self._fields.index("field_lo")], self.field_slot, self.temperature, self.future_slot)
        steering = (self.field_lo, self.field_hi, self.fields, self.inversed)
        conv = (self.conv_lo, self.conv_hi, self.conv_flags, self.conv_rules, self.conv_counts, self.conv_p)
        chain = (self.cc_params, self.cc_weights)
        observe = (self.observe_lo, self.observe_hi, self.observes, self.search)
        kinds = set(self.kind.tolist())
        return (
            core,
            steering if bool((self.field_slot >= 0).any()) else None,
            conv if CONVOLUTION in kinds else None,
            chain if CONVCHAIN in kinds else None,
            observe if bool((self.future_slot >= 0).any()) else None,
        )


class FlatRows:
    """The program's arrays as lists while its nodes are numbered in preorder: `open` gives a
    node its row (every column at its default), its kind's unit fills in what it has, `close`
    ends it, and `finish` packs the lists into a FlatProgram."""

    def __init__(self) -> None:
        self.kinds: list[int] = []
        self.parents: list[int] = []
        self.ends: list[int] = []
        self.kids: list[list[int]] = []
        self.lo: list[int] = []
        self.hi: list[int] = []
        self.steps: list[int] = []
        self.paths: list[list[int]] = []
        self.rules: list[Rule] = []
        self.field_rows: list[list[int]] = []
        self.field_lo: list[int] = []
        self.field_hi: list[int] = []
        self.slots: list[int] = []
        self.inversed: list[int] = []
        self.temperature: list[float] = []
        self.conv_lo: list[int] = []
        self.conv_hi: list[int] = []
        self.conv_flags: list[int] = []
        self.conv_rules: list[Any] = []  # kinds.convolution.ConvolutionRule
        self.cc_params: list[list[int]] = []
        self.cc_weights: list[np.ndarray] = []
        self.cc_at = 0
        self.observe_rows: list[list[int]] = []
        self.observe_lo: list[int] = []
        self.observe_hi: list[int] = []
        self.future_slots: list[int] = []
        self.searches: list[list[float]] = []

    def open(self, parent: int) -> int:
        """A new node's number, its row at the defaults (kind -1 until its unit sets it)."""
        k = len(self.kinds)
        self.kinds.append(-1)
        self.parents.append(parent)
        self.ends.append(0)
        self.kids.append([])
        self.lo.append(len(self.rules))
        self.hi.append(len(self.rules))
        self.paths.append([0, 0, 0, 0, 0])
        self.steps.append(0)
        self.field_lo.append(len(self.field_rows))
        self.field_hi.append(len(self.field_rows))
        self.slots.append(-1)
        self.inversed.append(0)
        self.temperature.append(0.0)
        self.conv_lo.append(len(self.conv_rules))
        self.conv_hi.append(len(self.conv_rules))
        self.conv_flags.append(0)
        self.cc_params.append([0, 0, 0, 0, 0, -1])
        self.observe_lo.append(len(self.observe_rows))
        self.observe_hi.append(len(self.observe_rows))
        self.future_slots.append(-1)
        self.searches.append([0.0, -1.0, 0.0])
        return k

    def close(self, k: int) -> None:
        """Node k and its subtree are written: its ranges end here."""
        self.hi[k] = len(self.rules)
        self.conv_hi[k] = len(self.conv_rules)
        self.ends[k] = len(self.kinds)

    def finish(self, ncolors: int) -> FlatProgram:
        """The arrays, for a program of `ncolors` values."""
        kinds, kids, rules, lo, hi = self.kinds, self.kids, self.rules, self.lo, self.hi
        conv_rules, cc_weights = self.conv_rules, self.cc_weights
        child_ptr = np.zeros(len(kinds) + 1, dtype=np.int64)
        child_ptr[1:] = np.cumsum([len(c) for c in kids])
        children = np.array([c for cs in kids for c in cs] or [0], dtype=np.int64)

        sizes = [r.inp.size for r in rules]
        roff = np.zeros(len(rules), dtype=np.int64)
        if rules:
            roff[1:] = np.cumsum(sizes)[:-1]
        waves = np.concatenate([r.inp.ravel() for r in rules]) if rules else np.zeros(1, dtype=np.int64)
        outs = np.concatenate([r.out.ravel() for r in rules]) if rules else np.zeros(1, dtype=np.uint8)
        # For node k and value c, every (rule, position) whose input accepts c.
        pair_ptr = np.zeros(len(kinds) * ncolors + 1, dtype=np.int64)
        pr: list[int] = []
        px: list[int] = []
        py: list[int] = []
        for k in range(len(kinds)):
            for c in range(ncolors):
                for r in range(lo[k], hi[k]) if kinds[k] in MATCHING else ():
                    ys, xs = np.nonzero((rules[r].inp >> c) & 1)
                    pr.extend([r] * len(xs))
                    px.extend(int(x) for x in xs)
                    py.extend(int(y) for y in ys)
                pair_ptr[k * ncolors + c + 1] = len(pr)
        return FlatProgram(
            kind=np.array(kinds, dtype=np.int64),
            parent=np.array(self.parents, dtype=np.int64),
            end=np.array(self.ends, dtype=np.int64),
            child_ptr=child_ptr,
            children=children,
            rule_lo=np.array(lo, dtype=np.int64),
            rule_hi=np.array(hi, dtype=np.int64),
            steps=np.array(self.steps, dtype=np.int64),
            path_params=np.array(self.paths, dtype=np.int64).reshape(len(kinds), 5),
            rw=np.array([r.inp.shape[1] for r in rules], dtype=np.int64),
            rh=np.array([r.inp.shape[0] for r in rules], dtype=np.int64),
            roff=roff,
            waves=waves.astype(np.int64),
            outs=outs.astype(np.uint8),
            prob=np.array([r.p for r in rules], dtype=np.float64),
            pair_ptr=pair_ptr,
            pair_rule=np.array(pr or [0], dtype=np.int64),
            pair_x=np.array(px or [0], dtype=np.int64),
            pair_y=np.array(py or [0], dtype=np.int64),
            field_lo=np.array(self.field_lo, dtype=np.int64),
            field_hi=np.array(self.field_hi, dtype=np.int64),
            fields=np.array(self.field_rows or [[0, 0, 0, 0]], dtype=np.int64).reshape(-1, 4),
            field_slot=np.array(self.slots, dtype=np.int64),
            inversed=np.array(self.inversed, dtype=np.int64),
            temperature=np.array(self.temperature, dtype=np.float64),
            conv_lo=np.array(self.conv_lo, dtype=np.int64),
            conv_hi=np.array(self.conv_hi, dtype=np.int64),
            conv_flags=np.array(self.conv_flags, dtype=np.int64),
            conv_rules=np.array(
                [[r.input, r.output, convolution_node.sum_mask(r.sums), 1 if r.values else 0] for r in conv_rules] or [[0, 0, 0, 0]],
                dtype=np.int64,
            ),
            conv_counts=np.array(
                [[r.values.count(c) for c in range(ncolors)] for r in conv_rules] or [[0] * ncolors], dtype=np.int64
            ).reshape(-1, ncolors),
            conv_p=np.array([r.p for r in conv_rules] or [1.0], dtype=np.float64),
            cc_params=np.array(self.cc_params, dtype=np.int64).reshape(len(kinds), convchain_node.NPARAMS),
            cc_weights=np.concatenate(cc_weights) if cc_weights else np.ones(1, dtype=np.float64),
            observe_lo=np.array(self.observe_lo, dtype=np.int64),
            observe_hi=np.array(self.observe_hi, dtype=np.int64),
            observes=np.array(self.observe_rows or [[0, 0, 0]], dtype=np.int64).reshape(-1, 3),
            future_slot=np.array(self.future_slots, dtype=np.int64),
            search=np.array(self.searches, dtype=np.float64).reshape(-1, 3),
        )
