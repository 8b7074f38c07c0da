"""The pictures of the pages whose recipes draw them (docs/graphs.md, docs/gameplay.md,
docs/previews.md), for docs/make_images.py: built by the pipeline from the recipes the pages
show, so a page and its pictures cannot disagree.

- docs/img/graphs_levels.png: map 0 of recipes/levels.toml (the Gungeon-like floor), its preview.
- Every TOML block of those pages after a line `<!-- pictures: NAME=PATH ... -->`: the block is
  built as a recipe (test_docs builds it too, as every whole recipe of the docs), and each PATH
  inside its pack (a preview, such as `plain/previews/map_000.png`, of map 0; the contact sheet,
  of every map) becomes docs/img/NAME.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
PAGES = (ROOT / "docs" / "graphs.md", ROOT / "docs" / "gameplay.md", ROOT / "docs" / "previews.md")
MARK = re.compile(r"<!-- pictures: (.*?) -->\n```toml\n(.*?)```", flags=re.S)


def marked_blocks(page: str) -> list[tuple[dict[str, str], str]]:
    """(picture name -> path in the pack, recipe text) of each marked block of the page."""
    out = []
    for names, text in MARK.findall(page):
        pictures = dict(item.split("=", 1) for item in names.split())
        out.append((pictures, text))
    return out


def page_images(project: Path, build: Callable[..., Path]) -> dict[str, bytes]:
    """Path (relative to the repository) -> PNG bytes. `build(project, recipe, maps)`: make_images' build."""
    out = {}
    pack = build(project, "levels", maps=[0])
    out["docs/img/graphs_levels.png"] = (pack / "previews" / "map_000.png").read_bytes()
    for page in PAGES:
        for k, (pictures, text) in enumerate(marked_blocks(page.read_text())):
            name = f"{page.stem}_doc_{k}"
            (project / "recipes" / f"{name}.toml").write_text(text)
            # Map 0 makes a preview; a contact sheet shows the whole pack.
            whole = any(Path(inside).name == "contact_sheet.png" for inside in pictures.values())
            pack = build(project, name, maps=None if whole else [0])
            for picture, inside in pictures.items():
                out[f"docs/img/{picture}"] = (pack / inside).read_bytes()
    return out
