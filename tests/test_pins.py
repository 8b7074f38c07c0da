"""Pinning, re-rolling and unpinning one map's seed in the recipe ([pack.seeds]): the edit keeps
the user's text, the next build rebuilds that map alone, and the recipe alone reproduces it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomli

from conftest import pcg, recipe_text, tree_digests
from pipeline import api
from pipeline.errors import PipelineError
from pipeline.recipe.pins import pin, reroll, reroll_seed, unpin
from pipeline.recipe.load import load_recipe
from pipeline.recipe.toml_edit import EditError, check_edit, remove_key, set_key

MAPS = 4
TEXT = "# Tiny pack for pins.\n" + recipe_text("tiny", seed=7, maps=MAPS, cells=(4, 3), scale=1).replace(
    'name = "tiny"', 'name = "tiny"  # the folder under exports/'
)


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "tiny.toml").write_text(TEXT)
    return tmp_path


def build(project: Path) -> api.PackResult:
    result = api.build(project / "recipes", out=project / "exports", cache=project / ".pcg-cache", jobs=1)
    assert result.ok, result.problems
    return result["tiny"]


def snapshot(project: Path) -> dict[str, tuple[str, int]]:
    """(sha256, mtime) of every map file, by path."""
    pack = project / "exports" / "tiny"
    digests = tree_digests(pack)
    return {rel: (digest, (pack / rel).stat().st_mtime_ns) for rel, digest in digests.items() if "map_" in rel}


def of_map(snap: dict[str, tuple[str, int]], index: int) -> dict[str, tuple[str, int]]:
    return {rel: v for rel, v in snap.items() if f"map_{index:03d}" in rel}


def others(snap: dict[str, tuple[str, int]], index: int) -> dict[str, tuple[str, int]]:
    return {rel: v for rel, v in snap.items() if f"map_{index:03d}" not in rel}


def test_a_pinned_map_keeps_its_files_when_the_pack_seed_changes(tiny: Path) -> None:
    recipe = tiny / "recipes" / "tiny.toml"
    build(tiny)
    before = snapshot(tiny)
    change = pin(recipe, 1)
    assert (change.before, change.seed, change.pinned, change.written) == (7, 7, True, True)
    assert "[pack.seeds]\n1 = 7\n" in recipe.read_text()
    assert build(tiny).built == 0  # pinning the current seed changes no map
    assert pin(recipe, 1).written is False  # pinned already

    recipe.write_text(recipe.read_text().replace("seed = 7", "seed = 8", 1))
    result = build(tiny)
    after = snapshot(tiny)
    assert result.built == MAPS - 1
    assert of_map(after, 1) == of_map(before, 1)  # same bytes, not even rewritten
    for index in (0, 2, 3):
        assert {d for d, _ in of_map(after, index).values()}.isdisjoint(d for d, _ in of_map(before, index).values())


def test_reroll_rebuilds_that_map_alone_and_the_recipe_alone_reproduces_it(tiny: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    recipe = tiny / "recipes" / "tiny.toml"
    build(tiny)
    before = snapshot(tiny)
    change = reroll(recipe, 2)
    assert change.seed == reroll_seed(2, 7, 1) != 7 and change.rerolls == 1
    again = reroll(recipe, 2)  # goes on from the re-rolled seed, with the next count
    assert again.seed == reroll_seed(2, change.seed, 2) and again.rerolls == 2
    assert f"2 = {{ seed = {again.seed}, rerolls = 2 }}" in recipe.read_text()
    # Below 2**31: the map's seed property stays a Tiled int, as on the maps not re-rolled.
    assert all(reroll_seed(i, 7, n) < 2**31 for i in range(50) for n in range(1, 5))

    result = build(tiny)
    after = snapshot(tiny)
    assert result.built == 1
    assert others(after, 2) == others(before, 2)  # bytes and mtimes: the other maps never ran
    assert all(after[rel][0] != before[rel][0] for rel in of_map(before, 2))

    # A fresh project with nothing but the recipe builds the same bytes.
    fresh = tmp_path_factory.mktemp("fresh")
    (fresh / "recipes").mkdir()
    shutil.copy(recipe, fresh / "recipes" / "tiny.toml")
    build(fresh)
    assert {k: v[0] for k, v in snapshot(fresh).items()} == {k: v[0] for k, v in after.items()}

    # Unpinning gives the map its first files back, and the recipe its first text.
    assert unpin(recipe, 2).seed == 7
    assert recipe.read_text() == TEXT
    assert build(tiny).built == 1
    assert {k: v[0] for k, v in snapshot(tiny).items()} == {k: v[0] for k, v in before.items()}
    assert unpin(recipe, 2).written is False


LAYOUT = """\
# My catacombs.\r
[pack]\r
name = "c"  # keep short\r
seed = 1\r
maps = 40\r
description = \"\"\"\r
[not a table]\r
\"\"\"\r
\r
# Hand-picked maps:\r
[pack.seeds]\r
3 = 99  # the one with the lake\r
"20" = { seed = 5, rerolls = 1 }\r
\r
# The maze.\r
[stage.maze]\r
use = "maze.backtracker"\r
\r
[stage.tmx]\r
use = "export.tmx"\r
input = "maze\""""


def edited(text: str, key: str, value: str | None, data: object) -> str:
    table = ("pack", "seeds")
    new = remove_key(text, table, key) if value is None else set_key(text, table, key, value, ("pack",), int)
    check_edit(text, new, table, key, data)
    return new


def test_edits_keep_comments_layout_and_line_endings() -> None:
    text = edited(LAYOUT, "3", "123", 123)
    assert "3 = 123  # the one with the lake\r\n" in text  # the entry's comment stays with it
    text = edited(text, "7", "8", 8)
    assert "3 = 123  # the one with the lake\r\n7 = 8\r\n\"20\" = " in text  # in index order
    text = edited(text, "25", "{ seed = 1, rerolls = 2 }", {"seed": 1, "rerolls": 2})
    assert text.endswith('"20" = { seed = 5, rerolls = 1 }\r\n25 = { seed = 1, rerolls = 2 }\r\n\r\n# The maze.\r\n[stage.maze]' + LAYOUT.split("[stage.maze]")[1])
    for key in ("7", "25", "20", "3"):
        text = edited(text, key, None, None)
    # The table's comment keeps its header; everything else is as it was.
    assert text == LAYOUT.replace('3 = 99  # the one with the lake\r\n"20" = { seed = 5, rerolls = 1 }\r\n', "")

    # A new table goes right after [pack]'s last key, and goes again without a trace.
    bare = LAYOUT.split("# Hand-picked")[0] + LAYOUT.split("rerolls = 1 }\r\n\r\n")[1]
    added = edited(bare, "0", "4", 4)
    assert '"""\r\n\r\n[pack.seeds]\r\n0 = 4\r\n\r\n# The maze.' in added
    assert edited(added, "0", None, None) == bare


def test_seeds_written_inside_pack_are_refused_not_rewritten() -> None:
    text = LAYOUT.split("# Hand-picked")[0].replace("maps = 40", "maps = 40\r\nseeds.3 = 9") + "[stage.x]\r\n"
    with pytest.raises(EditError, match=r"pack.seeds is written inside another table"):
        set_key(text, ("pack", "seeds"), "4", "1", ("pack",), int)


def test_bad_input_is_one_clear_line(tiny: Path) -> None:
    recipe = tiny / "recipes" / "tiny.toml"
    with pytest.raises(PipelineError, match=r"map 4: the pack has maps 0..3"):
        pin(recipe, MAPS)
    proc = pcg("pin", "nope", "1", cwd=tiny, check=False)
    assert proc.returncode == 1 and "nope: not a built pack" in proc.stderr and "Traceback" not in proc.stderr
    proc = pcg("reroll", "recipes/tiny.toml", "1", "9", cwd=tiny, check=False)
    assert proc.returncode == 1 and "recipes/tiny.toml: map 9: the pack has maps 0..3" in proc.stderr
    assert recipe.read_text() == TEXT  # checked before any map is edited: map 1 is not re-rolled
    os.chmod(recipe, 0o444)
    try:
        proc = pcg("reroll", "recipes/tiny.toml", "1", cwd=tiny, check=False)
    finally:
        os.chmod(recipe, 0o644)
    assert proc.returncode == 1 and "recipe is not writable" in proc.stderr
    assert recipe.read_text() == TEXT
    with pytest.raises(PipelineError, match=r"map 1: the seed to pin must be an integer"):
        pin(recipe, 1, seed=2**63)
    recipe.write_text(TEXT.replace("[pack]", "[pack]\nseeds = { 1 = 5 }"))
    with pytest.raises(PipelineError, match=r"pack.seeds is written inside another table"):
        reroll(recipe, 2)
    recipe.write_text(TEXT + "\n[pack.seeds]\n01 = 5\n")
    proc = pcg("unpin", "recipes/tiny.toml", "1", cwd=tiny, check=False)
    assert proc.returncode == 1 and "pack.seeds.01: keys are map indices" in proc.stderr


def test_cli_takes_the_pack_and_explain_shows_the_pins(tiny: Path) -> None:
    build(tiny)
    out = pcg("pin", "tiny", "0", cwd=tiny).stdout  # by pack name: the recipe its manifest records
    assert "recipes/tiny.toml: map 0 pinned (seed 7)" in out
    out = pcg("reroll", "exports/tiny/manifest.json", "3", "--build", "-j", "1", cwd=tiny).stdout
    seed = reroll_seed(3, 7, 1)
    assert f"map 3 re-rolled (1x) (seed 7 -> {seed})" in out and "built 1/4 maps" in out
    pcg("pin", "exports/tiny", "1", "--seed", "12", cwd=tiny)
    assert tomli.loads((tiny / "recipes" / "tiny.toml").read_text())["pack"]["seeds"] == {
        "0": 7, "1": 12, "3": {"seed": seed, "rerolls": 1}
    }
    explain = pcg("explain", "recipes/tiny.toml", cwd=tiny).stdout
    assert "map seed pinned (7 -> 12)" in explain
    assert "3 maps with seeds of their own in [pack.seeds] (the pack seed is 7):" in explain
    rows = [line.split() for line in explain.splitlines()[-3:]]
    assert rows == [["0", "7", "pinned"], ["1", "12", "pinned"], ["3", str(seed), "re-rolled", "1x"]]
    assert load_recipe(tiny / "recipes" / "tiny.toml").pack.seed_of(3) == seed
    # Several maps at once; one already as asked says so, in its own words.
    out = pcg("reroll", "tiny", "2", "3", cwd=tiny).stdout
    assert f"map 2 re-rolled (1x) (seed 7 -> {reroll_seed(2, 7, 1)})" in out and f"map 3 re-rolled (2x) (seed {seed} -> {reroll_seed(3, seed, 2)})" in out
    out = pcg("pin", "tiny", "2", "0", cwd=tiny).stdout
    assert f"map 2 is already re-rolled (1x) to {reroll_seed(2, 7, 1)}; nothing changed" in out and "map 0 is already pinned at 7; nothing changed" in out
    out = pcg("unpin", "tiny", "0", "1", "2", "3", cwd=tiny).stdout
    assert out.count("unpinned") == 4 and "seeds" not in tomli.loads((tiny / "recipes" / "tiny.toml").read_text())["pack"]


def test_edits_from_two_processes_at_once_are_all_kept(tiny: Path) -> None:
    """`pcg reroll` in a terminal while the gallery re-rolls too: every edit reads the recipe the
    one before wrote, so no re-roll is lost (each process re-rolls map 1, and a map of its own)."""
    recipe = tiny / "recipes" / "tiny.toml"
    rounds = 15
    script = (
        "import sys\nfrom pipeline.recipe.pins import reroll\n"
        f"for _ in range({rounds}):\n    reroll(sys.argv[1], 1)\n    reroll(sys.argv[1], int(sys.argv[2]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    procs = [subprocess.Popen([sys.executable, "-c", script, str(recipe), str(own)], env=env, stderr=subprocess.PIPE) for own in (2, 3)]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    seeds = tomli.loads(recipe.read_text())["pack"]["seeds"]
    assert {k: v["rerolls"] for k, v in seeds.items()} == {"1": 2 * rounds, "2": rounds, "3": rounds}
    assert load_recipe(recipe).pack.seed_of(1) == seeds["1"]["seed"]


def test_a_recipe_saved_with_a_byte_order_mark_builds_and_takes_pins(tiny: Path) -> None:
    """Windows Notepad may save UTF-8 with a byte-order mark, and CRLF line ends."""
    path = tiny / "recipes" / "tiny.toml"
    plain = build(tiny)
    path.write_bytes(b"\xef\xbb\xbf" + TEXT.replace("\n", "\r\n").encode())
    again = build(tiny)
    assert again.built == 0  # the same recipe: nothing is stale
    assert load_recipe(path).sha256 == load_recipe(path, TEXT).sha256 and plain.maps == again.maps
    pcg("pin", "tiny", "2", cwd=tiny)
    assert path.read_bytes().startswith(b"\xef\xbb\xbf# Tiny pack for pins.\r\n")  # the file's own, kept
    assert tomli.loads(path.read_text(encoding="utf-8-sig"))["pack"]["seeds"] == {"2": 7}
