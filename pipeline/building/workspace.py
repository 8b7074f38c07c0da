"""A project's packs and cache, and the rules every command that builds or deletes follows.

`pcg build`, `pcg stats`, `pcg watch` and `pcg clean` all go through a Workspace, so they cannot
disagree about:

- pack names: two recipes of one run may not share a pack (the first named keeps it; in a
  folder, by file name);
- ownership: a pack folder built from another recipe is not taken over without `--force`, and
  a pack folder that is a symbolic link is never written through;
- locks: one build of a pack at a time, and no cleaning while any build uses the cache;
- failures: a file-system error is one line naming the file; the other packs still build.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterable, TypeVar

from pipeline.building.builder import Builder, PackReport, PackWriteError, Progress
from pipeline.building.cache import DEFAULT_MAX_BYTES, LevelCache, Trimmed
from pipeline.building.executor import Executor
from pipeline.building.journal import JOURNALS, Journal
from pipeline.building.manifest import MANIFEST, load_manifest
from pipeline.building.plan import PackPlan
from pipeline.building.request import BuildRequest
from pipeline.errors import PipelineError, RecipeError, os_error_line
from pipeline.fsio import atomic_write, naming, read_regular
from pipeline.jit import kernels_cached, notice_compiles, remove_unused_kernels
from pipeline.lock import LOCKS, cache_lock, pack_locks
from pipeline.recipe.load import find_recipes, load_recipe
from pipeline.recipe.model import Recipe
from pipeline.recipe.order import Deferred, ordered, pack_name, raw_pack_name, upstream

R = TypeVar("R", bound="Recipe | Deferred")

# The file in the cache that remembers `--cache-max`.
CACHE_MAX = "cache-max"

# Starts the executor for a build of `n` stale maps (and closes it afterwards).
ExecutorFor = Callable[[int], ContextManager[Executor]]


@dataclass
class BuildOutcome:
    reports: list[tuple[PackPlan, PackReport]]
    problems: list[str]  # packs refused or stopped, one line each
    trimmed: Trimmed | None = None  # what bounding the cache removed afterwards


@dataclass
class Workspace:
    out: Path  # the exports folder that holds the packs
    cache: Path  # the cache folder (.pcg-cache)

    @property
    def lock_dir(self) -> Path:
        return self.cache / LOCKS

    # -- recipes ------------------------------------------------------------------------

    def load(self, targets: list[Path]) -> tuple[list[Recipe | Deferred], list[str]]:
        """Every recipe found under `targets` that loads and has a pack of its own, in the order
        they build (after the packs each reads), and the problems of the others. A recipe that
        reads the pack of another recipe here and does not load yet is Deferred: `build` loads
        it once that pack is built."""
        paths = list(dict.fromkeys(find_recipes(targets)))  # a recipe named twice is built once
        if not paths:
            raise PipelineError([f"no recipes (*.toml) found in {', '.join(map(str, targets))}"])
        items: list[Recipe | Deferred] = []
        failed: dict[str, list[str]] = {}
        for path in paths:
            try:
                items.append(load_recipe(path))
            except RecipeError as exc:
                name = raw_pack_name(path)
                if name is None:
                    failed[str(path)] = exc.problems
                else:  # told later, unless it reads a pack of this run and loads once that is built
                    items.append(Deferred(str(path), name, tuple(exc.problems)))
        after = upstream(items, self.out)
        for item in [i for i in items if isinstance(i, Deferred) and not after[i.path]]:
            items.remove(item)
            failed[item.path] = list(item.problems)
        left = {i.path for i in items}
        items, cycles = ordered(items, self.out, {i.path: [p for p in after[i.path] if p in left] for i in items})
        kept, refused = claim_packs(items)
        problems = [line for path in map(str, paths) for line in failed.get(path, [])]
        return kept, problems + list(cycles.values()) + refused

    def requested(self, request: BuildRequest) -> tuple[list[Recipe | Deferred], list[str]]:
        """The recipes `request` names, as `load` gives them, with the maps it asks for checked
        against their packs before anything is built."""
        request.check_targets()
        recipes, problems = self.load(list(request.targets))
        request.check_maps(recipes)
        return recipes, problems

    # -- building -------------------------------------------------------------------------

    def builder(self, force: bool = False, only: list[int] | None = None, timeout: float | None = None) -> Builder:
        return Builder(exports_root=self.out, cache=LevelCache(self.cache), force=force, only=only, timeout=timeout)

    def build(
        self,
        recipes: list[Recipe | Deferred],
        executor_for: ExecutorFor,
        request: BuildRequest = BuildRequest(),
        *,
        waiting: Callable[[str], None] = lambda what: None,
        started: Callable[[PackPlan], Progress | None] = lambda plan: None,
        choosing: Callable[[PackPlan], Progress | None] = lambda plan: None,
        finished: Callable[[PackPlan, PackReport], None] = lambda plan, report: None,
        compiling: Callable[[bool], None] = lambda first_run: None,
    ) -> BuildOutcome:
        """Build `recipes` (pack names already claimed, in the order `load` gives) under their
        locks, as `request` asks, then bound the cache to its `cache_max` bytes (default
        DEFAULT_MAX_BYTES). A recipe
        that reads the pack of another here is loaded again (Deferred: loaded) once that pack is
        built, since its stages read their files as it loads. `compiling(first_run)` is told
        once, as a worker starts compiling a kernel this checkout has not compiled: `first_run`
        on a first build, else a stage kind or rule node not run before; `started(plan)` may
        return a progress callback for the pack, and `choosing(plan)` one told of each attempt
        made while pack.distinct chooses; `finished` sees each pack's report."""
        only = list(request.maps) if request.maps else None
        builder = self.builder(request.force, only, request.timeout)
        outcome = BuildOutcome([], [])
        after = upstream(recipes, self.out)
        with pack_locks(self.lock_dir, [pack_name(r) for r in recipes], waiting):
            done: set[str] = set()
            left = list(recipes)
            while left:
                # A round: every recipe whose packs read are built; all of them at once when none
                # reads another's, as before there were chains.
                turn = [r for r in left if all(p in done for p in after[r.path])] or left  # (`load` leaves no cycle)
                left = [r for r in left if not any(r is t for t in turn)]
                loaded: list[Recipe] = []
                late: dict[str, list[str]] = {}  # the warnings of a recipe that did not load before the build
                for item in turn:
                    recipe = self._reloaded(item, request, outcome.problems) if after[item.path] else item
                    if isinstance(recipe, Recipe):
                        loaded.append(recipe)
                        if isinstance(item, Deferred):
                            late[recipe.path] = recipe.warnings()
                self._build_round(builder, loaded, executor_for, outcome, (started, choosing), finished, compiling, late)
                done |= {r.path for r in turn}
            # Listing the cache costs about 0.1 s per 100,000 entries: only after a build that
            # stored Levels, or when a bound was asked for.
            stored = any(r.stage_runs[s.name] for p, r in outcome.reports for s in p.recipe.stages if not s.is_exporter)
            if stored or request.cache_max is not None:
                outcome.trimmed = builder.cache.trim(self.cache_bound(request.cache_max))
        return outcome

    @staticmethod
    def _reloaded(item: Recipe | Deferred, request: BuildRequest, problems: list[str]) -> Recipe | None:
        """The recipe loaded anew, now that the packs it reads are built; None, with its problems
        told, if it does not load (or lacks a map the request asks for)."""
        try:
            recipe = load_recipe(item.path)
        except RecipeError as exc:
            problems.extend(exc.problems)
            return None
        if recipe.pack.name != pack_name(item):  # renamed meanwhile: its lock is another's
            problems.append(f"{item.path}: pack.name: changed while the build ran ({pack_name(item)!r} -> {recipe.pack.name!r}); build again")
            return None
        bad = request.lacking(recipe)
        if bad:
            problems.extend(bad)
            return None
        return recipe

    def _build_round(
        self,
        builder: Builder,
        recipes: list[Recipe],
        executor_for: ExecutorFor,
        outcome: BuildOutcome,
        progress: tuple[Callable[[PackPlan], Progress | None], Callable[[PackPlan], Progress | None]],
        finished: Callable[[PackPlan, PackReport], None],
        compiling: Callable[[bool], None],
        late: dict[str, list[str]],
    ) -> None:
        """Plan and build packs none of which reads another's, adding to `outcome`; `late`: by
        recipe path, warnings to put first in its pack's report; `progress`: (started, choosing)."""
        started, choosing = progress
        plans = []
        for recipe in recipes:
            try:
                plan = builder.plan(recipe)
            except OSError as exc:  # an output or stamp it cannot read: this pack alone stops
                outcome.problems.append(f"{recipe.path}: {os_error_line(exc)}")
                continue
            refusal = self.refusal(plan, builder.force)
            if refusal is None:
                plans.append(plan)
            else:
                outcome.problems.append(refusal)
        # pack.distinct makes attempts of the maps it chooses before the build: workers for those too.
        todo = sum(len(p.stale_maps) + builder.to_choose(p) for p in plans)
        # Checked only when there is work: the check hashes the package's source.
        cold = todo > 0 and not kernels_cached()
        if cold:
            remove_unused_kernels()
        # Said when a worker starts compiling, not here: a first build whose stages have no
        # kernels (a hand-made map exported) compiles nothing, and would say so every time.
        with executor_for(todo) as executor, (notice_compiles(lambda: compiling(cold)) if todo else contextlib.nullcontext()):
            # Packs are built one after another, and the maps of one pack need the same
            # kernels: on a first run, workers would take turns compiling them.
            several = executor.workers > 1 and sum(bool(p.stale_maps) for p in plans) > 1
            # pack.distinct chooses attempts before its maps are made: none of them runs ahead.
            ahead = builder.run_ahead([p for p in plans if p.recipe.pack.distinct is None], executor) if cold and several else {}
            for plan in plans:
                try:
                    plan = builder.choose(plan, executor, progress=lambda plan=plan: choosing(plan))  # type: ignore[misc]
                    report = builder.build(plan, executor, progress=started(plan), ahead=ahead.pop(plan.recipe.pack.name, None))
                except PackWriteError as exc:
                    outcome.problems.extend(exc.problems)
                    continue
                except OSError as exc:  # before any file of the pack was written (its folder)
                    outcome.problems.append(f"{plan.recipe.path}: {os_error_line(exc)}")
                    continue
                report.warnings[:0] = late.get(plan.recipe.path, [])
                outcome.reports.append((plan, report))
                finished(plan, report)

    def cache_bound(self, asked: int | None = None) -> int:
        """The cache's size bound: the one asked for now (then remembered in the cache, so that
        later builds and `pcg watch` keep to it), else the one remembered, else the default."""
        path = self.cache / CACHE_MAX
        if asked is not None:
            atomic_write(path, f"{asked}\n".encode("ascii"), LevelCache(self.cache).temp_dir)
            return asked
        try:
            return int(read_regular(path).decode("ascii").strip())
        except (OSError, ValueError, UnicodeDecodeError):
            return DEFAULT_MAX_BYTES

    def refusal(self, plan: PackPlan, force: bool) -> str | None:
        """Why this pack may not be built into its folder, if it may not."""
        where = f"{plan.recipe.path}: pack.name"
        if plan.pack_dir.is_symlink():
            return (
                f"{where}: {plan.pack_dir} is a symbolic link; pcg writes packs only into real folders"
                " (remove the link, or pass --out to build elsewhere)"
            )
        if plan.owner is not None and not force:
            return f"{where}: {plan.pack_dir} was built from {plan.owner}; give this pack another name, or replace it with `pcg build --force`"
        twin = self._case_twin(plan.pack_dir)
        if twin is not None:
            return (
                f"{where}: {twin} is another pack whose name differs only in case; the two would share a folder on Windows"
                " and macOS (rename one, or remove it with `pcg clean`)"
            )
        return None

    @staticmethod
    def _case_twin(pack_dir: Path) -> Path | None:
        """A built pack beside `pack_dir` whose name differs from its name in case alone."""
        try:
            siblings = sorted(pack_dir.parent.iterdir()) if pack_dir.parent.is_dir() else []
        except OSError:
            return None
        folded = pack_dir.name.casefold()
        return next((d for d in siblings if d.name != pack_dir.name and d.name.casefold() == folded and (d / MANIFEST).is_file()), None)

    # -- cleaning -------------------------------------------------------------------------

    def pack_folder(self, pack: Path) -> Path:
        """A built pack as every command that takes one accepts it (`show`, `stats`, `verify`,
        `clean`): its folder, its manifest.json, its recipe, or its name under the exports folder."""
        if pack.suffix == ".toml" and pack.is_file():
            folder = self.out / load_recipe(pack).pack.name
            where = str(folder)
        elif pack.name == MANIFEST and pack.is_file():
            folder, where = pack.parent, str(pack.parent)
        else:
            folder = pack if (pack / MANIFEST).is_file() else self.out / pack
            where = " or ".join(dict.fromkeys(map(str, (pack, self.out / pack))))
        # Only folders we built: a stray name must never delete anything else.
        if not (folder / MANIFEST).is_file():
            raise PipelineError([f"{pack}: not a built pack (no {MANIFEST} in {where}); build it with `pcg build`"])
        return folder

    def clean(self, packs: Iterable[Path], all_packs: bool, waiting: Callable[[], None] = lambda: None) -> list[Path]:
        """Delete the cache and the packs named; returns what was removed. Kept: the lock files,
        the size bound, and the journals of packs that stay (what killed builds left in them is
        still for the next build to remove). Waits for running builds to finish; builds that
        start meanwhile wait for it."""
        folders = [self.pack_folder(p) for p in packs]
        if all_packs and self.out.is_dir():
            folders += sorted(d for d in self.out.iterdir() if (d / MANIFEST).is_file() and not d.is_symlink())
        removed: list[Path] = []
        if not self.cache.exists() and not folders:
            return removed
        with cache_lock(self.lock_dir, waiting):
            for folder in dict.fromkeys(folders):
                if folder.is_symlink():
                    raise PipelineError([f"{folder}: is a symbolic link; pcg deletes only pack folders it built"])
                if folder.exists():
                    remove_tree(folder)
                    removed.append(folder)
                Journal(self.cache, folder).end()
            # Everything but the locks (a build blocked on a lock file must find it still there)
            # and the journals (what killed builds left in packs that stay, for the next build).
            kept = (LOCKS, JOURNALS, CACHE_MAX)  # and the size bound the user chose
            entries = sorted(p for p in self.cache.iterdir() if p.name not in kept) if self.cache.is_dir() else []
            for entry in entries:
                if entry.is_dir() and not entry.is_symlink():
                    remove_tree(entry)
                else:
                    entry.unlink()
            journals = self.cache / JOURNALS
            if journals.is_dir() and not any(journals.iterdir()):
                journals.rmdir()  # nothing left to finish
            if entries:
                removed.append(self.cache)
        return removed


def remove_tree(folder: Path) -> None:
    """shutil.rmtree, whose errors name the file in full: it deletes by names relative to each
    folder, and a read-only disk's error would say `contact_sheet.png` alone."""

    def named(func: Any, path: str, exc: Any) -> None:
        error = exc[1] if isinstance(exc, tuple) else exc
        if isinstance(error, OSError):
            raise naming(error, path) from error
        raise error

    if sys.version_info >= (3, 12):
        shutil.rmtree(folder, onexc=named)
    else:
        shutil.rmtree(folder, onerror=named)


def claim_packs(recipes: list[R]) -> tuple[list[R], list[str]]:
    """Two recipes may not share a pack name, nor names that differ only in case (one folder on
    Windows and macOS): the first (in the order given) keeps it and the others are refused, each
    with a line naming the one that has it."""
    owner: dict[str, R] = {}
    kept, problems = [], []
    for recipe in recipes:
        name = pack_name(recipe)
        first = owner.setdefault(name.casefold(), recipe)
        if first is recipe:
            kept.append(recipe)
        elif pack_name(first) == name:
            problems.append(f"{recipe.path}: pack.name: {name!r} is also the pack of {first.path}; each recipe needs its own")
        else:
            problems.append(
                f"{recipe.path}: pack.name: {name!r} and the pack {pack_name(first)!r} of {first.path} differ only in case,"
                " so they share a folder on Windows and macOS; each recipe needs its own"
            )
    return kept, problems


@contextlib.contextmanager
def borrowed(executor: Executor) -> Iterable[Executor]:
    """An executor that outlives the build (the watcher's), for `Workspace.build`."""
    yield executor


def recipe_of(pack: Path, out: Path, cache: Path) -> Path:
    """The recipe file of a pack named the ways every pack command takes one (a recipe, or a
    built pack's name, folder or manifest: then the recipe its manifest records)."""
    if pack.suffix == ".toml":
        return pack
    folder = Workspace(out, cache).pack_folder(pack)
    recorded = load_manifest(folder / MANIFEST).recipe.path
    # The manifest records the recipe relative to the folder that holds the exports folder.
    path = Path(os.path.relpath(out.absolute().parent / recorded))
    if not path.is_file():
        raise PipelineError([f"{pack}: the pack was built from {recorded}, which is not there now (name the recipe itself)"])
    return path
