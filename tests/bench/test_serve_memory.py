"""``python -m bench.serve --memory``: its size list on the command line and the file it writes, one
point per size (issue 32 asks for serve memory at 100k and 1M)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import serve_memory
from bench.serve import arguments
from clear_rag.report.bench import bench_table, number


def test_memory_takes_a_list_of_sizes_in_the_order_given() -> None:
    args = arguments(
        ["--memory", "--docs", "1000000,100000", "--before", "abc1234", "--before-docs", "100000"]
    )
    assert args.docs == [1_000_000, 100_000]
    assert args.before_docs == [100_000]


def test_one_size_works_as_before_with_or_without_memory() -> None:
    assert arguments(["--docs", "100000"]).docs == [100_000]
    assert arguments(["--memory", "--docs", "20000"]).docs == [20_000]
    assert arguments([]).docs == [100_000]
    assert arguments(["--memory"]).before_docs is None  # the earlier commit, where named, at every size


@pytest.mark.parametrize("value", ["100k", "100000,,1000000", "0", "-5", "100000;1000000", "", "1.5", "7,7"])
def test_a_bad_size_list_is_an_error_naming_the_flag_and_the_value(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        arguments(["--memory", "--docs", value])
    assert exited.value.code == 2
    error = capsys.readouterr().err
    assert "argument --docs" in error and repr(value) in error


def test_several_sizes_need_memory(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        arguments(["--docs", "100000,1000000"])
    error = capsys.readouterr().err
    assert "argument --docs" in error and "'100000,1000000'" in error and "--memory" in error


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--memory", "--docs", "200,400", "--before", "HEAD", "--before-docs", "300"], "'300'"),
        (["--memory", "--docs", "200", "--before-docs", "200"], "--before"),
        (["--docs", "200", "--before", "HEAD", "--before-docs", "200"], "--memory"),
    ],
)
def test_before_docs_must_name_sizes_that_docs_measures_with_an_earlier_commit(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        arguments(argv)
    error = capsys.readouterr().err
    assert "argument --before-docs" in error and said in error


@pytest.mark.slow
def test_the_file_has_one_point_per_size_with_the_earlier_commit_where_asked(tmp_path: Path) -> None:
    """Two tiny sizes, one round, the earlier commit (this one, from git archive) at the first only:
    real servers started and asked, so this compiles and spawns for a minute or so."""
    result = serve_memory.measure_memory([200, 400], 1, "HEAD", [200], tmp_path)
    assert [p["docs"] for p in result["points"]] == [200, 400]
    both, alone = result["points"]
    assert set(both["sides"]) == {"clear-rag", "clear-rag before"} and "before_not_measured" not in both
    assert set(alone["sides"]) == {"clear-rag"} and "HEAD" in alone["before_not_measured"]
    for point in result["points"]:
        for side in point["sides"].values():
            assert side["build"]["chunks"] == point["docs"]
            assert len(side["rounds"]) == 1  # the untimed first round is not kept
            # (the size after the answer is read after the peak, so it may pass it by the server's last pages)
            assert 0 < side["rss_listening_mb"] <= side["peak_rss_mb"]
            parts = side["open_keyword_s"] + side["open_vectors_s"]
            assert side["open_indexes_s"] == pytest.approx(parts, abs=0.002)  # each rounded to 3 places
    assert not list(tmp_path.glob("store-*"))  # each size's stores deleted once measured
    table = bench_table(result, "serve-memory")
    assert f"| clear-rag | {number(400)} |" in table and f"At {number(400)} passages:" in table
    assert table.count("clear-rag before (HEAD)") == 1
