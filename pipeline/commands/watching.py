"""What `pcg watch` and `pcg serve` share: the recipes they watch, and the time-stamped lines
they print as builds come and go."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from pipeline.commands.messages import console

if TYPE_CHECKING:
    from rich.console import Console


def watched(targets: list[Path] | None) -> list[Path]:
    """The targets given (default recipes/), each a folder or a recipe; a recipe may not exist
    yet: it is built when it is saved."""
    from pipeline.building.request import DEFAULT_RECIPES
    from pipeline.errors import PipelineError

    targets = targets or [DEFAULT_RECIPES]
    missing = [t for t in targets if not t.exists() and t.suffix != ".toml"]
    if missing:
        raise PipelineError([f"{t}: no such recipe or folder" for t in missing])
    return targets


def stamped(shown: "Console") -> Callable[[str], None]:
    """Print a watcher's lines with the time of day; `error: ...` lines in red and `warning: ...`
    lines in yellow on stderr, as `pcg build` prints them."""
    from rich.markup import escape

    def echo(line: str) -> None:
        stamp = time.strftime("%H:%M:%S")
        kind, _, rest = line.partition(": ")
        if kind in ("error", "warning"):
            colour = "red" if kind == "error" else "yellow"
            console(stderr=True).print(f"{stamp} [{colour}]{kind}:[/{colour}] {escape(rest)}", soft_wrap=True, highlight=False)
        else:
            shown.print(f"{stamp} {escape(line)}", soft_wrap=True, highlight=False)

    return echo
