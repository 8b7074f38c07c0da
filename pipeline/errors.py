"""User-facing errors: one line per problem, naming the file and the recipe key."""

from __future__ import annotations

import difflib
import errno
from typing import Any, Iterable

from pydantic import ValidationError


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


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    match = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {match[0]!r}?)" if match else ""


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        text = repr(value)
        return text if len(text) <= 40 else text[:37] + "..."
    return str(value)


def _readable(err: dict[str, Any], field_names: Iterable[str]) -> str:
    """Turn one pydantic error into the short phrase a recipe author needs, quoting the value
    given once: a validator's own message may quote it already."""
    phrase = _phrase(err, field_names)
    if err["type"] in ("missing", "extra_forbidden") or "input" not in err or "(got " in phrase:
        return phrase
    return f"{phrase} (got {_shown(err['input'])})"


def _phrase(err: dict[str, Any], field_names: Iterable[str]) -> str:
    kind = err["type"]
    ctx = err.get("ctx", {})
    if kind == "missing":
        return "is required"
    if kind == "extra_forbidden":
        name = str(err["loc"][-1])
        hint = did_you_mean(name, field_names)
        return f"unknown parameter{hint or ' (valid: ' + ', '.join(field_names) + ')'}"
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        op = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}[kind]
        return f"must be {op} {next(iter(ctx.values()))}"
    simple = {
        "int_type": "must be an integer", "int_parsing": "must be an integer", "int_from_float": "must be an integer",
        "float_type": "must be a number", "float_parsing": "must be a number",
        "bool_type": "must be true or false", "bool_parsing": "must be true or false",
        "string_type": "must be a string", "tuple_type": "must be a list", "list_type": "must be a list",
    }
    if kind in simple:
        return simple[kind]
    if kind == "literal_error":
        return f"must be one of {ctx.get('expected')}"
    if kind in ("too_short", "too_long"):
        return f"must have {'at least' if kind == 'too_short' else 'at most'} {ctx.get('min_length', ctx.get('max_length'))} items"
    if kind == "string_pattern_mismatch":
        return f"must match {ctx.get('pattern')}"
    if kind == "value_error":
        return str(ctx.get("error", err["msg"]))
    msg = err["msg"]
    return f"{msg[0].lower()}{msg[1:]}"


def validation_problems(exc: ValidationError, prefix: str, field_names: Iterable[str]) -> list[str]:
    """`prefix.key: phrase` for every error in a pydantic ValidationError."""
    names = list(field_names)
    problems = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        key = f"{prefix}.{loc}" if loc else prefix
        cause = err.get("ctx", {}).get("error")
        if isinstance(cause, KeyedError):
            problems.append(f"{key}.{cause.key}: {cause.message}")
            continue
        problems.append(f"{key}: {_readable(err, names)}")
    return problems
