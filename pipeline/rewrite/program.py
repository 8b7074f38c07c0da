"""A rule program as a tree of nodes, and its flattening into the arrays the interpreter runs.

Node kinds (MarkovJunior's):
- `one`: apply one match, chosen uniformly among all current matches of all its rules;
- `all`: apply a random maximal set of matches whose written cells do not overlap, in one step;
- `prl`: apply every match at once, each with its rule's probability `p`;
- `markov`: each step, run the first child that applies; fail when none does;
- `sequence`: run each child until it fails, then the next; fail after the last;
- `path`: draw a shortest path from a `from` cell to a `to` cell over `on` cells;
- `wfc`: wave function collapse on a new grid of its own values, then its children on that grid.
A rule node's `steps` limits it to that many successful steps (0: no limit).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal, NamedTuple, Union

import numpy as np

from pipeline.rewrite import machine
from pipeline.rewrite.kinds import CODES, MATCHING
from pipeline.rewrite.nodes import fields, path_node
from pipeline.rewrite.nodes.matching import rule_bits
from pipeline.rewrite.rule import Alphabet, Rule
from pipeline.rewrite.wfc.overlap import OverlapModel
from pipeline.rewrite.wfc.tiles import Tileset

RuleKind = Literal["one", "all", "prl"]
BranchKind = Literal["markov", "sequence"]


@dataclass(frozen=True)
class Field:
    """A potential field guiding a rule node's choice (see nodes/fields.py): distances over `on`
    cells from the `zero` cells, for the cells that get `value`."""

    value: int  # value index
    zero: int  # bit sets of values
    on: int
    inversed: bool = False  # `zero` are the `from` cells (else the `to` cells)
    recompute: bool = False  # on every step (else on the first after a reset)
    essential: bool = False  # no zero cell makes the node fail


def make_field(alphabet: Alphabet, value: str, on: str, zero: str, inversed: bool, recompute: bool, essential: bool) -> Field:
    """A Field from its symbols as a program writes them (`for`, `on`, `to` or `from`)."""
    if len(value) != 1:
        raise ValueError(f"for={value!r} must be one value")
    if not zero:
        raise ValueError("a field needs the symbols it counts from (to or from)")
    return Field(alphabet.value(value), alphabet.waves(zero), alphabet.waves(on), inversed, recompute, essential)


@dataclass(frozen=True)
class RuleNode:
    kind: RuleKind
    rules: tuple[Rule, ...]  # every orientation, already expanded by symmetry
    steps: int = 0
    fields: tuple[Field, ...] = ()
    temperature: float = 0.0  # only used with fields, as in the reference


@dataclass(frozen=True)
class PathNode:
    start: int  # bit sets of values
    finish: int
    on: int
    color: int  # value index
    inertia: bool = False
    longest: bool = False
    edges: bool = False


@dataclass(frozen=True)
class BranchNode:
    kind: BranchKind
    children: tuple[Node, ...]


@dataclass(frozen=True, eq=False)
class WfcNode:
    """`wfc` (see wfc/go.py): collapse a new grid of `alphabet`'s values from a sample's NxN
    patterns (OverlapModel) or a tileset (Tileset, one tile per old cell), then run `children`
    in sequence on it. `start[v, k]`: an old cell of value v may become choice k, a value of
    the sample (overlapping: the value at a pattern's top-left corner) or a tile variant."""

    alphabet: Alphabet
    model: OverlapModel | Tileset
    start: np.ndarray  # bool (old values, choices)
    n: int  # pattern size (1 for tiles)
    periodic: bool
    shannon: bool
    tries: int
    children: tuple[Node, ...]
    overlap: int = 0  # tiles: cells shared by neighbouring tiles


Node = Union[RuleNode, PathNode, BranchNode, WfcNode]
Origin = Literal["none", "center", "random"]


@dataclass(frozen=True)
class Program:
    alphabet: Alphabet
    root: Node
    origin: Origin = "none"


class FlatProgram(NamedTuple):
    """The program as arrays, which `machine.run_program` takes as one argument (a named tuple
    of arrays is passed into compiled code as it is) and unpacks in this order."""

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


@functools.lru_cache(maxsize=16)
def flatten(program: Program) -> FlatProgram:
    """Number the nodes in preorder (so a subtree is a range) and pack the rules into arrays."""
    root = program.root
    if not isinstance(root, BranchNode):
        root = BranchNode("markov", (root,))  # as MarkovJunior wraps a lone rule node
    ncolors = len(program.alphabet.values)
    kinds: list[int] = []
    parents: list[int] = []
    ends: list[int] = []
    kids: list[list[int]] = []
    lo: list[int] = []
    hi: list[int] = []
    steps: list[int] = []
    paths: list[list[int]] = []
    rules: list[Rule] = []
    field_rows: list[list[int]] = []
    field_lo: list[int] = []
    field_hi: list[int] = []
    slots: list[int] = []
    inversed: list[int] = []
    temperature: list[float] = []

    def visit(node: Node, parent: int) -> int:
        k = len(kinds)
        parents.append(parent)
        ends.append(0)
        kids.append([])
        lo.append(len(rules))
        hi.append(len(rules))
        paths.append([0, 0, 0, 0, 0])
        steps.append(0)
        field_lo.append(len(field_rows))
        field_hi.append(len(field_rows))
        slots.append(-1)
        inversed.append(0)
        temperature.append(0.0)
        if isinstance(node, RuleNode):
            kinds.append(CODES[node.kind])
            rules.extend(node.rules)
            steps[k] = node.steps
            if node.fields:
                # One field per value, the last given winning, in value order: the reference
                # keeps them in an array indexed by value.
                by_value = {f.value: f for f in node.fields}
                for value in sorted(by_value):
                    f = by_value[value]
                    flags = (
                        (fields.RECOMPUTE if f.recompute else 0)
                        | (fields.ESSENTIAL if f.essential else 0)
                        | (fields.INVERSED if f.inversed else 0)
                    )
                    field_rows.append([f.value, f.zero, f.on, flags])
                    if f.inversed:
                        inversed[k] |= 1 << f.value
                field_hi[k] = len(field_rows)
                slots[k] = max(slots) + 1
                temperature[k] = node.temperature
        elif isinstance(node, PathNode):
            kinds.append(CODES["path"])
            flags = (
                (path_node.INERTIA if node.inertia else 0)
                | (path_node.LONGEST if node.longest else 0)
                | (path_node.EDGES if node.edges else 0)
            )
            paths[k] = [node.start, node.finish, node.on, node.color, flags]
        else:
            kinds.append(CODES[node.kind])
            for child in node.children:
                kids[k].append(visit(child, k))
        hi[k] = len(rules)
        ends[k] = len(kinds)
        return k

    visit(root, -1)
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
        parent=np.array(parents, dtype=np.int64),
        end=np.array(ends, dtype=np.int64),
        child_ptr=child_ptr,
        children=children,
        rule_lo=np.array(lo, dtype=np.int64),
        rule_hi=np.array(hi, dtype=np.int64),
        steps=np.array(steps, dtype=np.int64),
        path_params=np.array(paths, dtype=np.int64).reshape(len(kinds), 5),
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
        field_lo=np.array(field_lo, dtype=np.int64),
        field_hi=np.array(field_hi, dtype=np.int64),
        fields=np.array(field_rows or [[0, 0, 0, 0]], dtype=np.int64).reshape(-1, 4),
        field_slot=np.array(slots, dtype=np.int64),
        inversed=np.array(inversed, dtype=np.int64),
        temperature=np.array(temperature, dtype=np.float64),
    )


class RunResult(NamedTuple):
    state: np.ndarray  # (h, w) uint8 value indices
    turns: int
    finished: bool
    frames: np.ndarray  # (f, h, w): the grid every `frame_every` turns, then the final grid
    frame_every: int


def run(
    program: Program,
    state: np.ndarray,
    rng: np.random.Generator,
    max_steps: int,
    record_frames: int = 0,
    verify: bool = False,
) -> RunResult:
    """Run `program` on `state` (h x w value indices, not modified). With `record_frames`, keep
    at most that many evenly spaced snapshots, the last one being the final grid. `verify`
    checks every incremental match update against a full rescan (slow; for tests)."""
    h, w = state.shape
    xb = max(w - 1, 1).bit_length()  # rows padded to 2**xb cells (see machine.run_program)
    padded = np.zeros((h, 1 << xb), dtype=np.uint8)
    padded[:, :w] = state
    if program.origin == "center":
        padded[h // 2, w // 2] = 1
    elif program.origin == "random":
        cell = int(rng.integers(0, w * h))
        padded[cell // w, cell % w] = 1
    grid = padded.ravel()
    cap = max(record_frames - 1, 0)
    frames = np.empty((cap, grid.size), dtype=np.uint8)
    flat = flatten(program)
    scratch = np.zeros(grid.size << rule_bits(len(flat.rw)), dtype=np.bool_) if verify else None
    outcome, turns, nframes, every = machine.run_program(
        grid, w, h, xb, len(program.alphabet.values), flat, rng, max_steps, 1 if cap else 0, frames, scratch
    )
    if outcome == machine.MISMATCH:
        raise AssertionError(f"incremental matches disagree with a full rescan at turn {turns}")
    shots = np.concatenate([frames[:nframes], grid[None, :]]) if record_frames else grid[None, :]
    shots = shots.reshape(-1, h, 1 << xb)[:, :, :w]
    return RunResult(np.ascontiguousarray(shots[-1]), int(turns), outcome == machine.FINISHED, np.ascontiguousarray(shots), int(every))
