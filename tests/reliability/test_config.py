"""Bad configs, suites and golden sets through the CLI on the fakes: YAML that does not parse, an alias
bomb, an oversized file, ``nan`` and ``inf``, misspelt keys, wrong-typed ``--set`` values, a suite
whose corpus or golden file is missing.

Each case asserts the exact one-line message and exit code, and that nothing was lost or made: a
config error in ``ingest`` creates no store, and a failing ``ablate`` or ``beir`` with
``--save-results`` leaves the result file it would have written byte for byte as it was and builds
no store (every check runs before the first document is ingested).
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from clear_rag.cli import app
from clear_rag.config import PipelineConfig
from tests.reliability.catalogue import Case, case, expect
from tests.toy import GOLDEN, suite_yaml, write_beir

runner = CliRunner()
NO_ALIASES = "Write the values out in full: clear-rag's files need no YAML aliases (*name)"
FINITE = "nan and inf are not accepted"
RELATIVE = (
    "Fix the path (a suite's paths are relative to the folder clear-rag runs in, not to the suite file)"
)
YAML_FIX = "Fix it at that line and column (a value holding ': ' or ' #' needs quotes)"

# --- configs (`ingest --config`, `beir --set`) ---

CONFIG_YAML_SYNTAX = case(
    "config-yaml-does-not-parse",
    area="config",
    fault="a YAML config with an unclosed list (`retrievers: [keyword` and the next key on the next line)",
    message="error: c.yaml:2:7: is not valid YAML: expected ',' or ']' (while parsing a flow "
    f"sequence at line 1, column 13). {YAML_FIX}",
    exit_code=2,
)
CONFIG_TOML_SYNTAX = case(
    "config-toml-does-not-parse",
    area="config",
    fault="a TOML config with a key and no value (`fusion =`)",
    message="error: c.toml:1:10: is not valid TOML: invalid value. Fix it at that line and column",
    exit_code=2,
)
ALIAS_BOMB = case(
    "config-yaml-alias-bomb",
    area="config",
    fault='a 9-line "billion laughs" config: each line lists the line above nine times through aliases '
    "(9^9 values once expanded); refused in milliseconds with a few MB, before anything is built",
    message=f"error: c.yaml:7:28: uses more than 50 YAML aliases (*name). {NO_ALIASES}",
    exit_code=2,
)
ALIAS_DOUBLING = case(
    "config-yaml-alias-expansion",
    area="config",
    fault="a config of 21 lines, each the line above twice (40 aliases, 2^21 values once expanded)",
    message=f"error: c.yaml: would expand to more than 250,000 values through its aliases. {NO_ALIASES}",
    exit_code=2,
)
OVERSIZED = case(
    "config-oversized",
    area="config",
    fault="a 5 MB YAML config (only the first 4 MiB + 1 byte are read)",
    message="error: c.yaml: is larger than the 4 MiB a config, suite or golden file may hold. "
    "Check that it is the file you meant",
    exit_code=2,
)
TOML_NAN = case(
    "config-toml-nan",
    area="config",
    fault="`bm25_k1 = nan` in a TOML config (it used to be called out of range)",
    message=f"error: c.toml: bm25_k1=nan: is not a finite number. Expected a number of at least 0; {FINITE}",
    exit_code=2,
)
TOML_INF = case(
    "config-toml-inf",
    area="config",
    fault="`keyword = inf` under `[weights]` in a TOML config (it used to pass the check of at least 0)",
    message="error: c.toml: weights.keyword=inf: is not a finite number. Expected a table of retriever = "
    f"weight (a number of at least 0), for the retrievers in use; {FINITE}",
    exit_code=2,
)
YAML_NAN = case(
    "config-yaml-nan",
    area="config",
    fault="`bm25_b: .nan` in a YAML config",
    message=f"error: c.yaml: bm25_b=nan: is not a finite number. Expected a number from 0 to 1; {FINITE}",
    exit_code=2,
)
YAML_INF = case(
    "config-yaml-inf",
    area="config",
    fault="`bm25_k1: .inf` in a YAML config",
    message=f"error: c.yaml: bm25_k1=inf: is not a finite number. Expected a number of at least 0; {FINITE}",
    exit_code=2,
)
UNKNOWN_SETTING = case(
    "config-unknown-key",
    area="config",
    fault="`rerankk: true` in a YAML config ({known}: every setting's name)",
    message="error: c.yaml: rerankk: is not a setting. Did you mean 'rerank'? Known keys: {known}",
    exit_code=2,
)
SET_CHUNKING = case(
    "config-beir-set-wrong-type",
    area="config",
    fault="`clear-rag beir FOLDER --set chunking=5` (a number for a table; it was a TypeError traceback)",
    message="error: --set: chunking=5: has the wrong type. "
    "Expected a table of chunker, size, overlap, parsers, contextual",
    exit_code=2,
)
SET_INF = case(
    "config-beir-set-inf",
    area="config",
    fault="`clear-rag beir FOLDER --set bm25_k1=inf`",
    message=f"error: --set: bm25_k1=inf: is not a finite number. Expected a number of at least 0; {FINITE}",
    exit_code=2,
)
SET_BOTH = case(
    "config-beir-set-table-and-key",
    area="config",
    fault="`--set chunking=5 --set chunking.size=3` (a key inside a setting given a value)",
    message="error: --set='chunking.size=3': sets a key inside a setting that another --set gave a value. "
    "Set chunking either as a whole or key by key, not both",
    exit_code=2,
)


@pytest.fixture
def project(tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The toy project as the working directory: ``docs/``, ``golden.yaml``, a BEIR folder, and a
    result file for suite ``s`` that a failing run must leave as it is."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "golden.yaml").write_text(GOLDEN, encoding="utf-8")
    write_beir(tmp_path / "beir")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "s.json").write_text('{"kept": true}\n', encoding="utf-8")
    (tmp_path / "results" / "beir-beir.json").write_text('{"kept": true}\n', encoding="utf-8")
    return tmp_path


def _check(result: Result, entry: Case, **places: str) -> None:
    assert result.exit_code == entry.exit_code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    expect(result.output, entry, **places)


def _ingest_with(project: Path, name: str, content: str | bytes, entry: Case, **places: str) -> None:
    """``ingest docs --config NAME`` fails with ``entry``'s message and creates no store."""
    path = project / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    result = runner.invoke(app, ["ingest", "docs", "--config", name, "--store", "st", "--embedder", "hash"])
    _check(result, entry, **places)
    assert not (project / "st").exists()


def test_config_yaml_that_does_not_parse(project: Path) -> None:
    _ingest_with(project, "c.yaml", "retrievers: [keyword\nrerank: true\n", CONFIG_YAML_SYNTAX)


def test_config_toml_that_does_not_parse(project: Path) -> None:
    _ingest_with(project, "c.toml", "fusion = \n", CONFIG_TOML_SYNTAX)


def test_an_alias_bomb_fails_fast_and_small(project: Path) -> None:
    lines = ["a: &a [" + ", ".join(['"lol"'] * 9) + "]"]
    for level, above in zip("bcdefghi", "abcdefgh", strict=True):
        lines.append(f"{level}: &{level} [" + ", ".join([f"*{above}"] * 9) + "]")
    tracemalloc.start()
    try:
        _ingest_with(project, "c.yaml", "\n".join(lines) + "\n", ALIAS_BOMB)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # Memory, not time, shows it was refused before expanding (time would follow the machine's load):
    # expanded, it grows to gigabytes.
    assert peak < 20 * 2**20, peak


def test_an_alias_expansion_under_the_alias_limit_is_refused_too(project: Path) -> None:
    lines = ["l0: &l0 [x, x]"] + [f"l{n}: &l{n} [*l{n - 1}, *l{n - 1}]" for n in range(1, 21)]
    tracemalloc.start()
    try:
        _ingest_with(project, "c.yaml", "\n".join(lines) + "\n", ALIAS_DOUBLING)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20, peak


def test_an_oversized_config(project: Path) -> None:
    _ingest_with(project, "c.yaml", b"# " + b"x" * (5 * 10**6) + b"\nrerank: true\n", OVERSIZED)


@pytest.mark.parametrize(
    ("name", "text", "entry"),
    [
        ("c.toml", "bm25_k1 = nan\n", TOML_NAN),
        ("c.toml", "[weights]\nkeyword = inf\n", TOML_INF),
        ("c.yaml", "bm25_b: .nan\n", YAML_NAN),
        ("c.yaml", "bm25_k1: .inf\n", YAML_INF),
    ],
    ids=["toml-nan", "toml-inf", "yaml-nan", "yaml-inf"],
)
def test_non_finite_numbers_in_a_config(project: Path, name: str, text: str, entry: Case) -> None:
    _ingest_with(project, name, text, entry)


def test_an_unknown_config_key_says_which_was_meant(project: Path) -> None:
    known = ", ".join(PipelineConfig.model_fields)
    _ingest_with(project, "c.yaml", "rerankk: true\n", UNKNOWN_SETTING, known=known)


def _beir_with(project: Path, entry: Case, *sets: str) -> None:
    """``beir beir --set ...`` fails with ``entry``'s message, builds no store and leaves the result."""
    args = [
        "beir",
        "beir",
        "--embedder",
        "hash",
        "--store",
        "st",
        "--save-results",
        "--results-dir",
        "results",
    ]
    for pair in sets:
        args += ["--set", pair]
    _check(runner.invoke(app, args), entry)
    assert not (project / "st").exists()
    assert (project / "results" / "beir-beir.json").read_text(encoding="utf-8") == '{"kept": true}\n'


def test_beir_set_chunking_to_a_number(project: Path) -> None:
    _beir_with(project, SET_CHUNKING, "chunking=5")


def test_beir_set_a_non_finite_number(project: Path) -> None:
    _beir_with(project, SET_INF, "bm25_k1=inf")


def test_beir_set_a_table_and_a_key_inside_it(project: Path) -> None:
    _beir_with(project, SET_BOTH, "chunking=5", "chunking.size=3")


# --- suites and golden sets (`ablate`) ---

SUITE_SYNTAX = case(
    "suite-yaml-does-not-parse",
    area="suite",
    fault="a suite whose rows list is never closed",
    message=f"error: s.yaml:3:1: is not valid YAML: expected ',' or ']' (while parsing a flow "
    f"sequence at line 2, column 7). {YAML_FIX}",
    exit_code=2,
)
ROW_SETT = case(
    "suite-row-key-misspelt",
    area="suite",
    fault="a row `{name: dense, sett: {retrievers: [vector]}}` (it once ran the base config as `dense`)",
    message="error: s.yaml: rows[2].sett: is not a row key. Did you mean 'set'? A row has name, set, chat",
    exit_code=2,
)
SUITE_KEY = case(
    "suite-unknown-key",
    area="suite",
    fault="`metrix: [ndcg@10]` at the top of a suite",
    message="error: s.yaml: metrix: is not a suite key. Did you mean 'metrics'? A suite has name, corpus, "
    "golden, beir, split, training_split, spans, metrics, generate, baseline, base, rows",
    exit_code=2,
)
NO_CORPUS = case(
    "suite-corpus-missing",
    area="suite",
    fault="a suite whose `corpus:` folder does not exist (it was reported as a failed ingest)",
    message=f"error: s.yaml: corpus='nodocs': does not exist. {RELATIVE}",
    exit_code=2,
)
NO_GOLDEN = case(
    "suite-golden-missing",
    area="suite",
    fault="a suite whose `golden:` file does not exist (a FileNotFoundError traceback after the ingest)",
    message=f"error: s.yaml: golden='nope.yaml': does not exist. {RELATIVE}",
    exit_code=2,
)
NO_GOLDEN_OVERRIDE = case(
    "suite-golden-override-missing",
    area="suite",
    fault="`clear-rag ablate SUITE --golden nope.yaml` with no such file",
    message="error: --golden='nope.yaml': does not exist. Check the path of the golden set",
    exit_code=2,
)
GOLDEN_SYNTAX = case(
    "suite-golden-does-not-parse",
    area="suite",
    fault="a golden set with a list that is never closed",
    message=f"error: g.yaml:3:1: is not valid YAML: expected ',' or ']' (while parsing a flow "
    f"sequence at line 2, column 5). {YAML_FIX}",
    exit_code=2,
)
GOLDEN_QUESTION_KEY = case(
    "suite-golden-question-key-unknown",
    area="suite",
    fault="`notes:` in a golden question (unknown question keys were accepted)",
    message="error: g.yaml: pads.notes: is not a question key. Did you mean 'note'? "
    "A question has id, question, category, note, answers, must_mention, must_not_mention, refusal",
    exit_code=2,
)
GOLDEN_ANSWER_KEY = case(
    "suite-golden-answer-key-unknown",
    area="suite",
    fault="`qoute:` in a golden answer (the answer then had an empty quote)",
    message="error: g.yaml: pads.answers[1].qoute: is not an answer key. Did you mean 'quote'? "
    "An answer has doc, quote",
    exit_code=2,
)
ROW_WRONG_TYPE = case(
    "suite-row-wrong-type",
    area="suite",
    fault="a row `{name: dense, chat: 5}` (a number where a chat model's name goes)",
    message="error: s.yaml: rows[2].chat=5: must name a chat model. Write chat: echo (or smollm2, "
    "ollama:MODEL), or leave it out to answer with --chat",
    exit_code=2,
)
GOLDEN_WRONG_TYPE = case(
    "suite-golden-question-wrong-type",
    area="suite",
    fault="`refusal: 'yes'` in a golden question (text where true or false goes)",
    message="error: g.yaml: pads.refusal='yes': must be true or false. Write refusal: true",
    exit_code=2,
)
GOLDEN_ALIAS_BOMB = case(
    "suite-golden-alias-bomb",
    area="suite",
    fault="a golden set whose questions are an alias bomb",
    message=f"error: g.yaml: would expand to more than 250,000 values through its aliases. {NO_ALIASES}",
    exit_code=2,
)

QUESTION = "  - {{id: pads, question: q, category: factual, {extra}answers: [{{{answer}}}]}}\n"


def _ablate(project: Path, suite: str, entry: Case, *extra: str) -> None:
    """``ablate s.yaml --save-results`` fails with ``entry``'s message, builds no store and leaves
    the suite's result file as it was."""
    (project / "s.yaml").write_text(suite, encoding="utf-8")
    args = ["ablate", "s.yaml", "--embedder", "hash", "--chat", "echo", "--store", "st", "--save-results"]
    _check(runner.invoke(app, [*args, "--results-dir", "results", *extra]), entry)
    assert not (project / "st").exists()
    assert (project / "results" / "s.json").read_text(encoding="utf-8") == '{"kept": true}\n'
    assert sorted(p.name for p in (project / "results").iterdir()) == ["beir-beir.json", "s.json"]


def _with_golden(project: Path, golden: str, entry: Case) -> None:
    (project / "g.yaml").write_text(golden, encoding="utf-8")
    suite = suite_yaml("s", "{name: hybrid}").replace("golden: golden.yaml", "golden: g.yaml")
    _ablate(project, suite, entry)


def test_suite_yaml_that_does_not_parse(project: Path) -> None:
    _ablate(project, "name: s\nrows: [{name: hybrid}\n", SUITE_SYNTAX)


def test_a_misspelt_row_key(project: Path) -> None:
    _ablate(
        project, suite_yaml("s", "{name: hybrid}", "{name: dense, sett: {retrievers: [vector]}}"), ROW_SETT
    )


def test_an_unknown_suite_key(project: Path) -> None:
    _ablate(project, suite_yaml("s", "{name: hybrid}") + "metrix: [ndcg@10]\n", SUITE_KEY)


def test_a_suite_whose_corpus_is_missing(project: Path) -> None:
    _ablate(project, suite_yaml("s", "{name: hybrid}").replace("corpus: docs", "corpus: nodocs"), NO_CORPUS)


def test_a_suite_whose_golden_file_is_missing(project: Path) -> None:
    suite = suite_yaml("s", "{name: hybrid}").replace("golden: golden.yaml", "golden: nope.yaml")
    _ablate(project, suite, NO_GOLDEN)


def test_a_golden_override_that_is_missing(project: Path) -> None:
    _ablate(project, suite_yaml("s", "{name: hybrid}"), NO_GOLDEN_OVERRIDE, "--golden", "nope.yaml")


def test_a_golden_set_that_does_not_parse(project: Path) -> None:
    _with_golden(project, "questions:\n  - [pads, q\n", GOLDEN_SYNTAX)


def test_an_unknown_golden_question_key(project: Path) -> None:
    golden = "questions:\n" + QUESTION.format(extra="notes: n, ", answer="quote: check rotor")
    _with_golden(project, golden, GOLDEN_QUESTION_KEY)


def test_an_unknown_golden_answer_key(project: Path) -> None:
    golden = "questions:\n" + QUESTION.format(extra="", answer="qoute: check rotor")
    _with_golden(project, golden, GOLDEN_ANSWER_KEY)


def test_a_row_of_the_wrong_type(project: Path) -> None:
    _ablate(project, suite_yaml("s", "{name: hybrid}", "{name: dense, chat: 5}"), ROW_WRONG_TYPE)


def test_a_golden_question_of_the_wrong_type(project: Path) -> None:
    golden = "questions:\n" + QUESTION.format(extra="refusal: 'yes', ", answer="quote: check rotor")
    _with_golden(project, golden, GOLDEN_WRONG_TYPE)


def test_a_golden_alias_bomb(project: Path) -> None:
    lines = ["l0: &l0 [x, x]"] + [f"l{n}: &l{n} [*l{n - 1}, *l{n - 1}]" for n in range(1, 21)]
    _with_golden(project, "\n".join(lines) + "\nquestions: *l20\n", GOLDEN_ALIAS_BOMB)
