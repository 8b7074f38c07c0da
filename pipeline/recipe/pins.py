"""Control over each map: pin, re-roll or unpin one map's seed in the recipe's `[pack.seeds]` table.

Map i of a pack draws its streams from (i, stage, seed), where seed is the pack seed unless
`[pack.seeds]` gives map i one of its own. This module edits that table, for `pcg pin`,
`pcg reroll`, `pcg unpin` and anything else (a gallery) that offers the same buttons:

- `pin`: write the map's current seed (or a given one) into the table: the map then keeps its
  files when the pack seed or `maps` changes.
- `reroll`: give the map a new seed, derived from its current seed and a re-roll counter that the
  table keeps (no clock): the recipe alone reproduces it, and re-rolling again goes on from there.
- `unpin`: remove the map's entry: it follows the pack seed again.

Only the map touched gets new keys, so the next build rebuilds that map alone. The recipe is
edited in place (comments and layout kept, see toml_edit), validated before anything is written,
and replaced atomically. Edits of one recipe take turns (`pcg reroll` in a terminal while the
gallery's button re-rolls too): each reads the recipe the one before wrote, so none is lost.
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from pipeline.errors import PipelineError, RecipeError
from pipeline.fsio import atomic_write, read_regular
from pipeline.jit import cache_home
from pipeline.lock import exclusive
from pipeline.recipe.load import load_recipe
from pipeline.recipe.model import Recipe, Reroll, SEED_LIMIT
from pipeline.recipe.toml_edit import EditError, check_edit, remove_key, set_key

TABLE = ("pack", "seeds")


@dataclass(frozen=True)
class SeedChange:
    """What an edit did to map `map` of the recipe at `recipe`."""

    recipe: str
    map: int
    before: int  # the map's seed before the edit
    seed: int  # and after
    rerolls: int  # 0: pinned, or following the pack seed
    pinned: bool  # the map has an entry in [pack.seeds] now
    written: bool  # the recipe file changed


@dataclass(frozen=True)
class Override:
    """One `[pack.seeds]` entry, as `pcg explain` shows it."""

    map: int
    seed: int
    rerolls: int
    in_pack: bool  # the index is below `maps` (an entry past it waits for `maps` to grow)

    @property
    def how(self) -> str:
        return "pinned" if not self.rerolls else f"re-rolled {self.rerolls}x"


def overrides(recipe: Recipe) -> list[Override]:
    """The recipe's per-map seeds, by map index."""
    out = []
    for key, entry in recipe.pack.seeds.items():
        index = int(key)
        seed, rerolls = (entry, 0) if isinstance(entry, int) else (entry.seed, entry.rerolls)
        out.append(Override(index, seed, rerolls, index < recipe.pack.maps))
    return sorted(out, key=lambda o: o.map)


REROLL_LIMIT = 2**31


def reroll_seed(map_index: int, seed: int, count: int) -> int:
    """The seed re-roll number `count` gives map `map_index` whose seed was `seed`: blake2b of all
    three, so neighbouring maps and counts never share a seed by arithmetic, and no clock. Below
    2**31, as the seeds people write are: a map's `seed` property is then an int in Tiled (whose
    ints are 32-bit) on re-rolled maps as on the others, not a string on those alone."""
    text = f"pcg-reroll:{map_index}:{seed}:{count}".encode("ascii")
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little") % REROLL_LIMIT


def pin(recipe_path: Path | str, map_index: int, seed: int | None = None) -> SeedChange:
    """Freeze map `map_index`'s seed into the recipe: its current one, or `seed`. A map already
    pinned to that seed, or re-rolled to it, is left as it is."""
    with _editing(recipe_path):
        return _pin(recipe_path, map_index, seed)


def reroll(recipe_path: Path | str, map_index: int) -> SeedChange:
    """Give map `map_index` a new seed (see `reroll_seed`) and write it into the recipe."""
    with _editing(recipe_path):
        return _reroll(recipe_path, map_index)


def unpin(recipe_path: Path | str, map_index: int) -> SeedChange:
    """Remove map `map_index`'s entry: it follows the pack seed again. No entry: nothing changes."""
    with _editing(recipe_path):
        return _unpin(recipe_path, map_index)


@contextlib.contextmanager
def _editing(recipe_path: Path | str) -> Iterator[None]:
    """Hold the recipe's edit lock: a lock file named after the recipe's real path, in this
    user's cache folder rather than beside the recipe (nothing appears in the user's project)."""
    name = hashlib.sha256(os.path.realpath(recipe_path).encode()).hexdigest()[:24]
    with contextlib.ExitStack() as stack:
        try:
            folder = cache_home() / "recipe-locks"
            folder.mkdir(parents=True, exist_ok=True)
            stack.enter_context(exclusive(folder / f"{name}.lock"))
        except OSError:
            pass  # no cache folder to lock in (a read-only home): the edit goes on unlocked
        yield


def _pin(recipe_path: Path | str, map_index: int, seed: int | None) -> SeedChange:
    recipe = _load(recipe_path, map_index)
    current = recipe.pack.seed_of(map_index)
    target = current if seed is None else seed
    if not 0 <= target < SEED_LIMIT:
        raise PipelineError([f"{recipe.path}: map {map_index}: the seed to pin must be an integer 0..2**63-1 (got {target})"])
    entry = recipe.pack.seeds.get(str(map_index))
    if entry is not None and target == current:
        return _change(recipe, map_index, current, recipe, written=False)
    return _write(recipe, map_index, current, str(target), target)


def _reroll(recipe_path: Path | str, map_index: int) -> SeedChange:
    recipe = _load(recipe_path, map_index)
    current = recipe.pack.seed_of(map_index)
    entry = recipe.pack.seeds.get(str(map_index))
    count = entry.rerolls + 1 if isinstance(entry, Reroll) else 1
    seed = reroll_seed(map_index, current, count)
    return _write(recipe, map_index, current, f"{{ seed = {seed}, rerolls = {count} }}", {"seed": seed, "rerolls": count})


def _unpin(recipe_path: Path | str, map_index: int) -> SeedChange:
    recipe = _load(recipe_path, map_index)
    current = recipe.pack.seed_of(map_index)
    if str(map_index) not in recipe.pack.seeds:
        return _change(recipe, map_index, current, recipe, written=False)
    return _write(recipe, map_index, current, None, None)


def _load(recipe_path: Path | str, map_index: int) -> Recipe:
    recipe = load_recipe(recipe_path)
    if not 0 <= map_index < recipe.pack.maps:
        raise PipelineError([f"{recipe.path}: map {map_index}: the pack has maps 0..{recipe.pack.maps - 1}"])
    return recipe


def _change(old: Recipe, map_index: int, before: int, new: Recipe, written: bool) -> SeedChange:
    entry = new.pack.seeds.get(str(map_index))
    return SeedChange(
        recipe=old.path,
        map=map_index,
        before=before,
        seed=new.pack.seed_of(map_index),
        rerolls=entry.rerolls if isinstance(entry, Reroll) else 0,
        pinned=entry is not None,
        written=written,
    )


def _write(recipe: Recipe, map_index: int, before: int, value: str | None, data: object) -> SeedChange:
    """Edit the entry in the file's own text (newlines as they are), check the result loads as a
    recipe with exactly that change, and replace the file atomically (through a symlink, to the
    file it names, keeping its mode)."""
    target = Path(os.path.realpath(recipe.path))
    where = recipe.path
    try:
        raw = read_regular(target)
        text = raw.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise PipelineError([f"{where}: cannot read recipe ({exc})"]) from None
    key = str(map_index)
    try:
        if value is None:
            edited = remove_key(text, TABLE, key)
        else:
            edited = set_key(text, TABLE, key, value, parent=("pack",), order=int)
        check_edit(text, edited, TABLE, key, data)
    except EditError as exc:
        raise PipelineError([f"{where}: {p}" for p in exc.problems]) from None
    try:
        new = load_recipe(recipe.path, text=edited.replace("\r\n", "\n").replace("\r", "\n"))
    except RecipeError as exc:  # a recipe that loaded before loads after a seed edit; if not, say so and keep it
        raise PipelineError([f"{where}: not written, since the edited recipe would not load:", *exc.problems]) from None
    mode = os.stat(target).st_mode & 0o7777
    # A recipe made read-only is kept so even from root, whom os.access lets write anything.
    if not mode & 0o222 or not os.access(target, os.W_OK) or not os.access(target.parent, os.W_OK):
        raise PipelineError([f"{where}: recipe is not writable (mode {mode:o}, or its folder's); nothing changed"])
    bom = codecs.BOM_UTF8 if raw.startswith(codecs.BOM_UTF8) else b""  # the file's own, kept
    atomic_write(target, bom + edited.encode("utf-8"))
    os.chmod(target, mode)
    return _change(recipe, map_index, before, new, written=True)
