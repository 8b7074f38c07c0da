"""The Python API: `pipeline.build` builds packs as `pcg build` does, `pipeline.generate` runs one
stage and returns its Level.

This module imports only the standard library at load time; numpy, numba and pydantic are
imported when a function runs. That keeps `import pipeline` (and `pcg --help`, which may import
`open_executor` from here) fast.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence, Union, cast

if TYPE_CHECKING:
    from pipeline.building.builder import PackReport
    from pipeline.building.dask_executor import DaskOptions
    from pipeline.building.executor import Executor
    from pipeline.level import Level
    from pipeline.building.plan import PackPlan

__all__ = ["BuildResult", "MapFailure", "PackResult", "Progress", "build", "export", "generate", "open_executor"]

PathLike = Union[str, "os.PathLike[str]"]

# `progress(pack, done, total)`: maps of `pack` built so far, out of the `total` stale ones.
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class MapFailure:
    """A map whose stage failed: it keeps its earlier files, the other maps still built."""

    map: int
    stage: str
    message: str


@dataclass(frozen=True)
class PackResult:
    """What a build did to one pack (the line `pcg build` prints for it)."""

    name: str
    recipe: str  # the recipe's path, as it was given
    maps: int  # maps planned: every map of the pack, or those `maps=` asked for
    built: int  # maps that ran at least one stage
    files_written: int
    files_removed: int  # files no map writes any more
    failures: tuple[MapFailure, ...]
    seconds: float
    warnings: tuple[str, ...] = ()  # the lines `pcg build` prints as warnings for this pack

    @property
    def up_to_date(self) -> bool:
        # Files written with no map built: the contact sheet drawn again, an edited LDtk project made again.
        return self.built == 0 and not self.failures and not self.files_written


@dataclass(frozen=True)
class BuildResult:
    """What `pipeline.build` did: a result per pack that was built (or found up to date), and
    one line per problem that kept a recipe or a pack from building, in the words `pcg build`
    prints them (`recipes/x.toml: stage.maze.cells.0: must be <= 4096 (got 100000)`)."""

    packs: tuple[PackResult, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def failures(self) -> tuple[MapFailure, ...]:
        return tuple(f for p in self.packs for f in p.failures)

    @property
    def ok(self) -> bool:
        """True when every recipe loaded and every map built: `pcg build` would exit 0."""
        return not self.problems and not self.failures

    def __getitem__(self, name: str) -> PackResult:
        """The result of the pack called `name`."""
        for pack in self.packs:
            if pack.name == name:
                return pack
        raise KeyError(name)


@contextlib.contextmanager
def open_executor(jobs: int | None, todo: int, dask: DaskOptions | None = None) -> Iterator[Executor]:
    """The executor for a build of `todo` stale maps, closed afterwards: in this process when
    there is nothing to run (starting workers would cost more than the build), on the Dask
    cluster `dask` describes, else a pool of `jobs` processes (default: every core), never more
    than there are maps."""
    from pipeline.building.executor import default_workers, make_executor

    if not todo:
        executor = make_executor(1)
    elif dask is not None:
        from pipeline.building.dask_executor import DaskExecutor

        executor = DaskExecutor(dask)
    else:
        executor = make_executor(min(jobs or default_workers(), todo))
    try:
        yield executor
    finally:
        executor.close()


def build(
    targets: PathLike | Iterable[PathLike] = ("recipes",),
    *,
    out: PathLike = "exports",
    cache: PathLike = ".pcg-cache",
    jobs: int | None = None,
    force: bool = False,
    maps: int | Iterable[int] | None = None,
    cache_max: int | str | None = None,
    progress: Progress | None = None,
    timeout: float | None = None,
) -> BuildResult:
    """Build level packs from recipes, as `pcg build` does: only what is stale, through the same
    build layer (pack ownership, locks, journal, cache bound), with byte-identical files.

    `targets` are recipe files or folders of them (one path, or several); relative paths, `out`
    and `cache` are taken from the current folder, as `pcg` takes them. `jobs` is the number of
    worker processes (default: every core), `maps` the map index or indices to build (None or
    empty: every map), `cache_max` the cache bound in bytes or as `pcg build --cache-max` reads it
    ("500M", "2G"), `timeout` the seconds a map may take before it fails (None: no limit; as
    `pcg build --timeout`). `progress(pack, done, total)` is called, in this thread, when a pack with
    stale maps starts (done = 0) and as batches of its maps finish.

    Nothing is printed. What `pcg build` reports and exits 1 for is in the result instead: a
    recipe that does not load, a pack refused or stopped (`problems`), a map whose stage failed
    (`failures`); `ok` is False then, and the other recipes and maps still built. Raises
    PipelineError for arguments no build can use (no recipe found, a map index outside a pack,
    a bad `jobs` or `cache_max`), and OSError when the cache itself cannot be written.
    """
    from pipeline.building.request import PYTHON, BuildRequest
    from pipeline.building.workspace import Workspace

    request = BuildRequest.checked(targets, jobs=jobs, force=force, maps=maps, cache_max=cache_max, timeout=timeout, spelling=PYTHON)
    workspace = Workspace(Path(out), Path(cache))
    recipes, problems = workspace.requested(request)

    def started(plan: PackPlan) -> Callable[[int], None] | None:
        total = len(plan.stale_maps)
        if progress is None or not total:
            return None
        name, done = plan.recipe.pack.name, 0
        progress(name, 0, total)

        def advance(n: int) -> None:
            nonlocal done
            done += n
            progress(name, done, total)

        return advance

    outcome = workspace.build(recipes, lambda todo: open_executor(request.jobs, todo), request, started=started)
    return BuildResult(
        packs=tuple(_pack_result(report, plan.recipe.warnings()) for plan, report in outcome.reports),
        problems=tuple(problems + outcome.problems),
    )


def _pack_result(report: PackReport, recipe_warnings: list[str]) -> PackResult:
    return PackResult(
        name=report.name,
        recipe=report.recipe,
        maps=report.maps,
        built=report.built,
        files_written=report.files_written,
        files_removed=report.files_removed,
        failures=tuple(MapFailure(map=f.map, stage=f.stage, message=f.message) for f in report.failures),
        seconds=report.seconds,
        warnings=tuple(recipe_warnings + report.warnings),
    )


def generate(kind: str, *, seed: int = 0, inputs: Level | Sequence[Level] = (), plugins: Sequence[str | os.PathLike[str]] = (), **params: Any) -> Level:
    """Run one stage and return the Level it makes: `generate("maze.backtracker", seed=1,
    cells=(20, 15))`.

    `params` are the stage's recipe parameters, validated as a recipe's are (strictly typed;
    `pcg stages KIND` lists them); files they name are read relative to the current folder.
    `inputs` are the Levels of a stage that takes some (`post.braid` takes a maze: one Level, or a
    list). The stage draws from `numpy.random.Generator(PCG64(SeedSequence([seed])))`, so the
    same kind, seed, parameters and inputs give the same Level in every process (as in a pack,
    for the same NumPy version). That is not the stream of a pack's map, which also mixes in the map index
    and the stage name (`pcg explain` and the manifest show those seeds). `plugins` are plugin
    files (as a recipe's `[pack] plugins` lists them, relative to the current folder) whose kinds
    `kind` may name: `generate("demo.torches", plugins=["recipes/stages/torches.py"], ...)`.

    A stage that may turn a Level down having drawn random numbers (`place.prefabs` finding no
    place) is run again from the seeds `(seed, 1)`, `(seed, 2)`... up to its `attempts`, as a
    build makes a map again; here its inputs stay as given, so only what it draws changes. One
    that drew nothing (a `filter`) would say the same again: its verdict is raised at once.

    Raises PipelineError, one line per problem, for an unknown kind, a bad parameter, the wrong
    number of inputs, a plugin that does not load, or an export stage (exporters write files: `pipeline.export`). The inputs are not modified; the Level returned is the caller's to change.
    """
    from pipeline import registry
    from pipeline.errors import PipelineError, Rejected, did_you_mean
    from pipeline.level import Level, ObjectRef
    from pipeline.recipe.load import _validate
    from pipeline.seeds import rng_for

    cls = _kind(kind, plugins)
    if registry.is_exporter(cls):
        raise PipelineError([f"{kind}: is an export stage: it writes files and makes no Level; write a Level with pipeline.export()"])
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise PipelineError([f"seed: must be a whole number from 0 to 2**63 - 1 (got {seed!r})"])
    levels = [inputs] if isinstance(inputs, Level) else list(inputs)
    problems = [f"inputs.{i}: must be a Level (got {type(x).__name__})" for i, x in enumerate(levels) if not isinstance(x, Level)]
    wrong = registry.arity_problem(cls, len(levels))
    if wrong is not None:
        problems.append(f"inputs: {wrong}")
    # A recipe's wiring keys are arguments here; without this they would read as misspelt parameters.
    for key in sorted(params.keys() & {"use", "input"}):
        problems.append(f"{key}: not a parameter here: the kind is generate's first argument, input Levels go in inputs=[...]")
        del params[key]
    # The same strict validation and context as a recipe's [stage.NAME] table: the messages
    # match, and parameters that name files resolve them from the current folder.
    validated = _validate(cls, params, kind, problems, {"recipe_dir": Path.cwd()})
    if validated is not None:  # what the parameters cannot be beside these inputs, as a recipe checks it
        problems += [f"{kind}.{line}" for line in validated.input_problems(len(levels))]
        # A property it reads that its inputs lack: a misspelt name, said as a recipe says it.
        known = sorted({name for x in levels if isinstance(x, Level) for name, v in x.properties.items() if not isinstance(v, ObjectRef)})
        for name, key in sorted(validated.read_stats().items()):
            if name not in known:
                problems.append(f"{kind}.{key}: its input has no property {name!r}{did_you_mean(name, known)} (it has: {', '.join(known) or 'none'})")
    if problems or validated is None:
        raise PipelineError(problems)
    attempt = 0
    while True:
        # A stage that may turn a Level down (place.prefabs finding no place) draws again, as in
        # a build, from (seed, 1), (seed, 2)...: its inputs stay the caller's.
        rng = rng_for((seed, attempt) if attempt else (seed,))
        drawn = rng.bit_generator.state
        try:
            level = validated.run([_read_only(x) for x in levels], rng)
            break
        except Rejected as rejected:
            if rng.bit_generator.state == drawn:  # it drew nothing (a filter): the same inputs, the same verdict
                raise PipelineError([f"{kind}: {rejected.problems[0]}"]) from None
            attempt += 1
            if attempt >= rejected.attempts:
                tries = f"{attempt} attempt{'s' if attempt != 1 else ''}"
                raise PipelineError([f"{kind}: {rejected.problems[0]}; none of {tries} passed (raise attempts to try more)"]) from None
    # A plugin's bug, caught here as a build catches it, rather than in the caller's next step.
    if not isinstance(level, Level):
        raise PipelineError([f"{kind}: returned {type(level).__name__}, not a Level"])
    from pipeline.drawn_art import carry_art

    carry_art(list(levels), level)  # as a build does after every stage
    if (unknown := level.unknown_tiles()) is not None:
        raise PipelineError([f"{kind}: returned a Level whose {unknown}"])
    if (unsettled := level.settle_values()) is not None:
        raise PipelineError([f"{kind}: returned a Level {unsettled}"])
    return _writable(level)


def export(kind: str, level: Level, folder: str | os.PathLike[str], *, stem: str = "map", plugins: Sequence[str | os.PathLike[str]] = (), **params: Any) -> list[Path]:
    """Write `level` with the export stage `kind` into `folder`, as a pack's map `stem`: its map
    file, tilesets and tilesheets, preview, and what the exporter makes once per pack (an LDtk
    project listing this one level). `params` are the stage's recipe parameters, validated as a
    recipe's (`tileset = "tilesets/stone.toml"`, relative to the current folder). Files are
    written to a temporary name and renamed, and the same Level and parameters give the same
    bytes. Returns the paths written, sorted.

    `pipeline.export("export.tmx", maze, "out", tileset="tilesets/stone.toml")`
    """
    from pipeline import registry
    from pipeline.errors import PipelineError, os_error_line
    from pipeline.fsio import sha256_bytes
    from pipeline.level import Level
    from pipeline.paths import check_plain_name
    from pipeline.recipe.load import _validate

    cls = _kind(kind, plugins)
    if not registry.is_exporter(cls):
        raise PipelineError([f"{kind}: is not an export stage: it makes a Level (pipeline.generate), and writes no file"])
    problems = [] if isinstance(level, Level) else [f"level: must be a Level (got {type(level).__name__})"]
    try:
        check_plain_name(stem if isinstance(stem, str) else "")
    except ValueError as exc:  # its words are a pack's, whose files go under exports/
        problems.append(f"stem: {str(exc).replace(' so output stays inside exports/', '')} (got {stem!r})")
    exporter = _validate(cls, params, kind, problems, {"recipe_dir": Path.cwd()})
    if problems or exporter is None:
        raise PipelineError(problems)
    if (unknown := level.unknown_tiles()) is not None:
        raise PipelineError([f"level: {unknown}"])
    own = _read_only(level)
    if (unsettled := own.settle_values()) is not None:  # as a build checks what each stage returns
        raise PipelineError([f"level: a Level {unsettled}"])
    root = Path(folder)
    writer = cast(registry.Exporter, exporter)
    bind = getattr(writer, "bind_art", None)
    if bind is not None:  # no recipe says which drawn tilesets reach it: the Level's own do
        from pipeline.drawn_art import tilesets_of

        refused = bind([("level", ts) for ts in tilesets_of(own)])
        if refused:
            raise PipelineError([f"{kind}.{line}" for line in refused])
    files = writer.export(own, registry.ExportContext(stem=stem))
    try:
        written = _write_all(root, files)
        # Made from the map's files on disk, as after a build; a pack of one map, no name, seed 0.
        maps = [(0, stem, {rel: sha256_bytes(d) for rel, d in files.items()})]
        once = writer.pack_files(registry.PackContext(pack_dir=root, pack="", seed=0, maps=maps, rewrite=True))
        return sorted(written + _write_all(root, once))
    except OSError as exc:  # a folder that is a file, read-only, full: the line names the path
        raise PipelineError([os_error_line(exc)]) from None


def _write_all(root: Path, files: dict[str, bytes]) -> list[Path]:
    from pipeline.fsio import atomic_write

    written = []
    for rel, data in sorted(files.items()):
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, data)
        written.append(target)
    return written


def _kind(kind: str, plugins: Sequence[str | os.PathLike[str]]) -> "type[Any]":
    """The stage class of `kind`, among the built-in kinds and those of `plugins`."""
    from pipeline import registry
    from pipeline.errors import PipelineError, unknown_kind
    from pipeline.recipe.plugins import PluginError, load_file

    extra: dict[str, type[registry.StageParams]] = {}
    for name in [plugins] if isinstance(plugins, (str, os.PathLike)) else plugins:
        try:
            extra.update(load_file(Path(name), os.fspath(name)))
        except PluginError as exc:
            raise PipelineError([f"plugins: {exc}"]) from None
    table = registry.KindTable(extra)
    cls = table.get(kind) if isinstance(kind, str) else None
    if cls is None:
        if not isinstance(kind, str):
            raise PipelineError([f"kind: must be a stage kind's name such as 'maze.backtracker' (got {type(kind).__name__})"])
        raise PipelineError([f"kind: {unknown_kind(kind, table, 'pass its file in plugins=[...]')}"])
    return cls


def _read_only(level: Level) -> Level:
    """A copy sharing the caller's arrays through read-only views: a stage that wrongly wrote to
    its input fails loudly (as in a build, where inputs are frozen) instead of changing the
    caller's Level, and its properties and objects are the stage's own to edit."""

    def view(array: Any) -> Any:
        if array is None:
            return None
        shown = array.view()
        shown.flags.writeable = False
        return shown

    return replace(
        level,
        tiles=view(level.tiles),
        layers={k: view(v) for k, v in level.layers.items()},
        # Each object's properties its own too: checking what a stage returns (`settle_values`)
        # makes numpy numbers Python's in place, which must not reach the caller's objects.
        objects=[replace(o, properties=dict(o.properties)) for o in level.objects],
        properties=dict(level.properties),
        attachments={k: view(v) for k, v in level.attachments.items()},
    )


def _writable(level: Level) -> Level:
    """The stage's Level with arrays the caller may write: a stage may pass on its input's
    (read-only) arrays unchanged."""
    import numpy as np

    def own(array: Any) -> Any:
        return array if array is None or array.flags.writeable else np.array(array)

    art = level.art
    if art is not None:
        art = replace(art, layers={k: own(v) for k, v in art.layers.items()}, drawn_for=own(art.drawn_for))
    return replace(
        level,
        tiles=own(level.tiles),
        layers={k: own(v) for k, v in level.layers.items()},
        attachments={k: own(v) for k, v in level.attachments.items()},
        art=art,
    )
