"""The symmetry groups of the square, as MarkovJunior names them, applied to rule patterns.

A rule written once applies in every orientation its group allows: `(xy)` (the default) is all
eight rotations and reflections, `()` only the rule as written. Orientations that give the same
rule are kept once, so `RBB` under `(xy)` is four rules (its mirror image is a rotation).
"""

from __future__ import annotations

from typing import Callable, TypeVar

T = TypeVar("T")

# Which of the eight orientations each group keeps, in the order `orientations` lists them:
# identity, mirror, quarter turn, mirrored quarter turn, half turn, mirrored half turn, three
# quarters, mirrored three quarters. The mirror is left-right, so `(x)` keeps it, and `(y)`
# keeps the mirrored half turn, which is the up-down mirror.
SUBGROUPS: dict[str, tuple[bool, ...]] = {
    "()": (True, False, False, False, False, False, False, False),
    "(x)": (True, True, False, False, False, False, False, False),
    "(y)": (True, False, False, False, False, True, False, False),
    "(x)(y)": (True, True, False, False, True, True, False, False),
    "(xy+)": (True, False, True, False, True, False, True, False),
    "(xy)": (True,) * 8,
}
DEFAULT = "(xy)"


def check(name: str) -> str:
    if name not in SUBGROUPS:
        raise ValueError(f"unknown symmetry {name!r} (2D groups: {', '.join(SUBGROUPS)})")
    return name


def orientations(thing: T, rotate: Callable[[T], T], mirror: Callable[[T], T]) -> list[T]:
    """The eight images of `thing` under the square's symmetries, in SUBGROUPS order."""
    out = [thing, mirror(thing)]
    for _ in range(3):
        turned = rotate(out[-2])
        out += [turned, mirror(turned)]
    return out


def variants(thing: T, group: str, rotate: Callable[[T], T], mirror: Callable[[T], T], same: Callable[[T, T], bool]) -> list[T]:
    """The distinct images of `thing` the group allows, first occurrence first."""
    keep = SUBGROUPS[group]
    found: list[T] = []
    for image, wanted in zip(orientations(thing, rotate, mirror), keep):
        if wanted and not any(same(image, f) for f in found):
            found.append(image)
    return found
