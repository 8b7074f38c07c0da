"""A stage's identity is its kind, its version and the identities of the stages it embeds: a
bump anywhere in that tree makes the maps stale, and `pcg explain` says which stage moved."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import pcg, write_recipe
from pipeline.building.builder import Builder
from pipeline.building.cache import LevelCache
from pipeline.errors import RecipeError
from pipeline.building.executor import SerialExecutor
from pipeline.recipe.load import load_recipe
from pipeline.registry import embedded_versions, get

ROOMS = """\
[pack]
name = "rooms"
seed = 3
maps = 3

[stage.dungeon]
use = "dungeon.rooms_and_mazes"
size = [31, 21]
room_attempts = 30
room_size = [3, 7]
{extra}

[stage.tmx]
use = "export.tmx"
input = "dungeon"
tile_size = 8
preview = false
"""


def build(project: Path, recipe: str) -> Builder:
    builder = Builder(exports_root=project / "exports", cache=LevelCache(project / ".pcg-cache"))
    loaded = load_recipe(project / recipe)
    report = builder.build(builder.plan(loaded), SerialExecutor())
    assert not report.failures
    return builder


@pytest.mark.parametrize(
    ("extra", "embedded"),
    [
        ("", "maze.growing_tree"),
        ('maze = "maze.kruskal"', "maze.kruskal"),
        # A non-perfect generator embeds post.cut_walls, which cuts its loops: two levels deep.
        ('maze = "maze.serpentine"', "post.cut_walls"),
    ],
)
def test_bumping_an_embedded_stage_makes_the_pack_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: str, embedded: str
) -> None:
    recipe = write_recipe(tmp_path, "rooms", ROOMS.format(extra=extra))
    builder = build(tmp_path, recipe)
    loaded = load_recipe(tmp_path / recipe)
    assert not builder.plan(loaded).stale_maps
    old = get(embedded).version
    monkeypatch.setattr(get(embedded), "version", old + 1)  # as a developer bumping it would
    plan = builder.plan(load_recipe(tmp_path / recipe))
    assert len(plan.stale_maps) == 3
    reasons = {r for m in plan.maps for r in m.stages["dungeon"].reasons}
    assert reasons == {f"embedded stage {embedded} changed (version {old} -> {old + 1})"}
    # The exporter goes stale through its input, and nothing else claims to be fresh.
    assert all(m.stages["tmx"].stale for m in plan.maps)


def test_embedded_versions_are_recorded_in_the_manifest(tmp_path: Path) -> None:
    import json

    recipe = write_recipe(tmp_path, "rooms", ROOMS.format(extra='maze = "maze.spiral"'))
    build(tmp_path, recipe)
    manifest = json.loads((tmp_path / "exports" / "rooms" / "manifest.json").read_text())
    assert manifest["stages"]["dungeon"]["embeds"] == {"maze.spiral": get("maze.spiral").version, "post.cut_walls": get("post.cut_walls").version}
    assert "embeds" not in manifest["stages"]["tmx"]


def test_only_stages_that_embed_carry_embeds() -> None:
    from pipeline.registry import kinds

    embedding = sorted(k for k, cls in kinds().items() if _default(cls) is not None and embedded_versions(_default(cls)))
    # The rooms-and-mazes dungeon and the four non-perfect mazes; no stage embeds itself.
    assert embedding == ["dungeon.rooms_and_mazes", "maze.serpentine", "maze.small_rooms", "maze.spiral"]
    for kind in embedding:
        assert kind not in embedded_versions(_default(kinds()[kind]))  # type: ignore[arg-type]


def _default(cls):  # type: ignore[no-untyped-def]
    try:
        return cls()
    except Exception:  # stages with required params embed nothing by default
        return None


def test_rooms_and_mazes_refuses_winding_it_would_ignore(tmp_path: Path) -> None:
    recipe = write_recipe(tmp_path, "rooms", ROOMS.format(extra='maze = "maze.kruskal"\nwinding = 0.9'))
    with pytest.raises(RecipeError) as info:
        load_recipe(tmp_path / recipe)
    (line,) = info.value.problems
    assert line == f"{tmp_path / recipe}: stage.dungeon.winding: only with maze = 'maze.growing_tree' (this stage uses 'maze.kruskal'); remove it"
    proc = pcg("build", recipe, cwd=tmp_path, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "winding: only with maze" in proc.stderr
    # With the growing tree, winding is taken.
    assert load_recipe(tmp_path / write_recipe(tmp_path, "ok", ROOMS.format(extra="winding = 0.9")))


def test_a_non_perfect_maze_keeps_its_loops_in_rooms_and_mazes(tmp_path: Path) -> None:
    """Before, the generator's finishing step (cutting loops) was skipped: the corridors were a
    perfect maze whatever `maze` said. Without dead-end removal, loops show as extra passages."""
    import numpy as np

    from pipeline.seeds import rng_for

    def passages(maze: str) -> int:
        stage = get("dungeon.rooms_and_mazes")(
            size=(41, 41), room_attempts=0, maze=maze, extra_connector_chance=0, remove_dead_ends=False
        )
        tiles = stage.run([], rng_for((0,))).tiles
        return int(np.count_nonzero(tiles != 0))

    cells = 20 * 20
    # No rooms: the corridors are the whole maze. A perfect one has cells - 1 passages.
    assert passages("maze.kruskal") == cells + cells - 1
    assert passages("maze.spiral") > cells + cells - 1
