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
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, Field, model_validator

from clear_rag import yamlfile
from clear_rag.config import PipelineConfig
from clear_rag.errors import ConfigError
from clear_rag.eval.answers import ANSWER_METRICS
from clear_rag.eval.beir import qrels_path
from clear_rag.eval.golden import read_golden
from clear_rag.eval.metrics import DOC_METRICS, SPAN_METRICS
from clear_rag.validation import Bool, Record, Rule, Text, keys_of, parsed, text_rule

SUITES_DIR = Path("golden") / "suites"
_RELATIVE = "a suite's paths are relative to the folder clear-rag runs in, not to the suite file"
COMPUTED = (*ANSWER_METRICS, *SPAN_METRICS, *DOC_METRICS)


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


def _computed(metrics: tuple[str, ...]) -> tuple[str, ...]:
    """``metrics`` if the runner computes each of them."""
    unknown = [name for name in metrics if name not in COMPUTED]
    if unknown:
        raise ValueError(f"names {', '.join(unknown)}, which the runner does not compute")
    return metrics


class RowFile(Record):
    """A row as a suite file writes it: its name, the settings it changes, its own chat model."""

    unknown = keys_of("row")
    rules: ClassVar[Mapping[str, Rule]] = {
        "name": text_rule("name"),
        "set": Rule("Write set: {key: value}", "must be a table of settings"),
        "chat": Rule(
            "Write chat: echo (or smollm2, ollama:MODEL), or leave it out to answer with --chat",
            "must name a chat model",
        ),
    }
    name: Text
    set: dict[str, Any] | None = None
    chat: Annotated[Text, Field(min_length=1)] | None = None


class SuiteFile(Record):
    """A suite file as written (``Suite`` is what it loads to: each row's settings merged over the base)."""

    unknown = keys_of("suite")
    rules: ClassVar[Mapping[str, Rule]] = {
        **{
            k: text_rule(k)
            for k in ("name", "corpus", "golden", "beir", "split", "training_split", "baseline")
        },
        "spans": Rule("Write spans: false to judge by qrels only", "must be true or false"),
        "metrics": Rule(
            f"Use some of: {', '.join(COMPUTED)}", "must be a list of metric names the runner computes"
        ),
        "generate": Rule("Write generate: true to answer and grade every question", "must be true or false"),
        "base": Rule("Write base: {key: value}", "must be a table of settings"),
        "rows": Rule("Write rows: and under it - name: ...", "must be a list of rows"),
    }
    name: Text | None = None
    corpus: Text | None = None
    golden: Text | None = None
    beir: Text | None = None
    split: Text = "test"
    training_split: Text | None = None
    spans: Bool = True
    metrics: Annotated[tuple[Text, ...], AfterValidator(_computed)] | None = None
    generate: Bool = False
    baseline: Text | None = None
    base: dict[str, Any] | None = None
    rows: tuple[RowFile, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> SuiteFile:
        """Rows with distinct names, a baseline among them, data to run on, and keys that agree."""
        names = [r.name for r in self.rows]
        if not names or len(set(names)) != len(names):
            raise ConfigError("needs rows with distinct names", field="rows", value=names, fix="Fix rows:")
        if self.baseline is not None and self.baseline not in names:
            raise ConfigError(
                "names no row", field="baseline", value=self.baseline, fix=f"Use one of {names}"
            )
        if not self.beir and not (self.corpus and self.golden):
            raise ConfigError("needs corpus: and golden:, or beir:", fix="Name the data the suite runs on")
        split = self.training_split
        if split is not None and not self.beir:
            raise ConfigError(
                "names a qrels split, which only a BEIR suite has",
                field="training_split",
                value=split,
                fix="Drop training_split:, or run the suite over a BEIR folder (beir:)",
            )
        if split is not None and (split == self.split or not split.strip()):
            raise ConfigError(
                "must name the split the models were trained on, not the split the suite measures"
                if split.strip()
                else "must name a split",
                field="training_split",
                value=split,
                fix="Write the training split's name, e.g. training_split: train",
            )
        graded = [name for name in self.metrics or () if name in ANSWER_METRICS]
        if graded and not self.generate:
            raise ConfigError(
                "names answer grades, which need generated answers",
                field="metrics",
                value=graded,
                fix="Add generate: true, or drop the answer grades from metrics:",
            )
        return self


def load_suite(name_or_path: str) -> Suite:
    """Read a suite strictly: an unknown key anywhere is an error with the closest known key, since
    a misspelt key silently ignored would measure something other than what the suite says."""
    path = suite_path(name_or_path)
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in SUITES_DIR.glob("*.yaml"))) or "none"
        raise ConfigError("is not a suite file", path=str(path), fix=f"Known suites: {known}")
    data = yamlfile.load(path)
    written = parsed(SuiteFile, {} if data is None else data, str(path))
    base = merge(PipelineConfig().to_dict(), written.base or {})
    rows = tuple(
        Row(
            r.name,
            PipelineConfig.from_mapping(merge(base, r.set or {}), source=f"{path} row {r.name!r}"),
            r.chat,
        )
        for r in written.rows
    )
    return Suite(
        written.name or path.stem,
        path,
        rows,
        written.baseline or rows[0].name,
        **{k: Path(where) for k in ("corpus", "golden", "beir") if (where := getattr(written, k))},
        split=written.split,
        spans=written.spans,
        metrics=written.metrics or (),
        generate=written.generate,
        training_split=written.training_split,
    )
