"""`pcg verify`: rebuild packs from their manifests in a temporary folder and compare every
file's sha256 with the manifest's (pipeline.building.verify does the work)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, List, Optional

import typer

from pipeline.commands.messages import console, fail, user_errors, warn
from pipeline.commands.options import CACHE, EXPORTS, JOBS, PACK_HELP, QUIET
from pipeline.output import counted


@user_errors
def verify(
    packs: List[Path] = typer.Argument(None, help=PACK_HELP + " Several, or none: every pack under --out."),
    jobs: Optional[int] = JOBS,
    quiet: bool = QUIET,
    out: Path = EXPORTS,
) -> None:
    """Rebuild packs from their manifests in a temporary folder and compare every file's sha256."""
    from pipeline.building.manifest import MANIFEST
    from pipeline.building.workspace import Workspace
    from pipeline.errors import PipelineError

    workspace = Workspace(out, CACHE.default)
    folders = [workspace.pack_folder(pack) for pack in packs or []]
    if not packs:
        folders = sorted(f.parent for f in out.glob(f"*/{MANIFEST}")) if out.is_dir() else []
        if not folders:
            raise PipelineError([f"{out}: no built pack to verify (build one with pcg build, or name a pack)"])
    folders = list(dict.fromkeys(folders))
    problems: list[str] = []
    for folder in folders:
        # Several packs' problems are printed together: each line names its pack.
        named = (lambda line: f"{folder}: {line}") if len(folders) > 1 else (lambda line: line)
        try:
            problems += _verify(folder, jobs, quiet, named)
        except PipelineError as exc:  # its recipe no longer loads, say: the other packs are still verified
            problems += [named(line) for line in exc.problems]
    if problems:
        fail(problems)
        raise typer.Exit(1)


def _verify(folder: Path, jobs: int | None, quiet: bool, named: Callable[[str], str]) -> list[str]:
    """Verify one pack: its warnings printed here, its problems returned (the caller prints
    them with the other packs'), each line as `named` puts it."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from pipeline.building.executor import default_workers
    from pipeline.building.manifest import MANIFEST, load_manifest
    from pipeline.building.verify import verify_pack

    shown = console()
    maps = len(load_manifest(folder / MANIFEST).maps)
    with Progress(
        TextColumn(f"verifying {folder.name}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        # Off a terminal (logs, CI) a bar only leaves a blank line behind.
        console=shown, disable=quiet or not shown.is_terminal, transient=True,
    ) as bar:
        task = bar.add_task("verify", total=maps)
        result = verify_pack(folder / MANIFEST, jobs or default_workers(), lambda n: bar.advance(task, n))
    warn([named(line) for line in result.warnings])
    if not result.problems and not quiet:
        shown.print(f"[green]OK[/green]: {folder.name}: all {counted(result.files, 'file')} of {counted(result.maps, 'map')} rebuild byte for byte.")
    return [named(line) for line in result.problems]
