"""Suites and golden sets are read strictly: an unknown key at any level is an error with the closest
known key, a value of the wrong kind is named, and a missing corpus or golden file is one line
before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from clear_rag.errors import ClearRagError, ConfigError
from clear_rag.eval.golden import load_golden, read_golden
from clear_rag.eval.suite import load_suite
from tests.toy import CORPUS, GOLDEN, suite_yaml

TEXTS = {f"docs/{name}": text for name, text in CORPUS.items() if name.endswith((".md", ".txt"))}


@pytest.fixture
def project(tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "golden.yaml").write_text(GOLDEN, encoding="utf-8")
    return tmp_path


def _suite(project: Path, text: str) -> str:
    (project / "s.yaml").write_text(text, encoding="utf-8")
    return "s.yaml"


def test_a_misspelt_row_key_is_refused_with_the_key_it_was_meant_to_be(project: Path) -> None:
    """It used to run the base config under the row's name, and save it as that row's result."""
    path = _suite(project, suite_yaml("s", "{name: hybrid}", "{name: dense, sett: {retrievers: [vector]}}"))
    with pytest.raises(ConfigError) as caught:
        load_suite(path)
    assert (
        str(caught.value)
        == "s.yaml: rows[2].sett: is not a row key. Did you mean 'set'? A row has name, set, chat"
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            "metrix: [ndcg@10]\n",
            "metrix: is not a suite key. Did you mean 'metrics'? A suite has name, corpus",
        ),
        ("bases: {}\n", "bases: is not a suite key. Did you mean 'base'? A suite has"),
        ("zzz: 1\n", "zzz: is not a suite key. A suite has name, corpus"),
        ("1: x\n", "1: is not a suite key. A suite has"),
    ],
)
def test_an_unknown_suite_key_is_refused(project: Path, extra: str, message: str) -> None:
    path = _suite(project, suite_yaml("s", "{name: hybrid}") + extra)
    with pytest.raises(ConfigError) as caught:
        load_suite(path)
    assert str(caught.value).startswith(f"s.yaml: {message}")


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("corpus: docs", "corpus: [docs]", r"corpus=\['docs'\]: must be text"),
        ("name: s", "name: 2024", r"name=2024: must be text\. Write it as text, quoted"),
    ],
)
def test_suite_values_of_the_wrong_kind_are_named(project: Path, old: str, new: str, message: str) -> None:
    path = _suite(project, suite_yaml("s", "{name: hybrid}").replace(old, new, 1))
    with pytest.raises(ConfigError, match=message):
        load_suite(path)


def test_base_and_rows_of_the_wrong_kind_are_named(project: Path) -> None:
    header = "name: s\ncorpus: docs\ngolden: golden.yaml\n"
    with pytest.raises(ConfigError, match=r"s\.yaml: base=\[1\]: must be a table of settings"):
        load_suite(_suite(project, header + "base: [1]\nrows: [{name: a}]\n"))
    with pytest.raises(
        ConfigError, match=r"s\.yaml: rows=\{'name': 'a'\}: must be a list of rows\. Write rows:"
    ):
        load_suite(_suite(project, header + "rows: {name: a}\n"))
    with pytest.raises(
        ConfigError, match=r"s\.yaml row 'a': rerankk: is not a setting\. Did you mean 'rerank'\?"
    ):
        load_suite(_suite(project, header + "rows: [{name: a, set: {rerankk: true}}]\n"))


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            "{name: dense, chat: 5}",
            "rows[2].chat=5: must name a chat model. Write chat: echo (or smollm2, ollama:MODEL), or leave "
            "it out to answer with --chat",
        ),
        (
            "{name: dense, set: [top_k]}",
            "rows[2].set=['top_k']: must be a table of settings. Write set: {key: value}",
        ),
        ("dense", "rows[2]='dense': is not a table. A row has name, set, chat"),
        (
            "{set: {top_k: 5}}",
            'rows[2].name: is missing. Write it as text, quoted if it looks like a number: name: "..."',
        ),
        (
            "{name: 2024}",
            "rows[2].name=2024: must be text. Write it as text, quoted if it looks like a number: "
            'name: "..."',
        ),
    ],
)
def test_a_row_of_the_wrong_shape_is_named_by_its_place(project: Path, row: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_suite(_suite(project, suite_yaml("s", "{name: hybrid}", row)))
    assert str(caught.value) == f"s.yaml: {message}"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            "metrics: [ndcg@11]\n",
            "metrics=['ndcg@11']: names ndcg@11, which the runner does not compute. Use",
        ),
        ("metrics: ndcg@10\n", "metrics='ndcg@10': must be a list of metric names the runner computes"),
        ("spans: yes please\n", "spans='yes please': must be true or false. Write spans: false to judge"),
        ("baseline: dense\n", "baseline='dense': names no row. Use one of ['hybrid']"),
    ],
)
def test_suite_settings_of_the_wrong_kind_are_named(project: Path, extra: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_suite(_suite(project, suite_yaml("s", "{name: hybrid}") + extra))
    assert str(caught.value).startswith(f"s.yaml: {message}")


def test_suite_yaml_that_does_not_parse_names_line_and_column(project: Path) -> None:
    path = _suite(project, "name: s\nrows: [{name: a}\n")
    with pytest.raises(ConfigError, match=r"^s\.yaml:3:1: is not valid YAML: expected ',' or ']'"):
        load_suite(path)


@pytest.mark.parametrize(
    ("old", "new", "key", "what"),
    [
        ("corpus: docs", "corpus: nodocs", "corpus='nodocs'", "does not exist"),
        ("golden: golden.yaml", "golden: nope.yaml", "golden='nope.yaml'", "does not exist"),
        ("golden: golden.yaml", "golden: docs", "golden='docs'", "is a folder, not a file"),
    ],
)
def test_missing_suite_data_is_named_before_anything_runs(
    project: Path, old: str, new: str, key: str, what: str
) -> None:
    suite = load_suite(_suite(project, suite_yaml("s", "{name: hybrid}").replace(old, new)))  # loads
    with pytest.raises(ConfigError) as caught:
        suite.check_data()
    assert str(caught.value) == (
        f"s.yaml: {key}: {what}. Fix the path (a suite's paths are relative to the folder clear-rag runs "
        "in, not to the suite file)"
    )


def test_a_beir_folder_that_is_not_there_is_named(project: Path) -> None:
    suite = load_suite(_suite(project, "name: b\nbeir: nowhere\nrows: [{name: a}]\n"))
    with pytest.raises(ConfigError, match=r"s\.yaml: beir='nowhere': does not exist"):
        suite.check_data()


def test_a_golden_override_that_is_not_there_is_named(project: Path) -> None:
    suite = load_suite(_suite(project, suite_yaml("s", "{name: hybrid}")))
    with pytest.raises(ConfigError, match=r"^--golden='mine\.yaml': does not exist\. Check the path"):
        suite.with_golden(Path("mine.yaml"))


def _golden(project: Path, text: str) -> Path:
    path = project / "g.yaml"
    path.write_text(text, encoding="utf-8")
    return path


QUESTION = "  - {id: pads, question: q, category: factual, answers: [{quote: check rotor}]}\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "name: g\nquestoins:\n" + QUESTION,
            "questoins: is not a golden set key. Did you mean 'questions'? "
            "A golden set has name, unresolved, questions",
        ),
        (
            "questions:\n  - {id: pads, question: q, category: factual, notes: n, answers: [{quote: x}]}\n",
            "pads.notes: is not a question key. Did you mean 'note'? "
            "A question has id, question, category, note, answers",
        ),
        (
            "questions:\n  - {id: pads, question: q, category: factual, answers: [{qoute: check rotor}]}\n",
            "pads.answers[1].qoute: is not an answer key. Did you mean 'quote'? An answer has doc, quote",
        ),
        (
            "questions:\n  - {id: pads, question: q, category: factual, answers: [{document: a}]}\n",
            "pads.answers[1].document: is not an answer key. An answer has doc, quote",
        ),
        (
            "questions:\n  - {id: pads, question: q, category: factual, answers: [check rotor]}\n",
            "pads.answers[1]='check rotor': is not a table of doc and quote",
        ),
        (
            "questions:\n  - {id: pads, question: q, category: factual, answers: check rotor}\n",
            "pads.answers='check rotor': must be a list of at least one answer",
        ),
    ],
)
def test_golden_sets_are_read_strictly(project: Path, text: str, message: str) -> None:
    """Unknown keys in golden questions and their answers were accepted; an answer that was not a
    table was dropped without a word."""
    path = _golden(project, text)
    with pytest.raises(ConfigError) as caught:
        read_golden(path)
    assert str(caught.value).startswith(f"{path}: {message}")
    with pytest.raises(ConfigError):
        load_golden(path, TEXTS)


@pytest.mark.parametrize(
    ("question", "message"),
    [
        ("refusal: 'yes'", "pads.refusal='yes': must be true or false. Write refusal: true"),
        (
            "note: [a]",
            "pads.note=['a']: must be text. Write it as text, quoted if it looks like a number: "
            'note: "..."',
        ),
        (
            "must_mention: [pads, 3]",
            "pads.must_mention=['pads', 3]: must be a list of non-empty terms (or lists of allowed "
            "variants). Write must_mention: [term, [variant, variant], ...]",
        ),
        (
            "must_not_mention: [' ']",
            "pads.must_not_mention=[' ']: must be a list of non-empty terms. Write must_not_mention: "
            "[term, ...]",
        ),
    ],
)
def test_a_golden_question_of_the_wrong_type_is_named_by_its_id(
    project: Path, question: str, message: str
) -> None:
    path = _golden(project, "questions:\n" + QUESTION.replace("answers:", f"{question}, answers:"))
    with pytest.raises(ConfigError) as caught:
        read_golden(path)
    assert str(caught.value) == f"{path}: {message}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "questions:\n  - {question: q, category: factual, answers: [{quote: x}]}\n",
            'questions[1].id: is missing. Write it as text, quoted if it looks like a number: id: "..."',
        ),
        (
            "questions:\n  - {id: a, question: q, category: guess, answers: [{quote: x}]}\n",
            "a.category='guess': has an unknown category. Use one of: factual, identifier, paraphrase",
        ),
        (
            "questions:\n" + QUESTION + QUESTION,
            "questions=['pads']: repeats question ids. Make each id unique",
        ),
        ("name: g\n", "questions: is missing. Put them under questions:"),
        ("just text\n", "is not a table. A golden set has name, unresolved, questions"),
    ],
)
def test_a_golden_set_of_the_wrong_shape_is_named(project: Path, text: str, message: str) -> None:
    path = _golden(project, text)
    with pytest.raises(ConfigError) as caught:
        read_golden(path)
    assert str(caught.value).startswith(f"{path}: {message}")


def test_golden_yaml_that_does_not_parse_names_line_and_column(project: Path) -> None:
    path = _golden(project, "questions:\n  - {id: a, question: b\n")
    with pytest.raises(ClearRagError, match=r"g\.yaml:3:1: is not valid YAML: expected ',' or '}'"):
        read_golden(path)


def test_a_well_formed_golden_set_still_loads(project: Path) -> None:
    written, raw = read_golden(project / "golden.yaml")
    assert written.name == "golden" and [q.id for q in written.questions] == ["pads", "pressure", "chain"]
    assert raw == (project / "golden.yaml").read_bytes()
    golden = load_golden(_golden(project, "questions:\n" + QUESTION), TEXTS)
    assert [q.id for q in golden.questions] == ["pads"] and golden.questions[0].labels[
        0
    ].quote == "check rotor"


def test_the_committed_suites_and_golden_set_pass_the_strict_reading() -> None:
    root = Path(__file__).resolve().parents[2]
    for path in sorted((root / "golden" / "suites").glob("*.yaml")):
        assert load_suite(str(path)).rows, path
    assert len(read_golden(root / "golden" / "tech.yaml")[0].questions) == 70
