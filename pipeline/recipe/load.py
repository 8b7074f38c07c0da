"""Loading recipes: TOML files describing a pack (`[pack]`) and a DAG of stages
(`[stage.NAME]`), into the model of `pipeline.recipe.model`.

Loading validates everything at once and raises a RecipeError listing every problem as
`path: key: message`, so a user fixes a recipe in one round trip.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar, cast

import tomli
from pydantic import BaseModel, ValidationError

from pipeline import registry
from pipeline.errors import RecipeError, did_you_mean, toml_text, unknown_kind, validation_problems
from pipeline.fsio import read_regular
from pipeline.recipe.model import Distinct, PackConfig, Recipe, StageSpec, upstream
from pipeline.recipe.object_tiles import check_object_tiles
from pipeline.recipe.stat_checks import check_pack_stats, check_read_stats
from pipeline.registry import RESERVED_KEYS, Exporter, StageParams

M = TypeVar("M", bound=BaseModel)
_STAGE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def find_recipes(targets: list[Path]) -> list[Path]:
    """Recipe files named directly, or every `*.toml` in a named folder, sorted. Whatever else a
    name is (a FIFO, a device) is listed too: load_recipe refuses it with its path, and the
    other recipes still load."""
    found: list[Path] = []
    for target in targets:
        if target.is_dir():
            found.extend(sorted(target.glob("*.toml")))
        else:
            found.append(target)
    return found


def load_recipe(path: Path | str, text: str | None = None) -> Recipe:
    """Parse and validate a recipe; `text` overrides reading the file (used by `pcg verify`)."""
    shown = str(path)
    if text is None:
        try:
            # Newlines as Path.read_text reads them, and no byte-order mark (Windows Notepad may write
            # one): the text (and its sha256) is in the manifest.
            text = read_regular(Path(path)).decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
        except FileNotFoundError:
            what = "recipe file" if Path(path).suffix == ".toml" else "recipe file or folder"
            raise RecipeError([f"{shown}: no such {what}"]) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise RecipeError([f"{shown}: cannot read recipe ({exc})"]) from None
    try:
        data = tomli.loads(text)
    except tomli.TOMLDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}: " if getattr(exc, "lineno", None) else ""
        message = getattr(exc, "msg", str(exc))
        twice = re.fullmatch(r"Cannot declare \((.*)\) twice", message)
        if twice:
            # A snippet pasted below a table of the same name: say which way out there is.
            table = ".".join(re.findall(r"'([^']*)'", twice.group(1)))
            message = f"[{table}] is declared twice (a table appears once: edit the one above, or give this one another name)"
        raise RecipeError([f"{shown}: {where}invalid TOML: {message}"]) from None

    problems: list[str] = []
    if not data:
        raise RecipeError([f"{shown}: the recipe is empty (a recipe has a [pack] table and [stage.NAME] tables; docs/recipes.md)"])
    tileset = bool({"tile_size", "tiles", "colors", "image"} & set(data))
    misspelt = any(did_you_mean(key, ["pack", "stage"]) for key in data)
    if not {"pack", "stage"} & set(data) and (tileset or not misspelt):
        # Another kind of TOML file (a tileset, a pyproject) in the folder given: one line, not
        # one per table it has.
        looks = " (it looks like a tileset file: recipes name one with `tileset = ...`)" if tileset else ""
        raise RecipeError([f"{shown}: not a recipe: it has no [pack] or [stage.NAME] table{looks}"])
    for key in data:
        if key not in ("pack", "stage"):
            problems.append(f"{key}: unknown table{did_you_mean(key, ['pack', 'stage'])} (a recipe has [pack] and [stage.NAME] tables)")

    try:
        return _checked(data, problems, shown, Path(path), text)
    except RecipeError:
        raise
    except Exception as exc:  # a check of what the stages declare (stats, files, tiles) broke: this recipe's problem alone
        raise RecipeError([f"{shown}: {_unexpected(exc, 'the recipe')}"]) from None


def _unexpected(exc: Exception, what: str) -> str:
    """One line for an exception that checking `what` did not expect (a bug in a stage, or in
    what a stage made of a file): what broke and where, for the recipe's problems, so that the
    other recipes still load."""
    from pipeline.recipe.plugins import raised_where

    text = " ".join(str(exc).split())
    return f"unexpected error while checking {what}: {type(exc).__name__}{': ' + text if text else ''}{raised_where(exc)}"


def _checked(data: dict[str, Any], problems: list[str], shown: str, path: Path, text: str) -> Recipe:
    """The recipe `data`, every problem of it at once (after those of `problems`) a RecipeError."""
    pack = _load_pack(data.get("pack"), problems)
    before = len(problems)
    kinds = registry.KindTable(_plugin_kinds(_plugin_names(data, pack), path.parent, problems))
    # A plugin that did not load is the one problem to report, not each stage of its kinds.
    plugins_ok = len(problems) == before
    specs, wiring = _load_stages(data.get("stage"), problems, path.parent, kinds, plugins_ok)
    declared = data.get("stage") if isinstance(data.get("stage"), dict) else {}
    uses = {n: b.get("use") for n, b in declared.items() if isinstance(b, dict)}
    exporters = {n for n, u in uses.items() if isinstance(u, str) and u in kinds and registry.is_exporter(kinds[u])}
    ordered = _order(specs, problems) if _wiring_ok(wiring, declared, exporters, problems) else []
    # Unknown or missing kinds are reported already and might be exporters: only all-known, no-export.
    if declared and not exporters and all(isinstance(u, str) and u in kinds for u in uses.values()):
        problems.append("stage: no export stage, so the recipe would write nothing (add e.g. [stage.tmx] with use = \"export.tmx\")")
    _check_one_best(ordered, problems)
    if pack is not None and pack.distinct is not None and set(declared) <= {spec.name for spec in ordered}:
        _check_distinct(ordered, pack.distinct, problems)
    _bind_art(ordered, problems)
    if pack is not None:
        _check_outputs(ordered, pack, problems)
        _check_sheet(declared, uses, exporters, ordered, pack, problems)
        # Stats are checked against every stage's: with one missing (its plugin did not load, its
        # params are wrong), a name it adds would be reported as well, wrongly.
        if plugins_ok and set(declared) <= {spec.name for spec in ordered}:
            check_pack_stats(ordered, pack, problems)
            check_read_stats(ordered, problems)
        check_object_tiles(ordered, problems)
    if problems or pack is None:
        raise RecipeError(f"{shown}: {p}" for p in _shared(problems))
    return Recipe(path=shown, text=text, pack=pack, stages=tuple(ordered))


def _shared(problems: list[str]) -> list[str]:
    """Problems that several stages have alike, once: three exporters of one broken tileset
    are one line naming the others, as their warnings are."""
    parsed = [(line, re.match(r"stage\.([A-Za-z][\w-]*)\.(.+)", line, re.S)) for line in problems]
    stages: dict[str, list[str]] = {}
    for _, found in parsed:
        if found:
            stages.setdefault(found.group(2), []).append(found.group(1))
    out: list[str] = []
    for line, found in parsed:
        if found is None:
            out.append(line)
            continue
        names = list(dict.fromkeys(stages.pop(found.group(2), [])))
        if names:  # said once, by the first stage, naming the others
            also = f" (also {', '.join(f'stage.{n}' for n in names[1:])})" if len(names) > 1 else ""
            out.append(f"stage.{names[0]}.{found.group(2)}{also}")
    return out


def _check_sheet(
    declared: dict[str, Any], uses: dict[str, Any], exporters: set[str], specs: list[StageSpec], pack: PackConfig, problems: list[str]
) -> None:
    """`contact_sheet = "NAME"` names an export stage that writes previews."""
    name = pack.contact_sheet
    if not isinstance(name, str):
        return
    if name not in declared:
        hint = did_you_mean(name, sorted(exporters)) or f" (export stages: {', '.join(sorted(exporters)) or 'none'})"
        problems.append(f"pack.contact_sheet: no stage named {name!r}{hint}")
    elif name not in exporters and isinstance(uses.get(name), str):
        problems.append(f"pack.contact_sheet: stage.{name} ({uses[name]}) is not an export stage: name the exporter whose previews the sheet shows")
    else:
        spec = next((s for s in specs if s.name == name), None)  # absent: its own keys are wrong, and reported
        if spec is not None and cast(Exporter, spec.params).preview_file("map") is None:
            problems.append(f"pack.contact_sheet: stage.{name} writes no previews (preview = false, or a kind without them)")


def _load_pack(table: Any, problems: list[str]) -> PackConfig | None:
    if table is None:
        problems.append("pack: missing [pack] table (name, seed, maps)")
        return None
    if not isinstance(table, dict):
        problems.append("pack: must be a table")
        return None
    return _validate(PackConfig, table, "pack", problems)


def plugin_kinds_of(targets: list[Path]) -> dict[str, type[StageParams]]:
    """The stage kinds that the plugin files of the recipes under `targets` define (for
    `pcg stages` and `pcg schema`), without validating the rest of those recipes."""
    found: dict[str, type[StageParams]] = {}
    for path in find_recipes(targets):
        try:
            data = tomli.loads(read_regular(path).decode("utf-8-sig"))
        except (OSError, UnicodeDecodeError, tomli.TOMLDecodeError) as exc:
            raise RecipeError([f"{path}: cannot read recipe ({exc})"]) from None
        problems: list[str] = []
        for kind, cls in _plugin_kinds(_plugin_names(data, None), path.parent, problems).items():
            if kind in found and found[kind] is not cls:
                other = found[kind].defined_in
                problems.append(f"pack.plugins: stage kind {kind!r} is also defined, differently, by {other.name if other else '?'} of another recipe")
            found[kind] = cls
        if problems:
            raise RecipeError(f"{path}: {p}" for p in problems)
    return dict(sorted(found.items()))


def _plugin_names(data: dict[str, Any], pack: PackConfig | None) -> tuple[str, ...]:
    """The plugin files to load; also when another [pack] key is wrong (reported already), so
    that the recipe's own stage kinds are not reported unknown besides."""
    if pack is not None:
        return pack.plugins
    raw = data.get("pack", {}).get("plugins") if isinstance(data.get("pack"), dict) else None
    return tuple(raw) if isinstance(raw, list) and all(isinstance(n, str) for n in raw) else ()


def _plugin_kinds(names: tuple[str, ...], recipe_dir: Path, problems: list[str]) -> dict[str, type[StageParams]]:
    """The stage kinds of the recipe's plugin files; two files defining one kind is an error."""
    from pipeline.recipe.plugins import PluginError, load_file

    found: dict[str, type[StageParams]] = {}
    owner: dict[str, str] = {}
    loaded: set[str] = set()
    for name in names:
        if os.path.normpath(name) in loaded:
            continue  # listed twice: [pack]'s check says so; loaded once, it clashes with nothing
        loaded.add(os.path.normpath(name))
        try:
            plugin_kinds = load_file(recipe_dir / name, name)
        except PluginError as exc:
            problems.append(f"pack.plugins: {exc}")
            continue
        for kind, cls in plugin_kinds.items():
            if kind in owner:
                problems.append(f"pack.plugins: {name}: stage kind {kind!r} is also defined by {owner[kind]}")
                continue
            found[kind], owner[kind] = cls, name
    return found


def _validate(
    cls: type[M], data: dict[str, Any], key: str, problems: list[str], context: dict[str, Any] | None = None, also: tuple[str, ...] = ()
) -> M | None:
    """Validate strictly: TOML is typed, so "16" is not an integer and 1 is not true. In JSON mode
    strict validation still accepts arrays for tuples; TOML dates and times become strings.
    `context` reaches validators (stages that read files resolve them from `recipe_dir`)."""
    try:
        return cls.model_validate_json(json.dumps(data, default=lambda v: v.isoformat()), strict=True, context=context)
    except ValidationError as exc:
        problems.extend(validation_problems(exc, key, cls, also))
        return None


def _load_stages(
    table: Any, problems: list[str], recipe_dir: Path, all_kinds: Mapping[str, type[StageParams]], plugins_ok: bool = True
) -> tuple[list[StageSpec], dict[str, tuple[str, ...]]]:
    """The valid stages, and the inputs of every stage whose `input`/`inputs` parsed (valid or not,
    so that a wrong input name is reported together with a wrong parameter). Stages that ask for
    exporters of their own (a recording rewrite stage's GIF) bring them along as `NAME.SUFFIX`,
    unless the recipe has a stage of that kind reading them."""
    if table is None:
        problems.append("stage: no stages (add [stage.NAME] tables with `use = \"kind\"`)")
        return [], {}
    if not isinstance(table, dict):
        problems.append("stage: must be a table of [stage.NAME] tables")
        return [], {}
    specs: list[StageSpec] = []
    wiring: dict[str, tuple[str, ...]] = {}
    # (kind, input) of the recipe's own stages: a companion gives way to one the recipe writes
    # (an export.gif of a recording stage, with a speed and size of its own).
    written: set[tuple[str, str]] = set()
    for body in table.values():
        read = _inputs(body, "", []) if isinstance(body, dict) else None  # its problems are told below
        if read is not None and len(read) == 1 and isinstance(body.get("use"), str):
            written.add((body["use"], read[0]))
    for name, body in table.items():
        key = f"stage.{name}"
        if not _STAGE_NAME.match(name):
            problems.append(f"{key}: stage names use letters, digits, _ and - and start with a letter")
            continue
        if not isinstance(body, dict):
            problems.append(f"{key}: must be a table ([stage.{name}])")
            continue
        inputs = _inputs(body, key, problems)
        if inputs is not None:
            wiring[name] = inputs
        kind = body.get("use")
        if "use" not in body:
            problems.append(f"{key}.use: is required: the stage kind, e.g. \"maze.backtracker\" (see `pcg stages`)")
            continue
        if not isinstance(kind, str):
            problems.append(f"{key}.use: must be a string naming a stage kind (got {toml_text(kind)}; see `pcg stages`)")
            continue
        cls = all_kinds.get(kind)
        if cls is None:
            if plugins_ok:
                problems.append(f"{key}.use: {unknown_kind(kind, all_kinds, 'list its file in [pack] plugins')}")
            continue
        wrong = registry.arity_problem(cls, len(inputs)) if inputs is not None else None
        if wrong is not None:
            problems.append(f"{key}.input: {wrong}")
            inputs = None
        params = {k: v for k, v in body.items() if k not in RESERVED_KEYS}
        try:
            validated = _validate(cls, params, key, problems, {"recipe_dir": recipe_dir}, tuple(sorted(RESERVED_KEYS)))
            if validated is None or inputs is None:
                continue
            wrong = validated.input_problems(len(inputs))
            companions = validated.companions(name)
        except Exception as exc:  # a stage's own checks broke (a bug, a file it misread): this stage's problem, not every recipe's
            problems.append(f"{key}: {_unexpected(exc, 'the stage')}")
            continue
        if wrong:
            problems.extend(f"{key}.{line}" for line in wrong)
            continue
        specs.append(StageSpec(name=name, params=validated, inputs=inputs))
        for suffix, companion in companions:
            if (type(companion).kind, name) not in written:
                specs.append(StageSpec(name=f"{name}.{suffix}", params=companion, inputs=(name,)))
    return specs, wiring


def _wiring_ok(wiring: dict[str, tuple[str, ...]], declared: dict[str, Any], exporters: set[str], problems: list[str]) -> bool:
    """Every input names a declared stage that passes a Level on."""
    ok = True
    for name, inputs in wiring.items():
        for k, inp in enumerate(inputs):
            # The key as the recipe wrote it: `input`, or `inputs.1` for the second of a list.
            key = f"stage.{name}.inputs.{k}" if "inputs" in declared.get(name, {}) else f"stage.{name}.input"
            if inp not in declared:
                problems.append(f"{key}: no stage named {inp!r}{did_you_mean(inp, list(declared))}")
                ok = False
            elif inp in exporters:
                problems.append(f"{key}: {inp!r} is an export stage; it writes files and has no Level to pass on")
                ok = False
    return ok


def _check_one_best(specs: list[StageSpec], problems: list[str]) -> None:
    """A map is made again as a whole, so one stage chooses among its attempts: a second
    `best` would never be asked."""
    choosers = [spec.name for spec in specs if spec.params.best_of() is not None]
    for name in choosers[1:]:
        problems.append(
            f"stage.{name}.best: stage.{choosers[0]} chooses the best of several attempts already, and a map is"
            " made again as a whole: one stage per recipe may (fold this test into its where)"
        )


def _check_distinct(specs: list[StageSpec], distinct: Distinct, problems: list[str]) -> None:
    """`distinct.stage` names a stage that makes maps, and no stage keeps the best of several
    attempts: that choice and standing apart would each pick the attempt."""
    names = [spec.name for spec in specs if not spec.is_exporter]
    if distinct.stage is not None and distinct.stage not in names:
        hint = did_you_mean(distinct.stage, names) or f" (stages that make maps: {', '.join(names) or 'none'})"
        problems.append(f"pack.distinct.stage: no stage named {distinct.stage!r} makes maps{hint}")
    for spec in specs:
        if spec.params.best_of() is not None:
            problems.append(
                f"stage.{spec.name}.best: pack.distinct picks each map's attempt already (the first that passes and stands"
                " apart from the maps before it); keep one of the two"
            )


def _bind_art(specs: list[StageSpec], problems: list[str]) -> None:
    """Tell each exporter that draws tiles the tilesets of hand-drawn art the stages before it
    may put on its maps (`art_tilesets`): it writes their files into the pack, which are known
    before any map is made, and refuses art it cannot draw (`bind_art`)."""
    for spec in specs:
        bind = getattr(spec.params, "bind_art", None) if spec.is_exporter else None
        if bind is None:
            continue
        tilesets = [(s.name, ts) for s in upstream(specs, spec.name) if s.name != spec.name for ts in s.params.art_tilesets()]
        problems += [f"stage.{spec.name}.{line}" for line in bind(tilesets)]


def _check_outputs(specs: list[StageSpec], pack: PackConfig, problems: list[str]) -> None:
    """Two exporters must not write the same file (one would overwrite the other), except the
    files every map shares, such as a tileset, which several exporters may write alike."""
    writers: dict[str, str] = {}
    shared: set[str] = set()
    variants: dict[str, str] = {}  # how the first writer of a shared file shapes its bytes
    for spec in specs:
        if not spec.is_exporter:
            continue
        clashes: dict[str, list[str]] = {}
        mine = set(spec.params.shared_outputs()) | set(spec.params.shared_pack_outputs())  # type: ignore[attr-defined]
        # A pack file (an LDtk project, a Tiled world) is one exporter's alone, as a map's files
        # are, unless made from every map of its folder whoever wrote them (a Tiled project).
        for path in [*spec.params.outputs(pack.stem(0)), *spec.params.pack_outputs()]:  # type: ignore[attr-defined]
            other = writers.setdefault(path, spec.name)
            if other != spec.name and not (path in mine and path in shared):
                clashes.setdefault(other, []).append(path)
            elif path in mine:
                variant = spec.params.shared_variant(path)  # type: ignore[attr-defined]
                first = variants.setdefault(path, variant)
                if first != variant:
                    why = "; ".join(v for v in (first and f"stage.{other}: {first}", variant and f"stage.{spec.name}: {variant}") if v)
                    problems.append(
                        f"stage.{spec.name}: writes {path} unlike stage.{other}, which writes it too ({why}):"
                        " give one of them a tileset of its own with tileset_name"
                    )
        shared |= mine
        for other, paths in clashes.items():
            problems.append(
                f"stage.{spec.name}: writes {', '.join(paths)}, which stage.{other} also writes"
                " (give one of them another `dir` or file name)"
            )


def _inputs(body: dict[str, Any], key: str, problems: list[str]) -> tuple[str, ...] | None:
    if "input" in body and "inputs" in body:
        problems.append(f"{key}: give either input or inputs, not both")
        return None
    if "input" in body:
        value = body["input"]
        if not isinstance(value, str):
            problems.append(f"{key}.input: must be the name of another stage (got {toml_text(value)})")
            return None
        return (value,)
    value = body.get("inputs", [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(f"{key}.inputs: must be a list of stage names (got {toml_text(value)})")
        return None
    return tuple(value)


def _order(specs: list[StageSpec], problems: list[str]) -> list[StageSpec]:
    """Topological order (recipe order among independent stages); reports cycles by name."""
    by_name = {s.name: s for s in specs}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    order: list[StageSpec] = []
    path: list[str] = []

    def visit(name: str) -> bool:
        if state.get(name) == 2:
            return True
        if state.get(name) == 1:
            cycle = path[path.index(name):] + [name]
            problems.append("stage: cycle " + " -> ".join(f"stage.{n}" for n in cycle))
            return False
        state[name] = 1
        path.append(name)
        for inp in by_name[name].inputs:
            # An input that failed validation was reported already; order around it.
            if inp in by_name and not visit(inp):
                return False
        path.pop()
        state[name] = 2
        order.append(by_name[name])
        return True

    for spec in specs:
        if not visit(spec.name):
            return []
    return order
