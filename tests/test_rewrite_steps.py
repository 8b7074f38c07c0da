"""Step counts against MarkovJunior itself: every model of its 2D suite whose count MarkovJunior
gives the same on five seeds (tests/data/markovjunior_steps.tsv says how that table was made)
takes exactly that many steps here too, on two seeds, and ends the same way (finished, or
stopped by its step cap)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from pipeline.rewrite.program import run
from pipeline.rewrite.resources import ResourceFolder
from pipeline.rewrite.xml_form import load_model
from test_rewrite_fields import SUITE

TABLE = Path(__file__).with_name("data") / "markovjunior_steps.tsv"


def reference() -> list[dict[str, str]]:
    lines = [line for line in TABLE.read_text().splitlines() if not line.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


FIXED = [row for row in reference() if row["fixed"] == "yes"]


def test_the_table_covers_the_suite() -> None:
    rows = reference()
    assert len(rows) == 115 and len({r["name"] + r["size"] for r in rows}) == 115
    # 11 models finish in a count of their own, 38 more always reach their cap first.
    assert sum(r["ended"] == "end" for r in FIXED) == 11 and len(FIXED) == 49


@pytest.mark.parametrize("row", FIXED, ids=[f"{r['name']}-{r['size']}" for r in FIXED])
def test_fixed_step_counts_are_markovjuniors(row: dict[str, str]) -> None:
    name, size, cap = row["name"], int(row["size"]), int(row["cap"])
    want = int(row["counts"].split(",")[0])
    program = load_model((SUITE / "models" / f"{name}.xml").read_text(), ResourceFolder(SUITE, "resources").read)
    for seed in (1, 2):
        result = run(program, np.zeros((size, size), np.uint8), np.random.default_rng(seed), cap if cap > 0 else 10**9)
        assert result.turns == want, (name, seed)
        assert result.finished == (row["ended"] == "end"), (name, seed)
