"""`export.lua`: Tiled's Lua map format for LÖVE/STI, checked against Tiled itself.

Every map is built through the CLI twice, as TMX (`export.tmx`) and as Lua (`export.lua`); the
real Tiled exports the TMX to Lua (`tiled --export-map lua`), and Lua 5.4 loads both files and
prints them as canonical dumps (tests/data/lua_dump.lua: sorted keys, normalised numbers),
which must agree leaf for leaf but for the differences listed in ALLOWED, each with its reason.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import shutil
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest

from conftest import TILED, TILESETS, needs_tiled, pcg, tiled_env, write_recipe
from pipeline.errors import RecipeError
from pipeline.recipe.load import load_recipe
from pipeline.tiled import TILED_VERSION
from pipeline.tiled.lua import quote

LUA = shutil.which("lua5.4")
needs_lua = pytest.mark.skipif(LUA is None, reason="Lua 5.4 is not installed (apt-get install lua5.4; .ci/run installs it)")
# LÖVE runs LuaJIT (Lua 5.1 syntax), which reads fewer forms than 5.4: the maps must load there too.
LUAJIT = shutil.which("luajit")
needs_luajit = pytest.mark.skipif(LUAJIT is None, reason="LuaJIT is not installed (apt-get install luajit; .ci/run installs it)")
DUMP = Path(__file__).resolve().parent / "data" / "lua_dump.lua"

MAPS = 2
# (folder, encoding, compression): every layer data format export.lua accepts.
FORMATS = [("csv", "csv", "none"), ("b64", "base64", "none"), ("zlib", "base64", "zlib"), ("gzip", "base64", "gzip")]

# Leaves of Tiled's export that may differ from ours, and why. Anything else must be equal.
ALLOWED = {
    # Tiled writes its own version; CI's Tiled need not be the 1.8.2 whose format we write.
    "map.tiledversion": "the version of the Tiled that exported the TMX",
    # The provenance names the export stage that wrote the file: export.tmx for the map Tiled
    # read, export.lua for ours.
    "map.properties.stages": "the stage chain ends in export.tmx on one side and export.lua on the other",
}
# Compressed layer data is compared decompressed: Tiled re-compresses at zlib's default level,
# we at level 9 (and gzip headers carry no name or time), so only the bytes differ, not the gids.

HEADER = """\
[pack]
name = "lua"
seed = 20261130123
maps = {maps}

[stage.dungeon]
use = "dungeon.rooms_and_mazes"
size = [25, 17]
room_attempts = 40

[stage.placed]
use = "place.spawn_exit"
input = "dungeon"

[stage.path]
use = "place.path"
input = "placed"

[stage.chests]
use = "place.items"
input = "path"
type = "chest"
count = 3
spacing = 3
tile = "chest"
properties = {{ gold = 25, weight = 2.5, locked = false, glow = "#ffa300", note = "a \\"quoted\\" back\\\\slash\\nnew line", "name_ü" = "ünïcode" }}

[stage.regions]
use = "regions.label"
input = "chests"
"""

EXPORT = """
[stage.{fmt}_{folder}]
use = "export.{fmt}"
input = "regions"
dir = "{fmt}/{folder}"
tileset = "../tilesets/dungeon.toml"
encoding = "{encoding}"
compression = "{compression}"
preview = false
layers = [
  {{ name = "floor", tile = "floor" }},
  {{ name = "walls", symbols = ["wall"] }},
  {{ name = "doors", symbols = ["door"] }},
]
"""


def recipe(maps: int = MAPS) -> str:
    text = HEADER.format(maps=maps)
    for folder, encoding, compression in FORMATS:
        for fmt in ("tmx", "lua"):
            extra = "embed_tileset = true\n" if fmt == "tmx" else ""
            text += EXPORT.format(fmt=fmt, folder=folder, encoding=encoding, compression=compression).replace("preview = false\n", "preview = false\n" + extra)
    return text


def make_project(root: Path, maps: int = MAPS) -> Path:
    shutil.copytree(TILESETS, root / "tilesets")
    write_recipe(root, "lua", recipe(maps))
    pcg("build", "recipes", "-q", cwd=root)
    return root / "exports" / "lua"


@pytest.fixture(scope="module")
def pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("lua"))


def dump(path: Path, lua: str | None = LUA) -> dict[str, str]:
    """The canonical dump of a Lua map file, as Lua 5.4 (or `lua`) loads it: {path: value}."""
    proc = subprocess.run([str(lua), str(DUMP), str(path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"{lua} cannot load {path}: {proc.stderr}"
    return dict(line.split("\t", 1) for line in proc.stdout.splitlines())


def decoded_data(leaves: dict[str, str]) -> dict[str, str]:
    """Base64 layer data replaced by the digest of its gids, decompressed as the layer says."""
    out = dict(leaves)
    for key, value in leaves.items():
        if not key.endswith(".data") or not value.startswith('"'):
            continue
        layer = key[: -len(".data")]
        raw = base64.b64decode(value.strip('"'))
        compression = leaves.get(f"{layer}.compression", "none").strip('"')
        raw = {"zlib": zlib.decompress, "gzip": gzip.decompress}.get(compression, bytes)(raw)
        gids = np.frombuffer(raw, dtype="<u4")
        out[key] = f"gids sha256 {hashlib.sha256(gids.tobytes()).hexdigest()} x{gids.size}"
    return out


def tiled_lua(tmx: Path, out: Path) -> Path:
    """Tiled's own Lua export of `tmx`, written to `out` (its paths are relative to `out`)."""
    proc = subprocess.run([TILED, "--export-map", "lua", str(tmx), str(out)], capture_output=True, text=True, env=tiled_env(), timeout=120)
    assert proc.returncode == 0 and out.is_file(), f"tiled --export-map lua {tmx}: {proc.stdout}{proc.stderr}"
    return out


@needs_lua
@needs_tiled
@pytest.mark.parametrize("folder", [f[0] for f in FORMATS])
def test_lua_maps_load_as_tileds_own_lua_export(pack: Path, folder: str, tmp_path: Path) -> None:
    for index in range(MAPS):
        ours = pack / "lua" / folder / f"map_{index:03d}.lua"
        # Beside ours, so that the tilesheet's relative path is computed from the same folder.
        theirs = tiled_lua(pack / "tmx" / folder / f"map_{index:03d}.tmx", ours.with_name(f"tiled_{index:03d}.lua"))
        a, b = decoded_data(dump(ours)), decoded_data(dump(theirs))
        differ = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
        unexpected = [f"{k}: ours {a.get(k)} / Tiled's {b.get(k)}" for k in differ if k not in ALLOWED]
        assert not unexpected, "\n".join(unexpected[:20])
        assert b["map.properties.stages"].endswith('export.tmx"') and a["map.properties.stages"].endswith('export.lua"')
        # What the maps hold, so that an empty comparison cannot pass.
        leaves = a.keys()
        assert {"map.layers[1].name", "map.tilesets[1].image", "map.tilesets[1].wangsets[1].wangtiles[1].tileid"} <= leaves
        assert any(k.endswith(".polyline[2].x") for k in leaves) and any(k.endswith(".gid") for k in leaves)
        assert a["map.layers[4].visible"] == "false" and a["map.properties.seed"].startswith('"')  # a hidden data layer; a 64-bit seed as text
        if folder == "csv" and ("map.tiledversion", f'"{TILED_VERSION}"') in b.items():
            # The same Tiled: not only the same tables, the same bytes.
            text = ours.read_text(encoding="utf-8").replace("> export.lua", "> export.tmx")
            assert text == theirs.read_text(encoding="utf-8")


@needs_lua
def test_what_sti_reads_is_there(pack: Path) -> None:
    """STI (sti/init.lua) indexes these without checking for nil: a missing one is a crash in LÖVE."""
    leaves = dump(pack / "lua" / "zlib" / "map_000.lua")
    for key in ("orientation", "renderorder", "width", "height", "tilewidth", "tileheight"):
        assert f"map.{key}" in leaves
    for key in ("image", "imagewidth", "imageheight", "tilewidth", "tileheight", "margin", "spacing", "firstgid", "tileoffset.x", "tileoffset.y"):
        assert f"map.tilesets[1].{key}" in leaves and f"map.tilesets[2].{key}" in leaves, key
    layers = sorted({k.split(".")[1] for k in leaves if k.startswith("map.layers[")})
    for layer in layers:
        for key in ("type", "name", "offsetx", "offsety", "visible", "opacity"):
            assert f"map.{layer}.{key}" in leaves, (layer, key)
    assert leaves["map.layers[1].encoding"] == '"base64"' and leaves["map.layers[1].compression"] == '"zlib"'
    objects = [k[: -len(".shape")] for k in leaves if k.endswith(".shape")]
    assert objects and all(f"{o}.{key}" in leaves for o in objects for key in ("x", "y", "width", "height", "rotation", "id"))
    # Tile data: STI reads the gids with ipairs-style indexing from 1, one per cell.
    csv = dump(pack / "lua" / "csv" / "map_000.lua")
    width, height = int(csv["map.width"]), int(csv["map.height"])
    assert f"map.layers[1].data[{width * height}]" in csv and f"map.layers[1].data[{width * height + 1}]" not in csv


@needs_lua
@needs_luajit
def test_lua_maps_load_in_luajit_as_in_lua_5_4(pack: Path) -> None:
    for folder, _, _ in FORMATS:
        path = pack / "lua" / folder / "map_000.lua"
        assert dump(path, LUAJIT) == dump(path)


@needs_lua
@needs_luajit
@pytest.mark.parametrize(
    "text",
    ['plain', 'a "quote"', "back\\slash", "new\nline", "carriage\rreturn", "tab\there", "nul\x00byte", "bell\x07", "ünïcødé ✓", "\\n is not a newline", "\x001"],
)
def test_strings_round_trip_through_lua(tmp_path: Path, text: str) -> None:
    """Every string reaches the game as it was, in Lua 5.4 and in LuaJIT, including those Tiled's
    own writer would break (a carriage return ends a Lua string with an error)."""
    chunk = tmp_path / "s.lua"
    chunk.write_bytes(f"return {quote(text)}\n".encode("utf-8"))
    for lua in (LUA, LUAJIT):
        proc = subprocess.run([str(lua), "-e", f"io.write(dofile({str(chunk)!r}))"], capture_output=True, timeout=30)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == text.encode("utf-8"), lua


def test_lua_maps_are_deterministic(pack: Path, tmp_path: Path) -> None:
    again = make_project(tmp_path, maps=1)
    for folder, _, _ in FORMATS:
        first = (pack / "lua" / folder / "map_000.lua").read_bytes()
        assert first == (again / "lua" / folder / "map_000.lua").read_bytes()
    # Tilesheets are written beside, not embedded: STI loads the PNG the map names.
    assert (again / "tilesets" / "dungeon.png").is_file() and not list((again / "tilesets").glob("*.tsx"))


@pytest.mark.parametrize(
    "kind, extra, expect",
    [
        ("tmx", 'profile = "love"', "stage.out.profile: love: LÖVE with STI (Simple Tiled Implementation) reads lua maps, not tmx: use export.lua"),
        ("tmj", 'profile = "love"', "use export.lua"),
        ("lua", 'profile = "tiled"', "stage.out.profile: tiled: Tiled 1.8+ reads tmx or tmj maps, not lua: use export.tmx or export.tmj"),
        ("lua", "embed_tileset = false", "stage.out.embed_tileset: must be true with profile 'love'"),
        ("lua", 'profile = "phaser"', "stage.out.profile: phaser: Phaser 3 (this.load.tilemapTiledJSON) reads tmj maps, not lua: use export.tmj"),
        ("lua", 'encoding = "csv"\ncompression = "zlib"', 'stage.out.compression: needs encoding = "base64"'),
    ],
)
def test_lua_options_sti_cannot_load_are_refused(project: Path, kind: str, extra: str, expect: str) -> None:
    text = f'[pack]\nname = "bad"\nseed = 1\nmaps = 1\n\n[stage.maze]\nuse = "maze.backtracker"\ncells = [4, 4]\n\n[stage.out]\nuse = "export.{kind}"\ninput = "maze"\n{extra}\n'
    write_recipe(project, "bad", text)
    # As the recipe loads: a load error reaches the command line as every other does (one
    # `error:` line, exit 1: tests/test_bad_recipes.py runs such refusals through it).
    with pytest.raises(RecipeError) as refused:
        load_recipe(project / "recipes" / "bad.toml")
    problem = refused.value.problems
    assert len(problem) == 1 and problem[0].startswith(f"{project / 'recipes' / 'bad.toml'}: "), problem
    assert expect in problem[0], problem
