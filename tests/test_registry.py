"""The registry is the catalogue: every module that defines a stage is registered, and every
registered kind is documented and constructible as `pcg stages` shows it."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import ROOT
from pipeline import registry


def test_every_module_with_a_stage_is_registered() -> None:
    defining = sorted(
        ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for path in (ROOT / "pipeline" / "stages").rglob("*.py")
        if re.search(r"^@stage\(", path.read_text(), re.M)
    )
    missing = [m for m in defining if m not in registry.STAGE_MODULES]
    assert not missing, f"add these to registry.STAGE_MODULES: {missing}"


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
