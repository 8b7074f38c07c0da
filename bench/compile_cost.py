"""What a first build spends compiling kernels: `python -m bench.compile_cost [recipe] [--top N]`.

Builds every example recipe in one process (`-j 1`) into a scratch folder with an empty numba
cache, and prints the compile seconds of each compiled function (ours and numba's own
implementations of the numpy and builtin calls they make), exclusive of the functions it compiled
on the way (a kernel's helpers are listed on their own rows). Seconds are CPU time of the
compiling thread, which a busy host disturbs less than the clock. About 30 s, so not part of
`python -m bench`.
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", nargs="?", default="recipes/", help="what to build: recipes/ (default) or one recipe, e.g. recipes/snake.toml")
    parser.add_argument("--top", type=int, default=40, help="rows of the table (default 40)")
    parser.add_argument("--signatures", action="store_true", help="list the argument types of functions compiled more than once")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="pcg-compile-cost-") as scratch:
        project = Path(scratch) / "project"
        project.mkdir()
        for folder in ("recipes", "tilesets"):
            shutil.copytree(ROOT / folder, project / folder)
        # Set before numba is imported: it reads the variable once.
        os.environ["NUMBA_CACHE_DIR"] = str(Path(scratch) / "numba")
        os.chdir(project)
        report(build(args.target), args.top, args.signatures)


def _listener() -> Any:
    """A numba event listener (a subclass of numba's class, so built after numba is imported)
    timing compiles exclusive of the compiles nested in them."""
    from numba.core import event

    class Compiles(_Compiles, event.Listener):
        pass

    return Compiles()


class _Compiles:
    def __init__(self) -> None:
        self.seconds: collections.Counter[str] = collections.Counter()
        self.signatures: collections.Counter[str] = collections.Counter()
        self.llvm_lock = 0.0
        self.args: collections.defaultdict[str, list[str]] = collections.defaultdict(list)
        self.within: dict[str, str] = {}  # function: the function whose compile first needed it
        self._stack: list[list[Any]] = []  # [start, nested seconds, name]
        self._lock_start = 0.0

    def on_start(self, ev) -> None:  # type: ignore[no-untyped-def]
        if ev.kind == "numba:compile":
            self._stack.append([time.thread_time(), 0.0, _name(ev)])
        else:
            self._lock_start = time.thread_time()

    def on_end(self, ev) -> None:  # type: ignore[no-untyped-def]
        now = time.thread_time()
        if ev.kind != "numba:compile":
            self.llvm_lock += now - self._lock_start
            return
        start, nested, name = self._stack.pop()
        spent = now - start
        if self._stack:
            self._stack[-1][1] += spent
            self.within.setdefault(name, self._stack[-1][2])
        self.seconds[name] += spent - nested
        caller = f"  <- {self._stack[-1][2]}" if self._stack else ""
        self.args[name].append(", ".join(str(a) for a in ev.data["args"]) + caller)
        self.signatures[name] += 1


def _name(ev: Any) -> str:
    return str(ev.data["dispatcher"].py_func.__qualname__.replace(".<locals>", ""))


def build(target: str) -> tuple[_Compiles, float, float]:
    from numba.core import event
    from typer.testing import CliRunner

    from pipeline.commands.app import app

    compiles = _listener()
    event.register("numba:compile", compiles)
    event.register("numba:llvm_lock", compiles)
    start, cpu = time.perf_counter(), time.process_time()
    result = CliRunner().invoke(app, ["build", target, "-q", "-j", "1"])
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    if result.exit_code != 0:
        sys.exit(f"build failed:\n{result.output}")
    return compiles, wall, cpu


def report(measured: tuple[_Compiles, float, float], top: int, signatures: bool) -> None:
    compiles, wall, cpu = measured
    total = sum(compiles.seconds.values())
    print(f"{'seconds':>8} {'sigs':>4}  function (exclusive of the functions it compiled)  [first compiled for]")
    for name, seconds in compiles.seconds.most_common(top):
        within = f"  [{compiles.within[name]}]" if name in compiles.within else ""
        print(f"{seconds:8.2f} {compiles.signatures[name]:4d}  {name}{within}")
    rest = compiles.seconds.most_common()[top:]
    if rest:
        print(f"{sum(s for _, s in rest):8.2f} {sum(compiles.signatures[n] for n, _ in rest):4d}  ({len(rest)} more)")
    print(f"\ncompiling {total:.1f} s ({sum(compiles.signatures.values())} signatures), of it in LLVM {compiles.llvm_lock:.1f} s")
    print(f"build, cold cache, -j 1: {wall:.1f} s ({cpu:.1f} s of CPU)")
    if signatures:
        # A function compiled for several argument types: often one call site passes an int32
        # array, or a read-only or non-contiguous one, where another passes int64 or C order.
        for name, seen in sorted(compiles.args.items()):
            if len(seen) > 1:
                print(f"\n{name}:")
                for args in seen:
                    print(f"  ({args})")


if __name__ == "__main__":
    main()
