"""The code location: every bundled suite's assets, with resources for the chosen embedder.

Only wiring lives here. ``dagster dev`` (run from the project root: ``[tool.dagster]`` in
pyproject.toml names this module) calls ``defs``; tests and ``python -m assets.run`` call
``build_definitions`` with their own suites and embedder. Paths are relative to the working
directory, as they are for ``clear-rag ablate``: the suite files name their corpus and golden set so.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from dagster import Definitions, definitions, in_process_executor

from assets.corpus import source_assets
from assets.evaluation import evaluation_assets
from assets.layout import Layout
from assets.parsed import parsed_assets
from assets.resources import (
    ChatResource,
    EmbedderResource,
    PathsResource,
    chat_for,
    reranker_for,
    results_dir_for,
)
from assets.sample import Sample, sample_assets
from assets.site import SiteLayout, site_assets
from assets.stores import store_assets
from clear_rag.providers.select import DEFAULT_EMBEDDER

SUITES: tuple[str, ...] = ("tech", "tech-expansion")
EMBEDDER_ENV = "CLEAR_RAG_EMBEDDER"  # the variable `clear-rag ablate --embedder` reads too
CHAT_ENV = "CLEAR_RAG_CHAT"
RERANKER_ENV = "CLEAR_RAG_RERANKER"


def build_definitions(
    suites: Sequence[str] = SUITES,
    *,
    embedder: str | None = None,
    chat: str | None = None,
    paths: PathsResource | None = None,
    embedder_resource: EmbedderResource | None = None,
    sample: bool = False,
    reranker: str | None = None,
    site: bool = False,
) -> Definitions:
    """The assets of ``suites`` and, with ``sample``, of the sample answer (where its corpus is), and
    with ``site``, the README, the site's pages and plots and its build, downstream of the results.

    ``reranker`` (or ``$CLEAR_RAG_RERANKER``) is the cross-encoder of the rows that rerank, as
    ``clear-rag ablate --reranker`` sets it.
    """
    name = embedder or os.environ.get(EMBEDDER_ENV, DEFAULT_EMBEDDER)
    chat_name = chat or os.environ.get(CHAT_ENV) or chat_for(name)
    reranker_name = reranker or os.environ.get(RERANKER_ENV) or reranker_for(name)
    paths = paths or PathsResource(results_dir=results_dir_for(name))
    layouts = [
        replace(
            Layout.load(suite, embedder=name, chat=chat_name, reranker=reranker_name),
            results_dir=paths.results_dir,
        )
        for suite in suites
    ]
    bundled = Sample.bundled(embedder=name, chat=chat_name) if sample else None
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
        ],
        resources={
            "embedder": embedder_resource or EmbedderResource(name=name),
            "chat": ChatResource(name=chat_name),
            "paths": paths,
        },
        # Two cores: a subprocess per step costs more than the steps (see the Dagster notes). Runs of
        # different partitions still go in parallel, each its own run.
        executor=in_process_executor,
    )


@definitions
def defs() -> Definitions:
    """What ``dagster dev`` loads: the bundled suites, on the embedder ``$CLEAR_RAG_EMBEDDER`` names and
    the chat model ``$CLEAR_RAG_CHAT`` names (by default the real models, or the fakes with ``hash``).

    Lazy (``@definitions``), so that importing this module, as tests do, reads no suite file.
    """
    return build_definitions(sample=True, site=True)
