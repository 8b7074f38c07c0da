"""The order of one run's recipes: a recipe that reads files of another's pack (a `load.tmx` of
`../exports/up/map_000.tmx`) builds after it, and loads only then, since stages read their files
as the recipe loads.

Which packs a recipe reads is found in its TOML text, not in its loaded stages: a recipe whose
file does not exist yet (the first build of both) does not load until the other pack is built.
Every string of a stage table is taken for a path relative to the recipe (or a glob); one that
falls inside the folder of another pack of the run (or a glob that may) makes the recipe read
that pack. A string that is no path names no such folder, so it changes nothing.
"""

from __future__ import annotations

import fnmatch
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
    order = ordered(files, out, after)[0]
    for item in order:
        if any(p in reached for p in after[item.path]):
            reached.add(item.path)
    return [Path(item.path) for item in order if item.path in reached and item.path != str(path)]


def raw_pack_name(path: Path) -> str | None:
    """`[pack] name` as the recipe's text has it, for a recipe that does not load."""
    pack = _table(path).get("pack")
    name = pack.get("name") if isinstance(pack, dict) else None
    return name if isinstance(name, str) and name else None


# Parsed recipe texts by (path, size, modification time): a run, or `pcg watch` after every
# build, asks again of every recipe which packs it reads.
_parsed: dict[tuple[str, int, int], dict[str, Any]] = {}


def _table(path: Path) -> dict[str, Any]:
    try:
        st = os.stat(path)
        key = (str(path), st.st_size, st.st_mtime_ns)
        if key not in _parsed:
            if len(_parsed) > 4096:  # a long `pcg watch` of many saves
                _parsed.clear()
            _parsed[key] = tomli.loads(read_regular(path).decode("utf-8-sig"))
        return _parsed[key]
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


def packs_read(path: Path, pack_dirs: dict[str, Path]) -> list[str]:
    """The packs (names of `pack_dirs`, resolved pack folders) whose files the recipe at `path`
    names in its stages."""
    return _named_packs(path, pack_dirs, {str(d): name for name, d in pack_dirs.items()})


def _named_packs(path: Path, pack_dirs: dict[str, Path], by_dir: dict[str, str]) -> list[str]:
    stages = _table(path).get("stage")
    if not isinstance(stages, dict):
        return []
    folder = str(path.resolve().parent)
    found: set[str] = set()
    for text in _strings(stages):
        if not text or "\n" in text:
            continue
        # Joined as text, not resolved: a string that is no path (a colour, a rule) costs no look-up.
        named = os.path.normpath(os.path.join(folder, text))
        if any(c in text for c in "*?["):  # a glob: a pack whose folder its parts may match
            parts = Path(named).parts
            found.update(
                name for name, d in pack_dirs.items()
                if len(d.parts) <= len(parts) and all(fnmatch.fnmatchcase(a, b) for a, b in zip(d.parts, parts))
            )
        else:
            found.update(by_dir[p] for p in (named, *map(str, Path(named).parents)) if p in by_dir)
    return [name for name in pack_dirs if name in found]


def upstream(items: list[Any], out: Path) -> dict[str, list[str]]:
    """For each recipe of the run (by path), the recipes of the run whose packs it reads."""
    builder = {pack_name(item): item.path for item in items if pack_name(item)}  # a recipe without one builds no pack
    pack_dirs = {name: out.resolve() / name for name in builder}
    by_dir = {str(d): name for name, d in pack_dirs.items()}
    return {
        item.path: [builder[name] for name in _named_packs(Path(item.path), pack_dirs, by_dir) if builder[name] != item.path]
        for item in items
    }


def ordered(items: list[Any], out: Path, after: dict[str, list[str]] | None = None) -> tuple[list[Any], dict[str, str]]:
    """`items` with every recipe after the recipes whose packs it reads (`after`, if known:
    `upstream`), otherwise in the order given; and by path, a problem line for each recipe
    caught in a cycle of them (left out)."""
    after = upstream(items, out) if after is None else after
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
