"""The code location: every bundled suite's assets, with resources for the chosen embedder.

Only wiring lives here. ``dagster dev`` (run from the project root: ``[tool.dagster]`` in
pyproject.toml names this module) calls ``defs``; tests and ``python -m assets.run`` call
``build_definitions`` with their own suites and embedder. Paths are relative to the working
directory, as they are for ``clear-rag ablate``: the suite files name their corpus and golden set so.
"""

from __future__ import annotations

import importlib
import os
import warnings
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from dagster import (
    AssetKey,
    AssetSelection,
    BetaWarning,
    Definitions,
    ExecutorDefinition,
    JobDefinition,
    define_asset_job,
    definitions,
    in_process_executor,
    multiprocess_executor,
)

from assets.corpus import source_assets
from assets.evaluation import evaluation_assets
from assets.layout import Layout
from assets.parsed import parsed_assets
from assets.resources import (
    ChatResource,
    EmbedderResource,
    PathsResource,
    answerer_for,
    chat_for,
    reranker_for,
    results_dir_for,
)
from assets.sample import Sample, sample_assets
from assets.site import SiteLayout, site_assets
from assets.stores import store_assets
from assets.training import adaptation_assets, training_assets
from clear_rag import environ
from clear_rag.errors import ConfigError
from clear_rag.providers.select import DEFAULT_EMBEDDER

SUITES: tuple[str, ...] = ("tech", "tech-expansion")
EMBEDDER_ENV = environ.EMBEDDER.name  # the variable `clear-rag ablate --embedder` reads too
CHAT_ENV = environ.CHAT.name
RERANKER_ENV = environ.RERANKER.name
# in_process (the default), multiprocess, dask, k8s or celery; site/scale.md
EXECUTOR_ENV = environ.EXECUTOR.name
MAX_CONCURRENT_ENV = environ.MAX_CONCURRENT.name
SCHEDULER_ENV = environ.DASK_SCHEDULER.name
EXECUTORS = ("in_process", "multiprocess", "dask")
# dagster-dask's releases pin the Dagster patch release they were cut with (0.29.27: dagster==1.13.27);
# installed beside 1.13.28 without its pin (Makefile), it warns of the mismatch as it is imported.
DAGSTER_DASK_MISMATCH = "Found version mismatch between `dagster-shared`"
# Executors of optional packages, not dependencies of clear-rag: name -> (module, executor definition)
CLUSTER_EXECUTORS = {
    "k8s": ("dagster_k8s", "k8s_job_executor"),
    "celery": ("dagster_celery", "celery_executor"),
}


def dask_executor(scheduler: str | None) -> ExecutorDefinition:
    """dagster-dask's executor, every step of a run a task on the Dask cluster at ``scheduler`` (or
    ``$CLEAR_RAG_DASK_SCHEDULER``). Each task opens the run's instance from its reference (so the
    instance must be on a disk every worker reads) and rebuilds the job from the run's
    reconstructable pointer, as a multiprocess step does."""
    address = scheduler or environ.text(environ.DASK_SCHEDULER)
    if address is None:
        raise ConfigError(
            "needs the address of a Dask scheduler",
            field=SCHEDULER_ENV,
            fix="Set it to tcp://HOST:PORT, or run `python -m assets.run --executor dask`, which starts "
            "a local cluster where none is named",
        )
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=DAGSTER_DASK_MISMATCH)
            module = importlib.import_module("dagster_dask")
    except ImportError:
        raise ConfigError(
            "needs the packages dagster-dask and distributed, which are not installed",
            field=EXECUTOR_ENV,
            value="dask",
            fix="make dask (or pip install -e '.[dask]' and pip install --no-deps dagster-dask)",
        ) from None
    chosen: ExecutorDefinition = module.dask_executor
    return chosen.configured({"cluster": {"existing": {"address": address}}}, name="dask")


def executor_for(
    name: str | None = None,
    max_concurrent: int | None = None,
    *,
    start_method: str = "forkserver",
    scheduler: str | None = None,
) -> ExecutorDefinition:
    """The executor every run of the code location uses: ``in_process`` (the default: on two cores a
    subprocess per step costs more than most steps), or Dagster's ``multiprocess`` executor, each step
    in a process of its own, at most ``max_concurrent`` at once (default: the cores).

    ``forkserver`` forks each step from a server that has imported this code location once, where
    ``spawn`` (Dagster's default) starts a fresh interpreter that imports dagster and clear-rag again;
    ``bench/executor.py`` measures both. ``k8s`` and ``celery`` are the executors of the packages
    dagster-k8s and dagster-celery, where installed, configured by each run's config (site/scale.md).
    ``dask`` sends every step to the Dask scheduler at ``scheduler`` (``dask_executor``).
    """
    name = name or environ.text(environ.EXECUTOR) or EXECUTORS[0]
    if name == "in_process":
        return in_process_executor
    if name == "dask":
        return dask_executor(scheduler)
    if name in CLUSTER_EXECUTORS:
        module, attribute = CLUSTER_EXECUTORS[name]
        try:
            chosen: ExecutorDefinition = getattr(importlib.import_module(module), attribute)
        except ImportError:
            raise ConfigError(
                f"needs the package {module.replace('_', '-')}, which is not installed",
                field=EXECUTOR_ENV,
                value=name,
                fix=f"pip install {module.replace('_', '-')} (see site/scale.md for what else it needs)",
            ) from None
        return chosen
    if name != "multiprocess":
        raise ConfigError(
            "is not an executor clear-rag sets up",
            field=EXECUTOR_ENV,
            value=name,
            fix=f"Use one of {', '.join([*EXECUTORS, *CLUSTER_EXECUTORS])}",
        )
    if max_concurrent is not None and max_concurrent < 1:
        raise ConfigError(
            "must be a whole number of processes, at least 1",
            field="max_concurrent",
            value=max_concurrent,
            fix="Give the number of steps to run at once",
        )
    limit = max_concurrent or environ.whole_number(environ.MAX_CONCURRENT) or os.cpu_count() or 1
    # Preloaded once in the fork server: dagster, clear-rag and the asset modules (Dagster would
    # preload only dagster for a job rebuilt by a reconstructable pointer rather than a module).
    method = {"preload_modules": ["dagster", __name__]} if start_method == "forkserver" else {}
    return multiprocess_executor.configured(
        {"max_concurrent": limit, "start_method": {start_method: method}}, name="multiprocess"
    )


def build_definitions(
    suites: Sequence[str] = SUITES,
    *,
    embedder: str | None = None,
    chat: str | None = None,
    answerer: str | None = None,
    paths: PathsResource | None = None,
    embedder_resource: EmbedderResource | None = None,
    sample: bool = False,
    reranker: str | None = None,
    site: bool = False,
    executor: str | None = None,
    max_concurrent: int | None = None,
    start_method: str = "forkserver",
    scheduler: str | None = None,
    training: bool | None = None,
) -> Definitions:
    """The assets of ``suites`` and, with ``sample``, of the sample answer (where its corpus is), and
    with ``site``, the README, the site's pages and plots and its build, downstream of the results.

    ``chat`` is the model of the rows that expand the query or use HyDE; ``answerer`` answers the
    sample question (by default ``chat`` where one is named, else ``answerer_for``: the extractive
    answerer, which needs no compiled runtime).
    ``reranker`` (or ``$CLEAR_RAG_RERANKER``) is the cross-encoder of the rows that rerank, as
    ``clear-rag ablate --reranker`` sets it. ``executor`` and ``max_concurrent`` (or
    ``$CLEAR_RAG_EXECUTOR``, ``$CLEAR_RAG_MAX_CONCURRENT``) choose the executor (``executor_for``), and
    ``scheduler`` (or ``$CLEAR_RAG_DASK_SCHEDULER``) the Dask cluster of the ``dask`` one.
    ``training`` adds the trained models' assets (assets/training.py); by default with real models
    (any embedder but the ``hash`` fake), where they only check the shipped files' manifests.
    """
    name = embedder or environ.text(environ.EMBEDDER) or DEFAULT_EMBEDDER
    chat_name = chat or environ.text(environ.CHAT) or chat_for(name)
    reranker_name = reranker or environ.text(environ.RERANKER) or reranker_for(name)
    paths = paths or PathsResource(results_dir=results_dir_for(name))
    layouts = [
        replace(
            Layout.load(suite, embedder=name, chat=chat_name, reranker=reranker_name),
            results_dir=paths.results_dir,
        )
        for suite in suites
    ]
    # the sample question's answerer: the one named, else one that needs nothing compiled
    answering = answerer or chat or environ.text(environ.CHAT) or answerer_for(name)
    bundled = Sample.bundled(embedder=name, chat=answering) if sample else None
    published = (
        SiteLayout.load(
            Path("."),
            Path(paths.results_dir),
            {layout.suite.name: layout.key("result") for layout in layouts},
        )
        if site
        else None
    )
    return Definitions(
        assets=[
            *(sample_assets(bundled) if bundled is not None else []),
            *(
                definition
                for layout in layouts
                for group in (source_assets, parsed_assets, store_assets, evaluation_assets)
                for definition in group(layout)
            ),
            *(site_assets(published) if published is not None else []),
            *(
                [*training_assets(), *adaptation_assets(layouts)]
                if (name != "hash" if training is None else training)
                else []
            ),
        ],
        resources={
            "embedder": embedder_resource or EmbedderResource(name=name),
            "chat": ChatResource(name=chat_name),
            "paths": paths,
        },
        # In process unless chosen: on two cores a subprocess per step costs more than most steps
        # (bench/executor.py measures it; site/scale.md).
        executor=executor_for(executor, max_concurrent, start_method=start_method, scheduler=scheduler),
    )


def rebuilt(**settings: object) -> Definitions:
    """The definitions ``python -m assets.run --executor multiprocess`` runs, rebuilt in every step's
    process from JSON ``settings`` (``build_definitions``'s keywords, with ``results_dir``,
    ``store_root`` and ``baseline`` for the paths resource): the reconstructable pointer each run
    carries names this function and those settings, since definitions built with arguments cannot be
    found as a module attribute."""
    # The beta warnings `python -m assets.run` silences (see corpus.py), silenced in these processes too.
    warnings.simplefilter("ignore", BetaWarning)
    paths = {k: settings.pop(k) for k in ("results_dir", "store_root", "baseline") if k in settings}
    return build_definitions(paths=PathsResource(**paths), **settings)  # type: ignore[arg-type]


RUN_JOB = "clear_rag_run"


def rebuilt_job(keys: list[list[str]], name: str = RUN_JOB, **settings: object) -> JobDefinition:
    """The job an out-of-process run executes: the assets ``keys`` (one partition set) of
    ``rebuilt(**settings)``, under a name of its own (``name``), since
    ``dagster.build_reconstructable_job`` puts it in a repository where the implicit asset job's
    reserved name may not go."""
    job = define_asset_job(name, selection=AssetSelection.assets(*(AssetKey(k) for k in keys)))
    return Definitions.merge(rebuilt(**settings), Definitions(jobs=[job])).resolve_job_def(name)


@definitions
def defs() -> Definitions:
    """What ``dagster dev`` loads: the bundled suites, on the embedder ``$CLEAR_RAG_EMBEDDER`` names and
    the chat model ``$CLEAR_RAG_CHAT`` names (by default the real models, or the fakes with ``hash``).

    Lazy (``@definitions``), so that importing this module, as tests do, reads no suite file.
    """
    return build_definitions(sample=True, site=True)
