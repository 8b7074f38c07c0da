"""docs/tilesets.md's pictures (and tilesets/stone.png, which the same script draws) are current:
redrawn into a temporary folder, they are the committed bytes; and the page shows them all."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

from pipeline.tiled.art import STYLES


def test_pictures_are_current(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(ROOT / "docs" / "make_images.py"), "--out", str(tmp_path)], check=True, capture_output=True, timeout=120)
    drawn = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.png"))
    committed = sorted(p.relative_to(ROOT) for p in (ROOT / "docs" / "img").glob("*.png")) + [Path("tilesets/stone.png")]
    assert sorted(drawn) == sorted(committed), "run: python docs/make_images.py"
    stale = [str(p) for p in drawn if (tmp_path / p).read_bytes() != (ROOT / p).read_bytes()]
    assert not stale, f"out of date (run: python docs/make_images.py): {', '.join(stale)}"


def test_page_shows_every_tileset_and_style() -> None:
    page = (ROOT / "docs" / "tilesets.md").read_text()
    shown = set(re.findall(r"\]\((img/[^)]+\.png)\)", page))
    assert shown == {f"img/{p.name}" for p in (ROOT / "docs" / "img").glob("*.png")}
    for toml in (ROOT / "tilesets").glob("*.toml"):
        assert f"img/tileset_{toml.stem}.png" in shown and f"`{toml.name}`" in page, toml.name
    for style in STYLES:
        assert f"img/style_{style}.png" in shown, style
    assert "docs/tilesets.md" in (ROOT / "README.md").read_text()
