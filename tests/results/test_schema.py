"""A suite's result file has one typed shape (clear_rag.results.schema), checked on every read and
write: every committed file holds it, and a file that drifts is refused at the place it drifted."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from clear_rag.errors import InputError
from clear_rag.results.files import read_result, write_result
from clear_rag.results.schema import is_suite_result

RESULTS = Path(__file__).resolve().parents[2] / "results"
SUITES = sorted(
    p for p in RESULTS.glob("*.json") if is_suite_result(json.loads(p.read_text(encoding="utf-8")))
)


def test_the_committed_suite_results_are_all_there() -> None:
    assert {p.stem for p in SUITES} >= {"tech", "scifact", "beir-scifact", "answers", "baseline-fake"}


@pytest.mark.parametrize("path", SUITES, ids=lambda p: p.stem)
def test_every_committed_suite_result_has_the_shape(path: Path) -> None:
    assert read_result(path)["rows"]


def tech() -> dict[str, Any]:
    return copy.deepcopy(json.loads((RESULTS / "tech.json").read_text(encoding="utf-8")))


@pytest.mark.parametrize(
    ("drift", "said"),
    [
        (
            lambda d: d["rows"][3]["questions"][12]["metrics"].update({"ndcg@10": "high"}),
            r"rows\[3\]\.questions\[12\]\.metrics\.ndcg@10",
        ),
        (lambda d: d["rows"][0].update({"ndcg": 0.5}), r"rows\[0\]\.ndcg: Extra inputs are not permitted"),
        (lambda d: d["rows"][1].pop("config_hash"), r"rows\[1\]\.config_hash: Field required"),
        (
            lambda d: d["golden"].update({"questions": "70"}),
            r"golden\.questions: Input should be a valid integer",
        ),
        (
            lambda d: d["rows"][2]["comparisons"]["baseline"]["ndcg@10"].pop("ci_low"),
            r"rows\[2\]\.comparisons\.baseline\.ndcg@10\.ci_low",
        ),
    ],
    ids=[
        "a metric that is not a number",
        "a key no writer writes",
        "a missing key",
        "a count as text",
        "half an interval",
    ],
)
def test_a_file_that_drifts_is_refused_where_it_drifts(tmp_path: Path, drift: Any, said: str) -> None:
    document = tech()
    drift(document)
    path = tmp_path / "tech.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(
        InputError, match=rf"tech\.json: is not in the shape of a suite's result file: {said}"
    ):
        read_result(path)


def test_a_writer_that_drifts_fails_and_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "tech.json"
    write_result(path, tech())
    before = path.read_bytes()
    drifted = tech()
    drifted["rows"][0]["metrics"]["ndcg@10"] = None
    with pytest.raises(InputError, match=r"rows\[0\]\.metrics\.ndcg@10"):
        write_result(path, drifted)
    assert path.read_bytes() == before


KINDS = [
    *sorted(
        p for kind in ("check", "training", "calibration", "bench") for p in (RESULTS / kind).glob("*.json")
    ),
    RESULTS / "parse.json",
]


def test_every_kind_with_a_shape_is_there() -> None:
    from clear_rag.results.records import AgreementResult, BenchResult, Calibration, ParseResult, TrainingRun
    from clear_rag.results.schema import shape_of

    found = {shape_of(json.loads(p.read_text(encoding="utf-8"))) for p in KINDS}
    assert found == {AgreementResult, TrainingRun, Calibration, BenchResult, ParseResult}
    every = sorted(RESULTS.rglob("*.json"))
    unshaped = [
        p.relative_to(RESULTS).as_posix() for p in every if shape_of(json.loads(p.read_text("utf-8"))) is None
    ]
    assert unshaped and all(name.startswith("generations/") for name in unshaped)  # a cache, not a result


@pytest.mark.parametrize("path", KINDS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_committed_check_training_calibration_bench_and_parse_file_has_its_shape(path: Path) -> None:
    from clear_rag.results.files import read_document

    assert read_document(path)


def test_an_agreement_file_that_drifts_is_refused_where_it_drifts(tmp_path: Path) -> None:
    from clear_rag.results.files import read_document

    document = json.loads((RESULTS / "check" / "agreement.json").read_text(encoding="utf-8"))
    document["suites"][1]["agreement"]["kendall_tau"] = "0.5"
    path = tmp_path / "agreement.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(InputError, match=r"agreement file: suites\[1\]\.agreement\.kendall_tau"):
        read_document(path)


def test_a_training_manifest_missing_a_field_is_not_written(tmp_path: Path) -> None:
    from clear_rag.train.manifest import MANIFEST, write_manifest

    manifest = json.loads((RESULTS / "training" / "scifact-minilm-l6.json").read_text(encoding="utf-8"))
    del manifest["cache_key"]
    with pytest.raises(InputError, match=r"training run's manifest: cache_key: Field required"):
        write_manifest(tmp_path, manifest)
    assert not (tmp_path / MANIFEST).exists()


@pytest.mark.parametrize(
    ("path", "drift", "said"),
    [
        ("bench/serve.json", lambda d: d.pop("command"), r"benchmark's file: command: Field required"),
        ("bench/serve.json", lambda d: d.update(cpus="two"), r"benchmark's file: cpus: Input should be"),
        (
            "parse.json",
            lambda d: d["backends"]["layout"]["overall"].update(words_f1="0.99"),
            r"parse scores: backends\.layout\.overall",
        ),
        (
            "parse.json",
            lambda d: d["backends"]["flat"]["documents"]["one-column/aapl.pdf"].update(typo=1),
            r"parse scores: backends\.flat\.documents\.one-column/aapl\.pdf\.typo: Extra inputs",
        ),
    ],
)
def test_a_bench_or_parse_file_that_drifts_is_refused_where_it_drifts(
    tmp_path: Path, path: str, drift: Any, said: str
) -> None:
    from clear_rag.results.files import read_document

    document = json.loads((RESULTS / path).read_text(encoding="utf-8"))
    drift(document)
    target = tmp_path / Path(path).name
    target.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(InputError, match=said):
        read_document(target)
    with pytest.raises(InputError, match=said):
        write_result(tmp_path / "again.json", document)
    assert not (tmp_path / "again.json").exists()


def test_a_suite_file_names_the_rows_no_command_made() -> None:
    from clear_rag.results.schema import check_document

    document = json.loads((RESULTS / "scifact.json").read_text(encoding="utf-8"))
    check_document(document, "scifact.json")
    del document["command"]  # the rows the suite's own command made now have none
    with pytest.raises(InputError, match="records no command, and no row command made the rows dense only"):
        check_document(document, "scifact.json")
