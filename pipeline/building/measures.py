"""A pack's measures: per stage whose maps an export stage writes, their diversity (each map's
distance to its nearest neighbour, pipeline.diversity) and playability (how many can be
finished, pipeline.playability), from the maps' Levels in the build cache.

A build measures its pack in a worker, where the kernels are loaded already (in a fresh client
process, importing and loading them costs more than a small pack's build), and records the
result in the manifest (`record`); `pcg stats`, `pcg serve` and the contact sheet read it there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from pipeline.building.cache import LevelCache
from pipeline.building.manifest import Manifest, MapEntry
from pipeline.diversity import THRESHOLD, Spread, diversity
from pipeline.level import Level
from pipeline.playability import solvable
from pipeline.recipe.model import Recipe

# A Level the cache does not have, made again from a manifest entry and the stage's name (None:
# it cannot be, as a map kept from an earlier recipe whose stages are gone).
Remake = Callable[[MapEntry, str], "Level | None"]

# Beyond these a build records no measures (`pcg stats` still measures on request): every pair of
# maps is compared, tile by tile, and all the Levels are held at once. 1,000 mazes of 83 x 83
# tiles take 0.7 s to measure, a fifth of their build on 2 cores; 500, a fourth of that.
MOST_MAPS = 500
MOST_TILES = 1 << 20  # of one map
MOST_TILES_IN_ALL = 1 << 26
# Up to this many tiles in all, the ways are searched without numba: a worker that made none of the
# maps (a small pack's maps often all go to one worker) would take 0.3 s to load the compiled search.
SMALL = 1 << 15


@dataclass(frozen=True)
class Measured:
    """What is measured of a stage's Levels over the pack's maps, besides their stats."""

    spreads: list[Spread]  # diversity: one per measure
    solvable: int  # maps whose exit can be reached from the spawn, keys and locks respected
    judged: int  # maps with a spawn and an exit to judge


def measured_stages(manifest: Manifest) -> list[str]:
    """The stages an export stage writes (their maps have stats in the manifest), in recipe order."""
    return [name for name in manifest.stages if any(e.stats_of(name) is not None for e in manifest.maps)]


def measure_pack(
    manifest: Manifest, cache: LevelCache, threshold: float, most_tiles: int | None = None, remake: Remake | None = None
) -> tuple[dict[str, Measured], list[str]]:
    """Per stage an export stage writes, its diversity and playability over the pack's maps,
    from the Levels in the build cache (or made again by `remake`, if given); and the stages left
    out, each with why (a Level no longer cached, or one of more than `most_tiles` tiles)."""
    out: dict[str, Measured] = {}
    missing: list[str] = []
    for name in measured_stages(manifest):
        levels = []
        tiles = 0
        for entry in sorted(manifest.maps, key=lambda m: m.index):
            key = entry.key_of(name)
            level = cache.load(key) if key else None
            if level is None and remake is not None:
                level = remake(entry, name)
            if level is None:
                missing.append(f"{name}: map {entry.index} is no longer in the build cache (build the recipe again to measure it)")
                break
            tiles += level.tiles.size
            if most_tiles is not None and (level.tiles.size > most_tiles or tiles > MOST_TILES_IN_ALL):
                missing.append(f"{name}: the maps have more tiles than a build measures ({most_tiles:,} a map, {MOST_TILES_IN_ALL:,} in all)")
                break
            levels.append(level)
        else:
            walls = blocking(manifest.stages.get(name, {}).get("params", {}))
            small = tiles <= SMALL  # searched without numba: see grid.bfs.distances
            verdicts = [v for v in (solvable(lv, walls, small) for lv in levels) if v is not None]
            out[name] = Measured(diversity(levels, threshold, walls, small), sum(verdicts), len(verdicts))
    return out, missing


def blocking(params: dict[str, Any]) -> tuple[str, ...]:
    """What a walk cannot cross on a stage's maps: its `walls` symbols, as a placement stage
    names them, else "wall" (a stage whose `walls` is something else, as a count, names none)."""
    walls = params.get("walls")
    if isinstance(walls, (list, tuple)) and walls and all(isinstance(w, str) for w in walls):
        return tuple(walls)
    return ("wall",)


def record(measured: dict[str, Measured]) -> dict[str, Any]:
    """The measures as JSON (the manifest's `measures`, and each stage's part of `pcg stats
    --format json`): per stage, `diversity` {MEASURE: {min, median, max, distinct, threshold,
    nearest: [per map]}} when it has two maps or more, and `playability` {solvable (a share),
    maps} when some map has a spawn and an exit."""
    out: dict[str, Any] = {}
    for name, found in measured.items():
        item: dict[str, Any] = {}
        if found.spreads:
            item["diversity"] = {s.measure: {**s.summary(), "threshold": s.threshold, "nearest": list(s.nearest)} for s in found.spreads}
        if found.judged:
            item["playability"] = {"solvable": found.solvable / found.judged, "maps": found.judged}
        if item:
            out[name] = item
    return out


def from_record(recorded: dict[str, Any]) -> dict[str, Measured]:
    """The measures a manifest records, as `measure_pack` returns them."""
    out = {}
    for name, item in recorded.items():
        spreads = [Spread(measure, tuple(d["nearest"]), d["threshold"]) for measure, d in item.get("diversity", {}).items()]
        play = item.get("playability", {"solvable": 0.0, "maps": 0})
        out[name] = Measured(spreads, round(play["solvable"] * play["maps"]), play["maps"])
    return out


def threshold_of(manifest: Manifest) -> float:
    """The distance at which a pack's maps count as distinct: its `distinct`, else THRESHOLD."""
    return float((manifest.pack.get("distinct") or {}).get("min", THRESHOLD))


def pack_measures(manifest: Manifest, cache: LevelCache, threshold: float) -> tuple[dict[str, Measured], list[str]]:
    """The measures the manifest records, if at this threshold; else measured from the cache."""
    recorded = recorded_at(manifest, threshold)
    if recorded:
        return from_record(recorded), []
    return measure_pack(manifest, cache, threshold)


def recorded_at(manifest: Manifest, threshold: float) -> dict[str, Any] | None:
    """The measures the manifest records, if of this threshold and of the shape `record` writes
    (a manifest edited by hand may hold anything); else None."""
    recorded = manifest.measures
    try:
        from_record(recorded)  # type: ignore[arg-type]
        if all(d["threshold"] == threshold for item in recorded.values() for d in item.get("diversity", {}).values()):  # type: ignore[union-attr]
            return recorded  # type: ignore[return-value]
    except (AttributeError, KeyError, TypeError, ValueError):
        pass
    return None


def same_maps(a: Manifest, b: Manifest) -> bool:
    """Whether two manifests list the same maps, made from the same Levels (their stages' keys):
    their measures are the same."""
    return made_of(a) == made_of(b)


def made_of(manifest: Manifest) -> list[tuple[int, list[tuple[str, str]]]]:
    """What a pack's measures are a function of: each map, and its stages' keys."""
    return [(m.index, sorted((n, s.key) for n, s in m.stages.items())) for m in manifest.maps]


def worth_measuring(manifest: Manifest) -> bool:
    """Whether a build measures the pack: two maps or more (one map has no diversity, and whether
    it can be finished is `pcg stats`'s to say, on request), not too many, and a stage to measure
    (the job itself gives up on maps of more than MOST_TILES tiles)."""
    return 2 <= len(manifest.maps) <= MOST_MAPS and bool(measured_stages(manifest))


@dataclass(frozen=True)
class MeasureJob:
    """A pack's measuring, run where batches run (`worker.run_batch`): in a worker, whose
    kernels are loaded. What it records is a function of the maps alone: a Level the cache lost
    is made again from the recipe (`remake`), so a build's measures never depend on the cache."""

    cache_root: str
    manifest: Manifest
    threshold: float
    recipe: Recipe
    config: str  # the recipe's config_id: the maps it made (their manifest `config`) can be made again

    def run(self, remake: Remake | None = None) -> dict[str, Any]:
        measured, missing = measure_pack(self.manifest, LevelCache(self.cache_root), self.threshold, MOST_TILES, remake)
        return {} if missing else record(measured)
