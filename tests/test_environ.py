"""The environment variables clear-rag reads: one module reads them, and none reaches a test."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clear_rag import environ
from clear_rag.cli import app
from clear_rag.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("clear_rag", "assets", "bench")


def test_no_variable_clear_rag_reads_reaches_a_test() -> None:
    for variable in environ.VARIABLES:
        if variable is environ.SUPPORT:
            assert os.environ[variable.name] == "lexical"  # the one the fixture sets: the lexical fake
        else:
            assert variable.name not in os.environ, variable.name


def test_every_variable_is_named_in_the_one_module() -> None:
    """A ``CLEAR_RAG_*`` name written anywhere else in the code (as a string of its own, not in a
    sentence) is a variable read outside ``clear_rag.environ``, which the tests would not clear."""
    listed = {variable.name for variable in environ.VARIABLES}
    stray = []
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == ROOT / "clear_rag" / "environ.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                value = node.value if isinstance(node, ast.Constant) else None
                if isinstance(value, str) and value.startswith("CLEAR_RAG_") and value.isupper():
                    stray.append(f"{path.relative_to(ROOT)}: {value}")
    assert stray == []
    assert all(name.startswith("CLEAR_RAG_") for name in listed - {"OLLAMA_HOST", "XDG_CACHE_HOME"})


@pytest.mark.parametrize(
    ("read", "value", "said"),
    [
        (environ.whole_number, "two", "is not a whole number of at least 1"),
        (environ.whole_number, "0", "is not a whole number of at least 1"),
        (environ.seconds, "soon", "is not a number of seconds above 0"),
        (environ.seconds, "inf", "is not a number of seconds above 0"),
        (environ.seconds, "-1", "is not a number of seconds above 0"),
    ],
)
def test_a_value_that_does_not_parse_is_an_error_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, read: object, value: str, said: str
) -> None:
    monkeypatch.setenv(environ.THREADS.name, value)
    with pytest.raises(ConfigError, match=f"CLEAR_RAG_THREADS.*{value}.*{said}"):
        read(environ.THREADS)  # type: ignore[operator]


def test_an_empty_value_is_no_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(environ.THREADS.name, "  ")
    assert environ.text(environ.THREADS) is None
    assert environ.whole_number(environ.THREADS) is None
    monkeypatch.setenv(environ.THREADS.name, " 3 ")
    assert environ.whole_number(environ.THREADS) == 3


def test_ingest_and_ask_on_the_defaults(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the next test runs in a shell that sets every variable: the store is ./.clear-rag."""
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    ingested = runner.invoke(app, ["ingest", "docs", "--embedder", "hash"])
    assert ingested.exit_code == 0, ingested.output
    asked = runner.invoke(app, ["ask", "brake pads", "--embedder", "hash", "--chat", "echo"])
    assert asked.exit_code == 0, asked.output
    assert (tmp_path / ".clear-rag" / "clear-rag.db").is_file()


def test_variables_set_in_the_shell_change_nothing_in_a_test(tmp_path: Path) -> None:
    """pytest started with every variable set to something that would break or redirect a test (a
    store elsewhere, models that do not exist, values that do not parse): the test above passes, and
    nothing is written where the store variable pointed."""
    elsewhere = tmp_path / "developers-own-store"
    shell = {**os.environ, **{variable.name: "nonsense" for variable in environ.VARIABLES}}
    shell[environ.STORE.name] = str(elsewhere)
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            "",
            f"{Path(__file__).relative_to(ROOT)}::test_ingest_and_ask_on_the_defaults",
        ],
        cwd=ROOT,
        env=shell,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "1 passed" in ran.stdout
    assert not elsewhere.exists()


def test_a_child_gets_this_environment_with_its_overrides_and_this_one_is_left_alone() -> None:
    child = environ.for_child(OMP_THREAD_LIMIT="1")
    assert child["OMP_THREAD_LIMIT"] == "1" and child["PATH"] == os.environ["PATH"]
    child["PATH"] = "changed"
    assert os.environ["PATH"] != "changed"
