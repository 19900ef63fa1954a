"""The evaluation of each row (one partition per row) and the suite's result file assembled from them.

- ``<suite>/evaluation``: ``run_row`` for one row over every golden question; its data version starts
  with the row's config hash and ends with a digest of its per-question metrics, so a re-run that
  measures the same numbers requests nothing downstream;
- ``<suite>/result``: the rows in suite order with their paired comparisons, written where
  ``clear-rag ablate --save-results`` writes (``<results_dir>/<suite>.json``), in the same format.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dagster import (
    AssetDep,
    AssetIn,
    AssetsDefinition,
    DataVersion,
    MaterializeResult,
    MetadataValue,
    PythonObjectDagsterType,
    asset,
)

from assets import checks
from assets.layout import AUTOMATION, Layout, digest, partition_key, with_vectors
from assets.resources import ChatResource, EmbedderResource, PathsResource
from clear_rag.errors import ConfigError
from clear_rag.eval.generations import cached_chat
from clear_rag.eval.runner import metric_names, run_row
from clear_rag.eval.stores import corpus_sha256, store_dir, suite_labels
from clear_rag.report.tables import suite_table
from clear_rag.results.document import result_document, with_command
from clear_rag.results.files import write_result
from clear_rag.store.sqlite import Store

GROUP = "evaluation"
ROW = PythonObjectDagsterType(dict, name="RowResult", description="One row as `run_row` returns it.")


def measured(row: Mapping[str, Any]) -> str:
    """A digest of what a row measured: per-question metrics and what they were measured on (or why
    it was skipped). Dates, timings and trace ids are left out: they differ on every run while the
    numbers do not."""
    if "skipped" in row:
        return digest("skipped", row["skipped"])
    questions = [
        json.dumps([q["id"], q["metrics"], q["retrieved"]], sort_keys=True) for q in row["questions"]
    ]
    return digest(row["corpus_sha256"], row["golden_sha256"], json.dumps(row["models"]), *questions)


def evaluation_assets(layout: Layout) -> list[AssetsDefinition]:
    deps = [AssetDep(layout.key("suite_rows")), AssetDep(layout.key("golden"))]
    for retriever, index in (("keyword", "keyword_index"), ("vector", "vector_index")):
        if layout.rows_by_chunking(retriever):
            deps.append(AssetDep(layout.key(index), partition_mapping=layout.to_rows(retriever)))

    @asset(
        key=layout.key("evaluation"),
        partitions_def=layout.rows,
        # Not on the store directly: every row searches an index built from it, and a direct edge would
        # request each row twice when the corpus changes (once for the store, once for its index).
        deps=deps,
        # The chat model too, in a suite whose rows use one: another model writes other phrasings.
        code_version=layout.code_version("evaluation", layout.embedder, *[layout.chat] * bool(layout.chat)),
        automation_condition=AUTOMATION,
        check_specs=checks.evaluation_specs(layout.key("evaluation")),
        # The row dict goes to the IO manager; a bare `MaterializeResult` annotation would type it Nothing.
        dagster_type=ROW,
        group_name=GROUP,
        description="One row of the suite over every golden question: metrics, per category and question.",
    )
    def evaluation(paths: PathsResource, embedder: EmbedderResource, chat: ChatResource) -> MaterializeResult:  # type: ignore[type-arg]
        suite = layout.current()
        row = layout.row(suite, partition_key())
        model = embedder.get() if "vector" in row.config.retrievers else None
        chat_model = None
        if suite.needs_chat(row):
            # a row may answer with a chat model of its own (``chat:`` in the suite)
            chat_model = cached_chat(chat.get(row.chat), suite, Path(paths.results_dir))
        started = time.perf_counter()
        with Store(store_dir(suite, row.config.chunking, Path(paths.store_root))) as opened:
            labels = suite_labels(suite, opened)
            result = run_row(
                row,
                opened,
                labels,
                metric_names(suite, labels),
                embedder=model,
                chat=chat_model,
                corpus=corpus_sha256(suite, opened),
                generate=suite.generate,
            )
        if chat_model is not None:
            chat_model.cache.save()
        return MaterializeResult(
            value=result,
            data_version=DataVersion(f"{row.config.hash()}-{measured(result)}"),
            metadata={
                "config_hash": row.config.hash(),
                **{name: float(value) for name, value in result.get("metrics", {}).items()},
                "questions": len(result.get("questions", [])),
                "seconds": round(time.perf_counter() - started, 3),
                **({"skipped": result["skipped"]} if "skipped" in result else {}),
                **({"generations": chat_model.summary()} if chat_model is not None else {}),
            },
            check_results=[
                checks.matches_baseline(result, suite, embedder.name, Path(paths.baseline)),
            ],
        )

    @asset(
        key=layout.key("result"),
        ins={"rows": AssetIn(layout.key("evaluation"))},
        deps=[layout.key("suite")],
        code_version=layout.code_version("result", layout.embedder, layout.results_dir),
        automation_condition=AUTOMATION,
        check_specs=checks.result_specs(layout.key("result")),
        group_name=GROUP,
        description="The suite's result file: every row in order, with paired comparisons.",
    )
    def result(rows: dict[str, Any], paths: PathsResource, embedder: EmbedderResource) -> MaterializeResult:  # type: ignore[type-arg]
        # The IO manager hands over {partition: row}, except that a lone partition's row comes bare.
        if len(layout.suite.rows) == 1:
            rows = {layout.suite.rows[0].name: rows}
        suite = layout.current()
        missing = [r.name for r in suite.rows if r.name not in rows]
        if missing:
            raise ConfigError(
                "has rows with no evaluation partition",
                path=str(suite.path),
                value=missing,
                fix="Reload the definitions (rows were added or renamed since they loaded)",
            )
        ordered = [rows[r.name] for r in suite.rows]  # the result layer makes new rows, never edits these
        model = embedder.get() if with_vectors(suite.rows) else None
        first = suite.rows[0].config.chunking
        with Store(store_dir(suite, first, Path(paths.store_root))) as opened:
            labels, corpus = suite_labels(suite, opened), corpus_sha256(suite, opened)
            made = result_document(suite, ordered, labels, corpus, model)
        document = with_command(made, layout.command(paths.results_dir))
        target = Path(paths.results_dir) / f"{suite.name}.json"
        # The one writer `clear-rag ablate --save-results` uses: the same file but its date and command.
        write_result(target, document)
        return MaterializeResult(
            data_version=DataVersion(
                digest(suite.baseline, *(f"{r['name']}={measured(r)}" for r in ordered))
            ),
            metadata={
                "path": MetadataValue.path(str(target)),
                "rows": len(ordered),
                "embedder": str(document["embedder"]),
                "preview": MetadataValue.md(suite_table(document, target.as_posix())),
            },
            check_results=[checks.has_expected_keys(document, suite)],
        )

    return [evaluation, result]
