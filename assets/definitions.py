"""The code location: every bundled suite's assets, with resources for the chosen embedder.

Only wiring lives here. ``dagster dev`` (run from the project root: ``[tool.dagster]`` in
pyproject.toml names this module) calls ``defs``; tests and ``python -m assets.run`` call
``build_definitions`` with their own suites and embedder. Paths are relative to the working
directory, as they are for ``clear-rag ablate``: the suite files name their corpus and golden set so.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from dagster import Definitions, definitions, in_process_executor

from assets.corpus import source_assets
from assets.evaluation import evaluation_assets
from assets.layout import Layout
from assets.resources import EmbedderResource, PathsResource, results_dir_for
from assets.stores import store_assets
from clear_rag.providers.select import DEFAULT_EMBEDDER

SUITES: tuple[str, ...] = ("tech",)
EMBEDDER_ENV = "CLEAR_RAG_EMBEDDER"  # the variable `clear-rag ablate --embedder` reads too


def build_definitions(
    suites: Sequence[str] = SUITES,
    *,
    embedder: str | None = None,
    paths: PathsResource | None = None,
    embedder_resource: EmbedderResource | None = None,
) -> Definitions:
    name = embedder or os.environ.get(EMBEDDER_ENV, DEFAULT_EMBEDDER)
    layouts = [Layout.load(suite, embedder=name) for suite in suites]
    return Definitions(
        assets=[
            definition
            for layout in layouts
            for group in (source_assets, store_assets, evaluation_assets)
            for definition in group(layout)
        ],
        resources={
            "embedder": embedder_resource or EmbedderResource(name=name),
            "paths": paths or PathsResource(results_dir=results_dir_for(name)),
        },
        # Two cores: a subprocess per step costs more than the steps (see the Dagster notes). Runs of
        # different partitions still go in parallel, each its own run.
        executor=in_process_executor,
    )


@definitions
def defs() -> Definitions:
    """What ``dagster dev`` loads: the bundled suites, the embedder ``$CLEAR_RAG_EMBEDDER`` names.

    Lazy (``@definitions``), so that importing this module, as tests do, reads no suite file.
    """
    return build_definitions()
