"""Bad paths, bad bytes and unusable stores against ``clear-rag ingest``, ``status`` and ``ask``.

Every case runs the CLI on the fakes (``--embedder hash``) in ``tmp_path``, asserts the exact line
the catalogue documents, and checks that nothing else was lost: the documents and chunks of the
store equal those of a clean reference store made from the same corpus without the bad input.

Unreadable folders and read-only stores are real permission faults. Root (as in CI containers)
reads through ``chmod 000``; there the test drops ``CAP_DAC_OVERRIDE`` and ``CAP_DAC_READ_SEARCH``
from its own thread for the command, so the kernel refuses as it would anyone else.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import shutil
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from clear_rag.cli import app
from clear_rag.store.sqlite import DB_NAME, Store
from tests.reliability.catalogue import case, expect

runner = CliRunner()

NAME = case(
    "ingest-name-not-utf8",
    area="ingest",
    fault="a file named with bytes that are not UTF-8 (`bad\\xff.txt`) among others",
    message="warning    {file}: its name is not valid UTF-8, so it is shown and stored with \\x escapes. "
    "Rename it in UTF-8 to silence this",
    exit_code=0,
)
FOLDER_FIRST = case(
    "ingest-folder-unreadable-first",
    area="ingest",
    fault="a subfolder that cannot be read (chmod 000) on a first ingest",
    message="failed     {folder}: is a folder that cannot be read (Permission denied). Its files were "
    "skipped and what the store holds from it is kept; check its permissions",
    exit_code=1,
)
FOLDER_LATER = case(
    "ingest-folder-unreadable-later",
    area="ingest",
    fault="a subfolder made unreadable after a first ingest, ingested again with --prune",
    message=FOLDER_FIRST.message,
    exit_code=1,
)
LINK_OUT = case(
    "ingest-symlink-out",
    area="ingest",
    fault="a symlink from the corpus to a file outside it",
    message="skipped    {link}: is a symlink to {target}, outside {corpus}; skipped. "
    "Pass --follow-links to ingest what it points to",
    exit_code=0,
)
LINK_OUT_DIR = case(
    "ingest-symlink-out-folder",
    area="ingest",
    fault="a symlink from the corpus to a folder outside it",
    message=LINK_OUT.message,
    exit_code=0,
)
LINK_FOLLOWED = case(
    "ingest-symlink-out-followed",
    area="ingest",
    fault="a symlink out of the corpus, with --follow-links",
    message="added      {link}  (1 chunks)",
    exit_code=0,
)
LINK_BROKEN = case(
    "ingest-symlink-broken",
    area="ingest",
    fault="a symlink in the corpus whose target does not exist",
    message="failed     {link}: cannot be read (No such file or directory). It is a broken link to "
    "{target}: point it at a file or remove it",
    exit_code=1,
)
STRAY_BYTE = case(
    "ingest-utf8-stray-byte",
    area="ingest",
    fault="one stray byte in a 5 KB UTF-8 file of Chinese text",
    message="warning    {file}: is not valid UTF-8 at 1 byte (offset {offset}); replaced with U+FFFD, "
    "the rest decoded as UTF-8. Fix or re-save the file as UTF-8 to silence this",
    exit_code=0,
)
CP1252 = case(
    "ingest-windows-1252",
    area="ingest",
    fault="a text file saved as Windows-1252 (`café crème`)",
    message="warning    {file}: is not valid UTF-8 (2 of its 2 non-ASCII bytes do not decode, the first at "
    "offset 3); decoded as Windows-1252. Save it as UTF-8 to silence this",
    exit_code=0,
)
DEEP_LIST = case(
    "ingest-markdown-list-3000-deep",
    area="ingest",
    fault="a Markdown list nested 3,000 deep",
    message="warning    {file}: line 16: quotes or lists nested deeper than 32 levels were flattened into "
    "plain lines; their text is kept",
    exit_code=0,
)
DEEP_QUOTE = case(
    "ingest-markdown-100k-quotes",
    area="ingest",
    fault="a Markdown line of 100,000 `>` quote markers before its text",
    message="warning    {file}: line 1: quotes or lists nested deeper than 32 levels were flattened into "
    "plain lines; their text is kept",
    exit_code=0,
)
CORRUPT = case(
    "store-db-corrupt",
    area="store",
    fault="a store whose database has garbage over its schema page",
    message="error: {db}: is damaged (database disk image is malformed). Restore it from a backup, or move "
    "it aside and ingest again to rebuild the store",
    exit_code=3,
)
NOT_A_DB = case(
    "store-db-not-a-database",
    area="store",
    fault="a text file named clear-rag.db in the store folder",
    message="error: {db}: is not a clear-rag database (not an SQLite file at all). Move it aside, or "
    "choose another folder with --store / CLEAR_RAG_STORE",
    exit_code=3,
)
FOREIGN_DB = case(
    "store-db-foreign",
    area="store",
    fault="another program's SQLite database named clear-rag.db",
    message="error: {db}: is an SQLite database but not a clear-rag store (it has no meta table). Move it "
    "aside, or choose another folder with --store / CLEAR_RAG_STORE",
    exit_code=3,
)
READ_ONLY_STATUS = case(
    "store-read-only-status",
    area="store",
    fault="`status` on a store whose folder and database are read-only",
    message="documents  {count}  ({kinds})",
    exit_code=0,
)
READ_ONLY_ASK = case(
    "store-read-only-ask",
    area="store",
    fault="`ask` on a store whose folder and database are read-only",
    message="trace {trace} not stored: {store} is read-only (this process may not write it)",
    exit_code=0,
)
READ_ONLY_INGEST = case(
    "store-read-only-ingest",
    area="store",
    fault="`ingest` into a store whose folder is read-only",
    message="error: {store}: is read-only (this process may not write it). Ingest needs a store it can "
    "write: check its permissions, or choose another folder with --store / CLEAR_RAG_STORE",
    exit_code=3,
)
EMPTY_STORE = case(
    "store-path-empty",
    area="store",
    fault='`--store ""`',
    message="error: --store='': names no folder (an empty path would put the store in the current "
    "folder). Name the store folder, e.g. --store .clear-rag",
    exit_code=3,
)
STORE_IS_FILE = case(
    "store-path-is-a-file",
    area="store",
    fault="`--store` naming a file, not a folder",
    message="error: {store}: is a file, not a store folder. Pass a folder to --store / CLEAR_RAG_STORE; "
    "it is created if missing",
    exit_code=3,
)

CORPUS = {
    "a.md": "# Deposits\n\nThe deposit for a key fob is 20 euros.\n",
    "b.txt": "Opening hours are nine to five on weekdays.\n",
    "sub/c.txt": "The sub folder holds the parking rules.\n",
    "z.txt": "The last file, sorted after every bad name.\n",
}


# -- helpers -----------------------------------------------------------------------------------


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A clean corpus under ``tmp_path / "docs"``; commands run in ``tmp_path`` (the store root)."""
    monkeypatch.chdir(tmp_path)
    for name, text in CORPUS.items():
        path = tmp_path / "docs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return Path("docs")


def _cli(*args: str) -> Result:
    return runner.invoke(app, [*args, "--embedder", "hash"] if args[0] in ("ingest", "ask") else list(args))


def _ingest(store: str, *extra: str) -> Result:
    return _cli("ingest", "docs", "--store", store, *extra)


def _inventory(store: str) -> tuple[list[str], list[str]]:
    """The store's document ids and chunk ids (a read-only store is opened read-only)."""
    with Store(store) as opened:
        return [r.id for r in opened.records()], [span[0] for span in opened.chunk_spans()]


def _reference(store: str = "ref") -> tuple[list[str], list[str]]:
    """The clean corpus ingested into its own store: what a store with a bad input must still hold."""
    result = _ingest(store)
    assert result.exit_code == 0, result.output
    return _inventory(store)


def _without(inventory: tuple[list[str], list[str]], doc_id: str) -> tuple[list[str], list[str]]:
    docs, chunks = inventory
    return [d for d in docs if d != doc_id], [c for c in chunks if not c.startswith(doc_id + "#")]


def _ids_with(inventory: tuple[list[str], list[str]], extra: str) -> list[str]:
    return sorted([*inventory[0], extra])


@contextlib.contextmanager
def _unprivileged() -> Iterator[None]:
    """Permission checks apply within: a no-op for an ordinary user; for root, the DAC override
    capabilities are dropped from this thread's effective set and restored after."""
    if os.geteuid() != 0:
        yield
        return
    if not sys.platform.startswith("linux"):
        pytest.skip("running as root, and dropping its file-permission override needs Linux")
    libc = ctypes.CDLL(None, use_errno=True)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [
            ("effective", ctypes.c_uint32),
            ("permitted", ctypes.c_uint32),
            ("inheritable", ctypes.c_uint32),
        ]

    version_3 = 0x20080522
    dac = (1 << 1) | (1 << 2)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH

    def exchange(change: int | None) -> int:
        header, data = Header(version_3, 0), (Data * 2)()
        if libc.capget(ctypes.byref(header), data) != 0:
            raise OSError(ctypes.get_errno(), "capget")
        before = int(data[0].effective)
        data[0].effective = before & ~dac if change is None else change
        if libc.capset(ctypes.byref(header), data) != 0:
            raise OSError(ctypes.get_errno(), "capset")
        return before

    try:
        saved = exchange(None)
    except OSError as err:
        pytest.skip(f"running as root and cannot drop CAP_DAC_OVERRIDE ({err}): chmod would not bite")
    try:
        yield
    finally:
        exchange(saved)


# -- paths -------------------------------------------------------------------------------------


def test_a_name_that_is_not_utf8_is_ingested_escaped_and_the_files_after_it_too(corpus: Path) -> None:
    reference = _reference()
    fd = os.open(os.fsencode(corpus) + b"/bad\xff.txt", os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"The file with the odd name mentions lighthouses.\n")
    os.close(fd)
    result = _ingest("s")
    assert result.exit_code == NAME.exit_code, result.output
    expect(result.output, NAME, file="docs/bad\\xff.txt")
    assert "4 added" not in result.output and "5 added" in result.output
    assert _inventory("s")[0] == _ids_with(reference, "docs/bad\\xff.txt")
    assert _without(_inventory("s"), "docs/bad\\xff.txt") == reference
    # The indexes were brought up to date with it: a question finds it by its escaped id.
    asked = _cli("ask", "lighthouses", "--store", "s", "--no-generate")
    assert asked.exit_code == 0, asked.output
    assert "docs/bad\\xff.txt" in asked.output


def test_an_unreadable_folder_on_a_first_ingest_is_named(corpus: Path) -> None:
    reference = _reference()
    (corpus / "sub").chmod(0)
    try:
        with _unprivileged():
            result = _ingest("s")
    finally:
        (corpus / "sub").chmod(0o755)
    assert result.exit_code == FOLDER_FIRST.exit_code, result.output
    expect(result.output, FOLDER_FIRST, folder="docs/sub")
    assert _inventory("s") == _without(reference, "docs/sub/c.txt")


def test_an_unreadable_folder_on_a_later_ingest_keeps_its_documents(corpus: Path) -> None:
    reference = _reference("s")
    (corpus / "sub").chmod(0)
    try:
        with _unprivileged():
            result = _ingest("s", "--prune")
    finally:
        (corpus / "sub").chmod(0o755)
    assert result.exit_code == FOLDER_LATER.exit_code, result.output
    assert "Traceback" not in result.output
    expect(result.output, FOLDER_LATER, folder="docs/sub")
    assert "pruned" not in result.output and "gone" not in result.output
    assert _inventory("s") == reference


def test_a_symlink_out_of_the_corpus_is_skipped_by_name(corpus: Path, tmp_path: Path) -> None:
    reference = _reference()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("Not for this corpus.\n", encoding="utf-8")
    (corpus / "link.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    (corpus / "inside.txt").symlink_to("b.txt")  # a link within the corpus is fine
    result = _ingest("s")
    assert result.exit_code == LINK_OUT.exit_code, result.output
    target = str((tmp_path / "outside" / "secret.txt").resolve())
    expect(result.output, LINK_OUT, link="docs/link.txt", target=target, corpus="docs")
    assert _inventory("s")[0] == _ids_with(reference, "docs/inside.txt")
    assert _without(_inventory("s"), "docs/inside.txt") == reference


def test_a_symlinked_folder_out_of_the_corpus_is_skipped_by_name(corpus: Path, tmp_path: Path) -> None:
    reference = _reference()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "far.txt").write_text("Far away.\n", encoding="utf-8")
    (corpus / "far").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere" / "loop").symlink_to(tmp_path)  # followed, it must not loop
    result = _ingest("s")
    assert result.exit_code == LINK_OUT_DIR.exit_code, result.output
    target = str((tmp_path / "elsewhere").resolve())
    expect(result.output, LINK_OUT_DIR, link="docs/far", target=target, corpus="docs")
    assert _inventory("s") == reference
    followed = _ingest("s", "--follow-links")
    assert followed.exit_code == 0, followed.output
    assert _inventory("s")[0] == _ids_with(reference, "docs/far/far.txt")


def test_follow_links_ingests_what_a_link_out_points_to(corpus: Path, tmp_path: Path) -> None:
    reference = _reference()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "shared.txt").write_text("Shared glossary entry.\n", encoding="utf-8")
    (corpus / "link.txt").symlink_to(tmp_path / "outside" / "shared.txt")
    result = _ingest("s", "--follow-links")
    assert result.exit_code == LINK_FOLLOWED.exit_code, result.output
    expect(result.output, LINK_FOLLOWED, link="docs/link.txt")
    assert "skipped" not in result.output
    assert _without(_inventory("s"), "docs/link.txt") == reference


def test_a_broken_symlink_fails_alone_naming_its_target(corpus: Path, tmp_path: Path) -> None:
    reference = _reference()
    (corpus / "dangling.txt").symlink_to("nowhere.txt")
    result = _ingest("s")
    assert result.exit_code == LINK_BROKEN.exit_code, result.output
    target = str((tmp_path / "docs" / "nowhere.txt").resolve())
    expect(result.output, LINK_BROKEN, link="docs/dangling.txt", target=target)
    assert _inventory("s") == reference


# -- bytes -------------------------------------------------------------------------------------

ZH_SENTENCE = "检索增强生成让回答引用原文。"  # 14 characters, 42 bytes in UTF-8


def test_one_stray_byte_in_utf8_keeps_the_rest_of_the_file_searchable(corpus: Path) -> None:
    reference = _reference()
    data = (ZH_SENTENCE * 125).encode("utf-8")  # 5,250 bytes
    offset = 42 * 60  # between two sentences, so only the stray byte itself is bad
    (corpus / "zh.txt").write_bytes(data[:offset] + b"\xff" + data[offset:])
    result = _ingest("s")
    assert result.exit_code == STRAY_BYTE.exit_code, result.output
    expect(result.output, STRAY_BYTE, file="docs/zh.txt", offset=str(offset))
    with Store("s") as opened:
        text = opened.document_text("docs/zh.txt")
    assert text == ZH_SENTENCE * 60 + "\ufffd" + ZH_SENTENCE * 65
    asked = _cli("ask", "检索增强生成让回答引用原文", "--store", "s", "--no-generate")
    assert asked.exit_code == 0, asked.output
    assert "docs/zh.txt" in asked.output
    assert _without(_inventory("s"), "docs/zh.txt") == reference


def test_a_windows_1252_file_is_decoded_as_such_with_a_warning(corpus: Path) -> None:
    reference = _reference()
    (corpus / "menu.txt").write_bytes("café crème\n".encode("cp1252"))
    result = _ingest("s")
    assert result.exit_code == CP1252.exit_code, result.output
    expect(result.output, CP1252, file="docs/menu.txt")
    with Store("s") as opened:
        assert opened.document_text("docs/menu.txt") == "café crème\n"
    assert _without(_inventory("s"), "docs/menu.txt") == reference


def test_a_list_nested_3000_deep_keeps_every_item(corpus: Path) -> None:
    reference = _reference()
    deep = "".join("  " * depth + f"- item{depth}\n" for depth in range(3000))
    (corpus / "deep.md").write_text(deep, encoding="utf-8")
    result = _ingest("s")
    assert result.exit_code == DEEP_LIST.exit_code, result.output
    expect(result.output, DEEP_LIST, file="docs/deep.md")
    with Store("s") as opened:
        words = opened.document_text("docs/deep.md").split()
    assert [w for w in words if w != "-"] == [f"item{depth}" for depth in range(3000)]
    assert _without(_inventory("s"), "docs/deep.md") == reference


def test_100k_quote_markers_keep_their_text(corpus: Path) -> None:
    reference = _reference()
    (corpus / "quotes.md").write_text(">" * 100_000 + " The quoted text survives.\n", encoding="utf-8")
    result = _ingest("s")
    assert result.exit_code == DEEP_QUOTE.exit_code, result.output
    expect(result.output, DEEP_QUOTE, file="docs/quotes.md")
    with Store("s") as opened:
        assert opened.document_text("docs/quotes.md") == "The quoted text survives."
    assert _without(_inventory("s"), "docs/quotes.md") == reference


# -- stores ------------------------------------------------------------------------------------


def test_a_corrupt_database_is_named_as_damaged(corpus: Path) -> None:
    _reference("s")
    db = Path("s") / DB_NAME
    damaged = bytearray(db.read_bytes())
    damaged[100:4096] = b"\xa5" * (4096 - 100)  # the schema page, past the 100-byte header
    db.write_bytes(bytes(damaged))
    result = _ingest("s")
    assert result.exit_code == CORRUPT.exit_code, result.output
    expect(result.output, CORRUPT, db=str(db))
    assert db.read_bytes() == bytes(damaged), "the damaged file is left as it was, for recovery"
    assert (Path("docs") / "b.txt").read_text(encoding="utf-8") == CORPUS["b.txt"]


def test_a_file_that_is_not_a_database_is_named(corpus: Path) -> None:
    Path("s").mkdir()
    db = Path("s") / DB_NAME
    db.write_text("my shopping list\n", encoding="utf-8")
    for command in (("ingest", "docs", "--store", "s"), ("status", "--store", "s")):
        result = _cli(*command)
        assert result.exit_code == NOT_A_DB.exit_code, result.output
        expect(result.output, NOT_A_DB, db=str(db))
    assert db.read_text(encoding="utf-8") == "my shopping list\n"
    assert sorted(p.name for p in Path("s").iterdir()) == [DB_NAME]


def test_another_programs_database_is_named(corpus: Path) -> None:
    Path("s").mkdir()
    db = Path("s") / DB_NAME
    other = sqlite3.connect(db)
    other.execute("CREATE TABLE notes (body TEXT)")
    other.commit()
    other.close()
    result = _ingest("s")
    assert result.exit_code == FOREIGN_DB.exit_code, result.output
    expect(result.output, FOREIGN_DB, db=str(db))
    assert sqlite3.connect(db).execute("SELECT name FROM sqlite_master").fetchall() == [("notes",)]


def _read_only(store: Path) -> list[Path]:
    """Make the store folder and everything in it read-only; return what to give write access back."""
    changed = [*store.iterdir(), store]
    for path in changed:
        path.chmod(0o555 if path.is_dir() else 0o444)
    return changed


def test_status_reads_a_read_only_store(corpus: Path) -> None:
    reference = _reference("s")
    before = {p.name: p.read_bytes() for p in Path("s").iterdir() if p.is_file()}
    # no -wal or -shm file (the ingest lock's empty file is not the database's)
    assert sorted(before) == [".ingest.lock", DB_NAME], "a clean store: the immutable fallback is tested"
    changed = _read_only(Path("s"))
    try:
        with _unprivileged():
            result = _cli("status", "--store", "s")
            assert _inventory("s") == reference
    finally:
        for path in changed:
            path.chmod(0o755 if path.is_dir() else 0o644)
    assert result.exit_code == READ_ONLY_STATUS.exit_code, result.output
    expect(result.output, READ_ONLY_STATUS, count="4", kinds="text/markdown 1, text/plain 3")
    assert {p.name: p.read_bytes() for p in Path("s").iterdir() if p.is_file()} == before


def test_ask_answers_from_a_read_only_store_and_says_the_trace_was_not_stored(corpus: Path) -> None:
    reference = _reference("s")
    changed = _read_only(Path("s"))
    try:
        with _unprivileged():
            result = _cli("ask", "deposit key fob", "--store", "s", "--no-generate")
    finally:
        for path in changed:
            path.chmod(0o755 if path.is_dir() else 0o644)
    assert result.exit_code == READ_ONLY_ASK.exit_code, result.output
    assert "docs/a.md#" in result.output, "the question was answered from the store"
    trace = re.search(r"trace (\S+) not stored", result.output)
    assert trace is not None, result.output
    expect(result.output, READ_ONLY_ASK, trace=trace.group(1), store="s")
    assert _inventory("s") == reference


def test_ingest_into_a_read_only_store_is_refused_before_any_work(corpus: Path) -> None:
    reference = _reference("s")
    (corpus / "new.txt").write_text("A file the refused ingest must not half-store.\n", encoding="utf-8")
    Path("s").chmod(0o555)
    try:
        with _unprivileged():
            result = _ingest("s")
    finally:
        Path("s").chmod(0o755)
    assert result.exit_code == READ_ONLY_INGEST.exit_code, result.output
    expect(result.output, READ_ONLY_INGEST, store="s")
    assert _inventory("s") == reference


def test_an_empty_store_path_is_refused(corpus: Path, tmp_path: Path) -> None:
    before = sorted(os.listdir(tmp_path))
    for command in (("ingest", "docs", "--store", ""), ("status", "--store", "")):
        result = _cli(*command)
        assert result.exit_code == EMPTY_STORE.exit_code, result.output
        expect(result.output, EMPTY_STORE)
    assert sorted(os.listdir(tmp_path)) == before, "nothing is written into the current folder"


def test_a_store_path_that_is_a_file_is_refused(corpus: Path) -> None:
    Path("notes.txt").write_text("keep me\n", encoding="utf-8")
    for command in (("ingest", "docs", "--store", "notes.txt"), ("ask", "deposit", "--store", "notes.txt")):
        result = _cli(*command)
        assert result.exit_code == STORE_IS_FILE.exit_code, result.output
        expect(result.output, STORE_IS_FILE, store="notes.txt")
    assert Path("notes.txt").read_text(encoding="utf-8") == "keep me\n"


def test_the_reference_is_the_clean_corpus(corpus: Path) -> None:
    """The fixture every case compares against holds the four clean documents and nothing more."""
    docs, chunks = _reference()
    assert docs == ["docs/a.md", "docs/b.txt", "docs/sub/c.txt", "docs/z.txt"]
    assert chunks and all(c.split("#")[0] in docs for c in chunks)
    shutil.rmtree("ref")
