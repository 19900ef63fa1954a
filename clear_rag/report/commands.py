"""The command that writes each result file, and the table of them all for the reproduce page.

``command_for`` takes the file's own ``command`` field where it has one (what writers record from
now on). Otherwise it derives the command from what the file says of itself:

- a suite file ``results/<suite>.json``: ``clear-rag ablate <suite> --save-results``, with
  ``--embedder``, ``--chat`` and ``--reranker`` naming the models its rows record (the environment
  variables those options read must not pick others), followed (``&&``) by the command of each row
  that ``clear-rag beir --save-results`` or ``clear-rag ablate --row --save-results`` merged into it,
  which the file records (``row_commands``), and by the command that re-derived it (``rederived_by``,
  ``clear-rag ablate SUITE --rederive --save-results``) where one did;
  ``results/baseline-fake.json`` is the same run
  on the fakes with ``--bless``;
- a suite's chat generations ``results/generations/<suite>.json``: the run that writes that suite;
- a benchmark ``results/bench/<name>.json``: ``python -m bench.<name>`` with the flags the file's
  figures imply (the sizes, repeats and counts it was run with).

A file that matches no known writer (an unknown shape, a suite with no suite file, rows its suite
file does not list, a model no CLI name gives) raises ``InputError`` naming the file, rather than a
command that would write something else.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clear_rag.errors import InputError
from clear_rag.eval.suite import SUITES_DIR, load_suite
from clear_rag.report.tables import markdown_table
from clear_rag.results.files import BASELINE_FAKE

RESULTS = Path("results")
GENERATIONS = "generations"  # clear_rag.eval.runner.GENERATIONS: a suite's chat generations, beside it
BENCH = "bench"
ADD_COMMAND = "Add a `command` field to it with the command that wrote it"

# The names providers give themselves (``name@version``, as rows record them in ``models``) back to
# the names the CLI's --embedder, --chat and --reranker take (clear_rag/providers/select.py). A model
# not listed (a reranker from a local folder, a hash embedder of another size) has no CLI name.
CLI_NAMES: dict[str, tuple[tuple[str, str], ...]] = {
    "embedder": (
        (r"all-MiniLM-L6-v2-int8", "minilm"),
        (r"all-MiniLM-L6-v2-q8-fused", "minilm-q8"),
        (r"scifact-minilm-l6-embed", "scifact-minilm-l6-embed"),  # trained here, shipped
        (r"hash-embedder-256", "hash"),
        (r"ollama/(.+)", r"ollama:\1"),
    ),
    "chat": (
        (r"SmolLM2-135M-Instruct-Q4_1", "smollm2"),
        (r"echo-chat", "echo"),
        (r"ollama/(.+)", r"ollama:\1"),
        (r"openai-compat/(.+)", r"openai:\1"),
    ),
    "reranker": (
        (r"lexical-reranker", "lexical"),
        (r"ms-marco-minilm-l6", "ms-marco-minilm-l6"),
        (r"scifact-minilm-l6", "scifact-minilm-l6"),  # trained here, in the weights package
    ),
}


def cli_name(kind: str, model: str, path: str) -> str:
    """The CLI name of ``model`` (``all-MiniLM-L6-v2-int8@1.0.0`` is ``minilm``)."""
    name = model.rpartition("@")[0] or model
    for pattern, replacement in CLI_NAMES.get(kind, ()):
        found = re.fullmatch(pattern, name)
        if found:
            return found.expand(replacement)
    raise InputError(
        f"names the {kind} {model!r}, which no --{kind} name of the CLI gives",
        path=path,
        fix=ADD_COMMAND,
    )


def _relative(path: Path, root: Path) -> Path:
    try:
        return path.resolve().relative_to(root.resolve())
    except ValueError:
        return path


def _model_flags(doc: dict[str, Any], where: str, configured: dict[str, str] | None = None) -> list[str]:
    """``--embedder``, ``--chat`` and ``--reranker`` with the models the rows record, in that order
    (rows merged by a command of their own, ``row_commands``, excepted, a row's own chat model, and a
    row's reranker where ``configured``, the suite file's rows, names that one: no flag is needed for it,
    and one would give it to the rows that name another)."""
    used: dict[str, set[str]] = {}
    own = doc.get("row_commands", {})
    configured = configured or {}
    for row in (r for r in doc.get("rows", []) if r["name"] not in own):
        for kind, model in row.get("models", {}).items():
            # a row whose suite names its chat model (``chat: echo``) answers with it under any --chat
            if kind == "chat" and row.get("chat"):
                continue
            if kind == "reranker" and configured.get(row["name"]) == cli_name(kind, model, where):
                continue
            used.setdefault(kind, set()).add(model)
    flags = []
    for kind in CLI_NAMES:
        models = sorted(used.get(kind, ()))
        if len(models) > 1:
            raise InputError(
                f"holds rows run with {len(models)} different {kind}s ({', '.join(models)}), which one "
                "command does not give",
                path=where,
                fix=ADD_COMMAND,
            )
        if models:
            flags += [f"--{kind}", cli_name(kind, models[0], where)]
    return flags


def _suite_command(where: Path, doc: dict[str, Any], root: Path) -> str:
    suite = str(doc["suite"])
    own = doc.get("row_commands", {})
    # each row merged by its own command (`clear-rag beir` or `ablate --row`), in the order the rows stand
    merged = [own[row["name"]] for row in doc.get("rows", []) if row["name"] in own]
    # the re-derivation that added what a later version records (``clear-rag ablate --rederive``), last
    rederived = [str(doc["rederived_by"])] if doc.get("rederived_by") else []
    if merged and len(merged) == len(doc.get("rows", [])):
        return " && ".join([*merged, *rederived])
    suite_file = SUITES_DIR / f"{suite}.yaml"
    defined = load_suite(str(root / suite_file)).rows if (root / suite_file).is_file() else ()
    flags = _model_flags(doc, where.as_posix(), {row.name: row.config.reranker for row in defined})
    if where == BASELINE_FAKE:
        return shlex.join(["clear-rag", "ablate", suite, *flags, "--bless"])
    if where.stem != suite:
        what = f"holds the suite {suite!r} under another name, which `clear-rag ablate` does not write"
    elif not (root / suite_file).is_file():
        what = f"holds the suite {suite!r}, but {suite_file.as_posix()} does not exist"
    else:
        what = ""
    if what:
        raise InputError(what, path=where.as_posix(), fix=ADD_COMMAND)
    listed = {row.name for row in defined}
    foreign = [row["name"] for row in doc.get("rows", []) if row["name"] not in listed | set(own)]
    if foreign:
        raise InputError(
            f"holds rows that {suite_file.as_posix()} does not list ({', '.join(foreign)}), so no one "
            "command writes it as it is",
            path=where.as_posix(),
            fix=ADD_COMMAND,
        )
    out = ["clear-rag", "ablate", suite, *flags, "--save-results"]
    if where.parent != RESULTS:
        out += ["--results-dir", where.parent.as_posix()]
    return " && ".join([shlex.join(out), *merged, *rederived])


def _generations_command(path: Path, where: Path, root: Path) -> str:
    """The generations cache is written by the run of its suite, so its command is that suite's."""
    suite = path.parent.parent / f"{path.stem}.json"
    if not suite.is_file():
        raise InputError(
            f"holds chat generations of a suite whose result file {_relative(suite, root).as_posix()} "
            "is not there",
            path=where.as_posix(),
            fix=ADD_COMMAND,
        )
    made = json.loads(suite.read_text(encoding="utf-8"))
    made.pop("rederived_by", None)  # a re-derivation of the suite's file writes no generations
    return command_for(suite, made, root=root)


# -- benchmarks: the flags each script's argparse takes, from the figures its file records ----------


def _ingest_flags(doc: dict[str, Any]) -> list[str]:
    return ["--repeat", str(doc["repeat"]), "--limit", str(doc["files"])]


def _growth_flags(doc: dict[str, Any]) -> list[str]:
    def amounts(series: str) -> str:
        return ",".join(str(p["amount"]) for p in doc[series]["points"])

    return [
        "--sizes",
        amounts("document_size"),
        "--files",
        amounts("corpus_size"),
        "--repeat",
        str(doc["repeat"]),
    ]


def _retrieval_flags(doc: dict[str, Any]) -> list[str]:
    flags = ["--repeat", str(doc["repeat"])]
    synthetic = doc.get("keyword", {}).get("synthetic")
    if synthetic:
        flags += ["--docs", str(synthetic["documents"]), "--queries", str(synthetic["queries"])]
        # rank-bm25 and FTS5 time a prefix of the queries at 100k passages; where they timed them all,
        # the prefix flag changed nothing and is left out.
        for engine, flag in (("rank-bm25", "--rank-bm25-queries"), ("sqlite-fts5", "--fts5-queries")):
            timed = synthetic["engines"].get(engine, {}).get("queries_timed", synthetic["queries"])
            if timed < synthetic["queries"]:
                flags += [flag, str(timed)]
    dense = doc.get("dense")
    if dense:
        if not synthetic:
            flags += ["--queries", str(dense["queries"])]
        flags += ["--vectors", str(dense["vectors"]), "--dim", str(dense["dim"])]
    return flags


def _serve_flags(doc: dict[str, Any]) -> list[str]:
    stores = doc["stores"]
    first = next(iter(stores.values()))
    questions = next(iter(first["configs"].values()))["questions"]
    flags = ["--questions", str(questions)]
    if "synthetic" in stores:
        flags += ["--docs", str(stores["synthetic"]["chunks"])]
    if "keyword" not in doc["configs"]:
        flags.append("--no-keyword-only")
    return flags


def _no_flags(doc: dict[str, Any]) -> list[str]:
    return []


BENCH_FLAGS: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "ingest": _ingest_flags,
    "growth": _growth_flags,
    "retrieval": _retrieval_flags,
    "serve": _serve_flags,
    "make-run": _no_flags,  # --keep only keeps the clone; the file is the same
}


def _bench_command(where: Path, doc: dict[str, Any], root: Path) -> str:
    """``python -m bench.<module>``: bench/common.py writes ``results/bench/<name>.json`` from the
    module of that name, with - for _. A benchmark whose flags are not known here runs as its
    module's defaults would."""
    module = where.stem.replace("-", "_")
    if not (root / BENCH / f"{module}.py").is_file():
        raise InputError(
            f"is a benchmark result, but no {BENCH}/{module}.py writes it",
            path=where.as_posix(),
            fix=ADD_COMMAND,
        )
    flags = BENCH_FLAGS.get(where.stem, _no_flags)
    try:
        return shlex.join(["python", "-m", f"{BENCH}.{module}", *flags(doc)])
    except (KeyError, TypeError, StopIteration) as err:
        raise InputError(
            f"lacks a figure its command's flags are read from ({type(err).__name__}: {err})",
            path=where.as_posix(),
            fix=ADD_COMMAND,
        ) from None


def command_for(path: Path, doc: dict[str, Any], *, root: Path = Path(".")) -> str:
    """The exact command that writes the result file at ``path`` (whose content is ``doc``), as run
    from the project folder ``root``."""
    recorded = doc.get("command")
    if isinstance(recorded, str) and recorded.strip():
        return recorded.strip()
    where = _relative(path, root)
    if where.parent.name == GENERATIONS and "generations" in doc:
        return _generations_command(path, where, root)
    if where.parent.name == BENCH and "benchmark" in doc:
        return _bench_command(where, doc, root)
    if "suite" in doc and "embedder" in doc and "rows" in doc:
        return _suite_command(where, doc, root)
    raise InputError(
        "matches no known writer (not a suite, its generations, or a benchmark)",
        path=where.as_posix(),
        fix=ADD_COMMAND,
    )


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
        return f"parse metrics of {len(doc['backends'])} PDF parser backends"
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
        "Run each command from the project folder. A suite file is also written, byte for byte, by the "
        "Dagster graph: `python -m assets.run --suite NAME --results-dir results` with the same "
        "`--embedder`, `--chat` and `--reranker`.",
        "Rows that ask the chat model answer from the suite's committed generations first; "
        "`--regenerate` asks the model again.",
        "The benchmarks' peers come with the bench extra (`pip install -e '.[bench]'`, which `make bench` "
        "runs).",
        "After any of these, `clear-rag report` re-renders the tables and plots from the files.",
    ]
    return markdown_table(head, lines) + "\n\n" + "\n\n".join(notes) + "\n"
