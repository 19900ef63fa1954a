"""The Dask cluster ``python -m assets.run --executor dask`` sends its runs' steps to (site/scale.md).

Either one that runs elsewhere (``--scheduler tcp://HOST:PORT``), checked to answer before any run goes
to it, or one started here for the update and stopped after it: a scheduler and ``workers`` workers,
each a process of its own (the ``dask scheduler`` and ``dask worker`` programs of the package
distributed) on 127.0.0.1, one thread per worker since Dagster's step execution is not thread-safe.

The one module that imports distributed. Every worker must see the project as the runs do: the same
working directory (suite files name their corpus and golden set relative to it), the same Python
environment and the same disks (the instance, the stores and the indexes); workers started here
inherit all three.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from clear_rag.errors import ClearRagError

READY_TIMEOUT_S = 120.0  # a loaded two-core machine starts a worker (imports included) in seconds
POLL_S = 0.05  # how often the scheduler file is looked for while the scheduler starts
STOP_TIMEOUT_S = 10.0  # SIGTERM, then SIGKILL after this
SCHEDULER_FLAGS = ("--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file")
# One thread (Dagster's steps are not thread-safe), and the worker itself with no nanny process above
# it: one process per worker.
WORKER_FLAGS = ("--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard", "--no-nanny")
FIX_UNREACHABLE = (
    "Start one (`dask scheduler --host HOST`, then `dask worker tcp://HOST:8786` in the project's folder "
    "on each machine), give its address as --scheduler tcp://HOST:PORT, or leave --scheduler out to "
    "start a local cluster of --workers workers"
)


@dataclass(frozen=True)
class Cluster:
    """A running cluster: its scheduler's address, its workers, the seconds it took to start (0 for
    one that was running already) and, for one started here, its workers' process ids."""

    address: str
    workers: int
    start_s: float = 0.0
    pids: tuple[int, ...] = ()


def _host_port(address: str) -> tuple[str, int]:
    """``tcp://HOST:PORT`` as (host, port); a clear error for anything else."""
    parts = urlsplit(address)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme != "tcp" or not parts.hostname or port is None:
        raise ClearRagError(
            "is not a Dask scheduler address",
            field="--scheduler",
            value=address,
            fix="Give it as tcp://HOST:PORT (the address `dask scheduler` prints; port 8786 by default)",
        )
    return parts.hostname, port


def connect(address: str, *, timeout: float = 30.0) -> Cluster:
    """The cluster whose scheduler is at ``address``, once it answers and has at least one worker.

    A plain TCP connection first, so that a scheduler that is not there is said at once (distributed's
    client would retry until its timeout and then name neither the cause nor the fix).
    """
    host, port = _host_port(address)
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as err:
        raise ClearRagError(
            f"no Dask scheduler answers there ({err.strerror or err})",
            field="--scheduler",
            value=address,
            fix=FIX_UNREACHABLE,
        ) from None
    from distributed import Client

    try:
        with Client(address, timeout=timeout) as client:  # type: ignore[no-untyped-call]
            client.wait_for_workers(1, timeout=timeout)
            workers = len(client.scheduler_info(n_workers=-1)["workers"])
    except (OSError, TimeoutError) as err:
        raise ClearRagError(
            f"the Dask scheduler there did not answer, or has no workers, within {timeout:g} s ({err})",
            field="--scheduler",
            value=address,
            fix=FIX_UNREACHABLE,
        ) from None
    return Cluster(address, workers)


def _stop(processes: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM each process's group (a worker's children too), then SIGKILL what is left."""
    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _written_address(path: Path) -> str | None:
    """The address in the scheduler file, or None while it is missing or half written."""
    try:
        return str(json.loads(path.read_text(encoding="utf-8"))["address"])
    except (OSError, ValueError, KeyError):
        return None


def _scheduler_address(path: Path, process: subprocess.Popen[bytes], log: Path, timeout: float) -> str:
    """The address the scheduler writes to ``path`` once it listens (its readiness, polled)."""
    deadline = time.monotonic() + timeout
    while (address := _written_address(path)) is None:
        if process.poll() is not None or time.monotonic() > deadline:
            said = log.read_text(encoding="utf-8", errors="replace")[-2000:]
            raise ClearRagError(
                f"the local Dask scheduler did not start (exit code {process.poll()}): {said}",
                fix="Check that the package distributed is installed (pip install -e '.[dask]')",
            )
        time.sleep(POLL_S)
    return address


@contextmanager
def local_cluster(
    workers: int, *, cwd: Path | None = None, timeout: float = READY_TIMEOUT_S
) -> Iterator[Cluster]:
    """A scheduler and ``workers`` single-threaded workers, each a process of its own on 127.0.0.1, in
    ``cwd`` (default: this one); yielded once every worker has joined, stopped on the way out."""
    if workers < 1:
        raise ClearRagError(
            "must be at least 1", field="--workers", value=workers, fix="Give the number of Dask workers"
        )
    started = time.perf_counter()
    folder = Path(tempfile.mkdtemp(prefix="clear-rag-dask-"))
    processes: list[subprocess.Popen[bytes]] = []
    python = [sys.executable, "-m"]
    try:
        scheduler_file, log = folder / "scheduler.json", folder / "scheduler.log"
        with log.open("wb") as out:
            processes.append(
                subprocess.Popen(
                    [*python, "distributed.cli.dask_scheduler", *SCHEDULER_FLAGS, str(scheduler_file)],
                    cwd=cwd,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # its own process group, stopped as one
                )
            )
        address = _scheduler_address(scheduler_file, processes[0], log, timeout)
        for n in range(workers):
            with (folder / f"worker-{n}.log").open("wb") as out:
                processes.append(
                    subprocess.Popen(
                        [
                            *python,
                            "distributed.cli.dask_worker",
                            address,
                            *WORKER_FLAGS,
                            "--name",
                            f"clear-rag-{n}",
                        ],
                        cwd=cwd,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
                )
        from distributed import Client

        with Client(address, timeout=timeout) as client:  # type: ignore[no-untyped-call]
            try:
                client.wait_for_workers(workers, timeout=timeout)
            except TimeoutError:
                said = (folder / "worker-0.log").read_text(encoding="utf-8", errors="replace")[-2000:]
                raise ClearRagError(
                    f"the local Dask workers did not all join within {timeout:g} s; the first said: {said}",
                    field="--workers",
                    value=workers,
                    fix="Give fewer workers, or start a cluster yourself and pass --scheduler",
                ) from None
        pids = tuple(process.pid for process in processes[1:])
        yield Cluster(address, workers, round(time.perf_counter() - started, 3), pids)
    finally:
        _stop(processes[::-1])
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def dask_cluster(scheduler: str | None, workers: int | None) -> Iterator[Cluster]:
    """The cluster at ``scheduler``, or a local one of ``workers`` workers (default: the cores)."""
    if scheduler is not None:
        yield connect(scheduler)
        return
    with local_cluster(workers or os.cpu_count() or 1) as cluster:
        yield cluster
