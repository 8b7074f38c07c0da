"""The options and arguments that several commands take, spelled and explained once."""

from __future__ import annotations

from pathlib import Path

import typer

EXPORTS = typer.Option(Path("exports"), "--out", help="Folder that holds the packs.")
CACHE = typer.Option(Path(".pcg-cache"), "--cache", help="Folder for cached intermediate Levels.")
TARGETS = typer.Argument(None, help="Recipe files, or folders whose *.toml files are recipes (default: recipes/).")
JOBS = typer.Option(None, "--jobs", "-j", min=1, help="Worker processes (default: all cores).")
QUIET = typer.Option(False, "--quiet", "-q", help="Print only errors.")
TIMEOUT = typer.Option(
    None, "--timeout", help="A map that takes longer than this many seconds fails (a stage that never ends); the others still build. Default: no limit."
)
# `pcg watch` and `pcg serve` watch recipes alike.
POLL = typer.Option(False, "--poll", help="Poll for changes instead of OS events (network drives, container mounts).")
INTERVAL = typer.Option(0.25, "--interval", min=0.01, help="Seconds between polls, with --poll.")
DEBOUNCE = typer.Option(0.1, "--debounce", min=0.0, help="Seconds without events before a build starts.")
# Every command that takes a built pack takes it these ways (Workspace.pack_folder).
PACK_HELP = "A built pack: its name under exports/, its folder, its manifest.json, or its recipe."
