"""What commands print for a person, and for logs and scripts.

- `pcg stages`: one line per kind with a whole-sentence summary, grouped by family; `pcg stages
  KIND` in full.
- Off a terminal (a pipe, as in CI logs) tables are plain, full-width columns: nothing cut to 80
  columns (`dead…`), no box drawing, no trailing spaces; at a wide terminal they are boxed.
- `pcg stats --format csv|json`, the shapes docs/commands.md describes.
- Every command that takes a pack (show, stats, verify, clean) takes it the same ways.
- A validator's message quotes the value once; an object tile no exporter can draw fails the
  recipe as it loads.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner, Result

from conftest import ROOT, TILESETS

from pipeline import registry
from pipeline.commands import pack_progress
from pipeline.commands.app import app
from pipeline.errors import RecipeError
from pipeline.recipe.load import load_recipe
from pipeline.stage_summary import MAX_SUMMARY, family, summary

# Two generators, each exported, under long names: the stats table is far wider than 80 columns.
STATS_RECIPE = """\
[pack]
name = "wide"
seed = 7
maps = 3

[stage.a_rather_long_name_for_the_backtracker]
use = "maze.backtracker"
cells = [6, 5]

[stage.and_another_long_one_for_wilson]
use = "maze.wilson"
cells = [6, 5]

[stage.tmx_a]
use = "export.tmx"
input = "a_rather_long_name_for_the_backtracker"
dir = "a"

[stage.tmx_b]
use = "export.tmx"
input = "and_another_long_one_for_wilson"
dir = "b"
"""
STATS = ("cells", "dead_end_pct", "solution_pct", "diameter", "loops", "straightness", "dead_ends")
BOX = set("│┃━─┏┡└┌╇┩╭╰")


def run(*args: str, cwd: Path, terminal_width: int | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    """`pcg ARGS` in a fresh process, its output a pipe; with `terminal_width`, rich is told the
    pipe is a terminal of that width (as a person's would be)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR", "TTY_COMPATIBLE", "NO_COLOR")}
    env["COLUMNS"] = "80"  # what a CI runner reports, and what rich used to cut tables to
    if terminal_width is not None:
        env.update(TTY_COMPATIBLE="1", COLUMNS=str(terminal_width))
    proc = subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=600)
    if check and proc.returncode != 0:
        raise AssertionError(f"pcg {' '.join(args)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with the wide pack built."""
    root = tmp_path_factory.mktemp("wide")
    (root / "recipes").mkdir()
    (root / "recipes" / "wide.toml").write_text(STATS_RECIPE)
    run("build", "recipes", "-q", cwd=root)
    return root


# -- stage summaries ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ("One. Two.", "One."),
        ("Runs `a.b` over\n    lines. Then more.", "Runs `a.b` over lines."),
        ("Keep (e.g. this. and that) together. Rest.", "Keep (e.g. this. and that) together."),
        ("Pass maps, e.g. hard ones. Rest.", "Pass maps, e.g. hard ones."),
        ("Prim (Walter D. Pullen's name): grow. Rest.", "Prim (Walter D. Pullen's name): grow."),
        ("Named by Walter D. Pullen. Rest.", "Named by Walter D. Pullen."),
        ("Values 1..N by size. Rest.", "Values 1..N by size."),
        ("No full stop at all\n\nSecond paragraph.", "No full stop at all"),
    ],
)
def test_a_summary_is_the_first_whole_sentence(doc: str, expected: str) -> None:
    assert summary(doc) == expected


def test_every_built_in_kind_has_a_short_whole_sentence_summary() -> None:
    for kind, cls in registry.kinds().items():
        text = summary(cls.__doc__)
        assert text.endswith((".", "!", "?")) and "\n" not in text, (kind, text)
        assert len(text) <= MAX_SUMMARY, f"{kind}: the first sentence of its docstring is {len(text)} characters: {text}"


def test_pcg_stages_lists_one_line_per_kind_by_family_and_shows_one_in_full(tmp_path: Path) -> None:
    kinds = registry.kinds()
    listing = run("stages", cwd=tmp_path).stdout
    lines = listing.splitlines()
    for kind, cls in kinds.items():
        mine = [line for line in lines if line.split()[:1] == [kind] and line.startswith("  ")]
        assert len(mine) == 1, (kind, mine)
        assert mine[0].rstrip().endswith(summary(cls.__doc__)), mine[0]
    families = [line for line in lines if line and not line.startswith(" ")]
    assert families[: len(set(map(family, kinds)))] == sorted(set(map(family, kinds)))
    assert not any(line != line.rstrip() for line in lines)
    full = run("stages", "maze.wilson", cwd=tmp_path).stdout
    assert "maze.wilson  (version" in full and "loop-erased" in full and "cells: [int > 0 <= 4096" in full
    unknown = run("stages", "maze.wilsn", cwd=tmp_path, check=False)
    assert unknown.returncode == 1 and "did you mean 'maze.wilson'" in unknown.stderr
    # A family lists its own kinds, as the full listing does.
    dungeons = run("stages", "dungeon", cwd=tmp_path).stdout.splitlines()
    assert dungeons[0] == "dungeon" and [line.split()[0] for line in dungeons[1:] if line.startswith("  ")] == sorted(k for k in kinds if family(k) == "dungeon")
    assert "did you mean 'dungeon'" in run("stages", "dungeons", cwd=tmp_path, check=False).stderr


# -- tables off a terminal, and at a wide one ----------------------------------------------------


def test_stats_off_a_terminal_is_plain_and_full_width(wide: Path) -> None:
    out = run("stats", "recipes/wide.toml", cwd=wide).stdout
    lines = out.splitlines()
    assert lines[0] == "wide: mean ± sd over 3 maps"
    header = lines[1].split()
    assert header == ["stage", "kind", *STATS]
    end = next(k for k, line in enumerate(lines) if line.startswith("diversity:"))  # the pack's diversity follows
    rows = {line.split()[0]: line for line in lines[2:end]}
    assert set(rows) == {"a_rather_long_name_for_the_backtracker", "and_another_long_one_for_wilson"}
    assert lines[end + 1].split() == ["stage", "measure", "min", "median", "max", "distinct"]
    judged = [line for line in lines[end + 2 :] if "maps can be finished" in line]  # then each stage's playability
    assert {line.split()[0] for line in lines[end + 2 :] if line not in judged} == set(rows) == {line.split(":")[0] for line in judged}
    assert max(len(line) for line in lines) > 120  # wider than any terminal default: nothing was cut
    assert "…" not in out and not BOX & set(out) and "\x1b" not in out
    assert all(line == line.rstrip() for line in lines)
    assert "e+" not in out and "e-0" not in out  # 160, never 1.6e+02


def test_stats_numbers_keep_their_digits_without_exponents() -> None:
    from pipeline.commands.stats import plain as _plain

    assert [_plain(x, 2) for x in (160.2, 1173.4, 0.12345, 5.0, -3.25, 0.0)] == ["160", "1173", "0.12", "5", "-3.2", "0"]
    assert [_plain(x, 4) for x in (12345.6, 99.96, 0.0012)] == ["12346", "99.96", "0.0012"]


def test_stats_at_a_wide_terminal_is_a_boxed_table_with_nothing_cut(wide: Path) -> None:
    out = run("stats", "recipes/wide.toml", cwd=wide, terminal_width=250).stdout
    assert "┃" in out and "…" not in out
    for name in ("a_rather_long_name_for_the_backtracker", "maze.wilson", *STATS):
        assert name in out


def test_explain_and_list_off_a_terminal_are_plain(wide: Path) -> None:
    for args in (("explain", "recipes/wide.toml"), ("list",)):
        out = run(*args, cwd=wide).stdout
        assert "…" not in out and not BOX & set(out), out
        assert "a_rather_long_name_for_the_backtracker" in out


# -- stats for scripts ------------------------------------------------------------------------


def test_stats_as_json_and_csv_agree_with_the_manifest(wide: Path) -> None:
    manifest = json.loads((wide / "exports" / "wide" / "manifest.json").read_text())
    doc = json.loads(run("stats", "wide", "--format", "json", cwd=wide).stdout)
    assert doc["format"] == 1 and doc["pack"] == "wide" and doc["maps"] == 3
    assert [s["stage"] for s in doc["stages"]] == ["a_rather_long_name_for_the_backtracker", "and_another_long_one_for_wilson"]
    assert [s["kind"] for s in doc["stages"]] == ["maze.backtracker", "maze.wilson"]
    wilson = doc["stages"][1]
    assert list(wilson["stats"]) == list(STATS)
    values = [m["stages"]["and_another_long_one_for_wilson"]["stats"]["diameter"] for m in manifest["maps"]]
    assert wilson["stats"]["diameter"]["mean"] == pytest.approx(sum(values) / 3)
    assert wilson["stats"]["cells"] == {"mean": 30.0, "sd": 0.0, "maps": 3}

    text = run("stats", "recipes/wide.toml", "--format", "csv", cwd=wide).stdout
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == ["stage", "kind", "stat", "mean", "sd", "maps"]
    assert len(rows) == 2 * len(STATS)
    for row in rows:
        stage = next(s for s in doc["stages"] if s["stage"] == row["stage"])
        assert float(row["mean"]) == stage["stats"][row["stat"]]["mean"] and row["kind"] == stage["kind"]
    bad = run("stats", "wide", "--format", "xml", cwd=wide, check=False)
    assert bad.returncode == 1 and "--format: table, csv or json" in bad.stderr


# -- one way to name a pack -------------------------------------------------------------------


def test_every_command_that_takes_a_pack_takes_it_the_same_ways(wide: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # In this process (a fresh one per command costs half a second, 16 times over); the real
    # CLI's own process runs each command in the tests of its output.
    monkeypatch.chdir(wide)
    runner = CliRunner()

    def invoke(*args: str, code: int = 0) -> Result:
        result = runner.invoke(app, list(args))
        assert result.exit_code == code, result.output
        return result

    ways = ("wide", "exports/wide", "exports/wide/manifest.json", "recipes/wide.toml")
    for way in ways:
        assert invoke("show", way, "--no-open").stdout.strip() == "exports/wide/contact_sheet.png"
        assert "rebuild byte for byte" in invoke("verify", way, "-j", "1").stdout
        assert "a_rather_long_name_for_the_backtracker" in invoke("stats", way, "--format", "csv").stdout
    # --open without a desktop says so (xdg-open failed unseen, and the command said nothing).
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    opened = invoke("show", "wide", "--open")
    assert opened.stdout.strip() == "exports/wide/contact_sheet.png"
    assert "--open: no desktop here (neither DISPLAY nor WAYLAND_DISPLAY is set), so exports/wide/contact_sheet.png was not opened" in " ".join(opened.stderr.split())
    for command in (("show", "nope", "--no-open"), ("verify", "nope"), ("stats", "nope"), ("clean", "nope")):
        stderr = invoke(*command, code=1).stderr
        assert "nope: not a built pack (no manifest.json in nope or exports/nope)" in stderr, stderr
    proc = run("verify", "nope", cwd=wide, check=False)  # and the same from the real command line
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "nope: not a built pack (no manifest.json in nope or exports/nope)" in proc.stderr, proc.stderr
    copy = wide.parent / "wide-clean"
    shutil.copytree(wide, copy)
    assert "removed exports/wide/" in run("clean", "exports/wide/manifest.json", cwd=copy).stdout
    assert not (copy / "exports" / "wide").exists()


# -- messages ------------------------------------------------------------------------------


def test_no_recipe_message_quotes_the_value_twice() -> None:
    seen = 0
    for path in sorted((ROOT / "tests" / "bad_recipes").glob("*.toml")):
        if b"needs: test.identity" in path.read_bytes():
            continue
        try:
            load_recipe(path)
        except RecipeError as exc:
            for line in exc.problems:
                seen += "(got " in line
                assert line.count("(got ") <= 1, line
    assert seen >= 5


def _refused(path: Path, text: str) -> list[str]:
    """The problems of the recipe `text`, written to `path`, which must not load."""
    path.write_text(text)
    with pytest.raises(RecipeError) as caught:
        load_recipe(path)
    return caught.value.problems


def test_an_object_or_layer_tile_missing_from_an_own_art_tileset_fails_as_the_recipe_loads(tmp_path: Path) -> None:
    shutil.copytree(TILESETS, tmp_path / "tilesets")
    (tmp_path / "recipes").mkdir()
    text = STATS_RECIPE.replace('dir = "a"', 'dir = "a"\ntileset = "../tilesets/stone.toml"')
    text += '\n[stage.loot]\nuse = "place.items"\ninput = "a_rather_long_name_for_the_backtracker"\ntype = "loot"\ntile = "chets"\n'
    text = text.replace('input = "a_rather_long_name_for_the_backtracker"\ndir = "a"', 'input = "loot"\ndir = "a"')
    path = tmp_path / "recipes" / "loot.toml"
    assert _refused(path, text) == [
        f"{path}: stage.loot.tile: 'chets' cannot be drawn by stage.tmx_a (export.tmx): its tileset file"
        " ../tilesets/stone.toml has no 'chets' in `tiles` (did you mean 'chest'?) (it has: floor, door, chest, key, wall)"
    ]
    path.write_text(text.replace('"chets"', '"chest"'))
    load_recipe(path)  # the file has it

    # A layer drawn with one tile (a floor under everything) is checked the same way.
    floor = text.replace('"chets"', '"chest"').replace('tileset = "../tilesets/stone.toml"', 'tileset = "../tilesets/stone.toml"\nlayers = [{ name = "floor", tile = "flor" }, { name = "walls" }]')
    assert _refused(path, floor) == [
        f"{path}: stage.tmx_a.layers.floor.tile: its tileset file ../tilesets/stone.toml has no 'flor' in `tiles` (did you mean 'floor'?)"
        " (it has: floor, door, chest, key, wall)"
    ]


def test_verify_shows_its_progress_on_a_terminal_and_nothing_extra_in_a_log(wide: Path) -> None:
    # A pack of thousands of maps takes minutes to verify: a person sees the bar move.
    shown = run("verify", "wide", cwd=wide, terminal_width=120)
    assert "verifying wide" in shown.stdout and "rebuild byte for byte" in shown.stdout, shown.stdout
    logged = run("verify", "wide", cwd=wide).stdout
    assert logged.splitlines() == [line for line in logged.splitlines() if line.startswith("OK: wide: all")], logged


def test_a_missing_target_is_called_a_file_or_a_folder_as_its_name_suggests(tmp_path: Path) -> None:
    for name, message in (("gone.toml", "no such recipe file"), ("levels", "no such recipe file or folder")):
        with pytest.raises(RecipeError) as caught:
            load_recipe(tmp_path / name)
        assert caught.value.problems == [f"{tmp_path / name}: {message}"]


def _plan(name: str, maps: int) -> Any:
    return SimpleNamespace(stale_maps=list(range(maps)), recipe=SimpleNamespace(pack=SimpleNamespace(name=name)))


def test_a_pack_of_a_few_maps_gets_its_bar_only_once_it_is_slow(monkeypatch: pytest.MonkeyPatch) -> None:
    # A big rule program can take a minute on one map: without a bar the build looks hung.
    monkeypatch.setattr(pack_progress, "SLOW", 0.2)
    bars = pack_progress.PackProgress(Console(file=io.StringIO(), force_terminal=True, width=100), quiet=False)
    try:
        quick = bars.started(_plan("quick", 1))
        assert quick is not None
        quick(1)
        bars.finished()
        assert not bars.bar.tasks  # done within the second: no row
        slow = bars.started(_plan("slow", 2))
        assert slow is not None
        slow(1)
        time.sleep(1.0)
        assert [(t.description, t.completed, t.total) for t in bars.bar.tasks] == [("slow", 1, 2)]
        assert bars.bar.tasks[0].elapsed >= 1.0  # since the pack started, not since its row appeared
        slow(1)
        assert bars.bar.tasks[0].completed == 2
        many = bars.started(_plan("many", pack_progress.FEW + 1))  # a pack of many maps: at once
        assert many is not None and [t.description for t in bars.bar.tasks] == ["slow", "many"]
    finally:
        bars.stop()


def test_off_a_terminal_a_long_build_says_how_far_it_got_now_and_then(monkeypatch: pytest.MonkeyPatch) -> None:
    # A CI log would otherwise stay empty until the end (and some runners stop a silent job).
    monkeypatch.setattr(pack_progress, "LOG_EVERY", 0.2)
    log = io.StringIO()
    bars = pack_progress.PackProgress(Console(file=log, force_terminal=False, width=100), quiet=False)
    advance = bars.started(_plan("big", 10))
    assert advance is not None
    advance(3)
    time.sleep(0.3)
    assert log.getvalue() == "big: 3/10 maps done ...\n"
    advance(7)  # done: the build line says the rest
    bars.finished()
    time.sleep(0.3)
    assert log.getvalue() == "big: 3/10 maps done ...\n"
    # A pack of two slow maps finishes none for a long while: it says so all the same.
    bars.started(_plan("slow", 2))
    time.sleep(0.5)
    bars.stop()
    later = log.getvalue().removeprefix("big: 3/10 maps done ...\n")
    assert later and set(later.splitlines()) == {"slow: 0/2 maps done ..."}, log.getvalue()  # once or twice, as the machine allows
    silent = io.StringIO()
    quiet = pack_progress.PackProgress(Console(file=silent, force_terminal=False), quiet=True)
    assert quiet.started(_plan("big", 10)) is None and quiet.started(_plan("few", 2)) is None
    quiet.stop()
    assert silent.getvalue() == ""


@pytest.mark.parametrize("command", [["stages"], ["list"], ["explain", "--format", "json"]])
def test_a_reader_that_stops_early_ends_the_command_quietly(project: Path, command: list[str]) -> None:
    # `pcg stages | head -1`: the pipe closes before pcg writes (here, before it even starts).
    # Not "error: a file: Broken pipe" and status 1, which a script reads as pcg failing.
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipeline", *command], cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert err == ""
