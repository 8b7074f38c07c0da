"""Building packs: plan, run the stale maps on an executor, write files atomically, the manifest
written ahead (without what the build may replace) and in full last."""

from __future__ import annotations

import itertools
import math
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, cast

from pipeline.building.cache import LevelCache
from pipeline.building.executor import Executor, Outcome, Stopped, worker_lost
from pipeline.building.contact_sheet import CONTACT_SHEET, apply_contact_sheet, plan_contact_sheet
from pipeline.errors import PipelineError, os_error_line
from pipeline.fsio import atomic_write, land, naming, remove_stale_temps, same_file_system, sha256_bytes, sha256_file
from pipeline.building.journal import Journal, Record, cache_deleted
from pipeline.building.levels_index import LEVELS, unordered, update_levels_index
from pipeline.building.manifest import (
    MANIFEST, DistinctRecord, Manifest, MapEntry, StageRecord, assemble, environment, environment_id, read_manifest, recipe_record, write_manifest,
)
from pipeline.output import counted, spans
from pipeline.building.measures import MeasureJob, blocking, recorded_at, same_maps, threshold_of, worth_measuring
from pipeline.building.pack_files import update_pack_files
from pipeline.building.distinct import Chooser
from pipeline.building.distinct import rule as distinct_rule
from pipeline.building.plan import KeyMaker, MapPlan, PackPlan, plan_pack
from pipeline.recipe.model import distinct_stage, Recipe
from pipeline.registry import Exporter
from pipeline.building.stamps import Stamps
from pipeline.building.worker import Batch, MapResult, MapTask, Probe, clash, discard_staged, run_batch

if TYPE_CHECKING:
    from PIL import Image

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
    warnings: list[str] = field(default_factory=list)  # "recipe: problem" lines: built, but most likely not as meant

    @property
    def up_to_date(self) -> bool:
        # Files written with no map built: the contact sheet drawn again, an edited LDtk project made again.
        return self.built == 0 and not self.failures and not self.files_written


Progress = Callable[[int], None]


@dataclass
class _PackRun:
    """One build of one pack as it goes (Builder.build): what the journal and the manifest on
    disk say, and what the maps have brought back so far."""

    plan: PackPlan
    report: PackReport
    temp: Path | None  # the cache's temporary folder, where files are made before they land
    beside: bool  # temporary files beside their targets instead (another file system, a cluster)
    journal: Journal
    record: Record  # what an unfinished earlier build planned and wrote
    planned: set[str]  # what this build may write or remove
    temp_folder: tuple[int, int] | None  # the temporary folder's identity: a cache deleted under the build comes back as another
    unjournaled: dict[int, list[str]]  # files no journal names, looked at before this build replaces them
    on_disk: Manifest | None  # the manifest on disk now
    written: dict[str, str]
    results: dict[int, MapResult] = field(default_factory=dict)
    thumbnails: dict[str, Image.Image] = field(default_factory=dict)  # preview sha256 -> the sheet's thumbnail of it
    error: OSError | None = None  # a file that could not be written: the build stops storing
    lost: bool = False  # a batch came back as an exception


@dataclass
class Builder:
    exports_root: Path
    cache: LevelCache
    force: bool = False
    only: list[int] | None = None  # build these map indices alone
    timeout: float | None = None  # seconds a map may take
    attempts: dict[int, int] | None = None  # each map's attempt, as a manifest records it (`pcg verify`)

    def plan(self, recipe: Recipe) -> PackPlan:
        previous = read_manifest(self.exports_root / recipe.pack.name / MANIFEST)
        return plan_pack(recipe, self.exports_root, self.cache, previous, force=self.force, only=self.only, attempts=self.attempts)

    def run_ahead(self, plans: list[PackPlan], executor: Executor) -> dict[str, Outcome]:
        """The first stale map of every pack, run at once on the executor, by pack name, for
        `build` to store in the pack's turn: packs use different kernels, so on a first run the
        workers compile different kernels side by side (maps of one pack would all wait for the
        same kernel). Nothing is written here: the files come back as bytes. A map whose batch was
        lost (a worker died, and the batches queued with it) is left out, to run in its pack's
        turn as any other."""
        batches = [self._batches(p.recipe, p.stale_maps[:1], 1, None)[0] for p in _diverse([p for p in plans if p.stale_maps])]
        return {batch.recipe.pack.name: (batch, outcome) for batch, outcome in executor.results(batches) if not isinstance(outcome, BaseException)}

    def choose(self, plan: PackPlan, executor: Executor, progress: Callable[[], Progress | None] = lambda: None) -> PackPlan:
        """The plan again, with the attempt of each map `pack.distinct` keeps (`pipeline.building.distinct`:
        the executor makes the attempts, in rounds); the plan itself when the recipe has none, or
        the build rebuilds given attempts. Writes nothing under exports/: the attempts' Levels go
        to the cache, for `build` to export the kept ones. `progress()`: a callback told of each
        attempt made, asked for once there are attempts to make."""
        recipe = plan.recipe
        distinct = recipe.pack.distinct
        if distinct is None or self.attempts is not None:
            return plan
        start = time.perf_counter()
        order, fixed = self._to_choose(plan)
        if all(i in fixed for i in order):  # every map as recorded: nothing to choose
            plan.picks, plan.through = {}, plan.chosen
            return plan
        told = progress()
        chooser = Chooser(distinct, order, fixed)
        maker = KeyMaker(recipe)
        stage = distinct_stage(recipe)
        probe = Probe(stage, distinct.measure, blocking(recipe.by_name[stage].params.model_dump(mode="json")))
        while wanted := chooser.wanted():
            tasks = [self._task(maker, index, attempt) for index, attempt in wanted]
            for batch, outcome in executor.results(self._batches_of(recipe, tasks, executor.workers, probe=probe)):
                for task, result in _outcomes(batch, outcome):
                    chooser.add(task.index, task.attempt, result.attempt, result.print, result.failure)
                if told:
                    told(len(batch.tasks))
        choice = chooser.choice()
        chosen = plan_pack(
            recipe, self.exports_root, self.cache, plan.previous, force=self.force, only=self.only, attempts=choice.picks, redrawn=choice.redrawn
        )
        probed = {i for i in choice.picks if i not in fixed}
        for mp in chosen.maps:
            mp.refused = choice.refused.get(mp.index)
            if mp.refused is not None:
                mp.exports, mp.run = tuple(s.name for s in recipe.exporters), ()
            elif self.force and mp.index in probed:  # its Levels were made anew just now: exported, not made twice
                mp.run = tuple(name for name in mp.run if recipe.by_name[name].is_exporter)
        chosen.picks = {i: choice.picks[i] for i in sorted(probed)}
        chosen.through = self._chosen_through(plan, choice.picks)
        chosen.redrawn = tuple(m.index for m in chosen.stale_maps if m.index in choice.redrawn)
        chosen.seconds = time.perf_counter() - start
        return chosen

    def to_choose(self, plan: PackPlan) -> int:
        """How many maps `choose` would make attempts of (workers to start for)."""
        if plan.recipe.pack.distinct is None or self.attempts is not None:
            return 0
        order, fixed = self._to_choose(plan)
        return len(order) - len(fixed)

    def _to_choose(self, plan: PackPlan) -> tuple[list[int], dict[int, int]]:
        """The maps `choose` walks, in order, and those of them kept at their recorded attempt:
        the maps before the first that may change; with --map, every map not asked for, as the
        recipe makes it now (a map of an earlier recipe is made again by the next whole build,
        and every map after it chosen again)."""
        recipe = plan.recipe
        recorded = plan.recorded
        if self.only is not None:
            order = [i for i in range(max(self.only) + 1) if i in self.only or i in recorded]
            return order, {i: recorded[i].attempt for i in order if i not in self.only}
        remade = _remade(plan)
        first = next((i for i in range(recipe.pack.maps) if i >= plan.chosen or i not in recorded or i in remade), recipe.pack.maps)
        order = list(range(recipe.pack.maps))
        return order, {i: recorded[i].attempt for i in order[:first]}

    def _chosen_through(self, plan: PackPlan, picks: dict[int, int]) -> int:
        """How many leading maps are chosen together once the walk's picks are built (before the
        build's failures count: `_through`). A whole build chooses every map; a --map build
        leaves the maps after one it changed not compared with it."""
        if self.only is None:
            return plan.recipe.pack.maps
        recorded = plan.recorded
        remade = _remade(plan)
        changed = [i for i in self.only if i in remade or picks.get(i) != (recorded[i].attempt if i in recorded else None)]
        return min([plan.chosen, *changed])

    def _task(self, maker: KeyMaker, index: int, attempt: int) -> MapTask:
        recipe = maker.recipe
        return MapTask.at(
            maker.keys(index, attempt), index, recipe.pack.stem(index), attempt,
            run=tuple(s.name for s in recipe.stages) if self.force else (), exports=tuple(s.name for s in recipe.exporters), force=self.force,
        )

    def build(self, plan: PackPlan, executor: Executor, progress: Progress | None = None, ahead: Outcome | None = None) -> PackReport:
        """Run the plan's stale maps and write their files, then the manifest. A file-system
        failure (disk full, read-only, permission) stops the pack with a PackWriteError, after
        the manifest has been made to describe what is on disk (or, if even that cannot be
        written, the journal makes the next build repair it). `ahead`: a batch of the plan's
        stale maps that `run_ahead` ran already, with its results."""
        start = time.perf_counter()
        run = self._begin(plan, executor)
        self._run_maps(run, executor, progress, ahead)
        try:
            self._finish(run, executor)
        except OSError as exc:
            run.error = run.error or exc  # the journal stays: the next build finishes the job
        error = run.error
        if isinstance(error, FileNotFoundError) and run.planned and (not run.journal.path.exists() or _identity(self.cache.temp_dir) != run.temp_folder):
            # A file or folder of the cache vanished under the build (its journal, the files
            # made there): say so, not which of them it met first.
            error = cache_deleted(self.cache.root)
        if error is not None:
            raise PackWriteError([f"{plan.recipe.path}: {os_error_line(error)}"])
        run.report.failures.sort(key=lambda f: f.map)
        run.report.seconds = time.perf_counter() - start + plan.seconds
        return run.report

    def _begin(self, plan: PackPlan, executor: Executor) -> _PackRun:
        """Before any map runs: what a stopped build left cleared away, the journal begun with
        what this one may write or remove, and the manifest on disk retracted from it."""
        recipe = plan.recipe
        temp = self._temp_dir(plan)
        remove_stale_temps(self.cache.temp_dir)  # what a killed build left
        # Temporary files beside their targets where the cache's folder is on another file system,
        # or may be another machine's (a cluster's workers): this process renames them.
        beside = temp is None or not executor.local_files
        if beside:
            # Under the pack's lock, any there is a stopped build's, even one a cluster's worker
            # (whose process this machine cannot see) made after its client died.
            remove_stale_temps(plan.pack_dir, recursive=True, whoever=True)
        journal = Journal(self.cache.root, plan.pack_dir)
        record = journal.leftover()  # what an unfinished earlier build planned and wrote
        # What it may write, and what it may remove (the maps the pack no longer has): a build
        # stopped after the manifest stopped naming them leaves them for the next to remove.
        planned = _planned_paths(plan, plan.stale_maps) | {f for m in _maps(plan.previous) if m.index >= recipe.pack.maps for f in m.files}
        if planned:
            journal.begin(Record(record.planned | planned, _merged(record.wrote, _claimed(plan.previous, planned))), self.cache.temp_dir)
            self.cache.temp_dir.mkdir(exist_ok=True)
        temp_folder = _identity(self.cache.temp_dir)  # a deleted cache comes back as another folder, if at all
        # Write-ahead: the manifest on disk stops naming what this build may replace before any
        # of it is replaced, so that every file it names has, at every instant, the sha256 it gives.
        unjournaled = _unjournaled(plan, record)  # looked at before this build replaces them
        on_disk = _retracted(plan)
        if on_disk is not plan.previous:
            write_manifest(plan.pack_dir / MANIFEST, on_disk, temp)
        return _PackRun(
            plan=plan,
            report=PackReport(name=recipe.pack.name, recipe=recipe.path, maps=len(plan.maps)),
            temp=temp,
            beside=beside,
            journal=journal,
            record=record,
            planned=planned,
            temp_folder=temp_folder,
            unjournaled=unjournaled,
            on_disk=on_disk,
            # path -> sha256 of what this build wrote there, or of what a map it keeps has there:
            # a map that would write other bytes over either fails instead.
            written={path: digest for m in _maps(on_disk) for path, digest in m.files.items()},
        )

    def _run_maps(self, run: _PackRun, executor: Executor, progress: Progress | None, ahead: Outcome | None) -> None:
        """Run the stale maps in batches and store each one's files as it comes back, until a
        file cannot be written (run.error): the maps not yet stored keep their earlier files."""
        plan, report = run.plan, run.report
        recipe, stale = plan.recipe, plan.stale_maps
        pack_dir = str(plan.pack_dir.resolve()) if executor.writes_files else None
        done = {task.index for task in ahead[0].tasks} if ahead else set()
        for m in stale:
            if m.refused is not None:  # fails unbuilt, keeping its earlier files
                report.failures.append(Failure(recipe.path, m.index, *m.refused))
        todo = [m for m in stale if m.index not in done and m.refused is None]
        if progress and len(todo) + len(done) < len(stale):
            progress(len(stale) - len(todo) - len(done))
        batches = self._batches(recipe, todo, executor.workers, pack_dir, run.beside)
        for batch, outcome in itertools.chain([ahead] if ahead else [], executor.results(batches)):
            if isinstance(outcome, BaseException):
                run.lost = True  # its worker may still be at work
                why = _lost(outcome)
                for task in batch.tasks:
                    report.failures.append(Failure(recipe.path, task.index, "-", why))
            else:
                for result in outcome:
                    try:
                        self._store(plan, result, run.written, report, run.temp, run.journal, executor.local_files)
                    except OSError as exc:
                        run.error = exc
                        for unstored in outcome:
                            discard_staged(unstored)
                        break
                    if result.failure is None:
                        run.results[result.index] = result
                        if result.thumbnail is not None:
                            preview, picture = result.thumbnail
                            if preview in result.digests:  # an exporter's preview among its files
                                run.thumbnails[result.digests[preview]] = picture
                            result.thumbnail = None
            if progress:
                progress(len(batch.tasks))
            if run.error is not None:
                break  # the maps not yet stored keep their earlier files and entries

    def _finish(self, run: _PackRun, executor: Executor) -> None:
        """After the maps: the pack's measures, its pack files and contact sheet, each in place
        before the manifest that records it, the manifest, and what no map claims swept away."""
        plan, report = run.plan, run.report
        recipe = plan.recipe
        report.built = len(run.results)
        report.warnings += _map_warnings(recipe, run.results)
        report.warnings += _remade_edits(plan, run.results, run.unjournaled)
        if plan.damaged:
            report.warnings.append(f"{recipe.path}: {plan.pack_dir / MANIFEST}: damaged, unreadable or of another format, so the maps were built anew")
        manifest = self._manifest(plan, run.results)
        if run.error is None:
            manifest = self._measure(plan, manifest, executor, report)
        # Pack files (an LDtk project) come before the manifest, which records their digests.
        recorded = plan.previous.pack_files if plan.previous is not None else {}
        pack_files, restored = update_pack_files(plan.pack_dir, recipe, manifest, recorded, self.force, run.temp) if run.error is None else (recorded, [])
        report.warnings += [f"{recipe.path}: {plan.pack_dir / rel}: edited since the last build; made again (a build owns its files)" for rel in restored]
        report.files_written += len(restored)
        manifest = replace(manifest, pack_files=pack_files)
        if run.error is None:
            report.files_removed = self._remove_obsolete(plan, manifest)
        if manifest.maps or plan.previous is not None:  # no manifest for a pack that has no map yet
            self._write_manifest(run, manifest)
        if plan.stamps is not None:
            plan.stamps.save(self.cache.temp_dir)
        # The manifest on disk is now this one: what it does not claim of what this build
        # (or an unfinished one before it) wrote is nobody's.
        # A map that failed keeps its files (the next build tries it again).
        waiting = {path for m in plan.stale_maps if m.index not in run.results for path in _map_paths(plan, m)}
        report.files_removed += _sweep(plan, manifest, run.journal.record if run.planned else run.record, waiting)
        # A build of some maps (--map) keeps it: an unfinished build before may have taken
        # other maps out of the manifest, whose files only the journal still knows.
        if run.error is None and not run.lost and self.only is None:
            run.journal.end()

    def _write_manifest(self, run: _PackRun, manifest: Manifest) -> None:
        """The contact sheet drawn and put in place, then the manifest that records its digest,
        then the levels index that orders the maps."""
        plan, report, temp = run.plan, run.report, run.temp
        recipe, stamps, on_disk = plan.recipe, plan.stamps, run.on_disk
        recorded_sheet = plan.previous.contact_sheet if plan.previous is not None else None
        sheet = plan_contact_sheet(plan.pack_dir, recipe, manifest, recorded_sheet, run.thumbnails, stamps) if run.error is None else None
        kept = on_disk.contact_sheet if on_disk is not None else None
        digest = sheet.sha256 if sheet is not None else kept  # a failed build leaves the sheet as it was
        if digest is not None:
            manifest = replace(manifest, contact_sheet=digest)
        if sheet is not None:
            # In place before the manifest that names it; one that names another must stop
            # naming it first.
            if on_disk is not None and on_disk.contact_sheet not in (None, sheet.sha256):
                on_disk = replace(on_disk, contact_sheet=None)
                write_manifest(plan.pack_dir / MANIFEST, on_disk, temp)
            apply_contact_sheet(plan.pack_dir, sheet, temp)
            if stamps is not None and sheet.data is not None and sheet.sha256 is not None:
                stamps.record(plan.pack_dir / CONTACT_SHEET, CONTACT_SHEET, sheet.sha256)
        if manifest != on_disk:  # comparing is far cheaper than encoding 1,000 maps
            write_manifest(plan.pack_dir / MANIFEST, manifest, temp)
        if sheet is None:
            return
        update_levels_index(plan.pack_dir, recipe.pack.name, recipe.pack.order_by, manifest, temp)
        why = unordered(manifest.maps, recipe.pack.order_by)
        if why is not None:
            report.warnings.append(f"{recipe.path}: {why}")
        if sheet.change == "edited":
            report.warnings.append(f"{recipe.path}: {plan.pack_dir / CONTACT_SHEET}: edited since the last build; drawn again (a build owns its files)")
        report.files_written += sheet.data is not None  # a build that changes it is not "up to date"
        report.files_removed += sheet.change == "removed"

    def _measure(self, plan: PackPlan, manifest: Manifest, executor: Executor, report: PackReport) -> Manifest:
        """The manifest with the pack's measures (pipeline.building.measures): as the last build
        recorded them if its maps and the threshold are the same, else measured anew, in a worker
        (here, if that worker was lost). Measures that cannot be taken are left out, with a warning."""
        threshold = threshold_of(manifest)
        previous = plan.previous
        recorded = recorded_at(previous, threshold) if previous is not None else None
        if previous is not None and recorded is not None and same_maps(previous, manifest):
            return replace(manifest, measures=recorded)
        if not worth_measuring(manifest):
            return manifest
        config = recipe_record(plan.recipe, self.exports_root.parent).config_id
        job = MeasureJob(str(self.cache.root.resolve()), manifest, threshold, plan.recipe, config)
        outcome: Any = None
        try:
            # Read to its end: an executor stops its workers when a caller leaves its results early.
            for _, outcome in executor.results([job]):  # type: ignore[list-item]
                pass
            if isinstance(outcome, BaseException) and worker_lost(outcome):
                outcome = run_batch(job)
        except Exception as exc:  # a measure that broke (a stage's odd Level): the pack is built all the same
            outcome = exc
        if isinstance(outcome, Stopped):
            return manifest
        if isinstance(outcome, BaseException):
            report.warnings.append(f"{plan.recipe.path}: the pack's diversity and playability were not measured ({type(outcome).__name__}: {outcome})")
        elif outcome:
            return replace(manifest, measures=outcome)
        return manifest

    def _temp_dir(self, plan: PackPlan) -> Path | None:
        """The cache's temporary folder, if a rename from there can reach the pack; else None
        (temporary files beside their targets)."""
        return self.cache.temp_dir if same_file_system(self.cache.root, plan.pack_dir) else None

    def _batches(self, recipe: Recipe, maps: list[MapPlan], workers: int, pack_dir: str | None, temp_beside: bool = False) -> list[Batch]:
        tasks = [
            MapTask(
                index=m.index,
                stem=m.stem,
                keys={n: s.key for n, s in m.stages.items()},
                seeds={n: s.seed for n, s in m.stages.items()},
                run=m.run,
                exports=m.exports,
                attempt=m.attempt,
                force=self.force,
            )
            for m in maps
        ]
        return self._batches_of(recipe, tasks, workers, pack_dir, temp_beside)

    def _batches_of(
        self, recipe: Recipe, tasks: list[MapTask], workers: int, pack_dir: str | None = None, temp_beside: bool = False, probe: Probe | None = None
    ) -> list[Batch]:
        if not tasks:
            return []
        size = max(1, min(MAX_BATCH, math.ceil(len(tasks) / (4 * workers))))
        root = str(self.cache.root.resolve())  # workers elsewhere (a Dask cluster) may run in another folder
        return [Batch(recipe, root, tuple(tasks[i : i + size]), pack_dir, self.timeout, temp_beside, probe) for i in range(0, len(tasks), size)]

    def _store(
        self, plan: PackPlan, result: MapResult, written: dict[str, str], report: PackReport, temp: Path | None, journal: Journal,
        local: bool = True,
    ) -> None:
        """Put one map's files in place (atomically, skipping identical ones) or record its
        failure. Files a worker made itself arrive as digests and temporary files, renamed into
        place here only after the journal has their digests."""
        if result.write_error is not None:
            raise _named_here(result.write_error, plan.pack_dir)
        if result.failure is None:
            digests = result.digests or {path: sha256_bytes(data) for path, data in result.files.items()}
            for path, digest in digests.items():
                if written.get(path, digest) != digest:
                    result.failure = ("-", clash(path, "another map of this pack"))
            if result.failure is None and not local:
                result.failure = self._unseen(plan, digests, result)
        if result.failure is not None:
            discard_staged(result)
            for stage, message in [result.failure, *result.more_failures]:
                report.failures.append(Failure(plan.recipe.path, result.index, stage, message))
            report.stage_runs.update(result.ran)
            return
        if journal.record.planned:  # begun: the build planned these files
            journal.wrote(digests)  # before they are written: record, then write
        stamps = self._stamps(plan)
        try:
            for path, tmp in result.staged.items():
                land(Path(tmp), plan.pack_dir / path)
        except FileNotFoundError:
            # A file a worker made in the cache's folder, gone: only deleting the cache does that.
            if Path(tmp).parent.resolve() == self.cache.temp_dir.resolve() and not Path(tmp).exists():
                raise cache_deleted(self.cache.root) from None
            raise
        finally:
            discard_staged(result)  # what a failed rename left
        # What the worker made or found in place (all but the shared files it sent), stamped as it
        # saw them: a file edited since is then found edited.
        for path in sorted(digests.keys() - result.files.keys() - written.keys()):
            if local and path in result.stamps:
                stamps.remember(path, *result.stamps[path], digests[path])
            else:
                stamps.record(plan.pack_dir / path, path, digests[path])
        for path, data in result.files.items():
            target = plan.pack_dir / path
            if written.get(path) is None and stamps.digest(target, path) != digests[path]:
                atomic_write(target, data, temp)
                stamps.record(target, path, digests[path])
                report.files_written += 1
        written.update(digests)
        report.files_written += result.written  # those the worker wrote itself
        result.files = {}  # written: free the bytes
        result.digests = digests
        report.stage_runs.update(result.ran)

    def _unseen(self, plan: PackPlan, digests: dict[str, str], result: MapResult) -> tuple[str, str] | None:
        """Whether files a worker of another machine made (`--dask-results files`) are here with
        their bytes: a worker whose exports/ is not this machine's writes them where no one looks,
        and the manifest would claim files the pack does not have. Read, not stamped: a network
        file system may show stale sizes and times a while."""
        for path, digest in digests.items():
            if path in result.files:
                continue
            if sha256_file(Path(result.staged[path]) if path in result.staged else plan.pack_dir / path) != digest:
                # Alike for every map, so the failures share a row.
                return ("-", f"a worker wrote the map's files, but {plan.pack_dir} here does not hold them: does every worker see"
                        " this exports/ folder (a shared file system)? If not, build with --dask-results bytes")
        return None

    def _stamps(self, plan: PackPlan) -> Stamps:
        if plan.stamps is None:  # a plan made elsewhere than plan_pack
            plan.stamps = Stamps.for_pack(self.cache.root, plan.recipe.pack.name)
        return plan.stamps

    def _manifest(self, plan: PackPlan, results: dict[int, MapResult]) -> Manifest:
        recipe = plan.recipe
        record = recipe_record(recipe, self.exports_root.parent)
        env = environment()
        env_id = environment_id(env)
        planned = {m.index: m for m in plan.maps}
        config = record.config_id
        entries = []
        for index in range(recipe.pack.maps):
            prev = plan.recorded.get(index)
            mp = planned.get(index)
            if mp is None or (mp.stale and index not in results):
                # Not part of this build, or it failed: its files are still the earlier ones,
                # unless the failure came after some of them were replaced (a full disk).
                if prev is not None and (mp is None or self._intact(plan, prev)):
                    entries.append(prev)
                continue
            entries.append(self._entry(recipe, mp, results.get(index), prev, (record.sha256, config), env_id))
        manifest = assemble(record, entries, plan.previous, env)
        if recipe.pack.distinct is not None:
            manifest = replace(manifest, distinct=DistinctRecord(distinct_rule(recipe), _through(plan, entries)))
        return manifest

    @staticmethod
    def _entry(recipe: Recipe, mp: MapPlan, result: MapResult | None, prev: MapEntry | None, made_from: tuple[str, str], env_id: str) -> MapEntry:
        """A map's manifest entry: from this build's result, or carried over where the map was fresh."""
        prev_stages = prev.stages if prev else {}
        files = {**(prev.files if prev else {}), **(result.digests if result else {})}
        stages: dict[str, StageRecord] = {}
        # A map a filter made again: the keys and seeds of the attempt that passed.
        attempt = result.attempt if result is not None else mp.attempt
        for spec in recipe.stages:
            sp = mp.stages[spec.name]
            key = result.keys[spec.name] if result is not None and result.keys else sp.key
            seed = result.seeds[spec.name] if result is not None and result.seeds else sp.seed
            old = prev_stages.get(spec.name)
            if old is not None and old.key != key:
                old = None
            written: list[str] | None = None
            stats: dict[str, Any] | None = None
            if spec.is_exporter:
                written = result.outputs[spec.name] if result and spec.name in result.outputs else (old.files if old else None) or []
            elif any(spec.name in e.inputs for e in recipe.exporters):
                # Stats of a Level that feeds an exporter: from this run, or unchanged since (same key).
                found = result.stats.get(spec.name) if result else None
                found = found if found is not None else old.stats if old else None
                stats = dict(sorted(found.items())) if found is not None else None
            stages[spec.name] = StageRecord(key, list(seed), written, stats)
        merged: dict[str, Any] = {}
        for spec in recipe.exporters:
            merged.update(stages[spec.inputs[0]].stats or {})
        live = sorted({f for e in stages.values() for f in e.files or ()})
        return MapEntry(
            index=mp.index,
            stem=mp.stem,
            attempt=attempt,
            # A rebuilt map comes from this build; a fresh one has the same keys, so this recipe
            # makes the same files, but those files were made in the environment recorded before.
            recipe=made_from[0],
            config=made_from[1],  # the recipe's config_id: see plan_pack
            environment=env_id if result is not None or prev is None else prev.environment,
            stages=stages,
            stats=dict(sorted(merged.items())),
            files={f: files[f] for f in live if f in files},
        )

    def _intact(self, plan: PackPlan, entry: MapEntry) -> bool:
        """Whether every file of a manifest entry is on disk as the entry records it."""
        stamps = self._stamps(plan)
        return all(stamps.digest(plan.pack_dir / rel, rel) == digest for rel, digest in entry.files.items())

    def _remove_obsolete(self, plan: PackPlan, manifest: Manifest) -> int:
        """Delete files an earlier build wrote that no map of this pack writes any more (if unmodified)."""
        keep = {f for m in manifest.maps for f in m.files} | set(manifest.pack_files)
        current = {m.index for m in manifest.maps}
        removed = 0
        for rel, digest in (plan.previous.pack_files if plan.previous is not None else {}).items():
            if rel not in keep and self._stamps(plan).digest(plan.pack_dir / rel, rel) == digest:
                _unlink(plan.pack_dir, rel)
                removed += 1
        for entry in _maps(plan.previous):
            if entry.index not in current and entry.index < plan.recipe.pack.maps:
                continue  # a map of the pack whose rebuild failed: its files wait for the next build
            for rel, digest in entry.files.items():
                if rel in keep:
                    continue
                target = plan.pack_dir / rel
                if self._stamps(plan).digest(target, rel) == digest:
                    _unlink(plan.pack_dir, rel)
                    removed += 1
                    keep.add(rel)  # shared files appear in many entries: remove once
        return removed


def _maps(manifest: Manifest | None) -> tuple[MapEntry, ...]:
    """A manifest's map entries; none without a manifest."""
    return manifest.maps if manifest is not None else ()


def _remade(plan: PackPlan) -> set[int]:
    """The maps whose Levels change in this build (a stage before their exports is stale)."""
    makers = [s.name for s in plan.recipe.stages if not s.is_exporter]
    return {m.index for m in plan.maps if any(m.stages[name].stale for name in makers)}


def _through(plan: PackPlan, entries: list[MapEntry]) -> int:
    """How many leading maps of the pack pack.distinct chose together, as the manifest now
    records them: the next build keeps their attempts and chooses again from there. A map it
    refused, or one that failed or kept another attempt, ends them: maps after it were chosen
    without it as the manifest has it."""
    if plan.picks is None:  # not chosen in this build (rebuilt at given attempts)
        return plan.chosen
    attempts = {e.index: e.attempt for e in entries}
    off = [m.index for m in plan.maps if m.refused is not None]
    off += [i for i, attempt in plan.picks.items() if attempts.get(i) != attempt]
    return min([plan.through, *off])


def _lost(outcome: BaseException) -> str:
    """Why the maps of a batch that came back as an exception were not made."""
    from concurrent.futures.process import BrokenProcessPool

    if isinstance(outcome, Stopped):
        return str(outcome)
    if isinstance(outcome, BrokenProcessPool):
        return "worker lost: its worker process died (killed, out of memory, or a crash in native code)"
    return f"worker lost: {type(outcome).__name__}: {outcome}"


def _outcomes(batch: Batch, outcome: list[MapResult] | BaseException) -> Iterator[tuple[MapTask, MapResult]]:
    """Each task of a batch with its result; a lost batch's tasks each with the failure of it."""
    if isinstance(outcome, BaseException):
        why = _lost(outcome)
        yield from ((task, MapResult(task.index, failure=("-", why))) for task in batch.tasks)
    else:
        yield from zip(batch.tasks, outcome)


def _diverse(plans: list[PackPlan]) -> list[PackPlan]:
    """`plans` in an order where each next pack brings the most compiling that no earlier one
    brings (its new stage kinds, by `compile_weight`): workers then start on different kernels,
    the longest compiles first, rather than waiting for one another compiles."""
    weight = {s.kind: type(s.params).compile_weight for p in plans for s in p.recipe.stages}
    left, order, seen = list(plans), [], set()
    while left:
        best = max(left, key=lambda p: sum(weight[k] for k in {s.kind for s in p.recipe.stages} - seen))  # the first of equals
        left.remove(best)
        order.append(best)
        seen |= {s.kind for s in best.recipe.stages}
    return order


class PackWriteError(PipelineError):
    """A pack's files could not be written (disk full, read-only, permission denied)."""


def _named_here(exc: OSError, pack_dir: Path) -> OSError:
    """A worker's write error, naming its file as the pack is named here (`exports/x/map.tmx`,
    not the absolute path the worker was given)."""
    try:
        rel = Path(str(exc.filename)).relative_to(pack_dir.resolve())
    except ValueError:
        return exc
    return naming(exc, pack_dir / rel)


def _map_warnings(recipe: Recipe, results: dict[int, MapResult]) -> list[str]:
    """The exporters' warnings of the maps built, each once, with the maps it was given for, in
    map order (batches finish in any order)."""
    maps: dict[str, list[int]] = {}
    for index in sorted(results):
        for line in results[index].warnings:
            maps.setdefault(line, []).append(index)
    return [f"{recipe.path}: {line} (map{'s' if len(found) > 1 else ''} {spans(found)})" for line, found in maps.items()]


def _remade_edits(plan: PackPlan, results: dict[int, MapResult], unjournaled: dict[int, list[str]]) -> list[str]:
    """One warning naming the files edited by hand since the last build that this build made
    again: a level polished in exports/ is lost, and should not go without a word."""
    built = [m for m in plan.stale_maps if m.index in results and results[m.index].failure is None]
    edited = sorted({rel for m in built for rel in (*m.edited, *unjournaled.get(m.index, ()))})
    if not edited:
        return []
    more = f" and {counted(len(edited) - 1, 'other file')}" if len(edited) > 1 else ""
    return [
        f"{plan.recipe.path}: {plan.pack_dir / edited[0]}{more}: edited since the last build; made again (a build owns its"
        " files: keep edits outside exports/, where load.tmx reads a touched-up map back)"
    ]


def _planned_paths(plan: PackPlan, maps: list[MapPlan]) -> set[str]:
    """Every file the stale maps' export stages may write (relative to the pack folder)."""
    paths = {path for m in maps for path in _map_paths(plan, m)}
    exporters = [cast(Exporter, s.params) for s in plan.recipe.exporters]
    # Pack files are rewritten when any map is: a build killed before its manifest leaves them unclaimed.
    return paths | {path for e in exporters for path in e.pack_outputs()} if paths else paths


def _unjournaled(plan: PackPlan, leftover: Record) -> dict[int, list[str]]:
    """Per stale map that the manifest does not name, its files that an unfinished build took
    out of the manifest (journaling what was there) and that now hold bytes no build wrote: an
    edit by hand, which the manifest can no longer show (plan's `edited`)."""
    if not leftover.wrote or plan.stamps is None:
        return {}
    named = plan.recorded
    found: dict[int, list[str]] = {}
    for m in plan.stale_maps:
        if m.index in named:
            continue
        for path in sorted(set(_map_paths(plan, m)) & leftover.wrote.keys()):
            now = plan.stamps.digest(plan.pack_dir / path, path)
            if now is not None and now not in leftover.wrote[path]:
                found.setdefault(m.index, []).append(path)
    return found


def _claimed(manifest: Manifest | None, paths: set[str]) -> dict[str, set[str]]:
    """The sha256 a manifest gives for each of `paths`: bytes a build wrote there."""
    if manifest is None:
        return {}
    named = [(path, digest) for entry in manifest.maps for path, digest in entry.files.items()]
    claimed: dict[str, set[str]] = {}
    for path, digest in [*named, *manifest.pack_files.items()]:
        if path in paths:
            claimed.setdefault(path, set()).add(digest)
    return claimed


def _merged(a: dict[str, set[str]], b: dict[str, set[str]]) -> dict[str, set[str]]:
    return {path: a.get(path, set()) | b.get(path, set()) for path in a.keys() | b.keys()}


def _retracted(plan: PackPlan) -> Manifest | None:
    """The last manifest without what this build may replace or remove: the entries of its stale
    and obsolete maps, and, when any map changes, the pack files, contact sheet and measures (of
    maps it no longer names). The manifest itself (`plan.previous`) when it names none of that."""
    previous = plan.previous
    if previous is None:
        return None
    touched = {m.index for m in plan.stale_maps}
    kept = tuple(m for m in previous.maps if m.index not in touched and m.index < plan.recipe.pack.maps)
    if not touched and len(kept) == len(previous.maps):
        return previous
    retracted = replace(previous, maps=kept, contact_sheet=None, pack_files={}, measures=None)
    return previous if retracted == previous else retracted


def _identity(folder: Path) -> tuple[int, int] | None:
    try:
        st = folder.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _map_paths(plan: PackPlan, m: MapPlan) -> list[str]:
    """Every file the map's stale export stages may write, but the pack's own."""
    return [path for name in m.exports for path in cast(Exporter, plan.recipe.by_name[name].params).outputs(m.stem)]


# Files of the pack that the builder itself writes from the manifest.
PACK_FILES = frozenset({MANIFEST, LEVELS, CONTACT_SHEET})


def _sweep(plan: PackPlan, manifest: Manifest, record: Record, waiting: set[str]) -> int:
    """Delete files at paths the journal lists that the new manifest does not claim (nor
    `waiting`: the files of maps whose rebuild failed), if a build wrote exactly those bytes there
    or no earlier manifest ever claimed the path; a file edited by hand since is kept. Returns
    how many were deleted."""
    claimed = {f for m in manifest.maps for f in m.files} | PACK_FILES | set(manifest.pack_files) | waiting
    # Paths whose bytes a manifest or the journal knows: only those bytes are a build's to delete.
    before = {f for m in _maps(plan.previous) for f in m.files} | record.wrote.keys()
    removed = 0
    for rel in sorted(record.planned - claimed):
        target = plan.pack_dir / rel
        if not target.is_file() or target.is_symlink():
            continue
        if rel not in before or sha256_file(target) in record.wrote.get(rel, ()):
            _unlink(plan.pack_dir, rel)
            removed += 1
    return removed


def _unlink(pack_dir: Path, rel: str) -> None:
    """Delete a pack file and the folders it leaves empty (previews/ after `preview = false`);
    a folder that holds anything else, a file of the user's say, stays."""
    target = pack_dir / rel
    target.unlink()
    inside = pack_dir.resolve()
    for folder in target.parents:
        # Only real folders inside the pack: not the pack itself, not through a symlink (a
        # `dir` linked into a game's assets), not above it by `..`.
        if folder == pack_dir or folder.is_symlink() or not folder.resolve().is_relative_to(inside) or folder.resolve() == inside:
            break
        try:
            folder.rmdir()
        except OSError:  # not empty
            break
