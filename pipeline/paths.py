"""Output paths that cannot escape the pack folder."""

from __future__ import annotations

import posixpath
import re

_PLAIN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


def check_plain_name(value: str) -> str:
    """A single file or folder name: letters, digits, `_ . -`, not starting with a dot."""
    if not _PLAIN_NAME.match(value) or ".." in value:
        raise ValueError("must be a plain name of letters, digits and _ . - (no slashes or '..') so output stays inside exports/")
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
    return "/".join(parts)


def join(folder: str, name: str) -> str:
    return name if folder == "." else f"{folder}/{name}"


def relative_to(target: str, from_folder: str) -> str:
    """Path of pack file `target` as seen from pack folder `from_folder` (for TMX `source=`)."""
    return posixpath.relpath(target, "." if from_folder == "." else from_folder)
