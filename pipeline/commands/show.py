"""`pcg show`: where a pack's contact sheet is, opened in the image viewer when there is a desktop."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional

import typer

from pipeline.commands.messages import console, user_errors, warn
from pipeline.commands.options import CACHE, EXPORTS, PACK_HELP


@user_errors
def show(
    pack: Path = typer.Argument(..., help=PACK_HELP),
    open_: Optional[bool] = typer.Option(
        None, "--open/--no-open", help="Open the contact sheet in the image viewer (default: when there is a desktop)."
    ),
    out: Path = EXPORTS,
) -> None:
    """Print where a pack's contact sheet is (a thumbnail of every map with its stats) and open it."""
    from pipeline.building.contact_sheet import CONTACT_SHEET
    from pipeline.building.workspace import Workspace
    from pipeline.errors import PipelineError

    folder = Workspace(out, CACHE.default).pack_folder(pack)
    sheet = folder / CONTACT_SHEET
    if not sheet.is_file():
        raise PipelineError([f"{folder}: no {CONTACT_SHEET} (the pack has no previews, or its recipe sets contact_sheet = false)"])
    console().print(str(sheet), soft_wrap=True)
    desktop = sys.platform in ("darwin", "win32") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if not (desktop if open_ is None else open_):
        return
    if not desktop:  # --open asked for, and no screen to show it on: xdg-open would fail unseen
        warn([f"--open: no desktop here (neither DISPLAY nor WAYLAND_DISPLAY is set), so {sheet} was not opened"])
        return
    if sys.platform == "win32":
        os.startfile(sheet)  # type: ignore[attr-defined]
        return
    viewer = shutil.which("open" if sys.platform == "darwin" else "xdg-open")
    if viewer is None:
        raise PipelineError([f"cannot open {sheet}: no {'open' if sys.platform == 'darwin' else 'xdg-open'} on this machine"])
    subprocess.Popen([viewer, str(sheet)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
