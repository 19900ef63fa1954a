"""A file parsed by two backends is two parsed partitions: a suite whose rows read PDFs with ``layout``
and with ``flat`` parses each PDF once per backend, and each store takes the parse of its own backend."""

from __future__ import annotations

from pathlib import Path

import pytest
from dagster import AssetKey, DagsterInstance

from assets.layout import Layout
from assets.run import update
from clear_rag.eval.stores import store_dir
from clear_rag.ingest import ParsedFile
from clear_rag.ingest import files as ingest
from clear_rag.parse.base import Parser
from clear_rag.store.sqlite import Store
from tests.assets.conftest import DAGSTER_WARNINGS, PARSED, CountingEmbedder, toy_definitions
from tests.parse.pdfs import HEADER, report_pdf
from tests.toy import suite_yaml

TWO_PARSERS = suite_yaml(
    "toy",
    "{name: hybrid}",
    "{name: flat pdf, set: {chunking: {parsers: {pdf: flat}}}}",
)


@pytest.fixture
def with_pdf(project: Path) -> Path:
    (project / "docs" / "report.pdf").write_bytes(report_pdf())
    (project / "golden" / "suites" / "toy.yaml").write_text(TWO_PARSERS, encoding="utf-8")
    return project


@pytest.mark.filterwarnings(*DAGSTER_WARNINGS)
def test_each_pdf_is_a_partition_per_backend_and_each_store_reads_its_own(
    with_pdf: Path, counting: CountingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    parses: list[tuple[str, str]] = []
    real_parse = ingest._parse

    def counted(parser: Parser, data: bytes, path: Path, doc_id: str, content_hash: str) -> ParsedFile:
        parses.append((doc_id, parser.backend))
        return real_parse(parser, data, path, doc_id, content_hash)

    monkeypatch.setattr(ingest, "_parse", counted)
    definitions = toy_definitions()
    graph = definitions.resolve_asset_graph()
    parsed = graph.get(AssetKey(["toy", "parsed"])).partitions_def
    assert parsed is not None
    assert sorted(parsed.get_partition_keys()) == sorted([*PARSED, "report.pdf@flat", "report.pdf@layout"])

    with DagsterInstance.ephemeral() as instance:
        first = update(definitions, instance, with_pdf / "cursor")
    assert first.failed_checks == []
    assert sorted(map(str, first.partitions("toy/parsed"))) == sorted(parsed.get_partition_keys())
    # Every (file, backend) parsed exactly once; no store parsed a file again.
    pdfs = [("docs/report.pdf", "flat"), ("docs/report.pdf", "layout")]
    assert sorted(parses) == sorted(
        [("docs/a.md", "markdown-it"), ("docs/b.txt", "plain"), ("docs/sub/c.html", "html"), *pdfs]
    )
    layout = Layout.load("toy", embedder="hash")
    for key, backend in (("fixed-8-overlap1", "layout"), ("fixed-8-overlap1-pdf.flat", "flat")):
        root = with_pdf / ".clear-rag" / "ablate"
        with Store(store_dir(layout.suite, layout.chunkings[key], root)) as store:
            record = store.record("docs/report.pdf")
            assert record is not None
            assert record.parser.startswith(f"pdf/{backend}@")
            # the same bytes, two parses: only the flat one leaves the running header in the chunks
            chunked = " ".join(c.text for c in store.chunks("docs/report.pdf"))
            assert (HEADER.split()[0] in chunked) == (backend == "flat")
