"""ConvChain nodes as both program readers build them: the sample image comes through a resource
reader (`samples/<name>.png`, as MarkovJunior finds it) and its pattern weights are counted here,
once, when the program loads."""

from __future__ import annotations

from pipeline.rewrite.nodes.convchain_node import MAX_N, pattern_weights, read_sample
from pipeline.rewrite.program import ConvChainNode
from pipeline.rewrite.resources import ResourceError, ResourceReader
from pipeline.rewrite.rule import Alphabet


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
