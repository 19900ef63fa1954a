"""The options of ``python -m assets.run`` (``arguments``), and the checks argparse cannot make alone
(``checked``): which executor, and the Dask flags only where they mean something."""

from __future__ import annotations

import argparse
from pathlib import Path

from assets.definitions import EXECUTOR_ENV, EXECUTORS, SCHEDULER_ENV
from assets.resources import FAKE_RESULTS, RESULTS, RUN_RESULTS
from clear_rag import environ

HOME = Path(".clear-rag") / "dagster"


def arguments() -> argparse.ArgumentParser:
    """The options of ``python -m assets.run`` (what a result file's recorded command is parsed by)."""
    parser = argparse.ArgumentParser(
        prog="python -m assets.run",
        description="Bring the suites' results up to date: observe, then materialize only what changed.",
    )
    parser.add_argument("--embedder", default=None, help="minilm (default, or $CLEAR_RAG_EMBEDDER) or hash")
    parser.add_argument(
        "--chat",
        default=None,
        help="the chat model of the rows that expand the query or use HyDE, and the sample question's "
        "answerer: smollm2 for the rows (default, or $CLEAR_RAG_CHAT; echo with --embedder hash) and "
        "extractive for the question (extractive:lexical with --embedder hash), or any --chat name",
    )
    parser.add_argument(
        "--reranker",
        default=None,
        help="the cross-encoder of the rows that rerank ($CLEAR_RAG_RERANKER; lexical with --embedder hash; "
        "otherwise the one the config names, and rows whose reranker is not here are skipped)",
    )
    parser.add_argument("--home", type=Path, default=HOME, help="DAGSTER_HOME for the run history")
    parser.add_argument(
        "--executor",
        choices=EXECUTORS,
        default=None,
        help=f"in_process (default, or ${EXECUTOR_ENV}): every run in this process; multiprocess: "
        "Dagster's multiprocess executor, each step in a process of its own; dask: dagster-dask's "
        "executor, each step a task on a Dask cluster",
    )
    parser.add_argument(
        "--max-concurrent",
        type=int,
        default=None,
        help="out of process: runs at once, each one partition (default: the cores, or the Dask workers)",
    )
    parser.add_argument(
        "--scheduler",
        default=None,
        help=f"with --executor dask: the scheduler's address, tcp://HOST:PORT (or ${SCHEDULER_ENV}; "
        "default: start a local one)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="with --executor dask and no --scheduler: the local cluster's workers (default: the cores)",
    )
    parser.add_argument(
        "--suite", action="append", help="a suite name or file (repeatable; default: the bundled suites)"
    )
    parser.add_argument("--no-sample", action="store_true", help="leave out the sample question's assets")
    parser.add_argument(
        "--no-site", action="store_true", help="leave out the README's and the site's pages, plots and build"
    )
    parser.add_argument(
        "--results-dir",
        help=f"where result files go (default: {RUN_RESULTS}/, or {FAKE_RESULTS}/ for hash; "
        f"{RESULTS}/ publishes them for the README)",
    )
    return parser


def checked(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    """``args``, with the executor chosen (flag or environment) and the Dask flags only where they mean
    something; argparse's own error otherwise."""
    # $CLEAR_RAG_EXECUTOR may name a cluster executor for `dagster dev` (k8s, celery): in process here.
    chosen = environ.text(environ.EXECUTOR)
    args.executor = args.executor or (chosen if chosen in EXECUTORS else EXECUTORS[0])
    args.scheduler = args.scheduler or (
        environ.text(environ.DASK_SCHEDULER) if args.executor == "dask" else None
    )
    if args.executor != "dask" and (args.scheduler or args.workers):
        parser.error("--scheduler and --workers go with --executor dask")
    if args.scheduler and args.workers:
        parser.error(
            "--workers starts a local cluster; leave it out with --scheduler (the cluster has its own)"
        )
    for flag, value in (("--workers", args.workers), ("--max-concurrent", args.max_concurrent)):
        if value is not None and value < 1:
            parser.error(f"{flag} {value}: give a whole number of at least 1")
    return args
