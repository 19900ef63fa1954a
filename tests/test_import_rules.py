"""What may import what (design.md): checked on the source, so a lazy import counts too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "clear_rag"
HEAVY = {"dagster", "starlette", "onnxruntime", "pdfplumber", "duckdb", "sse_starlette", "uvicorn"}
CORE = ("index", "retrieve", "eval/metrics")


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _modules(*parts: str) -> list[Path]:
    found: list[Path] = []
    for part in parts:
        target = PACKAGE / part
        found += (
            sorted(target.rglob("*.py"))
            if target.is_dir()
            else [p for p in [target.with_suffix(".py")] if p.exists()]
        )
    return found


@pytest.mark.parametrize("name", ["types.py", "errors.py"])
def test_types_and_errors_import_nothing_of_the_project(name: str) -> None:
    project = {n for n in _imports(PACKAGE / name) if n.split(".")[0] in {"clear_rag", "assets"}}
    assert project == set()


def test_nothing_in_the_library_imports_the_dagster_code_location() -> None:
    offenders = {
        str(p.relative_to(PACKAGE)): n
        for p in PACKAGE.rglob("*.py")
        for n in _imports(p)
        if n.split(".")[0] == "assets"
    }
    assert offenders == {}


def test_retrieval_core_imports_no_heavy_library() -> None:
    offenders = {
        str(p.relative_to(PACKAGE)): sorted(n for n in _imports(p) if n.split(".")[0] in HEAVY)
        for p in _modules(*CORE)
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_checker_sees_imports() -> None:
    """Guard against a rule that passes because it reads nothing."""
    core = _modules(*CORE)
    assert len(core) >= 8
    assert "numpy" in set().union(*(_imports(p) for p in core))
    assert "onnxruntime" in _imports(PACKAGE / "providers" / "onnx.py")


def test_nothing_reaches_into_dagster_private_modules() -> None:
    """``dagster._core`` moves between releases without notice: assets/ and the library use only what
    ``dagster`` re-exports. A mention anywhere counts (an import, a string, a comment), as with grep."""
    root = PACKAGE.parent
    files = [
        p
        for top in (root / "assets", PACKAGE)
        for p in sorted(top.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    ]
    assert any(p.name == "run.py" for p in files)  # the automation loop, which used to import two
    assert [str(p.relative_to(root)) for p in files if b"dagster._core" in p.read_bytes()] == []


def test_the_reproduction_check_imports_no_heavy_library() -> None:
    """``results/reproduce.py`` reads JSON for ``assets.run``: no duckdb (``results/queries.py`` only)."""
    reproduce = PACKAGE / "results" / "reproduce.py"
    assert "json" in _imports(reproduce)
    assert {n for n in _imports(reproduce) if n.split(".")[0] in HEAVY} == set()


def test_pdfplumber_is_imported_by_the_pdf_reader_alone() -> None:
    """The layout parser's rules work on plain records; only ``parse/pdf.py`` reads glyphs."""
    importers = sorted(
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if any(n.split(".")[0] in {"pdfplumber", "pdfminer"} for n in _imports(p))
    )
    assert importers == ["parse/pdf.py"]


def test_the_self_supervised_construction_reads_no_question_or_label() -> None:
    """Training pairs and probe questions are cut from a store's text alone: the modules that build
    them import no golden set, suite, BEIR reader or label module, lazily or not."""
    labelled = {
        "clear_rag.eval.golden",
        "clear_rag.eval.suite",
        "clear_rag.eval.beir",
        "clear_rag.eval.labels",
    }
    offenders = {
        str(p.relative_to(PACKAGE)): sorted(n for n in _imports(p) if n in labelled)
        for p in _modules("train/pairs", "train/corpus")
    }
    assert offenders == {"train/pairs.py": [], "train/corpus.py": []}
