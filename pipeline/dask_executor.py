"""Batches of maps on a Dask cluster: an existing scheduler, or a LocalCluster started here.

Dask is optional (`pip install 'pcg-pipeline[dask]'`). Every batch is one task; a worker that
dies has its tasks rerun elsewhere by the scheduler, and a task that raises is retried
(`retries`). A map that fails inside a batch comes back as that map's failure, like locally.
Workers either return each map's files as bytes, or, when they share the client's file system,
write them into the pack themselves and return digests (`results = "files"`).
"""

from __future__ import annotations

from typing import Any, Iterator, Literal

from pipeline.errors import PipelineError
from pipeline.executor import Outcome
from pipeline.worker import Batch, run_batch

Results = Literal["files", "bytes"]
RETRIES = 2


class DaskExecutor:
    def __init__(self, scheduler: str | None = None, local_workers: int = 0, results: Results | None = None):
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise PipelineError(
                ["Dask is not installed: pip install 'pcg-pipeline[dask]' (or build on this machine's cores with -j N)"]
            ) from None
        self._cluster: Any = None
        if scheduler:
            try:
                self._client = Client(scheduler, timeout="10s")
            except (OSError, TimeoutError) as exc:
                raise PipelineError([f"--scheduler {scheduler}: cannot reach the Dask scheduler ({exc})"]) from None
        else:
            # One thread per worker process: stages hold the GIL in places, and numba kernels
            # are single-threaded, so processes are what scales.
            self._cluster = LocalCluster(
                n_workers=local_workers, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
            )
            self._client = Client(self._cluster)
        info = self._client.scheduler_info()
        self.workers = max(1, sum(w.get("nthreads", 1) for w in info.get("workers", {}).values()))
        # A LocalCluster shares this machine's disk; a remote one may not, unless told.
        self.writes_files = (results or ("files" if self._cluster is not None else "bytes")) == "files"

    def results(self, batches: list[Batch]) -> Iterator[Outcome]:
        from distributed import as_completed

        futures = self._client.map(run_batch, batches, pure=False, retries=RETRIES)
        owner = {future.key: batch for future, batch in zip(futures, batches)}
        for future in as_completed(futures):
            batch = owner[future.key]
            try:
                yield batch, future.result()
            except Exception as exc:  # the task failed every try, or its workers kept dying
                yield batch, exc

    def close(self) -> None:
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()
