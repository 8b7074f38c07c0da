"""What a build is asked to do, checked in one place: the targets, the maps, `force`, the worker
count, the cache bound and the time limit.

`pcg build`, `pcg watch`, `pcg reroll --build`, `pcg stats RECIPE` and `pipeline.build` all make a
BuildRequest and hand it to the Workspace, so they cannot disagree about what a value means or
how a wrong one is told. Only the name in the message differs: the command line's option
(`--cache-max`), or the Python keyword (`cache_max`), as each caller spells it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence, Union

from pipeline.errors import PipelineError
from pipeline.time_limit import is_limit

if TYPE_CHECKING:
    from pipeline.recipe.model import Recipe
    from pipeline.recipe.order import Deferred

# Where a build looks when no target is given, relative to the current folder.
DEFAULT_RECIPES = Path("recipes")

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class Spelling:
    """How the caller names each value, for messages."""

    maps: str
    jobs: str
    cache_max: str
    timeout: str


COMMAND_LINE = Spelling(maps="--map", jobs="--jobs", cache_max="--cache-max", timeout="--timeout")
PYTHON = Spelling(maps="maps", jobs="jobs", cache_max="cache_max", timeout="timeout")


@dataclass(frozen=True)
class BuildRequest:
    """A checked request; make one with `BuildRequest.checked`."""

    targets: tuple[Path, ...] = (DEFAULT_RECIPES,)
    jobs: int | None = None  # worker processes; None: every core
    force: bool = False
    maps: tuple[int, ...] | None = None  # sorted, each once; None: every map of each pack
    cache_max: int | None = None  # bytes; None: the bound the cache remembers, else its default
    timeout: float | None = None  # seconds a map may take; None: no limit
    spelling: Spelling = field(default=COMMAND_LINE, compare=False)

    @classmethod
    def checked(
        cls,
        targets: PathLike | Iterable[PathLike] | None = None,
        *,
        jobs: object = None,
        force: bool = False,
        maps: object = None,
        cache_max: object = None,
        timeout: object = None,
        spelling: Spelling = COMMAND_LINE,
    ) -> BuildRequest:
        """The request, or a PipelineError with a line for each value no build can use. `maps`
        is one index or several (None or empty: every map); `cache_max` bytes or a size as
        `parse_size` reads it ("500M")."""
        problems: list[str] = []
        if isinstance(targets, (str, os.PathLike)):
            paths = (Path(targets),)
        else:
            paths = tuple(Path(t) for t in targets or ())
        if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
            problems.append(f"{spelling.jobs}: must be a whole number >= 1, or None for every core (got {jobs!r})")
        if timeout is not None and not is_limit(timeout):
            shown = f"{timeout:g}" if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) else repr(timeout)
            problems.append(f"{spelling.timeout}: seconds, more than 0 (got {shown})")
        bound = _cache_bound(cache_max, spelling.cache_max, problems)
        indices = _map_indices(maps, spelling.maps, problems)
        if problems:
            raise PipelineError(problems)
        return cls(
            targets=paths or (DEFAULT_RECIPES,),
            jobs=jobs,  # type: ignore[arg-type]  # checked above
            force=bool(force),
            maps=indices,
            cache_max=bound,
            timeout=timeout,  # type: ignore[arg-type]  # checked above
            spelling=spelling,
        )

    def lacking(self, recipe: Recipe) -> list[str]:
        """A line for each map asked for that the recipe's pack does not have."""
        return missing_maps([recipe], self.maps, self.spelling.maps)

    def check_targets(self) -> None:
        """The default folder must be there: a build run outside a project says so, rather than
        that it found no recipes."""
        if self.targets == (DEFAULT_RECIPES,) and not DEFAULT_RECIPES.is_dir():
            raise PipelineError([f"no recipes/ folder in {Path.cwd()}: name recipe files or folders, or change to your project folder"])

    def check_maps(self, recipes: Sequence[Recipe | Deferred]) -> None:
        """Refuse the build before it starts when a loaded pack lacks a map asked for; a recipe
        not loaded yet (Deferred) is checked as it loads."""
        bad = missing_maps(recipes, self.maps, self.spelling.maps)
        if bad:
            key = self.spelling.maps
            raise PipelineError([*bad, f"{key}: nothing was done, as a pack lacks that map (name the recipes whose packs have it)"])


def missing_maps(recipes: Sequence[Recipe | Deferred], maps: Iterable[int] | None, key: str) -> list[str]:
    """A line for each map index outside a loaded recipe's pack, named `key` (the option or
    argument that asked for it)."""
    from pipeline.recipe.model import Recipe

    return [
        f"{r.path}: {key} {i}: the pack has maps 0..{r.pack.maps - 1}"
        for r in recipes if isinstance(r, Recipe) for i in maps or () if not 0 <= i < r.pack.maps
    ]


def _cache_bound(cache_max: object, key: str, problems: list[str]) -> int | None:
    if cache_max is None:
        return None
    if isinstance(cache_max, str):
        from pipeline.building.cache import parse_size

        try:
            return parse_size(cache_max)
        except ValueError as exc:
            problems.append(f"{key}: {exc}")
            return None
    if isinstance(cache_max, bool) or not isinstance(cache_max, int) or cache_max < 0:
        problems.append(f"{key}: bytes (>= 0) or a size such as '500M' or '2G' (got {cache_max!r})")
        return None
    return cache_max


def _map_indices(maps: object, key: str, problems: list[str]) -> tuple[int, ...] | None:
    if maps is None:
        return None
    if isinstance(maps, int) and not isinstance(maps, bool):
        maps = [maps]  # one map: `maps=3`, as `--map 3`
    if not isinstance(maps, Iterable) or isinstance(maps, (str, bytes)):
        problems.append(f"{key}: a map index or several (got {maps!r})")
        return None
    indices = list(maps)
    bad = [i for i in indices if isinstance(i, bool) or not isinstance(i, int) or i < 0]
    problems += [f"{key}: map indices are whole numbers >= 0 (got {i!r})" for i in bad]
    if bad or not indices:
        return None
    return tuple(sorted(set(indices)))
