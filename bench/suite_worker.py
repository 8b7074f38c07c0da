"""Times MarkovJunior suite models for bench/suite.py, in a process of its own so that the same
script can time another version of the engine (PYTHONPATH names the tree whose `pipeline` runs).

Says `ready` once its engine is loaded, then reads lines `NAME SIZE CAP REPEATS` and answers each with `SECONDS STEPS` (the fastest of the
repeats, one fixed seed) or `refused MESSAGE` when that engine cannot read the model."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.rewrite.program import run
from pipeline.rewrite.resources import ResourceFolder
from pipeline.rewrite.xml_form import load_model

try:
    from pipeline.rewrite.program_error import ProgramError
except ModuleNotFoundError:  # the baseline engine, before ProgramError had a module of its own
    from pipeline.rewrite.toml_form import ProgramError  # type: ignore[no-redef]

SEED = 1


def main(suite: Path) -> None:
    folder = ResourceFolder(suite, "resources")
    programs: dict[str, Any] = {}
    # Load the interpreter's kernels before saying so: the other engine's worker is timed
    # meanwhile, and must not share the two cores with this one's start.
    basic = load_model((suite / "models" / "Basic.xml").read_text())
    run(basic, np.zeros((8, 8), np.uint8), np.random.default_rng(SEED), 20)
    print("ready", flush=True)
    for line in sys.stdin:
        name, size, cap, repeats = line.split()
        n, steps = int(size), int(cap)
        if name not in programs:
            try:
                programs[name] = load_model((suite / "models" / f"{name}.xml").read_text(), folder.read)
            except ProgramError as exc:
                print(f"refused {exc}", flush=True)
                continue
            run(programs[name], np.zeros((n, n), np.uint8), np.random.default_rng(SEED), 20)  # compile / load the cache
        best, turns = float("inf"), 0
        for _ in range(int(repeats)):
            start = time.perf_counter()
            turns = run(programs[name], np.zeros((n, n), np.uint8), np.random.default_rng(SEED), steps).turns
            best = min(best, time.perf_counter() - start)
        print(f"{best} {turns}", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
