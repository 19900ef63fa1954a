"""``clear-rag`` killed with SIGKILL mid-write, then run again, leaves the store a clean one would be.

Each run starts the real command as a subprocess, waits until it is past start-up (it has printed a
line saying so), lets it work for a seeded random share of the time that stage takes (measured once
on this machine), and kills it. Then ``clear-rag ingest`` runs again and the store must equal a
clean reference: the same documents, chunks, and ids in each index, every index passing its check,
no temporary files left behind. The kill lands somewhere different on a loaded machine than on an
idle one, so the assertion is one that must hold wherever it lands.

Three kinds of run, in turn: a first ``ingest`` (killed while it stores documents or indexes
them), an ``ingest`` of a store whose documents are in but whose indexes are not (killed while it
indexes and writes the index files), and ``clear-rag index --rebuild`` (killed while it rebuilds).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.reliability.test_index import HASH, Snapshot, clear_rag_command, cli, snapshot

SEED = 20_261_130
RUNS = 20  # seven ingests, seven index writes, six rebuilds
WORDS = "brake pad rotor chain cassette tyre valve spoke hub saddle fork cable gear lever bleed"

pytestmark = pytest.mark.slow  # about 60 to 90 s on two busy cores: 23 start-ups of the real command


def write_corpus(root: Path) -> None:
    """Forty short documents of seeded words, and one the hash embedder cannot embed (its
    punctuation gives a zero vector), so that a document left out of an index is killed too."""
    rng, words = random.Random(SEED), WORDS.split()
    docs = root / "docs"
    docs.mkdir(parents=True)
    for n in range(40):
        sentences = [" ".join(rng.choices(words, k=12)).capitalize() + "." for _ in range(30)]
        (docs / f"n{n:02d}.txt").write_text("\n\n".join(sentences) + "\n", encoding="utf-8")
    (docs / "dots.txt").write_text("... !!! ???\n", encoding="utf-8")


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of run: the command, the store it starts from, and the line that says it is ready."""

    name: str
    args: list[str]
    start_from: str | None  # a prepared store copied in first, or None for no store
    ready: Callable[[str], bool]


KINDS = [
    Kind("ingest", ["ingest", "docs", *HASH], None, lambda line: line.lstrip().startswith("added")),
    Kind("index", ["ingest", "docs", *HASH], "documents-only", lambda line: line.startswith("ingest into")),
    Kind("rebuild", ["index", "--rebuild", *HASH], "complete", lambda line: True),
]


def start(kind: Kind, root: Path, store: str) -> tuple[subprocess.Popen[str], float]:
    """The command running on ``store``, and the moment it reported ready (for ``rebuild``, which
    prints nothing until it is done, the moment it started)."""
    if kind.start_from is not None:
        shutil.copytree(root / kind.start_from, root / store)
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "CLEAR_RAG_THREADS": "1"}
    command = [*clear_rag_command(), *kind.args, "--store", store]
    process = subprocess.Popen(
        command, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    if kind.name == "rebuild":
        return process, time.monotonic()
    assert process.stdout is not None
    for line in process.stdout:
        if kind.ready(line):
            break
    return process, time.monotonic()


def work_time(kind: Kind, root: Path) -> float:
    """How long the command works after it is ready, measured on one run left to finish."""
    process, ready = start(kind, root, f"calibrate-{kind.name}")
    assert process.wait(timeout=120) == 0
    if process.stdout is not None:
        process.stdout.close()
    return max(time.monotonic() - ready, 0.05)


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Snapshot]:
    """The corpus, a clean reference store, and a store holding the documents but no index."""
    root = tmp_path_factory.mktemp("sigkill")
    write_corpus(root)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        assert cli("ingest", "docs", "--store", "complete", *HASH).exit_code == 0
        assert cli("ingest", "docs", "--store", "documents-only", "--no-index", *HASH).exit_code == 0
    return root, snapshot(root / "complete")


def test_a_killed_write_is_recovered_by_the_next_ingest(
    prepared: tuple[Path, Snapshot], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, reference = prepared
    monkeypatch.chdir(root)
    spans = {kind.name: work_time(kind, root) for kind in KINDS}
    rng = random.Random(SEED)
    landed: list[tuple[str, float, bool]] = []
    for run in range(RUNS):
        kind = KINDS[run % len(KINDS)]
        store = f"run-{run:02d}"
        delay = rng.uniform(0.0, spans[kind.name])
        process, _ = start(kind, root, store)
        time.sleep(delay)
        killed = process.poll() is None
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        if process.stdout is not None:
            process.stdout.close()
        landed.append((kind.name, delay, killed))
        again = cli("ingest", "docs", "--store", store, *HASH)
        assert again.exit_code == 0, (kind.name, delay, again.output)
        assert snapshot(root / store) == reference, (kind.name, delay)
        checked = cli("index", "--store", store, *HASH)
        assert checked.exit_code == 0, (kind.name, delay, checked.output)
        assert not list((root / store / "index").glob("*/.*.tmp")), (kind.name, delay)
    # Most runs must have been killed mid-work, or the test would prove little.
    assert sum(killed for _, _, killed in landed) >= RUNS // 2, landed
