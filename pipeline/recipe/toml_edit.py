"""Set or remove one single-line key of one TOML table in place, keeping every other byte.

tomli only reads, and no TOML library we have round-trips comments and layout, so the edit is
textual: the table's header is found among the lines that start at the document's top level
(a prefix of the document that parses on its own), each key line of the table is read with tomli
alone, and the new line is written in the table's place. Whatever this cannot edit safely (a table
written inline, a value spread over several lines) is an EditError, never a guess; and the caller
checks the result parses to exactly the intended data (`check_edit`).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

import tomli

from pipeline.errors import PipelineError

_HEADER = re.compile(r"^[ \t]*\[")
_LINE = re.compile(r"[^\n]*\n|[^\n]+$")


class EditError(PipelineError):
    """A TOML file this module cannot edit in place without risking the user's text."""


@dataclass(frozen=True)
class _Table:
    header: int  # line index of `[a.b]`
    end: int  # line index of the next header (or the number of lines)


def _lines(text: str) -> list[str]:
    return _LINE.findall(text)


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _header_path(line: str) -> tuple[str, ...] | None:
    """`("a", "b")` for a `[a.b]` line (quoted keys and a comment allowed); None for `[[a]]`."""
    try:
        data: Any = tomli.loads(line)
    except tomli.TOMLDecodeError:
        return None
    path: list[str] = []
    while isinstance(data, dict) and len(data) == 1:
        key, data = next(iter(data.items()))
        path.append(key)
    return tuple(path) if isinstance(data, dict) and not data else None


def _tables(lines: list[str]) -> dict[tuple[str, ...], _Table]:
    """Every `[table]` header at the top level (a line starting with `[` inside a multi-line
    string or array is none: the text before it does not parse)."""
    starts: list[tuple[int, tuple[str, ...] | None]] = []
    for i, line in enumerate(lines):
        if not _HEADER.match(line):
            continue
        try:
            tomli.loads("".join(lines[:i]))
        except tomli.TOMLDecodeError:
            continue
        starts.append((i, _header_path(line)))
    found: dict[tuple[str, ...], _Table] = {}
    for n, (i, path) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
        if path is not None:
            found[path] = _Table(i, end)
    return found


def _is_content(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def _entries(lines: list[str], table: _Table, where: str) -> list[tuple[int, str]]:
    """(line index, key) of each key line of a table whose values are all single-line."""
    out = []
    for i in range(table.header + 1, table.end):
        if not _is_content(lines[i]):
            continue
        try:
            data = tomli.loads(lines[i])
        except tomli.TOMLDecodeError:
            raise EditError([f"{where}: line {i + 1} is not a whole `key = value` line; edit the table by hand"]) from None
        out.append((i, next(iter(data))))
    return out


def _comment(line: str) -> str:
    """The trailing `  # comment` of a key line whose value holds no strings (ints, inline tables of ints)."""
    body = line.rstrip("\r\n")
    at = body.find("#")
    if at < 0:
        return ""
    before = body[:at]
    return before[len(before.rstrip()):] + body[at:]


def _no_inline(text: str, table: tuple[str, ...], tables: dict[tuple[str, ...], _Table]) -> None:
    """A table defined without its own header (`seeds = { ... }` or `seeds.7 = ...` inside its
    parent) is the user's layout to keep: refuse rather than rewrite it."""
    if table in tables:
        return
    node: Any = tomli.loads(text)
    for part in table:
        if not isinstance(node, dict) or part not in node:
            return
        node = node[part]
    name = ".".join(table)
    raise EditError([f"{name} is written inside another table, not as a [{name}] table of its own; move it there (or edit it by hand)"])


def set_key(text: str, table: tuple[str, ...], key: str, value: str, parent: tuple[str, ...], order: Any = None) -> str:
    """`text` with `key = value` in `[table]`: the key's line replaced (its comment kept), or a
    new line (before the first key whose `order(key)` is greater, else after the last key), or
    a new table right after the body of `[parent]`. Keys are written bare (digits here)."""
    lines, nl = _lines(text), _newline(text)
    where = "[" + ".".join(table) + "]"
    tables = _tables(lines)
    entry = f"{key} = {value}"
    _no_inline(text, table, tables)
    if table not in tables:
        if parent not in tables:
            raise EditError([f"no [{'.'.join(parent)}] table header to add {where} after; edit the file by hand"])
        body = tables[parent]
        last = max([i for i in range(body.header, body.end) if i == body.header or _is_content(lines[i])])
        if not lines[last].endswith("\n"):
            lines[last] += nl
        lines[last + 1 : last + 1] = [nl, f"{where}{nl}", f"{entry}{nl}"]
        return "".join(lines)
    spans = _entries(lines, tables[table], where)
    mine = [i for i, k in spans if k == key]
    if mine:
        lines[mine[0]] = entry + _comment(lines[mine[0]]) + (nl if lines[mine[0]].endswith("\n") else "")
        for i in reversed(mine[1:]):
            del lines[i]
        return "".join(lines)
    later = [i for i, k in spans if order is not None and order(k) > order(key)]
    if later:
        at = later[0]
    else:
        at = spans[-1][0] + 1 if spans else tables[table].header + 1
        if not lines[at - 1].endswith("\n"):
            lines[at - 1] += nl
    lines.insert(at, f"{entry}{nl}")
    return "".join(lines)


def remove_key(text: str, table: tuple[str, ...], key: str) -> str:
    """`text` without `key` in `[table]`. A table left with no keys goes too (with the blank
    line before it), unless comments are about it (inside it, or just above its header): they
    stay, with the header."""
    lines = _lines(text)
    where = "[" + ".".join(table) + "]"
    tables = _tables(lines)
    _no_inline(text, table, tables)
    if table not in tables:
        return text
    t = tables[table]
    spans = _entries(lines, t, where)
    mine = [i for i, k in spans if k == key]
    if not mine:
        return text
    if len(mine) == len(spans):
        block = range(t.header, mine[-1] + 1)
        above = t.header > 0 and lines[t.header - 1].lstrip().startswith("#")  # a comment about the table
        commented = above or "#" in lines[t.header] or any(not _is_content(lines[i]) and lines[i].strip() for i in block)
        if not commented:
            start = t.header - 1 if t.header > 0 and not lines[t.header - 1].strip() else t.header
            del lines[start : mine[-1] + 1]
            return "".join(lines)
    for i in reversed(mine):
        del lines[i]
    return "".join(lines)


def check_edit(before: str, after: str, table: tuple[str, ...], key: str, value: Any) -> None:
    """Raise EditError unless `after` parses to `before`'s data with only `table.key` set to
    `value` (None: removed, and an emptied table may be gone)."""
    want = copy.deepcopy(tomli.loads(before))
    node = want
    for part in table:
        node = node.setdefault(part, {})
    if value is None:
        node.pop(key, None)
    else:
        node[key] = value
    try:
        got = tomli.loads(after)
    except tomli.TOMLDecodeError as exc:
        raise EditError([f"editing [{'.'.join(table)}] would break the TOML ({exc}); edit the file by hand"]) from None
    if value is None and not node:
        parent = want
        for part in table[:-1]:
            parent = parent[part]
        got_parent = got
        for part in table[:-1]:
            got_parent = got_parent.get(part, {})
        if table[-1] not in got_parent:
            del parent[table[-1]]
    if got != want:
        raise EditError([f"cannot edit [{'.'.join(table)}] in place safely (it is written in a form this edit does not handle); edit the file by hand"])
