"""A rule program: its tree of nodes (Program), its flattening into the arrays the interpreter
runs, and its run, grid after grid.

The node kinds are MarkovJunior's, each in its unit in kinds/ (one, all and prl in rules.py;
markov and sequence in branches.py; path, convolution, convchain, map, wfc), all found from
kind_table.KINDS. A `map` or `wfc` node makes a new grid: the machine hands it over to `run`,
which draws the grid here and goes on with the node's children on it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np

from pipeline.rewrite import machine
from pipeline.rewrite.flat import FlatProgram, FlatRows
from pipeline.rewrite.kind_table import unit_of
from pipeline.rewrite.kinds.branches import BranchNode
from pipeline.rewrite.kinds.convolution import ConvolutionNode
from pipeline.rewrite.kinds.map import MapNode
from pipeline.rewrite.kinds.wfc import WfcNode
from pipeline.rewrite.node import Node
from pipeline.rewrite.nodes import map_node
from pipeline.rewrite.nodes.matching import rule_bits
from pipeline.rewrite.rule import Alphabet
from pipeline.rewrite.wfc.go import go_wfc, new_size

Origin = Literal["none", "center", "random"]


@dataclass(frozen=True)
class Program:
    """A rule program: the grid's `alphabet`, its `root` node, and where `origin` puts a cell."""

    alphabet: Alphabet
    root: Node
    origin: Origin = "none"
    warnings: tuple[str, ...] = ()  # what loads but most likely not as meant (3D rules in a 2D run)


@functools.lru_cache(maxsize=16)
def flatten(program: Program) -> FlatProgram:
    """Number the nodes in preorder (so a subtree is a range) and pack the rules into arrays:
    each node's kind writes its own row (kind_table.KINDS)."""
    root = program.root
    if not isinstance(root, BranchNode):
        root = BranchNode("markov", (root,))  # as MarkovJunior wraps a lone rule node
    rows = FlatRows()

    def visit(node: Node, parent: int) -> int:
        k = rows.open(parent)
        unit_of(node).flatten(node, k, rows, visit)
        rows.close(k)
        return k

    visit(root, -1)
    return rows.finish(len(program.alphabet.values))


def program_warnings(program: Program) -> list[str]:
    """What in a program loads but most likely not as meant: its own (a model's 3D rules), and
    convolution rules that can never fire."""
    found = list(program.warnings)

    def walk(node: Node, values: str) -> None:
        if isinstance(node, ConvolutionNode):
            found.extend(node.never_fire(values))
        inner = node.alphabet.values if isinstance(node, (MapNode, WfcNode)) else values
        for child in getattr(node, "children", ()):
            walk(child, inner)

    walk(program.root, program.alphabet.values)
    return list(dict.fromkeys(found))


def every_value(program: Program) -> str:
    """The values of every grid the program draws: its own, then those of its `map` nodes."""
    found = program.alphabet.values

    def visit(node: Node) -> None:
        nonlocal found
        if isinstance(node, (MapNode, WfcNode)):
            found += "".join(c for c in node.alphabet.values if c not in found)
        for child in getattr(node, "children", ()):
            visit(child)

    visit(program.root)
    return found


@functools.lru_cache(maxsize=16)
def _arguments(program: Program) -> tuple[Any, ...]:
    return flatten(program).arguments()


# A grid a map or wfc node makes may be no larger than a stage's `size` may be.
MAX_CELLS = 64_000_000


class RunResult(NamedTuple):
    state: np.ndarray  # (h, w) uint8 indices of `values`
    turns: int
    finished: bool
    frames: np.ndarray  # (f, h, w): the grid every `frame_every` turns, then the final grid
    frame_every: int
    values: str  # the final grid's values: a `map` node changes them (and the size)
    frame_values: str  # what `frames` index: `values`, then the other values of earlier grids


class _Leg(NamedTuple):
    """A run on one grid, up to the end or to the node that makes the next grid."""

    state: np.ndarray
    turns: int
    finished: bool
    frames: np.ndarray
    frame_every: int
    handover: MapNode | WfcNode | None


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
    checks every incremental match update against a full rescan (slow; for tests).

    A `map` or `wfc` node ends the run on its grid: the new grid is drawn (one turn for a map,
    as in MarkovJunior; for wfc, one to start, one per observation and one to finish) and its
    children run on it as a sequence, and when they are done so is the program, since the
    reference gives such a node no parent to return to."""
    alphabet = program.alphabet
    legs: list[tuple[str, np.ndarray]] = []
    turns = 0
    every = 0
    while True:
        leg = _run_leg(program, state, rng, max_steps - turns, record_frames, verify)
        turns += leg.turns
        every = max(every, leg.frame_every)
        state = leg.state
        if record_frames:
            legs.append((alphabet.values, leg.frames))
        node = leg.handover
        if node is None:
            finished = leg.finished
            break
        if isinstance(node, MapNode):
            state = draw_map(node, state)
            turns += 1
        else:
            big_w, big_h = new_size(node, state.shape[1], state.shape[0])
            if big_w * big_h > MAX_CELLS:
                raise ValueError(f"wfc: tiles of {node.model.size} cells make the {state.shape[1]}x{state.shape[0]} grid {big_w}x{big_h} cells, more than 64 M")
            collapsed = go_wfc(node, state, rng, record_frames)
            if record_frames and len(collapsed.frames):
                legs.append((node.alphabet.values, collapsed.frames))
            if collapsed.state is None:
                # The node fails on its first turn, and the run ends on the grid it was given:
                # as in the reference for a wfc that is the last node of its branch, which the
                # readers require (kinds/wfc.py, WFC_LAST).
                turns += 1
                finished = True
                break
            state = collapsed.state
            turns += collapsed.turns
            if turns > max_steps:
                # The reference would stop partway through the collapse; the whole collapse
                # is kept here, and the run reported as cut short.
                turns, finished = max_steps, False
                alphabet = node.alphabet
                if record_frames:
                    legs.append((alphabet.values, state[None]))
                break
        alphabet = node.alphabet
        program = Program(alphabet, BranchNode("sequence", node.children))
    frames, frame_values = _join_frames(legs, state.shape, alphabet.values, record_frames) if record_frames else (state[None], alphabet.values)
    return RunResult(state, turns, finished, frames, every, alphabet.values, frame_values)


def draw_map(node: MapNode, state: np.ndarray) -> np.ndarray:
    """The new grid a `map` node draws from `state` (see nodes/map_node.py)."""
    (nx, dx), (ny, dy) = node.scale
    h, w = state.shape
    size = (map_node.scaled(h, ny, dy), map_node.scaled(w, nx, dx))
    if min(size) < 1 or size[0] * size[1] > MAX_CELLS:
        raise ValueError(f"map: scale {nx}/{dx} x {ny}/{dy} makes the {w}x{h} grid {size[1]}x{size[0]} cells (at least 1, at most 64 M)")
    grid = np.zeros(size, dtype=np.uint8)
    for rule in node.rules:
        map_node.write_rule(state, grid, rule.inp, rule.out, nx, dx, ny, dy)
    return grid


def _run_leg(program: Program, state: np.ndarray, rng: np.random.Generator, max_steps: int, record_frames: int, verify: bool) -> _Leg:
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
    scratch = np.zeros(grid.size << rule_bits(len(flatten(program).rw)), dtype=np.bool_) if verify else None
    # The change log is compacted past 16 grids (at least 4 M entries, 32 MB): never in most runs;
    # a checked run compacts it all the time, so the rescan check covers compaction too.
    compact_at = 64 if verify else max(16 * grid.size, 1 << 22)
    outcome, turns, nframes, every, node = machine.run_program(
        grid, w, h, xb, len(program.alphabet.values), *_arguments(program), rng, max_steps, 1 if cap else 0, frames, compact_at, scratch
    )
    if outcome == machine.MISMATCH:
        raise AssertionError(f"incremental matches disagree with a full rescan at turn {turns}")
    handover = _preorder(program.root)[node] if outcome == machine.HANDOVER else None
    # The grid as the run ended, unless the handover's turn began with a frame of it already.
    last = [] if handover is not None and every and turns % every == 0 else [grid[None, :]]
    shots = np.concatenate([frames[:nframes], *last]) if record_frames else grid[None, :]
    shots = np.ascontiguousarray(shots.reshape(-1, h, 1 << xb)[:, :, :w])
    return _Leg(np.ascontiguousarray(shots[-1]), int(turns), outcome == machine.FINISHED, shots, int(every), handover)  # type: ignore[arg-type]


def _preorder(root: Node) -> list[Node]:
    """The nodes in the order `flatten` numbers them."""
    if not isinstance(root, BranchNode):
        root = BranchNode("markov", (root,))
    found: list[Node] = []

    def visit(node: Node) -> None:
        found.append(node)
        if isinstance(node, BranchNode):
            for child in node.children:
                visit(child)

    visit(root)
    return found


def _join_frames(legs: list[tuple[str, np.ndarray]], shape: tuple[int, ...], values: str, cap: int) -> tuple[np.ndarray, str]:
    """The frames of every grid as one film at the final grid's size: earlier grids are scaled
    to it (nearest cell), and their values that the final grid lacks are numbered after its own,
    so a recording shows a `map` node's grid as well as the one it came from."""
    names = values
    for leg_values, _ in legs:
        names += "".join(c for c in leg_values if c not in names)
    h, w = shape
    films = []
    for leg_values, shots in legs:
        lut = np.array([names.index(c) for c in leg_values], dtype=np.uint8)
        ys = np.arange(h) * shots.shape[1] // h
        xs = np.arange(w) * shots.shape[2] // w
        films.append(lut[shots[:, ys[:, None], xs[None, :]]])
    film = np.concatenate(films)
    if len(film) > cap:
        # Evenly spaced, the final grid last.
        film = film[np.linspace(0, len(film) - 1, cap).round().astype(np.int64)]
    return np.ascontiguousarray(film), names
