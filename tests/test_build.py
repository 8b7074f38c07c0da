"""Building packs through the real CLI: determinism, caching, explain, verify, failures."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SMALL_RECIPE, TILESETS, needs_tiled, pcg, tree_digests, write_recipe

PACK = Path("exports/small")


def built(project: Path, *args: str) -> dict[str, str]:
    pcg("build", "recipes", "-q", *args, cwd=project)
    return tree_digests(project / PACK)


def test_outputs_are_byte_identical_across_jobs_and_single_map_builds(project: Path, tmp_path: Path) -> None:
    serial = built(project, "-j", "1")
    assert {"map_000.tmx", "map_005.tmx", "previews/map_003.png", "tilesets/symbols.tsx", "tilesets/symbols.png", "manifest.json"} <= set(serial)

    other = tmp_path / "other"
    shutil.copytree(project / "recipes", other / "recipes")
    assert built(other, "-j", "2") == serial  # manifest.json included: it holds no clock or path

    single = tmp_path / "single"
    shutil.copytree(project / "recipes", single / "recipes")
    out = pcg("build", "recipes", "--map", "4", cwd=single).stdout
    assert "built 1/1 maps asked for (the pack has 6)" in out
    alone = tree_digests(single / PACK)
    for name in ("map_004.tmx", "previews/map_004.png", "tilesets/symbols.tsx", "tilesets/symbols.png"):
        assert alone[name] == serial[name]
    assert "map_003.tmx" not in alone


def test_map_index_out_of_range_is_an_error(project: Path) -> None:
    proc = pcg("build", "recipes", "--map", "6", cwd=project, check=False)
    assert proc.returncode == 1
    assert "--map 6: the pack has maps 0..5" in proc.stderr
    assert "error: --map: nothing was done, as a pack lacks that map (name the recipes whose packs have it)" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_second_build_runs_nothing_and_says_so(project: Path) -> None:
    first = pcg("build", "recipes", "-j", "1", cwd=project)
    assert "built 6/6 maps" in first.stdout
    second = pcg("build", "recipes", cwd=project)
    assert "Nothing to do" in second.stdout
    assert "built" not in second.stdout


def edit(project: Path, old: str, new: str) -> None:
    path = project / "recipes" / "small.toml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_explain_takes_a_pack_as_the_other_commands_do(project: Path) -> None:
    built(project)
    edit(project, "cells = [9, 7]", "cells = [10, 7]")
    by_recipe = pcg("explain", "recipes/small.toml", cwd=project).stdout
    assert "params changed (cells: [9,7] -> [10,7])" in by_recipe
    for pack in ("small", "exports/small", "exports/small/manifest.json"):
        assert pcg("explain", pack, cwd=project).stdout == by_recipe, pack
    # A recipe file by another name is still a recipe, as `pcg build` takes it.
    shutil.copy(project / "recipes" / "small.toml", project / "small.recipe")
    assert "params changed (cells: [9,7] -> [10,7])" in pcg("explain", "small.recipe", cwd=project).stdout


def test_explain_check_fails_a_stale_pack_and_json_says_why(project: Path) -> None:
    # CI: "the exports committed are what the recipes make", read by a script, not a person.
    write_recipe(project, "other", SMALL_RECIPE.replace('name = "small"', 'name = "other"'))
    built(project)
    assert pcg("explain", "--check", cwd=project).returncode == 0
    edit(project, "cells = [9, 7]", "cells = [10, 7]")
    stale = pcg("explain", "--check", cwd=project, check=False)
    assert stale.returncode == 1 and stale.stderr == "error: small: not up to date (1 of 2 packs); `pcg build` makes it\n", stale.stderr
    assert pcg("explain", cwd=project).returncode == 0  # without --check, explaining is no failure
    doc = json.loads(pcg("explain", "--format", "json", cwd=project).stdout)
    assert doc["format"] == 1 and [p["pack"] for p in doc["packs"]] == ["other", "small"]
    other, small = doc["packs"]
    assert other["up_to_date"] and not small["up_to_date"] and small["rebuild"] == [0, 1, 2, 3, 4, 5]
    assert small["recipe"] == "recipes/small.toml" and small["folder"] == "exports/small" and small["maps"] == 6 and small["seeds"] == []
    maze = small["stages"][0]
    assert maze["status"] == "stale" and maze["stale_maps"] == 6 and maze["cached_maps"] == 0
    assert maze["reasons"] == [{"reason": "params changed (cells: [9,7] -> [10,7])", "maps": 6}]
    exporter = next(s for s in small["stages"] if s["kind"] == "export.tmx")
    assert exporter["cached_maps"] is None and exporter["reasons"] == [{"reason": "input 'maze' changed", "maps": 6}], exporter
    edit(project, "cells = [10, 7]", "cells = [9, 7]")
    edit(project, "maps = 6", "maps = 4")  # nothing to run, but two maps' files to remove: not up to date
    small = json.loads(pcg("explain", "small", "--format", "json", "--check", cwd=project, check=False).stdout)["packs"][0]
    assert small["rebuild"] == [] and small["obsolete"] == [4, 5] and not small["up_to_date"]
    pcg("pin", "small", "2", "--seed", "42", cwd=project)
    pinned = json.loads(pcg("explain", "small", "--format", "json", cwd=project).stdout)["packs"][0]
    assert pinned["seeds"] == [{"map": 2, "seed": 42, "rerolls": 0, "in_pack": True}]
    (project / "recipes" / "small.toml").rename(project / "recipes" / "renamed.toml")  # another recipe's folder now
    taken = pcg("explain", "recipes/renamed.toml", "--check", cwd=project, check=False)
    assert taken.returncode == 1 and "Up to date" not in taken.stdout and "refuses to replace it without --force" in taken.stdout, taken.stdout
    assert taken.stderr == (
        "error: small: its folder exports/small was built from recipes/small.toml; `pcg build recipes/renamed.toml --force` gives it to that recipe\n"
    ), taken.stderr
    bad = pcg("explain", "--format", "yaml", cwd=project, check=False)
    assert bad.returncode == 1 and bad.stderr == "error: --format: table or json (got 'yaml')\n"


def test_explain_cuts_a_long_changed_param_where_it_changed() -> None:
    from pipeline.building.plan import _difference

    layers = '[{"autotile":true,"name":"floor","tile":"floor"},{"autotile":%s,"name":"walls"}]'
    old, new = _difference(layers % "true", layers % "false")
    assert "true" in old and "false" in new and old.startswith("...") and len(new) < 40
    assert _difference("[9,7]", "[10,7]") == ("[9,7]", "[10,7]")


def test_changing_one_param_reruns_that_stage_and_downstream_only(project: Path) -> None:
    before = built(project)
    edit(project, "tile_size = 8", "tile_size = 12")
    explain = pcg("explain", "recipes/small.toml", cwd=project).stdout
    assert "params changed (tile_size: 8 -> 12)" in explain
    out = pcg("build", "recipes", "-j", "1", cwd=project).stdout
    assert "ran tmx x6)" in out  # neither the maze nor the colour map ran
    after = tree_digests(project / PACK)
    assert after["colour_maps/map_000.png"] == before["colour_maps/map_000.png"]
    assert after["map_000.tmx"] != before["map_000.tmx"]
    assert after["previews/map_000.png"] != before["previews/map_000.png"]  # drawn from the new tilesheet

    edit(project, "cells = [9, 7]", "cells = [10, 7]")
    explain = pcg("explain", "recipes/small.toml", cwd=project).stdout
    assert "params changed (cells: [9,7] -> [10,7])" in explain
    assert "input 'maze' changed" in explain
    out = pcg("build", "recipes", "-j", "1", cwd=project).stdout
    assert "ran maze x6, tmx x6, preview x6)" in out


def test_explain_names_files_missing_or_modified_on_disk(project: Path) -> None:
    built(project)
    (project / PACK / "map_002.tmx").unlink()
    (project / PACK / "previews" / "map_001.png").write_bytes(b"edited")
    explain = pcg("explain", "recipes/small.toml", cwd=project).stdout
    assert "output missing on disk (map_002.tmx)" in explain
    assert "output modified on disk (previews/map_001.png)" in explain
    assert "would rebuild 2 of 6" in explain
    proc = pcg("build", "recipes", "-j", "1", cwd=project)
    assert "built 2/6 maps" in proc.stdout
    assert "ran tmx x2)" in proc.stdout  # the mazes come from the cache; the preview is the TMX stage's
    # The edited file is said to be lost; the missing one is not an edit.
    assert proc.stderr.startswith(f"warning: recipes/small.toml: {PACK / 'previews' / 'map_001.png'}: edited since the last build; made again"), proc.stderr
    assert "map_002" not in proc.stderr
    assert "Nothing to do" in pcg("build", "recipes", cwd=project).stdout
    # A reason per map edited: three shown, and how many more there are.
    for index in range(5):
        with (project / PACK / f"map_{index:03d}.tmx").open("a") as f:
            f.write("<!-- edited -->")
    explain = " ".join(pcg("explain", "recipes/small.toml", cwd=project).stdout.split())
    assert "output modified on disk (map_000.tmx) (1 map)" in explain and "; and 2 other reasons" in explain, explain
    warned = pcg("build", "recipes", "-q", cwd=project).stderr
    assert warned.splitlines() == [
        f"warning: recipes/small.toml: {PACK / 'map_000.tmx'} and 4 other files: edited since the last build; made again"
        " (a build owns its files: keep edits outside exports/, where load.tmx reads a touched-up map back)"
    ], warned
    # Said whatever else rebuilds the map (--force here), and a file every map shares once.
    with (project / PACK / "map_002.tmx").open("a") as f:
        f.write("<!-- edited -->")
    with (project / PACK / "tilesets" / "symbols.tsx").open("a") as f:
        f.write("<!-- edited -->")
    warned = pcg("build", "recipes", "-q", "--force", cwd=project).stderr
    assert f"{PACK / 'map_000.tmx'}" not in warned and f"{PACK / 'map_002.tmx'} and 1 other file: edited" in warned, warned


def test_a_stage_version_bump_is_explained(project: Path) -> None:
    from pipeline.stages.maze.backtracker import Backtracker

    built(project)
    manifest_path = project / PACK / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["stages"]["maze"]["version"] = 0
    for entry in manifest["maps"]:
        entry["stages"]["maze"]["key"] = "0" * 64
    manifest_path.write_text(json.dumps(manifest))
    explain = pcg("explain", "recipes/small.toml", cwd=project).stdout
    assert f"stage version changed (0 -> {Backtracker.version})" in explain


def test_comment_edit_rewrites_the_manifest_and_runs_nothing(project: Path) -> None:
    built(project)
    path = project / "recipes" / "small.toml"
    path.write_text("# a new comment\n" + path.read_text())
    out = pcg("build", "recipes", cwd=project).stdout
    assert "Nothing to do" in out
    manifest = json.loads((project / PACK / "manifest.json").read_text())
    assert manifest["recipe"]["text"].startswith("# a new comment")


def test_shrinking_a_pack_removes_its_old_maps(project: Path) -> None:
    built(project)
    edit(project, "maps = 6", "maps = 4")
    out = pcg("build", "recipes", cwd=project).stdout
    assert "removed 6 files" in out  # two maps' .tmx, preview and colour map; the shared tileset stays
    files = tree_digests(project / PACK)
    assert "map_003.tmx" in files and "map_004.tmx" not in files and "previews/map_005.png" not in files
    manifest = json.loads((project / PACK / "manifest.json").read_text())
    assert [m["index"] for m in manifest["maps"]] == [0, 1, 2, 3]


def test_a_stage_no_exporter_reads_is_a_warning_and_explain_says_unused(project: Path) -> None:
    """A filter that nothing exports would pass silently, however wrong its test: it never runs."""
    built(project)
    recipe = project / "recipes" / "small.toml"
    recipe.write_text(recipe.read_text() + '\n[stage.loose]\nuse = "filter"\ninput = "maze"\nwhere = "dead_ends > 1"\n')
    build = pcg("build", "recipes", "-q", cwd=project)
    assert build.stderr.strip() == "warning: recipes/small.toml: stage.loose: no export stage reads it, directly or through other stages, so it never runs"
    explain = pcg("explain", "recipes/small.toml", cwd=project)
    assert re.search(r"^loose +filter +unused +no export stage reads it: it never runs$", explain.stdout, re.M), explain.stdout
    loose = json.loads(pcg("explain", "recipes/small.toml", "--format", "json", cwd=project).stdout)["packs"][0]["stages"][-1]
    assert (loose["stage"], loose["status"], loose["stale_maps"], loose["reasons"]) == ("loose", "unused", 0, [])


def test_strict_makes_warnings_errors(project: Path) -> None:
    # CI: a recipe with a warning is not built; a warning found while building fails the run.
    recipe = project / "recipes" / "small.toml"
    good = recipe.read_text()
    recipe.write_text(good + '\n[stage.loose]\nuse = "filter"\ninput = "maze"\nwhere = "dead_ends > 1"\n')
    strict = pcg("build", "recipes", "--strict", cwd=project, check=False)
    assert strict.returncode == 1 and not (project / PACK).exists()
    assert strict.stderr.strip() == (
        "error: recipes/small.toml: stage.loose: no export stage reads it, directly or through other stages, so it never runs"
        " (a warning: not built, as --strict makes warnings errors)"
    ), strict.stderr
    (project / "tilesets").mkdir()
    (project / "tilesets" / "m.toml").write_text('tile_size = 8\n[colors]\nwal = "#000000"\n')
    recipe.write_text(good.replace('tile_size = 8\n', 'tileset = "../tilesets/m.toml"\n', 1))
    built_anyway = pcg("build", "recipes", "--strict", "-q", cwd=project, check=False)
    assert built_anyway.returncode == 1 and (project / PACK / "map_000.tmx").is_file()
    assert built_anyway.stderr.splitlines()[-1] == "error: --strict: the 1 warning above, found while building, counts as an error", built_anyway.stderr
    lenient = pcg("build", "recipes", "-q", "--force", cwd=project)  # without it, a warning is a warning
    assert lenient.returncode == 0 and "did you mean 'wal'?" in lenient.stderr, lenient.stderr


def test_every_failing_exporter_of_a_map_is_told_in_one_build(project: Path) -> None:
    # A chest tile that two tilesets lack: both exporters are named at once, not one per run.
    shutil.copytree(TILESETS, project / "tilesets")
    write_recipe(project, "small", SMALL_RECIPE.replace('tile_size = 8\n', 'tileset = "../tilesets/maze.toml"\ndir = "a"\n').replace(
        '[stage.tmx]\nuse = "export.tmx"\ninput = "maze"',
        '[stage.items]\nuse = "place.items"\ninput = "maze"\ntype = "gem"\ntile = "gem"\ncount = 1\n\n[stage.tmx]\nuse = "export.tmx"\ninput = "items"',
    ) + '\n[stage.tmx2]\nuse = "export.tmx"\ninput = "items"\ntileset = "../tilesets/caves.toml"\ndir = "b"\n')
    proc = pcg("build", "recipes", cwd=project, check=False)
    assert proc.returncode == 1 and "6 maps failed" in proc.stderr, proc.stderr
    rows = [line.split()[2] for line in proc.stderr.splitlines() if line.startswith("recipes/small.toml")]
    assert rows == ["tmx", "tmx2"], proc.stderr


def test_emptied_folders_go_but_never_outside_the_pack(tmp_path: Path) -> None:
    from pipeline.building.builder import _unlink

    pack, outside = tmp_path / "exports" / "p", tmp_path / "assets"
    (pack / "previews").mkdir(parents=True)
    (pack / "previews" / "m.png").write_bytes(b"x")
    _unlink(pack, "previews/m.png")
    assert pack.is_dir() and not (pack / "previews").exists()
    # A `dir` linked into a game's assets: the folder behind the link stays.
    (outside / "maps").mkdir(parents=True)
    (outside / "maps" / "m.tmx").write_bytes(b"x")
    (pack / "linked").symlink_to(outside)
    _unlink(pack, "linked/maps/m.tmx")
    assert (outside / "maps").is_dir()
    # A path that climbs out (a hand-edited manifest): nothing above the pack goes.
    (tmp_path / "exports" / "other").mkdir()
    (tmp_path / "exports" / "other" / "x.png").write_bytes(b"x")
    _unlink(pack, "../other/x.png")
    assert (tmp_path / "exports" / "other").is_dir()


def test_manifest_records_seeds_versions_and_hashes(project: Path) -> None:
    files = built(project)
    manifest = json.loads((project / PACK / "manifest.json").read_text())
    assert manifest["bit_generator"] == "PCG64"
    assert manifest["numpy"] and manifest["tool_version"]
    assert len(manifest["recipe"]["sha256"]) == 64
    entry = manifest["maps"][3]
    assert entry["stages"]["maze"]["seed"][0] == 3 and entry["stages"]["maze"]["seed"][2] == 42
    assert entry["stats"]["cells"] == 63
    for rel, digest in entry["files"].items():
        assert files[rel] == digest


def test_verify_rebuilds_and_catches_tampering(project: Path) -> None:
    built(project)
    ok = pcg("verify", "exports/small/manifest.json", cwd=project)
    assert "OK" in ok.stdout and "rebuild byte for byte" in ok.stdout
    # The manifest carries the recipe, so editing the recipe afterwards does not break verification.
    edit(project, "cells = [9, 7]", "cells = [12, 7]")
    assert pcg("verify", "exports/small/manifest.json", cwd=project).returncode == 0
    tampered = project / PACK / "map_001.tmx"
    tampered.write_text(tampered.read_text().replace('value="42"', 'value="43"'))
    bad = pcg("verify", "exports/small/manifest.json", cwd=project, check=False)
    assert bad.returncode == 1
    assert "map_001.tmx was modified on disk" in bad.stderr
    manifest = json.loads((project / PACK / "manifest.json").read_text())
    manifest["maps"][2]["files"]["map_002.tmx"] = "f" * 64
    (project / PACK / "manifest.json").write_text(json.dumps(manifest))
    bad = pcg("verify", "exports/small/manifest.json", cwd=project, check=False)
    assert bad.returncode == 1
    assert "map 2: map_002.tmx rebuilds differently" in bad.stderr


def test_verify_and_explain_without_a_pack_take_every_one(project: Path) -> None:
    """As `pcg build` takes recipes/: every pack under exports/, every recipe under recipes/."""
    assert "no built pack to verify" in pcg("verify", cwd=project, check=False).stderr
    write_recipe(project, "other", SMALL_RECIPE.replace('name = "small"', 'name = "other"'))
    built(project)
    out = pcg("verify", cwd=project).stdout
    assert [line.split(":")[1].strip() for line in out.splitlines()] == ["other", "small"], out
    manifest = json.loads((project / "exports" / "other" / "manifest.json").read_text())
    manifest["maps"][2]["files"]["map_002.tmx"] = "f" * 64
    (project / "exports" / "other" / "manifest.json").write_text(json.dumps(manifest))
    bad = pcg("verify", cwd=project, check=False)
    # Several packs' problems together: each line names its pack.
    assert bad.returncode == 1 and "error: exports/other: map 2: map_002.tmx rebuilds differently" in bad.stderr, bad.stderr
    assert "OK: small:" in bad.stdout
    explained = pcg("explain", cwd=project).stdout
    assert "other (recipes/other.toml)" in explained and "small (recipes/small.toml)" in explained


def test_list_stages_schema_and_clean(project: Path) -> None:
    listing = pcg("list", cwd=project).stdout
    assert "small" in listing and "6 stale" in listing
    built(project)
    assert "up to date" in pcg("list", cwd=project).stdout
    assert "maze.backtracker" in pcg("stages", cwd=project).stdout
    one = pcg("stages", "maze.backtracker", cwd=project).stdout
    assert "cells: [int > 0 <= 4096 | [min, max], int > 0 <= 4096 | [min, max]] = [20, 20]" in one and "perfect maze" in one
    assert "stats it adds: cells, dead_ends, dead_end_pct" in one  # what order_by and where may read
    pcg("clean", "small", cwd=project)
    # The cache is gone but for its lock files, which a build may be waiting on.
    assert not (project / PACK).exists() and [p.name for p in (project / ".pcg-cache").iterdir()] == ["locks"]
    refused = pcg("clean", "recipes", "--out", ".", cwd=project, check=False)
    assert refused.returncode == 1 and (project / "recipes" / "small.toml").exists()


@pytest.mark.parametrize("args", [["--help"], ["build", "--help"], ["explain", "--help"], ["verify", "--help"], ["watch", "--help"]])
def test_help_everywhere(project: Path, args: list[str]) -> None:
    shown = pcg(*args, cwd=project).stdout
    assert "Usage" in shown
    assert "<bool>" not in shown  # a flag takes no value: `--force <bool>` read as if it did


def test_map_builds_then_a_shrink_leave_no_orphans(project: Path) -> None:
    built(project)
    edit(project, "maps = 6", "maps = 4")
    pcg("build", "recipes", "-q", "--map", "1", cwd=project)
    files = tree_digests(project / PACK)
    assert "map_005.tmx" not in files and "previews/map_004.png" not in files
    # Dropping an exporter removes what it wrote.
    path = project / "recipes" / "small.toml"
    path.write_text(path.read_text().split("[stage.preview]")[0])
    out = pcg("build", "recipes", cwd=project).stdout
    assert "removed 4 files that no map writes any more" in out
    assert not any(name.startswith("colour_maps/") for name in tree_digests(project / PACK))
    assert not (project / PACK / "colour_maps").exists()  # nor the folder it leaves empty
    # A folder that holds a file of the user's stays, with the file.
    (project / PACK / "previews" / "notes.txt").write_text("mine")
    edit(project, 'tile_size = 8\n', 'tile_size = 8\npreview = false\n')
    assert "removed 5 files" in pcg("build", "recipes", cwd=project).stdout  # 4 previews, and the sheet of them
    assert [p.name for p in (project / PACK / "previews").iterdir()] == ["notes.txt"]


def test_a_map_build_after_editing_the_recipe_keeps_a_verifiable_pack(project: Path) -> None:
    built(project)
    edit(project, "cells = [9, 7]", "cells = [11, 7]")
    pcg("build", "recipes", "-q", "--map", "1", cwd=project)
    manifest = json.loads((project / PACK / "manifest.json").read_text())
    shas = {m["index"]: m["recipe"] for m in manifest["maps"]}
    assert shas[1] == manifest["recipe"]["sha256"] and shas[0] != shas[1]
    assert "cells = [9, 7]" in manifest["earlier"]["recipes"][shas[0]]["text"]
    # Maps 0, 2..5 still come from the old recipe: verify rebuilds each map from its own.
    assert "rebuild byte for byte" in pcg("verify", "exports/small", cwd=project).stdout
    explain = pcg("explain", "recipes/small.toml", cwd=project).stdout
    assert "params changed (cells: [9,7] -> [11,7]) (5 maps)" in explain
    pcg("build", "recipes", "-q", cwd=project)
    manifest = json.loads((project / PACK / "manifest.json").read_text())
    assert "earlier" not in manifest


def test_a_damaged_manifest_means_a_full_rebuild_not_a_crash(project: Path) -> None:
    first = built(project)
    (project / PACK / "manifest.json").write_text('{"format": 1, "maps": [{"index": "zero"}]}')
    # Said, not done in silence: explain gives the cause, build warns of it.
    assert "manifest.json damaged, unreadable or of another format" in pcg("explain", "recipes/small.toml", cwd=project).stdout
    proc = pcg("build", "recipes", "-j", "1", cwd=project)
    assert "built 6/6 maps" in proc.stdout and "0 files written" in proc.stdout  # same bytes: nothing rewritten
    assert "warning: recipes/small.toml: exports/small/manifest.json: damaged, unreadable or of another format, so the maps were built anew" in proc.stderr
    assert tree_digests(project / PACK) == first
    assert "warning" not in pcg("build", "recipes", cwd=project).stderr  # repaired


def test_the_manifest_does_not_depend_on_how_the_recipe_is_named(project: Path, tmp_path: Path) -> None:
    first = built(project)
    other = tmp_path / "other"
    shutil.copytree(project / "recipes", other / "recipes")
    pcg("build", str((other / "recipes" / "small.toml").resolve()), "-q", cwd=other)
    assert tree_digests(other / PACK)["manifest.json"] == first["manifest.json"]


def test_another_recipe_cannot_silently_take_over_a_pack(project: Path) -> None:
    first = built(project)
    (project / "elsewhere").mkdir()
    (project / "elsewhere" / "copy.toml").write_text((project / "recipes" / "small.toml").read_text().replace("seed = 42", "seed = 5"))
    proc = pcg("build", "elsewhere/copy.toml", cwd=project, check=False)
    assert proc.returncode == 1
    assert "elsewhere/copy.toml: pack.name: exports/small was built from recipes/small.toml" in proc.stderr
    assert tree_digests(project / PACK) == first
    assert "built 6/6 maps" in pcg("build", "elsewhere/copy.toml", "--force", cwd=project).stdout


def test_maps_remember_the_environment_that_built_them(project: Path) -> None:
    from pipeline.building.manifest import ENV_KEYS, environment_id

    built(project)
    path = project / PACK / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["numpy"] = "1.0.0"  # as if an older numpy had built the pack
    old_id = environment_id({k: manifest[k] for k in ENV_KEYS})
    for entry in manifest["maps"]:
        entry["environment"] = old_id
    path.write_text(json.dumps(manifest))
    assert "Nothing to do" in pcg("build", "recipes", cwd=project).stdout
    manifest = json.loads(path.read_text())
    assert manifest["numpy"] != "1.0.0"  # the latest build's environment ...
    assert {m["environment"] for m in manifest["maps"]} == {old_id}  # ... did not make these files
    assert manifest["earlier"]["environments"][old_id]["numpy"] == "1.0.0"
    proc = pcg("verify", "exports/small/manifest.json", cwd=project)
    assert "numpy differs: maps were built with 1.0.0" in proc.stderr


def test_two_builds_of_one_pack_take_turns(project: Path) -> None:
    from pipeline.lock import pack_locks

    with pack_locks(project / ".pcg-cache" / "locks", ["small"], lambda pack: None):
        proc = subprocess.Popen(
            [sys.executable, "-m", "pipeline", "build", "recipes", "-j", "1"],
            cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        assert proc.stdout is not None
        assert "waiting for another pcg build of small" in proc.stdout.readline()
        assert not (project / PACK).exists()  # nothing written while the other build holds the pack
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "built 6/6 maps" in out


def test_every_example_recipe_builds_and_its_maps_load_in_pytmx(examples: Path) -> None:
    import pytmx

    tmp_path = examples
    tmx = sorted((tmp_path / "exports").rglob("*.tmx"))
    assert len(tmx) >= 60
    rule_packs = {"dfs_maze", "growth_maze", "nystrom", "snake", "flowers", "retracted"}
    maze_packs = {"labyrinths", "megamaze", "rivers", "uniform", "branching", "biased", "loops", "postprocessed", "distinct"}
    for path in tmx:
        props = pytmx.TiledMap(str(path)).properties
        pack = path.relative_to(tmp_path / "exports").parts[0]
        if pack in rule_packs:
            assert props["rewrite_steps"] > 0, path
        elif pack in maze_packs:
            assert {"cells", "dead_end_pct", "solution_pct", "diameter", "loops", "straightness"} <= set(props), path
        elif pack == "flood_it":
            assert props["difficulty"] == props["moves_optimal"] <= props["moves_greedy"], path
        elif pack == "levels":  # a level graph laid out: its structure's stats
            assert props["rooms"] >= 2 and props["critical_path"] >= 2 and props["keys"] >= 1, path
        elif pack == "handmade":  # the map's own properties, then the keys placed on it
            assert props["author"] == "hand-made" and props["items_key"] == 3 and props["regions"] == 1, path
        else:  # dungeons and caves: placed on the map
            assert props["path_length"] > 0, path
        if pack == "torchlit":  # the plugin stage's own stat
            assert props["torches"] > 0, path
    stats = pcg("stats", "recipes/comparison.toml", cwd=tmp_path, check=True).stdout
    for name in ("maze.aldous_broder", "maze.prim_modified", "maze.spiral", "dead_end_pct", "straightness"):
        assert name in stats


@needs_tiled
def test_real_tiled_opens_a_map_of_every_example_folder(examples: Path, tmp_path: Path) -> None:
    """One map per folder of every example pack through `tiled --export-map json`: it must
    load, with our tiles and our objects (spawn, exit, rooms, chests) and their properties."""
    import pytmx

    from conftest import tiled_env

    firsts = {}
    for path in sorted((examples / "exports").rglob("*.tmx")):
        firsts.setdefault(path.parent, path)
    assert len(firsts) >= 20
    for path in firsts.values():
        out = tmp_path / (path.relative_to(examples / "exports").as_posix().replace("/", "-") + ".tmj")
        proc = subprocess.run(["tiled", "--export-map", "json", str(path), str(out)], env=tiled_env(), capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, (path, proc.stderr)
        data = json.loads(out.read_text())
        ours = pytmx.TiledMap(str(path))
        tiles = next(layer for layer in data["layers"] if layer["type"] == "tilelayer")
        assert (data["width"], data["height"]) == (ours.width, ours.height)
        if isinstance(tiles["data"], list):  # CSV maps; base64 ones stay encoded in JSON
            assert len(tiles["data"]) == ours.width * ours.height
        groups = [layer for layer in data["layers"] if layer["type"] == "objectgroup"]
        objects = [o for g in groups for o in g["objects"]]
        assert [(o["name"], o.get("type", o.get("class"))) for o in objects] == [(o.name, o.type) for o in ours.objects], path
        for o, mine in zip(objects, ours.objects):
            theirs = {p["name"]: p["value"] for p in o.get("properties", [])}
            if "gid" in o:  # pytmx also hands a tile object its tile's properties; Tiled lists the object's own
                assert theirs.items() <= dict(mine.properties).items(), path
            else:
                assert theirs == dict(mine.properties), path


def test_verify_reads_the_files_beside_the_recipe_from_any_folder(tmp_path: Path) -> None:
    # A CI step runs `pcg verify levels/exports/x` from the repository's root: the tileset the
    # recipe names is found beside the recipe, not beside the folder verify runs in.
    project = tmp_path / "levels"
    shutil.copytree(TILESETS, project / "tilesets")
    write_recipe(project, "small", SMALL_RECIPE.replace('tile_size = 8', 'tileset = "../tilesets/stone.toml"'))
    assert "tileset" in (project / "recipes" / "small.toml").read_text()
    pcg("build", "-q", cwd=project)
    for target in ("levels/exports/small", str(project / "exports" / "small")):
        assert "OK: small" in pcg("verify", target, cwd=tmp_path).stdout
    assert "OK: small" in pcg("verify", "--out", "levels/exports", cwd=tmp_path).stdout
