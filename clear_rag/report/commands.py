"""The command that writes each result file, and the table of them all for the reproduce page.

Every writer records its command in the file (``command``): ``clear-rag ablate`` and the Dagster graph
for a suite's file, ``bench/common.write_result`` for a benchmark's, ``clear-rag parse-eval``,
``clear-rag check`` and ``clear-rag train`` for theirs. A suite's file may also hold rows merged by a
command of their own (``clear-rag beir`` or ``clear-rag ablate --row``, ``row_commands``) and the
command that re-derived it (``rederived_by``); the whole file is the suite's command, then (``&&``)
each merged row's in the order the rows stand, then the re-derivation. A suite's chat generations
(``results/generations/<suite>.json``) are written by the run of that suite, so their command is the
suite file's. A file that records no command raises ``InputError`` naming it: nothing here guesses
a command from a file's figures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from clear_rag.errors import InputError
from clear_rag.report.tables import markdown_table

GENERATIONS = "generations"  # clear_rag.eval.generations.GENERATIONS: a suite's chat generations, beside it
BENCH = "bench"
REWRITE = "Write it again with the command that writes it (each records its command)"


def _relative(path: Path, root: Path) -> Path:
    try:
        return path.resolve().relative_to(root.resolve())
    except ValueError:
        return path


def _suite_command(where: str, doc: dict[str, Any]) -> str:
    own: dict[str, str] = doc.get("row_commands") or {}
    rows = [str(row["name"]) for row in doc.get("rows", [])]
    base = doc.get("command")
    if not base and any(name not in own for name in rows):
        raise InputError(
            "records no command for the rows no merged row command made "
            f"({', '.join(name for name in rows if name not in own)})",
            path=where,
            fix=REWRITE,
        )
    merged = [own[name] for name in rows if name in own]
    rederived = [str(doc["rederived_by"])] if doc.get("rederived_by") else []
    return " && ".join([*([str(base)] if base else []), *merged, *rederived])


def command_for(path: Path, doc: dict[str, Any], *, root: Path = Path(".")) -> str:
    """The exact command that writes the result file at ``path`` (whose content is ``doc``), as run
    from the project folder ``root``: what the file records."""
    where = _relative(path, root)
    if where.parent.name == GENERATIONS and "generations" in doc:
        suite = path.parent.parent / f"{path.stem}.json"
        if not suite.is_file():
            raise InputError(
                f"holds chat generations of a suite whose result file "
                f"{_relative(suite, root).as_posix()} is not there",
                path=where.as_posix(),
                fix="Run the suite with --save-results, which writes both",
            )
        made = json.loads(suite.read_text(encoding="utf-8"))
        made.pop("rederived_by", None)  # a re-derivation of the suite's file writes no generations
        return command_for(suite, made, root=root)
    if "rows" in doc and "suite" in doc:
        return _suite_command(where.as_posix(), doc)
    recorded = doc.get("command")
    if isinstance(recorded, str) and recorded.strip():
        return recorded.strip()
    raise InputError("records no command", path=where.as_posix(), fix=REWRITE)


# -- the reproduce page -------------------------------------------------------------------------


def _group(path: Path, results_dir: Path) -> tuple[int, str]:
    """Suites first, then their generations, then benchmarks, then anything else; by name in each."""
    parts = path.relative_to(results_dir).parts
    order = {GENERATIONS: 1, BENCH: 2}.get(parts[0], 3) if len(parts) > 1 else 0
    return order, path.relative_to(results_dir).as_posix()


def _holds(doc: dict[str, Any], path: Path) -> str:
    if "generations" in doc:
        return f"{len(doc['generations'])} chat generations cached for suite {path.stem}"
    if "rows" in doc:
        skipped = len(doc.get("skipped", []))
        return f"suite {doc.get('suite')}, {len(doc['rows'])} rows" + (
            f", {skipped} not run" if skipped else ""
        )
    if "benchmark" in doc:
        return f"benchmark: {doc['benchmark']}"
    if "backends" in doc:
        # a cases part written alone (parse-eval --cases-only) records its own command
        alone = (doc.get("cases") or {}).get("command")
        cases = f"; its drawn cases written by `{alone}`" if alone else ""
        return f"parse metrics of {len(doc['backends'])} PDF parser backends{cases}"
    if "cache_key" in doc and "kind" in doc:  # a training manifest (clear_rag/train)
        return f"the training run of the {doc['kind']} {doc.get('name', path.stem)}, {doc.get('steps')} steps"
    return ""


def _models(doc: dict[str, Any]) -> str:
    if "generations" in doc:
        found = {str(g["model"]) for g in doc["generations"].values() if "model" in g}
    elif "rows" in doc:
        found = {str(v) for row in doc["rows"] for v in row.get("models", {}).values()}
    else:
        found = {str(doc[key]) for key in ("embedder", "providers", "base_model") if key in doc}
    return ", ".join(sorted(found))


def reproduce_table(results_dir: Path, *, root: Path = Path(".")) -> str:
    """Every result file under ``results_dir``, what it holds, its models, its date and the command
    that writes it (run from ``root``, the project folder); the note on re-rendering under it."""
    head = ["file", "what it holds", "models", "date", "command"]
    lines = []
    for path in sorted(results_dir.rglob("*.json"), key=lambda p: _group(p, results_dir)):
        doc = json.loads(path.read_text(encoding="utf-8"))
        cells = [
            f"`{_relative(path, root).as_posix()}`",
            _holds(doc, path),
            _models(doc),
            str(doc.get("date", ""))[:10],
            f"`{command_for(path, doc, root=root)}`",
        ]
        lines.append(cells)
    notes = [
        "Run each command from the project folder. A suite file is also written, the same but for its "
        "date and command, by the Dagster graph: `python -m assets.run --suite NAME --results-dir results` "
        "with the same `--embedder`, `--chat` and `--reranker`.",
        "Rows that ask the chat model answer from the suite's committed generations first; "
        "`--regenerate` asks the model again.",
        "The benchmarks' peers come with the bench extra (`pip install -e '.[bench]'`, which `make bench` "
        "runs).",
        "After any of these, `clear-rag report` re-renders the tables and plots from the files.",
    ]
    return markdown_table(head, lines) + "\n\n" + "\n\n".join(notes) + "\n"
