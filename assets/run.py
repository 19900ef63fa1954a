"""``python -m assets.run [--embedder hash|minilm]``: bring the bundled suites' results up to date.

One update is what Dagster's automation daemon does inside ``dagster dev``, done here in process: observe
the source assets (suite rows, suite, golden set, corpus files, by content hash), evaluate every
asset's automation condition, materialize what it requests (in process, one run per partition key),
and evaluate again until nothing is requested. The instance lives in ``.clear-rag/dagster`` (telemetry
off) and the automation cursor beside it, so the next update compares against this one: with nothing
changed it observes the hashes and requests nothing.

``--executor multiprocess --max-concurrent N`` executes the runs on Dagster's multiprocess executor,
the requested partitions of one asset N runs at a time (``assets.executor``; site/scale.md).
``--executor dask`` sends every step of those runs to a Dask cluster: the one at ``--scheduler
tcp://HOST:PORT``, or one of ``--workers`` workers started on this machine for the update
(``assets.cluster``).
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dagster import (
    AssetKey,
    AssetSelection,
    BetaWarning,
    DagsterInstance,
    Definitions,
    JobDefinition,
    PartitionsDefinition,
    SourceAsset,
    define_asset_job,
    deserialize_value,
    evaluate_automation_conditions,
    serialize_value,
)

from assets.arguments import HOME, arguments, checked
from assets.cluster import dask_cluster
from assets.definitions import (
    SUITES,
    build_definitions,
)
from assets.executor import Execution, Run, by_suite, execute_out_of_process
from assets.resources import (
    RESULTS,
    PathsResource,
    answerer_for,
    chat_for,
    committed_for,
    reranker_for,
    results_dir_for,
)
from assets.sample import Sample, print_answer
from assets.site import target_for
from clear_rag import environ
from clear_rag.errors import ClearRagError
from clear_rag.providers.select import DEFAULT_EMBEDDER
from clear_rag.results import reproduce

CURSOR = "automation-cursor.json"
OBSERVE_JOB = "observe_sources"
DAGSTER_YAML = "telemetry:\n  enabled: false\n"
MAX_TICKS = 10  # a change travels one level per tick: store, indexes, evaluation, result
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}  # Dagster logs every event at DEBUG

# (partition key or None, partition set or None) -> the assets one run materializes
Requested = dict[tuple[str | None, PartitionsDefinition | None], list[AssetKey]]


@dataclass
class Update:
    """What one update observed and ran: per tick, the partitions materialized for each asset."""

    observed: list[str] = field(default_factory=list)
    ticks: list[dict[str, list[str | None]]] = field(default_factory=list)
    failed_checks: list[str] = field(default_factory=list)

    @property
    def materialized(self) -> int:
        return sum(len(parts) for tick in self.ticks for parts in tick.values())

    def partitions(self, asset: str) -> list[str | None]:
        return sorted((p for tick in self.ticks for p in tick.get(asset, [])), key=str)


def instance_at(home: Path = HOME) -> DagsterInstance:
    """A persistent instance in ``home``, created with telemetry disabled on first use."""
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():
        config.write_text(DAGSTER_YAML, encoding="utf-8")
    return DagsterInstance.from_config(str(home.resolve()))


def _load_cursor(path: Path) -> Any:
    """The automation cursor the last update left, or None before the first.

    Typed ``Any`` because Dagster does not re-export the cursor's class (``AssetDaemonCursor``);
    ``serialize_value`` writes the class name into the file and ``deserialize_value`` rebuilds it.
    """
    return deserialize_value(path.read_text(encoding="utf-8")) if path.exists() else None


def _observe(sources: Sequence[SourceAsset], instance: DagsterInstance) -> None:
    """One in-process run that observes ``sources``: a job selecting every asset of definitions that hold
    nothing else. Dagster's own ``observe`` does the same but is not re-exported; this is built on public
    names so that an upgrade that moves private modules cannot break ``make run``."""
    job = define_asset_job(OBSERVE_JOB, selection=AssetSelection.all(include_sources=True))
    Definitions(assets=sources, jobs=[job]).resolve_job_def(OBSERVE_JOB).execute_in_process(
        instance=instance, run_config=QUIET
    )


def observe_sources(defs: Definitions, instance: DagsterInstance) -> list[str]:
    """Record one observation of every observable source: the unpartitioned ones in one run, each
    partitioned one in its own (one run cannot span two partition sets)."""
    sources = [a for a in defs.assets or () if isinstance(a, SourceAsset) and a.is_observable]
    plain = [s for s in sources if s.partitions_def is None]
    for batch in [plain] * bool(plain) + [[s] for s in sources if s.partitions_def is not None]:
        _observe(batch, instance)
    return [source.key.to_user_string() for source in sources]


def update(
    defs: Definitions,
    instance: DagsterInstance,
    cursor_file: Path,
    *,
    log: Callable[[str], None] = lambda _: None,
    execution: Execution | None = None,
) -> Update:
    """Observe, then evaluate and materialize tick by tick until the conditions request nothing."""
    execution = execution or Execution()
    with execution.workers() as pool:
        return _update(defs, instance, cursor_file, log, execution, pool)


def _update(
    defs: Definitions,
    instance: DagsterInstance,
    cursor_file: Path,
    log: Callable[[str], None],
    execution: Execution,
    pool: Executor | None,
) -> Update:
    done = Update(observed=observe_sources(defs, instance))
    cursor = _load_cursor(cursor_file)
    graph = defs.resolve_asset_graph()
    order = {key: n for n, key in enumerate(graph.toposorted_asset_keys)}
    job = defs.resolve_implicit_global_asset_job_def()
    for _ in range(MAX_TICKS):
        result = evaluate_automation_conditions(defs=defs, instance=instance, cursor=cursor)
        cursor = result.cursor
        cursor_file.write_text(serialize_value(cursor), encoding="utf-8")
        requested: Requested = defaultdict(list)
        for key in graph.materializable_asset_keys:
            for partition in result.get_requested_partitions(key):
                # One run covers assets that share the partition key *and* the partition set.
                requested[(partition, graph.get(key).partitions_def)].append(key)
        if not requested:
            break
        runs: list[Run] = [(partition, keys) for (partition, _), keys in requested.items()]
        # Upstream partitions first: every chunking's store and indexes, then the rows, then results;
        # out of process, one suite per run, and the runs of one asset set next to one another.
        runs = sorted(
            ((partition, sorted(keys, key=order.__getitem__)) for partition, keys in runs),
            key=lambda run: sorted(order[k] for k in run[1]),
        )
        if pool is None:
            failed = [run_in_process(job, instance, run, log) for run in runs]
        else:
            runs = sorted(by_suite(runs), key=lambda run: sorted(order[k] for k in run[1]))
            for partition, keys in runs:
                log(f"materializing {', '.join(k.to_user_string() for k in keys)} [{partition or '-'}]")
            failed = execute_out_of_process(runs, execution, instance, pool, QUIET)
        done.failed_checks += [
            f"{check} [{partition or '-'}]"
            for (partition, _), checks in zip(runs, failed, strict=True)
            for check in checks
        ]
        tick: dict[str, list[str | None]] = defaultdict(list)
        for (partition, _), keys in requested.items():
            for key in keys:
                tick[key.to_user_string()].append(partition)
        done.ticks.append({key: sorted(parts, key=str) for key, parts in tick.items()})
    return done


def run_in_process(
    job: JobDefinition, instance: DagsterInstance, run: Run, log: Callable[[str], None]
) -> list[str]:
    """Execute one run in this process; the checks that failed."""
    partition, keys = run
    log(f"materializing {', '.join(k.to_user_string() for k in keys)} [{partition or '-'}]")
    ran = job.execute_in_process(
        asset_selection=keys, partition_key=partition, instance=instance, run_config=QUIET
    )
    return [c.asset_check_key.to_user_string() for c in ran.get_asset_check_evaluations() if not c.passed]


def result_files(defs: Definitions, instance: DagsterInstance) -> list[str]:
    """Where each suite's result asset last wrote its file (its ``path`` metadata)."""
    found = []
    for key in defs.resolve_asset_graph().materializable_asset_keys:
        event = instance.get_latest_materialization_event(key) if key.path[-1] == "result" else None
        materialization = event.asset_materialization if event is not None else None
        if materialization is not None and "path" in materialization.metadata:
            found.append(str(materialization.metadata["path"].value))
    return sorted(found)


def main(argv: Sequence[str] | None = None) -> int:
    parser = arguments()
    args = checked(parser, parser.parse_args(argv))
    started = time.perf_counter()
    with warnings.catch_warnings():
        # Observable source assets and DataVersionsByPartition are beta; chosen on purpose (see corpus.py).
        warnings.simplefilter("ignore", BetaWarning)
        name = args.embedder or environ.text(environ.EMBEDDER) or DEFAULT_EMBEDDER
        paths = PathsResource(results_dir=args.results_dir or results_dir_for(name))
        chat = args.chat or environ.text(environ.CHAT) or chat_for(name)
        answerer = args.chat or environ.text(environ.CHAT) or answerer_for(name)
        reranker = args.reranker or environ.text(environ.RERANKER) or reranker_for(name)
        settings: dict[str, Any] = {
            "suites": list(args.suite or SUITES),
            "embedder": name,
            "chat": chat,
            "answerer": answerer,
            "reranker": reranker,
            "sample": not args.no_sample,
            "site": not args.no_site,
        }
        defs = build_definitions(paths=paths, **settings)
        execution = Execution()
        if args.executor == "multiprocess":
            limit = args.max_concurrent or os.cpu_count() or 1
            execution = Execution.multiprocess({**settings, **paths.model_dump()}, limit)
        sample = None if args.no_sample else Sample.bundled(embedder=name, chat=answerer)
        with ExitStack() as stack:
            if args.executor == "dask":
                cluster = stack.enter_context(dask_cluster(args.scheduler, args.workers))
                print(f"Dask scheduler {cluster.address}, {cluster.workers} workers")
                limit = args.max_concurrent or cluster.workers
                execution = Execution.dask({**settings, **paths.model_dump()}, limit, cluster.address)
            instance = stack.enter_context(instance_at(args.home))
            done = update(defs, instance, args.home / CURSOR, log=print, execution=execution)
            files = result_files(defs, instance)
            answer = print_answer(sample, instance) if sample is not None else ""
    if answer:
        print(f"\n{answer}\n")
    print(f"observed {len(done.observed)} sources; materialized {done.materialized} asset partitions")
    for path in files:
        print(f"results: {path}")
    for path in files:
        suite = json.loads(Path(path).read_text(encoding="utf-8"))["suite"]
        compared = reproduce.reproduced(Path(path), committed_for(suite, name))
        if compared is not None:
            print(reproduce.format(compared))
    for check in done.failed_checks:
        print(f"FAILED check {check}")
    print(f"done in {time.perf_counter() - started:.1f} s")
    # The publishing command runs what this one ran: the same suites and models.
    same = "".join(f" --suite {suite}" for suite in args.suite or ()) + "".join(
        f" --{flag} {value}"
        for flag, value in (("embedder", args.embedder), ("chat", args.chat), ("reranker", args.reranker))
        if value
    )
    print(
        "next:\n"
        f"  browse the lineage, partitions and checks:  DAGSTER_HOME={args.home.resolve()} "
        ".venv/bin/dagster dev -h 127.0.0.1 -p 3000\n"
        '  ask your own question of the sample store:   .venv/bin/clear-rag ask "..." --stages\n'
        "  query the result files with DuckDB:           .venv/bin/clear-rag results show best_rows "
        f"--results-dir {paths.results_dir}\n"
        f"  publish to {RESULTS}/ for the README tables:    .venv/bin/python -m assets.run{same} "
        f"--results-dir {RESULTS} && .venv/bin/clear-rag report\n"
        + (
            f"  read this run's site (pages, plots):          "
            f"{target_for(Path(paths.results_dir)) / 'site-build' / 'index.html'}\n"
            if not args.no_site
            else ""
        )
        + "  watch retrieval stage by stage in the page:  "
        f".venv/bin/clear-rag serve --embedder {name} --chat {answerer}   (http://127.0.0.1:8000/)"
    )
    return 1 if done.failed_checks else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ClearRagError as err:  # one line a person can act on, not a traceback
        print(f"error: {err}", file=sys.stderr)
        sys.exit(err.exit_code)
