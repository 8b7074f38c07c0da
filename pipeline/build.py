"""Building packs: plan, run the stale maps on an executor, write files atomically, manifest last."""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pipeline.cache import LevelCache
from pipeline.executor import Executor
from pipeline.fsio import atomic_write, sha256_bytes, sha256_file
from pipeline.manifest import MANIFEST, pack_header, read_manifest, write_manifest
from pipeline.plan import MapPlan, PackPlan, plan_pack
from pipeline.recipe import Recipe
from pipeline.worker import Batch, MapResult, MapTask

# Maps per task: enough to amortise the ~1 ms a task costs, small enough to balance the workers.
MAX_BATCH = 32


@dataclass(frozen=True)
class Failure:
    recipe: str
    map: int
    stage: str
    message: str


@dataclass
class PackReport:
    name: str
    recipe: str
    maps: int
    built: int = 0
    stage_runs: Counter[str] = field(default_factory=Counter)
    files_written: int = 0
    files_removed: int = 0
    failures: list[Failure] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def up_to_date(self) -> bool:
        return self.built == 0 and not self.failures


Progress = Callable[[int], None]


@dataclass
class Builder:
    exports_root: Path
    cache: LevelCache
    force: bool = False
    only: list[int] | None = None  # build these map indices alone

    def plan(self, recipe: Recipe) -> PackPlan:
        previous = read_manifest(self.exports_root / recipe.pack.name / MANIFEST)
        return plan_pack(recipe, self.exports_root, self.cache, previous, force=self.force, only=self.only)

    def build(self, plan: PackPlan, executor: Executor, progress: Progress | None = None) -> PackReport:
        start = time.perf_counter()
        recipe = plan.recipe
        report = PackReport(name=recipe.pack.name, recipe=recipe.path, maps=len(plan.maps))
        stale = plan.stale_maps
        results: dict[int, MapResult] = {}
        written: dict[str, str] = {}  # path -> sha256 of what this build wrote there
        for batch, outcome in executor.results(self._batches(recipe, stale, executor.workers)):
            if isinstance(outcome, BaseException):
                for task in batch.tasks:
                    report.failures.append(Failure(recipe.path, task.index, "-", f"worker lost: {outcome!r}"))
            else:
                for result in outcome:
                    self._store(plan, result, written, report)
                    if result.failure is None:
                        results[result.index] = result
            if progress:
                progress(len(batch.tasks))
        report.built = len(results)
        manifest = self._manifest(plan, results)
        if self.only is None:
            report.files_removed = self._remove_obsolete(plan, manifest)
        write_manifest(plan.pack_dir / MANIFEST, manifest)
        report.failures.sort(key=lambda f: f.map)
        report.seconds = time.perf_counter() - start
        return report

    def _batches(self, recipe: Recipe, maps: list[MapPlan], workers: int) -> list[Batch]:
        if not maps:
            return []
        size = max(1, min(MAX_BATCH, math.ceil(len(maps) / (4 * workers))))
        tasks = [
            MapTask(
                index=m.index,
                stem=m.stem,
                keys={n: s.key for n, s in m.stages.items()},
                seeds={n: s.seed for n, s in m.stages.items()},
                run=m.run,
                exports=m.exports,
            )
            for m in maps
        ]
        root = str(self.cache.root)
        return [Batch(recipe, root, tuple(tasks[i : i + size])) for i in range(0, len(tasks), size)]

    def _store(self, plan: PackPlan, result: MapResult, written: dict[str, str], report: PackReport) -> None:
        """Write one map's files (atomically, skipping identical ones) or record its failure."""
        if result.failure is None:
            digests = {path: sha256_bytes(data) for path, data in result.files.items()}
            for path, digest in digests.items():
                if written.get(path, digest) != digest:
                    result.failure = ("-", f"writes {path}, which another map of this pack wrote differently")
        if result.failure is not None:
            stage, message = result.failure
            report.failures.append(Failure(plan.recipe.path, result.index, stage, message))
            return
        for path, data in result.files.items():
            target = plan.pack_dir / path
            if written.get(path) is None and sha256_file(target) != digests[path]:
                atomic_write(target, data)
                report.files_written += 1
            written[path] = digests[path]
        result.files = {}  # written: free the bytes
        result.digests = digests
        report.stage_runs.update(result.ran)

    def _manifest(self, plan: PackPlan, results: dict[int, MapResult]) -> dict[str, Any]:
        recipe = plan.recipe
        previous = {m["index"]: m for m in (plan.previous or {}).get("maps", [])}
        planned = {m.index: m for m in plan.maps}
        entries = []
        for index in range(recipe.pack.maps):
            prev = previous.get(index)
            mp = planned.get(index)
            if mp is None or (index not in results and mp.stale):
                # Not part of this build, or it failed: the files on disk are still the old ones.
                if prev is not None:
                    entries.append(prev)
                continue
            result = results.get(index)
            files = dict(prev["files"]) if prev else {}
            stats = dict(prev.get("stats", {})) if prev else {}
            outputs = {n: s.get("files", []) for n, s in prev["stages"].items()} if prev else {}
            if result is not None:
                files.update(result.digests)
                stats = result.stats if set(result.outputs) == {s.name for s in recipe.exporters} else {**stats, **result.stats}
                outputs.update(result.outputs)
            stages = {}
            for name, sp in mp.stages.items():
                stages[name] = {"key": sp.key, "seed": list(sp.seed)}
                if recipe.by_name[name].is_exporter:
                    stages[name]["files"] = outputs.get(name, [])
            live = {f for n in stages for f in stages[n].get("files", [])}
            entries.append(
                {
                    "index": index,
                    "stem": mp.stem,
                    "stages": stages,
                    "stats": dict(sorted(stats.items())),
                    "files": {f: files[f] for f in sorted(live) if f in files},
                }
            )
        return {**pack_header(recipe), "maps": entries}

    def _remove_obsolete(self, plan: PackPlan, manifest: dict[str, Any]) -> int:
        """Delete files an earlier build wrote that no map of this pack writes any more (if unmodified)."""
        keep = {f for m in manifest["maps"] for f in m["files"]}
        removed = 0
        for entry in (plan.previous or {}).get("maps", []):
            for rel, digest in entry.get("files", {}).items():
                target = plan.pack_dir / rel
                if rel not in keep and sha256_file(target) == digest:
                    target.unlink()
                    removed += 1
                    keep.add(rel)  # shared files appear in many entries: remove once
        return removed
