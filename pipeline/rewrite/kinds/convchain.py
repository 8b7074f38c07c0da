"""The `convchain` node (MarkovJunior's ConvChainNode): paint the `on` cells in two colours, then
resample them towards a sample's textures; `steps` limits it to that many steps (the painting
one counts). Its data, its TOML form `{ convchain = { sample = "Maze", on = "B", black = "D",
white = "A", n = 2, steps = 10 } }`, its XML form `<convchain sample= on= black= white=/>`, and its
row in the flattened program; its kernel is nodes/convchain_node.py. The sample comes through a
resource reader (`samples/<name>.png`, as MarkovJunior finds it) and its pattern weights are
counted once, when the program loads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from pipeline.errors import toml_text
from pipeline.rewrite.codes import CONVCHAIN
from pipeline.rewrite.flat import FlatRows, Visit
from pipeline.rewrite.node import Node
from pipeline.rewrite.nodes.convchain_node import MAX_N, pattern_weights, read_sample
from pipeline.rewrite.program_error import ProgramError
from pipeline.rewrite.resources import ResourceError, ResourceReader
from pipeline.rewrite.rule import Alphabet
from pipeline.rewrite.toml_table import TomlContext, no_extra, symmetry_of
from pipeline.rewrite.xml_element import Element, Grid, XmlContext, check_attrs, float_attr, int_attr, no_children

NAMES: tuple[str, ...] = ("convchain",)

_CONVCHAIN_OPTIONS = ("sample", "on", "black", "white", "n", "temperature", "steps", "symmetry")
_CONVCHAIN_ATTRS = {"sample", "on", "black", "white", "n", "temperature", "steps", "symmetry"}


@dataclass(frozen=True, eq=False)
class ConvChainNode(Node):
    """`convchain`: paint the `on` cells `black` or `white`, then resample them towards a sample's
    NxN patterns (`weights`)."""

    on: int  # value indices
    black: int
    white: int
    n: int
    weights: np.ndarray  # float64[2**(n*n)], see convchain_node.pattern_weights
    temperature: float = 1.0
    steps: int = 0  # 0: no limit; the first (painting) step counts


def make_convchain(
    alphabet: Alphabet,
    read: ResourceReader | None,
    sample: str,
    on: str,
    black: str,
    white: str,
    n: int,
    temperature: float,
    steps: int,
    group: str,
    no_reader: str,
) -> ConvChainNode:
    """A ConvChainNode; raises ValueError naming what is wrong. `no_reader` says why there is no
    resource reader, for the message when `read` is None."""
    values = {}
    for key, ch in (("on", on), ("black", black), ("white", white)):
        if len(ch) != 1 or ch not in alphabet.values:
            raise ValueError(f"{key}={ch!r} must be one of the values {alphabet.values!r}")
        values[key] = alphabet.values.index(ch)
    if not 1 <= n <= MAX_N:
        raise ValueError(f"n={n} must be from 1 to {MAX_N} (the node weighs all 2**(n*n) patterns)")
    if not 0 <= temperature < float("inf"):
        raise ValueError(f"temperature must be a number >= 0 (got {temperature!r})")
    if not sample or "/" in sample or "\\" in sample or sample.startswith("."):
        raise ValueError(f"sample={sample!r} must be the name of an image in the samples folder, such as \"Maze\"")
    path = f"samples/{sample}.png"
    if read is None:
        raise ValueError(f"sample {path}: {no_reader}")
    try:
        data = read(path)
    except ResourceError as exc:
        raise ValueError(f"sample {path}: {exc}") from None
    try:
        pixels = read_sample(data)
    except ValueError as exc:
        raise ValueError(f"sample {path} {exc}") from None
    return ConvChainNode(
        values["on"], values["black"], values["white"], n, pattern_weights(pixels, n, group), float(temperature), steps
    )


def read_toml(data: dict[str, Any], ctx: TomlContext) -> ConvChainNode:
    """A convchain node from its table."""
    no_extra(data, ("convchain",), ctx.where)
    return _parse_convchain(data["convchain"], ctx.alphabet, ctx.group, ctx.key("convchain"), ctx.read)


def _parse_convchain(body: Any, alphabet: Alphabet, group: str, where: str, read: ResourceReader | None) -> ConvChainNode:
    if not isinstance(body, dict):
        raise ProgramError(where, 'must be a table such as { sample = "Maze", on = "B", black = "D", white = "A" }')
    no_extra(body, _CONVCHAIN_OPTIONS, where)
    for key in ("sample", "on", "black", "white"):
        if not isinstance(body.get(key), str) or not body[key]:
            raise ProgramError(f"{where}.{key}", "is required: a string" + (" (the sample's name)" if key == "sample" else " (one value)"))
    numbers = {"n": 3, "steps": 0}
    for key in numbers:
        value = body.get(key, numbers[key])
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ProgramError(f"{where}.{key}", f"must be a whole number >= 0 (got {toml_text(value)})")
        numbers[key] = value
    temperature = body.get("temperature", 1.0)
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)):
        raise ProgramError(f"{where}.temperature", f"must be a number >= 0 (got {toml_text(temperature)})")
    group = symmetry_of(body, group, where)
    try:
        return make_convchain(
            alphabet, read, body["sample"], body["on"], body["black"], body["white"], numbers["n"], float(temperature),
            numbers["steps"], group, 'an inline program reads samples from the stage\'s resources folder: set resources = "..."',
        )
    except ValueError as exc:
        raise ProgramError(where, str(exc)) from None


def read_xml(el: Element, ctx: XmlContext) -> ConvChainNode:
    """A convchain node from its element."""
    check_attrs(el, _CONVCHAIN_ATTRS | ctx.root_attrs)
    no_children(el)
    return _convchain(el, ctx.grid, ctx.group)


def _convchain(el: Element, grid: Grid, group: str) -> ConvChainNode:
    """`<convchain sample="Maze" on="B" black="D" white="A" n="2" steps="10"/>`. Its patterns take
    every orientation of the node's symmetry (inherited unless it sets its own: the reference
    always inherits, and ignores the attribute)."""
    where = f"line {el.line}"
    for key in ("sample", "on", "black", "white"):
        if not el.attrs.get(key):
            raise ProgramError(where, f"<convchain> needs {key}")
    n, temperature, steps = int_attr(el, "n", 3), float_attr(el, "temperature", 1.0), int_attr(el, "steps", 0)
    try:
        return make_convchain(
            grid.alphabet, grid.read, el.attrs["sample"], el.attrs["on"], el.attrs["black"], el.attrs["white"],
            n, temperature, steps, group,
            "no resources folder to read it from (models with samples load through the rewrite stage)",
        )
    except ValueError as exc:
        raise ProgramError(where, str(exc)) from None


def flatten(node: ConvChainNode, k: int, rows: FlatRows, visit: Visit) -> None:
    """Node k's row: its parameters, and its weights after the other convchain nodes'."""
    rows.kinds[k] = CONVCHAIN
    rows.steps[k] = node.steps
    rows.temperature[k] = node.temperature
    rows.cc_params[k] = [node.on, node.black, node.white, node.n, rows.cc_at, len(rows.cc_weights)]
    rows.cc_weights.append(node.weights)
    rows.cc_at += node.weights.size
