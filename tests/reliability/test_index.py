"""Damaged index files, documents an index cannot take, and processes writing at once.

Each case damages a real store the way a crash, a disk or a person would, runs the command a user
would run next, asserts its exact message, and then that nothing else was lost: the documents, the
chunks and the ids in each index equal those of a clean store ingested from the same corpus.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from typer.testing import CliRunner, Result

from clear_rag.cli import app
from clear_rag.errors import ModelError
from clear_rag.index.files import stat_identity
from clear_rag.index.places import load_keyword, load_vectors
from clear_rag.providers import select
from clear_rag.providers.base import EmbedKind
from clear_rag.providers.fake import HashEmbedder
from clear_rag.store import Store
from tests.reliability.catalogue import case, expect
from tests.toy import CORPUS

runner = CliRunner()
HASH = ["--embedder", "hash"]
VECTORS = "index/vectors-hash-embedder-256-sha256-bow-1"  # where `--embedder hash` keeps its vectors
REBUILD = "Run `clear-rag ingest PATH` or `clear-rag index --rebuild` to rebuild it from the store"
Snapshot = dict[str, list[str]]


def write_corpus(root: Path) -> None:
    for name, text in CORPUS.items():
        path = root / "docs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def cli(*args: str) -> Result:
    return runner.invoke(app, list(args))


def snapshot(store: Path, embedder: HashEmbedder | None = None) -> Snapshot:
    """What a store holds, as ids: documents, chunks, and each index (opened as ``ask`` opens it)."""
    with Store(store) as opened:
        return {
            "documents": sorted(r.id for r in opened.records()),
            "chunks": sorted(cid for cid, *_ in opened.chunk_spans()),
            "keyword": sorted(load_keyword(opened).ids),
            "vector": sorted(load_vectors(opened, embedder or HashEmbedder()).ids),
        }


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Snapshot:
    """A clean store ingested from the corpus, in a folder laid out as each case's (ids match)."""
    root = tmp_path_factory.mktemp("reference")
    write_corpus(root)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        assert cli("ingest", "docs", "--store", "s", *HASH).exit_code == 0
        return snapshot(root / "s")


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The corpus ingested into ``s``, run from the folder that holds both (as a user would)."""
    write_corpus(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = cli("ingest", "docs", "--store", "s", *HASH)
    assert result.exit_code == 0, result.output
    return tmp_path


def chunk_count(reference: Snapshot) -> str:
    return str(len(reference["chunks"]))


def has_line(output: str, line: str) -> None:
    """``output`` holds ``line`` whole: a line asserted beside a case's own catalogued message."""
    assert line in [found.strip() for found in output.splitlines()], (
        f"expected the line\n  {line}\nin\n{output}"
    )


def rebuilt_line(label: str, damage: str, reference: Snapshot) -> str:
    return f"index {label}: damaged ({damage}); rebuilt from the store: {chunk_count(reference)} chunks"


# -- damaged files, repaired by the next ingest --------------------------------------------------------

VECTORS_TRUNCATED = case(
    "index-vectors-truncated",
    area="index",
    fault="`vectors.npy` cut short (a full disk, a copy that stopped); then `clear-rag ingest`",
    message="index vector (hash-embedder-256): damaged (vectors.npy: shorter than written: 1000 of {size} "
    "bytes); rebuilt from the store: {chunks} chunks",
    exit_code=0,
)


def test_truncated_vectors_are_rebuilt_by_ingest(world: Path, reference: Snapshot) -> None:
    path = world / "s" / VECTORS / "vectors.npy"
    size = path.stat().st_size
    path.write_bytes(path.read_bytes()[:1000])
    result = cli("ingest", "docs", "--store", "s", *HASH)
    assert result.exit_code == VECTORS_TRUNCATED.exit_code, result.output
    expect(result.output, VECTORS_TRUNCATED, size=str(size), chunks=chunk_count(reference))
    assert snapshot(world / "s") == reference


BM25_GARBAGE = case(
    "index-bm25-garbage",
    area="index",
    fault="`bm25.json` overwritten with garbage of the same size; then `clear-rag ask`",
    message="error: {store}/index/bm25/bm25.json: the keyword index is damaged (checksum mismatch). "
    + REBUILD,
    exit_code=3,
)


def test_garbage_in_bm25_json_is_named_by_ask_and_rebuilt_by_ingest(world: Path, reference: Snapshot) -> None:
    path = world / "s" / "index" / "bm25" / "bm25.json"
    path.write_bytes(b"#" * path.stat().st_size)
    result = cli("ask", "brakes", "--store", "s", "--no-generate", *HASH)
    assert result.exit_code == BM25_GARBAGE.exit_code, result.output
    expect(result.output, BM25_GARBAGE, store="s")
    repaired = cli("ingest", "docs", "--store", "s", *HASH)
    has_line(repaired.output, rebuilt_line("keyword", "bm25.json: checksum mismatch", reference))
    assert snapshot(world / "s") == reference


MANIFEST_GARBAGE = case(
    "index-manifest-garbage",
    area="index",
    fault="`manifest.json` of the keyword index is not JSON (the predecessor gave a traceback); then ingest",
    message="index keyword: damaged (manifest.json: not valid JSON); rebuilt from the store: {chunks} chunks",
    exit_code=0,
)


def test_a_garbage_manifest_is_rebuilt_by_ingest(world: Path, reference: Snapshot) -> None:
    (world / "s" / "index" / "bm25" / "manifest.json").write_text('{"documents": {', encoding="utf-8")
    result = cli("ingest", "docs", "--store", "s", *HASH)
    assert result.exit_code == MANIFEST_GARBAGE.exit_code, result.output
    expect(result.output, MANIFEST_GARBAGE, chunks=chunk_count(reference))
    assert snapshot(world / "s") == reference


MANIFEST_SHAPE = case(
    "index-manifest-not-a-manifest",
    area="index",
    fault="`manifest.json` is valid JSON but not a manifest (`[]`); then `clear-rag ask`",
    message=f"error: {{store}}/{VECTORS}/manifest.json: the vector (hash-embedder-256) index is damaged "
    "(not an index manifest). " + REBUILD,
    exit_code=3,
)


def test_a_manifest_of_the_wrong_shape_is_named_by_ask(world: Path, reference: Snapshot) -> None:
    (world / "s" / VECTORS / "manifest.json").write_text("[]", encoding="utf-8")
    result = cli("ask", "brakes", "--store", "s", "--no-generate", *HASH)
    assert result.exit_code == MANIFEST_SHAPE.exit_code, result.output
    expect(result.output, MANIFEST_SHAPE, store="s")
    assert cli("ingest", "docs", "--store", "s", *HASH).exit_code == 0
    assert snapshot(world / "s") == reference


MANIFEST_MISSING = case(
    "index-manifest-missing",
    area="index",
    fault="the vector index's `manifest.json` deleted, its data files left; then `clear-rag ingest`",
    message="index vector (hash-embedder-256): damaged (manifest.json: file missing); rebuilt from the "
    "store: {chunks} chunks",
    exit_code=0,
)


def test_a_missing_manifest_is_rebuilt_by_ingest(world: Path, reference: Snapshot) -> None:
    (world / "s" / VECTORS / "manifest.json").unlink()
    result = cli("ingest", "docs", "--store", "s", *HASH)
    assert result.exit_code == MANIFEST_MISSING.exit_code, result.output
    expect(result.output, MANIFEST_MISSING, chunks=chunk_count(reference))
    assert snapshot(world / "s") == reference


IDS_SHUFFLED = case(
    "index-ids-shuffled",
    area="index",
    fault="`ids.json` reordered, same size (the predecessor passed every check and returned wrong documents)",
    message=f"error: {{store}}/{VECTORS}/ids.json: the vector (hash-embedder-256) index is damaged "
    "(checksum mismatch). " + REBUILD,
    exit_code=3,
)


def test_shuffled_ids_are_named_by_ask_not_answered_from(world: Path, reference: Snapshot) -> None:
    path = world / "s" / VECTORS / "ids.json"
    ids = path.read_text(encoding="utf-8")
    items = ids[1:-1].split(", ")
    path.write_text("[" + ", ".join(items[1:] + items[:1]) + "]", encoding="utf-8")
    assert path.stat().st_size == len(ids)
    result = cli("ask", "brakes", "--store", "s", "--no-generate", *HASH)
    assert result.exit_code == IDS_SHUFFLED.exit_code, result.output
    expect(result.output, IDS_SHUFFLED, store="s")
    repaired = cli("ingest", "docs", "--store", "s", *HASH)
    has_line(
        repaired.output, rebuilt_line("vector (hash-embedder-256)", "ids.json: checksum mismatch", reference)
    )
    assert snapshot(world / "s") == reference


DATA_FILE_DELETED = case(
    "index-data-file-deleted",
    area="index",
    fault="one BM25 array (`bm25_docs.npy`) deleted; then `clear-rag index` checks the store",
    message="error: {store}/index/bm25/bm25_docs.npy: the keyword index is damaged (file missing). "
    + REBUILD,
    exit_code=3,
)


def test_a_deleted_data_file_is_named_by_the_index_check(world: Path, reference: Snapshot) -> None:
    (world / "s" / "index" / "bm25" / "bm25_docs.npy").unlink()
    result = cli("index", "--store", "s", *HASH)
    assert result.exit_code == DATA_FILE_DELETED.exit_code, result.output
    expect(result.output, DATA_FILE_DELETED, store="s")
    has_line(
        result.output, f"index vector (hash-embedder-256): {chunk_count(reference)} chunks of 3 documents"
    )
    assert cli("ingest", "docs", "--store", "s", *HASH).exit_code == 0
    assert cli("index", "--store", "s", *HASH).exit_code == 0
    assert snapshot(world / "s") == reference


STATUS_DAMAGED = case(
    "index-status-damaged",
    area="index",
    fault="`clear-rag status` on a store whose keyword index fails its check",
    message="index      keyword: damaged (bm25.json: checksum mismatch); run `clear-rag ingest PATH` or "
    "`clear-rag index --rebuild`",
    exit_code=0,
)


def test_status_names_a_damaged_index(world: Path, reference: Snapshot) -> None:
    path = world / "s" / "index" / "bm25" / "bm25.json"
    path.write_bytes(path.read_bytes().replace(b"docs/a.md", b"docs/z.md"))
    result = cli("status", "--store", "s")
    assert result.exit_code == STATUS_DAMAGED.exit_code, result.output
    expect(result.output, STATUS_DAMAGED)
    assert cli("ingest", "docs", "--store", "s", *HASH).exit_code == 0
    assert snapshot(world / "s") == reference


REBUILD_REPAIRS = case(
    "index-rebuild-repairs",
    area="index",
    fault="bytes flipped inside `vectors.npy` (same size); then `clear-rag index --rebuild`",
    message="index vector (hash-embedder-256): damaged (vectors.npy: checksum mismatch); rebuilt from the "
    "store: {chunks} chunks",
    exit_code=0,
)


def test_index_rebuild_repairs_a_damaged_index(world: Path, reference: Snapshot) -> None:
    path = world / "s" / VECTORS / "vectors.npy"
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF  # the sign byte of the last float: the bytes differ, the size does not
    path.write_bytes(bytes(data))
    assert cli("index", "--store", "s", *HASH).exit_code == 3
    result = cli("index", "--rebuild", "--store", "s", *HASH)
    assert result.exit_code == REBUILD_REPAIRS.exit_code, result.output
    expect(result.output, REBUILD_REPAIRS, chunks=chunk_count(reference))
    has_line(result.output, f"index keyword: rebuilt from the store: {chunk_count(reference)} chunks")
    assert cli("index", "--store", "s", *HASH).exit_code == 0
    assert snapshot(world / "s") == reference


FULL_CHECK = case(
    "index-full-check",
    area="index",
    fault="bytes flipped inside `vectors.npy` leaving its size, times and inode as the manifest recorded "
    "them (bit rot); then `clear-rag index --full`",
    message="error: {store}/" + VECTORS + "/vectors.npy: the vector (hash-embedder-256) index is damaged "
    "(checksum mismatch). " + REBUILD,
    exit_code=3,
)


def test_index_full_hashes_what_the_quick_check_takes_on_trust(world: Path, reference: Snapshot) -> None:
    """Opening an index hashes no file whose stat identity is as recorded; damage that keeps it (here
    the manifest given the damaged file's identity, as bit rot would leave it) is found by --full."""
    path = world / "s" / VECTORS / "vectors.npy"
    with path.open("r+b") as fh:
        fh.seek(-3, os.SEEK_END)
        byte = fh.read(1)
        fh.seek(-3, os.SEEK_END)
        fh.write(bytes([byte[0] ^ 0xFF]))
    manifest = path.parent / "manifest.json"
    body = json.loads(manifest.read_text(encoding="utf-8"))
    body["stat"]["vectors.npy"] = stat_identity(path.stat())
    manifest.write_text(json.dumps(body), encoding="utf-8")
    quick = cli("index", "--store", "s", *HASH)
    assert quick.exit_code == 0, quick.output
    result = cli("index", "--full", "--store", "s", *HASH)
    assert result.exit_code == FULL_CHECK.exit_code, result.output
    expect(result.output, FULL_CHECK, store="s")
    assert cli("index", "--rebuild", "--store", "s", *HASH).exit_code == 0
    assert cli("index", "--full", "--store", "s", *HASH).exit_code == 0
    assert snapshot(world / "s") == reference


# -- documents an index cannot take -------------------------------------------------------------------

ZERO_VECTOR = case(
    "index-zero-vector",
    area="index",
    fault="a punctuation-only file, which the hash embedder maps to a zero vector (the predecessor then "
    "failed every ingest of the store with exit 2 and every `ask` with a traceback)",
    message="missing from index vector (hash-embedder-256): docs/dots.txt: its embedding is a zero vector",
    exit_code=0,
)


def test_a_zero_vector_leaves_one_document_out_of_one_index(world: Path, reference: Snapshot) -> None:
    (world / "docs" / "dots.txt").write_text("!!! ... ??? ---\n", encoding="utf-8")
    result = cli("ingest", "docs", "--store", "s", *HASH)
    assert result.exit_code == ZERO_VECTOR.exit_code, result.output
    expect(result.output, ZERO_VECTOR)
    expect(cli("status", "--store", "s").output, ZERO_VECTOR)
    again = cli("ingest", "docs", "--store", "s", *HASH)  # retried, and said again
    assert again.exit_code == 0
    expect(again.output, ZERO_VECTOR)
    asked = cli("ask", "disc brakes", "--store", "s", "--no-generate", *HASH)
    assert asked.exit_code == 0, asked.output
    found = snapshot(world / "s")
    assert found["documents"] == sorted([*reference["documents"], "docs/dots.txt"])
    assert found["vector"] == reference["vector"]
    assert found["keyword"] == sorted([*reference["keyword"], "docs/dots.txt#0000"])


class FlakyEmbedder(HashEmbedder):
    """The hash embedder behind a server that answers 500 for any text holding ``POISON``."""

    def __init__(self) -> None:
        super().__init__()
        self.name = "flaky-hash-256"

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> npt.NDArray[np.float32]:
        if any("POISON" in text for text in texts):
            raise ModelError("the server answered 500 for this text", fix="Check the server's log")
        return super().embed(texts, kind)


EMBEDDER_FAILS = case(
    "index-embedder-fails-one-document",
    area="index",
    fault="the embedding server fails on one document's texts (and on no other)",
    message="missing from index vector (flaky-hash-256): docs/poison.txt: the embedder failed on it (the "
    "server answered 500 for this text)",
    exit_code=0,
)


def test_an_embedder_failing_on_one_document_leaves_only_it_out(
    world: Path, reference: Snapshot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(select, "make_embedder", lambda *names, **options: FlakyEmbedder())
    (world / "docs" / "poison.txt").write_text("POISON in the chain lube.\n", encoding="utf-8")
    result = cli("ingest", "docs", "--store", "s", *HASH)
    assert result.exit_code == EMBEDDER_FAILS.exit_code, result.output
    expect(result.output, EMBEDDER_FAILS)
    asked = cli("ask", "tyre pressure", "--store", "s", "--no-generate", *HASH)
    assert asked.exit_code == 0, asked.output
    found = snapshot(world / "s", FlakyEmbedder())
    assert found["documents"] == sorted([*reference["documents"], "docs/poison.txt"])
    assert found["vector"] == reference["vector"]


# -- processes at once ------------------------------------------------------------------------------

CONCURRENT = case(
    "index-concurrent-writers-and-readers",
    area="index",
    fault="two `ingest`s of a changed corpus and four `ask`s started at once on one store (the "
    "predecessor's fixed `.tmp` names made one of nine `ask`s crash on a rename), every `ask` answering; "
    "then `clear-rag index`",
    message="index keyword: {chunks} chunks of {documents} documents",
    exit_code=0,
)


def clear_rag_command() -> list[str]:
    """The installed ``clear-rag`` script beside this interpreter (as a user runs it)."""
    return [str(Path(sys.executable).with_name("clear-rag"))]


def test_concurrent_ingests_and_asks_neither_crash_nor_damage(
    world: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    changes = {
        "b.txt": "Tyre pressure changed: 70 psi for gravel.\n",
        "d.txt": "Cables stretch; adjust the barrel.\n",
    }
    for name, text in changes.items():
        (world / "docs" / name).write_text(text, encoding="utf-8")
    env = {**os.environ, "CLEAR_RAG_THREADS": "1"}
    ingest = [*clear_rag_command(), "ingest", "docs", "--store", "s", *HASH]
    ask = [*clear_rag_command(), "ask", "tyre pressure", "--store", "s", "--no-generate", *HASH]
    commands = [ingest, ask, ask, ingest, ask, ask]
    processes = [
        subprocess.Popen(c, cwd=world, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for c in commands
    ]
    # every process waited for (and its pipes closed) before any is judged
    ended = [
        (command, process, *process.communicate(timeout=120))
        for command, process in zip(commands, processes, strict=True)
    ]
    for command, process, out, err in ended:
        assert "Traceback" not in err, err
        # An ask never sees an ingest half done: it reads the store before it, or waits for it to end
        # (the predecessor said "index that is behind the store", or "Re-run ingest so chunks and
        # document texts come from the same parse" for a text replaced under it: issue 29).
        assert process.returncode == 0, (command, process.returncode, out, err)
    index = world / "s" / "index"
    assert not list(index.glob("*/*.tmp")) and not list(index.glob("*/.*.tmp"))
    result = cli("index", "--store", "s", *HASH)
    assert result.exit_code == CONCURRENT.exit_code, result.output
    clean = tmp_path_factory.mktemp("clean")  # the changed corpus ingested once, alone
    write_corpus(clean)
    for name, text in changes.items():
        (clean / "docs" / name).write_text(text, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(clean)
        assert cli("ingest", "docs", "--store", "s", *HASH).exit_code == 0
    expected = snapshot(clean / "s")
    expect(result.output, CONCURRENT, chunks=str(len(expected["keyword"])), documents="4")
    assert snapshot(world / "s") == expected
