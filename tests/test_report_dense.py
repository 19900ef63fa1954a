"""The dense benchmark (bench/dense.py) and its rendering: what the rows hold and what the page shows."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import numpy as np
import pytest

from clear_rag.report.bench import bench_ratios, bench_table, times
from clear_rag.report.bench.scale import one_query_rates

ONE, MANY = "one query at a time", "batched"


def _row(engine: str, mode: str, threads: int, qps: float, ratio: float) -> dict[str, Any]:
    return {
        "engine": engine,
        "mode": mode,
        "threads": threads,
        "queries_per_s": qps,
        "clear_rag_over_peer": ratio,
        "same_top10_as_reference": 7,
    }


def dense_doc() -> dict[str, Any]:
    """Two sets; the recorded ratios (medians of per-round ratios) differ on purpose from the ratio
    of the two medians of queries/s, which the page must not show in their place."""
    rows = [
        _row("clear-rag", ONE, 1, 100.0, 1.0),
        _row("faiss IndexFlatIP", ONE, 1, 80.0, 1.3),
        _row("numpy", ONE, 1, 50.0, 2.1),
        _row("clear-rag", MANY, 2, 900.0, 1.0),
        _row("faiss IndexFlatIP", MANY, 2, 1000.0, 0.85),
    ]
    base = {"dim": 4, "queries": 7, "rows": rows}
    return {
        "benchmark": "dense",
        "date": "2026-01-02T03:04:05+00:00",
        "k": 10,
        "rounds": 3,
        "threads": "one or two",
        "sets": [
            {
                **base,
                **{"set": "real", "kind": "real", "vectors": 5183, "data": "real: five thousand"},
                "load_average": [7.5, 6.25, 3.0, 8.0, 7.0, 4.0],
            },
            {**base, "set": "10000", "kind": "random", "vectors": 10000, "data": "random: ten thousand"},
        ],
        "targets": ["real 5,183: one query at a time, one thread, >= faiss flat: 1.30x -> met"],
    }


def test_the_table_shows_the_recorded_ratio_of_each_row_per_set() -> None:
    table = bench_table(dense_doc(), "dense")
    assert f"| {ONE} | one | faiss IndexFlatIP | 80.0 | {times(1.3)} | 7 of 7 |" in table
    assert times(100.0 / 80.0) not in table  # not recomputed from the medians
    assert f"| {MANY} | 2 (every core) | faiss IndexFlatIP | 1,000 | {times(0.85)} |" in table
    assert "real vectors: 5,183 of 4 dimensions" in table and "random vectors: 10,000" in table
    assert table.count("| clear-rag | ") == 4 and "| — |" in table  # clear-rag is not its own peer
    assert "Vectors: real: five thousand. Load average while it was measured: 7.50, 6.25, 3.00 at" in table
    assert "- real 5,183: one query at a time" in table
    assert "`results/bench/dense.json`" in table


def test_the_plot_bars_are_the_table_ratios_named_by_set_mode_and_threads() -> None:
    doc = dense_doc()
    found = bench_ratios(doc, "dense")
    assert found is not None
    _, bars, _ = found
    assert len(bars) == 6 and len({label for label, _ in bars}) == 6
    assert "faiss IndexFlatIP (real 5,183, one query at a time, one thread)" in dict(bars)
    in_table = Counter(re.findall(r"\| ([\d,.]+×) \|", bench_table(doc, "dense")))
    assert in_table == Counter(times(value) for _, value in bars)


def test_a_scale_point_reads_either_shape_of_dense_figures() -> None:
    rows = {"rows": dense_doc()["sets"][0]["rows"]}
    assert one_query_rates(rows) == (100.0, 80.0, 1.3)  # one query at a time, one thread
    before = {
        "engines": {
            "clear-rag search": {"queries_per_s": 10.0},
            "faiss IndexFlatIP": {"queries_per_s": 5.0, "clear_rag_over_peer_qps": 2.0},
        }
    }
    assert one_query_rates(before) == (10.0, 5.0, 2.0)


@pytest.fixture
def dense_bench(monkeypatch: pytest.MonkeyPatch) -> Any:
    """bench.dense, with the thread variables it pins on import put back after the test."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        monkeypatch.setenv(var, "1")
    import bench.dense

    monkeypatch.setattr(bench.dense, "STRETCH_S", 0.0)  # one pass per timed stretch
    return bench.dense


def test_numpy_reference_ranks_by_score_then_row(dense_bench: Any) -> None:
    scores = np.array([0.5, 0.9, 0.5, 0.1, 0.9], dtype=np.float32)
    assert dense_bench.numpy_top(scores, 3) == [1, 4, 0]  # the tie at the cut goes by row
    assert dense_bench.numpy_top(scores, 9) == [1, 4, 0, 2, 3]  # k above the size: every row
    rank = dense_bench.id_rank(["e", "d", "c", "b", "a"])  # ids in reverse order
    assert dense_bench.numpy_top(scores, 3, rank) == [4, 1, 2]
    assert dense_bench.id_rank(["a", "b"]) is None


def test_every_mode_and_engine_is_measured_and_exact_ones_agree_with_numpy(dense_bench: Any) -> None:
    vectors = dense_bench.random_set(300, 16, 5)
    found = dense_bench.measure(vectors, cores=2, rounds=2)
    modes = {(r["mode"], r["threads"], r["engine"]) for r in found["rows"]}
    assert modes == {
        (ONE, 1, "clear-rag"),
        (ONE, 1, "faiss IndexFlatIP"),
        (ONE, 1, "numpy"),
        (MANY, 1, "clear-rag"),
        (MANY, 1, "faiss IndexFlatIP"),
        (MANY, 1, "numpy"),
        (ONE, 2, "clear-rag"),
        (ONE, 2, "faiss IndexFlatIP"),
        (MANY, 2, "clear-rag"),
        (MANY, 2, "faiss IndexFlatIP"),
    }
    for row in found["rows"]:
        assert len(row["runs_s"]) == 2
        if row["engine"] in ("clear-rag", "numpy"):
            assert row["same_top10_as_reference"] == 5, row
        if row["engine"] == "clear-rag":
            assert row["clear_rag_over_peer"] == 1.0
    import faiss  # type: ignore[import-untyped, import-not-found, unused-ignore]

    # the batched rows' lowered BLAS threshold is put back, so the next set's single queries get
    # faiss's default (a regression: they once took the lowered one and ran 7x slower)
    assert faiss.cvar.distance_compute_blas_threshold != dense_bench.FAISS_BLAS_FROM
    only = dense_bench.measure(vectors, cores=2, rounds=1, only={(ONE, 1)})
    assert {(r["mode"], r["threads"]) for r in only["rows"]} == {(ONE, 1)}
    assert found["kind"] == "random" and found["vectors"] == 300 and found["queries"] == 5
