"""How every command speaks to the user when things go wrong: errors and warnings on standard
error, one line each, and `user_errors`, which turns a PipelineError, an OSError, Ctrl+C or
SIGTERM into those lines and an exit status instead of a traceback."""

from __future__ import annotations

import functools
import sys
from typing import TYPE_CHECKING, Callable, TypeVar

import typer

if TYPE_CHECKING:
    from rich.console import Console

F = TypeVar("F", bound=Callable[..., object])


def console(stderr: bool = False) -> "Console":
    from pipeline.output import console as made

    return made(stderr)


def fail(problems: list[str]) -> None:
    from rich.markup import escape

    err = console(stderr=True)
    for line in problems:
        # Messages quote recipes ("[stage.maze]"): escape them so rich shows them, not reads them.
        err.print(f"[red]error:[/red] {escape(line)}", soft_wrap=True)


def warn(lines: list[str]) -> None:
    from rich.markup import escape

    for line in lines:
        console(stderr=True).print(f"[yellow]warning:[/yellow] {escape(line)}", soft_wrap=True)


class Terminated(KeyboardInterrupt):
    """SIGTERM (a CI job cancelled, `kill`), handled as Ctrl+C is: the workers are stopped and
    what the build had not finished is cleaned up, rather than the process vanishing at once."""


def terminate(signum: int, frame: object) -> None:
    raise Terminated()


def user_errors(fn: F) -> F:
    """Report PipelineErrors as plain lines and exit 1: users see what to fix, not a traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        from pipeline.errors import PipelineError

        try:
            return fn(*args, **kwargs)
        except PipelineError as exc:
            fail(exc.problems)
            raise typer.Exit(1) from None
        except OSError as exc:  # read-only folders, a full disk, permissions: what, where, no traceback
            from pipeline.errors import os_error_line

            if isinstance(exc, BrokenPipeError) and _stdout_reader_gone():  # `pcg list | head -1`, not a worker's pipe
                from pipeline.output import leave_on_broken_pipe

                leave_on_broken_pipe()

            fail([os_error_line(exc)])
            raise typer.Exit(1) from None
        except Terminated:
            console(stderr=True).print("terminated")
            raise typer.Exit(143) from None
        except KeyboardInterrupt:
            console(stderr=True).print("interrupted")
            raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]


def _stdout_reader_gone() -> bool:
    """Whether standard output is a pipe whose reader went away (`| head`), rather than a broken
    pipe of something else the command used."""
    import os
    import select
    import stat

    try:
        fd = sys.stdout.fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        if not hasattr(select, "poll"):  # no poll (Windows): a pipe, and it broke
            return True
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError):
        return False
