"""Output paths that cannot escape the pack folder."""

from __future__ import annotations

import posixpath
import re

_PLAIN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


# Names Windows keeps for devices, with any extension ("con.tmx" too): a pack or file so named
# cannot be opened or copied there.
_WINDOWS_DEVICES = re.compile(r"^(con|prn|aux|nul|com[1-9]|lpt[1-9])(\..*)?$", re.IGNORECASE)


def check_plain_name(value: str) -> str:
    """A single file or folder name: letters, digits, `_ . -`, not starting with a dot; one that
    also works on Windows (no device name, no trailing dot, which Windows drops)."""
    if not _PLAIN_NAME.match(value) or ".." in value:
        raise ValueError("must be a plain name of letters, digits and _ . - (no slashes or '..') so output stays inside exports/")
    if _WINDOWS_DEVICES.match(value):
        raise ValueError(f"{value.split('.')[0]!r} is a device name on Windows (CON, PRN, AUX, NUL, COM1-9, LPT1-9): pick another, so the files open there too")
    if value.endswith("."):
        raise ValueError("must not end with '.': Windows drops it, and the name would be another")
    return value


def check_relative_dir(value: str) -> str:
    """A folder inside the pack, written with `/`; `.` is the pack folder itself."""
    if value in ("", "."):
        return "."
    if "\\" in value or value.startswith("/") or re.match(r"^[A-Za-z]:", value):
        raise ValueError("must be a relative folder inside the pack, written with '/'")
    parts = value.strip("/").split("/")
    if any(p in ("", ".", "..") for p in parts) or not all(_PLAIN_NAME.match(p) for p in parts):
        raise ValueError("must be a relative folder inside the pack (plain names, no '..')")
    for part in parts:
        try:
            check_plain_name(part)  # and one Windows can have
        except ValueError as exc:
            raise ValueError(f"folder {part!r}: {exc}") from None
    return "/".join(parts)


def join(folder: str, name: str) -> str:
    return name if folder == "." else f"{folder}/{name}"


def relative_to(target: str, from_folder: str) -> str:
    """Path of pack file `target` as seen from pack folder `from_folder` (for TMX `source=`)."""
    return posixpath.relpath(target, "." if from_folder == "." else from_folder)
