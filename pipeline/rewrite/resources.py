"""Where a MarkovJunior model's resource files (rule images) come from, and a record of them.

MarkovJunior reads `resources/rules/<folder>/<name>.png` relative to where it runs, which in its
repository is the `resources/` folder beside `models/`. A model loads with a reader: a function
from such a path (relative to the resources folder, `/`-separated) to the file's bytes, raising
ResourceError when it cannot. `ResourceFolder` is the reader the rewrite stage uses; it keeps the
sha256 of every file it read, which become part of the stage's cache key.
"""

from __future__ import annotations

import hashlib
import posixpath
from pathlib import Path
from typing import Callable

from pipeline.fsio import read_regular

ResourceReader = Callable[[str], bytes]


class ResourceError(Exception):
    """A resource that could not be read; the message names the path looked for."""


class ResourceFolder:
    """Files under `base / name`, keyed by their path relative to `base` (the recipe's folder).

    `name` is the folder as the recipe names it (`../resources`, `mj/resources`); keys are that
    joined with the file's path and normalised, so `pcg watch` and `pcg explain` see the same
    paths as the recipe's author."""

    def __init__(self, base: Path, name: str):
        self.base = base
        self.name = posixpath.normpath(name.replace("\\", "/"))
        self.digests: dict[str, str] = {}
        self._read: dict[str, bytes] = {}

    def read(self, relative: str) -> bytes:
        key = posixpath.normpath(posixpath.join(self.name, relative))
        if key in self._read:  # a model may use one image in several rules
            return self._read[key]
        path = self.base / key
        try:
            data = read_regular(path)  # a FIFO here would hang the recipe's loading
        except OSError as exc:
            raise ResourceError(f"cannot read {path} ({exc.strerror or exc})") from None
        self._read[key] = data
        self.digests[key] = hashlib.sha256(data).hexdigest()
        return data
