"""Default names and colours for rule values, by character.

MarkovJunior models name values by letters whose colours come from its palette
(`resources/palette.xml`): the sixteen colours of the PICO-8 fantasy console under upper-case
letters (B black, W white, R red, ...), a second shade of each under its lower-case letter, and
ten more (C cyan, H honey, ... Z). A lower-case letter's name is its upper-case letter's with
`_2`. Other characters get a stable colour computed from their code point, so a program never
needs a legend to run.
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
    "C": ("cyan", "#00ffff"),
    "H": ("honey", "#e4bb40"),
    "J": ("jungle", "#4b692f"),
    "L": ("light", "#847e87"),
    "M": ("magenta", "#ff00ff"),
    "Q": ("aqua", "#9badb7"),
    "T": ("teal", "#37946e"),
    "V": ("olive", "#8f974a"),
    "X": ("pure_red", "#ff0000"),
    "Z": ("pure_white", "#ffffff"),
}
_SECOND_SHADE = {
    "b": "#291814", "i": "#111d35", "p": "#422136", "e": "#125359", "n": "#742f29", "d": "#49333b", "a": "#a28879",
    "w": "#f3ef7d", "r": "#be1250", "o": "#ff6c24", "y": "#a8e72e", "g": "#00b543", "u": "#065ab5", "s": "#754665",
    "k": "#ff6e59", "f": "#ff9d81", "c": "#5fcde4", "h": "#8a6f30", "j": "#45107e", "l": "#696a6a", "m": "#9c09cc",
    "q": "#3f3f74", "t": "#323c39", "v": "#524b24", "x": "#d95763", "z": "#cbdbfc",
}
NAMED.update({ch: (f"{NAMED[ch.upper()][0]}_2", color) for ch, color in _SECOND_SHADE.items()})


def default_symbol(ch: str) -> tuple[str, str]:
    """(name, "#rrggbb") for a value character."""
    if ch in NAMED:
        return NAMED[ch]
    digest = hashlib.blake2b(ch.encode("utf-8"), digest_size=3).hexdigest()
    return f"value_{ord(ch):04x}", f"#{digest}"
