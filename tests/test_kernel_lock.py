"""Worker processes that reach a kernel no process has compiled yet compile it once between them:
the others wait and load it from numba's disk cache (a cold `pcg build -j N` would otherwise
compile every kernel N times over)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# A kernel that calls another (numba compiles the callee while it types the caller), called with
# two argument types (two signatures).
KERNELS = """\
import numpy as np
from pipeline.jit import compiled


@compiled
def inner(a):
    t = 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            t += a[i, j] * (i - j) % 7
    return t


@compiled
def outer(a):
    s = 0.0
    for k in range(3):
        s += inner(a) + np.sqrt(np.abs(a)).sum() * k
    return s
"""

# Each process gets both kernels ready to compile, says so, waits for the word, then calls.
CHILD = """\
import json, sys, time
from pathlib import Path
import numpy as np
sys.path.insert(0, sys.argv[1])
import kernels
folder, me = Path(sys.argv[1]), sys.argv[2]
dispatchers = {"inner": kernels.inner.materialize(), "outer": kernels.outer.materialize()}
(folder / f"ready-{me}").touch()
while not (folder / "go").exists():
    time.sleep(0.005)
kernels.outer(np.ones((3, 3)))
kernels.outer(np.ones((3, 3), dtype=np.int64))
print(json.dumps({name: sum(d.stats.cache_misses.values()) for name, d in dispatchers.items()}))
"""


def test_two_processes_compile_each_kernel_and_signature_once(tmp_path: Path) -> None:
    (tmp_path / "kernels.py").write_text(KERNELS)
    (tmp_path / "child.py").write_text(CHILD)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "PYTHONPATH": str(ROOT)}
    children = [
        subprocess.Popen([sys.executable, str(tmp_path / "child.py"), str(tmp_path), str(i)], env=env, stdout=subprocess.PIPE, text=True)
        for i in range(2)
    ]
    deadline = time.monotonic() + 120
    while not all((tmp_path / f"ready-{i}").exists() for i in range(2)):
        assert time.monotonic() < deadline and all(c.poll() is None for c in children), "a child did not get ready"
        time.sleep(0.01)
    (tmp_path / "go").touch()  # both call at the same moment: without the lock, both compile
    compiles = {"inner": 0, "outer": 0}
    for child in children:
        out, _ = child.communicate(timeout=300)
        assert child.returncode == 0
        for name, misses in json.loads(out).items():
            compiles[name] += misses
    # Two signatures each, compiled once between the two processes (misses: numba compiled).
    assert compiles == {"inner": 2, "outer": 2}
