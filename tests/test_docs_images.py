"""The docs' pictures (and tilesets/stone.png, which the same script draws) are current: redrawn
into a temporary folder by docs/make_images.py (the tileset code, and real builds of the README's
walkthrough, recipes/comparison.toml and a recorded rule program), they are the committed bytes;
and each page shows the pictures it is about."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

from conftest import ROOT

from pipeline.tiled.art import STYLES

IMG = ROOT / "docs" / "img"


def _shown(page: Path) -> set[str]:
    return set(re.findall(r"\]\(((?:docs/)?img/[^)]+\.(?:png|gif))\)", page.read_text()))


def test_pictures_are_current(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(ROOT / "docs" / "make_images.py"), "--out", str(tmp_path)], check=True, capture_output=True, timeout=300)
    drawn = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    # serve_*.png are browser screenshots (docs/serve_screenshots.py): not byte-stable, not drawn here.
    committed = sorted(p.relative_to(ROOT) for p in IMG.iterdir() if p.is_file() and not p.name.startswith("serve_")) + [Path("tilesets/stone.png")]
    assert sorted(drawn) == sorted(committed), "run: python docs/make_images.py"
    stale = [str(p) for p in drawn if (tmp_path / p).read_bytes() != (ROOT / p).read_bytes()]
    assert not stale, f"out of date (run: python docs/make_images.py): {', '.join(stale)}"


def test_page_shows_every_tileset_and_style() -> None:
    page = ROOT / "docs" / "tilesets.md"
    shown = _shown(page)
    assert shown == {f"img/{p.name}" for p in IMG.glob("*.png") if p.name.startswith(("tileset_", "sheet_", "style_"))}
    for toml in (ROOT / "tilesets").glob("*.toml"):
        assert f"img/tileset_{toml.stem}.png" in shown and f"`{toml.name}`" in page.read_text(), toml.name
    for style in STYLES:
        assert f"img/style_{style}.png" in shown, style
    assert "docs/tilesets.md" in (ROOT / "README.md").read_text()


def test_maze_catalogue_shows_every_generator_of_the_comparison() -> None:
    stages = tomllib.loads((ROOT / "recipes" / "comparison.toml").read_text())["stage"]
    generators = {name for name, body in stages.items() if body["use"].startswith("maze.")}
    # The comparison is "every generator": a new one joins it, and so the catalogue's pictures.
    from pipeline import registry

    assert {body["use"] for body in stages.values() if body["use"].startswith("maze.")} == {k for k in registry.kinds() if k.startswith("maze.")}
    assert _shown(ROOT / "docs" / "mazes.md") == {f"img/maze_{g}.png" for g in generators}
    assert {p.name for p in IMG.glob("maze_*.png")} == {f"maze_{g}.png" for g in generators}


def test_readme_shows_the_walkthrough_and_rewrite_page_the_gif() -> None:
    shown = _shown(ROOT / "README.md")
    # The walkthrough's pictures, and the gallery's screenshots (pcg serve).
    assert shown == {f"docs/img/{p.name}" for p in [*IMG.glob("walk_*.png"), *IMG.glob("serve_*.png")]}
    assert "img/rewrite_dfs_maze.gif" in _shown(ROOT / "docs" / "rewrite.md")
