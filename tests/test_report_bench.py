"""The performance and reproduce pages' renderings: properties of what they print, not today's numbers."""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import typer

from clear_rag.cli.app import app
from clear_rag.errors import InputError
from clear_rag.report.bench import bench_ratios, bench_table, number, retrieval_ratios, times
from clear_rag.report.bench.retrieval import ONE_AT_A_TIME
from clear_rag.report.commands import command_for, reproduce_table

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"
BENCH_FILES = sorted((RESULTS / "bench").glob("*.json"))
RESULT_FILES = sorted(RESULTS.rglob("*.json"))


def _load(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def _engine(qps: float, build_s: float, ours_qps: float) -> dict[str, Any]:
    return {
        "build_s": build_s,
        "build_runs_s": [build_s],
        "rss_peak_mb": 10.0,
        "queries_per_s": qps,
        "queries_timed": 3,
        "clear_rag_queries_per_s_same_queries": ours_qps,
        "agreement": {"overlap_at_10": 1.0},
    }


def retrieval_doc(peer_query_s: float = 0.004, ours_build_s: float = 1.5) -> dict[str, Any]:
    """Three queries; clear-rag answers them in 0.003 s (1000 q/s) and builds in ``ours_build_s``;
    the peer answers them in ``peer_query_s`` and builds in 3 s."""
    ours_qps = 3 / 0.003
    return {
        "benchmark": "retrieval",
        "date": "2026-01-02T03:04:05+00:00",
        "k": 10,
        "k1": 1.2,
        "b": 0.75,
        "repeat": 1,
        "keyword": {
            "toy": {
                "corpus": "three documents",
                "documents": 3,
                "queries": 3,
                "engines": {
                    "clear-rag": _engine(ours_qps, ours_build_s, ours_qps),
                    "bm25s-numba": _engine(3 / peer_query_s, 3.0, ours_qps),
                },
            }
        },
    }


def _ratio(doc: dict[str, Any], peer: str, measure: str) -> float:
    return next(r.value for r in retrieval_ratios(doc) if r.peer == peer and r.measure == measure)


def with_one_at_a_time(doc: dict[str, Any], ours_one_s: float, peer_one_s: float) -> dict[str, Any]:
    """``doc`` as bench/retrieval.py now writes it: a second peer without a batched API (tantivy,
    whose batched figure is its loop), and each engine's one-query-at-a-time loop over the three
    queries: clear-rag's in ``ours_one_s``, bm25s-numba's in ``peer_one_s``, tantivy's in 0.006 s."""
    suite = doc["keyword"]["toy"]
    engines = suite["engines"]
    engines["tantivy"] = {**engines["bm25s-numba"], "queries_per_s": 3 / 0.006}
    for name, row in engines.items():
        row["batched_api"] = name != "tantivy"
    ours_qps = 3 / ours_one_s

    def one(qps: float) -> dict[str, Any]:
        return {
            "call": "one call",
            "queries_per_s": qps,
            "queries_timed": 3,
            "clear_rag_queries_per_s_same_queries": ours_qps,
            "cpu_clear_rag_over_peer_qps": ours_qps / qps,
            "agreement": {"overlap_at_10": 1.0},
        }

    suite["data"] = "synthetic"
    suite["one_at_a_time"] = {
        "clear-rag": one(ours_qps),
        "bm25s-numba": one(3 / peer_one_s),
        "tantivy": one(3 / 0.006),
    }
    return doc


def test_one_at_a_time_rows_are_their_own_ratios_and_a_loop_is_named_as_one() -> None:
    doc = with_one_at_a_time(retrieval_doc(), ours_one_s=0.004, peer_one_s=0.010)
    ratios = {(r.peer, r.measure): r.value for r in retrieval_ratios(doc)}
    assert ratios["bm25s-numba", ONE_AT_A_TIME] == pytest.approx((3 / 0.004) / (3 / 0.010))
    assert ratios["tantivy", ONE_AT_A_TIME] == pytest.approx((3 / 0.004) / (3 / 0.006))
    # Batched: clear-rag's one call against bm25s's one call, and against tantivy's loop, said so.
    assert ratios["bm25s-numba", "queries/s, batched"] == pytest.approx((3 / 0.003) / (3 / 0.004))
    assert ratios["tantivy", "queries/s, clear-rag batched, peer looped"] == pytest.approx(
        (3 / 0.003) / (3 / 0.006)
    )
    table = bench_table(doc, "toy")
    batched, one = table.split("**One query at a time")
    assert "| tantivy | toy: 3 synthetic documents | a loop: no batched API |" in batched
    assert f"| {times((3 / 0.004) / (3 / 0.010))} (CPU time " in one
    assert "one query at a time" not in batched.lower()  # the batched table never says it


def test_a_slower_one_at_a_time_peer_moves_only_its_one_at_a_time_ratio() -> None:
    base = with_one_at_a_time(retrieval_doc(), ours_one_s=0.004, peer_one_s=0.010)
    slower = with_one_at_a_time(retrieval_doc(), ours_one_s=0.004, peer_one_s=0.020)
    before = {(r.peer, r.measure): r.value for r in retrieval_ratios(base)}
    after = {(r.peer, r.measure): r.value for r in retrieval_ratios(slower)}
    assert after.pop(("bm25s-numba", ONE_AT_A_TIME)) == pytest.approx(
        2 * before.pop(("bm25s-numba", ONE_AT_A_TIME))
    )
    assert after == before


# -- bench_table --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", BENCH_FILES, ids=lambda p: p.stem)
def test_every_committed_benchmark_renders_with_its_source_and_date(path: Path) -> None:
    doc = _load(path)
    table = bench_table(doc, path.stem)
    assert f"from `results/bench/{path.stem}.json`" in table
    assert doc["date"][:10] in table
    assert table.startswith(("|", "**")) and table.endswith(".\n")


def test_there_are_committed_benchmarks_to_render() -> None:
    """Guard against the test above passing because it reads nothing."""
    assert {p.stem for p in BENCH_FILES} >= {"retrieval", "growth", "ingest", "serve", "make-run"}


def test_a_ratio_is_computed_from_the_two_figures_it_compares() -> None:
    doc = retrieval_doc()
    assert _ratio(doc, "bm25s-numba", "queries/s") == pytest.approx((3 / 0.003) / (3 / 0.004))
    assert _ratio(doc, "bm25s-numba", "build") == pytest.approx(3.0 / 1.5)
    table = bench_table(doc, "toy")
    assert f"| {times(4 / 3)} | {times(2.0)} |" in table


def test_doubling_a_time_moves_the_ratio_by_half() -> None:
    slower_peer = retrieval_doc(peer_query_s=0.008)  # the peer's queries take twice as long
    slower_ours = retrieval_doc(ours_build_s=3.0)  # clear-rag's build takes twice as long
    base = retrieval_doc()
    assert _ratio(slower_peer, "bm25s-numba", "queries/s") == pytest.approx(
        2 * _ratio(base, "bm25s-numba", "queries/s")
    )
    assert _ratio(slower_ours, "bm25s-numba", "build") == pytest.approx(
        _ratio(base, "bm25s-numba", "build") / 2
    )
    assert f"| {times((3 / 0.003) / (3 / 0.008))} |" in bench_table(slower_peer, "toy")
    assert f"| {times(3.0 / 3.0)} |" in bench_table(slower_ours, "toy")


@pytest.mark.parametrize(
    ("doc", "name"),
    [
        (retrieval_doc(), "toy"),
        (with_one_at_a_time(retrieval_doc(), ours_one_s=0.004, peer_one_s=0.010), "toy"),
        (_load(RESULTS / "bench" / "retrieval.json"), "retrieval"),
    ],
)
def test_the_plot_and_the_table_show_the_same_ratios(doc: dict[str, Any], name: str) -> None:
    found = bench_ratios(doc, name)
    assert found is not None
    _, bars, _ = found
    assert [value for _, value in bars] == [r.value for r in retrieval_ratios(doc, name)]
    in_table = Counter(re.findall(r"\| ([\d,.]+×) ", bench_table(doc, name)))
    assert in_table == Counter(times(value) for _, value in bars)
    assert len({label for label, _ in bars}) == len(bars)


def test_recomputed_ratios_equal_the_ones_the_benchmark_wrote() -> None:
    """The direction of each ratio is the script's own."""
    doc = _load(RESULTS / "bench" / "retrieval.json")
    for r in retrieval_ratios(doc):
        suite = doc["keyword"][r.section]
        row = suite["one_at_a_time" if r.measure == ONE_AT_A_TIME else "engines"][r.peer]
        stored = (
            row["clear_rag_over_peer_qps"]
            if r.measure.startswith("queries/s")
            else 1 / row["clear_rag_over_peer_build"]
        )
        assert r.value == pytest.approx(stored)


@pytest.mark.parametrize("path", BENCH_FILES, ids=lambda p: p.stem)
def test_only_a_benchmark_with_peers_has_ratios(path: Path) -> None:
    found = bench_ratios(_load(path), path.stem)
    assert (found is not None) == (path.stem in ("retrieval", "ann", "dense"))


def test_growth_shows_the_slope_the_file_records() -> None:
    doc = _load(RESULTS / "bench" / "growth.json")
    table = bench_table(doc, "growth")
    for series in ("document_size", "corpus_size"):
        assert f"log-log axes: {number(doc[series]['slope'])} " in table
        assert table.count("\n| ") >= len(doc[series]["points"])


def test_an_unknown_benchmark_renders_its_top_level_fields() -> None:
    doc = {
        "benchmark": "novel",
        "date": "2026-01-02T00:00:00+00:00",
        "widgets_per_s": 12.345,
        "note": "n",
        "x": {},
    }
    table = bench_table(doc, "novel")
    assert "| widgets_per_s | 12.3 |" in table and "| note | n |" in table and "| x |" not in table
    assert "2026-01-02" in table and "`results/bench/novel.json`" in table
    assert bench_ratios(doc, "novel") is None


def test_an_empty_benchmark_file_still_renders() -> None:
    assert bench_table({}, "empty").endswith("from `results/bench/empty.json`.\n")


def test_a_known_benchmark_missing_a_figure_is_named_not_a_traceback() -> None:
    doc = retrieval_doc()
    del doc["keyword"]["toy"]["engines"]["bm25s-numba"]["build_s"]
    with pytest.raises(InputError, match=re.escape("results/bench/toy.json")):
        bench_table(doc, "toy")


def test_numbers_round_one_way() -> None:
    assert [number(x) for x in (6938.0009, 98.052, 0.75979, 0.0465, 99.96, 1.0, 0.0)] == [
        "6,938",
        "98.1",
        "0.760",
        "0.0465",
        "100",
        "1.00",
        "0",
    ]
    assert number(100000) == "100,000"


# -- commands -----------------------------------------------------------------------------------


def test_a_file_is_named_by_the_command_it_records() -> None:
    assert command_for(Path("anything.json"), {"command": " make it "}, root=ROOT) == "make it"
    suite = {"command": "clear-rag ablate tech --save-results", "suite": "tech", "rows": [{"name": "a"}]}
    assert command_for(RESULTS / "tech.json", suite, root=ROOT) == "clear-rag ablate tech --save-results"


def test_every_committed_result_file_has_a_command() -> None:
    commands = {p: command_for(p, _load(p), root=ROOT) for p in RESULT_FILES}
    assert len(commands) >= 13  # six suite files, two generation caches, five benchmarks
    assert commands[RESULTS / "baseline-fake.json"].endswith("--bless")
    assert "--chat smollm2" in commands[RESULTS / "tech-expansion.json"]


@pytest.mark.parametrize("path", RESULT_FILES, ids=lambda p: p.relative_to(RESULTS).as_posix())
def test_each_command_parses(path: Path) -> None:
    for part in command_for(path, _load(path), root=ROOT).split(" && "):
        _parses(shlex.split(part))


def _parses(args: list[str]) -> None:
    if args[0] == "clear-rag":
        group = typer.main.get_command(app)
        parent = group.context_class(group, info_name="clear-rag")
        command = group.get_command(parent, args[1])  # type: ignore[attr-defined]  # a Group
        assert command is not None, args
        # Parses and converts every argument without running the command: an unknown option, a
        # missing argument or a value of the wrong type raises here.
        command.make_context(args[1], args[2:], parent=parent)
    else:
        assert args[:2] == ["python", "-m"], args
        assert importlib.util.find_spec(args[2]) is not None, args[2]


def test_rows_merged_by_their_own_command_follow_the_suite_command_in_row_order() -> None:
    """Rows `clear-rag beir --save-results` merged come after the suite's command, in the order the
    rows stand, and the re-derivation last; a file made of merged rows alone needs no suite command."""
    first = "clear-rag beir ../shared/data/beir-scifact --embedder hash --name first --save-results"
    second = "clear-rag beir ../shared/data/beir-scifact --name second --save-results"
    doc: dict[str, Any] = {
        "suite": "beir-scifact",
        "command": "clear-rag ablate beir-scifact --save-results",
        "rows": [{"name": "dense"}, {"name": "second"}, {"name": "first"}],
        "row_commands": {"first": first, "second": second},
        "rederived_by": "clear-rag ablate beir-scifact --rederive --save-results",
    }
    parts = command_for(RESULTS / "beir-scifact.json", doc, root=ROOT).split(" && ")
    assert parts == [doc["command"], second, first, doc["rederived_by"]]
    alone = {"suite": "beir-toy", "rows": doc["rows"][1:], "row_commands": doc["row_commands"]}
    assert command_for(RESULTS / "beir-toy.json", alone, root=ROOT) == f"{second} && {first}"


@pytest.mark.parametrize(
    ("name", "doc", "why"),
    [
        ("mystery.json", {"anything": 1}, "records no command"),
        ("bench/old.json", {"benchmark": "old", "command": " "}, "records no command"),
        (
            "tech.json",
            {"suite": "tech", "rows": [{"name": "a"}, {"name": "b"}], "row_commands": {"a": "x"}},
            "records no command for the rows no merged row command made (b)",
        ),
        ("generations/gone.json", {"generations": {}}, "results/gone.json is not there"),
    ],
)
def test_a_file_that_records_no_command_is_named(name: str, doc: dict[str, Any], why: str) -> None:
    with pytest.raises(InputError, match=re.escape(why)) as raised:
        command_for(RESULTS / name, doc, root=ROOT)
    assert f"results/{name}" in str(raised.value)


def test_generations_take_the_command_of_their_suite_without_its_rederivation() -> None:
    path = RESULTS / "generations" / "scifact-expansion.json"
    command = command_for(path, _load(path), root=ROOT)
    assert command == _load(RESULTS / "scifact-expansion.json")["command"]


# -- reproduce_table ----------------------------------------------------------------------------


def test_the_reproduce_table_has_one_line_per_file_suites_first() -> None:
    table = reproduce_table(RESULTS, root=ROOT)
    files = re.findall(r"^\| `(results/[^`]+)` \|", table, re.M)
    assert sorted(files) == sorted(p.relative_to(ROOT).as_posix() for p in RESULT_FILES)
    kinds = [
        2 if "/bench/" in f else 1 if "/generations/" in f else 3 if f.count("/") > 1 else 0 for f in files
    ]
    assert kinds == sorted(kinds)
    assert "`clear-rag report`" in table
    for path in RESULT_FILES:
        line = next(
            row for row in table.splitlines() if row.startswith(f"| `{path.relative_to(ROOT).as_posix()}`")
        )
        assert f"`{command_for(path, _load(path), root=ROOT)}` |" in line


def test_an_empty_results_folder_gives_the_header_and_the_note(tmp_path: Path) -> None:
    table = reproduce_table(tmp_path, root=tmp_path)
    assert [line for line in table.splitlines() if line.startswith("| ")] == [
        "| file | what it holds | models | date | command |"
    ]
    assert "`clear-rag report`" in table


def _scale_doc() -> dict[str, Any]:
    """A chunks series as bench/growth.py writes it, with figures made up for the test."""

    def point(chunks: int, speed: float) -> dict[str, Any]:
        engines = {
            name: {
                "build_s": chunks / rate,
                "queries_per_s": speed * factor,
                "clear_rag_over_peer_qps": 1 / factor,
                "rss_peak_mb": chunks / rate * 100,
            }
            for name, rate, factor in (("clear-rag", 20_000, 1.0), ("bm25s-numba", 5_000, 0.5))
        }
        dense = {
            "clear-rag search": {"queries_per_s": 1e6 / chunks},
            "faiss IndexFlatIP": {"queries_per_s": 2e6 / chunks, "clear_rag_over_peer_qps": 0.5},
        }
        ingest = {"chunks": chunks + 7, "ingest_s": 1.0, "index_s": 0.5, "total_s": 1.5, "rss_growth_mb": 9.0}
        return {
            "chunks": chunks,
            "keyword": {"engines": engines},
            "dense": {"vectors": chunks, "dim": 4, "engines": dense},
            **({"ingest": ingest} if chunks == 10_000 else {}),
        }

    return {
        "benchmark": "scale",
        "engines": ["clear-rag", "bm25s-numba"],
        "ingest": "the real path",
        "points": [point(10_000, 4_000.0), point(100_000, 1_000.0)],
    }


def test_the_scale_table_shows_each_ratio_the_file_records() -> None:
    table = bench_table(_scale_doc(), "scale")
    assert "| 10,000 | 0.500 | 2.00 | 4,000 | 2,000 | 2.00× |" in table
    assert "| 100,000 | 1.60 | 10.0 | 20.0 | 0.500× |" in table  # 100,000 x 4 dims x 4 bytes = 1.6 MB
    assert "| 100,000 | 500 | 2,000 |" in table  # each engine's build peak, MB
    assert "| 10,007 | 1.00 | 0.500 | 1.50 | 9.00 |" in table  # ingest only where it was measured


def test_the_scale_curves_plot_every_engine_at_every_point() -> None:
    from clear_rag.report.bench import scale_curves

    found = scale_curves(_scale_doc(), "scale")
    assert found is not None
    _, panels, _ = found
    for title, _, lines in panels:
        assert {len(points) for name, points in lines if name != "clear-rag ingest"} == {2}, title
    assert dict(panels[0][2])["clear-rag ingest"] == [(10_007.0, 1.5)]  # seconds, where it ran
    assert dict(panels[-1][2])["clear-rag ingest"] == [(10_007.0, 9.0)]  # MB
    build = dict(panels[0][2])
    assert build["bm25s-numba"] == [(10_000.0, 2.0), (100_000.0, 20.0)]
    assert scale_curves({"benchmark": "growth"}, "growth") is None


def test_a_curve_on_log_axes_rejects_a_zero() -> None:
    from clear_rag.report.logplots import curves_svg

    with pytest.raises(ValueError, match="positive finite"):
        curves_svg("t", [("p", "y", [("a", [(1.0, 0.0)])])], "x", "source")
    assert curves_svg("t", [("p", "y", [("a", [(1.0, 2.0), (10.0, 3.0)])])], "x", "source").startswith(
        b"<?xml"
    )


def test_the_rank_flow_ratio_pairs_rounds_and_skips_what_was_not_measured() -> None:
    from bench.rankflow import _ratio

    pairs = [(100.0, 400.0), (120.0, 300.0), (90.0, 900.0)]
    once = _ratio(pairs)
    assert once == 0.25  # the median of 0.25, 0.4, 0.1
    doubled = [(a, 2 * b) for a, b in pairs]
    assert _ratio(doubled) == pytest.approx(once / 2)
    # a round where either side has no figure, or the peer's is 0 (no long task), says nothing
    assert _ratio([(None, 5.0), (3.0, 0.0), (2.0, 4.0)]) == 0.5
    assert _ratio([(None, None)]) is None


def test_a_benchmark_is_written_by_the_one_writer_with_where_it_ran_and_the_versions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bench.common
    from clear_rag.results.files import dumps

    monkeypatch.setattr(bench.common, "ROOT", tmp_path)
    path = bench.common.write_result("toy", {"benchmark": "toy", "elapsed_s": 1.5})
    written = json.loads(path.read_text(encoding="utf-8"))
    assert path.read_text(encoding="utf-8") == dumps(written)  # the result files' one form
    assert {"date", "commit", "python", "machine", "cpus"} <= set(written)
    assert {"python", "numpy"} <= set(written["versions"])
    own = bench.common.write_result("toy", {"benchmark": "toy", "versions": {"faiss": "1.9"}})
    assert json.loads(own.read_text(encoding="utf-8"))["versions"] == {"faiss": "1.9"}  # its own kept
    assert "bench.toy" not in written["command"]  # pytest ran it, and the file says so
    monkeypatch.setattr("sys.argv", [str(tmp_path / "bench" / "toy.py"), "--rounds", "3", "--note", "a b"])
    ran = json.loads(bench.common.write_result("toy", {"benchmark": "toy"}).read_text(encoding="utf-8"))
    assert ran["command"] == "python -m bench.toy --rounds 3 --note 'a b'"


def serve_doc(*, against: bool) -> dict[str, Any]:
    """One store and config of bench/serve.py's file; with ``against``, the context stage's time over
    the retrieval stages' (issue 32): 0.5 ms over 4 ms, a ratio of 0.125 at the median."""
    spread = {"median": 10.0, "p90": 12.0}
    row: dict[str, Any] = {
        "questions": 5,
        "cold_first_stage_ms": 100.0,
        "client_ms": {k: spread for k in ("first_stage_ms", "first_token_ms", "done_ms")},
        "server_ms": {k: spread for k in ("first_stage_ms", "first_token_ms", "total_ms")},
        "stage_elapsed_ms": {"keyword": {"median": 1.0, "p90": 2.0}, "context": {"median": 0.5, "p90": 1.0}},
    }
    if against:
        row["context_vs_retrieval"] = {
            "retrieval_ms": {"median": 4.0, "p90": 6.0},
            "context_ms": {"median": 0.5, "p90": 1.0},
            "ratio": {"median": 0.125, "p90": 0.2},
        }
    return {
        "benchmark": "serve",
        "date": "2026-01-02T03:04:05+00:00",
        "stores": {"toy": {"corpus": "three documents", "chunks": 3, "configs": {"hybrid": row}}},
    }


def test_the_live_page_shows_the_context_stage_against_retrieval_where_measured() -> None:
    table = bench_table(serve_doc(against=True), "serve")
    assert "The context stage against retrieval" in table
    ratio = {"median": 0.125, "p90": 0.2}
    assert f"| toy | hybrid | {number(4.0)} / {number(6.0)} | {number(0.5)} / {number(1.0)} | " in table
    assert f"| {number(ratio['median'])} / {number(ratio['p90'])} |" in table
    # a file written before the benchmark measured it shows no such table, rather than an empty one
    assert "The context stage against retrieval" not in bench_table(serve_doc(against=False), "serve")


def serve_memory_side(chunks: int, peak: float, open_s: float = 0.5) -> dict[str, Any]:
    """One side's medians at one size: listening at 200 MB, peaking at ``peak``, 300 MB after the answer."""
    return {
        "build": {"corpus": f"{chunks} passages", "chunks": chunks},
        "rss_listening_mb": 200.0,
        "peak_rss_mb": peak,
        "rss_after_answer_mb": 300.0,
        "first_answer_s": 0.5,
        "open_indexes_s": open_s,
    }


def serve_memory_doc(before_peak_mb: float | None) -> dict[str, Any]:
    """A server peaking at 400 MB over three chunks, and an earlier commit's peaking at ``before_peak_mb``."""
    sides = {"clear-rag": serve_memory_side(3, 400.0)}
    if before_peak_mb is not None:
        sides["clear-rag before"] = serve_memory_side(3, before_peak_mb, open_s=0.75)
    return {
        "benchmark": "serve-memory",
        "date": "2026-01-02T03:04:05+00:00",
        "rounds": 3,
        "server": "a fake",
        **({"before": "abc1234"} if before_peak_mb is not None else {}),
        "points": [{"docs": 3, "sides": sides}],
    }


def test_a_servers_peak_is_set_against_the_current_codes_peak() -> None:
    table = bench_table(serve_memory_doc(1000.0), "serve-memory")
    assert f"| clear-rag before (abc1234) | 3 | {number(200.0)} | {number(1000.0)} |" in table
    assert times(1000.0 / 400.0) in table
    assert times(2000.0 / 400.0) in bench_table(serve_memory_doc(2000.0), "serve-memory")
    # the current code alone: its row, no ratio and no earlier commit named
    alone = bench_table(serve_memory_doc(None), "serve-memory")
    assert f"| clear-rag | 3 | {number(200.0)} | {number(400.0)} | {number(300.0)} |" in alone
    assert "before" not in alone and "×" not in alone


def test_the_opening_of_the_indexes_is_a_column() -> None:
    table = bench_table(serve_memory_doc(1000.0), "serve-memory")
    assert "| open indexes s |" in table
    assert f"| {number(0.5)} | {number(0.5)} |  |" in table
    assert f"| {number(0.5)} | {number(0.75)} | {times(1000.0 / 400.0)} |" in table


def test_each_size_sets_the_earlier_peak_against_the_current_peak_at_that_size() -> None:
    doc = serve_memory_doc(1000.0)
    big = {"clear-rag": serve_memory_side(30, 800.0), "clear-rag before": serve_memory_side(30, 1200.0)}
    doc["points"].append({"docs": 30, "sides": big})
    table = bench_table(doc, "serve-memory")
    assert f"| clear-rag | 30 | {number(200.0)} | {number(800.0)} |" in table
    assert times(1200.0 / 800.0) in table and times(1000.0 / 400.0) in table
    assert times(1200.0 / 400.0) not in table  # never across sizes
    assert "3 passages; 30 passages" in table


def test_a_size_without_the_earlier_commit_says_so_under_the_table() -> None:
    doc = serve_memory_doc(1000.0)
    reason = "abc1234 not measured at this size (--before-docs 3): the current code alone"
    alone = {
        "docs": 3000,
        "before_not_measured": reason,
        "sides": {"clear-rag": serve_memory_side(3000, 900.0)},
    }
    doc["points"].append(alone)
    table = bench_table(doc, "serve-memory")
    assert f"| clear-rag | 3,000 | {number(200.0)} | {number(900.0)} |" in table
    assert f"At 3,000 passages: {reason}." in table
    assert table.count("clear-rag before") == 1  # the one size that measured it
    # no size without it: no such sentence
    assert "not measured" not in bench_table(serve_memory_doc(1000.0), "serve-memory")


def test_a_serve_memory_file_without_points_is_named_not_a_traceback() -> None:
    doc = serve_memory_doc(1000.0)
    doc["sides"] = doc.pop("points")[0]["sides"]  # the one-size shape written before sizes were lists
    with pytest.raises(InputError, match="serve-memory"):
        bench_table(doc, "serve-memory")


def index_size_doc(asked: bool) -> dict[str, Any]:
    def engine(size: int, load_s: float, query_s: float) -> dict[str, Any]:
        timed = {"query_after_load_s": query_s} if asked else {}
        return {"bytes": size, "bytes_per_passage": size / 1000, "load_s": load_s, **timed}

    engines = {"clear-rag": engine(300_000, 0.05, 0.2), "bm25s": engine(600_000, 0.25, 0.01)}
    point = {"passages": 1000, "engines": engines}
    return {"benchmark": "index-size", "data": "synthetic", "points": [point]}


def test_the_first_query_after_a_load_is_shown_where_the_file_times_it() -> None:
    table = bench_table(index_size_doc(True), "index-size")
    assert "first query after load s" in table
    ours = f"| 1,000 | clear-rag | {number(300.0)} | {number(0.3)} | {number(0.05)} | {number(0.2)} |"
    assert ours in table
    assert f"| {number(0.25)} | {number(0.01)} | {times(2.0)} |" in table
    # a file written before the query was timed renders as it did, without the column
    assert "first query" not in bench_table(index_size_doc(False), "index-size")
