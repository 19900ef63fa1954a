"""Runs out of process, partitions side by side: what ``python -m assets.run --executor multiprocess``
(or ``--executor dask``) does.

One Dagster run materializes one partition, so a suite's evaluation partitions go in parallel as runs,
as a backfill launches them. Here each run goes to a worker process of a pool of ``max_concurrent``
(what Dagster's default run launcher gives every run: a process of its own) and every step of the run
to a process of its own again (Dagster's multiprocess executor, forked from a server that imported the
code location once), or, with ``dask``, to a task on a Dask cluster (dagster-dask's executor, whose
tasks rebuild the job from the same pointer; ``assets.cluster``). Runs of the same assets (partitions
of one asset, which never depend on one another here) go side by side; runs of other assets wait for
them, in the order given.

Worker processes, not threads: Dagster calls ``logging.config.dictConfig`` as each run starts, and that
deadlocked here against another thread's run logging an event (both wait on the logging locks).

Each step's process rebuilds its run's job from a reconstructable pointer
(``dagster.build_reconstructable_job``) that names ``assets.definitions.rebuilt_job``, the run's assets
and the settings as JSON: definitions built with arguments cannot be found as a module attribute.
What the processes share is on disk: the instance (its SQLite run and event storage, and the IO
manager's pickles under it), the stores, the indexes and the caches.
"""

from __future__ import annotations

import hashlib
import multiprocessing
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dagster import AssetKey, AssetRecordsFilter, DagsterInstance, build_reconstructable_job, execute_job

from assets import definitions
from assets.definitions import RUN_JOB
from clear_rag.errors import ClearRagError

PARTITION_TAG = "dagster/partition"  # where a run's partition key goes (execute_job has no argument)
Run = tuple[str | None, list[AssetKey]]  # one run: its partition key and the assets it materializes
ReconstructableJob = Any  # what build_reconstructable_job returns (dagster does not re-export the type)


@dataclass(frozen=True)
class Execution:
    """How ``update`` executes its runs: in its own process one after another (``settings`` None, the
    default), or out of process, ``max_concurrent`` runs at a time, each through the job ``job``
    rebuilds from ``settings``."""

    settings: Mapping[str, object] | None = None
    max_concurrent: int = 1

    @classmethod
    def multiprocess(
        cls, settings: Mapping[str, object], max_concurrent: int, *, start_method: str = "forkserver"
    ) -> Execution:
        """Runs of the definitions ``definitions.rebuilt`` makes of ``settings`` (JSON), on the
        multiprocess executor with ``start_method``."""
        if max_concurrent < 1:
            raise ClearRagError(
                "--max-concurrent must be at least 1",
                value=max_concurrent,
                fix="Give the number of runs to execute at once",
            )
        chosen = {"executor": "multiprocess", "max_concurrent": max_concurrent, "start_method": start_method}
        return cls({**settings, **chosen}, max_concurrent)

    @classmethod
    def dask(cls, settings: Mapping[str, object], max_concurrent: int, scheduler: str) -> Execution:
        """Runs of the definitions ``definitions.rebuilt`` makes of ``settings``, ``max_concurrent`` at
        a time, every step of each on the Dask cluster at ``scheduler`` (dagster-dask's executor)."""
        if max_concurrent < 1:
            raise ClearRagError(
                "--max-concurrent must be at least 1",
                value=max_concurrent,
                fix="Give the number of runs to execute at once (by default one per Dask worker)",
            )
        return cls({**settings, "executor": "dask", "scheduler": scheduler}, max_concurrent)

    def job(self, keys: Sequence[AssetKey], partition: str | None = None) -> ReconstructableJob:
        """A reconstructable pointer to the job of ``keys`` (which share one partition set), found
        from the folder that holds the `assets` package wherever a run's working directory is.

        Named after ``partition``: dagster-dask names each step's task ``<job name>.<step key>``, and
        Dask takes two tasks of one name for the same task, so two runs of one job at once (two
        partitions of an asset) got one execution between them: the second run succeeded having
        executed nothing (seen here as partitions requested again on the next tick). A name per
        partition keeps the runs' tasks apart."""
        name = (
            RUN_JOB
            if partition is None
            else f"{RUN_JOB}_{hashlib.sha256(partition.encode()).hexdigest()[:16]}"
        )
        return build_reconstructable_job(
            definitions.__name__,
            definitions.rebuilt_job.__name__,
            reconstructable_kwargs={
                "keys": [key.path for key in keys],
                "name": name,
                **(self.settings or {}),
            },
            reconstructor_working_directory=str(Path(definitions.__file__).resolve().parents[1]),
        )

    @contextmanager
    def workers(self) -> Iterator[Executor | None]:
        """The pool the runs go to (None in process), kept for a whole update: starting a worker
        imports dagster and clear-rag (``spawn``: a fork server's children cannot start their own)."""
        if self.settings is None:
            with nullcontext():
                yield None
            return
        spawn = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(self.max_concurrent, mp_context=spawn) as pool:
            yield pool


def by_suite(runs: Sequence[Run]) -> list[Run]:
    """Each run split into one run per suite (the first part of its keys). Suites over one corpus share
    a chunking's store, and the steps of one run may run at once out of process: split, the stores of a
    chunking are filled one suite after the other, since different asset sets go in turn."""
    split: list[Run] = []
    for partition, keys in runs:
        suites = dict.fromkeys(key.path[0] for key in keys)
        split += [(partition, [k for k in keys if k.path[0] == suite]) for suite in suites]
    return split


def _run(
    home: str, job: ReconstructableJob, run: Run, run_config: Mapping[str, Any]
) -> tuple[list[str], str]:
    """In a worker: execute one run; the checks that failed, and why the run failed ('' if it did not).

    A message, not an exception: clear-rag's errors take keyword arguments and do not unpickle.
    """
    partition, keys = run
    tags = {PARTITION_TAG: partition} if partition is not None else {}
    with DagsterInstance.from_config(home) as instance:
        result = execute_job(job, instance, run_config=run_config, tags=tags, asset_selection=keys)
    failed = [
        c.asset_check_key.to_user_string() for c in result.get_asset_check_evaluations() if not c.passed
    ]
    if result.success:
        return failed, ""
    steps = [
        f"{event.step_key}: {event.step_failure_data.error.message.strip()}"
        for event in result.get_step_failure_events()
        if event.step_failure_data.error is not None
    ]
    return failed, f"run {result.run_id} failed [{partition or '-'}]: {'; '.join(steps) or 'see its logs'}"


def execute_out_of_process(
    runs: Sequence[Run],
    execution: Execution,
    instance: DagsterInstance,
    pool: Executor,
    run_config: Mapping[str, Any],
) -> list[list[str]]:
    """Execute ``runs`` in ``pool`` (consecutive runs of the same assets side by side); the checks
    that failed in each, each group of runs through its assets' job (``execution.job``). The first
    run that failed stops the rest, as it does in process."""
    groups: list[list[Run]] = []
    for run in runs:
        if groups and groups[-1][0][1] == run[1]:
            groups[-1].append(run)
        else:
            groups.append([run])
    home = instance.root_directory
    failed_checks: list[list[str]] = []
    for group in groups:
        futures = [pool.submit(_run, home, execution.job(run[1], run[0]), run, run_config) for run in group]
        for future in futures:
            failed, error = future.result()
            if error:
                raise ClearRagError(
                    error,
                    fix="Read the run in `dagster dev`, or run it with --executor in_process for a traceback",
                )
            failed_checks.append(failed)
    return failed_checks


DATA_VERSION_TAG = "dagster/data_version"  # the tag a materialization records its data version under


@dataclass(frozen=True)
class Latest:
    """What a partition's latest materialization recorded: the run that made it, its data version
    ("" where it recorded none) and its metadata's ``seconds`` (None where absent)."""

    run_id: str
    data_version: str
    seconds: float | None


def latest(instance: DagsterInstance, key: AssetKey, partitions: Sequence[str]) -> dict[str, Latest]:
    """Each of ``partitions``' latest materialization of ``key``; a partition never materialized
    raises IndexError (the callers have just materialized every one)."""
    found = {}
    for partition in partitions:
        record = instance.fetch_materializations(
            AssetRecordsFilter(asset_key=key, asset_partitions=[partition]), limit=1
        ).records[0]
        event = record.asset_materialization
        tags = (event.tags if event else None) or {}
        seconds = event.metadata.get("seconds") if event else None
        value = seconds.value if seconds is not None else None
        found[partition] = Latest(
            record.run_id,
            tags.get(DATA_VERSION_TAG, ""),
            float(value) if isinstance(value, int | float) else None,
        )
    return found
