"""The contact sheet: one PNG per pack with a thumbnail of every map, its index and key stats,
to see a whole pack at a glance (`pcg show PACK`)."""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, cast

from PIL import Image, PngImagePlugin

from pipeline.fsio import atomic_write, sha256_bytes, sha256_file
from pipeline.building.levels_index import play_order, stat_value
from pipeline.building.manifest import Manifest, MapEntry
from pipeline.output import counted
from pipeline.recipe.model import Recipe, StageSpec
from pipeline.registry import Exporter
from pipeline.building.stamps import Stamps
from pipeline.recipe.stat_checks import split_stat
from pipeline.thumbnail import BACKGROUND, DETAIL_KEY, THUMB, from_preview

CONTACT_SHEET = "contact_sheet.png"
LINE = 12  # pixels per line of the built-in bitmap font
PAD = 8
MAX_COLUMNS = 8
MAX_MAPS = 240  # a 10,000-map pack shows its first maps, not a 40,000-pixel image
# Shown when the recipe names no `contact_stats`: the first two of these a pack's maps have.
PREFERRED_STATS = ("difficulty", "path_length", "diameter", "dead_end_pct", "regions", "rooms", "floor_pct", "rewrite_steps")
TEXT = (255, 241, 232, 255)
_KEY = "pcg-contact-sheet"
LAYOUT_VERSION = 9  # bump when the drawing changes, so built sheets are redrawn


@dataclass(frozen=True)
class SheetUpdate:
    """What a build does to the contact sheet: `change` is "written" (it shows something else
    now), "missing" or "edited" (drawn again: gone, or its bytes differ from the build's),
    "removed", or None; `data` the PNG to write, and `sha256` the digest the manifest records
    for the sheet the pack then has (None: no sheet)."""

    change: str | None
    data: bytes | None
    sha256: str | None


def plan_contact_sheet(
    pack_dir: Path,
    recipe: Recipe,
    manifest: Manifest,
    recorded: str | None,
    thumbnails: dict[str, Image.Image] | None = None,
    stamps: Stamps | None = None,
) -> SheetUpdate:
    """Draw the pack's contact sheet if its maps or their previews changed, or the sheet on disk
    is not the one the last build wrote (`recorded`: the sha256 its manifest has). `thumbnails`
    (by the sha256 of the preview they show) are those the workers drew small; the others are
    made from the previews. The sheet on disk is hashed through the pack's `stamps`, if given (a
    no-change build reads no file). Nothing is written: the manifest records the digest first, then
    `apply_contact_sheet` writes."""
    path = pack_dir / CONTACT_SHEET
    entries, stats, key = _planned(recipe, manifest)
    change, on_disk = _change(path, key, recorded, stamps)
    if change in (None, "removed"):
        return SheetUpdate(change, None, on_disk if change is None else None)
    if key is None:
        raise ValueError("a sheet to draw has a key")
    data = _draw(pack_dir, recipe.pack.name, len(manifest.maps), entries, stats, key, thumbnails or {}, measures_line(recipe, manifest))
    return SheetUpdate(change, data, sha256_bytes(data))


def apply_contact_sheet(pack_dir: Path, update: SheetUpdate, temp_dir: Path | None = None) -> None:
    if update.change == "removed":
        (pack_dir / CONTACT_SHEET).unlink(missing_ok=True)
    elif update.data is not None:
        atomic_write(pack_dir / CONTACT_SHEET, update.data, temp_dir)


def sheet_change(pack_dir: Path, recipe: Recipe, manifest: Manifest, stamps: Stamps | None = None) -> str | None:
    """What a build would do to the sheet (`SheetUpdate.change`), given the last build's
    manifest less the maps it drops."""
    return _change(pack_dir / CONTACT_SHEET, _planned(recipe, manifest)[2], manifest.contact_sheet, stamps)[0]


def _change(path: Path, key: str | None, recorded: str | None, stamps: Stamps | None) -> tuple[str | None, str | None]:
    """The change, and the sha256 of the sheet on disk when it stays."""
    if key is None:
        return ("removed" if path.exists() else None), None
    if not path.exists():
        return "missing", None
    # Not the bytes the last build wrote, with no key of ours (an image editor keeps none) or
    # the current one (pixels drawn over): edited. Another key of ours is a sheet the last build
    # did not get to write (stopped after the manifest): redrawn, not an edit. The digest comes
    # from the pack's stamps, so a no-change build reads no pixels. (A manifest from before the
    # sheet's digest was recorded has none to compare.)
    on_disk = stamps.digest(path, CONTACT_SHEET) if stamps is not None else sha256_file(path)
    stored = _stored_key(path)
    if recorded is not None and on_disk != recorded and stored in (None, key):
        return "edited", None
    if stored != key:
        return "written", None
    return None, on_disk


def _planned(recipe: Recipe, manifest: Manifest) -> tuple[list[dict[str, Any]], list[str], str | None]:
    """The sheet's entries, the stats its captions show and its key (None: no sheet)."""
    entries = _entries(recipe, manifest) if recipe.pack.contact_sheet else []
    if not entries:
        return [], [], None
    stats = _stats_shown(recipe, entries)
    # The entries hold all a thumbnail is drawn from (preview digest, the stats its caption reads).
    drawn = [LAYOUT_VERSION, recipe.pack.name, len(manifest.maps), stats, entries, measures_line(recipe, manifest)]
    key = hashlib.sha256(json.dumps(drawn, sort_keys=True).encode()).hexdigest()
    return entries, stats, key


def measures_line(recipe: Recipe, manifest: Manifest) -> str | None:
    """The line under the sheet's title: the pack's diversity and playability (the manifest's
    `measures`) for the stage whose maps the sheet shows; None when they were not measured."""
    measures = manifest.measures or {}
    shown = next(previews(recipe, recipe.pack.stem(0)), None)
    # The stage the previews draw; else (the maps kept from an earlier recipe, whose every
    # rebuild failed) the first measured, which the maps shown were made of.
    item = measures.get(shown[0].inputs[0]) if shown is not None else None
    item = item or next(iter(measures.values()), None)
    if not item:
        return None
    parts = [
        f"{measure}: nearest map {d['min']:.3f}-{d['max']:.3f} (median {d['median']:.3f}), {d['distinct']:.0%} >= {d['threshold']:g}"
        for measure, d in item.get("diversity", {}).items()
    ]
    play = item.get("playability")
    if play:
        parts.append(f"{round(play['solvable'] * play['maps'])} of {play['maps']} can be finished")
    return "; ".join(parts) or None


def _entries(recipe: Recipe, manifest: Manifest) -> list[dict[str, Any]]:
    """Per map shown (`sheet_entry`), in play order when the pack has one (`order_by`), else by
    index."""
    entries = []
    for m in play_order(manifest.maps, recipe.pack.order_by):
        entry = sheet_entry(recipe, m)
        if entry is not None:
            entries.append(entry)
        if len(entries) == MAX_MAPS:
            break
    return entries


def sheet_entry(recipe: Recipe, m: MapEntry) -> dict[str, Any] | None:
    """What the sheet shows of one manifest map: index, stem, the preview `previews` picks (the
    first exporter's that drew one, or `contact_sheet`'s stage's; file and sha256), and the stats
    of the stage that exporter drew, with the `order_by` stat as the pack was sorted by it and
    any `stage.stat` the captions name; None when no exporter drew a preview.

    Not the map's own `stats`: those merge every exporter's input, the last one winning, so a
    recipe with two chains would caption one chain's picture with the other chain's numbers."""
    for spec, preview in previews(recipe, m.stem):
        if preview in m.files:
            drawn = spec.inputs[0]
            # No such stage: a map the last good build made from other stages, kept because
            # its rebuild failed; its own stats are what it was made with.
            stats = dict((m.stats_of(drawn) or {}) if drawn in m.stages else m.stats)
            # The stat the pack is sorted by, as it sorted, and stats named after their stage.
            named = [recipe.pack.order_by.lstrip("-")] if recipe.pack.order_by else []
            for name in named + [n for n in recipe.pack.contact_stats or () if split_stat(n, m.stages)[0] is not None]:
                value = stat_value(m, name)
                if value is not None:
                    stats[name] = value
            return {"index": m.index, "stem": m.stem, "file": preview, "sha256": m.files[preview], "stats": stats}
    return None


def previews(recipe: Recipe, stem: str) -> Iterator[tuple[StageSpec, str]]:
    """(export stage, its preview file) for each exporter of the map `stem` that draws one, in
    recipe order, or only the one `contact_sheet` names: the sheet shows the first
    (`sheet_entry`, and the worker drawing thumbnails)."""
    chosen = recipe.pack.contact_sheet
    for spec in recipe.exporters:
        if isinstance(chosen, str) and spec.name != chosen:
            continue
        preview = cast(Exporter, spec.params).preview_file(stem)
        if preview is not None:
            yield spec, preview


def _stats_shown(recipe: Recipe, entries: list[dict[str, Any]]) -> list[str]:
    if recipe.pack.contact_stats is not None:
        return list(recipe.pack.contact_stats)
    found = [s for s in PREFERRED_STATS if any(s in e["stats"] for e in entries)]
    if recipe.pack.order_by:
        found.insert(0, recipe.pack.order_by.lstrip("-"))
    return list(dict.fromkeys(found))[:2]


def _stored_key(path: Path) -> str | None:
    try:
        with Image.open(path) as image:
            # Our text chunk comes before the pixels: `info` has it without decoding them.
            return image.info.get(_KEY)  # type: ignore[no-any-return]
    except (OSError, ValueError, AttributeError):
        return None


def caption_lines(entry: dict[str, Any], stats: list[str], detail: str | None = None) -> list[str]:
    """The lines under a thumbnail: index and stem, then each stat in `stats` the entry has,
    then which detail of the map it shows when it shows one."""
    lines = [f"#{entry['index']} {entry['stem']}"]
    for name in stats:
        value = entry["stats"].get(name)
        if value is not None:
            lines.append(f"{name} {value:g}" if isinstance(value, float) else f"{name} {value}")
    if detail:
        lines.append(detail)
    return lines


def _fit(text: str, font: Any, width: int, value: bool = False) -> str:
    """Cut a caption line to the thumbnail's width, so it never runs into the next one. A stat's
    line (`value`: "name value") loses the start of its name first, keeping the number."""
    if value and " " in text:
        name, number = text.rsplit(" ", 1)
        while len(name) > 1 and font.getlength(f"{name} {number}") > width:
            name = "~" + name[2:]
        text = f"{name} {number}"
    while text and font.getlength(text) > width:
        text = text[:-2] + "~" if len(text) > 1 else ""
    return text


def _draw(
    pack_dir: Path, pack: str, total: int, entries: list[dict[str, Any]], stats: list[str], key: str, thumbnails: dict[str, Image.Image],
    measures: str | None = None,
) -> bytes:
    from PIL import ImageDraw, ImageFont  # only when drawing: importing ImageDraw costs every command 60 ms

    font = ImageFont.load_default_imagefont()  # a bitmap font: the same pixels on every machine
    columns = min(len(entries), MAX_COLUMNS)
    thumbs = [_thumbnail(pack_dir, entry, thumbnails) for entry in entries]
    captions = [caption_lines(entry, stats, thumb.info.get(DETAIL_KEY)) for entry, thumb in zip(entries, thumbs)]
    # Each row as tall as its tallest map and longest caption: a row of wide maps has no empty
    # band above them.
    rows = [range(start, min(start + columns, len(entries))) for start in range(0, len(entries), columns)]
    heights = [max(thumbs[k].height for k in row) for row in rows]
    lines = [max(len(captions[k]) for k in row) for row in rows]
    cell_w = THUMB + PAD
    title_h = 20 + (LINE if measures else 0)
    height = title_h + PAD + sum(h + n * LINE + 4 + PAD for h, n in zip(heights, lines))
    sheet = Image.new("RGB", (PAD + columns * cell_w, height), BACKGROUND)
    draw = ImageDraw.Draw(sheet)
    title = f"{pack}: {counted(total, 'map')}" + (f" (the first {len(entries)} shown)" if len(entries) < total else "")
    draw.text((PAD, 6), title, font=font, fill=TEXT)
    if measures:
        draw.text((PAD, 6 + LINE), _fit(measures, font, sheet.width - 2 * PAD), font=font, fill=TEXT)
    top = title_h + PAD
    for row, row_h, row_lines in zip(rows, heights, lines):
        for k in row:
            left = PAD + (k % columns) * cell_w
            thumb = thumbs[k]
            # Bottom-aligned, so every caption sits right under its map.
            sheet.paste(thumb, (left + (THUMB - thumb.width) // 2, top + row_h - thumb.height))
            for line, text in enumerate(captions[k]):
                draw.text((left, top + row_h + 3 + line * LINE), _fit(text, font, THUMB, value=line > 0 and text.rsplit(" ", 1)[0] in stats), font=font, fill=TEXT)
        top += row_h + row_lines * LINE + 4 + PAD
    info = PngImagePlugin.PngInfo()
    info.add_text(_KEY, key)
    out = io.BytesIO()
    # Level 3, measured on a 240-map sheet (1352 x 6268): 0.16 s and 890 KB, against 0.31 s and
    # 660 KB at the default 6, and 0.15 s and 1.2 MB at 1. A sheet is redrawn with every build.
    sheet.save(out, format="PNG", pnginfo=info, compress_level=3)
    return out.getvalue()


def _thumbnail(pack_dir: Path, entry: dict[str, Any], thumbnails: dict[str, Image.Image]) -> Image.Image:
    drawn = thumbnails.get(entry["sha256"])
    if drawn is not None:
        return drawn
    try:
        with Image.open(pack_dir / entry["file"]) as image:
            return from_preview(image)
    except (OSError, ValueError, Image.DecompressionBombError):  # a preview gone, damaged, or too big to read
        return Image.new("RGB", (THUMB, THUMB), (0, 0, 0))
