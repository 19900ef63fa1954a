"""The layers of the code, checked over its import graph (every import, those inside functions too):
no module cycles, nothing imports the CLI, only the provider factory imports the fakes, and the
retrieval core imports no framework. A test plants each fault in a package of its own and sees it
found, so the checks cannot pass by reading nothing."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = (
    "clear_rag.parse",
    "clear_rag.chunk",
    "clear_rag.index",
    "clear_rag.retrieve",
    "clear_rag.eval.metrics",
)
FRAMEWORKS = (
    "dagster",
    "starlette",
    "sse_starlette",
    "uvicorn",
    "typer",
    "click",
    "duckdb",
    "matplotlib",
    "playwright",
    "torch",
    "transformers",
)
FAKES = "clear_rag.providers.fake"
FAKES_OFFERED_BY = {"clear_rag.providers.select"}  # `--embedder hash`, `--chat echo`, `--reranker lexical`

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
    """The package's own import graph (edges to its modules only), and every module's raw imports."""
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
    edges, raw = graph(root, package)
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
    core = [c.replace("clear_rag", package, 1) for c in CORE]
    for name, found in sorted(raw.items()):
        if within(name, core):
            said += [f"{name} (core) imports {t}" for t in sorted(found) if within(t, FRAMEWORKS)]
    return said


def test_the_code_keeps_its_layers() -> None:
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
        "index/__init__.py": "",
        "index/bm25.py": "import duckdb\n",
    }
    for relative, text in files.items():
        (package / relative).parent.mkdir(parents=True, exist_ok=True)
        (package / relative).write_text(text, encoding="utf-8")
    assert faults(tmp_path, "planted") == [
        "cycle: planted.a -> planted.b",
        "planted.generate imports the fakes",
        "planted.report imports the CLI (planted.cli.main)",
        "planted.index.bm25 (core) imports duckdb",
    ]
