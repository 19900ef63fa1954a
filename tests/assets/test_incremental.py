"""Only what changed is re-run: the automation conditions decide, tick by tick, over the tiny project.

One scenario, in order, on one instance: everything materializes once; a second update with nothing
changed requests nothing; editing one suite row re-runs that row's evaluation (and the result it feeds)
and nothing upstream; changing one corpus file parses that file once and re-chunks and re-embeds that
document only, in every chunking's store.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from dagster import AssetKey, AssetRecordsFilter, DagsterInstance, Definitions
from dagster._core.definitions.data_version import extract_data_version_from_entry

from assets.run import CURSOR, update
from clear_rag.ingest import ParsedFile
from clear_rag.ingest import files as ingest
from clear_rag.parse.base import Parser
from clear_rag.store.sqlite import Store
from tests.assets.conftest import CHUNKINGS, DAGSTER_WARNINGS, PARSED, ROWS, CountingEmbedder, toy_definitions


def _version(instance: DagsterInstance, key: str, partition: str | None = None) -> str | None:
    record = instance.get_latest_data_version_record(AssetKey(key.split("/")), partition_key=partition)
    assert record is not None, f"{key} [{partition}] has no data version"
    version = extract_data_version_from_entry(record.event_log_entry)
    return version.value if version is not None else None


def _metadata(instance: DagsterInstance, key: str, partition: str) -> dict[str, Any]:
    found = instance.fetch_materializations(
        AssetRecordsFilter(asset_key=AssetKey(key.split("/")), asset_partitions=[partition]), limit=1
    )
    materialization = found.records[0].asset_materialization
    assert materialization is not None
    return {name: value.value for name, value in materialization.metadata.items()}


def _chunks_of(doc_id: str) -> int:
    count = 0
    for directory in (Path(".clear-rag") / "ablate").iterdir():
        with Store(directory) as store:
            count += sum(1 for _ in store.chunks(doc_id))
    return count


@pytest.mark.filterwarnings(*DAGSTER_WARNINGS)
def test_only_what_changed_is_requested(
    project: Path, counting: CountingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    parses: list[str] = []
    real_parse = ingest._parse

    def counted(parser: Parser, data: bytes, path: Path, doc_id: str, content_hash: str) -> ParsedFile:
        parses.append(doc_id)
        return real_parse(parser, data, path, doc_id, content_hash)

    monkeypatch.setattr(ingest, "_parse", counted)
    defs = toy_definitions()
    with DagsterInstance.ephemeral() as instance:
        _scenario(project, defs, instance, counting, parses)


def _scenario(
    project: Path, defs: Definitions, instance: DagsterInstance, counting: CountingEmbedder, parses: list[str]
) -> None:
    cursor = project / CURSOR

    first = update(defs, instance, cursor)
    assert first.partitions("toy/parsed") == PARSED
    # Each file parsed once, by its parsed partition; the two stores took the parsed documents.
    assert sorted(parses) == ["docs/a.md", "docs/b.txt", "docs/sub/c.html"]
    assert first.partitions("toy/evaluation") == ROWS
    assert first.partitions("toy/store") == CHUNKINGS
    assert first.partitions("toy/result") == [None]
    assert first.failed_checks == []
    embedded_at_first = len(counting.documents)
    assert embedded_at_first == sum(_chunks_of(doc) for doc in ("docs/a.md", "docs/b.txt", "docs/sub/c.html"))
    assert (project / "dagster-results" / "toy.json").is_file()

    again = update(defs, instance, cursor)
    assert again.ticks == [], "nothing changed, so nothing may be requested"
    assert len(again.observed) == 4
    assert len(counting.documents) == embedded_at_first

    # Edit what one row sets: exactly its evaluation partition and, ordered after it in the same tick
    # (the suite file changed too), the result that assembles the rows.
    suite = project / "golden" / "suites" / "toy.yaml"
    row_versions = {row: _version(instance, "toy/suite_rows", row) for row in ROWS}
    suite.write_text(suite.read_text().replace("- {name: hybrid}", "- {name: hybrid, set: {fusion: minmax}}"))
    edited = update(defs, instance, cursor)
    assert edited.ticks == [{"toy/evaluation": ["hybrid"], "toy/result": [None]}]
    assert {row: _version(instance, "toy/suite_rows", row) for row in ROWS if row != "hybrid"} == {
        row: version for row, version in row_versions.items() if row != "hybrid"
    }
    result = json.loads((project / "dagster-results" / "toy.json").read_text())
    assert {r["name"]: r["config"]["fusion"] for r in result["rows"]}["hybrid"] == "minmax"
    assert len(counting.documents) == embedded_at_first

    # Change one corpus file: its partition's version moves, the stores re-parse that document alone,
    # and the vector indexes embed that document's chunks and nothing else.
    corpus_versions = {f: _version(instance, "toy/corpus", f) for f in ("a.md", "b.txt", "sub/c.html")}
    (project / "docs" / "b.txt").write_text("Tyre pressure for road bikes is 80 to 100 psi.\n\nTubeless.\n")
    counting.documents.clear()
    parses.clear()
    changed = update(defs, instance, cursor)
    after = {f: _version(instance, "toy/corpus", f) for f in corpus_versions}
    assert [f for f in after if after[f] != corpus_versions[f]] == ["b.txt"]
    assert changed.ticks[0] == {"toy/parsed": ["b.txt@plain"]}
    assert parses == ["docs/b.txt"]  # parsed once, for both chunkings' stores
    assert changed.ticks[1] == {"toy/store": CHUNKINGS}
    assert set(changed.ticks[2]) == {"toy/keyword_index", "toy/vector_index"}
    for chunking in CHUNKINGS:
        store = _metadata(instance, "toy/store", chunking)
        assert (store["added"], store["updated"], store["unchanged"]) == (0, 1, 2)
        assert _metadata(instance, "toy/vector_index", chunking)["documents_updated"] == 1
    assert len(counting.documents) == _chunks_of("docs/b.txt")
    assert all("Tubeless" in text or "Tyre" in text for text in counting.documents)
    assert changed.partitions("toy/result") == [None]
