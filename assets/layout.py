"""How one ablation suite maps onto assets: keys, partitions, partition mappings, the automation condition.

Partitions are read from the suite file when the definitions load: one evaluation partition per row
(key = row name), one store partition per chunking the rows use, one corpus partition per file. Adding
or removing a row, a chunking or a file therefore needs the definitions reloaded (``dagster dev``
reloads them from the UI; ``python -m assets.run`` builds them afresh every time). Editing what a row
sets, or a file's content, needs no reload: the observable sources see it.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dagster import (
    AssetExecutionContext,
    AssetKey,
    AutomationCondition,
    StaticPartitionMapping,
    StaticPartitionsDefinition,
)

from clear_rag.config import ChunkingConfig
from clear_rag.errors import ConfigError
from clear_rag.eval import beir
from clear_rag.eval.labels import label_files
from clear_rag.eval.suite import Row, Suite, load_suite, suite_path
from clear_rag.ingest import discover
from clear_rag.parse.registry import default_backend, file_type_of

# Bump when an asset's code changes what it produces: every partition of that asset is then requested.
CODE_VERSION = "1"

# Run what an upstream *data version* changed under, or what new code produces differently, or what is
# missing. ``AutomationCondition.eager()`` would also fire when an upstream was re-materialized with
# identical content, which is exactly what must cost nothing here. ``missing()`` stands outside
# ``since_last_handled()`` on purpose: there, ``newly_missing()`` is reset by ``initial_evaluation()``
# on the first tick, so a graph never materialized would never be requested (and a partition whose run
# failed would not be requested again once the failure is fixed).
_TRIGGER: AutomationCondition[Any] = (
    AutomationCondition.newly_missing()
    | AutomationCondition.any_deps_match(AutomationCondition.data_version_changed())
    | AutomationCondition.code_version_changed()
)
AUTOMATION = (
    (_TRIGGER.since_last_handled() | AutomationCondition.missing())
    & ~AutomationCondition.any_deps_missing()
    & ~AutomationCondition.any_deps_in_progress()
    & ~AutomationCondition.in_progress()
)

# Inside ``dagster dev`` the automation daemon observes the sources once a minute, so an edited suite
# row or corpus file is noticed without anyone pressing a button. ``assets.run`` observes them itself.
OBSERVE = AutomationCondition.cron_tick_passed("* * * * *")


def partition_key() -> str:
    """The running step's partition key.

    Read from the current context rather than a ``context`` parameter: Dagster checks that parameter's
    annotation by identity, which a postponed annotation (``from __future__ import annotations``, a
    string) never passes.
    """
    return str(AssetExecutionContext.get().partition_key)


def digest(*parts: str) -> str:
    """The first 16 hex digits of the SHA-256 of ``parts`` joined by newlines."""
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def parse_key(file_key: str, chunking: ChunkingConfig) -> str:
    """The parsed partition of one corpus file for one chunking: the file and the backend that
    chunking's parsers choose for its type, e.g. ``pdf/aapl.pdf@flat`` or ``notes.md@markdown-it``."""
    kind = file_type_of(file_key)
    return f"{file_key}@{dict(chunking.parsers).get(kind) or default_backend(kind)}"


def chunk_key(chunking: ChunkingConfig) -> str:
    """A readable partition key for a chunking, e.g. ``structural-256``, ``fixed-256-overlap128`` or
    ``structural-256-pdf.flat`` (a parser backend other than the default)."""
    overlap = "" if chunking.overlap is None else f"-overlap{chunking.overlap}"
    parsers = "".join(f"-{kind}.{backend}" for kind, backend in chunking.parsers)
    contextual = "-contextual" if chunking.contextual else ""
    return f"{chunking.chunker}-{chunking.size}{overlap}{parsers}{contextual}"


@dataclass(frozen=True)
class Layout:
    """One suite's shape as the definitions see it (what partitions exist), fixed at load time."""

    suite: Suite
    prefix: str
    embedder: str
    chunkings: dict[str, ChunkingConfig]
    files: tuple[str, ...]
    chat: str = ""  # the chat model's name, where some row answers, expands the query or uses HyDE
    results_dir: str = ""  # where the result file goes: moving it re-writes the file there
    reranker: str = ""  # the cross-encoder of the rows that rerank, where the run names one

    @classmethod
    def load(cls, name_or_path: str, *, embedder: str, chat: str = "", reranker: str = "") -> Layout:
        suite = _with(load_suite(name_or_path), reranker)
        chunkings = {chunk_key(r.config.chunking): r.config.chunking for r in suite.rows}
        if suite.beir is not None:
            # A BEIR corpus is one JSON-lines file; its documents are skipped one by one by content hash.
            keys: tuple[str, ...] = (beir.CORPUS,)
        elif suite.corpus is not None and suite.golden is not None:
            files, _ = discover([suite.corpus])
            keys = tuple(p.relative_to(suite.corpus).as_posix() for p in files)
        else:
            raise ConfigError(
                "has neither a corpus: and golden: pair nor a beir: folder",
                path=str(suite.path),
                fix="Name the corpus folder and golden file, or a BEIR folder",
            )
        prefix = re.sub(r"\W", "_", suite.name)
        uses_chat = any(suite.needs_chat(r) for r in suite.rows)
        return cls(
            suite,
            prefix,
            embedder,
            dict(sorted(chunkings.items())),
            keys,
            chat if uses_chat else "",
            reranker=reranker,
        )

    def command(self, results_dir: str) -> str:
        """The command that brings this suite's result file in ``results_dir`` up to date: the graph's
        own runner, with the models it was loaded with (what the file records as its command)."""
        bundled = self.suite.path.resolve() == suite_path(self.suite.name).resolve()
        return shlex.join(
            [
                "python", "-m", "assets.run",
                "--suite", self.suite.name if bundled else str(self.suite.path),
                "--embedder", self.embedder,
                *(["--chat", self.chat] if self.chat else []),
                *(["--reranker", self.reranker] if self.reranker else []),
                "--results-dir", results_dir,
            ]
        )  # fmt: skip

    def key(self, name: str) -> AssetKey:
        return AssetKey([self.prefix, name])

    @property
    def rows(self) -> StaticPartitionsDefinition:
        return StaticPartitionsDefinition([r.name for r in self.suite.rows])

    @property
    def corpus(self) -> StaticPartitionsDefinition:
        return StaticPartitionsDefinition(list(self.files))

    def parses(self) -> dict[str, set[str]]:
        """Each parsed partition (a file and a backend) to the store partitions (chunkings) that read it."""
        found: dict[str, set[str]] = {}
        for key, chunking in self.chunkings.items():
            for file_key in self.files:
                found.setdefault(parse_key(file_key, chunking), set()).add(key)
        return dict(sorted(found.items()))

    @property
    def parsed(self) -> StaticPartitionsDefinition:
        """One partition per corpus file and parser backend some chunking of the suite uses."""
        return StaticPartitionsDefinition(list(self.parses()))

    def file_to_parses(self) -> StaticPartitionMapping:
        """Each corpus partition (a file) to its parsed partitions (one per backend)."""
        found: dict[str, set[str]] = {}
        for key in self.parses():
            found.setdefault(key.rpartition("@")[0], set()).add(key)
        return StaticPartitionMapping(found)

    def parses_to_stores(self) -> StaticPartitionMapping:
        """Each parsed partition to the store partitions whose chunking parses with its backend."""
        return StaticPartitionMapping(self.parses())

    def stores(self, retriever: str | None = None) -> StaticPartitionsDefinition:
        """The chunkings (all, or only those whose rows use ``retriever``) as partitions."""
        return StaticPartitionsDefinition(sorted(self.rows_by_chunking(retriever)))

    def rows_by_chunking(self, retriever: str | None = None) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for row in self.suite.rows:
            if retriever is None or retriever in row.config.retrievers:
                found.setdefault(chunk_key(row.config.chunking), set()).add(row.name)
        return found

    def to_rows(self, retriever: str) -> StaticPartitionMapping:
        """Each index partition (a chunking) to the evaluation partitions (rows) that search it."""
        return StaticPartitionMapping(self.rows_by_chunking(retriever))

    def same_chunking(self, retriever: str) -> StaticPartitionMapping:
        """Store partition to the same chunking's index partition, where rows use ``retriever``."""
        return StaticPartitionMapping({key: key for key in self.rows_by_chunking(retriever)})

    def analyzers(self, key: str) -> list[bool]:
        """Which BM25 analyzers (stemmed or not) the keyword rows of chunking ``key`` search."""
        return sorted(
            {
                r.config.stem
                for r in self.suite.rows
                if "keyword" in r.config.retrievers and chunk_key(r.config.chunking) == key
            }
        )

    def code_version(self, *extra: str) -> str:
        """The code version of an asset; ``extra`` names what else changes its output (the embedder,
        the partition set) so that changing it requests every partition again."""
        return digest(CODE_VERSION, *extra)

    def current(self) -> Suite:
        """The suite file as it is now (a row's settings may have changed since the definitions loaded)."""
        return _with(load_suite(str(self.suite.path)), self.reranker)

    def row(self, suite: Suite, name: str) -> Row:
        """Row ``name`` of the suite as it is now; an error if it moved to a chunking the definitions
        do not know (its store partition and index edges would be wrong until a reload)."""
        loaded = {r.name: chunk_key(r.config.chunking) for r in self.suite.rows}
        for row in suite.rows:
            if row.name == name and loaded.get(name) == chunk_key(row.config.chunking):
                return row
        raise ConfigError(
            "has no row of this name with the chunking the definitions loaded",
            path=str(suite.path),
            value=name,
            fix="Reload the definitions (a row was renamed, removed or given another chunking)",
        )

    def corpus_path(self, file_key: str) -> Path:
        return (self.suite.beir or self.suite.corpus or Path()) / file_key

    @property
    def label_files(self) -> list[Path]:
        """What the labels are read from: the golden file, or a BEIR folder's qrels (and rationales)."""
        return label_files(self.suite)


def _with(suite: Suite, reranker: str) -> Suite:
    return suite.with_reranker(reranker) if reranker else suite


def with_vectors(rows: Sequence[Row]) -> bool:
    return any("vector" in row.config.retrievers for row in rows)
