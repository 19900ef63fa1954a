"""What may import what (design.md): checked on the source, so a lazy import counts too.

Every check reads imports one way (``imports``: every import of a module, those inside functions
too, relative ones resolved, ``from p import m`` read as p.m). Over the package's own import graph:
no module cycles, nothing imports the CLI, only the provider factory imports the fakes; a package
planted with each fault shows the checks find them."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "clear_rag"
HEAVY = {"dagster", "starlette", "onnxruntime", "pdfplumber", "duckdb", "sse_starlette", "uvicorn"}
CORE = ("index", "retrieve", "eval/metrics")
# What runs a service or a pipeline, rather than computing: none of it below the document pipeline's core.
FRAMEWORKS = {"dagster", "starlette", "sse_starlette", "uvicorn", "typer", "duckdb", "matplotlib"}
PIPELINE = ("parse", "chunk", "ingest", *CORE, "eval/parse")


def _imports(path: Path) -> set[str]:
    """Every module ``path`` (a file of the repository) imports, and each one's packages above it."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    found = imports(name, path)
    return found | {".".join(n.split(".")[:i]) for n in found for i in range(1, n.count(".") + 1)}


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


def test_parsing_chunking_indexing_retrieval_and_metrics_import_no_framework() -> None:
    offenders = {
        str(p.relative_to(PACKAGE)): sorted(n for n in _imports(p) if n.split(".")[0] in FRAMEWORKS)
        for p in _modules(*PIPELINE)
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
    """``results/reproduce.py`` reads result files for ``assets.run`` through the one reader (JSON and the
    schema's check): no duckdb (``results/queries.py`` and ``results/snapshot.py`` only), lazily or not."""
    reproduce = PACKAGE / "results" / "reproduce.py"
    assert "clear_rag.results.files" in _imports(reproduce)
    assert {n for n in _imports(PACKAGE / "results" / "files.py") if n.split(".")[0] in HEAVY} == set()
    assert {n for n in _imports(reproduce) if n.split(".")[0] in HEAVY} == set()


def test_pdfplumber_is_imported_by_the_pdf_reader_alone() -> None:
    """The layout parser's rules work on plain records; only ``parse/pdf.py`` reads glyphs."""
    importers = sorted(
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if any(n.split(".")[0] in {"pdfplumber", "pdfminer"} for n in _imports(p))
    )
    assert importers == ["parse/pdf.py"]


def test_reportlab_is_imported_by_the_suites_canvas_alone() -> None:
    """reportlab (an extra, ``suite``) draws the parse suite's cases through ``eval/drawn/canvas.py``
    alone, so that without it only drawing fails, with the one message that says how to install it."""
    importers = sorted(
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if any(n.split(".")[0] == "reportlab" for n in _imports(p))
    )
    assert importers == ["eval/drawn/canvas.py"]


def test_pdfium_and_pillow_have_one_importer_each() -> None:
    """pypdfium2 (the second PDF reader: pages rendered for OCR, text where pdfminer fails) is read
    through ``parse/pdfium.py`` alone, Pillow (the scanned renders' JPEG pages) through
    ``eval/scanned.py`` alone; the OCR engine is a binary, imported by nobody."""
    importers = {
        package: sorted(
            str(p.relative_to(PACKAGE))
            for p in PACKAGE.rglob("*.py")
            if any(n.split(".")[0] == package for n in _imports(p))
        )
        for package in ("pypdfium2", "PIL", "pytesseract")
    }
    assert importers == {"pypdfium2": ["parse/pdfium.py"], "PIL": ["eval/scanned.py"], "pytesseract": []}


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


Graph = dict[str, set[str]]


def modules(root: Path, package: str) -> dict[str, Path]:
    """Every module of ``package`` under ``root``, by dotted name."""
    found = {}
    for path in sorted((root / package.replace(".", "/")).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name: str, path: Path) -> set[str]:
    """Every module ``name`` imports, as written (absolute, relative ones resolved), wherever in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            # ``from p import m`` is an import of the module p.m where there is one, else of p
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def graph(root: Path, package: str) -> tuple[Graph, dict[str, set[str]]]:
    """The package's own import graph (edges to its modules only), and every module's imports."""
    known = modules(root, package)
    raw = {name: imports(name, path) for name, path in known.items()}

    def own(target: str) -> str | None:
        while target and target not in known:
            target = target.rpartition(".")[0]
        return target or None

    edges = {
        name: {m for t in found if (m := own(t)) is not None and m != name} for name, found in raw.items()
    }
    return edges, raw


def cycles(edges: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def within(name: str, prefixes: Iterable[str]) -> bool:
    return any(name == p or name.startswith(f"{p}.") for p in prefixes)


def faults(root: Path, package: str) -> list[str]:
    """Every way the package breaks the layers, one line each."""
    edges, _ = graph(root, package)
    said = [f"cycle: {' -> '.join(c)}" for c in cycles(edges)]
    cli = f"{package}.cli"
    for name, targets in sorted(edges.items()):
        said += [
            f"{name} imports the CLI ({t})"
            for t in sorted(targets)
            if within(t, [cli]) and not within(name, [cli])
        ]
        fake = f"{package}.providers.fake"
        if fake in targets and name not in {f"{package}.providers.select", fake}:
            said.append(f"{name} imports the fakes")
    return said


def test_the_package_has_no_cycle_no_import_of_the_cli_and_fakes_only_in_the_factory() -> None:
    assert faults(ROOT, "clear_rag") == []


def test_the_asset_graph_does_not_import_the_cli() -> None:
    """(The benchmarks may: ``bench.first_question`` times the path ``clear-rag ask`` takes.)"""
    for name, path in modules(ROOT, "assets").items():
        assert not [t for t in imports(name, path) if within(t, ["clear_rag.cli"])], name


def test_each_fault_planted_is_found(tmp_path: Path) -> None:
    package = tmp_path / "planted"
    files = {
        "__init__.py": "",
        "cli/__init__.py": "",
        "cli/main.py": "",
        "a.py": "from planted import b\n",
        "b.py": "def f():\n    from planted.a import x  # a lazy import closes the cycle\n",
        "report.py": "from planted.cli.main import app\n",
        "providers/__init__.py": "",
        "providers/fake.py": "",
        "providers/select.py": "from planted.providers import fake\n",
        "generate.py": "from .providers.fake import Echo\n",
    }
    for relative, text in files.items():
        (package / relative).parent.mkdir(parents=True, exist_ok=True)
        (package / relative).write_text(text, encoding="utf-8")
    assert faults(tmp_path, "planted") == [
        "cycle: planted.a -> planted.b",
        "planted.generate imports the fakes",
        "planted.report imports the CLI (planted.cli.main)",
    ]
