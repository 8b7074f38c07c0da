"""What runs in a worker: the stages of a batch of maps, returning their files.

Workers need nothing of the client's file system: what a stage reads (a rule model, a tileset
file and its image) is read once as the recipe loads and travels inside it. They read and write
cache entries under the client's cache path, which on another machine is a cache of their own
(or none, where they cannot create it: the cache is best effort). Files under exports/ go back to
the client as bytes, or, where the worker sees the pack's folder (`-j N`, a cluster with a shared
file system: `Batch.pack_dir`), the worker writes each map's own files itself under temporary
names and returns their digests, while the files every map shares (tilesets) still go back for
the client to write once. The client alone puts files under the pack's names (after recording
them in the pack's journal) and writes the manifest, so a killed build never leaves a
half-written file, a file it did not record, or a manifest naming one.
"""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, cast

from pipeline.best import Tried
from pipeline.building.cache import LevelCache
from pipeline.diversity import Print, fingerprint
from pipeline.drawn_art import carry_art
from pipeline.errors import PipelineError, Rejected
from pipeline.fsio import sha256_bytes, sha256_file, stage
from pipeline.level import Level, ObjectRef, PropertyValue
from pipeline.building.memory import reuse_freed_memory
from pipeline.building.manifest import MapEntry
from pipeline.building.measures import MeasureJob
from pipeline.building.plan import KeyMaker, export_provenance
from pipeline.recipe.plugins import is_plugin_file, raised_where
from pipeline.recipe.model import Recipe
from pipeline.registry import ExportContext, Exporter
from pipeline.seeds import rng_for
from pipeline.time_limit import MapTimeout, time_limit

if TYPE_CHECKING:
    from PIL import Image


@dataclass(frozen=True)
class MapTask:
    index: int
    stem: str
    keys: dict[str, str]
    seeds: dict[str, tuple[int, ...]]
    run: tuple[str, ...]
    exports: tuple[str, ...]
    attempt: int = 0
    force: bool = False  # `run` is every stage, the cache ignored (--force): other attempts too

    @classmethod
    def at(
        cls, keys: dict[str, tuple[str, tuple[int, ...]]], index: int, stem: str, attempt: int,
        run: tuple[str, ...] = (), exports: tuple[str, ...] = (), force: bool = False,
    ) -> MapTask:
        """The task of a map at `attempt`, from its stages' (key, seed) (`plan.KeyMaker.keys`)."""
        return cls(index, stem, {n: k for n, (k, _) in keys.items()}, {n: s for n, (_, s) in keys.items()}, run, exports, attempt, force)


@dataclass(frozen=True)
class Probe:
    """A batch that chooses attempts for `pack.distinct`: each map's first attempt from its
    task's on that passes the filters, measured (`diversity.fingerprint`) and not exported."""

    stage: str
    measure: str
    walls: tuple[str, ...] = ("wall",)


@dataclass(frozen=True)
class Batch:
    recipe: Recipe
    cache_root: str
    tasks: tuple[MapTask, ...]
    pack_dir: str | None = None  # set: the worker writes the map's files there itself
    timeout: float | None = None  # seconds a map may take (`pcg build --timeout`)
    # exports/ is on another file system than the cache: temporary files go beside their targets.
    temp_beside: bool = False
    probe: Probe | None = None


@dataclass
class MapResult:
    index: int
    files: dict[str, bytes] = field(default_factory=dict)
    outputs: dict[str, list[str]] = field(default_factory=dict)  # export stage -> its files
    digests: dict[str, str] = field(default_factory=dict)  # file -> sha256, set by the client
    stats: dict[str, dict[str, PropertyValue]] = field(default_factory=dict)  # stage -> its Level's properties
    ran: list[str] = field(default_factory=list)
    failure: tuple[str, str] | None = None  # (stage, message)
    # Other exporters of the map that failed too: each is its own mistake (a tile one tileset
    # lacks), better told in one build than one per build.
    more_failures: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # "stage.NAME.key: message" lines of its exporters
    # (preview file, its contact-sheet thumbnail): a PIL image, sent as its raw pixels (75 KB at
    # most; encoding and decoding a PNG would cost the sheet's maps more than the pipe does)
    thumbnail: tuple[str, Image.Image] | None = None
    written: int = 0  # files the worker wrote itself (they differed from those on disk)
    # Those files, each under a temporary name for the client to rename into place once it has
    # journaled their digests: a build stopped before then leaves no file it did not record.
    staged: dict[str, str] = field(default_factory=dict)
    stamps: dict[str, tuple[int, int]] = field(default_factory=dict)  # their size and mtime_ns, as written
    # Set when a filter made the map again: the attempt that passed, and its keys and seeds.
    attempt: int = 0
    keys: dict[str, str] | None = None
    seeds: dict[str, tuple[int, ...]] | None = None
    # Writing the map's files failed (a full disk, a read-only folder): the client stops the
    # pack with it, as when it fails to write a file itself.
    write_error: OSError | None = None
    print: Print | None = None  # a probe's measure of the attempt (`attempt`)


class StageFailed(Exception):
    def __init__(self, stage: str, message: str):
        self.stage = stage
        self.message = message


def run_batch(batch: Batch | MeasureJob) -> list[MapResult] | dict[str, Any]:
    """The maps of a batch made (or, a MeasureJob, the pack measured) in this worker."""
    if isinstance(batch, MeasureJob):
        return batch.run(lambda entry, stage: _made_again(batch, entry, stage))
    reuse_freed_memory()
    cache = LevelCache(batch.cache_root)
    results = []
    on_disk: dict[str, str] = {}  # what the batch's maps wrote or found there, by sha256
    shared = {path for spec in batch.recipe.exporters for path in cast(Exporter, spec.params).shared_outputs()}
    for task in batch.tasks:
        try:
            try:
                with time_limit(batch.timeout):
                    result = run_map(batch.recipe, cache, task, batch.probe)
            except MapTimeout as exc:  # outside any stage (loading a Level, exporting)
                result = MapResult(task.index, failure=("-", str(exc)))
            if batch.pack_dir is not None and result.failure is None and batch.probe is None:
                try:
                    write_files(result, Path(batch.pack_dir), None if batch.temp_beside else cache.temp_dir, on_disk, shared)
                except OSError as exc:
                    discard_staged(result)
                    result.write_error, result.files = exc, {}
                    results.append(result)
                    break  # the next maps would fail alike
            results.append(result)
        except Exception as exc:  # outside any stage: still this map's failure alone, on every executor
            results.append(MapResult(task.index, failure=("-", f"{type(exc).__name__}: {exc}")))
    return results


def _made_again(job: MeasureJob, entry: MapEntry, name: str) -> Level | None:
    """The Level of stage `name` of a map as its manifest entry records it, made again (a
    measure of the pack needs it and the cache lost it): only of a map this recipe made (another
    recipe's stages are not these under its keys), and stored nowhere. None if it cannot be."""
    recipe, stages = job.recipe, entry.stages
    if entry.config != job.config or name not in recipe.by_name or any(s.name not in stages for s in recipe.upstream(name)):
        return None
    keys = {n: (s.key, tuple(s.seed)) for n, s in stages.items()}
    task = MapTask.at(keys, entry.index, entry.stem, entry.attempt)
    try:
        return _Levels(recipe, _ReadOnly(job.cache_root), task, MapResult(task.index))(name)
    except (StageFailed, Rejected):
        return None


class _ReadOnly(LevelCache):
    """The build cache, read and never written."""

    def store(self, key: str, level: Level) -> None:
        pass


def write_files(result: MapResult, pack_dir: Path, temp_dir: Path | None, on_disk: dict[str, str], shared: set[str]) -> None:
    """Stage a map's own files for the client to rename into place (skipping those already there
    with these bytes), and keep their digests. Files every map shares (`shared`: a tileset) go back to the client, which writes
    each once (workers writing them side by side would each count it); a batch sends each only
    with its first map. `on_disk`: what the batch's earlier maps sent, wrote or found."""
    result.digests = {path: sha256_bytes(data) for path, data in result.files.items()}
    for path, digest in result.digests.items():
        if on_disk.get(path, digest) != digest:  # the client would refuse it: never overwrite the earlier map's
            result.failure = ("-", clash(path, "another map of this pack"))
            result.files = {}
            return
    kept: dict[str, bytes] = {}
    for path, data in result.files.items():
        digest = result.digests[path]
        if on_disk.get(path) == digest:
            continue
        if path in shared:
            kept[path] = data
        else:
            where = pack_dir / path
            if sha256_file(where) != digest:
                where = stage(where, data, temp_dir)
                result.staged[path] = str(where)
                result.written += 1
            st = os.stat(where)  # a rename keeps the size and modification time
            result.stamps[path] = (st.st_size, st.st_mtime_ns)
        on_disk[path] = digest
    result.files = kept


def discard_staged(result: MapResult) -> None:
    """Remove the temporary files of a result whose files will not be put in place."""
    for tmp in result.staged.values():
        Path(tmp).unlink(missing_ok=True)
    result.staged = {}


def clash(path: str, other: str) -> str:
    """The message for a shared file (a tileset) that two writers made differently."""
    hint = " (maps of different symbols need tilesets of their own: set tileset_name)" if path.startswith("tilesets/") else ""
    return f"writes {path}, which {other} wrote differently{hint}"


def run_map(recipe: Recipe, cache: LevelCache, task: MapTask, probe: Probe | None = None) -> MapResult:
    """Build one map; while a filter stage rejects it, build it again from the next attempt's
    seeds (every stage's key and seed change, so cached Levels of other attempts never mix in).
    A stage that asks for the best of several attempts (`best_of`) has them all made first.
    With `probe`, the attempt that passes is measured instead of exported."""
    chooser = next((s.name for s in recipe.stages if s.params.best_of() is not None), None)
    # An attempt other than 0 comes from the plan: one a build chose before from the same stages.
    if chooser is not None and task.attempt == 0:
        return _run_best(recipe, cache, task, chooser)
    # A probe's attempts before its own were made by other probes: the count of a map that fails starts at 0.
    start = 0 if probe is not None else task.attempt
    maker: KeyMaker | None = None
    tried: dict[str, list[Tried]] = {}
    turned_down: list[str] = []  # the stages the attempts turned down ran: the build reports the work
    while True:
        levels = _Levels(recipe, cache, task, MapResult(task.index))
        try:
            result = _run_attempt(recipe, cache, task, levels, probe)
        except Rejected as rejected:
            turned_down += levels.result.ran
            tried.setdefault(rejected.stage, []).append((task.attempt, rejected.values))
            if task.attempt + 1 >= rejected.attempts:
                return _rejected(recipe, task.index, rejected, tried, task.attempt + 1 - start, turned_down)
            maker = maker or KeyMaker(recipe)
            task = _at_attempt(maker, task, task.attempt + 1)
            continue
        result.ran[:0] = turned_down
        if probe is not None:
            result.attempt = task.attempt
        return _with_attempt(result, task)


def _run_best(recipe: Recipe, cache: LevelCache, task: MapTask, name: str) -> MapResult:
    """Make attempts until `of` of them pass (or `attempts` are spent), keep the one whose stat
    scores best (the earliest of equal scores), and export that one."""
    best = recipe.by_name[name].params.best_of()
    if best is None:  # chosen by run_map for having one
        raise RuntimeError(f"stage {name!r} has no best_of")
    maker = KeyMaker(recipe)
    tried: dict[str, list[Tried]] = {}
    winner: tuple[float, MapTask, _Levels] | None = None
    passed = attempt = 0
    last: Rejected | None = None
    runs: list[list[str]] = []  # each attempt's stage runs (not its Levels: those of the losers go)
    while attempt < best.attempts and passed < best.of:
        if attempt:
            task = _at_attempt(maker, task, attempt)
        levels = _Levels(recipe, cache, task, MapResult(task.index))
        runs.append(levels.result.ran)
        try:
            level = levels(name)
            score = _call(name, lambda: best.score(level.properties))
        except Rejected as rejected:
            tried.setdefault(rejected.stage, []).append((attempt, rejected.values))
            last = rejected
        except StageFailed as failed:
            return MapResult(task.index, failure=(failed.stage, failed.message), ran=[r for ran in runs for r in ran])
        else:
            passed += 1
            levels.passed()  # at most `of` of them: a later build compares them again from the cache
            if winner is None or score > winner[0]:
                winner = (score, task, levels)
        attempt += 1
    if winner is None:
        if last is None:  # attempts >= 1, so some attempt ran and was turned down
            raise RuntimeError("no attempt ran")
        return _rejected(recipe, task.index, last, tried, attempt, [r for ran in runs for r in ran])
    _, task, levels = winner
    others = [r for ran in runs if ran is not levels.result.ran for r in ran]
    try:
        result = _run_attempt(recipe, cache, task, levels)
    except Rejected as rejected:  # a later filter turned the best attempt down
        failure = (rejected.stage, f"{rejected.problems[0]} (in attempt {task.attempt}, the best by {name}'s best)")
        return MapResult(task.index, failure=failure, ran=others + levels.result.ran)
    result.ran[:0] = others
    return _with_attempt(result, task)


def _at_attempt(maker: KeyMaker, task: MapTask, attempt: int) -> MapTask:
    # Every Level from the cache if there, else made; with --force, every one made.
    return MapTask.at(maker.keys(task.index, attempt), task.index, task.stem, attempt, task.run if task.force else (), task.exports, task.force)


def _with_attempt(result: MapResult, task: MapTask) -> MapResult:
    if task.attempt:
        result.attempt, result.keys, result.seeds = task.attempt, task.keys, task.seeds
    return result


def _rejected(recipe: Recipe, index: int, rejected: Rejected, tried: dict[str, list[Tried]], total: int, ran: list[str]) -> MapResult:
    """The failure of a map none of whose attempts passed: the stage's report of them if it
    makes one, else its last rejection's message (`ran`: the stages its attempts ran)."""
    message = recipe.by_name[rejected.stage].params.rejection_report(tried.get(rejected.stage, []), total)
    if message is None:
        # The stage's own message says what to loosen; `attempts` is every rejecting stage's.
        message = f"{rejected.problems[0]}; no map passed in {total} attempt{'s' if total != 1 else ''} (raise attempts to try more)"
    return MapResult(index, failure=(rejected.stage, message), ran=ran)


# The Levels of a map's first attempts go to the cache as they are made, so that a filter edited
# later judges them again without making them; those of later attempts only once the attempt
# passes. A filter that rarely passes, given attempts = 100000, would otherwise fill the disk
# with a million Levels before the build's end could trim the cache.
CACHED_ATTEMPTS = 100


class _Levels:
    """The Levels of one attempt of a map, each loaded from the cache or made on first use."""

    def __init__(self, recipe: Recipe, cache: LevelCache, task: MapTask, result: MapResult):
        self.recipe, self.cache, self.task, self.result = recipe, cache, task, result
        self.levels: dict[str, Level] = {}
        self.unstored: list[tuple[str, Level]] | None = [] if task.attempt >= CACHED_ATTEMPTS else None

    def passed(self) -> None:
        """The attempt is kept: the Levels made of it go to the cache, if they have not yet."""
        for key, level in self.unstored or ():
            self.cache.store(key, level)
        self.unstored = None

    def __call__(self, name: str) -> Level:
        if name in self.levels:
            return self.levels[name]
        task = self.task
        level = None if name in task.run else self.cache.load(task.keys[name])
        if level is None:
            spec = self.recipe.by_name[name]
            # Each stage gets its own shallow copies: arrays are read-only, and a stage that
            # edits an input's properties or objects must not change what another stage sees.
            inputs = [private_copy(self(i)) for i in spec.inputs]
            try:
                rng = rng_for(task.seeds[name])
                if spec.params.reads_floor:
                    floor = self.recipe.pack.floor(task.index)
                    level = _call(name, lambda: spec.params.run_on_floor(inputs, rng, floor))
                else:
                    level = _call(name, lambda: spec.params.run(inputs, rng))
            except Rejected:
                self.result.ran.append(name)  # it ran, and turned the attempt down
                raise
            if not isinstance(level, Level):
                raise StageFailed(name, f"returned {type(level).__name__}, not a Level")
            handed = {note for i in inputs for note in i.notes}
            level.notes = [note for note in level.notes if note not in handed]  # its own, not those it was given
            _hand_on(self.recipe.handed_on.get(name, ()), inputs, level)
            carry_art(inputs, level)
            if (unknown := level.unknown_tiles()) is not None:
                raise StageFailed(name, f"returned a Level whose {unknown}")
            if (unsettled := level.settle_values()) is not None:
                raise StageFailed(name, f"returned a Level {unsettled}")
            self.result.ran.append(name)
            if self.unstored is None:
                self.cache.store(task.keys[name], level)
            else:
                self.unstored.append((task.keys[name], level))
        elif (unsettled := level.settle_values()) is not None:  # cached before Levels were checked so
            raise StageFailed(name, f"returned a Level {unsettled}")
        freeze(level)
        self.levels[name] = level
        self.result.warnings += [f"stage.{name}: {note}" for note in level.notes]  # made now or cached
        # Stats are values: an object reference (a hand-made map's `boss`) names an object of
        # this Level, which the manifest, filters and captions know nothing of.
        self.result.stats[name] = {k: v for k, v in level.properties.items() if not isinstance(v, ObjectRef)}
        return level


def _hand_on(names: tuple[str, ...], inputs: list[Level], level: Level) -> None:
    """Put back the authored map properties (`Recipe.handed_on`) a stage that starts its stats
    afresh left out, from the last input that has each."""
    for name in names:
        if name not in level.properties:
            for source in reversed(inputs):
                if name in source.properties:
                    level.properties[name] = source.properties[name]
                    break


def _run_attempt(recipe: Recipe, cache: LevelCache, task: MapTask, levels: _Levels | None = None, probe: Probe | None = None) -> MapResult:
    level_of = levels or _Levels(recipe, cache, task, MapResult(task.index))
    result = level_of.result
    try:
        for name in task.exports:
            level_of(recipe.by_name[name].inputs[0])  # every filter before the exports judges first
        level_of.passed()
        if probe is not None:
            return _measured(probe, level_of)
        failed: list[StageFailed] = []
        for name in task.exports:
            try:
                _export(recipe, task, name, level_of, result)
            except StageFailed as exc:
                failed.append(exc)
        if failed:
            first, *more = failed
            return MapResult(
                task.index, failure=(first.stage, first.message), more_failures=[(f.stage, f.message) for f in more], ran=result.ran, warnings=result.warnings
            )
        result.thumbnail = _thumbnail(recipe, task, level_of)
    except StageFailed as failed_stage:  # what ran before it did run (and is cached): the report says so
        return MapResult(task.index, failure=(failed_stage.stage, failed_stage.message), ran=result.ran)
    return result


def _measured(probe: Probe, level_of: _Levels) -> MapResult:
    result = level_of.result
    level = level_of(probe.stage)
    result.print = fingerprint(level, probe.measure, probe.walls)
    if result.print is None:
        return MapResult(
            result.index, ran=result.ran,
            failure=("pack.distinct", f"measure 'path' needs a spawn and an exit with a way between them (stage {probe.stage}'s map has none)"),
        )
    return result


def _export(recipe: Recipe, task: MapTask, name: str, level_of: _Levels, result: MapResult) -> None:
    """Run export stage `name` on its input, adding its files to `result`."""
    spec = recipe.by_name[name]
    exporter = cast(Exporter, spec.params)  # task.exports names export stages only
    level = level_of(spec.inputs[0])
    ctx = ExportContext(stem=task.stem, provenance=export_provenance(recipe, task.index, name, task.attempt))
    files = _call(name, lambda: exporter.export(level, ctx))
    if sorted(files) != sorted(exporter.outputs(task.stem)):
        raise StageFailed(name, f"wrote {sorted(files)} but declares {sorted(exporter.outputs(task.stem))}")
    result.ran.append(name)
    result.outputs[name] = sorted(files)
    result.warnings += [f"stage.{name}.{line}" for line in ctx.warnings]
    for path, data in files.items():
        if path in result.files and result.files[path] != data:
            other = next(s for s, written in result.outputs.items() if s != name and path in written)
            raise StageFailed(name, clash(path, f"stage.{other}"))
        result.files[path] = data


def _thumbnail(recipe: Recipe, task: MapTask, level_of: Callable[[str], Level]) -> tuple[str, Image.Image] | None:
    """The contact-sheet thumbnail of the preview the sheet shows for this map (that of the
    first exporter that draws one, as `sheet_entry` picks), drawn small while the map's Levels
    are at hand; None when the sheet cannot show this map or the exporter cannot draw it so."""
    from pipeline.building.contact_sheet import MAX_MAPS, previews

    if not recipe.pack.contact_sheet:
        return None
    # The sheet shows MAX_MAPS maps: in index order the first ones; in play order (order_by) any,
    # so there only small packs send them (the client holds them until the pack is built).
    if task.index >= MAX_MAPS and (not recipe.pack.order_by or recipe.pack.maps > MAX_MAPS):
        return None
    shown = next(previews(recipe, task.stem), None)
    if shown is None:
        return None
    spec, preview = shown
    if spec.name not in task.exports:
        return None  # its files are up to date: the sheet reads the preview it has
    try:
        image = cast(Exporter, spec.params).thumbnail(level_of(spec.inputs[0]))
    except Exception:  # a speed-up only: the sheet makes it from the preview file instead
        return None
    return None if image is None else (preview, image)


def _call(stage: str, fn):  # type: ignore[no-untyped-def]
    try:
        return fn()
    except Rejected as rejected:
        rejected.stage = stage
        raise
    except StageFailed:
        raise
    except PipelineError as exc:
        raise StageFailed(stage, "; ".join(exc.problems)) from None
    except MapTimeout as exc:  # where a plugin's stage was, if it was one: the clock's own line says nothing
        raise StageFailed(stage, f"{exc}{raised_where(exc) if _in_plugin(exc) else ''}") from None
    except SystemExit as exc:  # sys.exit() in a plugin's stage: this map's failure, not the build's end
        raise StageFailed(stage, f"called sys.exit({exc.code!r}){raised_where(exc)}: a stage raises an exception to fail") from None
    except Exception as exc:
        raise StageFailed(stage, f"{type(exc).__name__}: {exc}{raised_where(exc)}") from None


def _in_plugin(exc: BaseException) -> bool:
    return any(is_plugin_file(f.filename) for f in traceback.extract_tb(exc.__traceback__))


def private_copy(level: Level) -> Level:
    return replace(
        level, layers=dict(level.layers), objects=list(level.objects), properties=dict(level.properties),
        attachments=dict(level.attachments), notes=list(level.notes),
    )


def freeze(level: Level) -> None:
    """Make a Level's arrays read-only: stages are pure and must not modify their inputs."""
    level.tiles.flags.writeable = False
    for layer in level.layers.values():
        layer.flags.writeable = False
    for attached in level.attachments.values():
        attached.flags.writeable = False
    if level.art is not None:
        level.art.drawn_for.flags.writeable = False
        for gids in level.art.layers.values():
            gids.flags.writeable = False
