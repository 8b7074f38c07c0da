"""The rule "any change to a stage's output for the same seed bumps its `version`", enforced.

Every registered stage kind runs its fixture (tests/golden.py) and its output digest is compared
with tests/golden.json. A failure says what to do: bump the stage's version, or `make golden`.
"""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import numpy as np
import pytest

import golden
from golden import Entry
from pipeline import registry
from pipeline.level import Color, Level, MapObject, Symbol

KINDS = list(golden.stage_kinds())
BUMP = "bump version in @stage(...) (and run `make golden`)"


def current(kind: str) -> Entry:
    """`kind`'s entry as the code stands (never computed while a test patches a stage)."""
    return golden.computed(kind)[0]


@pytest.fixture(scope="module")
def recorded() -> dict[str, Entry]:
    return golden.load_table()


@pytest.mark.parametrize("kind", KINDS)
def test_stage_output_is_as_recorded_or_its_version_was_bumped(kind: str, recorded: dict[str, Entry]) -> None:
    problem = golden.check_kind(kind, recorded.get(kind), current(kind))
    if problem is not None:
        pytest.fail(problem.message, pytrace=False)


def test_the_golden_table_has_every_kind_and_no_other(recorded: dict[str, Entry]) -> None:
    """Kinds added since the table was written, and kinds it names that are gone, all at once."""
    new, gone = sorted(set(KINDS) - set(recorded)), sorted(set(recorded) - set(KINDS))
    problems = [f"new kind(s) with no entry: {', '.join(new)}"] * bool(new) + [f"entries of kinds that no longer exist: {', '.join(gone)}"] * bool(gone)
    if problems:
        pytest.fail(f"tests/golden.json is out of date ({'; '.join(problems)}): run `make golden`", pytrace=False)


def test_the_golden_table_is_written_canonically() -> None:
    """Sorted keys and stable JSON: a refresh only ever shows the entries that changed."""
    text = golden.TABLE.read_text(encoding="utf-8")
    assert text == golden.dump_table(golden.load_table()), "tests/golden.json was edited by hand: run `make golden`"


def test_only_the_pipelines_own_kinds_are_checked() -> None:
    assert KINDS == sorted(KINDS) and KINDS
    assert all(registry.get(kind).__module__ in registry.STAGE_MODULES for kind in KINDS)
    assert {"dungeon.rooms_and_mazes", "export.tmx", "filter", "rewrite"} <= set(KINDS)


# --- The checks themselves: a stage patched as a developer's edit would change it. -------------


def _flip_a_tile(monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    cls = registry.get(kind)
    original = cls.run

    def run(self, inputs, rng):  # type: ignore[no-untyped-def]
        level = original(self, inputs, rng)
        tiles = level.tiles.copy()
        tiles[1, 1] = 1 - tiles[1, 1]
        return dataclasses.replace(level, tiles=tiles)

    monkeypatch.setattr(cls, "run", run)


def test_an_output_change_without_a_version_bump_names_every_such_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    kinds = ["maze.binary_tree", "place.items"]
    before = {kind: current(kind) for kind in kinds}
    _flip_a_tile(monkeypatch, "maze.binary_tree")
    items = registry.get("place.items")
    original = items.run
    monkeypatch.setattr(items, "run", lambda self, inputs, rng: original(self, inputs, rng).with_properties(items_chest=99))
    after = {kind: golden.compute(kind) for kind in kinds}
    problems = golden.check_table(before, after)
    assert [(p.kind, p.category) for p in problems] == [(kind, "bump") for kind in kinds]
    for problem in problems:
        version = registry.get(problem.kind).version
        assert problem.message == f"output of {problem.kind} changed but its version is still {version}: {BUMP}"


def test_a_version_bump_asks_for_a_refresh_not_another_bump(monkeypatch: pytest.MonkeyPatch) -> None:
    kind = "maze.binary_tree"
    before = {kind: current(kind)}
    _flip_a_tile(monkeypatch, kind)
    old = registry.get(kind).version
    monkeypatch.setattr(registry.get(kind), "version", old + 1)
    (problem,) = golden.check_table(before, {kind: golden.compute(kind)})
    assert problem.category == "stale"
    assert problem.message == f"{kind}: version {old} -> {old + 1} since tests/golden.json was written: run `make golden`"


def test_bumping_an_embedded_or_input_stage_asks_for_a_refresh(monkeypatch: pytest.MonkeyPatch) -> None:
    kinds = ["dungeon.rooms_and_mazes", "export.tmx"]
    before = {kind: current(kind) for kind in kinds}
    old = registry.get("maze.growing_tree").version
    monkeypatch.setattr(registry.get("maze.growing_tree"), "version", old + 1)
    problems = golden.check_table(before, {kind: golden.compute(kind) for kind in kinds})
    assert [(p.kind, p.category) for p in problems] == [("dungeon.rooms_and_mazes", "stale"), ("export.tmx", "stale")]
    assert f"embedded maze.growing_tree {old} -> {old + 1}" in problems[0].message
    assert f"input stage maze.growing_tree {old} -> {old + 1}" in problems[1].message  # the rooms-and-mazes input


def test_a_changed_input_is_blamed_on_the_stage_that_made_it(monkeypatch: pytest.MonkeyPatch) -> None:
    kinds = ["maze.backtracker", "post.braid"]
    before = {kind: current(kind) for kind in kinds}
    _flip_a_tile(monkeypatch, "maze.backtracker")
    after = {kind: golden.compute(kind) for kind in kinds}
    maker, braid = golden.check_table(before, after)
    version = registry.get("maze.backtracker").version
    assert maker.category == "bump" and maker.message.startswith("output of maze.backtracker changed")
    assert braid.category == "bump"
    assert braid.message.startswith(f"input of post.braid changed but none of the stages making it changed version (maze.backtracker (version {version}))")
    # Bumped as the rule says, both only ask for a refresh.
    monkeypatch.setattr(registry.get("maze.backtracker"), "version", version + 1)
    after = {kind: golden.compute(kind) for kind in kinds}
    assert [p.category for p in golden.check_table(before, after)] == ["stale", "stale"]


def test_new_and_removed_kinds(tmp_path: Path) -> None:
    entry = current("maze.backtracker")
    (new,) = golden.check_table({}, {"maze.backtracker": entry})
    assert new.category == "new" and "run `make golden`" in new.message
    (gone,) = golden.check_table({"maze.gone": entry}, {})
    assert gone.category == "removed" and "maze.gone" in gone.message and "run `make golden`" in gone.message


def test_the_refresh_refuses_an_unbumped_change_unless_forced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table = tmp_path / "golden.json"
    table.write_text(golden.dump_table({kind: current(kind) for kind in KINDS}))
    written = table.read_text()
    out = io.StringIO()
    assert golden.refresh(table, out=out) == 0 and table.read_text() == written
    assert "up to date" in out.getvalue()

    _flip_a_tile(monkeypatch, "maze.binary_tree")
    out = io.StringIO()
    assert golden.refresh(table, out=out) == 1
    assert table.read_text() == written  # nothing recorded
    assert "output of maze.binary_tree changed but its version is still" in out.getvalue()
    assert "FORCE=1" in out.getvalue()

    out = io.StringIO()
    assert golden.refresh(table, force=True, out=out) == 0
    entries = golden.load_table(table)
    assert entries["maze.binary_tree"].digest != current("maze.binary_tree").digest
    assert {k: e for k, e in entries.items() if k != "maze.binary_tree"} == {k: current(k) for k in KINDS if k != "maze.binary_tree"}


# --- The digest: everything a Level carries, nothing that varies between runs. ------------------


def _level() -> Level:
    tiles = np.arange(12, dtype=np.uint8).reshape(3, 4) % 2
    return Level(
        tiles=tiles,
        alphabet=(Symbol("B", "wall", "#000000"), Symbol("W", "floor", "#ffffff")),
        layers={"a": np.zeros((3, 4), dtype=np.int32), "b": np.ones((3, 4), dtype=np.int32)},
        objects=[MapObject("spawn", "spawn", 1, 2, properties={"n": 1})],
        properties={"x": 1, "y": "s"},
    )


def test_the_level_digest_sees_every_part_and_no_insertion_order() -> None:
    base = _level()
    same = dataclasses.replace(base, layers=dict(reversed(base.layers.items())), properties={"y": "s", "x": 1})
    assert golden.level_digest(same) == golden.level_digest(base)
    variants = [
        dataclasses.replace(base, tiles=1 - base.tiles),
        dataclasses.replace(base, tiles=base.tiles.T.copy(), layers={}),
        dataclasses.replace(base, alphabet=(Symbol("B", "wall", "#000001"), base.alphabet[1])),
        dataclasses.replace(base, layers={**base.layers, "a": base.layers["a"].astype(np.int64)}),
        dataclasses.replace(base, layers={"a": base.layers["b"], "b": base.layers["a"]}),
        dataclasses.replace(base, objects=[dataclasses.replace(base.objects[0], x=1.5)]),
        dataclasses.replace(base, objects=[dataclasses.replace(base.objects[0], properties={"n": True})]),
        dataclasses.replace(base, objects=[dataclasses.replace(base.objects[0], tile="chest")]),
        dataclasses.replace(base, objects=base.objects * 2),
        dataclasses.replace(base, properties={"x": 1.0, "y": "s"}),
        dataclasses.replace(base, properties={"x": True, "y": "s"}),
        dataclasses.replace(base, properties={"x": 1, "y": Color("#ffa300")}),
        dataclasses.replace(base, properties={"x": 1, "y": "#ffa300"}),
        dataclasses.replace(base, attachments={"frames": np.stack([base.tiles, base.tiles])}),
        dataclasses.replace(base, attachments={"heights": np.stack([base.tiles, base.tiles])}),
    ]
    digests = [golden.level_digest(v) for v in [base, *variants]]
    assert len(set(digests)) == len(digests)


def test_the_files_digest_sees_paths_and_bytes_not_their_order() -> None:
    files = {"a/map.tmx": b"1", "tilesets/t.png": b"2"}
    assert golden.files_digest(dict(reversed(files.items()))) == golden.files_digest(files)
    assert golden.files_digest({**files, "a/map.tmx": b"3"}) != golden.files_digest(files)
    assert golden.files_digest({"b/map.tmx": b"1", "tilesets/t.png": b"2"}) != golden.files_digest(files)
