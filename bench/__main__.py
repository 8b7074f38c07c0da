import time

from rich.console import Console

from bench import backtracker, big_world, catalogue, distinct, dungeons, first_run, graphs, rewrite, scale, suite

start = time.perf_counter()
took = []
# scale last: deleting its 1.1 GB of projects makes the disk discard their blocks for a minute or
# more, which slows every file a bench after it creates (first_run's warm build among them).
for bench in (backtracker, catalogue, rewrite, suite, dungeons, first_run, graphs, distinct, big_world, scale):
    t = time.perf_counter()
    bench.main()
    took.append(f"{bench.__name__.removeprefix('bench.')} {time.perf_counter() - t:.0f} s")
Console(width=120).print(f"benchmarks took {time.perf_counter() - start:.0f} s ({', '.join(took)}); `make bench` should stay under 300 s")
