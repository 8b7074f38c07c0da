"""The cache of intermediate Levels: keyed by environment, bounded by least-recently-used trimming."""

from __future__ import annotations

import os
import threading
import time
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

import pipeline.building.cache as cache_module
from pipeline.building.cache import DEFAULT_MAX_BYTES, LevelCache, environment_tag, format_size, parse_size
from pipeline.level import Level
from pipeline.stages.maze.block import MAZE_ALPHABET

BASE_NS = 1_700_000_000 * 10**9  # entries' use times, set explicitly: trims are then repeatable


def level(n: int, size: int = 64) -> Level:
    """A small Level whose pickle size grows with `size`."""
    return Level(tiles=np.full((size, size), n % 2, dtype=np.uint8), alphabet=MAZE_ALPHABET)


def key(n: int) -> str:
    return f"{n:02x}" + "ab" * 31


def fill(cache: LevelCache, count: int) -> list[str]:
    """`count` entries, entry i last used at second i."""
    keys = [key(i) for i in range(count)]
    for i, k in enumerate(keys):
        cache.store(k, level(i))
        used = BASE_NS + i * 10**9
        os.utime(cache.path(k), ns=(used, used))
    return keys


def disk_bytes(path: Path) -> int:
    st = os.stat(path)
    return max(st.st_size, getattr(st, "st_blocks", 0) * 512)


def test_levels_round_trip_and_a_hit_counts_as_a_use(tmp_path: Path) -> None:
    cache = LevelCache(tmp_path)
    k = fill(cache, 1)[0]
    assert cache.has(k)
    before = os.stat(cache.path(k)).st_mtime_ns
    loaded = cache.load(k)
    assert loaded is not None and (loaded.tiles == level(0).tiles).all()
    assert os.stat(cache.path(k)).st_mtime_ns > before
    # Temporary files go to tmp/, where builds clean up after killed ones; the store holds entries only.
    assert [p.name for p in cache.store_dir.rglob("*") if p.is_file()] == [f"{k}.pkl"]


@pytest.mark.parametrize(
    "damage",
    [
        b"\x80\x05\x95\xff\xff\xff\xff\xff\xff\xff\xff",  # a frame past any size: OverflowError
        b"\x80\x05\x8e" + (2**62).to_bytes(8, "little"),  # bytes past any memory: MemoryError
        b"\x80\x05B\xff\xff\xff\x7f",  # the entry cut short
        bytes(range(256)) * 4,
        b"",
    ],
)
def test_a_damaged_entry_is_a_miss_whatever_the_bytes(tmp_path: Path, damage: bytes) -> None:
    # A disk error or a stray write must cost a recomputation, not fail the map on every build.
    cache = LevelCache(tmp_path)
    k = fill(cache, 1)[0]
    cache.path(k).write_bytes(damage)
    assert cache.load(k) is None


def test_trim_deletes_the_least_recently_used_first(tmp_path: Path) -> None:
    cache = LevelCache(tmp_path)
    keys = fill(cache, 8)
    assert cache.load(keys[0]) is not None  # the oldest, used again: now the most recent
    keep = [keys[0], keys[5], keys[6], keys[7]]
    bound = sum(disk_bytes(cache.path(k)) for k in keep)
    total = cache.size()

    result = cache.trim(bound)

    assert sorted(k for k in keys if cache.has(k)) == sorted(keep)
    assert result.removed == 4 and result.kept == bound and result.freed == total - bound
    assert cache.trim(bound).removed == 0  # under the bound: nothing to do


def test_trim_to_zero_keeps_no_level_and_nothing_else_is_touched(tmp_path: Path) -> None:
    cache = LevelCache(tmp_path)
    keys = fill(cache, 5)
    others = {
        "locks/pack.lock": b"",
        "stamps/pack.json": b"{}",
        "tmp/123.0.map_000.tmx.tmp": b"partial",
        "notes.txt": b"the user's",
        f"{cache.store_dir.name}/{keys[0][:2]}/README": b"not an entry",
    }
    for rel, data in others.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)

    result = cache.trim(0)

    assert result.removed == 5 and result.kept == 0 and not any(cache.has(k) for k in keys)
    assert {rel: (tmp_path / rel).read_bytes() for rel in others} == others


def test_trim_tolerates_entries_that_vanish_or_are_used_meanwhile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = LevelCache(tmp_path)
    keys = fill(cache, 6)
    scan = LevelCache._entries

    def racing(self: LevelCache) -> list[tuple[int, str, int]]:
        entries = scan(self)
        # Between the listing and the deletions: another build trims the oldest entry away and
        # loads the second oldest, and a third stores a new one.
        cache.path(keys[0]).unlink()
        assert cache.load(keys[1]) is not None
        cache.store(key(200), level(200))
        return entries

    monkeypatch.setattr(LevelCache, "_entries", racing)
    result = cache.trim(0)

    assert cache.has(keys[1]) and cache.has(key(200))
    assert not any(cache.has(k) for k in keys[2:])
    assert result.removed == 4


def test_concurrent_trims_and_stores(tmp_path: Path) -> None:
    """Builds share the cache without locks: trims racing each other and a storing build."""
    cache = LevelCache(tmp_path)
    fill(cache, 200)
    bound = 50 * disk_bytes(cache.path(key(0)))
    errors: list[BaseException] = []
    stop = threading.Event()

    def guarded(fn):  # type: ignore[no-untyped-def]
        def run() -> None:
            try:
                fn()
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                errors.append(exc)

        return run

    def storing() -> None:
        n = 1000
        while not stop.is_set():
            LevelCache(tmp_path).store(key(n), level(n))
            LevelCache(tmp_path).load(key(n - 3))
            n += 1

    def trimming() -> None:
        for _ in range(20):
            LevelCache(tmp_path).trim(bound)

    threads = [threading.Thread(target=guarded(storing))] + [threading.Thread(target=guarded(trimming)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads[1:]:
        t.join()
    stop.set()
    threads[0].join()

    assert not errors, errors
    assert cache.trim(bound).kept <= bound


def test_keys_belong_to_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tag = environment_tag()
    assert np.__version__ in tag and metadata.version("numba") in tag
    k = key(1)
    LevelCache(tmp_path).store(k, level(1))
    # After an upgrade of NumPy or numba, Levels made before are never served...
    monkeypatch.setattr(cache_module, "environment_tag", lambda: "numpy9.9.9-numba9.9.9")
    upgraded = LevelCache(tmp_path)
    assert not upgraded.has(k) and upgraded.load(k) is None
    upgraded.store(k, level(2))
    assert upgraded.has(k)
    # ...and trimming removes them first once they are the least recently used, folder and all.
    old = os.stat(LevelCache.path(upgraded, k)).st_mtime_ns - 10**9
    stale = next(p for p in tmp_path.glob("levels-*") if p != upgraded.store_dir)
    for entry in stale.rglob("*.pkl"):
        os.utime(entry, ns=(old, old))
    upgraded.trim(disk_bytes(upgraded.path(k)))
    assert [p.name for p in tmp_path.glob("levels-*")] == [upgraded.store_dir.name] and upgraded.has(k)


def test_the_environment_is_read_once_per_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The planner asks `has` for every stage of every map: no per-call work beyond one stat."""
    calls = []
    monkeypatch.setattr(cache_module, "environment_tag", lambda: calls.append(1) or "numpy0-numba0")
    cache = LevelCache(tmp_path)
    for n in range(1000):
        cache.has(key(n))
    assert len(calls) == 1


def test_a_fifo_in_the_store_is_a_miss(tmp_path: Path) -> None:
    cache = LevelCache(tmp_path)
    k = key(3)
    cache.path(k).parent.mkdir(parents=True)
    os.mkfifo(cache.path(k))
    start = time.monotonic()
    assert cache.load(k) is None and not cache.has(k)
    assert time.monotonic() - start < 5


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("0", 0),
        ("1048576", 1048576),
        ("10k", 10 * 1024),
        ("500M", 500 * 1024**2),
        ("500MB", 500 * 1024**2),
        ("500MiB", 500 * 1024**2),
        (" 2G ", 2 * 1024**3),
        ("1.5G", 3 * 1024**3 // 2),
        ("1.1G", 11 * 1024**3 // 10),
        ("1T", 1024**4),
    ],
)
def test_parse_size(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "-1", "1.5", "abc", "5X", "1e6", "M", "2 GB extra", "1,000"])
def test_parse_size_refuses(text: str) -> None:
    with pytest.raises(ValueError, match="not a size") as info:
        parse_size(text)
    assert repr(text) in str(info.value) and "\n" not in str(info.value)


def test_default_bound() -> None:
    assert DEFAULT_MAX_BYTES == parse_size("2G")


@pytest.mark.parametrize(("size", "text"), [(0, "0B"), (300, "300B"), (12 * 1024, "12K"), (3 * 1024**3 // 2, "1.5G"), (2 * 1024**3, "2G"), (1023 * 1024**2 + 900 * 1024, "1023.9M")])
def test_format_size(size: int, text: str) -> None:
    assert format_size(size) == text
