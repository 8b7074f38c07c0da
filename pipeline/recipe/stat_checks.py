"""Stat names checked as a recipe loads: what a filter reads (`where`, `best.stat`), what the
pack sorts by (`order_by`) and what the contact sheet captions show (`contact_stats`). A misspelt
name would otherwise fail every map of the build, or sort nothing and caption nothing, silently.

A stat is named plainly (`dead_ends`) or after the stage whose Level holds it
(`caves.region_largest`; a name is read so when the part before its first dot names a stage):
the manifest records the stats of every stage that feeds an exporter.
A plain name that two chains into different exporters each write, with values that may differ,
is refused for `order_by`: which one sorts the pack would be an accident of the recipe's order.

Each check needs the stages to declare the stats they add (`StageParams.added_stats`); where a
stage on the way declares nothing (a plugin may not), any name may be right, and it is not
checked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Collection, Sequence

from pipeline.errors import did_you_mean
from pipeline.recipe.model import authored_reaching

if TYPE_CHECKING:
    from pipeline.recipe.model import PackConfig, StageSpec


def split_stat(name: str, stages: Collection[str]) -> tuple[str | None, str]:
    """(stage, stat) of `stage.stat`, where `stage` is one of `stages` (stage names have no
    dots, stat names may: `items_gem.red`); (None, name) of a plain name."""
    stage, dot, stat = name.partition(".")
    return (stage, stat) if dot and stage in stages else (None, name)


def stats_reaching(specs: Sequence[StageSpec], names: Sequence[str]) -> set[str] | None:
    """The stats the Levels of stages `names` hold: those each adds, and those of its inputs
    where it passes them on. None when a stage on the way does not declare what it adds."""
    by_name = {spec.name: spec for spec in specs}
    found: set[str] = set()
    todo, seen = list(names), set()
    while todo:
        spec = by_name[todo.pop()]
        if spec.name in seen:
            continue
        seen.add(spec.name)
        stats = spec.params.added_stats()
        if stats is None:
            return None
        found.update(stats)
        if spec.params.passes_stats:
            todo.extend(spec.inputs)
        else:
            found.update(authored_reaching(specs, spec.name, stats_only=True))
    return found


def _writers(specs: Sequence[StageSpec], name: str, stat: str) -> frozenset[str] | None:
    """The stage whose value of `stat` the Level of stage `name` holds: itself if it adds the
    stat, else that of the input it passes the stat on from. None: a stage on the way does not
    declare what it adds."""
    by_name = {spec.name: spec for spec in specs}
    spec = by_name[name]
    added = spec.params.added_stats()
    if added is None:
        return None
    if stat in added:
        return frozenset([name])
    if not spec.params.passes_stats and stat not in authored_reaching(specs, name, stats_only=True):
        return frozenset()
    # Of several inputs, the last that has the stat gives its value (`passes_stats`).
    for source in reversed(spec.inputs):
        writers = _writers(specs, source, stat)
        if writers is None or writers:
            return writers
    return frozenset()


def check_pack_stats(specs: Sequence[StageSpec], pack: PackConfig, problems: list[str]) -> None:
    """`order_by` and `contact_stats` name stats the manifest records: those of the stages that
    feed an exporter (a plain `order_by` stat, one only chain writes; a plain caption stat, one
    of the stage whose map the sheet shows)."""
    if not specs:
        return
    fed = list(dict.fromkeys(i for spec in specs if spec.is_exporter for i in spec.inputs))
    order_by = pack.order_by.lstrip("-") if pack.order_by else None
    if pack.order_by and order_by:
        problem = _stat_problem(specs, fed, fed, order_by, None) or _ambiguous(specs, fed, pack.order_by)
        if problem is not None:
            problems.append(f"pack.order_by: {problem}")
    shown = _sheet_stage(specs, pack.contact_sheet)
    for i, name in enumerate(pack.contact_stats or ()):
        if name == order_by:
            continue  # the sheet captions it as the pack was sorted by it
        plain = [shown] if shown is not None else []
        problem = _stat_problem(specs, fed, plain, name, f"stage.{shown}, whose maps the sheet shows")
        if problem is not None:
            problems.append(f"pack.contact_stats.{i}: {problem}")


def check_read_stats(specs: Sequence[StageSpec], problems: list[str]) -> None:
    """A property a stage reads (a filter's `where`, `best.stat`) is in the Level it is given: a
    misspelt name, or one a rule program in between did not pass on, would otherwise fail every
    map of the build, one attempt after another."""
    for spec in specs:
        reads = spec.params.read_stats()
        written = stats_reaching(specs, list(spec.inputs)) if reads else None
        if written is None:
            continue
        refs = set(authored_reaching(specs, spec.name)) - set(authored_reaching(specs, spec.name, stats_only=True))
        for name, key in sorted(reads.items()):
            if name in refs:
                problems.append(f"stage.{spec.name}.{key}: {name!r} is an object reference (it names an object of the map), not a stat to read")
            elif name not in written:
                known = ", ".join(sorted(written)) or "none"
                problems.append(f"stage.{spec.name}.{key}: its input has no property {name!r}{did_you_mean(name, sorted(written))} (it has: {known})")


def _stat_problem(specs: Sequence[StageSpec], fed: list[str], plain: list[str], name: str, where: str | None) -> str | None:
    """What is wrong with the recorded stat `name` (None: nothing): a `stage.stat` needs a stage
    that feeds an exporter and holds the stat; a plain name, one that stages `plain` hold (said
    to be in `where`, or in the recipe when None)."""
    stage, stat = split_stat(name, [spec.name for spec in specs])
    if stage is not None:
        if stage not in fed:
            spec = next(spec for spec in specs if spec.name == stage)
            if spec.is_exporter:
                return f"{name!r}: stage.{stage} is an exporter; name the stage it draws ({', '.join(spec.inputs)})"
            return (
                f"{name!r}: only the stats of the stages an exporter reads are recorded, and stage.{stage} is not one"
                f" (those are: {', '.join(fed)})"
            )
        plain, where = [stage], f"stage.{stage}"
    written = stats_reaching(specs, plain) if plain else None
    if written is None or stat in written:
        return None
    known = ", ".join(sorted(written)) or "none"
    _, dot, rest = stat.partition(".")
    # With a dot, the name may be a stage's stat with the stage misspelt (`cavez.regions`).
    hint = did_you_mean(stat, sorted(written) + ([f"{other}.{rest}" for other in fed] if dot else []))
    if where is None:
        return f"no stage writes the stat {stat!r}{hint} (stats of this recipe: {known})"
    return f"no stat {stat!r} in {where}{hint} (it has: {known})"


def _ambiguous(specs: Sequence[StageSpec], fed: list[str], order_by: str) -> str | None:
    """A plain `order_by` stat that exporters' inputs hold from different stages."""
    stage, stat = split_stat(order_by.lstrip("-"), [spec.name for spec in specs])
    if stage is not None:
        return None
    sources: dict[frozenset[str], str] = {}
    for name in fed:
        writers = _writers(specs, name, stat)
        if writers is None:
            return None
        if writers:
            sources.setdefault(writers, name)
    if len(sources) < 2:
        return None
    sign = "-" if order_by.startswith("-") else ""
    writers = " and ".join(f"stage.{w}" for w in sorted(set().union(*sources)))
    choices = " or ".join(f'"{sign}{name}.{stat}"' for name in sources.values())
    return f"the stat {stat!r} comes from {writers}, in different exporters' maps; say whose to sort by: {choices}"


def _sheet_stage(specs: Sequence[StageSpec], chosen: bool | str) -> str | None:
    """The stage whose maps the contact sheet shows: the input of the exporter `chosen` names,
    else of the first that draws a preview (as `contact_sheet.previews` picks)."""
    for spec in specs:
        if isinstance(chosen, str) and spec.name != chosen:
            continue
        if spec.is_exporter and spec.params.preview_file("map") is not None:  # type: ignore[attr-defined]
            return spec.inputs[0]
    return None
