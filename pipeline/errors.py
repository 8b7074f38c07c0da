"""User-facing errors: one line per problem, naming the file and the recipe key."""

from __future__ import annotations

import difflib
import errno
import re
import typing
from typing import Any, Iterable

from pydantic import BaseModel, ValidationError

from pipeline.output import counted


class PipelineError(Exception):
    """An error the user can fix; the CLI prints its lines without a traceback."""

    def __init__(self, problems: Iterable[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


class RecipeError(PipelineError):
    """One or more problems in a recipe file."""


class Rejected(PipelineError):
    """A `filter` stage turned a map down: the build makes it again from the next attempt's
    seeds, up to `attempts` in all."""

    def __init__(self, message: str, attempts: int, values: dict[str, Any] | None = None):
        super().__init__([message])
        self.attempts = attempts
        self.values = values or {}  # what the test looked at, for the report when every attempt fails
        self.stage = ""  # set by the worker


class KeyedError(ValueError):
    """A validator's error about a place inside a parameter, such as `program.markov[1].one`:
    reported under that key, without echoing the whole parameter back."""

    def __init__(self, key: str, message: str):
        self.key = key
        self.message = message
        super().__init__(f"{key}: {message}")


# What a user can do about the file-system failures a build meets.
_OS_HINTS = {
    errno.ENOSPC: "the disk is full: free space and build again",
    errno.EDQUOT: "the disk quota is used up: free space and build again",
    errno.EROFS: "the file system is read-only: pass another --out (or --cache)",
    errno.EACCES: "permission denied: check the folder's owner and mode, or pass another --out",
    errno.EPERM: "not permitted: check the folder's owner and mode, or pass another --out",
}


def os_error_line(exc: OSError) -> str:
    """One line for a failed file operation: which file, what happened, what to do."""
    where = exc.filename if exc.filename is not None else "a file"
    what = _OS_HINTS.get(exc.errno or 0) or (exc.strerror or str(exc))
    return f"{where}: {what}"


def image_error_text(exc: Exception) -> str:
    """What went wrong reading an image, without Pillow's `cannot identify image file
    <_io.BytesIO object at 0x...>` (the bytes were read into memory first)."""
    if type(exc).__name__ == "UnidentifiedImageError":
        return "not a PNG or any other image Pillow reads"
    return str(exc)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    match = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {match[0]!r}?)" if match else ""


def toml_text(value: Any) -> str:
    """A value as a recipe writes it, for messages (`true`, not Python's `True`), cut when long."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        text = repr(value)
        return text if len(text) <= 40 else text[:37] + "..."
    return str(value)


def _readable(err: dict[str, Any], field_names: Iterable[str], also: tuple[str, ...] = ()) -> str:
    """Turn one pydantic error into the short phrase a recipe author needs, quoting the value
    given once: a validator's own message may quote it already."""
    phrase = _phrase(err, field_names, also)
    # A check of several keys together has the whole table as its input: the message names them.
    if err["type"] in ("missing", "extra_forbidden") or "(got " in phrase or not err.get("loc"):
        return phrase
    return f"{phrase}{_got(err)}"


def _phrase(err: dict[str, Any], field_names: Iterable[str], also: tuple[str, ...] = ()) -> str:
    kind = err["type"]
    ctx = err.get("ctx", {})
    if kind == "missing":
        return "is required"
    if kind == "extra_forbidden":
        name = str(err["loc"][-1])
        field_names = list(field_names)
        hint = did_you_mean(name, [*field_names, *also])
        return f"unknown parameter{hint or ' (valid: ' + ', '.join(field_names) + ')'}"
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        op = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}[kind]
        return f"must be {op} {next(iter(ctx.values()))}"
    simple = {
        "int_type": "must be an integer", "int_parsing": "must be an integer", "int_from_float": "must be an integer",
        "float_type": "must be a number", "float_parsing": "must be a number",
        "bool_type": "must be true or false", "bool_parsing": "must be true or false",
        "string_type": "must be a string", "tuple_type": "must be a list", "list_type": "must be a list",
        "dict_type": "must be a table", "model_type": "must be a table",
    }
    if kind in simple:
        return simple[kind]
    if kind == "literal_error":
        expected = str(ctx.get("expected"))
        given = err.get("input")
        hint = did_you_mean(given, re.findall(r"'([^']*)'", expected)) if isinstance(given, str) else ""
        return f"must be one of {expected}{hint}"
    if kind in ("too_short", "too_long"):
        return f"must have {'at least' if kind == 'too_short' else 'at most'} {counted(ctx.get('min_length', ctx.get('max_length')), 'item')}"
    if kind == "string_pattern_mismatch":
        return f"must match {ctx.get('pattern')}"
    if kind == "value_error":
        return str(ctx.get("error", err["msg"]))
    msg = err["msg"]
    return f"{msg[0].lower()}{msg[1:]}"


def validation_problems(exc: ValidationError, prefix: str, model: type[BaseModel], also: tuple[str, ...] = ()) -> list[str]:
    """`prefix.key: phrase` for every error in a pydantic ValidationError of `model`. A value that
    fits none of a union's types is one problem (`must be 'max' or 'min', a number, or a list`),
    not one per type, and an unknown key inside a table lists that table's keys. `also` are keys
    the table may hold besides the model's (a stage's `input`): a near miss of one is suggested."""
    problems: list[str] = []
    for loc, errs in _by_union(exc.errors()):
        key = ".".join([prefix, *loc] if prefix else loc) or prefix
        if len(errs) > 1:
            problems.append(f"{key}: must be {_either([_kind_of(e) for e in errs])}{_got(errs[0])}")
            continue
        err = errs[0]
        cause = err.get("ctx", {}).get("error")
        if isinstance(cause, KeyedError):  # a key inside the parameter, or ("") the parameter itself
            problems.append(f"{key}.{cause.key}: {cause.message}" if cause.key else f"{key}: {cause.message}")
            continue
        problems.append(f"{key}: {_readable(err, _field_names(model, err['loc']), also if len(err['loc']) == 1 else ())}")
    return list(dict.fromkeys(problems))


# pydantic names each member of a union in the error's location: `aim.float`, `aim.literal['max',
# 'min']`, `size.tuple[int, int]`, `x.function-after[check(), int]`.
_MEMBER = re.compile(r"^(?:int|float|bool|str|bytes|none|[a-z][a-z-]*\[.*\])$")


def _union_at(errors: list[Any]) -> list[int | None]:
    """For each error, where in its location a union member is named, if anywhere: a part that
    looks like a type, where errors with the same location before it name two members or more
    (so a table key that happens to read `int` or `set` is taken for the key it is)."""
    members: dict[tuple[Any, ...], set[str]] = {}
    for err in errors:
        loc = tuple(err["loc"])
        for i, part in enumerate(loc):
            if isinstance(part, str) and _MEMBER.match(part):
                members.setdefault(loc[:i], set()).add(part)
    found: list[int | None] = []
    for err in errors:
        loc = tuple(err["loc"])
        union = [i for i, part in enumerate(loc) if isinstance(part, str) and len(members.get(loc[:i], ())) > 1 and part in members[loc[:i]]]
        found.append(union[-1] if union else None)
    return found


def _by_union(errors: list[Any]) -> list[tuple[list[str], list[dict[str, Any]]]]:
    """The errors in their order, each with its location as a user writes it (union members left
    out). A union whose every member failed on the value itself comes as one group of errors;
    where a member got further into the value (a list of the right length with a wrong item), its
    errors alone are kept, since that is the type the user meant."""
    found: list[tuple[int, tuple[Any, ...], dict[str, Any]]] = []  # (position, location, error)
    unions: dict[tuple[Any, ...], tuple[int, list[dict[str, Any]]]] = {}  # location -> (position, member errors)
    for n, (err, at) in enumerate(zip(errors, _union_at(errors))):
        loc = tuple(err["loc"])
        if at is None:
            found.append((n, loc, err))
        elif loc[at + 1 :] or err["type"] == "value_error":
            found.append((n, loc[:at] + loc[at + 1 :], {**err, "loc": loc[:at] + loc[at + 1 :]}))
        else:
            unions.setdefault(loc[:at], (n, []))[1].append(err)
    for head, (n, errs) in unions.items():
        if not any(loc[: len(head)] == head for _, loc, _ in found):
            found.append((n, head, {"group": errs}))
    found.sort(key=lambda item: item[0])
    return [([str(p) for p in loc], err.get("group") or [err]) for _, loc, err in found]


def _kind_of(err: dict[str, Any]) -> str:
    """What one member of a union wanted, as a phrase after `must be`."""
    if err["type"] == "literal_error":
        return str(err.get("ctx", {}).get("expected", "one of the names"))
    return _phrase(err, ()).removeprefix("must be ")


def _either(kinds: list[str]) -> str:
    kinds = list(dict.fromkeys(kinds))
    return kinds[0] if len(kinds) == 1 else ", ".join(kinds[:-1]) + ", or " + kinds[-1]


def _got(err: dict[str, Any]) -> str:
    return f" (got {toml_text(err['input'])})" if "input" in err else ""


def _field_names(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The keys of the table that holds `loc`'s last key: the model's own, or those of the model
    a nested table is validated as (`best = { ... }` of a filter)."""
    current: Any = model
    for part in loc[:-1]:
        fields = getattr(current, "model_fields", None)
        if not fields or part not in fields:
            break
        nested = _model_in(fields[part].annotation)
        if nested is None:
            break
        current = nested
    return list(current.model_fields)


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def unknown_kind(kind: str, kinds: Iterable[str], plugins: str) -> str:
    """"unknown stage kind" and the likeliest help: the kind meant, by its spelling or else by
    the words of its name (`cave.cellular` is `dungeon.cellular_caves`); for a family none of
    `kinds` has, how a plugin's kinds are found (`plugins` says it where the user is)."""
    choices = list(kinds)
    families = {k.split(".", 1)[0] for k in choices}
    hint = did_you_mean(kind, choices) if difflib.get_close_matches(kind, choices, n=1, cutoff=0.8) else ""
    if not hint:
        # A family of ours says only where to look (`maze.foo`): the words after it say what.
        head, _, _ = kind.partition(".")
        words = _name_words(kind) | (set() if head in families else _name_words(head))
        shared = {k: len(words & _name_words(k)) for k in choices}
        best = max(shared, key=lambda k: shared[k], default=None)
        hint = f" (did you mean {best!r}?)" if best is not None and shared[best] else did_you_mean(kind, choices)
    if not hint and kind.split(".", 1)[0] not in families:
        hint = f" (a plugin's? {plugins})"
    return f"unknown stage kind {kind!r}{hint or ' (run `pcg stages` for the list)'}"


def _name_words(kind: str) -> set[str]:
    """The words of a kind's name after its family, singular: `dungeon.cellular_caves` ->
    {cellular, cave}."""
    return {w.removesuffix("s") for w in re.split(r"[._]", kind.split(".", 1)[-1].lower()) if len(w) > 2}
