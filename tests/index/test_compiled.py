"""The background warm-up of the compiled kernels (clear_rag.index.compiled and .warm): a search
never waits for it, gives the same list before and after the switch to the kernels, and goes on on
numpy when the warm-up fails, which says why.

The warm-up is a fake here wherever its timing matters: ``launch`` returns a wait that blocks on an
Event the test sets, so "before readiness" is a state the test holds, not a race it hopes to win.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import platform
import random
import re
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clear_rag.index import compiled, dense, ranking, vectors, warm
from clear_rag.index.bm25 import BM25Index
from clear_rag.index.compiled import Kernels, Warmer, WarmUpError
from clear_rag.index.vectors import VectorIndex

WORDS = [f"w{rank}" for rank in range(30)]
ZIPF = [1 / (rank + 1) for rank in range(len(WORDS))]
# Only reached if a search did wait for the fake compile: the test then fails, rather than hangs.
NEVER_S = 600.0


class Counting:
    """The BM25 kernels, counting calls: a search that went through them took the compiled path."""

    def __init__(self, bm25: Any) -> None:
        self.bm25 = bm25
        self.calls = 0

    def top_k(self, *args: Any) -> Any:
        self.calls += 1
        return self.bm25.top_k(*args)

    def top_one(self, *args: Any) -> Any:
        self.calls += 1
        return self.bm25.top_one(*args)

    def scratch(self, n_docs: int) -> Any:
        return self.bm25.scratch(n_docs)


class HeldWarmUp:
    """A warm-up whose compile ends when the test releases it; records whether a search saw it end."""

    def __init__(self, kernels: Kernels) -> None:
        self.release = threading.Event()
        self.launched = 0
        self.loads = 0
        self.counting = Counting(kernels.bm25)
        self.kernels = Kernels(self.counting, kernels.prepass, kernels.batched)  # type: ignore[arg-type]

    def launch(self) -> Callable[[], str]:
        self.launched += 1

        def filled() -> str:
            if not self.release.wait(NEVER_S):
                raise WarmUpError("the test never released the fake compile")
            return "released by the test"

        return filled

    def load(self) -> Kernels:
        self.loads += 1
        return self.kernels

    def warmer(self) -> Warmer:
        return Warmer(launch=self.launch, load=self.load, available=lambda: True)


def exhaustive(index: BM25Index, queries: list[str], k: int) -> list[list[tuple[str, float]]]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ranking, "_kernels", lambda: None)
        return index.search_many(queries, k)


def zipf_index(seed: int, count: int) -> BM25Index:
    rng = random.Random(seed)
    index = BM25Index()
    texts = [" ".join(rng.choices(WORDS, ZIPF, k=rng.randint(1, 25))) for _ in range(count)]
    index.add([f"d{(n * 7919) % 1000:03}-{n}" for n in range(count)], texts)
    return index


# -- before, during and after the switch ------------------------------------------------------------


def test_a_search_before_the_kernels_are_ready_does_not_wait_for_them(
    monkeypatch: pytest.MonkeyPatch, compiled_kernels: Kernels
) -> None:
    held = HeldWarmUp(compiled_kernels)
    monkeypatch.setattr(compiled, "_warmer", held.warmer())
    index = zipf_index(1, 200)
    queries = ["w0 w3", "w1 w1 w7", "w20", "nothing"]
    before = index.search_many(queries, 5)
    # The search is back while the compile is held: it started the warm-up and did not wait on it.
    assert compiled.status().state == "warming" and held.launched == 1
    assert held.loads == 0 and held.counting.calls == 0
    assert before == exhaustive(index, queries, 5)
    held.release.set()
    assert compiled.wait().state == "ready"
    after = index.search_many(queries, 5)
    assert held.counting.calls == 1  # the kernels answered, with the very same lists
    assert after == before
    assert held.launched == 1  # started once


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    queries=st.lists(st.lists(st.sampled_from([*WORDS, "unknown"]), max_size=6).map(" ".join), min_size=1),
    switch=st.integers(0, 8),
    k=st.integers(1, 40),
)
def test_every_search_gives_the_exhaustive_list_whenever_the_switch_comes(
    compiled_kernels: Kernels, seed: int, queries: list[str], switch: int, k: int
) -> None:
    held = HeldWarmUp(compiled_kernels)
    index = zipf_index(seed, 60)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compiled, "_warmer", held.warmer())
        for n, query in enumerate(queries):
            if n == switch:
                held.release.set()
                assert compiled.wait().state == "ready"
            assert index.search(query, k) == exhaustive(index, [query], k)[0]
    held.release.set()  # a switch past the last query: let the fake's thread end
    assert held.counting.calls == max(0, len(queries) - switch)


def test_a_vector_search_switches_to_the_pre_pass_with_the_same_rows(
    monkeypatch: pytest.MonkeyPatch, compiled_kernels: Kernels
) -> None:
    monkeypatch.setattr(vectors, "PREPASS_MIN", 1)
    held = HeldWarmUp(compiled_kernels)
    monkeypatch.setattr(compiled, "_warmer", held.warmer())
    rng = np.random.default_rng(7)
    centres = rng.normal(size=(30, 16))
    data = centres[rng.integers(0, 30, 600)] + 0.5 * rng.normal(size=(600, 16))
    index = VectorIndex(16, threads=1)
    index.add([f"c{n:04d}" for n in rng.permutation(600)], data)
    queries = rng.normal(size=(8, 16))
    before = [index.search(q, 10) for q in queries]
    assert index._quantised is None  # one full product each: no pre-pass before readiness
    held.release.set()
    assert compiled.wait().state == "ready"
    after = [index.search(q, 10) for q in queries]
    assert index._quantised is not None
    for full, prepassed in zip(before, after, strict=True):
        # the same rows in the same order; BLAS and the compiled loop round a float32 sum differently
        assert [i for i, _ in prepassed] == [i for i, _ in full]
        assert [s for _, s in prepassed] == pytest.approx([s for _, s in full], abs=1e-6)


def test_searches_pass_only_argument_types_the_warm_up_compiled(
    monkeypatch: pytest.MonkeyPatch, compiled_kernels: Kernels, tmp_path: Path
) -> None:
    """Compiling is off once the kernels are loaded: a search passing other types would raise
    TypeError in the kernel and put the process back on numpy (the state would say so)."""
    signatures = [len(point.signatures) for point in warm.entry_points()]
    index = zipf_index(3, 300)
    index.search_many(["w0 w1", "w4"], 10)
    index.save(tmp_path / "bm25")
    BM25Index.load(tmp_path / "bm25").search("w0 w2", 3)  # rows copied from a narrow file
    index.with_params(k1=0.9, idf="fts5").search("w0 w2", 3)
    big = BM25Index()  # from 65,536 documents the rows are read from the mapped uint32 file itself
    big.add([f"b{n}" for n in range(70_000)], [f"w{n % 5}" for n in range(70_000)])
    big.save(tmp_path / "big")
    BM25Index.load(tmp_path / "big").search_many(["w0 w2", "w3"], 3)
    BM25Index.load(tmp_path / "big").search("w1", 3)
    monkeypatch.setattr(vectors, "PREPASS_MIN", 1)
    monkeypatch.setattr(dense, "PARALLEL_MIN", 1)
    rng = np.random.default_rng(9)
    memory = VectorIndex(384, threads=2)
    memory.add([f"v{n}" for n in range(300)], rng.normal(size=(300, 384)))
    memory.search(rng.normal(size=384), 5)
    for k in (5, 40):  # search_many keeps a few in a sorted run, more in a heap (clear_rag.index.batched)
        memory.search_many(rng.normal(size=(3, 384)), k)
        memory.search_many(rng.normal(size=(1, 384)), k)
    memory.save(tmp_path / "vectors")
    mapped = VectorIndex.load(tmp_path / "vectors", threads=2)  # memory-mapped, read-only
    mapped.search(rng.normal(size=384), 5)
    mapped.search_many(rng.normal(size=(2, 384)), 5)
    mapped.add(["new"], rng.normal(size=(1, 384)))  # copied into memory
    mapped.search(rng.normal(size=384), 5)
    assert compiled.status().state == "ready", compiled.status().reason
    assert compiled.kernels() is compiled_kernels
    assert mapped._quantised is not None and memory._quantised is not None
    assert memory._rank is not None  # the compiled batched top k ran
    assert [len(point.signatures) for point in warm.entry_points()] == signatures


# -- failures ---------------------------------------------------------------------------------------


def test_a_failed_warm_up_leaves_numpy_searching_and_says_why(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def launch() -> Callable[[], str]:
        def filled() -> str:
            raise WarmUpError("`python -m clear_rag.index.warm` exited with status 1: MemoryError")

        return filled

    def load() -> Kernels:
        raise AssertionError("nothing is loaded after a failed compile")

    monkeypatch.setattr(compiled, "_warmer", Warmer(launch=launch, load=load, available=lambda: True))
    index = zipf_index(2, 100)
    with caplog.at_level(logging.WARNING, logger=compiled.__name__):
        first = index.search_many(["w0 w2", "w5"], 5)  # starts the warm-up, which fails in its thread
        settled = compiled.wait()
    assert settled.state == "failed"
    assert settled.reason == "`python -m clear_rag.index.warm` exited with status 1: MemoryError"
    assert [r.getMessage() for r in caplog.records] == [
        "the compiled search kernels are not used (`python -m clear_rag.index.warm` exited with status 1: "
        "MemoryError); searches use numpy"
    ]
    assert first == index.search_many(["w0 w2", "w5"], 5) == exhaustive(index, ["w0 w2", "w5"], 5)
    assert compiled.kernels() is None and compiled.status() == settled  # not started again


def cannot_start() -> Callable[[], str]:
    raise WarmUpError("`python -m clear_rag.index.warm` could not start (no such file)")


def filled() -> Callable[[], str]:
    return lambda: "filled"


def broken_load() -> Kernels:
    raise ImportError("numba was built against another numpy")


def no_load() -> Kernels:
    raise AssertionError("nothing is loaded when the command did not start")


@pytest.mark.parametrize(
    ("launch", "load", "reason"),
    [
        (cannot_start, no_load, "`python -m clear_rag.index.warm` could not start (no such file)"),
        (filled, broken_load, "ImportError: numba was built against another numpy"),
    ],
    ids=["the command cannot start", "loading raises"],
)
def test_any_failure_of_the_warm_up_is_recorded_not_raised(
    monkeypatch: pytest.MonkeyPatch,
    launch: Callable[[], Callable[[], str]],
    load: Callable[[], Kernels],
    reason: str,
) -> None:
    monkeypatch.setattr(compiled, "_warmer", Warmer(launch=launch, load=load, available=lambda: True))
    index = zipf_index(4, 50)
    assert index.search("w0", 3) == exhaustive(index, ["w0"], 3)[0]
    settled = compiled.wait()
    assert settled.state == "failed" and settled.reason == reason


def test_a_kernel_refusing_the_arguments_puts_searches_back_on_numpy(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    class Refusing:
        def top_k(self, *args: Any) -> Any:
            raise TypeError("No matching definition for argument type(s) array(float32, 1d, C)")

    refusing = Kernels(Refusing(), Refusing(), Refusing())  # type: ignore[arg-type]
    warmer = Warmer(launch=lambda: lambda: "filled", load=lambda: refusing, available=lambda: True)
    monkeypatch.setattr(compiled, "_warmer", warmer)
    assert compiled.wait().state == "ready"
    index = zipf_index(5, 80)
    with caplog.at_level(logging.WARNING, logger=compiled.__name__):
        found = index.search_many(["w0 w1", "w2"], 4)
    assert found == exhaustive(index, ["w0 w1", "w2"], 4)
    settled = compiled.status()
    assert settled.state == "failed" and "No matching definition" in settled.reason
    assert compiled.kernels() is None
    assert len(caplog.records) == 1 and "searches use numpy from now on" in caplog.records[0].getMessage()


def test_without_numba_nothing_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    def launch() -> Callable[[], str]:
        raise AssertionError("no warm-up where numba is absent")

    monkeypatch.setattr(compiled, "_warmer", Warmer(launch=launch, available=lambda: False))
    index = zipf_index(6, 40)
    assert index.search("w0 w1", 3) == exhaustive(index, ["w0 w1"], 3)[0]
    assert compiled.kernels() is None
    # launch would have failed the warm-up with its AssertionError: nothing was started
    assert compiled.wait() == compiled.Readiness("absent", "numba is not installed: searches use numpy")


def test_the_warm_up_starts_once_however_many_searches_ask_at_once(compiled_kernels: Kernels) -> None:
    held = HeldWarmUp(compiled_kernels)
    warmer = held.warmer()
    gate = threading.Barrier(8)

    def ask() -> None:
        gate.wait()
        assert warmer.kernels() is None

    askers = [threading.Thread(target=ask) for _ in range(8)]
    for asker in askers:
        asker.start()
    for asker in askers:
        asker.join()
    assert held.launched == 1
    held.release.set()
    assert warmer.wait().state == "ready" and warmer.kernels() is held.kernels and held.loads == 1


# -- the real command and its subprocess ------------------------------------------------------------


def test_a_failing_command_is_reported_with_its_last_line_of_stderr() -> None:
    finish = compiled.spawn(
        [sys.executable, "-c", "import sys; print('compiling', file=sys.stderr); sys.exit('boom')"]
    )
    with pytest.raises(WarmUpError, match=r"exited with status 1: boom$"):
        finish(NEVER_S)
    with pytest.raises(WarmUpError, match="could not start"):
        compiled.spawn([str(Path(tempfile.gettempdir()) / "no-such-python-here")])


def test_a_command_past_its_time_is_stopped() -> None:
    finish = compiled.spawn([sys.executable, "-c", "import signal; signal.pause()"])  # waits forever
    with pytest.raises(WarmUpError, match="ran past 0 s and was stopped"):
        finish(0.0)
    assert compiled._children[-1].returncode is not None  # killed and reaped


def test_the_command_fills_the_cache_and_stamps_it(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    compiled_kernels: Kernels,
) -> None:
    """In this process the kernels are loaded already, so the command's calls compile nothing; what is
    checked is the stamp, under $NUMBA_CACHE_DIR when it is set, and what the command says."""
    monkeypatch.setenv(warm.NUMBA_CACHE_DIR, str(tmp_path))
    assert warm.stamp_dir() == tmp_path.resolve() and not warm.is_warm()
    assert warm.main([]) == 0
    assert "loaded every kernel" in capsys.readouterr().out
    assert warm.is_warm() and (tmp_path / warm.LOCK).exists()
    assert warm.main([]) == 0  # again (a second command, `make` once more): the stamp suffices
    assert "already holds every search kernel" in capsys.readouterr().out
    monkeypatch.setattr(platform, "node", lambda: "another-machine")
    assert not warm.is_warm()  # a stamp of another machine's cache is not this one's
    monkeypatch.delenv(warm.NUMBA_CACHE_DIR)
    assert warm.stamp_dir() == warm.HERE / "__pycache__"


def test_a_stamp_for_other_sources_does_not_count(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(warm.NUMBA_CACHE_DIR, str(tmp_path))
    warm.write_stamp(1.0)
    assert warm.is_warm()
    for name in warm.SOURCES:  # every source as it is, but for one edited kernel
        (tmp_path / name).write_bytes((warm.HERE / name).read_bytes())
    (tmp_path / "kernels.py").write_text("# an edited kernel\n", encoding="utf-8")
    monkeypatch.setattr(warm, "HERE", tmp_path)
    assert not warm.is_warm()


def test_the_command_without_numba_says_so_and_succeeds(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """It is a step of `make`: an install without numba (searching with numpy) must not fail it."""
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert warm.main([]) == 0
    assert "numba is not installed" in capsys.readouterr().out


@pytest.mark.slow
def test_a_changed_inlined_helper_compiles_its_callers_again(tmp_path: Path) -> None:
    """numba keys a cached kernel on its own file, not on heaps.py whose functions it inlined: with
    the stamp saying heaps.py changed, the command must compile the kernels again, not load them.
    Three real commands on a cache of their own (a fresh compile, a forced load, the changed helper)."""
    env = {**os.environ, warm.NUMBA_CACHE_DIR: str(tmp_path)}

    def command(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "clear_rag.index.warm", *args],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(warm.HERE).parents[1],
        )
        return done.stdout

    compiles = re.compile(r"compiled [1-9][0-9]* kernel version")
    assert compiles.search(command())
    assert "loaded every kernel" in command("--force")  # nothing changed: all from the cache
    stamp = tmp_path / warm.STAMP
    written = json.loads(stamp.read_text(encoding="utf-8"))
    written["fingerprint"]["sources"]["heaps.py"] = "an older heaps.py"
    stamp.write_text(json.dumps(written), encoding="utf-8")
    assert compiles.search(command())
    assert "loaded every kernel" in command("--force")
