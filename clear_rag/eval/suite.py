"""Ablation suites: named rows, each a config diff from the suite's base.

```yaml
name: tech
corpus: corpora/tech          # or  beir: ../shared/data/beir-scifact
golden: golden/tech.yaml      # quotes resolved to spans; a BEIR suite's labels are its qrels (and spans)
baseline: hybrid rrf          # the row every other row is compared against
base: {retrievers: [keyword, vector]}
rows:
  - name: dense only, 50% overlap (the 2024 predecessor)
    set: {retrievers: [vector], chunking: {chunker: fixed, size: 256, overlap: 128}}
```

With ``generate: true`` every row also answers every question with the chat model and the answers
are graded (``clear_rag.eval.answers``): the answer-grading suite.

A BEIR suite is a suite like any other: its questions are the judged queries of ``split`` (default
``test``), judged per document by the qrels, and, with ``spans: true`` (the default where the
dataset has a rationale file), per labelled span as well. ``metrics`` names what to report; by
default the span metrics where there are span labels, and document nDCG@10 where there are qrels.
``training_split: train`` names the split the models trained here saw: every question is then also
reported as seen or unseen by that training (``clear_rag.eval.subsets``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from clear_rag import yamlfile
from clear_rag.config import PipelineConfig
from clear_rag.errors import ConfigError
from clear_rag.eval.answers import ANSWER_METRICS
from clear_rag.eval.beir import qrels_path
from clear_rag.eval.golden import read_golden
from clear_rag.eval.metrics import DOC_METRICS, SPAN_METRICS

SUITES_DIR = Path("golden") / "suites"
_RELATIVE = "a suite's paths are relative to the folder clear-rag runs in, not to the suite file"


@dataclass(frozen=True, slots=True)
class Row:
    """One row: its name, its config, and the chat model that answers in it where it names its own
    (``chat: echo``); otherwise the suite's (``--chat``)."""

    name: str
    config: PipelineConfig
    chat: str | None = None

    def version(self) -> str:
        """What the row measures with, as one string: its config hash, and its own chat model."""
        return self.config.hash() + (f"+{self.chat}" if self.chat else "")


SUITE_KEYS = (
    "name", "corpus", "golden", "beir", "split", "training_split", "spans", "metrics", "generate",
    "baseline", "base", "rows",
)  # fmt: skip
ROW_KEYS = ("name", "set", "chat")


@dataclass(frozen=True, slots=True)
class Suite:
    name: str
    path: Path
    rows: tuple[Row, ...]
    baseline: str
    corpus: Path | None = None
    golden: Path | None = None
    beir: Path | None = None
    split: str = "test"
    spans: bool = True  # a BEIR suite: use the rationale spans too, where the dataset has them
    metrics: tuple[str, ...] = ()  # empty: the defaults for the labels the suite has
    generate: bool = False  # every row answers every question, and the answers are graded
    training_split: str | None = None  # a BEIR suite: the split models trained here saw (seen / unseen)

    def needs_chat(self, row: Row) -> bool:
        """Whether ``row`` asks a chat model: it answers (``generate``), expands the query or uses HyDE."""
        return self.generate or row.config.needs_chat()

    def with_golden(self, golden: Path) -> Suite:
        """The same rows over another question set (``clear-rag ablate SUITE --golden FILE``), named
        ``SUITE-GOLDEN`` so that its result file does not take the place of the suite's own."""
        if self.beir is not None:
            raise ConfigError(
                "is a BEIR suite, whose questions are its dataset's queries",
                path=str(self.path),
                field="--golden",
                value=str(golden),
                fix="Use --golden with a suite over a corpus folder (corpus: and golden:)",
            )
        if not golden.is_file():
            raise ConfigError(
                "is a folder, not a file" if golden.is_dir() else "does not exist",
                field="--golden",
                value=str(golden),
                fix="Check the path of the golden set",
            )
        return replace(self, golden=golden, name=f"{self.name}-{golden.stem}")

    def with_reranker(self, reranker: str) -> Suite:
        """The same rows, with ``reranker`` the cross-encoder of every row that reranks (``--reranker``)."""
        rows = tuple(
            replace(r, config=r.config.replace(reranker=reranker)) if r.config.rerank else r
            for r in self.rows
        )
        return replace(self, rows=rows)

    def with_support(self, support: str) -> Suite:
        """The same rows, with ``support`` the support check's model of every row (``--support``)."""
        rows = tuple(replace(r, config=r.config.replace(support_model=support)) for r in self.rows)
        return replace(self, rows=rows)

    def one_row(self, row: str, changes: Mapping[str, Any], name: str | None = None) -> Suite:
        """The suite with ``row`` alone, its settings changed by ``changes`` (merged as a row's ``set``
        is) and named ``name`` if given: ``clear-rag ablate SUITE --row ROW``."""
        found = {r.name: r for r in self.rows}
        if row not in found:
            raise ConfigError(
                f"is not a row of the suite {self.name!r}",
                path=str(self.path),
                field="--row",
                value=row,
                fix=f"Name one of its rows: {', '.join(found)}",
            )
        if name is not None and name != row and name in found:
            raise ConfigError(
                "is the name of another row of the suite, which this row would take the place of",
                path=str(self.path),
                field="--name",
                value=name,
                fix="Choose a name the suite does not use",
            )
        config = found[row].config
        if changes:
            config = PipelineConfig.from_mapping(merge(config.to_dict(), changes), source="--set")
        made = Row(name or row, config, found[row].chat)
        return replace(self, rows=(made,), baseline=made.name)

    def check_data(self) -> None:
        """Fail, naming the suite key, if the corpus, golden file or BEIR folder is not there, or the
        golden file is not a well-formed golden set.

        Checked when a suite is about to run rather than when it loads, since a suite over data this
        machine lacks (a BEIR download) must still load for the asset definitions; and checked before
        anything runs, so that no store is made for a corpus that is not there, and the message is
        this one line rather than the ``FileNotFoundError`` of whichever reader came first.
        """
        wanted: list[tuple[str, Path | None, bool | None]] = (  # key, path, a folder (None: either)
            [("beir", self.beir, True)]
            if self.beir is not None
            else [("corpus", self.corpus, None), ("golden", self.golden, False)]
        )
        for key, where, folder in wanted:
            if where is None:
                continue
            if not where.exists():
                what = "does not exist"
            elif folder is not None and where.is_dir() != folder:
                what = "is a file, not a folder" if folder else "is a folder, not a file"
            else:
                continue
            raise ConfigError(
                what, path=str(self.path), field=key, value=str(where), fix=f"Fix the path ({_RELATIVE})"
            )
        if self.training_split is not None and self.beir is not None:
            qrels = qrels_path(self.beir, self.training_split)
            if not qrels.is_file():
                splits = sorted(p.stem for p in (self.beir / "qrels").glob("*.tsv"))
                raise ConfigError(
                    f"names a split whose qrels file {qrels} does not exist",
                    path=str(self.path),
                    field="training_split",
                    value=self.training_split,
                    fix=f"Name a split of {self.beir} that has a qrels file: {', '.join(splits) or 'none'}",
                )
        if self.golden is not None and self.beir is None:
            read_golden(self.golden)  # its keys and shape, so that a typo there costs no ingest first


def merge(base: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``changes`` applied; nested tables (``chunking``) merge key by key."""
    merged = dict(base)
    for key, value in changes.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping) and key != "weights":
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def suite_path(name_or_path: str) -> Path:
    """``tech`` means ``golden/suites/tech.yaml``; anything with a suffix is a path."""
    path = Path(name_or_path)
    return path if path.suffix else SUITES_DIR / f"{name_or_path}.yaml"


def load_suite(name_or_path: str) -> Suite:
    """Read a suite strictly: an unknown key anywhere is an error with the closest known key, since
    a misspelt key silently ignored would measure something other than what the suite says."""
    path = suite_path(name_or_path)
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in SUITES_DIR.glob("*.yaml"))) or "none"
        raise ConfigError("is not a suite file", path=str(path), fix=f"Known suites: {known}")
    data = yamlfile.load(path)
    data = {} if data is None else data
    source = str(path)
    if not isinstance(data, Mapping):
        raise ConfigError(
            "must hold a table of suite keys", path=source, fix=f"Keys: {', '.join(SUITE_KEYS)}"
        )
    yamlfile.check_keys(data, SUITE_KEYS, kind="suite", path=source)
    for key in ("name", "corpus", "golden", "beir", "split", "training_split", "baseline"):
        if key in data and not isinstance(data[key], str):
            raise ConfigError(
                "must be text",
                path=source,
                field=key,
                value=data[key],
                fix=f'Write it as text, quoted if it looks like a number: {key}: "..."',
            )
    base_changes = data.get("base") or {}
    if not isinstance(base_changes, Mapping):
        raise ConfigError(
            "must be a table of settings",
            path=source,
            field="base",
            value=base_changes,
            fix="Write base: {key: value}",
        )
    base = merge(PipelineConfig().to_dict(), base_changes)
    listed = data.get("rows") or []
    if not isinstance(listed, list):
        raise ConfigError(
            "must be a list of rows", path=source, field="rows", fix="Write rows: and under it - name: ..."
        )
    rows = []
    for n, row in enumerate(listed, start=1):
        if not isinstance(row, Mapping) or "name" not in row:
            raise ConfigError("has no name", path=source, field=f"rows[{n}]", fix="Give every row a name:")
        yamlfile.check_keys(row, ROW_KEYS, kind="row", path=source, where=f"rows[{n}]")
        changes = row.get("set") or {}
        if not isinstance(changes, Mapping):
            raise ConfigError(
                "must be a table of settings",
                path=source,
                field=f"rows[{n}].set",
                value=changes,
                fix="Write set: {key: value}",
            )
        chat = row.get("chat")
        if chat is not None and (not isinstance(chat, str) or not chat):
            raise ConfigError(
                "must name a chat model",
                path=source,
                field=f"rows[{n}].chat",
                value=chat,
                fix="Write chat: echo (or smollm2, ollama:MODEL), or leave it out to answer with --chat",
            )
        settings = merge(base, changes)
        config = PipelineConfig.from_mapping(settings, source=f"{source} row {row['name']!r}")
        rows.append(Row(str(row["name"]), config, chat))
    names = [r.name for r in rows]
    if not rows or len(set(names)) != len(names):
        raise ConfigError(
            "needs rows with distinct names", path=source, field="rows", value=names, fix="Fix rows:"
        )
    baseline = str(data.get("baseline", names[0]))
    if baseline not in names:
        raise ConfigError(
            "names no row", path=source, field="baseline", value=baseline, fix=f"Use one of {names}"
        )
    where = {k: Path(data[k]) for k in ("corpus", "golden", "beir") if data.get(k)}
    if "beir" not in where and not {"corpus", "golden"} <= set(where):
        raise ConfigError(
            "needs corpus: and golden:, or beir:", path=source, fix="Name the data the suite runs on"
        )
    training_split = data.get("training_split")
    if training_split is not None:
        if "beir" not in where:
            raise ConfigError(
                "names a qrels split, which only a BEIR suite has",
                path=source,
                field="training_split",
                value=training_split,
                fix="Drop training_split:, or run the suite over a BEIR folder (beir:)",
            )
        if training_split == data.get("split", "test") or not training_split.strip():
            raise ConfigError(
                "must name the split the models were trained on, not the split the suite measures"
                if training_split.strip()
                else "must name a split",
                path=source,
                field="training_split",
                value=training_split,
                fix="Write the training split's name, e.g. training_split: train",
            )
    metrics = data.get("metrics") or []
    computed = (*ANSWER_METRICS, *SPAN_METRICS, *DOC_METRICS)
    if not isinstance(metrics, list) or not all(m in computed for m in metrics):
        raise ConfigError(
            "must be a list of metric names the runner computes",
            path=source,
            field="metrics",
            value=metrics,
            fix=f"Use some of: {', '.join(computed)}",
        )
    spans, generate = data.get("spans", True), data.get("generate", False)
    for key, value, fix in (
        ("spans", spans, "Write spans: false to judge by qrels only"),
        ("generate", generate, "Write generate: true to answer and grade every question"),
    ):
        if not isinstance(value, bool):
            raise ConfigError("must be true or false", path=source, field=key, value=value, fix=fix)
    if any(name in ANSWER_METRICS for name in metrics) and not generate:
        raise ConfigError(
            "names answer grades, which need generated answers",
            path=source,
            field="metrics",
            value=[name for name in metrics if name in ANSWER_METRICS],
            fix="Add generate: true, or drop the answer grades from metrics:",
        )
    return Suite(
        str(data.get("name", path.stem)),
        path,
        tuple(rows),
        baseline,
        **where,
        split=str(data.get("split", "test")),
        spans=spans,
        metrics=tuple(metrics),
        generate=generate,
        training_split=training_split,
    )
