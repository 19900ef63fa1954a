"""The sample question `make run` answers: the sample corpus, its store, and one answer with cited spans.

- ``sample/corpus``: the files under ``corpora/sample``, observed as one data version (their SHA-256s);
- ``sample/store``: those files ingested into the default store (``.clear-rag``, where ``clear-rag
  ask`` looks), with its keyword and vector indexes, as ``clear-rag ingest corpora/sample`` leaves them;
- ``sample/answer``: the sample question answered by its answerer (by default the extractive one,
  which needs no compiled runtime: ``assets.resources.answerer_for``). Its trace is stored, so when
  nothing changed the answer is printed again from the store, with no model (``print_answer``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dagster import (
    AssetKey,
    AssetsDefinition,
    DagsterInstance,
    DataVersion,
    MaterializeResult,
    MetadataValue,
    ObserveResult,
    SourceAsset,
    asset,
    observable_source_asset,
)

from assets.corpus import file_version
from assets.layout import AUTOMATION, CODE_VERSION, OBSERVE, digest
from assets.resources import ChatResource, EmbedderResource, support_for
from assets.stores import store_version
from clear_rag.chunk.factory import make_chunker
from clear_rag.config import PipelineConfig
from clear_rag.errors import InputError
from clear_rag.generate.planner import Planner
from clear_rag.generate.verdicts import judge
from clear_rag.ingest import discover, ingest
from clear_rag.providers.base import describe
from clear_rag.providers.select import support_checker
from clear_rag.session import open_pipeline, sync_indexes
from clear_rag.store.sqlite import Store
from clear_rag.trace import render, render_citations, render_support

GROUP = "sample"
CORPUS = AssetKey(["sample", "corpus"])
STORE = AssetKey(["sample", "store"])
ANSWER = AssetKey(["sample", "answer"])


@dataclass(frozen=True)
class Sample:
    """Which corpus, question, store and models the sample answer uses."""

    embedder: str
    chat: str
    corpus: Path = Path("corpora/sample")
    question: str = "How much is the deposit for a key fob?"
    store: Path = Path(".clear-rag")  # the CLI's default store

    @classmethod
    def bundled(cls, *, embedder: str, chat: str) -> Sample | None:
        """The project's sample, where its corpus is present (a test project has none)."""
        sample = cls(embedder=embedder, chat=chat)
        return sample if sample.corpus.is_dir() else None


def sample_assets(sample: Sample) -> list[SourceAsset | AssetsDefinition]:
    @observable_source_asset(
        key=CORPUS,
        group_name=GROUP,
        automation_condition=OBSERVE,
        description=f"The files under {sample.corpus}, one data version for all of them.",
    )
    def corpus() -> ObserveResult:
        files, _ = discover([sample.corpus])
        versions = [f"{p.relative_to(sample.corpus).as_posix()} {file_version(p)}" for p in files]
        return ObserveResult(data_version=DataVersion(digest(*versions)), metadata={"files": len(files)})

    @asset(
        key=STORE,
        deps=[CORPUS],
        code_version=digest(CODE_VERSION, "sample-store", sample.embedder),
        automation_condition=AUTOMATION,
        group_name=GROUP,
        description=f"{sample.corpus} in the default store {sample.store}, with both indexes.",
    )
    def store(embedder: EmbedderResource) -> MaterializeResult:  # type: ignore[type-arg]
        model = embedder.get()
        with Store(sample.store) as opened:
            report = ingest(opened, [sample.corpus], make_chunker("structural", size=256), prune=True)
            failed = [o.message for o in report.outcomes if o.action == "failed"]
            if failed:
                raise InputError(
                    "has files that failed to ingest",
                    path=str(sample.corpus),
                    value=failed,
                    fix="Fix or remove those files; the others are stored",
                )
            sync_indexes(opened, [PipelineConfig()], model)
            stats = opened.stats()
            return MaterializeResult(
                data_version=DataVersion(digest(store_version(opened), describe(model))),
                metadata={
                    "directory": str(opened.directory),
                    "documents": stats.documents,
                    "chunks": stats.chunks,
                    **{action: report.count(action) for action in ("added", "updated", "unchanged")},
                },
            )

    @asset(
        key=ANSWER,
        deps=[STORE],
        # The question and the chat model decide the answer as much as the store does.
        code_version=digest(
            CODE_VERSION, "sample-answer", sample.question, sample.embedder, sample.chat, "support-1"
        ),
        automation_condition=AUTOMATION,
        group_name=GROUP,
        description=f"{sample.question!r} answered from the store, its trace stored for replay.",
    )
    def answer(embedder: EmbedderResource, chat: ChatResource) -> MaterializeResult:  # type: ignore[type-arg]
        with Store(sample.store) as opened:
            config = PipelineConfig(support_model=support_for(sample.embedder))
            pipeline = open_pipeline(opened, config, embedder=embedder.get())
            checker = support_checker(config.support_model)
            trace = Planner(pipeline, chat.get(sample.chat), support=checker).run(sample.question)
            opened.save_trace(trace, config_hash=pipeline.config.hash())
            cited = render_citations(trace, opened.document_text)
        return MaterializeResult(
            data_version=DataVersion(digest(trace.answer, cited)),
            metadata={
                "trace": trace.id,
                "question": sample.question,
                "answer": MetadataValue.md(f"{trace.answer}\n\n```\n{cited}\n```"),
                "citations": len(trace.citations),
                "support": trace.support.line if trace.support is not None else "",
                "models": MetadataValue.json(dict(trace.models)),
            },
        )

    return [corpus, store, answer]


def print_answer(sample: Sample, instance: DagsterInstance, *, top: int = 3) -> str:
    """The last materialized sample answer, read back from the store: stages, answer, cited spans."""
    event = instance.get_latest_materialization_event(ANSWER)
    materialization = event.asset_materialization if event is not None else None
    if materialization is None or "trace" not in materialization.metadata:
        return "sample answer: not materialized yet"
    trace_id = str(materialization.metadata["trace"].value)
    with Store(sample.store) as opened:
        trace = opened.load_trace(trace_id)
        shown = render(trace, top=top, text=lambda c: opened.document_text(c.doc_id)[c.start : c.end])
        cited = render_citations(trace, opened.document_text)
        checked = (
            render_support(judge(trace.support, trace.answer), opened.document_text)
            if trace.support is not None
            else "support: not checked"
        )
    return "\n".join(
        [
            shown,
            "",
            cited,
            "",
            checked,
            "",
            f"(stored trace {trace.id}; `clear-rag replay {trace.id}` prints it again without a model)",
        ]
    )
