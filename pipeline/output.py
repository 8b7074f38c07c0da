"""How the CLI prints for a person at a terminal and for a pipe or a log file.

At a terminal, tables are boxed and fit the window (rich wraps long cells). Anywhere else (CI
logs, `| less`, `> file`) no width is known and nothing must be cut: lines are as long as their
text, tables are plain columns (a header line, then rows, two spaces apart, no box-drawing
characters and no trailing spaces), and there is no colour."""

from __future__ import annotations

import functools
import os
import sys
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

# The width given to a console that is not a terminal: wide enough that rich never wraps, folds
# or cuts a cell ("dead…"); rich lays tables out to their content, not to this width.
UNBOUNDED = 1_000_000


# The exit status of a program stopped by SIGPIPE: `pcg list | head -1` ends as `git log | head -1` does.
BROKEN_PIPE_STATUS = 128 + 13


def leave_on_broken_pipe(fd: int | None = None) -> NoReturn:
    """The reader of standard output (or of `fd`) went away (`| head`): exit quietly, with
    nothing left for Python to flush into the closed pipe on the way out (a second error)."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno() if fd is None else fd)
    raise SystemExit(BROKEN_PIPE_STATUS)


def console(stderr: bool = False) -> "Console":
    cls = _console_class()
    probe = cls(stderr=stderr, highlight=False)
    if probe.is_terminal:
        return probe
    return cls(stderr=stderr, highlight=False, width=UNBOUNDED, no_color=True)


@functools.cache
def _console_class() -> type["Console"]:
    """rich's Console, ending quietly when its reader goes away (rich's own exits 1, as a
    failure would). Made on first use: importing rich costs every command that prints nothing."""
    from rich.console import Console

    class QuietConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            leave_on_broken_pipe(self.file.fileno())

    return QuietConsole


def table(con: "Console", title: str | None = None) -> "Table":
    """An empty table in the form `con` prints well: boxed at a terminal, plain columns elsewhere."""
    from rich.table import Table

    if con.is_terminal:
        return Table(title=title, title_justify="left")
    return Table(title=title, title_justify="left", box=None, pad_edge=False, show_edge=False, title_style="", header_style="")


def print_table(con: "Console", tab: "Table") -> None:
    """Print `tab`; off a terminal without the spaces rich pads every line with to the table's width."""
    if con.is_terminal:
        con.print(tab)
        return
    with con.capture() as captured:
        con.print(tab)
    for line in captured.get().splitlines():
        con.file.write(line.rstrip() + "\n")
    con.file.flush()


def counted(n: int, noun: str) -> str:
    """`1 map`, `3 maps`: a count with its noun, plural by English's plain rule."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def spans(indices: "list[int]") -> str:
    """Map indices as a person reads them: `0-5, 8, 10-11`."""
    runs: list[list[int]] = []
    for i in sorted(set(indices)):
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
