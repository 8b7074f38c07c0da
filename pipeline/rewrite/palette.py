"""Default names and colours for rule values, by character.

MarkovJunior models name values by letters whose colours come from a fixed palette (B black,
W white, R red, ...). These are the sixteen colours of the PICO-8 fantasy console, which that
palette follows, under the letters models use for them; other characters get a stable colour
computed from their code point, so a program never needs a legend to run.
"""

from __future__ import annotations

import hashlib

NAMED: dict[str, tuple[str, str]] = {
    "B": ("black", "#000000"),
    "I": ("indigo", "#1d2b53"),
    "P": ("purple", "#7e2553"),
    "E": ("emerald", "#008751"),
    "N": ("brown", "#ab5236"),
    "D": ("dark_grey", "#5f574f"),
    "A": ("grey", "#c2c3c7"),
    "W": ("white", "#fff1e8"),
    "R": ("red", "#ff004d"),
    "O": ("orange", "#ffa300"),
    "Y": ("yellow", "#ffec27"),
    "G": ("green", "#00e436"),
    "U": ("blue", "#29adff"),
    "S": ("slate", "#83769c"),
    "K": ("pink", "#ff77a8"),
    "F": ("peach", "#ffccaa"),
}


def default_symbol(ch: str) -> tuple[str, str]:
    """(name, "#rrggbb") for a value character."""
    if ch in NAMED:
        return NAMED[ch]
    digest = hashlib.blake2b(ch.encode("utf-8"), digest_size=3).hexdigest()
    return f"value_{ord(ch):04x}", f"#{digest}"
