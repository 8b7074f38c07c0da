"""A rule program as a tree of nodes, and its flattening into the arrays the interpreter runs.

Node kinds (MarkovJunior's):
- `one`: apply one match, chosen uniformly among all current matches of all its rules;
- `all`: apply a random maximal set of matches whose written cells do not overlap, in one step;
- `prl`: apply every match at once, each with its rule's probability `p`;
- `markov`: each step, run the first child that applies; fail when none does;
- `sequence`: run each child until it fails, then the next; fail after the last;
- `path`: draw a shortest path from a `from` cell to a `to` cell over `on` cells;
- `map`: draw a new grid (another scale, other values) from the current one by rules, then run
  its children on it as a sequence; the program ends when they do;
- `convolution`: a cellular automaton step, every cell rewritten at once by the counts of values
  among its neighbours (see nodes/convolution_node.py);
- `convchain`: paint the `on` cells in two colours, then resample them towards a sample's
  textures (nodes/convchain_node.py);
- `wfc`: wave function collapse on a new grid of its own values, then its children on that grid,
  like `map` (wfc/).
A rule node's `steps` limits it to that many successful steps (0: no limit); a convolution or
convchain node's, to that many steps.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, Union

import numpy as np

from pipeline.rewrite import machine
from pipeline.rewrite.kinds import CODES, MATCHING
from pipeline.rewrite.nodes import convchain_node, convolution_node, fields, map_node, path_node
from pipeline.rewrite.nodes.matching import rule_bits
from pipeline.rewrite.rule import Alphabet, Rule, parse_pattern
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
    return Field(_one_value(alphabet, "for", value), alphabet.waves(zero), alphabet.waves(on), inversed, recompute, essential)


def _one_value(alphabet: Alphabet, key: str, ch: str) -> int:
    # Alphabet.value's own message is about rule outputs.
    if ch not in alphabet.values:
        raise ValueError(f"{key}={ch!r} is not one of the values {alphabet.values!r}")
    return alphabet.value(ch)


@dataclass(frozen=True)
class Observe:
    """What a rule node is told about the end (see nodes/observation.py): cells holding `value`
    are really `start` now and must end in one of the values of `goal` (a bit set)."""

    value: int  # value indices
    start: int
    goal: int


def make_observe(alphabet: Alphabet, value: str, start: str | None, goal: str) -> Observe:
    """An Observe from its symbols as a program writes them (`value`, `from`, `to`)."""
    if len(value) != 1:
        raise ValueError(f"value={value!r} must be one value")
    if start is not None and len(start) != 1:
        raise ValueError(f"from={start!r} must be one value")
    if not goal:
        raise ValueError("an observation needs to= (the values its cells may end in)")
    observed = _one_value(alphabet, "value", value)
    return Observe(observed, observed if start is None else _one_value(alphabet, "from", start), alphabet.waves(goal))


@dataclass(frozen=True)
class RuleNode:
    kind: RuleKind
    rules: tuple[Rule, ...]  # every orientation, already expanded by symmetry
    steps: int = 0
    fields: tuple[Field, ...] = ()
    temperature: float = 0.0  # used with fields or observations, as in the reference
    observes: tuple[Observe, ...] = ()
    search: bool = False  # plan the way to the observed future first (needs observes)
    limit: int = -1  # states a search keeps per attempt; -1: no cap
    depth_coefficient: float = 0.5


# MarkovJunior computes a prl node's fields and observations but never chooses by them: they can
# only stop the node, which this engine does not copy (it would run every match regardless).
PRL_UNSTEERED = "fields and observations steer which matches one and all nodes apply; a prl node applies each match by its p and chooses none"


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


@dataclass(frozen=True)
class MapNode:
    """A new grid drawn from the current one (see nodes/map_node.py), on which `children` run."""

    alphabet: Alphabet  # the new grid's values
    scale: tuple[tuple[int, int], tuple[int, int]]  # (numerator, denominator) along x, then y
    rules: tuple[Rule, ...]  # inputs in the old grid's values, outputs in the new one's
    children: tuple[Node, ...]


@dataclass(frozen=True)
class ConvolutionRule:
    """Turn an `input` cell into `output`, with probability `p`, when the number of its neighbours
    holding any of `values` is one of `sums` (always, when `values` is empty)."""

    input: int  # value indices
    output: int
    values: tuple[int, ...] = ()  # a value listed twice counts twice, as in the reference
    sums: tuple[int, ...] = ()
    p: float = 1.0


def make_convolution_rule(alphabet: Alphabet, inp: str, out: str, values: str | None, sums: str | None, p: float) -> ConvolutionRule:
    """A ConvolutionRule from its symbols as a program writes them; `sums` as `"0,1,4..8"`."""
    for name, text in (("in", inp), ("out", out)):
        if len(text) != 1 or text not in alphabet.values:
            raise ValueError(f"{name}={text!r} must be one value (values are {alphabet.values!r})")
    if values is not None and sums is None:
        raise ValueError(f"values={values!r} needs sum= (the neighbour counts that fire the rule)")
    if sums is not None and values is None:
        raise ValueError(f"sum={sums!r} needs values= (the values whose neighbours are counted)")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be between 0 and 1 (got {p})")
    counted: tuple[int, ...] = ()
    allowed: tuple[int, ...] = ()
    if values is not None and sums is not None:
        if not values:
            raise ValueError("values must name at least one value to count")
        unknown = [c for c in values if c not in alphabet.values]
        if unknown:
            raise ValueError(f"values={values!r}: {unknown[0]!r} is not a value (values are {alphabet.values!r})")
        counted = tuple(alphabet.values.index(c) for c in values)
        allowed = convolution_node.parse_sums(sums)
    return ConvolutionRule(alphabet.values.index(inp), alphabet.values.index(out), counted, allowed, p)


@dataclass(frozen=True)
class ConvolutionNode:
    rules: tuple[ConvolutionRule, ...]  # the first that fires rewrites the cell
    neighborhood: Literal["Moore", "VonNeumann"]
    periodic: bool = False
    steps: int = 0

    def never_fire(self, values: str) -> list[str]:
        """What rules count more neighbours than a cell has: the reference takes them, and
        they never fire."""
        around = 8 if self.neighborhood == "Moore" else 4
        lines = []
        for rule in self.rules:
            most = around * max((rule.values.count(v) for v in set(rule.values)), default=0)
            if rule.values and min(rule.sums) > most:
                counted = "".join(values[v] for v in rule.values)
                lines.append(
                    f"convolution rule {values[rule.input]}={values[rule.output]} counting {counted!r}: sum {_spans(rule.sums)} is more than"
                    f" a cell's {around} {self.neighborhood} neighbours can hold ({most}), so the rule never fires"
                )
        return lines


def _spans(sums: tuple[int, ...]) -> str:
    return f"{sums[0]}..{sums[-1]}" if len(sums) > 1 and sums[-1] - sums[0] == len(sums) - 1 else ",".join(map(str, sums))


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


@dataclass(frozen=True, eq=False)
class ConvChainNode:
    on: int  # value indices
    black: int
    white: int
    n: int
    weights: np.ndarray  # float64[2**(n*n)], see convchain_node.pattern_weights
    temperature: float = 1.0
    steps: int = 0  # 0: no limit; the first (painting) step counts


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


def make_map_rule(old: Alphabet, new: Alphabet, inp: str, out: str, group: str) -> list[Rule]:
    """A map rule's orientations from its patterns as a program writes them: the input in the
    current grid's values, the output (of any size) in the new grid's."""
    waves = np.array([[old.wave(c) for c in row] for row in parse_pattern(inp)], dtype=np.int64)
    values = np.array([[new.value(c) for c in row] for row in parse_pattern(out)], dtype=np.uint8)
    return Rule(waves, values).variants(group)


Node = Union[RuleNode, PathNode, BranchNode, ConvolutionNode, ConvChainNode, MapNode, WfcNode]
Origin = Literal["none", "center", "random"]


@dataclass(frozen=True)
class Program:
    alphabet: Alphabet
    root: Node
    origin: Origin = "none"
    warnings: tuple[str, ...] = ()  # what loads but most likely not as meant (3D rules in a 2D run)


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
            conv if CODES["convolution"] in kinds else None,
            chain if CODES["convchain"] in kinds else None,
            observe if bool((self.future_slot >= 0).any()) else None,
        )


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
    conv_lo: list[int] = []
    conv_hi: list[int] = []
    conv_flags: list[int] = []
    conv_rules: list[ConvolutionRule] = []
    cc_params: list[list[int]] = []
    cc_weights: list[np.ndarray] = []
    cc_at = [0]
    observe_rows: list[list[int]] = []
    observe_lo: list[int] = []
    observe_hi: list[int] = []
    future_slots: list[int] = []
    searches: list[list[float]] = []

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
        conv_lo.append(len(conv_rules))
        conv_hi.append(len(conv_rules))
        conv_flags.append(0)
        cc_params.append([0, 0, 0, 0, 0, -1])
        observe_lo.append(len(observe_rows))
        observe_hi.append(len(observe_rows))
        future_slots.append(-1)
        searches.append([0.0, -1.0, 0.0])
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
            if node.observes:
                # One observation per value, the last given winning, as in the reference.
                by_value = {o.value: o for o in node.observes}
                observe_rows.extend([o.value, o.start, o.goal] for _, o in sorted(by_value.items()))
                observe_hi[k] = len(observe_rows)
                future_slots[k] = max(future_slots) + 1
                if node.search:
                    searches[k] = [1.0, float(node.limit), node.depth_coefficient]
                elif slots[k] < 0:
                    slots[k] = max(slots) + 1  # backward potentials live where fields' would
                temperature[k] = node.temperature
        elif isinstance(node, (MapNode, WfcNode)):
            # A leaf here: the machine stops when it reaches a node that makes a new grid, and
            # `run` goes on from there.
            kinds.append(CODES["map" if isinstance(node, MapNode) else "wfc"])
        elif isinstance(node, PathNode):
            kinds.append(CODES["path"])
            flags = (
                (path_node.INERTIA if node.inertia else 0)
                | (path_node.LONGEST if node.longest else 0)
                | (path_node.EDGES if node.edges else 0)
            )
            paths[k] = [node.start, node.finish, node.on, node.color, flags]
        elif isinstance(node, ConvolutionNode):
            kinds.append(CODES["convolution"])
            conv_rules.extend(node.rules)
            steps[k] = node.steps
            conv_flags[k] = (convolution_node.MOORE if node.neighborhood == "Moore" else 0) | (
                convolution_node.PERIODIC if node.periodic else 0
            )
        elif isinstance(node, ConvChainNode):
            kinds.append(CODES["convchain"])
            steps[k] = node.steps
            temperature[k] = node.temperature
            cc_params[k] = [node.on, node.black, node.white, node.n, cc_at[0], len(cc_weights)]
            cc_weights.append(node.weights)
            cc_at[0] += node.weights.size
        else:
            kinds.append(CODES[node.kind])
            for child in node.children:
                kids[k].append(visit(child, k))
        hi[k] = len(rules)
        conv_hi[k] = len(conv_rules)
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
        conv_lo=np.array(conv_lo, dtype=np.int64),
        conv_hi=np.array(conv_hi, dtype=np.int64),
        conv_flags=np.array(conv_flags, dtype=np.int64),
        conv_rules=np.array(
            [[r.input, r.output, convolution_node.sum_mask(r.sums), 1 if r.values else 0] for r in conv_rules] or [[0, 0, 0, 0]],
            dtype=np.int64,
        ),
        conv_counts=np.array(
            [[r.values.count(c) for c in range(ncolors)] for r in conv_rules] or [[0] * ncolors], dtype=np.int64
        ).reshape(-1, ncolors),
        conv_p=np.array([r.p for r in conv_rules] or [1.0], dtype=np.float64),
        cc_params=np.array(cc_params, dtype=np.int64).reshape(len(kinds), convchain_node.NPARAMS),
        cc_weights=np.concatenate(cc_weights) if cc_weights else np.ones(1, dtype=np.float64),
        observe_lo=np.array(observe_lo, dtype=np.int64),
        observe_hi=np.array(observe_hi, dtype=np.int64),
        observes=np.array(observe_rows or [[0, 0, 0]], dtype=np.int64).reshape(-1, 3),
        future_slot=np.array(future_slots, dtype=np.int64),
        search=np.array(searches, dtype=np.float64).reshape(-1, 3),
    )


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
            from pipeline.rewrite.wfc.go import go_wfc, new_size  # it imports WfcNode from here

            big_w, big_h = new_size(node, state.shape[1], state.shape[0])
            if big_w * big_h > MAX_CELLS:
                raise ValueError(f"wfc: tiles of {node.model.size} cells make the {state.shape[1]}x{state.shape[0]} grid {big_w}x{big_h} cells, more than 64 M")
            collapsed = go_wfc(node, state, rng, record_frames)
            if record_frames and len(collapsed.frames):
                legs.append((node.alphabet.values, collapsed.frames))
            if collapsed.state is None:
                # The node fails on its first turn, and the run ends on the grid it was given:
                # as in the reference for a wfc that is the last node of its branch, which the
                # readers require (xml_form.WFC_LAST).
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
