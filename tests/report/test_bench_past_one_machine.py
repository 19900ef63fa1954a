"""The executor benchmark's table and the growth series read against one machine's memory: every figure
derived from the file's own, written here as the formula."""

from __future__ import annotations

from typing import Any

import pytest

from clear_rag.errors import InputError
from clear_rag.report.bench import bench_table, number, times


def _executor_doc() -> dict[str, Any]:
    wall = {"in_process": [10.0, 12.0, 11.0], "multiprocess": [15.0, 14.0, 16.0], "dask_2": [9.0, 8.0, 10.0]}
    return {
        "benchmark": "executor",
        "what": "every evaluation partition of toy (4, embedder hash)",
        "partitions": 4,
        "max_concurrent": 2,
        "repeat": 3,
        "in_process_median_s": 11.0,
        "multiprocess_median_s": 15.0,
        "dask_2_median_s": 9.0,
        "speedup_multiprocess": 11.0 / 15.0,
        "speedup_dask_2": 11.0 / 9.0,
        "note": "rounds rotate",
        "wall_s": wall,
        "step_seconds_sum": {"in_process": [5.0, 6.0, 7.0]},
        "cluster_start_s": {"dask_2": [1.5, 2.5, 1.0]},
        "contenders": {"dask_2": "a scheduler and 2 workers"},
    }


def _row(table: str, contender: str) -> list[str]:
    line = next(line for line in table.splitlines() if line.startswith(f"| `{contender}` |"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_each_contender_shows_its_median_its_rounds_and_the_in_process_time_over_it() -> None:
    table = bench_table(_executor_doc(), "executor")
    assert _row(table, "dask_2") == ["`dask_2`", "9.00", "9.00, 8.00, 10.0", times(11.0 / 9.0), "1.50", ""]
    assert _row(table, "multiprocess")[3] == times(11.0 / 15.0)
    assert _row(table, "in_process")[3:] == ["", "", number(6.0)]  # no ratio to itself, no cluster
    assert "- `dask_2`: a scheduler and 2 workers" in table
    assert "from `results/bench/executor.json`" in table


def test_an_executor_file_from_before_dask_renders_without_cluster_starts() -> None:
    doc = _executor_doc()
    del doc["cluster_start_s"], doc["contenders"]
    assert _row(bench_table(doc, "executor"), "dask_2")[4] == ""


def _growth_doc(rss: list[float], chunks: list[int]) -> dict[str, Any]:
    points = [{"rss_growth_mb": mb, "runs": [{"chunks": n}]} for mb, n in zip(rss, chunks, strict=True)]
    return {"benchmark": "growth", "corpus_size": {"points": points, "slope": 1.0}}


def test_the_memory_view_projects_the_marginal_rate_of_the_two_largest_sizes() -> None:
    table = bench_table(_growth_doc([50.0, 90.0, 290.0], [1000, 20000, 80000]), "growth", "memory")
    marginal = (290.0 - 90.0) * 1e6 / (80000 - 20000)  # bytes per chunk, the fixed cost left out
    assert f"{number(marginal / 1e3)} KB per chunk" in table
    for gb in (16, 64, 256):
        assert f"{gb} GB: {number(float(f'{gb * 1e9 / marginal:.3g}'))}" in table
    assert f"| 20,000 | 90.0 | {number(90.0 * 1e3 / 20000)} |" in table  # KB per chunk at each size


def test_the_memory_view_of_a_series_too_short_for_a_rate_says_nothing_of_it() -> None:
    assert "KB per chunk" not in bench_table(_growth_doc([50.0], [1000]), "growth", "memory")


def test_an_unknown_view_is_named_with_the_ones_there_are() -> None:
    with pytest.raises(InputError, match=r"results/bench/growth\.json.*'speed'.*memory"):
        bench_table(_growth_doc([50.0, 90.0], [1000, 2000]), "growth", "speed")
