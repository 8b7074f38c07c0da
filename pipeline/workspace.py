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
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterable

from pipeline.builder import Builder, PackReport, PackWriteError, Progress
from pipeline.cache import DEFAULT_MAX_BYTES, LevelCache, Trimmed
from pipeline.errors import PipelineError, RecipeError, os_error_line
from pipeline.executor import Executor
from pipeline.fsio import atomic_write, naming, read_regular
from pipeline.jit import kernels_cached, notice_compiles, remove_unused_kernels
from pipeline.journal import JOURNALS, Journal
from pipeline.lock import LOCKS, cache_lock, pack_locks
from pipeline.manifest import MANIFEST
from pipeline.plan import PackPlan
from pipeline.recipe import Recipe, find_recipes, load_recipe

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

    def load(self, targets: list[Path]) -> tuple[list[Recipe], list[str]]:
        """Every recipe found under `targets` that loads and has a pack of its own, and the
        problems of the others."""
        paths = list(dict.fromkeys(find_recipes(targets)))  # a recipe named twice is built once
        if not paths:
            raise PipelineError([f"no recipes (*.toml) found in {', '.join(map(str, targets))}"])
        recipes, problems = [], []
        for path in paths:
            try:
                recipes.append(load_recipe(path))
            except RecipeError as exc:
                problems.extend(exc.problems)
        kept, refused = claim_packs(recipes)
        return kept, problems + refused

    # -- building -------------------------------------------------------------------------

    def builder(self, force: bool = False, only: list[int] | None = None, timeout: float | None = None) -> Builder:
        return Builder(exports_root=self.out, cache=LevelCache(self.cache), force=force, only=only, timeout=timeout)

    def build(
        self,
        recipes: list[Recipe],
        executor_for: ExecutorFor,
        *,
        force: bool = False,
        only: list[int] | None = None,
        cache_max: int | None = None,
        waiting: Callable[[str], None] = lambda what: None,
        started: Callable[[PackPlan], Progress | None] = lambda plan: None,
        finished: Callable[[PackPlan, PackReport], None] = lambda plan, report: None,
        compiling: Callable[[bool], None] = lambda first_run: None,
        timeout: float | None = None,
    ) -> BuildOutcome:
        """Build `recipes` (pack names already claimed) under their locks, then bound the cache to
        `cache_max` bytes (default DEFAULT_MAX_BYTES). `compiling(first_run)` is told once, as a
        worker starts compiling a kernel this checkout has not compiled: `first_run` on a first
        build, else a stage kind or rule node not run before; `started(plan)` may
        return a progress callback for the pack; `finished` sees each pack's report; a map that
        takes longer than `timeout` seconds fails."""
        builder = self.builder(force, only, timeout)
        outcome = BuildOutcome([], [])
        with pack_locks(self.lock_dir, [r.pack.name for r in recipes], waiting):
            plans = []
            for recipe in recipes:
                try:
                    plan = builder.plan(recipe)
                except OSError as exc:  # an output or stamp it cannot read: this pack alone stops
                    outcome.problems.append(f"{recipe.path}: {os_error_line(exc)}")
                    continue
                refusal = self.refusal(plan, force)
                if refusal is None:
                    plans.append(plan)
                else:
                    outcome.problems.append(refusal)
            # Checked only when there is work: the check hashes the package's source.
            cold = any(p.stale_maps for p in plans) and not kernels_cached()
            if cold:
                remove_unused_kernels()
            todo = sum(len(p.stale_maps) for p in plans)
            # Said when a worker starts compiling, not here: a first build whose stages have no
            # kernels (a hand-made map exported) compiles nothing, and would say so every time.
            with executor_for(todo) as executor, (notice_compiles(lambda: compiling(cold)) if todo else contextlib.nullcontext()):
                # Packs are built one after another, and the maps of one pack need the same
                # kernels: on a first run, workers would take turns compiling them.
                several = executor.workers > 1 and sum(bool(p.stale_maps) for p in plans) > 1
                ahead = builder.run_ahead(plans, executor) if cold and several else {}
                for plan in plans:
                    try:
                        report = builder.build(plan, executor, progress=started(plan), ahead=ahead.pop(plan.recipe.pack.name, None))
                    except PackWriteError as exc:
                        outcome.problems.extend(exc.problems)
                        continue
                    except OSError as exc:  # before any file of the pack was written (its folder)
                        outcome.problems.append(f"{plan.recipe.path}: {os_error_line(exc)}")
                        continue
                    outcome.reports.append((plan, report))
                    finished(plan, report)
            # Listing the cache costs about 0.1 s per 100,000 entries: only after a build that
            # stored Levels, or when a bound was asked for.
            stored = any(r.stage_runs[s.name] for p, r in outcome.reports for s in p.recipe.stages if not s.is_exporter)
            if stored or cache_max is not None:
                outcome.trimmed = builder.cache.trim(self.cache_bound(cache_max))
        return outcome

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


def claim_packs(recipes: list[Recipe]) -> tuple[list[Recipe], list[str]]:
    """Two recipes may not share a pack name, nor names that differ only in case (one folder on
    Windows and macOS): the first (in the order given) keeps it and the others are refused, each
    with a line naming the one that has it."""
    owner: dict[str, Recipe] = {}
    kept, problems = [], []
    for recipe in recipes:
        first = owner.setdefault(recipe.pack.name.casefold(), recipe)
        if first is recipe:
            kept.append(recipe)
        elif first.pack.name == recipe.pack.name:
            problems.append(f"{recipe.path}: pack.name: {recipe.pack.name!r} is also the pack of {first.path}; each recipe needs its own")
        else:
            problems.append(
                f"{recipe.path}: pack.name: {recipe.pack.name!r} and the pack {first.pack.name!r} of {first.path} differ only in case,"
                " so they share a folder on Windows and macOS; each recipe needs its own"
            )
    return kept, problems


@contextlib.contextmanager
def borrowed(executor: Executor) -> Iterable[Executor]:
    """An executor that outlives the build (the watcher's), for `Workspace.build`."""
    yield executor
