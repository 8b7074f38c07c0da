"""The one-sentence summary of a stage kind that `pcg stages` lists and editors show (the
schema's `use` description): the first whole sentence of its docstring."""

from __future__ import annotations

import inspect

# Abbreviations whose full stop ends no sentence.
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.")

# Longer summaries wrap in an 80-column terminal next to the kind's name: a docstring whose first
# sentence is longer starts with a shorter one (tests/test_cli_output.py checks the built-in kinds).
MAX_SUMMARY = 100


def summary(doc: str | None) -> str:
    """The first sentence of the docstring's first paragraph, on one line. A full stop ends a
    sentence when a space or the end follows it, outside `code` and brackets, and not after an
    abbreviation or an initial; a paragraph without one is its own summary."""
    paragraph = " ".join(inspect.cleandoc(doc or "").split("\n\n", 1)[0].split())
    depth = 0
    code = False
    for i, ch in enumerate(paragraph):
        if ch == "`":
            code = not code
        elif code:
            continue
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif ch in ".!?" and depth == 0 and paragraph[i + 1 : i + 2] in ("", " "):
            initial = i >= 1 and paragraph[i - 1].isupper() and paragraph[i - 2 : i - 1] in ("", " ")  # "Walter D. Pullen"
            if not initial and not paragraph[: i + 1].lower().endswith(_ABBREVIATIONS):
                return paragraph[: i + 1]
    return paragraph


def family(kind: str) -> str:
    """The family a kind is listed under: the part before its first dot (`maze` of
    `maze.wilson`); a kind without one (`filter`) is a family of its own."""
    return kind.split(".", 1)[0]
