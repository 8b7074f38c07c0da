"""Every stage declares the map stats it adds (`adds_stats`) and whether it keeps its input's
(`passes_stats`), so that `order_by` or a filter naming a stat its Level cannot have is a load
error; checked over every registered kind on its golden fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import pcg, write_recipe
from golden import stage_kinds, stage_runs


@pytest.mark.parametrize("kind", sorted(stage_kinds()))
def test_a_stage_adds_only_the_stats_it_declares(kind: str) -> None:
    for spec, inputs, made in stage_runs(kind):
        declared = spec.params.added_stats()
        assert declared is not None, f"{kind} declares no adds_stats: built-in stages must"
        had = set().union(*(set(i.properties) for i in inputs)) if inputs else set()
        # Passed on from an input unchanged is not adding; a recomputed stat is.
        added = {k for k, v in made.properties.items() if k not in had or all(i.properties.get(k) != v for i in inputs)}
        assert added <= set(declared), f"{kind} writes {sorted(added - set(declared))} without declaring them in adds_stats"
        # A filter after it reads its input's properties as passes_stats says they reach it.
        if spec.params.passes_stats:
            assert had <= set(made.properties), f"{kind} drops {sorted(had - set(made.properties))}: declare passes_stats = False"


ORDERED = """\
[pack]
name = "ordered"
seed = 3
maps = 2
order_by = "{order_by}"

[stage.maze]
use = "maze.backtracker"
cells = [5, 5]

[stage.items]
use = "place.items"
input = "maze"
type = "gem"

[stage.png]
use = "export.png"
input = "items"
"""


def test_order_by_a_stat_no_stage_writes_is_a_load_error(tmp_path: Path) -> None:
    write_recipe(tmp_path, "ordered", ORDERED.format(order_by="-dead_end"))
    proc = pcg("build", "recipes", cwd=tmp_path, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "recipes/ordered.toml: pack.order_by: no stage writes the stat 'dead_end' (did you mean 'dead_ends'?" in " ".join(proc.stderr.split())
    assert not (tmp_path / "exports" / "ordered").exists()
    # Stats of every stage feeding the exporter count, including those named after a param.
    for good in ("-dead_ends", "items_gem"):
        write_recipe(tmp_path, "ordered", ORDERED.format(order_by=good))
        pcg("build", "recipes", "-q", cwd=tmp_path)
