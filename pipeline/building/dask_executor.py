"""Batches of maps on a Dask cluster: an existing scheduler, or a LocalCluster started here.

Dask is optional (`pip install -e '.[dask]'` in a checkout). Every batch is one task; a worker that
dies has its tasks rerun elsewhere by the scheduler, and a task that raises is retried
(`retries`). A map that fails inside a batch comes back as that map's failure, like locally.
Workers either return each map's files as bytes, or, when they share the client's file system,
write them into the pack themselves and return digests (`results = "files"`).

A cluster left without any worker would keep the batches waiting forever (the scheduler waits
for workers that may never come): after `wait_for_workers` seconds without one (default
NO_WORKERS_TIMEOUT), the batches still out come back as ClusterLost, each its maps' failure,
while those that finished are kept. Why 15 s by default:
the scheduler drops a killed worker at once (its connection closes), and a nanny, systemd or a
container runtime restarting it brings it back within seconds, so 15 s with nobody there means
no one is coming soon; and it is short enough that a build does not look hung. A cluster that
grows from no worker (adaptive, or workers started after the build) must get its first one
within that time too, or be given longer (`pcg build --wait-for-workers`).
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass
from typing import Any, Iterator, Literal

from pipeline.errors import PipelineError
from pipeline.building.executor import Outcome, WorkersLost
from pipeline.building.worker import Batch, MapResult, run_batch

Results = Literal["files", "bytes"]
RETRIES = 2

# Seconds without any worker before the batches still out are given up, unless a build says
# otherwise (why 15: see above).
NO_WORKERS_TIMEOUT = 15.0
# How often to ask the scheduler how many workers it has, and only after that long without a
# batch finishing (which shows a worker is there): one small request (threads per worker).
CHECK_EVERY = 2.0


class ClusterLost(WorkersLost):
    """A batch that cannot finish: the cluster has had no worker for `wait_for_workers` seconds."""


@dataclass(frozen=True)
class DaskOptions:
    """Which Dask cluster a build runs on, and how: an existing scheduler's address, or a
    LocalCluster of `local_workers` processes started for the build; who writes the files
    (`results`, default: "files" for a LocalCluster, "bytes" for a scheduler); and how long a
    cluster may go without any worker before the maps still out are given up."""

    scheduler: str | None = None
    local_workers: int = 0
    results: Results | None = None
    wait_for_workers: float = NO_WORKERS_TIMEOUT


# The schemes of Dask's comms a scheduler may listen on.
SCHEMES = ("tcp", "tls", "ucx", "ws", "wss", "inproc")


def address_problem(scheduler: str) -> str | None:
    """What is wrong with a --scheduler address as written, before anything connects (Dask would
    answer with a traceback), or None."""
    from urllib.parse import urlsplit

    if not scheduler.strip():
        return "--scheduler: empty (an unset variable?): give tcp://HOST:PORT, or leave it out to build on this machine"
    parts = urlsplit(scheduler if "://" in scheduler else f"tcp://{scheduler}")
    if parts.scheme not in SCHEMES:
        return f"--scheduler {scheduler}: unknown scheme {parts.scheme!r}: a Dask scheduler's address is tcp://HOST:PORT (or {', '.join(SCHEMES[1:])})"
    if parts.netloc.count(":") > 1 and "[" not in parts.netloc:
        return f"--scheduler {scheduler}: an IPv6 address goes in brackets, e.g. tcp://[::1]:8786"
    try:
        parts.port
    except ValueError:
        port = parts.netloc.rpartition(":")[2]
        return f"--scheduler {scheduler}: the port {port!r} is not a number from 0 to 65535"
    return None


def _refused(scheduler: str) -> None:
    """Fail at once when nothing listens at a tcp:// scheduler address (a typo, a scheduler not
    started): Dask's client retries a refused connection until its timeout, 10 s of silence. A
    host that does not answer is left to the client's own timeout."""
    import socket
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(scheduler if "://" in scheduler else f"tcp://{scheduler}")
        host, port = parts.hostname, parts.port
    except ValueError:
        return  # not host:port: the client says what is wrong with it
    if parts.scheme != "tcp" or not host or port is None:
        return
    try:
        socket.create_connection((host, port), timeout=2).close()
    except ConnectionRefusedError as exc:
        raise PipelineError([f"--scheduler {scheduler}: cannot reach the Dask scheduler ({exc.strerror or exc}: nothing listens there)"]) from None
    except OSError:
        pass


class DaskExecutor:
    def __init__(self, options: DaskOptions):
        scheduler, results = options.scheduler, options.results
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise PipelineError(
                ["Dask is not installed: pip install 'dask[distributed]>=2024.1' into pcg's environment (or build on this machine's cores with -j N)"]
            ) from None
        self._cluster: Any = None
        if scheduler:
            _refused(scheduler)
            try:
                self._client = Client(scheduler, timeout="10s")
            except (OSError, TimeoutError) as exc:
                raise PipelineError([f"--scheduler {scheduler}: cannot reach the Dask scheduler ({exc})"]) from None
        else:
            # One thread per worker process: stages hold the GIL in places, and numba kernels
            # are single-threaded, so processes are what scales.
            self._cluster = LocalCluster(
                n_workers=options.local_workers, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
            )
            self._client = Client(self._cluster)
        self._scheduler = scheduler
        self._wait = options.wait_for_workers
        self._where = f" at {scheduler}" if scheduler else ""
        info = self._client.scheduler_info()
        self.workers = max(1, sum(w.get("nthreads", 1) for w in info.get("workers", {}).values()))
        # A LocalCluster shares this machine's disk; a remote one may not, unless told.
        self.writes_files = (results or ("files" if self._cluster is not None else "bytes")) == "files"
        self.local_files = self._cluster is not None
        self._had_workers = bool(info.get("workers"))
        self._seen = time.monotonic()  # when a worker was last known to be there
        self._gave_up = False  # an earlier pack found none: the next one does not wait all over again

    def results(self, batches: list[Batch]) -> Iterator[Outcome]:
        futures = self._client.map(run_batch, batches, pure=False, retries=RETRIES)
        owner = {future.key: batch for future, batch in zip(futures, batches)}
        done: queue.SimpleQueue[Any] = queue.SimpleQueue()

        def finished(future: Any) -> None:  # called from a Dask thread, once per future
            if future.status != "cancelled":
                self._seen = time.monotonic()
            done.put(future)

        for future in futures:
            future.add_done_callback(finished)
        # A thread watches for the cluster emptying, and then cancels every batch: that wakes
        # this one wherever it waits, even for the results of a batch whose worker died.
        stop, lost = threading.Event(), threading.Event()
        watcher = threading.Thread(target=self._watch, args=(futures, done, stop, lost), name="pcg-dask-watch", daemon=True)
        watcher.start()
        pending = {future.key for future in futures}
        try:
            while pending:
                future = done.get()
                if future is None:  # the watcher gave up
                    break
                try:
                    outcome: list[MapResult] | Exception = future.result()
                except Exception as exc:  # the task failed every try, or its workers kept dying
                    if lost.is_set():
                        break
                    outcome = exc
                pending.discard(future.key)
                yield owner[future.key], outcome
            lost_batches = [future for future in futures if future.key in pending]
            pending.clear()
            for future in lost_batches:  # in order: the report does not depend on timing
                yield owner[future.key], ClusterLost(self._why())
        finally:
            stop.set()
            watcher.join(timeout=CHECK_EVERY)  # not forever: it may be waiting on a scheduler that hangs
            if pending:  # the build stopped early (an error, or Ctrl+C): nobody wants the rest
                self._client.cancel([future for future in futures if future.key in pending])

    def _watch(self, futures: list[Any], done: queue.SimpleQueue[Any], stop: threading.Event, lost: threading.Event) -> None:
        interval = 0.0 if self._gave_up else CHECK_EVERY
        while not stop.wait(interval):
            interval = CHECK_EVERY
            if time.monotonic() - self._seen < CHECK_EVERY:
                continue  # a batch just finished: a worker is there
            try:
                gone = self._lost()
            except Exception:  # the scheduler itself is gone: the client cancels the futures then
                continue
            if gone:
                lost.set()
                # A worker that joins later must not compute them for nobody.
                self._client.cancel(futures)
                done.put(None)
                return

    def _lost(self) -> bool:
        """Whether the cluster has been without any worker for `wait_for_workers` seconds."""
        workers = len(self._client.nthreads())  # stable across Dask versions, unlike scheduler_info()
        now = time.monotonic()
        if workers:
            self._had_workers, self._seen, self._gave_up = True, now, False
        else:
            self._gave_up = now - self._seen >= self._wait
        return self._gave_up

    def _why(self) -> str:
        seconds = f"{self._wait:g} s"
        if self._had_workers:
            return f"the Dask cluster{self._where} lost all its workers and none came back in {seconds}: start workers and build again (finished maps are kept)"
        start = f" (dask worker {self._scheduler})" if self._scheduler else ""
        return f"the Dask cluster{self._where} has had no workers for {seconds}: start some{start} and build again"

    def abort(self) -> None:
        pass  # only `pcg serve` aborts, and it builds on local processes

    def close(self) -> None:
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()
