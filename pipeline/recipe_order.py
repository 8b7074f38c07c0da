"""The order of one run's recipes: a recipe that reads files of another's pack (a `load.tmx` of
`../exports/up/map_000.tmx`) builds after it, and loads only then, since stages read their files
as the recipe loads.

Which packs a recipe reads is found in its TOML text, not in its loaded stages: a recipe whose
file does not exist yet (the first build of both) does not load until the other pack is built.
Every string of a stage table is taken for a path relative to the recipe (a glob for the folder
before its first wildcard); one that falls inside the folder of another pack of the run makes
the recipe read that pack. A string that is no path names no such folder, so it changes nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import tomli

from pipeline.fsio import read_regular


@dataclass(frozen=True)
class RecipeFile:
    """A recipe known by its file and pack name alone (not loaded)."""

    path: str
    pack_name: str

    @classmethod
    def read(cls, path: Path) -> RecipeFile:
        return cls(str(path), raw_pack_name(path) or "")


@dataclass(frozen=True)
class Deferred(RecipeFile):
    """A recipe that did not load before a pack it reads was built (its file is not there yet,
    or is an older one's): loaded again in its turn, and its problems told only if it fails then."""

    problems: tuple[str, ...] = ()


def pack_name(item: Any) -> str:
    """The pack a recipe builds, loaded (a Recipe) or known by its file alone."""
    return item.pack_name if isinstance(item, RecipeFile) else item.pack.name


def dependents(path: Path, others: list[Path], out: Path) -> list[Path]:
    """The recipes of `others` that read the pack of the recipe at `path`, directly or through
    one another, in an order to build them."""
    files = [RecipeFile.read(p) for p in dict.fromkeys([path, *others])]
    after = upstream(files, out)
    reached = {str(path)}
    order = ordered(files, out)[0]
    for item in order:
        if any(p in reached for p in after[item.path]):
            reached.add(item.path)
    return [Path(item.path) for item in order if item.path in reached and item.path != str(path)]


def raw_pack_name(path: Path) -> str | None:
    """`[pack] name` as the recipe's text has it, for a recipe that does not load."""
    pack = _table(path).get("pack")
    name = pack.get("name") if isinstance(pack, dict) else None
    return name if isinstance(name, str) and name else None


def _table(path: Path) -> dict[str, Any]:
    try:
        return tomli.loads(read_regular(path).decode("utf-8-sig"))
    except (OSError, UnicodeDecodeError, tomli.TOMLDecodeError):
        return {}


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _fixed_part(text: str) -> str:
    """A glob's folder before its first wildcard (the whole string for a plain path)."""
    cut = min((i for i, c in enumerate(text) if c in "*?["), default=None)
    return text if cut is None else text[:cut].rpartition("/")[0]


def packs_read(path: Path, pack_dirs: dict[str, Path]) -> list[str]:
    """The packs (names of `pack_dirs`, resolved pack folders) whose files the recipe at `path`
    names in its stages."""
    stages = _table(path).get("stage")
    if not isinstance(stages, dict):
        return []
    folder = str(path.resolve().parent)
    # Joined as text, not resolved: a string that is no path (a colour, a rule) costs no look-up.
    named = {Path(os.path.normpath(os.path.join(folder, _fixed_part(s)))) for s in _strings(stages) if s and "\n" not in s}
    return [name for name, pack_dir in pack_dirs.items() if any(p == pack_dir or p.is_relative_to(pack_dir) for p in named)]


def upstream(items: list[Any], out: Path) -> dict[str, list[str]]:
    """For each recipe of the run (by path), the recipes of the run whose packs it reads."""
    builder = {pack_name(item): item.path for item in items if pack_name(item)}  # a recipe without one builds no pack
    pack_dirs = {name: out.resolve() / name for name in builder}
    return {
        item.path: [builder[name] for name in packs_read(Path(item.path), pack_dirs) if builder[name] != item.path]
        for item in items
    }


def ordered(items: list[Any], out: Path) -> tuple[list[Any], dict[str, str]]:
    """`items` with every recipe after the recipes whose packs it reads, otherwise in the order
    given; and by path, a problem line for each recipe caught in a cycle of them (left out)."""
    after = upstream(items, out)
    placed: list[Any] = []
    done: set[str] = set()
    left = list(items)
    while left:
        ready = next((item for item in left if all(p in done for p in after[item.path])), None)
        if ready is None:
            break
        left.remove(ready)
        placed.append(ready)
        done.add(ready.path)
    by_path = {item.path: item for item in items}
    problems = {item.path: f"{item.path}: {_cycle(item.path, after, done, by_path)}" for item in left}
    return placed, problems


def _cycle(start: str, after: dict[str, list[str]], done: set[str], by_path: dict[str, Any]) -> str:
    """Why a recipe cannot be ordered: the cycle of packs read that it is in, or leads to."""
    trail = [start]
    while True:
        step = next(p for p in after[trail[-1]] if p not in done)
        if step in trail:
            loop = trail[trail.index(step) :] + [step]
            shown = " -> ".join(f"{pack_name(by_path[p])} ({p})" for p in loop)
            return f"the recipes read each other's packs in a cycle ({shown}), so none of them can be built first; break the cycle"
        trail.append(step)
