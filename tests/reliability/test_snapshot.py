"""Questions asked while ``ingest --prune`` rewrites the store: each reads one consistent snapshot.

Issue 29: twelve rounds of ``ingest --prune`` beside four clients asking without pause failed 17 of
2,363 questions with "chunk ... spans [0, 496) but document ... has 481 characters": the server's
pipeline held the chunk table and indexes of one generation and read documents' texts live, so it
sliced a new text at old spans. Here every round rewrites every document (other lengths, so other
spans), drops one file and brings back the one dropped before, while clients ask as the server,
the library (``open_pipeline``, as the evaluation runner does) and the ``clear-rag ask`` command
do. No question may fail, and each must read one round: every sentence of every document ends with
its round's marker (``r07``), so everything a question was given carries the same one, or it read
two generations at once.

Beside it, the cases of the same issue that need no concurrency: ``ask`` waits only for an ingest
under way (with none, an index behind the store is an error at once), and a question holding bytes
that are not UTF-8 is answered and stored with ``\\x`` escapes.
"""

from __future__ import annotations

import asyncio
import random
import re
import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clear_rag.chunk.factory import make_chunker
from clear_rag.cli import app
from clear_rag.generate.events import Event
from clear_rag.generate.planner import Planner
from clear_rag.index.places import IndexBehindError
from clear_rag.index.sync import keyword_index
from clear_rag.ingest import ingest
from clear_rag.providers.fake import EchoChatModel, HashEmbedder, LexicalReranker
from clear_rag.retrieve.pipeline import Pipeline
from clear_rag.session import open_pipeline, sync_indexes
from clear_rag.store import Store
from clear_rag.store.snapshot import no_ingest_under_way
from clear_rag.tokens import RegexTokenizer
from clear_rag.web.request import ChatRequest
from clear_rag.web.runner import Models, Runner
from tests.conftest import toy_config
from tests.reliability.catalogue import case, expect
from tests.reliability.test_index import clear_rag_command
from tests.test_store import checkpoint

SNAPSHOT = case(
    "store-ask-beside-ingest-prune",
    area="store",
    fault="`clear-rag ask`, four server clients and the library asking without pause while 12 rounds of "
    "`ingest --prune` rewrite every document (the predecessor failed 17 of 2,363 questions with "
    '"chunk ... spans [0, 496) but document ... has 481 characters")',
    message="trace {trace} stored; `clear-rag replay {trace}` prints it again without a model",
    exit_code=0,
)
NOT_UTF8 = case(
    "store-ask-question-not-utf8",
    area="store",
    fault="`clear-rag ask` with a question holding a byte that is not UTF-8 (`brake pads \\xff`: a Latin-1 "
    "terminal's `ÿ`); the predecessor answered, then failed storing the trace with a traceback",
    message="warning: the question is not valid UTF-8, so it is asked and stored with \\x escapes: "
    "{question}",
    exit_code=0,
)
BEHIND = case(
    "store-ask-index-behind-no-ingest",
    area="store",
    fault="`clear-rag ask` after `ingest --no-index` changed a document, with no ingest under way "
    "(nothing to wait for)",
    message="error: {store}: has a keyword index that is behind the store (1 documents new or changed, "
    "0 removed since it was built). Run `clear-rag ingest PATH` (it brings the indexes up to date), "
    "then ask again",
    exit_code=3,
)

SEED = 20_260_529
DOCUMENTS = 12
ROUNDS = 12
QUESTIONS = 1200  # at least this many in all, and a twelfth of them between two rounds
SERVER_CLIENTS = 4
WAIT_S = 300.0  # a safety net for a wedged thread, never a pace: every wait is on progress
WORDS = ("brake", "pad", "rotor", "chain", "cassette", "tyre", "valve", "spoke", "hub", "saddle", "fork")
MARKER = re.compile(r"\br(\d\d)\b")
CONFIG = toy_config()  # keyword and vector search over the toy chunking (structural, 32 tokens)
TRACE_LINE = re.compile(r"^trace (\S+) stored;", re.M)

runner = CliRunner()


def document_text(doc: int, round_: int) -> str:
    """Document ``doc`` as round ``round_`` writes it: seeded sentences, as many and as long as the
    round says (so its chunks' spans move), each ending with the round's marker."""
    rng = random.Random(SEED * 1000 + doc * 100 + round_)
    sentences = [
        " ".join(rng.choices(WORDS, k=rng.randint(4, 14))).capitalize() + f" r{round_:02d}."
        for _ in range(3 + (doc + round_) % 5)
    ]
    return "\n\n".join(sentences) + "\n"


def write_round(docs: Path, round_: int) -> None:
    """Every document rewritten for ``round_``, but one: left out, so ``--prune`` drops it (and the
    one left out the round before comes back)."""
    docs.mkdir(parents=True, exist_ok=True)
    for doc in range(DOCUMENTS):
        path = docs / f"d{doc:02d}.txt"
        if doc == round_ % DOCUMENTS:
            path.unlink(missing_ok=True)
        else:
            path.write_text(document_text(doc, round_), encoding="utf-8")


def store_documents(store: Store, docs: Path) -> None:
    """The first half of `clear-rag ingest docs --prune`: the documents stored (the ingest lock is
    held from the first change until ``sync_indexes``)."""
    chunker = make_chunker("structural", size=32, tokenizer=RegexTokenizer())  # CONFIG's chunking
    assert ingest(store, [docs], chunker, prune=True).count("failed") == 0


def ingest_round(store_dir: Path, docs: Path, root: Path) -> None:
    """What `clear-rag ingest docs --prune` does: store the documents, then bring the indexes up to date."""
    with Store(store_dir, root=root, mode="write") as store:
        store_documents(store, docs)
        sync_indexes(store, [CONFIG], HashEmbedder())


def one_round(texts: list[str]) -> str | None:
    """Why ``texts`` (what one question was given) were not all read from one round, or None."""
    rounds = sorted({m for text in texts for m in MARKER.findall(text)})
    return f"it read rounds {rounds} at once" if len(rounds) > 1 else None


def questions(seed: int) -> Iterator[str]:
    rng = random.Random(seed)
    while True:
        yield " ".join(rng.sample(WORDS, 3))


@dataclass
class Tally:
    """Questions asked so far and every one that failed or read two rounds, shared by the threads."""

    asked: int = 0
    failures: list[str] = field(default_factory=list)
    commands: list[tuple[str, str]] = field(default_factory=list)  # each `ask` run's output, trace id
    writer_done: bool = False
    changed: threading.Condition = field(default_factory=threading.Condition)

    def record(self, question: str, failure: str | None) -> None:
        with self.changed:
            self.asked += 1
            if failure is not None:
                self.failures.append(f"{question!r}: {failure}")
            self.changed.notify_all()

    def wait_until_asked(self, wanted: int) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: self.asked >= wanted, WAIT_S)

    def finished(self) -> bool:
        with self.changed:
            return self.writer_done and self.asked >= QUESTIONS


Client = Callable[[Tally], None]


def server_client(server: Runner, seed: int) -> Client:
    """A client of the server: a question, its events to the end, the next question."""

    async def one(question: str) -> str | None:
        passages: list[str] = []
        async for event in server.stream(ChatRequest(question=question)):
            if event.kind == "error":
                return str(event.data["message"])
            if event.kind == "context":
                passages = [p["text"] for p in event.data["passages"]]
        return one_round(passages)

    def ask(tally: Tally) -> None:
        for question in questions(seed):
            if tally.finished():
                return
            tally.record(question, asyncio.run(one(question)))

    return ask


def library_client(store_dir: Path, seed: int) -> Client:
    """A caller of the library opening a pipeline for each question, as `clear-rag ask` and the
    evaluation runner do: its passages and every chunk text it shows from one snapshot."""

    def ask(tally: Tally) -> None:
        with Store(store_dir) as store:
            for question in questions(seed):
                if tally.finished():
                    return
                passages: list[str] = []

                def keep(event: Event, passages: list[str] = passages) -> None:
                    if event.kind == "context":
                        passages += [p["text"] for p in event.data["passages"]]

                try:
                    pipeline = open_pipeline(
                        store, CONFIG, embedder=HashEmbedder(), tokenizer=RegexTokenizer()
                    )
                    try:
                        trace = Planner(pipeline, EchoChatModel()).run(question, on_event=keep)
                        shown = [pipeline.chunk_text(c.chunk_id) for s in trace.stages for c in s.candidates]
                    finally:
                        pipeline.close()
                    failure = one_round([*passages, *shown, trace.answer])
                except Exception as err:
                    failure = f"{type(err).__name__}: {err}"
                tally.record(question, failure)

    return ask


def command_client(store_dir: Path, seed: int) -> Client:
    """A person running `clear-rag ask --stages` again and again (a process each, so a few of them):
    each run exits 0 with its trace stored, and every chunk text, answer and citation it prints is of
    one round."""

    def ask(tally: Tally) -> None:
        for question in questions(seed):
            if tally.finished():
                return
            command = [*clear_rag_command(), "ask", question, "--store", str(store_dir), "--stages"]
            command += ["--embedder", "hash", "--chat", "echo"]
            done = subprocess.run(command, capture_output=True, text=True, timeout=WAIT_S, check=False)
            traces = TRACE_LINE.findall(done.stdout)
            if done.returncode != SNAPSHOT.exit_code or not traces:
                tally.record(question, f"exit {done.returncode}: {done.stdout}{done.stderr}")
                continue
            with tally.changed:
                tally.commands.append((done.stdout, traces[0]))  # its line checked by the test
            tally.record(question, one_round([done.stdout]))

    return ask


def run_beside_ingests(tmp_path: Path, clients: list[Client]) -> Tally:
    """Round after round of ingest in one thread while every client asks in a thread of its own; a
    round begins once the clients have asked their share since the one before."""
    tally = Tally()
    per_round = QUESTIONS // ROUNDS
    docs, store_dir = tmp_path / "docs", tmp_path / "store"

    def writer() -> None:
        try:
            for round_ in range(1, ROUNDS + 1):
                if not tally.wait_until_asked((round_ - 1) * per_round):
                    tally.failures.append(f"round {round_}: the clients stopped asking")
                    return
                write_round(docs, round_)
                ingest_round(store_dir, docs, tmp_path)
        finally:
            with tally.changed:
                tally.writer_done = True
                tally.changed.notify_all()

    threads = [threading.Thread(target=writer, name="ingest")]
    threads += [threading.Thread(target=c, args=(tally,), name=f"client-{n}") for n, c in enumerate(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT_S)
    assert not any(thread.is_alive() for thread in threads), "a thread is still running"
    return tally


@pytest.fixture
def first_round(tmp_path: Path) -> Path:
    """The store after round 0, as `clear-rag ingest` leaves it."""
    write_round(tmp_path / "docs", 0)
    ingest_round(tmp_path / "store", tmp_path / "docs", tmp_path)
    return tmp_path / "store"


@pytest.mark.slow  # 10 to 20 s on two busy cores: twelve ingests beside 1,200 questions, a few processes
def test_questions_beside_ingest_prune_rounds_all_read_one_snapshot(
    tmp_path: Path, first_round: Path
) -> None:
    models = Models(HashEmbedder(), EchoChatModel(), lambda name: LexicalReranker(), {})
    with Store(first_round) as served:
        server = Runner(served, CONFIG, models)
        try:
            clients = [server_client(server, seed) for seed in range(SERVER_CLIENTS)]
            clients += [library_client(first_round, 100), command_client(first_round, 200)]
            tally = run_beside_ingests(tmp_path, clients)
            # the server's pipelines are open, and none holds a read: the WAL file empties entirely
            assert checkpoint(first_round) == 0
        finally:
            server.close()
    assert tally.failures == []
    assert tally.asked >= QUESTIONS
    assert tally.commands
    for output, trace in tally.commands:
        expect(output, SNAPSHOT, trace=trace)


# -- one process, no concurrency needed -------------------------------------------------------------


def test_a_pipeline_keeps_its_snapshot_while_an_ingest_rewrites_and_prunes(
    tmp_path: Path, first_round: Path
) -> None:
    """The failure of issue 29 without threads: a pipeline opened before an ingest answers from the
    documents it was opened on after the ingest rewrote every text and pruned one of them."""
    with Store(first_round) as store:
        before = open_pipeline(store, CONFIG, embedder=HashEmbedder(), tokenizer=RegexTokenizer())
        try:
            write_round(tmp_path / "docs", 1)
            ingest_round(first_round, tmp_path / "docs", tmp_path)
            for question in ("brake pad rotor", "chain hub fork", "saddle spoke valve"):
                retrieval = before.retrieve(question)
                texts = [p.text for p in retrieval.packed.passages]
                assert texts
                assert {m for t in texts for m in MARKER.findall(t)} == {"00"}
            assert before.document_text("docs/d01.txt") == document_text(1, 0)  # pruned since
        finally:
            before.close()
        after = open_pipeline(store, CONFIG, embedder=HashEmbedder(), tokenizer=RegexTokenizer())
        try:
            texts = [p.text for p in after.retrieve("brake pad rotor").packed.passages]
            assert {m for t in texts for m in MARKER.findall(t)} == {"01"}
        finally:
            after.close()


def test_opening_a_pipeline_waits_for_an_ingest_under_way(
    tmp_path: Path, first_round: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    waiting = threading.Event()

    def signalled(directory: Path) -> object:
        waiting.set()
        return no_ingest_under_way(directory)

    monkeypatch.setattr("clear_rag.session.no_ingest_under_way", signalled)
    opened: list[str] = []

    def reader() -> None:
        with Store(first_round) as store:
            pipeline = open_pipeline(store, CONFIG, embedder=HashEmbedder(), tokenizer=RegexTokenizer())
            opened.append(pipeline.document_text("docs/d02.txt"))
            pipeline.close()

    with Store(first_round, mode="write") as writer:
        write_round(tmp_path / "docs", 1)
        store_documents(writer, tmp_path / "docs")
        thread = threading.Thread(target=reader)
        thread.start()
        assert waiting.wait(WAIT_S)  # it found the indexes behind, and waits for the ingest
        sync_indexes(writer, [CONFIG], HashEmbedder())
        thread.join(WAIT_S)
    assert opened == [document_text(2, 1)]


def test_without_waiting_an_ingest_under_way_is_said_at_once(tmp_path: Path, first_round: Path) -> None:
    """What a server holding an older pipeline asks for: the new one is not ready, so keep the old."""
    failed: list[BaseException] = []

    def reader() -> None:
        with Store(first_round) as store:
            try:
                open_pipeline(store, CONFIG, embedder=HashEmbedder(), wait=False)
            except IndexBehindError as err:
                failed.append(err)

    with Store(first_round, mode="write") as writer:
        write_round(tmp_path / "docs", 1)
        store_documents(writer, tmp_path / "docs")
        thread = threading.Thread(target=reader)
        thread.start()
        thread.join(WAIT_S)
        assert not thread.is_alive()
    assert len(failed) == 1
    assert "index that is behind the store" in str(failed[0])


def test_the_server_answers_from_its_last_pipeline_while_an_ingest_indexes(
    tmp_path: Path, first_round: Path
) -> None:
    """Midway through an ingest's indexing (the keyword index rebuilt, the vector index not yet) the
    index files have changed, so the server looks for a new pipeline: it keeps answering from the one
    it had, whole, rather than holding every question until the ingest ends; once the ingest is done
    the next question reads the new round."""
    models = Models(HashEmbedder(), EchoChatModel(), lambda name: LexicalReranker(), {})
    with Store(first_round) as served, Store(first_round, mode="write") as writer:
        server = Runner(served, CONFIG, models)
        before = server.pipeline(CONFIG)
        write_round(tmp_path / "docs", 1)
        store_documents(writer, tmp_path / "docs")
        keyword_index(writer, stem=CONFIG.stem)  # half of the ingest's indexing
        got: list[Pipeline] = []
        thread = threading.Thread(target=lambda: got.append(server.pipeline(CONFIG)))
        thread.start()
        thread.join(WAIT_S)  # it would wait for the ingest, which this thread holds: a deadlock
        assert not thread.is_alive() and got == [before]
        assert before.document_text("docs/d02.txt") == document_text(2, 0)
        sync_indexes(writer, [CONFIG], HashEmbedder())
        after = server.pipeline(CONFIG)
        assert after is not before and after.document_text("docs/d02.txt") == document_text(2, 1)


def test_ask_with_an_index_behind_and_no_ingest_under_way_fails_at_once(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["ingest", "docs", "--store", "s", "--embedder", "hash"]).exit_code == 0
    (corpus / "b.txt").write_text("Tyre pressure changed: 70 psi for gravel.\n", encoding="utf-8")
    stored = runner.invoke(app, ["ingest", "docs", "--store", "s", "--no-index"])
    assert stored.exit_code == 0, stored.output
    result = runner.invoke(
        app, ["ask", "tyre pressure", "--store", "s", "--embedder", "hash", "--chat", "echo"]
    )
    assert result.exit_code == BEHIND.exit_code, result.output
    expect(result.output, BEHIND, store="s")


def test_ask_with_a_question_not_utf8_answers_and_stores_it_escaped(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["ingest", "docs", "--store", "s", "--embedder", "hash"]).exit_code == 0
    # What Python makes of the argument bytes b"disc brakes need new pads \xff": a lone surrogate.
    question = b"disc brakes need new pads \xff".decode("utf-8", "surrogateescape")
    asked = ["ask", question, "--store", "s", "--embedder", "hash", "--chat", "extractive:lexical"]
    result = runner.invoke(app, asked)
    assert result.exit_code == NOT_UTF8.exit_code, result.output
    expect(result.output, NOT_UTF8, question="disc brakes need new pads \\xff")
    assert "Disc brakes need new pads at 1.5 mm. [1]" in result.output
    assert "Traceback" not in result.output
    with Store(tmp_path / "s") as store:
        [(_, _, query)] = store.traces()
    assert query == "disc brakes need new pads \\xff"
