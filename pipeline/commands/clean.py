"""`pcg clean`: delete the cache of intermediate Levels and, if asked, built packs, under the
Workspace's rules (only pack folders it built, never while a build uses the cache)."""

from __future__ import annotations

from pathlib import Path
from typing import List

import typer

from pipeline.commands.messages import console, user_errors
from pipeline.commands.options import CACHE, EXPORTS


@user_errors
def clean(
    packs: List[Path] = typer.Argument(None, help="Also delete these packs: names under exports/, pack folders, their manifest.json or recipes."),
    all_packs: bool = typer.Option(False, "--all", help="Also delete every pack folder (those with a manifest.json)."),
    out: Path = EXPORTS,
    cache: Path = CACHE,
) -> None:
    """Delete the cache of intermediate Levels (and, if asked, built packs)."""
    from pipeline.building.workspace import Workspace

    shown = console()
    removed = Workspace(out, cache).clean(packs or [], all_packs, waiting=lambda: shown.print("waiting for running builds to finish ..."))
    for path in removed:
        shown.print(f"removed {path}/", soft_wrap=True)
    if not removed:
        shown.print("Nothing to clean.")
