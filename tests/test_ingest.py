from __future__ import annotations

import os
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from clear_rag.chunk.base import Chunker, chunk_id
from clear_rag.chunk.factory import make_chunker
from clear_rag.ingest import discover, ingest, parse_file
from clear_rag.parse.base import Parsed, Parser
from clear_rag.parse.registry import get_parser as real_get_parser
from clear_rag.providers.fake import HashEmbedder
from clear_rag.session import sync_indexes
from clear_rag.store import Store
from clear_rag.store.sqlite import holds_ingest_lock
from clear_rag.tokens import RegexTokenizer
from tests.conftest import toy_config


class _Counting:
    """Wraps a parser and counts its parse calls."""

    def __init__(self, inner: Parser, calls: Counter[str]) -> None:
        self._inner, self._calls = inner, calls
        self.file_type, self.backend, self.version = inner.file_type, inner.backend, inner.version

    def parse(self, data: bytes, *, source: str) -> Parsed:
        self._calls[source] += 1
        return self._inner.parse(data, source=source)


@pytest.fixture
def parse_calls(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    calls: Counter[str] = Counter()
    monkeypatch.setattr("clear_rag.ingest.files.get_parser", lambda *a: _Counting(real_get_parser(*a), calls))
    return calls


def _consistent(store: Store) -> None:
    """Every chunk is an exact slice of its document and the database checks out."""
    for chunk in store.chunks():
        assert store.document_text(chunk.doc_id)[chunk.start : chunk.end] == chunk.text
    db = sqlite3.connect(store.db_path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.execute("PRAGMA foreign_key_check").fetchall() == []


def test_second_ingest_parses_nothing(
    tmp_path: Path, corpus: Path, chunker: Chunker, parse_calls: Counter[str]
) -> None:
    with Store(tmp_path / "s", root=tmp_path) as store:
        first = ingest(store, [corpus], chunker)
        assert first.count("added") == 3
        assert sum(parse_calls.values()) == 3
        second = ingest(store, [corpus], chunker)
    assert second.count("unchanged") == 3
    assert [o.action for o in second.outcomes] == ["unchanged"] * 3
    assert sum(parse_calls.values()) == 3  # no parse call on the second run


def test_document_ids_are_paths_relative_to_the_store_root(
    tmp_path: Path, corpus: Path, chunker: Chunker
) -> None:
    with Store(tmp_path / "s", root=tmp_path) as store:
        ingest(store, [corpus], chunker)
        assert [r.id for r in store.records()] == ["docs/a.md", "docs/b.txt", "docs/sub/c.html"]
        assert all(c.id == chunk_id(c.doc_id, c.position) for c in store.chunks())


def test_changed_file_replaces_its_chunks(tmp_path: Path, corpus: Path, chunker: Chunker) -> None:
    with Store(tmp_path / "s", root=tmp_path) as store:
        ingest(store, [corpus], chunker)
        (corpus / "b.txt").write_text("Only one short line now.\n", encoding="utf-8")
        report = ingest(store, [corpus], chunker)
        assert Counter(o.action for o in report.outcomes) == {"unchanged": 2, "updated": 1}
        assert report.changed_doc_ids == ("docs/b.txt",)
        assert [c.text for c in store.chunks("docs/b.txt")] == ["Only one short line now."]
        _consistent(store)


def test_removed_file_is_reported_then_pruned(tmp_path: Path, corpus: Path, chunker: Chunker) -> None:
    with Store(tmp_path / "s", root=tmp_path) as store:
        ingest(store, [corpus], chunker)
        (corpus / "a.md").unlink()
        kept = ingest(store, [corpus], chunker)
        assert kept.gone == ("docs/a.md",)
        assert store.record("docs/a.md") is not None
        pruned = ingest(store, [corpus], chunker, prune=True)
        assert pruned.removed_doc_ids == ("docs/a.md",)
        assert store.record("docs/a.md") is None
        assert not list(store.chunks("docs/a.md"))


def test_prune_only_touches_the_paths_given(tmp_path: Path, corpus: Path, chunker: Chunker) -> None:
    other = tmp_path / "other.txt"
    other.write_text("Another folder's file.\n", encoding="utf-8")
    with Store(tmp_path / "s", root=tmp_path) as store:
        ingest(store, [corpus, other], chunker)
        other.unlink()
        report = ingest(store, [corpus], chunker, prune=True)
        assert report.removed_doc_ids == ()
        assert store.record("other.txt") is not None


def test_new_chunker_settings_rechunk_without_parsing(
    tmp_path: Path, corpus: Path, chunker: Chunker, parse_calls: Counter[str]
) -> None:
    with Store(tmp_path / "s", root=tmp_path) as store:
        ingest(store, [corpus], chunker)
        smaller = make_chunker("fixed", size=4, overlap=1, tokenizer=RegexTokenizer())
        report = ingest(store, [corpus], smaller)
        assert report.count("rechunked") == 3
        assert sum(parse_calls.values()) == 3  # only the first run parsed
        assert max(c.token_count for c in store.chunks()) <= 4
        _consistent(store)


def test_same_corpus_into_two_fresh_stores_gives_identical_chunks(
    tmp_path: Path, corpus: Path, chunker: Chunker
) -> None:
    spans = []
    for name in ("one", "two"):
        with Store(tmp_path / name, root=tmp_path) as store:
            ingest(store, [corpus], chunker)
            spans.append([(c.id, c.doc_id, c.start, c.end, c.token_count) for c in store.chunks()])
    assert spans[0] == spans[1]
    assert len(spans[0]) >= 3


def test_opening_a_store_rebuilds_nothing(
    tmp_path: Path, corpus: Path, chunker: Chunker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The predecessor re-chunked and re-indexed everything at launch; a store only reads."""
    with Store(tmp_path / "s", root=tmp_path) as store:
        ingest(store, [corpus], chunker)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsing or chunking at start-up")

    monkeypatch.setattr("clear_rag.ingest.files.get_parser", refuse)
    monkeypatch.setattr(type(chunker), "chunk", refuse)
    with Store(tmp_path / "s") as reopened:
        assert reopened.stats().chunks > 0
        assert len(list(reopened.chunks())) == reopened.stats().chunks


# -- bad input: a clear message per file, the other files still ingest, the store stays consistent --


def _bad_inputs(folder: Path) -> None:
    (folder / "empty.txt").write_bytes(b"")
    (folder / "image.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (folder / "latin.txt").write_bytes("Caf\xe9 cr\xe8me for Jos\xe9.\n".encode("latin-1"))
    (folder / "broken.html").write_text(
        "<html><body><table><tr><td>Hours<td>9 to 5\n<p>Open <b>daily</p>", encoding="utf-8"
    )
    (folder / "dangling.md").symlink_to(folder / "nowhere.md")


def test_bad_files_get_their_own_message_and_the_rest_ingest(
    tmp_path: Path, corpus: Path, chunker: Chunker
) -> None:
    _bad_inputs(corpus)
    with Store(tmp_path / "s", root=tmp_path) as store:
        report = ingest(store, [corpus, tmp_path / "missing-folder"], chunker)
        by_name = {Path(o.path).name: o for o in report.outcomes}
        assert {n for n, o in by_name.items() if o.action == "added"} == {
            "a.md",
            "b.txt",
            "c.html",
            "latin.txt",
            "broken.html",
        }
        failed = {n: o.message or "" for n, o in by_name.items() if o.action == "failed"}
        assert set(failed) == {"empty.txt", "image.txt", "dangling.md", "missing-folder"}
        assert "empty.txt: is empty (0 bytes)" in failed["empty.txt"]
        assert "looks binary" in failed["image.txt"] and "extension" in failed["image.txt"]
        assert "broken link" in failed["dangling.md"]
        assert "does not exist" in failed["missing-folder"]
        latin = by_name["latin.txt"]
        assert any("not valid UTF-8" in w and "Windows-1252" in w for w in latin.warnings)
        assert "Café crème for José." in store.document_text("docs/latin.txt")
        assert by_name["broken.html"].warnings, "malformed HTML is ingested with a warning"
        assert "9 to 5" in store.document_text("docs/broken.html")
        _consistent(store)


def test_a_file_gone_bad_keeps_its_previous_version(tmp_path: Path, corpus: Path, chunker: Chunker) -> None:
    with Store(tmp_path / "s", root=tmp_path) as store:
        ingest(store, [corpus], chunker)
        before = list(store.chunks("docs/b.txt"))
        (corpus / "b.txt").write_bytes(b"")
        report = ingest(store, [corpus], chunker)
        (outcome,) = [o for o in report.outcomes if o.action == "failed"]
        assert "previously" in (outcome.message or "") or "before is kept" in (outcome.message or "")
        assert list(store.chunks("docs/b.txt")) == before


def test_unreadable_file_is_reported(
    tmp_path: Path, corpus: Path, chunker: Chunker, monkeypatch: pytest.MonkeyPatch
) -> None:
    # chmod(0) was the predecessor's way in, and root (as in CI) reads such a file anyway; so the
    # read itself is made to fail as the system would, for that one file.
    secret = corpus / "secret.txt"
    secret.write_text("hidden", encoding="utf-8")
    read_bytes = Path.read_bytes

    def refuse_secret(path: Path) -> bytes:
        if path.resolve() == secret.resolve():
            raise PermissionError(13, "Permission denied", str(path))
        return read_bytes(path)

    monkeypatch.setattr(Path, "read_bytes", refuse_secret)
    with Store(tmp_path / "s", root=tmp_path) as store:
        report = ingest(store, [corpus], chunker)
    (failed,) = [o for o in report.outcomes if o.action == "failed"]
    assert "Permission denied" in (failed.message or "")
    assert failed.path == str(secret) and report.count("added") == 3


def test_a_parser_crash_on_one_file_does_not_stop_the_others(
    tmp_path: Path, corpus: Path, chunker: Chunker, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Crashing:
        file_type, backend, version = "text", "plain", "1"

        def parse(self, data: bytes, *, source: str) -> Parsed:
            raise IndexError("list index out of range")

    monkeypatch.setattr(
        "clear_rag.ingest.files.get_parser",
        lambda kind, backend=None: Crashing() if kind == "text" else real_get_parser(kind),
    )
    with Store(tmp_path / "s", root=tmp_path) as store:
        report = ingest(store, [corpus], chunker)
    assert report.count("added") == 2
    (failed,) = [o for o in report.outcomes if o.action == "failed"]
    assert "IndexError" in (failed.message or "") and "b.txt" in (failed.message or "")


def test_files_parsed_elsewhere_are_stored_without_parsing_while_their_bytes_match(
    tmp_path: Path, corpus: Path, chunker: Chunker, parse_calls: Counter[str]
) -> None:
    store = Store(tmp_path / "store", root=tmp_path)
    given = {
        doc_id: parse_file(corpus / name, doc_id)
        for name, doc_id in (("a.md", "docs/a.md"), ("b.txt", "docs/b.txt"))
    }
    parse_calls.clear()
    (corpus / "b.txt").write_text("Changed after it was parsed.\n", encoding="utf-8")
    report = ingest(store, [corpus], chunker, parsed=given)
    assert report.count("added") == 3
    # a.md came as given; b.txt changed since, so it was parsed afresh, as was c.html (not given).
    assert sorted(parse_calls) == [str(corpus / "b.txt"), str(corpus / "sub" / "c.html")]
    assert store.document_text("docs/a.md") == given["docs/a.md"].document.text
    assert store.document_text("docs/b.txt") == "Changed after it was parsed.\n"
    assert store.record("docs/a.md").parser == given["docs/a.md"].parser  # type: ignore[union-attr]
    _consistent(store)


def test_links_out_of_the_folder_are_skipped_unless_followed(
    tmp_path: Path, corpus: Path, chunker: Chunker
) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "o.txt").write_text("Outside text.\n", encoding="utf-8")
    (corpus / "out.txt").symlink_to(tmp_path / "outside" / "o.txt")
    (corpus / "in.txt").symlink_to(corpus / "b.txt")
    (corpus / "loop").symlink_to(tmp_path)  # holds the corpus: never walked, followed or not
    with Store(tmp_path / "s", root=tmp_path) as store:
        skipped = ingest(store, [corpus], chunker)
        assert {Path(o.path).name: o.action for o in skipped.outcomes if o.action == "skipped"} == {
            "out.txt": "skipped",
            "loop": "skipped",
        }
        assert [r.id for r in store.records()] == [
            "docs/a.md",
            "docs/b.txt",
            "docs/in.txt",
            "docs/sub/c.html",
        ]
        followed = ingest(store, [corpus], chunker, follow_links=True)
        assert [o.path for o in followed.outcomes if o.action == "added"] == [str(corpus / "out.txt")]
        (loop,) = [o for o in followed.outcomes if o.action == "skipped"]
        assert "a folder that holds" in (loop.message or "")
        assert store.record("docs/out.txt") is not None


def test_a_name_that_is_not_utf8_is_stored_escaped(tmp_path: Path, corpus: Path, chunker: Chunker) -> None:
    raw = os.fsencode(corpus) + b"/caf\xe9.txt"
    with open(raw, "wb") as handle:
        handle.write(b"Coffee notes.\n")
    with Store(tmp_path / "s", root=tmp_path) as store:
        report = ingest(store, [corpus], chunker)
        (outcome,) = [o for o in report.outcomes if o.doc_id == "docs/caf\\xe9.txt"]
        assert outcome.action == "added" and outcome.path == str(corpus) + "/caf\\xe9.txt"
        assert "its name is not valid UTF-8" in outcome.warnings[0]
        assert report.count("added") == 4
        again = ingest(store, [corpus], chunker, prune=True)
        assert again.count("unchanged") == 4 and not again.gone
        _consistent(store)


def test_discover_still_returns_files_and_outcomes(tmp_path: Path, corpus: Path) -> None:
    files, outcomes = discover([corpus, tmp_path / "missing"])
    assert [f.name for f in files] == ["a.md", "b.txt", "c.html"]
    assert [o.action for o in outcomes] == ["failed"]


def test_an_ingest_that_changes_documents_holds_the_ingest_lock_until_its_indexes_are_synced(
    tmp_path: Path, corpus: Path, chunker: Chunker
) -> None:
    """From its first change until ``sync_indexes``, a question that finds the indexes behind waits
    for the ingest (``open_pipeline``); an ingest that changes nothing never makes one wait."""
    with Store(tmp_path / "s", root=tmp_path) as store:
        ingest(store, [corpus], chunker)
        assert holds_ingest_lock(store.directory)
        sync_indexes(store, [toy_config()], HashEmbedder(dim=64))
        assert not holds_ingest_lock(store.directory)
        before = store.generation()
        ingest(store, [corpus], chunker)  # nothing changed
        assert not holds_ingest_lock(store.directory)
        assert store.generation() == before
        (corpus / "b.txt").unlink()
        ingest(store, [corpus], chunker, prune=True)
        assert holds_ingest_lock(store.directory)
        assert store.generation() == before + 1
    assert not holds_ingest_lock(tmp_path / "s")  # closing the store releases it
