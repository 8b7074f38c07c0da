"""A rule's patterns as a MarkovJunior model writes them on a `<rule>` (or on its node): `in` and
`out` text (2D, or 3D layers separated by spaces, which load and never match a 2D grid), or
images drawn with a legend (`file`, `fin`, `fout`), read through the grid's resource reader from
`rules/[<folder>/]<name>.png` as MarkovJunior finds them."""

from __future__ import annotations

import numpy as np

from pipeline.rewrite.program_error import ProgramError
from pipeline.rewrite.resources import ResourceError
from pipeline.rewrite.rule import KEEP, Alphabet, Rule, parse_pattern, parse_rule
from pipeline.rewrite.rule_image import ImageError, LegendImage, input_waves, output_values, read_image
from pipeline.rewrite.xml_element import Element, Grid


def read_rule(el: Element, grid: Grid, group: str) -> list[Rule]:
    """The orientations of a rule written on `el` (in/out text, 3D text, or images)."""
    where = f"line {el.line}"
    attrs = el.attrs
    if "file" in attrs:
        both = [k for k in ("in", "out", "fin", "fout") if k in attrs]
        if both:
            raise ProgramError(where, f"<{el.tag}> has both file and {both[0]} (a file image holds the input and the output)")
    else:
        for text, image, side in (("in", "fin", "input"), ("out", "fout", "output")):
            if text in attrs and image in attrs:
                raise ProgramError(where, f"<{el.tag}> has both {text} and {image} for its {side}")
            if text not in attrs and image not in attrs:
                raise ProgramError(where, f"<{el.tag}> needs in and out patterns (or fin/fout images, or a file image)")
    try:
        p = float(attrs.get("p", "1"))
    except ValueError:
        raise ProgramError(where, f"p={attrs['p']!r} is not a number") from None
    try:
        if "in" in attrs and "out" in attrs:
            rules, deep = _written_rule(attrs["in"], attrs["out"], grid.alphabet, p, group)
            if deep:
                grid.lines_3d.append(el.line)
            return rules
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p must be between 0 and 1 (got {p})")
        inp, out = _image_patterns(el, grid)
        if inp.shape != out.shape:
            raise ValueError(f"input is {inp.shape[1]}x{inp.shape[0]} but output is {out.shape[1]}x{out.shape[0]}")
        return Rule(inp, out, p).variants(group)
    except ValueError as exc:
        raise ProgramError(where, str(exc)) from None


def _written_rule(inp: str, out: str, alphabet: Alphabet, p: float, group: str) -> tuple[list[Rule], bool]:
    """A rule from in/out text, which may be 3D (layers separated by spaces); and whether it is."""
    layers_in, layers_out = inp.strip().split(" "), out.strip().split(" ")
    if len(layers_in) == 1 and len(layers_out) == 1:
        return parse_rule(inp, out, alphabet, p).variants(group), False
    if len(layers_in) != len(layers_out):
        raise ValueError(f"input {inp!r} has {len(layers_in)} layers but output {out!r} has {len(layers_out)}")
    # Each layer is checked as a 2D rule would be (symbols, rectangles, sizes), as the reference
    # refuses a bad 3D pattern even in a 2D run.
    layers = [parse_rule(i, o, alphabet, p) for i, o in zip(layers_in, layers_out)]
    if any(r.inp.shape != layers[0].inp.shape for r in layers):
        raise ValueError(f"pattern {inp!r} has layers of different sizes")
    # A 3D rule is deeper than a 2D grid (one cell deep), so the reference finds no place for it:
    # it loads and never matches. An input whose cells accept no value at all (every wave 0) is
    # such a rule here: scan_rule gives up at its first cell, and the incremental table of
    # (rule, cell) pairs by value lists none of its cells, so it is never listed as a match.
    # Its orientations would be more rules that never match, so it is kept once.
    shape = layers[0].inp.shape
    return [Rule(np.zeros(shape, dtype=np.int64), np.full(shape, KEEP, dtype=np.uint8), p)], True


def _image_patterns(el: Element, grid: Grid) -> tuple[np.ndarray, np.ndarray]:
    """Input waves and output values of a rule with `file`, or `fin` and/or `fout` images."""
    attrs, alphabet = el.attrs, grid.alphabet
    legend = attrs.get("legend")
    if legend is None:
        key = next(k for k in ("file", "fin", "fout") if k in attrs)
        raise ValueError(f"{key}={attrs[key]!r} needs a legend: the characters its colours stand for, in the order they first appear")
    if "file" in attrs:
        path, image = _read_image(attrs["file"], legend, grid)
        if image.width % 2:
            raise ValueError(
                f"rule image {path} is {image.width} pixels wide: a file image is the input and the output side by side, "
                "so its width must be even"
            )
        half = image.width // 2
        # Both halves keep the numbering of the whole image: one colour, one character.
        left, right = image.columns(0, half), image.columns(half, image.width)
        return _side(path, left, legend, alphabet, output=False), _side(path, right, legend, alphabet, output=True)
    if "fin" in attrs:
        path, image = _read_image(attrs["fin"], legend, grid)
        inp = _side(path, image, legend, alphabet, output=False)
    else:
        rows = _flat_pattern(attrs["in"])
        inp = np.array([[alphabet.wave(c) for c in row] for row in rows], dtype=np.int64)
    if "fout" in attrs:
        path, image = _read_image(attrs["fout"], legend, grid)
        out = _side(path, image, legend, alphabet, output=True)
    else:
        rows = _flat_pattern(attrs["out"])
        out = np.array([[alphabet.value(c) for c in row] for row in rows], dtype=np.uint8)
    return inp, out


def _flat_pattern(text: str) -> list[str]:
    if " " in text.strip():
        # A 3D pattern against a 2D image: the reference refuses the sizes as not matching.
        raise ValueError(f"pattern {text!r} has layers (3D) but the other side of the rule is a 2D image")
    return parse_pattern(text)


def _read_image(name: str, legend: str, grid: Grid) -> tuple[str, LegendImage]:
    path = f"rules/{grid.folder}/{name}.png" if grid.folder else f"rules/{name}.png"
    if grid.read is None:
        raise ValueError(f"rule image {path}: no resources folder to read it from (models with rule images load through the rewrite stage)")
    try:
        data = grid.read(path)
    except ResourceError as exc:
        raise ValueError(f"rule image {path}: {exc}") from None
    try:
        return path, read_image(data, legend)
    except ImageError as exc:
        raise ValueError(f"rule image {path} {exc}") from None


def _side(path: str, image: LegendImage, legend: str, alphabet: Alphabet, output: bool) -> np.ndarray:
    try:
        return output_values(image, legend, alphabet) if output else input_waves(image, legend, alphabet)
    except ImageError as exc:
        raise ValueError(f"rule image {path}: {exc}") from None
