"""Dungeon generators and region stages on 1000 x 1000 tiles, against the memory floor.

The floor is numpy writing the stage's output once: a uint8 grid for generators, an int32
label grid for `regions.label` (which must stay within 10x of it), measured in the same run.
Each case runs one fixed seed on one fixed input, after a warm-up that compiles (or loads) every
kernel: at least 3 runs and more while they fit in 0.5 s; min and median shown, the ratio taken
on the min.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from scipy import ndimage
from rich.console import Console
from rich.table import Table

from bench.timing import best_of, min_median, ratio

from pipeline.level.dungeon_tiles import DUNGEON_ALPHABET
from pipeline.level import Level
from pipeline.seeds import rng_for
from pipeline.stages.dungeon.blob_map import BlobMap
from pipeline.stages.dungeon.bsp import Bsp
from pipeline.stages.dungeon.cellular_caves import CellularCaves
from pipeline.stages.dungeon.drunkard_walk import DrunkardWalk
from pipeline.stages.dungeon.rooms_and_mazes import RoomsAndMazes
from pipeline.stages.place.spawn_exit import SpawnExit
from pipeline.stages.regions.connect import Connect
from pipeline.stages.regions.distance import Distance
from pipeline.stages.regions.label import Label

N = 1000


def main() -> None:
    caves = CellularCaves(size=(N, N), keep="largest").run([], rng_for((1,)))
    noise = Level(tiles=(rng_for((2,)).random((N, N)) < 0.45).astype(np.uint8), alphabet=DUNGEON_ALPHABET)
    cave_floor = caves.tiles != 0
    placed = SpawnExit().run([caves], rng_for((3,)))
    cases: list[tuple[str, Callable[[], Any], str]] = [
        ("dungeon.blob_map", lambda: BlobMap(size=(N, N)).run([], rng_for((4,))), "uint8"),
        ("dungeon.bsp", lambda: Bsp(size=(N, N)).run([], rng_for((4,))), "uint8"),
        ("dungeon.cellular_caves", lambda: CellularCaves(size=(N, N)).run([], rng_for((4,))), "uint8"),
        ("dungeon.drunkard_walk", lambda: DrunkardWalk(size=(N, N)).run([], rng_for((4,))), "uint8"),
        ("dungeon.rooms_and_mazes", lambda: RoomsAndMazes(size=(N + 1, N + 1), room_attempts=20_000).run([], rng_for((4,))), "uint8"),
        ("regions.label (caves)", lambda: Label().run([caves], rng_for((4,))), "int32"),
        ("regions.label (noise)", lambda: Label().run([noise], rng_for((4,))), "int32"),
        ("scipy.ndimage.label (caves), for reference", lambda: ndimage.label(cave_floor), "int32"),
        ("regions.connect (noise)", lambda: Connect().run([noise], rng_for((4,))), "uint8"),
        ("regions.distance", lambda: Distance(from_object="spawn").run([placed], rng_for((4,))), "int32"),
        ("place.spawn_exit", lambda: SpawnExit().run([caves], rng_for((4,))), "uint8"),
    ]
    floors = {dtype: best_of(lambda d=dtype: np.ones((N, N), dtype=d), 50, budget=0.2)[0] for dtype in ("uint8", "int32")}
    table = Table(title=f"dungeons and regions at {N} x {N} tiles (numpy fill: uint8 {floors['uint8'] * 1e3:.2f} ms, int32 {floors['int32'] * 1e3:.2f} ms)")
    for col in ("stage", "runs", "min ms", "median ms", "x numpy fill"):
        table.add_column(col, justify="right")
    for name, fn, dtype in cases:
        fn()  # compile or load
        t, median, runs, _ = min_median(fn, 3, budget=0.5)
        table.add_row(name, str(runs), f"{t * 1e3:.1f}", f"{median * 1e3:.1f}", ratio(t, floors[dtype]))
    Console(width=120).print(table)
