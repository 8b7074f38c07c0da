"""`levels.json`: a pack's maps in the order a game should play them (`[pack] order_by`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from pipeline.building.manifest import Manifest, MapEntry
from pipeline.fsio import write_if_changed
from pipeline.recipe.stat_checks import split_stat

LEVELS = "levels.json"


def stat_value(m: MapEntry, name: str) -> Any:
    """A manifest map entry's value of the stat `name`, or of `stage.stat` for that stage's
    Level (pipeline.recipe.stat_checks: a stage name has no dots); None when the map has no such stat."""
    stage, stat = split_stat(name, m.stages)
    if stage is not None:
        return (m.stats_of(stage) or {}).get(stat)
    return m.stats.get(name)


def play_order(maps: Iterable[MapEntry], order_by: str | None) -> list[MapEntry]:
    """Manifest map entries sorted by the stat `order_by` (a leading `-` sorts high to low; ties
    and maps without the stat, or with a value that is not a number, keep map order, the latter
    last); by index without `order_by`."""
    maps = sorted(maps, key=lambda m: m.index)
    if not order_by:
        return maps
    name = order_by.lstrip("-")
    sign = -1 if order_by.startswith("-") else 1
    values = [stat_value(m, name) for m in maps]
    have = [(sign * v, i) for i, v in enumerate(values) if isinstance(v, (int, float))]
    lacking = [m for m, v in zip(maps, values) if not isinstance(v, (int, float))]
    return [maps[i] for _, i in sorted(have)] + lacking


def unordered(maps: Iterable[MapEntry], order_by: str | None) -> str | None:
    """Why `order_by` sorts nothing, when its stat is in the maps but a number in none of them
    (`region_sizes` is text): the recipe loads, since stats are declared without their types."""
    if not order_by:
        return None
    name = order_by.lstrip("-")
    values = [v for v in (stat_value(m, name) for m in maps) if v is not None]
    if not values or any(isinstance(v, (int, float)) for v in values):
        return None
    shown = repr(values[0]) if len(repr(values[0])) <= 24 else repr(values[0])[:20] + "...'"
    return f"pack.order_by: {name!r} is text, not a number, in every map ({shown} in the first), so levels.json keeps map order"


def levels_index(pack: str, order_by: str, manifest: Manifest) -> bytes:
    """Every built map in play order (`play_order`), with its files."""
    name = order_by.lstrip("-")
    levels = [
        {"map": m.index, "stem": m.stem, name: stat_value(m, name), "files": sorted(m.files)}
        for m in play_order(manifest.maps, order_by)
    ]
    return (json.dumps({"pack": pack, "order_by": order_by, "levels": levels}, indent=1) + "\n").encode("utf-8")


def update_levels_index(pack_dir: Path, pack: str, order_by: str | None, manifest: Manifest, temp_dir: Path | None = None) -> None:
    """Write the index (only if it changed), or remove one an earlier build wrote."""
    path = pack_dir / LEVELS
    if order_by is None:
        try:
            if json.loads(path.read_text(encoding="utf-8")).get("pack") == pack:
                path.unlink()
        except (OSError, ValueError, AttributeError):
            pass
        return
    write_if_changed(path, levels_index(pack, order_by, manifest), temp_dir)
