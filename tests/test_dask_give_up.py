"""When a Dask cluster is left without workers, the build gives the batches up in bounded time,
and a later pack of the same build does not wait all over again. The real cluster test
(test_dask_cluster) kills real workers and bounds the whole build loosely, since a loaded
machine stretches writing the files and the report; the timing rules themselves are held here,
against a stand-in client whose workers never return."""

from __future__ import annotations

import time
from typing import Any, Callable

from pipeline.building import dask_executor
from pipeline.building.dask_executor import ClusterLost, DaskExecutor


class Pending:
    """A Dask future that never finishes (its worker was killed)."""

    def __init__(self, key: int):
        self.key = key
        self.status = "pending"

    def add_done_callback(self, fn: Callable[[Any], None]) -> None:
        pass


class NoWorkers:
    """The client of a scheduler that has lost every worker."""

    def __init__(self) -> None:
        self.cancelled: list[int] = []

    def map(self, fn: Any, batches: list[Any], **kwargs: Any) -> list[Pending]:
        return [Pending(k) for k in range(len(batches))]

    def nthreads(self) -> dict[str, int]:
        return {}

    def cancel(self, futures: list[Pending]) -> None:
        self.cancelled += [f.key for f in futures]


def executor(wait: float) -> DaskExecutor:
    ex = object.__new__(DaskExecutor)  # no scheduler to reach: the stand-in plays it
    ex._client, ex._cluster, ex._scheduler, ex._wait, ex._where = NoWorkers(), None, "tcp://stand-in:8786", wait, " at tcp://stand-in:8786"
    ex.workers, ex.writes_files, ex.local_files = 1, False, False
    ex._had_workers, ex._seen, ex._gave_up = True, time.monotonic(), False
    return ex


def timed(ex: DaskExecutor, batches: list[str], seen_now: bool = True) -> tuple[float, list[Any]]:
    start = time.monotonic()
    if seen_now:  # a worker was last seen as the batches go out: the wait starts with them
        ex._seen = start
    outcomes = list(ex.results(batches))  # type: ignore[arg-type]  # the stand-in takes any batch
    return time.monotonic() - start, outcomes


def test_batches_are_given_up_after_the_wait_and_a_later_pack_does_not_wait_again(monkeypatch: Any) -> None:
    monkeypatch.setattr(dask_executor, "CHECK_EVERY", 0.1)
    ex = executor(wait=1.0)
    took, first = timed(ex, ["a0", "a1", "a2"])
    # At least the wait since a worker was last seen; at most a check (and a loaded machine's slack) more.
    assert 1.0 <= took < 1.0 + 0.1 + 2.0, took
    assert [b for b, _ in first] == ["a0", "a1", "a2"]  # in order, whatever the timing
    assert all(isinstance(o, ClusterLost) and "lost all its workers and none came back in 1 s" in str(o) for _, o in first)
    assert sorted(ex._client.cancelled) == [0, 1, 2]  # a worker joining later computes them for nobody
    took, second = timed(ex, ["b0"], seen_now=False)
    assert took < 0.5, f"the second pack waited {took:.2f} s all over again"
    assert [b for b, _ in second] == ["b0"] and isinstance(second[0][1], ClusterLost)


def test_a_cluster_that_never_had_a_worker_says_so() -> None:
    ex = executor(wait=0.0)
    ex._had_workers = False
    assert "has had no workers for 0 s: start some (dask worker tcp://stand-in:8786)" in ex._why()
