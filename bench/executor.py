"""``python -m bench.executor``: a suite's evaluation partitions in process against Dagster's multiprocess
executor and dagster-dask's executor on a local Dask cluster, two runs at a time, on this machine's cores.

The suite file is copied into a work folder of its own first, so that an edit of the suite while the
benchmark runs (rows added or renamed) cannot change what it measures. Its stores and indexes are built
once (an ordinary in-process update, untimed); then every evaluation partition is materialized again
by each contender, rounds rotating the order of the contenders so that the load other work puts on the
machine falls on all of them:

- ``in_process``: one run after another in this process (``python -m assets.run``'s default);
- ``multiprocess``: ``--executor multiprocess --max-concurrent N``: N run workers, every step in a
  process forked from a server that imported the code location once (``assets.executor``);
- ``multiprocess_spawn``: the same with Dagster's default start method, a fresh interpreter per step;
- ``dask_1`` and ``dask_2``: ``--executor dask --workers N``: a Dask scheduler and N single-threaded
  workers started for the contender's turn, each a process of its own on 127.0.0.1, the same N run
  workers submitting every step to the cluster (``assets.cluster``).

Wall time covers everything a user waits for, the worker pool's start included, and for Dask the
cluster's start and stop (its start is also recorded apart, ``cluster_start_s``). Each contender must
measure what the others measured: the data version of every partition (its config hash and a digest
of its per-question metrics) is compared, and the run stops if any differs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.common import ROOT, write_result

if TYPE_CHECKING:  # assets imports dagster, which main imports only when it runs
    from assets.executor import Latest

CONTENDERS = ("in_process", "multiprocess", "multiprocess_spawn", "dask_1", "dask_2")
DASK_WORKERS = {"dask_1": 1, "dask_2": 2}


def _versions(found: dict[str, Latest]) -> dict[str, str]:
    return {partition: materialization.data_version for partition, materialization in found.items()}


def _dask_versions(measured: dict[str, list[float]]) -> dict[str, str]:
    """The versions of dagster-dask and distributed, where a Dask contender ran."""
    if not measured:
        return {}
    from importlib.metadata import version

    return {name: version(name) for name in ("dagster-dask", "distributed")}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.executor", description=__doc__.split("\n")[0])
    parser.add_argument("--suite", default="tech-expansion", help="a bundled suite (default: tech-expansion)")
    parser.add_argument(
        "--contenders",
        default="in_process,multiprocess",
        help=f"comma-separated, of {', '.join(CONTENDERS)} (spawn takes the longest)",
    )
    parser.add_argument("--embedder", default="hash", help="hash (default: the fake, no model) or minilm")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; medians are reported")
    parser.add_argument("--max-concurrent", type=int, default=2, help="runs at once out of process")
    parser.add_argument(
        "--work",
        type=Path,
        default=ROOT / ".clear-rag" / "bench-executor",
        help="the instance, stores and result files (reused by the next run)",
    )
    args = parser.parse_args(argv)
    os.chdir(ROOT)  # suites name their corpus and golden set relative to the project root

    import dagster
    from dagster import BetaWarning

    from assets.cluster import local_cluster
    from assets.definitions import build_definitions
    from assets.executor import Execution, Run, execute_out_of_process, latest
    from assets.resources import PathsResource, chat_for, reranker_for
    from assets.run import CURSOR, QUIET, instance_at, run_in_process, update

    warnings.simplefilter("ignore", BetaWarning)
    warnings.simplefilter("ignore", DeprecationWarning)
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    frozen = work / f"{args.suite}.yaml"
    frozen.write_bytes((ROOT / "golden" / "suites" / f"{args.suite}.yaml").read_bytes())
    contenders = tuple(name for name in CONTENDERS if name in args.contenders.split(","))
    settings: dict[str, Any] = {
        "suites": [str(frozen)],
        "embedder": args.embedder,
        "chat": chat_for(args.embedder),
        "reranker": reranker_for(args.embedder),
        "sample": False,
        "site": False,
    }
    paths = PathsResource(results_dir=str(work / "results"), store_root=str(work / "stores"))
    defs = build_definitions(paths=paths, **settings)
    graph = defs.resolve_asset_graph()
    # The suite's evaluation asset (its key's prefix is the suite name with `-` as `_`).
    key = next(k for k in graph.materializable_asset_keys if k.path[-1] == "evaluation")
    partitions_def = graph.get(key).partitions_def
    if partitions_def is None:
        raise SystemExit(f"{key.to_user_string()} has no partitions")
    partitions = list(partitions_def.get_partition_keys())
    runs: list[Run] = [(partition, [key]) for partition in partitions]
    shared = {**settings, **paths.model_dump()}
    executions = {
        "multiprocess": Execution.multiprocess(shared, args.max_concurrent),
        "multiprocess_spawn": Execution.multiprocess(shared, args.max_concurrent, start_method="spawn"),
    }
    load_at_start = [round(x, 2) for x in os.getloadavg()]
    wall: dict[str, list[float]] = {name: [] for name in contenders}
    cluster_start: dict[str, list[float]] = {name: [] for name in contenders if name in DASK_WORKERS}
    inside: dict[str, list[float]] = {name: [] for name in contenders}
    with instance_at(work / "dagster") as instance:
        started = time.perf_counter()
        built = update(defs, instance, work / "dagster" / CURSOR)
        print(f"setup: {built.materialized} partitions materialized in {time.perf_counter() - started:.1f} s")
        job = defs.resolve_implicit_global_asset_job_def()
        reference = _versions(latest(instance, key, partitions))
        for round_ in range(args.repeat):
            order = contenders[round_ % len(contenders) :] + contenders[: round_ % len(contenders)]
            for name in order:
                before = latest(instance, key, partitions)
                started = time.perf_counter()
                if name in DASK_WORKERS:
                    with local_cluster(DASK_WORKERS[name], cwd=ROOT) as cluster:
                        cluster_start[name].append(cluster.start_s)
                        execution = Execution.dask(shared, args.max_concurrent, cluster.address)
                        with execution.workers() as pool:
                            assert pool is not None
                            execute_out_of_process(runs, execution, instance, pool, QUIET)
                else:
                    execution = executions.get(name, Execution())
                    with execution.workers() as pool:
                        if pool is None:
                            for run in runs:
                                run_in_process(job, instance, run, lambda _: None)
                        else:
                            execute_out_of_process(runs, execution, instance, pool, QUIET)
                seconds = time.perf_counter() - started
                # Every partition materialized again by this contender's own run (two runs of one job
                # at once once shared one Dask task: the second ran nothing and took no time).
                after = latest(instance, key, partitions)
                stale = sorted(p for p in partitions if after[p].run_id == before[p].run_id)
                if stale:
                    raise SystemExit(f"{name} did not materialize {stale} again")
                measured = _versions(after)
                if measured != reference:
                    differ = sorted(p for p in partitions if measured[p] != reference[p])
                    raise SystemExit(f"{name} measured other numbers for {differ}")
                wall[name].append(round(seconds, 2))
                # the sum of the evaluation steps' own seconds (their metadata): time inside the steps
                inside[name].append(round(sum(m.seconds or 0.0 for m in after.values()), 2))
                print(f"round {round_ + 1}: {name} {seconds:.1f} s (load {os.getloadavg()[0]:.2f})")
    median = {name: round(statistics.median(values), 2) for name, values in wall.items()}
    flags = f"--suite {args.suite} --embedder {args.embedder} --repeat {args.repeat}"
    flags += f" --contenders {','.join(contenders)}"
    payload = {
        "benchmark": "executor",
        "command": f"python -m bench.executor {flags} --max-concurrent {args.max_concurrent}",
        "what": f"every evaluation partition of {args.suite} ({len(partitions)}, embedder {args.embedder}), "
        "materialized in process, on Dagster's multiprocess executor"
        + (" and on dagster-dask's executor" if cluster_start else ""),
        "suite": args.suite,
        "embedder": args.embedder,
        "partitions": len(partitions),
        "max_concurrent": args.max_concurrent,
        "repeat": args.repeat,
        **{f"{name}_median_s": value for name, value in median.items()},
        **{
            f"speedup_{name}": round(median["in_process"] / value, 3)
            for name, value in median.items()
            if name != "in_process" and "in_process" in median
        },
        **{f"{name}_cluster_start_median_s": statistics.median(v) for name, v in cluster_start.items()},
        "note": "rounds rotate the order of the contenders, so that any other work on the machine falls "
        "on each of them (the load averages at the start and the end are recorded); wall time includes "
        f"starting the {args.max_concurrent} run workers, and for Dask starting and stopping the cluster "
        "(its start also apart); every contender measured the same data version for every partition",
        "wall_s": wall,
        "cluster_start_s": cluster_start,
        "step_seconds_sum": inside,
        "contenders": {
            "in_process": "one run after another in this process (python -m assets.run's default)",
            "multiprocess": f"--executor multiprocess --max-concurrent {args.max_concurrent}: run workers "
            "(spawn), each step forked from a server that preloaded dagster and assets.definitions",
            "multiprocess_spawn": "the same, each step a fresh interpreter (Dagster's default start method)",
            **{
                name: f"--executor dask --workers {n} --max-concurrent {args.max_concurrent}: a Dask "
                f"scheduler and {n} single-threaded worker{'s' * (n > 1)}, each a process of its own on "
                "127.0.0.1, started for the turn; every step a task on the cluster (dagster-dask)"
                for name, n in DASK_WORKERS.items()
                if name in contenders
            },
        },
        "versions": {"dagster": dagster.__version__, **_dask_versions(cluster_start)},
        "load_average_at_start": load_at_start,
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
    }
    path = write_result("executor", payload)
    print(f"medians: {median}")
    print(f"written to {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
