"""`place.prefabs`: hand-made Tiled rooms stamped into generated maps where they fit."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import pytmx
from scipy import ndimage

from conftest import RECIPES, TILED, TILESETS, TMXRASTERIZER, needs_tiled, pcg, tiled_env
from pipeline import registry
from pipeline.errors import PipelineError, RecipeError, Rejected
from pipeline.level import Level, MapObject
from pipeline.recipe.load import load_recipe
from pipeline.tiled.as_level.file import read_map_file
from pipeline.stages.place.prefabs import Prefabs, _stays_connected

PREFABS = RECIPES / "prefabs"
PLACED = re.compile(r"^(?P<file>.+) at \((?P<x>\d+), (?P<y>\d+)\) rot (?P<rot>0|90|180|270)(?P<mirrored> mirrored)?$")
FOUR = ndimage.generate_binary_structure(2, 1)


def dungeon(kind: str = "dungeon.bsp", seed: int = 0, **params: object) -> Level:
    stage = registry.get(kind).model_validate({"size": [61, 41], **params})
    return stage.run([], np.random.default_rng(seed))


def prefabs(folder: Path, **params: object) -> Prefabs:
    return Prefabs.model_validate({"prefabs": "prefabs/*.tmx", **params}, context={"recipe_dir": folder})


def names(level: Level) -> np.ndarray:
    return np.array([s.name for s in level.alphabet])[level.tiles]


def walkable(level: Level) -> np.ndarray:
    return names(level) != "wall"


def areas(level: Level) -> int:
    return int(ndimage.label(walkable(level), structure=FOUR)[1])


def turned(a: np.ndarray, rot: int, mirrored: bool) -> np.ndarray:
    """The reference turn: mirror left-right, then clockwise by `rot` degrees."""
    if mirrored:
        a = np.fliplr(a)
    return np.rot90(a, -(rot // 90))


def placements(level: Level) -> list[dict[str, object]]:
    out = []
    for k in range(1, int(level.properties["prefabs"]) + 1):
        m = PLACED.match(str(level.properties[f"prefab_{k}"]))
        assert m, level.properties[f"prefab_{k}"]
        out.append({"file": m["file"], "x": int(m["x"]), "y": int(m["y"]), "rot": int(m["rot"]), "mirrored": bool(m["mirrored"]), "k": k})
    return out


def write_prefab(folder: Path, name: str, rows: list[str], objects: str = "") -> None:
    """A prefab TMX (gids of recipes/prefabs/prefab.tsx: 1 wall, 2 floor, 3 door, 4 carpet, 5 gold, 6 rune)."""
    (folder / "prefabs").mkdir(exist_ok=True)
    for f in ("prefab.tsx", "prefab.png"):
        if not (folder / "prefabs" / f).exists():
            shutil.copy(PREFABS / f, folder / "prefabs" / f)
    h, w = len(rows), len(rows[0].split())
    csv = ",\n".join(",".join(r.split()) for r in rows)
    (folder / "prefabs" / f"{name}.tmx").write_text(f"""<?xml version="1.0" encoding="UTF-8"?>
<map version="1.10" tiledversion="1.10.2" orientation="orthogonal" renderorder="right-down" width="{w}" height="{h}" tilewidth="16" tileheight="16" infinite="0" nextlayerid="3" nextobjectid="9">
 <tileset firstgid="1" source="prefab.tsx"/>
 <layer id="1" name="tiles" width="{w}" height="{h}">
  <data encoding="csv">
{csv}
</data>
 </layer>
 <objectgroup id="2" name="objects">
{objects}
 </objectgroup>
</map>
""")


# A marker prefab: a coin (point) on its one gold tile, a rug (rectangle) on exactly its two
# carpet tiles, whatever way it is turned.
MARKER_ROWS = ["1 1 3 1 1", "1 5 2 4 1", "1 2 2 4 1", "1 1 1 1 1"]
MARKER_OBJECTS = """  <object id="1" name="coin" type="coin" x="24" y="24"><point/></object>
  <object id="2" name="rug" type="rug" x="48" y="16" width="16" height="32">
   <properties><property name="soft" type="bool" value="true"/></properties>
  </object>
  <object id="3" name="path" type="path" x="24" y="24"><polyline points="0,0 32,16"/></object>"""


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    write_prefab(tmp_path, "marker", MARKER_ROWS, MARKER_OBJECTS)
    return tmp_path


# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_prefab_tiles_appear_verbatim_up_to_their_turn_and_empty_cells_keep_the_map(seed: int) -> None:
    stage = prefabs(RECIPES, count=[2, 3], rotate=True, mirror=True, attempts=1)
    base = dungeon(size=[81, 51], seed=seed)
    try:
        out = stage.run([base], np.random.default_rng(seed))
    except Rejected:
        pytest.skip("no room in this map (the build would make it again)")
    before, after = names(base), names(out)
    seen = placements(out)
    assert len(seen) == out.properties["prefabs"] >= 2
    painted = np.zeros(after.shape, dtype=bool)
    for p in seen:
        loaded = read_map_file(RECIPES, str(p["file"]))
        tiles = turned(np.array([s.name for s in loaded.level.alphabet])[loaded.level.tiles], p["rot"], p["mirrored"])  # type: ignore[arg-type]
        filled = turned(loaded.filled, p["rot"], p["mirrored"])  # type: ignore[arg-type]
        h, w = tiles.shape
        y, x = p["y"], p["x"]
        window = after[y : y + h, x : x + w]  # type: ignore[misc]
        assert (window[filled] == tiles[filled]).all()
        assert not painted[y : y + h, x : x + w][filled].any(), "prefabs overlap"  # type: ignore[misc]
        painted[y : y + h, x : x + w][filled] = True  # type: ignore[misc]
    assert (after[~painted] == before[~painted]).all()
    # Symbols merge by name: the map's come first, unchanged.
    assert out.alphabet[: len(base.alphabet)] == base.alphabet


def test_every_map_gets_the_same_alphabet_whatever_was_placed() -> None:
    stage = prefabs(RECIPES, count=1)
    alphabets = set()
    for seed in range(4):
        out = stage.run([dungeon(size=[81, 51])], np.random.default_rng(seed))
        alphabets.add(tuple(s.name for s in out.alphabet))
    assert len(alphabets) == 1


@pytest.mark.parametrize("seed", range(8))
def test_objects_move_turn_and_mirror_with_their_prefab(marker: Path, seed: int) -> None:
    stage = prefabs(marker, count=3, rotate=True, mirror=True)
    base = dungeon(seed=seed)
    out = stage.run([base], np.random.default_rng(seed))
    grid = names(out)
    assert out.objects[: len(base.objects)] == base.objects
    new = out.objects[len(base.objects) :]
    for k in (1, 2, 3):
        mine = {o.type: o for o in new if o.properties.get("prefab_index") == k}
        assert set(mine) == {"prefab", "coin", "rug", "path"}
        coin, rug, box = mine["coin"], mine["rug"], mine["prefab"]
        assert coin.properties["prefab"] == "prefabs/marker.tmx"
        assert grid[int(coin.y), int(coin.x)] == "gold" and (coin.x % 1, coin.y % 1) == (0.5, 0.5)
        # The rug covers exactly the carpet tiles of this prefab.
        covered = grid[int(rug.y) : int(rug.y + rug.h), int(rug.x) : int(rug.x + rug.w)]
        assert covered.size == 2 and (covered == "carpet").all() and rug.properties["soft"] is True
        # The prefab's rectangle holds it all, its size turned with it.
        assert sorted((box.w, box.h)) == [4.0, 5.0] and box.name == "marker"
        assert box.x <= coin.x <= box.x + box.w and box.y <= coin.y <= box.y + box.h
        points = getattr(mine["path"], "points", ())
        if points:  # a polyline from the coin to the middle of a carpet tile
            (x0, y0), (x1, y1) = [(mine["path"].x + px, mine["path"].y + py) for px, py in points]
            assert (x0, y0) == (coin.x, coin.y)
            assert grid[int(y1), int(x1)] == "carpet" and (x1 % 1, y1 % 1) == (0.5, 0.5)


def test_all_eight_turns_place_the_marker_correctly(marker: Path) -> None:
    seen = set()
    for seed in range(40):
        out = prefabs(marker, count=1, rotate=True, mirror=True).run([dungeon(seed=seed % 3)], np.random.default_rng(seed))
        seen.add(str(out.properties["prefab_1"]).split(" rot ")[1])
        coin = next(o for o in out.objects if o.type == "coin")
        assert names(out)[int(coin.y), int(coin.x)] == "gold"
    assert len(seen) == 8


@pytest.mark.parametrize("kind", ["dungeon.bsp", "dungeon.rooms_and_mazes", "dungeon.cellular_caves"])
def test_the_walkable_area_stays_one_and_every_door_meets_it(kind: str) -> None:
    placed = 0
    for seed in range(4):
        base = dungeon(kind, seed=seed)
        assert areas(base) == 1
        try:
            out = prefabs(RECIPES, count=2, rotate=True, mirror=True, attempts=1).run([base], np.random.default_rng(seed))
        except Rejected:
            continue
        placed += 1
        assert areas(out) == 1
        walk = np.pad(walkable(out), 1)
        for p in placements(out):
            loaded = read_map_file(RECIPES, str(p["file"]))
            filled = turned(loaded.filled, p["rot"], p["mirrored"])  # type: ignore[arg-type]
            doors = turned(np.array([s.name for s in loaded.level.alphabet])[loaded.level.tiles] == "door", p["rot"], p["mirrored"]) & filled  # type: ignore[arg-type]
            outside = ~np.pad(filled, 1)
            for dy, dx in zip(*np.nonzero(doors)):
                y, x = p["y"] + dy + 1, p["x"] + dx + 1  # type: ignore[operator]
                touching = [
                    walk[y + ny, x + nx] for ny, nx in ((-1, 0), (1, 0), (0, -1), (0, 1)) if outside[dy + 1 + ny, dx + 1 + nx]
                ]
                assert any(touching), (p, dy, dx)
    assert placed >= 2


def test_the_quick_connectivity_test_agrees_with_labelling_the_whole_map() -> None:
    rng = np.random.default_rng(5)
    for _ in range(400):
        walk = rng.random((12, 14)) < rng.uniform(0.4, 0.8)
        filled = rng.random((4, 3)) < 0.8
        stamp = filled & (rng.random((4, 3)) < 0.5)
        y, x = int(rng.integers(0, 9)), int(rng.integers(0, 12))
        before = int(ndimage.label(walk, structure=FOUR)[1])
        after = walk.copy()
        after[y : y + 4, x : x + 3][filled] = stamp[filled]
        exact = int(ndimage.label(after, structure=FOUR)[1]) <= before
        assert _stays_connected(walk, filled, stamp, y, x, before) == exact


def test_a_prefab_never_cuts_a_corridor(tmp_path: Path) -> None:
    """One corridor across the rock from spawn to exit, and a prefab that fits only beside it
    or across it: it never cuts the way (the ends hold objects, which are never covered)."""
    text = "B wall #000000\nW floor #ffffff\n\n" + "\n".join(["B" * 30] * 4 + ["W" * 30] + ["B" * 30] * 4) + "\n"
    plain = Level.from_text(text)
    base = Level(tiles=plain.tiles, alphabet=plain.alphabet, objects=[MapObject("spawn", "spawn", 0.5, 4.5), MapObject("exit", "exit", 29.5, 4.5)])
    write_prefab(tmp_path, "block", ["1 3 1", "1 2 1", "1 1 1"])
    crossings = 0
    for seed in range(30):
        out = prefabs(tmp_path, rotate=True).run([base], np.random.default_rng(seed))
        labels = ndimage.label(walkable(out), structure=FOUR)[0]
        assert areas(out) == 1 and labels[4, 0] == labels[4, 29] != 0
        crossings += int((names(out)[4] != "floor").any())
    assert crossings == 0  # any wall on the corridor would cut it; its door alone is not room


def test_same_seed_same_map_and_other_seeds_differ() -> None:
    stage = prefabs(RECIPES, count=[1, 3], rotate=True, mirror=True, over=["wall"], attempts=1)
    base = dungeon(size=[81, 51])

    def run(seed: int) -> tuple[bytes, list[MapObject], dict[str, object]]:
        out = stage.run([base], np.random.default_rng(seed))
        return out.tiles.tobytes(), out.objects, out.properties

    results = {}
    for seed in range(6):
        try:
            results[seed] = run(seed)
        except Rejected:
            continue
        assert run(seed) == results[seed]
    assert len(results) >= 2 and len({r[0] for r in results.values()}) == len(results)


def test_over_keeps_prefabs_in_the_rock_and_map_objects_are_never_buried() -> None:
    base = dungeon(size=[81, 51])
    spots = np.argwhere(walkable(base))[::7]
    objects = [MapObject(f"item_{i}", "item", x + 0.5, y + 0.5) for i, (y, x) in enumerate(spots)]
    base = Level(tiles=base.tiles, alphabet=base.alphabet, layers=dict(base.layers), objects=objects, properties={})
    placed = 0
    for seed in range(4):
        try:
            out = prefabs(RECIPES, count=2, rotate=True, over=["wall"], attempts=1).run([base], np.random.default_rng(seed))
        except Rejected:
            continue
        placed += 1
        changed = out.tiles[: base.height] != base.tiles
        assert (names(base)[changed] == "wall").all()
        for o in objects:
            assert names(out)[int(o.y), int(o.x)] == names(base)[int(o.y), int(o.x)]
    assert placed >= 1


def test_layers_are_cleared_under_prefabs_and_properties_record_placements() -> None:
    base = dungeon(size=[81, 51])
    assert "room" in base.layers
    out = prefabs(RECIPES, count=2, rotate=True).run([base], np.random.default_rng(3))
    assert out.properties["prefabs"] == 2 and all(isinstance(v, (str, int, float, bool)) for v in out.properties.values())
    for p in placements(out):
        box = next(o for o in out.objects if o.type == "prefab" and o.properties["prefab_index"] == p["k"])
        assert (box.x, box.y) == (p["x"], p["y"]) and box.properties["prefab"] == p["file"]
        assert (box.properties["turned"], box.properties["mirrored"]) == (p["rot"], p["mirrored"])
        if p["file"] == "prefabs/vault.tmx":  # the prefab map's own properties ride on its rectangle
            assert box.properties["kind"] == "vault"
        painted = out.tiles[int(box.y) : int(box.y + box.h), int(box.x) : int(box.x + box.w)] != base.tiles[int(box.y) : int(box.y + box.h), int(box.x) : int(box.x + box.w)]
        assert (out.layers["room"][int(box.y) : int(box.y + box.h), int(box.x) : int(box.x + box.w)][painted] == 0).all()
    assert prefabs(RECIPES, count=0).run([base], np.random.default_rng(0)).properties["prefabs"] == 0


@pytest.mark.parametrize("seed", range(6))
def test_a_second_prefab_stage_places_beside_the_first_and_numbers_on(seed: int) -> None:
    # It painted over the first stage's rooms (a door through a wall) and restarted prefab_1.
    base = dungeon(size=[81, 51], seed=seed)
    once = prefabs(RECIPES, count=1, rotate=True).run([base], np.random.default_rng(seed))
    twice = prefabs(RECIPES, count=1, rotate=True).run([once], np.random.default_rng(seed + 100))
    assert twice.properties["prefabs"] == 2 and twice.properties["prefab_1"] == once.properties["prefab_1"]
    boxes = sorted((o for o in twice.objects if o.type == "prefab"), key=lambda o: o.properties["prefab_index"])  # type: ignore[arg-type, return-value]
    assert [b.properties["prefab_index"] for b in boxes] == [1, 2]
    first, second = boxes
    apart = first.x + first.w <= second.x or second.x + second.w <= first.x or first.y + first.h <= second.y or second.y + second.h <= first.y
    assert apart, (first, second)
    y, x, h, w = int(first.y), int(first.x), int(first.h), int(first.w)
    assert (twice.tiles[y : y + h, x : x + w] == once.tiles[y : y + h, x : x + w]).all()  # the first room as it was
    assert [p["k"] for p in placements(twice)] == [1, 2]


@pytest.mark.parametrize("seed", range(8))
def test_a_required_prefab_goes_into_every_map_first_and_once(seed: int) -> None:
    base = dungeon(size=[81, 51], seed=seed)
    stage = prefabs(RECIPES, required=["prefabs/boss.tmx"], count=[0, 2], rotate=True, mirror=True)
    level = stage.run([base], np.random.default_rng(seed))
    files = [p["file"] for p in placements(level)]
    assert files[0] == "prefabs/boss.tmx" and files.count("prefabs/boss.tmx") == 1, files
    assert 1 <= len(files) <= 3 and level.properties["prefabs"] == len(files)


def test_stages_without_required_or_weights_keep_their_cache_keys() -> None:
    # Both were written into the params as [] and {}: every prefab pack built before them went stale.
    assert set(prefabs(RECIPES).model_dump(mode="json")) == {"prefabs", "count", "rotate", "mirror", "door", "over", "layer", "tries", "attempts", "walls"}


def test_weights_set_how_often_each_prefab_is_drawn() -> None:
    """A file of weight 0 is never drawn, one of weight 1 beside 5 about a sixth of the time;
    unnamed files weigh 1. 120 draws of a fair choice would give the heavy one 50-70% at 1 - 1e-4."""
    stage = prefabs(RECIPES, count=3, weights={"prefabs/boss.tmx": 0, "prefabs/shop.tmx": 5})
    drawn = [p.file for seed in range(40) for p in stage._choose(3, np.random.default_rng(seed))]
    assert "prefabs/boss.tmx" not in drawn and len(drawn) == 120
    assert drawn.count("prefabs/shop.tmx") > 90 and drawn.count("prefabs/vault.tmx") > 5, drawn
    # Without weights or required files, the draw is the one every earlier version made.
    plain = prefabs(RECIPES, count=5)
    order = np.random.default_rng(3).permutation(3)
    assert [p.file for p in plain._choose(5, np.random.default_rng(3))] == [plain._prefabs[int(order[k % 3])].file for k in range(5)]


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


def recipe(folder: Path, body: str) -> Path:
    path = folder / "r.toml"
    path.write_text(f'[pack]\nname = "p"\nseed = 1\nmaps = 1\n\n[stage.maze]\nuse = "maze.backtracker"\n\n{body}\n'
                    '[stage.png]\nuse = "export.png"\ninput = "vaults"\n')
    return path


def problems(path: Path) -> list[str]:
    with pytest.raises(RecipeError) as info:
        load_recipe(path)
    return info.value.problems


def test_a_glob_that_matches_nothing_is_a_recipe_error_naming_the_key(tmp_path: Path) -> None:
    path = recipe(tmp_path, '[stage.vaults]\nuse = "place.prefabs"\ninput = "maze"\nprefabs = "rooms/*.tmx"\n')
    (line,) = problems(path)
    assert "stage.vaults.prefabs:" in line and "no file matches 'rooms/*.tmx'" in line and str(path) in line
    path = recipe(tmp_path, '[stage.vaults]\nuse = "place.prefabs"\ninput = "maze"\nprefabs = "/abs/*.tmx"\n')
    assert "stage.vaults.prefabs: must be a glob relative to the recipe" in problems(path)[0]


def test_prefabs_that_can_never_fit_are_recipe_errors_naming_the_file(tmp_path: Path) -> None:
    write_prefab(tmp_path, "closed", ["1 1 1", "1 2 1", "1 1 1"])
    path = recipe(tmp_path, '[stage.vaults]\nuse = "place.prefabs"\ninput = "maze"\nprefabs = "prefabs/closed.tmx"\n')
    (line,) = problems(path)
    assert "stage.vaults.prefabs:" in line and str(tmp_path / "prefabs" / "closed.tmx") in line and "no door" in line

    write_prefab(tmp_path, "inner", ["1 1 1 1", "1 3 2 1", "1 1 1 1"])
    (line,) = problems(recipe(tmp_path, '[stage.vaults]\nuse = "place.prefabs"\ninput = "maze"\nprefabs = "prefabs/inner.tmx"\n'))
    assert "inner.tmx" in line and "door at cell (1, 1) is not on the prefab's edge" in line

    # A door beside an empty cell opens onto the map there: that prefab is fine.
    write_prefab(tmp_path, "notch", ["1 1 0 1", "1 2 3 1", "1 1 1 1"])
    prefabs(tmp_path, prefabs="prefabs/notch.tmx")

    # A tile without a symbol: load.tmx's own error, under this stage's key.
    (tmp_path / "prefabs" / "bad.tmx").write_text((tmp_path / "prefabs" / "notch.tmx").read_text().replace("1,1,0,1", "1,1,0,9"))
    (line,) = problems(recipe(tmp_path, '[stage.vaults]\nuse = "place.prefabs"\ninput = "maze"\nprefabs = "prefabs/bad.tmx"\n'))
    assert "stage.vaults.prefabs:" in line and "bad.tmx" in line and "tile gid 9" in line


def test_a_prefab_larger_than_the_map_is_an_error_and_no_room_is_a_rejection(tmp_path: Path) -> None:
    write_prefab(tmp_path, "long", ["1 1 1 1 1 1 1 1 3", "1 2 2 2 2 2 2 2 1", "1 1 1 1 1 1 1 1 1"])
    stage = prefabs(tmp_path, prefabs="prefabs/long.tmx")
    small = Level.from_text("B wall #000000\nW floor #ffffff\n\nBBBBBBB\nBWWWWWB\nBWWWWWB\nBBBBBBB\nBBBBBBB\nBBBBBBB\nBBBBBBB\nBBBBBBB\nBBBBBBB\n")
    with pytest.raises(PipelineError) as info:
        stage.run([small], np.random.default_rng(0))
    assert not isinstance(info.value, Rejected)
    assert "prefabs/long.tmx (9 x 3 tiles) is larger than the map (7 x 9) (set rotate = true" in info.value.problems[0]
    # Turned, it fits the size but nowhere on this map: the map is made again, naming the file.
    with pytest.raises(Rejected) as rejected:
        prefabs(tmp_path, prefabs="prefabs/long.tmx", rotate=True, attempts=7).run([small], np.random.default_rng(0))
    assert "prefabs/long.tmx" in rejected.value.problems[0] and rejected.value.attempts == 7
    # Too long either way: no hint to turn it, which would not help.
    wide = Level.from_text("B wall #000000\nW floor #ffffff\n\n" + "BBBBBBB\n" * 4)
    with pytest.raises(PipelineError) as info:
        stage.run([wide], np.random.default_rng(0))
    assert info.value.problems[0].endswith("prefabs/long.tmx (9 x 3 tiles) is larger than the map (7 x 4)"), info.value.problems[0]


def test_files_read_are_every_prefab_and_its_tileset() -> None:
    import hashlib

    files = prefabs(RECIPES).files_read()
    assert sorted(files) == ["prefabs/boss.tmx", "prefabs/prefab.png", "prefabs/prefab.tsx", "prefabs/shop.tmx", "prefabs/vault.tmx"]
    for name, digest in files.items():
        assert hashlib.sha256((RECIPES / name).read_bytes()).hexdigest() == digest


# --------------------------------------------------------------------------------------------
# The example pack, through the CLI, read back by pytmx and the real Tiled.
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def vaults(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("vaults")
    (root / "recipes").mkdir()
    shutil.copy(RECIPES / "vaults.toml", root / "recipes")
    shutil.copytree(PREFABS, root / "recipes" / "prefabs")
    shutil.copytree(TILESETS, root / "tilesets")
    pcg("build", "recipes/vaults.toml", "--out", "out", "-q", cwd=root)
    return root / "out" / "vaults"


def test_the_example_pack_builds_with_its_placements_in_the_manifest_and_the_maps(vaults: Path) -> None:
    manifest = json.loads((vaults / "manifest.json").read_text())
    assert len(manifest["maps"]) == 4
    for entry in manifest["maps"]:
        stats = entry["stats"]
        assert stats["prefabs"] >= 2
        for k in range(1, stats["prefabs"] + 1):
            assert PLACED.match(stats[f"prefab_{k}"])
        tmx = pytmx.TiledMap(str(vaults / f"{entry['stem']}.tmx"))
        assert tmx.properties["prefabs"] == stats["prefabs"] and tmx.properties["prefab_1"] == stats["prefab_1"]
        types = [o.type for o in tmx.objects]
        assert types.count("prefab") == stats["prefabs"] and "spawn" in types
        from_prefabs = [o for o in tmx.objects if "prefab" in o.properties]
        assert from_prefabs and all(o.properties["prefab"].startswith("prefabs/") for o in from_prefabs)
    assert "prefabs/vault.tmx" in manifest["recipe"]["text"] or "prefabs/*.tmx" in manifest["recipe"]["text"]


def test_explain_says_which_prefab_the_glob_gained_or_lost(vaults: Path, tmp_path: Path) -> None:
    root = vaults.parent.parent
    project = tmp_path / "project"
    shutil.copytree(root / "recipes", project / "recipes")
    shutil.copytree(root / "tilesets", project / "tilesets")
    shutil.copytree(root / "out", project / "out")
    prefab_dir = project / "recipes" / "prefabs"
    (prefab_dir / "shop.tmx").rename(prefab_dir / "store.tmx")
    explained = " ".join(pcg("explain", "recipes/vaults.toml", "--out", "out", "--cache", str(root / ".pcg-cache"), cwd=project).stdout.split())
    assert "new file it reads (prefabs/store.tmx)" in explained, explained
    assert "file it no longer reads (prefabs/shop.tmx)" in explained, explained


@needs_tiled
def test_real_tiled_opens_the_prefabs_and_an_exported_map(vaults: Path, tmp_path: Path) -> None:
    for src in [*sorted(PREFABS.glob("*.tmx")), vaults / "map_000.tmx"]:
        out = tmp_path / f"{src.stem}.json"
        proc = subprocess.run([str(TILED), "--export-map", "json", str(src), str(out)], env=tiled_env(), capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and out.is_file(), (src, proc.stderr)
        doc = json.loads(out.read_text())
        layer = next(lay for lay in doc["layers"] if lay["type"] == "tilelayer")
        assert len(layer["data"]) == doc["width"] * doc["height"]
        # Tiled's idea of the prefab is ours: the same tiles, read back from what it wrote.
        if src.parent == PREFABS:
            assert (np.array(layer["data"]).reshape(doc["height"], doc["width"]) != 0).tolist() == read_map_file(PREFABS, src.name).filled.tolist()


@pytest.mark.skipif(TMXRASTERIZER is None, reason="tmxrasterizer (Debian package tiled) is not installed")
def test_tmxrasterizer_draws_the_prefabs(tmp_path: Path) -> None:
    for src in sorted(PREFABS.glob("*.tmx")):
        out = tmp_path / f"{src.stem}.png"
        proc = subprocess.run([str(TMXRASTERIZER), str(src), str(out)], env=tiled_env(), capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and out.is_file(), (src, proc.stderr)


@pytest.mark.parametrize(
    "body, key, words",
    [
        ('required = ["prefabs/bos.tmx"]', "stage.vaults.required", "'prefabs/bos.tmx' is not among the files 'prefabs/*.tmx' matches: prefabs/boss.tmx, prefabs/shop.tmx, prefabs/vault.tmx (did you mean 'prefabs/boss.tmx'?)"),
        ('required = ["prefabs/boss.tmx", "prefabs/boss.tmx"]', "stage.vaults.required", "names 'prefabs/boss.tmx' twice"),
        ('weights = { "prefabs/shops.tmx" = 2 }', "stage.vaults.weights", "'prefabs/shops.tmx' is not among the files"),
        ('weights = { "prefabs/shop.tmx" = -1 }', "stage.vaults.weights.prefabs/shop.tmx", "must be >= 0.0 (got -1)"),
        ('weights = { "prefabs/shop.tmx" = nan }', "stage.vaults.weights.prefabs/shop.tmx", "input should be a finite number (got nan)"),
        ('weights = { "prefabs/shop.tmx" = 1e308 }', "stage.vaults.weights.prefabs/shop.tmx", "must be <= 1000000000.0 (got 1e+308)"),
        ('required = ["./prefabs/boss.tmx"]\nweights = { "prefabs/boss.tmx" = 2 }', "stage.vaults.weights.prefabs/boss.tmx",
         "is a required file, placed in every map and never drawn: its weight would do nothing"),
        ('required = ["prefabs/boss.tmx"]\nweights = { "prefabs/shop.tmx" = 0, "prefabs/vault.tmx" = 0 }', "stage.vaults.count",
         "draws up to 1 prefab, but every file 'prefabs/*.tmx' matches is required or weighs 0: set count = 0, or give one a weight"),
        ('required = ["prefabs/boss.tmx", "prefabs/shop.tmx", "prefabs/vault.tmx"]', "stage.vaults.count",
         "draws up to 1 prefab, but every file 'prefabs/*.tmx' matches is required: set count = 0, or take one out of required"),
    ],
)
def test_required_and_weights_name_files_the_glob_matched_and_leave_one_to_draw(tmp_path: Path, body: str, key: str, words: str) -> None:
    for f in PREFABS.iterdir():
        (tmp_path / "prefabs").mkdir(exist_ok=True)
        shutil.copy(f, tmp_path / "prefabs" / f.name)
    (line,) = problems(recipe(tmp_path, f'[stage.vaults]\nuse = "place.prefabs"\ninput = "maze"\nprefabs = "prefabs/*.tmx"\n{body}\n'))
    assert f"{key}: {words}" in line, line


def test_prefabs_without_over_on_a_hand_made_map_is_a_warning(tmp_path: Path) -> None:
    """Without `over`, a prefab may cover anything, a room drawn by hand included: the recipe is
    warned as it loads, naming the stage, the key and the map; with `over`, or on a generated
    map, it is not."""
    for folder in ("maps", "prefabs"):
        shutil.copytree(RECIPES / folder, tmp_path / folder)
    body = (
        '[pack]\nname = "p"\nseed = 1\nmaps = 1\n\n'
        '[stage.start]\nuse = "load.tmx"\nfile = "maps/start.tmx"\n\n'
        '[stage.vaults]\nuse = "place.prefabs"\ninput = "start"\nprefabs = "prefabs/*.tmx"\n{over}\n'
        '[stage.tmx]\nuse = "export.tmx"\ninput = "vaults"\n'
    )
    recipe = tmp_path / "p.toml"
    recipe.write_text(body.format(over=""))
    lines = [w for w in load_recipe(recipe).warnings() if "stage.vaults" in w]
    assert lines == [
        f"{recipe}: stage.vaults.over: unset, so prefabs may be stamped over any tile of maps/start.tmx (stage.start), a map drawn by"
        ' hand, rooms included; set over = ["wall"] (the symbols they may cover)'
    ]
    recipe.write_text(body.format(over='over = ["wall"]'))
    assert not [w for w in load_recipe(recipe).warnings() if "stage.vaults" in w]
    generated = body.format(over="").replace('use = "load.tmx"\nfile = "maps/start.tmx"', 'use = "dungeon.bsp"\nsize = [61, 41]')
    recipe.write_text(generated)
    assert not [w for w in load_recipe(recipe).warnings() if "stage.vaults" in w]


def test_a_band_keeps_the_boss_room_far_from_the_spawn() -> None:
    """The complaint: a `required` boss room landed beside the spawn. With distance_from and
    band its middle lies in the far part of the way from the spawn, whatever the seed."""
    from pipeline.grid.bfs import distances
    from pipeline.stages.place.spawn_exit import SpawnExit

    base = SpawnExit().run([dungeon(size=[81, 51])], np.random.default_rng(0))
    spawn = next(o for o in base.objects if o.type == "spawn")
    walk = walkable(base)
    dist = distances(walk, [int(spawn.y) * base.width + int(spawn.x)]).reshape(walk.shape)
    # A wall cell counts as the walkable tile nearest it, as the stage measures.
    nearest = ndimage.distance_transform_edt(dist < 0, return_distances=False, return_indices=True)
    fraction = (dist / dist.max())[tuple(nearest)]
    for seed in range(4):
        out = prefabs(RECIPES, count=0, required=["prefabs/boss.tmx"], over=["wall"], distance_from="spawn", band=[0.7, 1.0]).run([base], np.random.default_rng(seed))
        (room,) = [o for o in out.objects if o.type == "prefab"]  # the placement's rectangle, as turned
        assert fraction[int(room.y) + int(room.h) // 2, int(room.x) + int(room.w) // 2] >= 0.7
    with pytest.raises(ValueError, match="only with distance_from"):
        prefabs(RECIPES, band=[0.7, 1.0])
