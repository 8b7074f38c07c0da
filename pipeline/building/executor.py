"""Where batches of maps run: in this process, on a local process pool, or on a Dask cluster
(`pipeline.building.dask_executor`). The build loop only calls `results()`."""

from __future__ import annotations

import os
import signal
import sys
from typing import TYPE_CHECKING, Iterator, Protocol

from pipeline.building.worker import Batch, MapResult, run_batch

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

Outcome = tuple[Batch, "list[MapResult] | BaseException"]


class Stopped(Exception):
    """What a batch comes back as when the executor was aborted before it finished."""

    def __str__(self) -> str:
        return "the build was stopped before this map was made; its earlier files stay"


class WorkersLost(Exception):
    """What a batch comes back as when no worker is left to run it (a cluster emptied)."""


def worker_lost(outcome: BaseException) -> bool:
    """Whether a batch came back as an exception because the worker running it was lost (killed,
    out of memory, a crash in native code), not because of what it ran."""
    from concurrent.futures.process import BrokenProcessPool

    return isinstance(outcome, (BrokenProcessPool, WorkersLost))


class Executor(Protocol):
    workers: int
    writes_files: bool  # workers write each map's own files into the pack themselves (they see its folder)
    # Their writes are on this machine's disk for certain (processes of this one): the build
    # need not read each file back to see that it arrived.
    local_files: bool

    def results(self, batches: list[Batch]) -> Iterator[Outcome]:
        """Run every batch; yield each with its results (or the exception that lost it) as it finishes."""
        ...

    def abort(self) -> None:
        """Stop for good, from any thread (`pcg serve` stopping mid-build): the batches running
        or queued, and those of any later build, come back as Stopped."""
        ...

    def close(self) -> None: ...


class SerialExecutor:
    workers = 1
    writes_files = False
    local_files = True

    def results(self, batches: list[Batch]) -> Iterator[Outcome]:
        for batch in batches:
            yield batch, run_batch(batch)

    def abort(self) -> None:
        pass  # a batch runs in the thread that waits for it: nothing else can stop it

    def close(self) -> None:
        pass


def _worker_signals(parent: int) -> None:
    """A forked worker inherits the handlers of the process that forked it: `pcg serve` turns
    SIGTERM into a Ctrl+C, `pcg watch` into a stop. The pool ends workers with SIGTERM (when one
    died, and at shutdown), so they must keep the default: exit at once.

    Ctrl+C reaches every process of the terminal's group, workers too; it is the build's to
    handle (it stops the workers itself). A worker interrupted while sending a result would
    print a traceback, and leave half a message in the pipe that the pool waits on forever."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _exit_with_parent(parent)


# How often a worker looks whether the build that started it is still there.
PARENT_CHECK = 0.5


def _exit_with_parent(parent: int) -> None:
    """End this worker once `parent` is gone (SIGKILLed, say, with no chance to stop it). An
    orphan would go on holding the pack's lock, so the next build would wait for it forever, and
    the build's output pipe, so `pcg build | tee log` would never return. A thread, since the
    worker's own may be blocked writing a result that nobody will read. `parent` is given by the
    build, not read here: by now it may be gone, and the worker's parent its reaper."""
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK)
        os._exit(1)

    threading.Thread(target=watch, name="pcg-parent-watch", daemon=True).start()


class ProcessExecutor:
    # Each worker writes its maps' own files: the client writing them all would make every file
    # (0.5 ms of the kernel's time each on some disks) one after another, while the workers wait.
    writes_files = True
    local_files = True

    def __init__(self, workers: int):
        self.workers = workers
        self._pool = self._start()
        self._stopped = False  # the workers were killed: the next build starts a fresh pool
        self._closed = False  # aborted for good: no build runs any more

    def _start(self) -> ProcessPoolExecutor:
        # Imported here: a build with nothing to do starts no pool.
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # fork starts workers in milliseconds with the stage modules already imported. Workers are
        # forked here, before the client starts any thread (rich's progress bar has one).
        method = "fork" if sys.platform == "linux" else None
        if method == "fork":
            from pipeline.jit import ready_before_fork

            ready_before_fork()
        pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context(method), initializer=_worker_signals, initargs=(os.getpid(),))
        pool.submit(int).result()  # with fork, the first submit starts every worker: do it now
        return pool

    def results(self, batches: list[Batch]) -> Iterator[Outcome]:
        from concurrent.futures import as_completed
        from concurrent.futures.process import BrokenProcessPool

        if self._closed:  # aborted for good (`pcg serve` stopping): nothing more runs
            yield from ((batch, Stopped()) for batch in batches)
            return
        if self._stopped:
            self._pool, self._stopped = self._start(), False
        broken = finished = False
        try:
            try:
                futures: dict[Future[list[MapResult]], Batch] = {self._pool.submit(run_batch, b): b for b in batches}
            except BrokenProcessPool:  # a worker died between builds (killed while idle): start afresh
                if self._closed:  # no: abort() killed them just now
                    yield from ((batch, Stopped()) for batch in batches)
                    finished = True
                    return
                self._pool.shutdown(cancel_futures=True)
                self._pool = self._start()
                futures = {self._pool.submit(run_batch, b): b for b in batches}
            for future in as_completed(futures):
                batch = futures[future]
                try:
                    yield batch, future.result()
                except BrokenProcessPool as exc:  # a worker died: its batch and those queued are lost
                    broken = True
                    yield batch, Stopped() if self._stopped or self._closed else exc
                except Exception as exc:  # a result that could not be pickled back
                    yield batch, exc
            finished = True
        finally:
            if not finished:
                # Ctrl+C (here, or in the build while it stored a result), a full disk: nobody
                # wants the batches queued or running, and workers ignore Ctrl+C themselves.
                self._stop_workers()
            elif not (self._stopped or self._closed) and (broken or getattr(self._pool, "_broken", False)):
                # A broken pool refuses new work; the next pack gets a fresh one.
                self._pool.shutdown(cancel_futures=True)
                self._pool = self._start()

    def abort(self) -> None:
        self._closed = True
        self._stop_workers()

    def _stop_workers(self) -> None:
        """Kill the workers at once, batches and all, rather than let them finish the batches
        they run (a next build of the Python API's gets a fresh pool). The pool, finding them
        dead, fails every batch still out with BrokenProcessPool, which wakes whoever waits for
        them (a future cancelled instead would never wake `as_completed`)."""
        pool = self._pool
        # The pool's own processes and result pipe: it offers no way to stop its workers now.
        processes = list((getattr(pool, "_processes", None) or {}).values())
        results = getattr(pool, "_result_queue", None)
        self._stopped = True
        if results is not None:
            # A worker killed while sending its result leaves half a message, which the pool's
            # thread would wait for the rest of; with every writer closed (this one first, so a
            # second Ctrl+C below cannot skip it) it reads end of file instead and shuts down.
            results._writer.close()
        for process in processes:
            process.kill()
        for process in processes:
            process.join()

    def close(self) -> None:
        self._pool.shutdown(cancel_futures=True)


def default_workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def make_executor(workers: int) -> Executor:
    return SerialExecutor() if workers <= 1 else ProcessExecutor(workers)
