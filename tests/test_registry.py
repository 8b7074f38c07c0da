"""The registry is the catalogue: every module that defines a stage is registered, and every
registered kind is documented and constructible as `pcg stages` shows it."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import ROOT
from pipeline import registry


def test_the_table_of_built_in_kinds_names_each_kind_and_its_module() -> None:
    """Every `@stage` line of pipeline/stages is in the table, with the module that has it; and a
    recipe's lookup imports that module alone."""
    found = {}
    for path in sorted((ROOT / "pipeline" / "stages").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for kind in re.findall(r'^@stage\("([^"]+)"', path.read_text(), re.M):
            found[kind] = module
    assert found == registry.BUILTIN_KINDS, "registry.BUILTIN_KINDS must list every kind with its module"
    code = (
        "import sys; from pipeline import registry; cls = registry.lookup('maze.wilson');"
        "print(cls.kind, sorted(m for m in sys.modules if m.startswith('pipeline.stages.') and m.count('.') == 3))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    # The module and the generators' shared base modules, no other stage.
    assert proc.stdout.split(" ", 1)[0] == "maze.wilson"
    assert "pipeline.stages.maze.backtracker" not in proc.stdout and "pipeline.stages.maze.wilson" in proc.stdout


def test_every_kind_is_documented_and_its_module_registered() -> None:
    for kind, cls in registry.kinds().items():
        if kind.startswith("test."):
            continue  # registered by other tests for their own use
        assert cls.__module__ in registry.STAGE_MODULES, kind
        assert cls.__doc__ and cls.__doc__.strip(), kind


def test_listing_the_stage_kinds_imports_no_heavy_library() -> None:
    """Every command imports every stage module (to validate recipes, to list kinds): scipy,
    numba and Dask are imported where a stage runs, or they cost each `pcg` call a second."""
    code = "import sys; from pipeline import registry; registry.kinds(); print(' '.join(m for m in ('scipy', 'numba', 'dask', 'distributed') if m in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert proc.stdout.strip() == ""
