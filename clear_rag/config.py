"""One typed, frozen configuration for a run: how a question is retrieved, reranked and packed.

The schema is a pydantic model (strict types, unknown keys forbidden); every way a value can be
wrong becomes a ``ConfigError`` naming the file, the key, the value and what is accepted
(``clear_rag.validation``), never a traceback. The config is the single source of truth of a run:
the chunking it names is checked against the store (``clear_rag.session.open_pipeline``), the
reranker it names is built by ``clear_rag.providers.select``.

The hash names result rows and Dagster partitions. It is taken over the settings that differ from
their defaults only, so adding a setting later (with a default that keeps the old behaviour) leaves
every existing hash as it was; changing a default is therefore a change of meaning, and must not
be done silently.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, TypeVar, get_args

from pydantic import BaseModel, Field, ValidationError, field_serializer, field_validator, model_validator

from clear_rag.errors import ConfigError
from clear_rag.validation import Bool, Int, Number, Record, Rule, Text, config_error

Retriever = Literal["keyword", "vector"]
Fusion = Literal["rrf", "minmax"]
# replace: the shortlist in the reranker's order; rrf: its ranks fused with the first stage's (k = rrf_k)
RerankFusion = Literal["replace", "rrf"]
VectorIndexName = Literal["exact", "hnsw", "ivf"]  # exact: clear_rag.index.vectors; else clear_rag.index.ann
Idf = Literal["lucene", "fts5"]  # the same names as clear_rag.index.bm25.IdfName
ChunkerName = Literal["fixed", "structural", "semantic", "whole"]
DEFAULT_RERANKER = "ms-marco-minilm-l6"

# What each key accepts, in words: the second half of every error message.
EXPECTED: dict[str, str] = {
    "retrievers": f"a non-empty list of {list(get_args(Retriever))}, each at most once",
    "depth": "an integer of at least 1 (candidates per first-stage search)",
    "fusion": f"one of {list(get_args(Fusion))}",
    "rrf_k": "an integer of at least 1 (60 is the published default)",
    "weights": "a table of retriever = weight (a number of at least 0), for the retrievers in use",
    "rerank": "true or false",
    "reranker": "a reranker name: ms-marco-minilm-l6 (pulled with `clear-rag models pull`), a folder "
    "holding model.onnx and tokenizer.json, or lexical (the fake)",
    "expand": "an integer from 0 (off) to 8 phrasings",
    "hyde": "true or false",
    "shortlist": "an integer of at least 1 (candidates the reranker re-scores)",
    "rerank_fusion": f"one of {list(get_args(RerankFusion))} (the reranker's order, or its ranks fused with "
    "the first stage's by RRF)",
    "top_k": "an integer of at least 1 (candidates handed to context assembly)",
    "budget_tokens": "an integer of at least 1",
    "vector_index": f"one of {list(get_args(VectorIndexName))} (hnsw and ivf need the ann extra: "
    "pip install 'clear-rag[ann]')",
    "bm25_k1": "a number of at least 0",
    "bm25_b": "a number from 0 to 1",
    "idf": f"one of {list(get_args(Idf))}",
    "stem": "true or false",
    "chunking": "a table of chunker, size, overlap, parsers, contextual",
    "chunking.parsers": "a table of file type to parser backend, e.g. {pdf: flat}",
    "chunking.contextual": "true or false (index each chunk with a document and section prefix)",
    "chunking.chunker": f"one of {list(get_args(ChunkerName))}",
    "chunking.size": "an integer of at least 1 (tokens)",
    "chunking.overlap": "an integer of at least 0 and below the size, or nothing for the chunker's default",
    "support_model": "a reranker name that checks what supports the answer: scifact-minilm-l6 (shipped, "
    "calibrated), ms-marco-minilm-l6, a folder, or lexical (the fake)",
    "constrained": "true or false (every answer sentence must end with the number of a source it was "
    "given, or the answer be the refusal: a grammar on llama.cpp, a JSON schema on Ollama and "
    "OpenAI-compatible servers, and a check of the answer for every model)",
    "answer_deadline_s": "a number of seconds above 0 (how long one chat reply may take in all)",
    "max_answer_chars": "an integer of at least 1 (characters one chat reply may hold)",
}


class _Settings(Record):
    unknown = ("is not a setting", "Known keys: ")

    def __init__(self, **data: Any) -> None:
        at = "chunking" if isinstance(self, ChunkingConfig) else ""
        try:
            found = _non_finite(data, at)
            if found is not None:
                raise _fault(*found, "is not a finite number", also="; nan and inf are not accepted")
            super().__init__(**data)
        except ValidationError as err:
            raise config_error(err, data, type(self).__name__, type(self), at=at) from None
        except ConfigError as err:  # a number that is not finite, or a check across settings (below)
            raise err.at(type(self).__name__) from None

    def replace(self, **changes: Any) -> Any:
        """A copy with ``changes`` applied, validated like a loaded config."""
        return _validated(type(self), {**self._fields(), **changes}, source=type(self).__name__)

    def _fields(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in type(self).model_fields}


class ChunkingConfig(_Settings):
    """How documents become chunks: which parser backend reads each file type, and the chunker."""

    rules: ClassVar[Mapping[str, Rule]] = {
        "": Rule(f"Expected {EXPECTED['chunking']}", "has the wrong type"),
        **{k.removeprefix("chunking."): Rule(f"Expected {said}") for k, said in EXPECTED.items() if "." in k},
    }
    chunker: ChunkerName = "structural"
    size: Int = Field(256, ge=1)
    overlap: Int | None = None  # None: the chunker's default, about 12% of size
    # file type -> parser backend (e.g. {pdf: flat}); a type not named gets its default backend. Held
    # as sorted pairs so that a chunking stays hashable (stores are opened once per chunking).
    parsers: tuple[tuple[Text, Text], ...] = ()
    # index each chunk with a short document and section prefix (clear_rag.index.context); the
    # chunk's span and text, and so every label and citation, stay as they are
    contextual: Bool = False

    @field_validator("parsers", mode="before")
    @classmethod
    def _parsers_from_table(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return tuple(sorted(value.items()))
        return value

    @field_serializer("parsers")
    def _parsers_as_table(self, value: tuple[tuple[str, str], ...]) -> dict[str, str]:
        return dict(value)

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkingConfig:
        if self.overlap is not None and not 0 <= self.overlap < self.size:
            raise _fault("chunking.overlap", self.overlap, "is out of range")
        return self


class PipelineConfig(_Settings):
    """How one question is answered, from first-stage search to the packed context."""

    rules: ClassVar[Mapping[str, Rule]] = {
        key: Rule(f"Expected {said}") for key, said in EXPECTED.items() if "." not in key
    }
    retrievers: tuple[Retriever, ...] = Field(("keyword", "vector"), min_length=1)
    depth: Int = Field(100, ge=1)  # candidates each first-stage retriever returns
    fusion: Fusion = "rrf"
    rrf_k: Int = Field(60, ge=1)
    weights: dict[str, Annotated[Number, Field(ge=0)]] = Field(default_factory=dict)  # min-max; missing = 1
    rerank: Bool = False
    reranker: Text = DEFAULT_RERANKER  # which cross-encoder re-scores the shortlist when rerank is on
    expand: Int = Field(0, ge=0, le=8)  # other phrasings the chat model writes (multi-query); 0 = off
    hyde: Bool = False  # also search with a hypothetical answer passage, embedded as a document
    shortlist: Int = Field(50, ge=1)
    rerank_fusion: RerankFusion = "replace"
    top_k: Int = Field(10, ge=1)
    budget_tokens: Int = Field(1500, ge=1)
    # exact search unless a config asks for faiss's HNSW or IVF-flat (an experiment: bench/ann.py)
    vector_index: VectorIndexName = "exact"
    bm25_k1: Number = Field(1.2, ge=0)
    bm25_b: Number = Field(0.75, ge=0, le=1)
    idf: Idf = "lucene"
    stem: Bool = False
    chunking: ChunkingConfig = Field(default_factory=ChunkingConfig)
    # The cross-encoder the support check reads each answer sentence against the context with
    # (clear_rag.generate.support); the shipped one carries a calibration fitted on SciFact.
    support_model: Text = "scifact-minilm-l6"
    # Answers that must cite: the chat model is asked with cite=<number of sources>
    # (clear_rag.providers.cite: a grammar for llama.cpp, a JSON schema for Ollama and OpenAI-compatible
    # servers), so each sentence ends with a [n] of a passage it was given or the answer is the refusal;
    # and every answer is checked against that (clear_rag.generate.constrain), the trace's
    # steps["constraint"] saying how one broke it. Off: the model cites as the prompt asks, or not.
    constrained: Bool = False
    # Bounds on every chat reply (the answer, a rewrite, phrasings, a HyDE passage), enforced by the
    # planner for every chat model; a reply that passes one ends in a ModelError naming it. Neither
    # shortens a normal answer. 300 s: a 7B model on a laptop CPU (about 5 tokens/s) reads 1,500
    # tokens of context and writes the 256 it is asked for in under two minutes, even after loading.
    # 20,000 characters: about 5,000 tokens, twenty times the 256 asked for, so only a server that
    # ignores max_tokens (or loops, or streams garbage) reaches it; the predecessor had no bound and
    # a server streaming 1 MB tokens filled 4 GB in a minute.
    answer_deadline_s: Number = Field(300.0, gt=0)
    max_answer_chars: Int = Field(20_000, ge=1)

    @model_validator(mode="after")
    def _consistent(self) -> PipelineConfig:
        if len(set(self.retrievers)) != len(self.retrievers):
            raise _fault("retrievers", list(self.retrievers), "names a retriever twice")
        for name, weight in self.weights.items():
            if name not in self.retrievers:
                raise _fault(f"weights.{name}", weight, "weighs a retriever that is not in use")
        if not self.reranker:
            raise _fault("reranker", self.reranker, "is empty")
        if not self.support_model:
            raise _fault("support_model", self.support_model, "is empty")
        return self

    def to_dict(self) -> dict[str, Any]:
        """Every setting, as JSON-ready plain data (what result rows and traces record)."""
        data = self.model_dump(mode="json")
        data["weights"] = dict(sorted(self.weights.items()))
        return data

    def changed(self) -> dict[str, Any]:
        """Only the settings that differ from the defaults, nested tables likewise."""
        return _delta(self.to_dict(), PipelineConfig().to_dict())

    def hash(self) -> str:
        """First 12 hex digits of the SHA-256 of the canonical JSON of the non-default settings."""
        canonical = json.dumps(self.changed(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:12]

    def replace(self, **changes: Any) -> PipelineConfig:
        replaced: PipelineConfig = super().replace(**changes)
        return replaced

    def needs_chat(self) -> bool:
        """Whether a chat model writes something retrieval searches with (phrasings, a HyDE passage)."""
        return self.expand > 0 or self.hyde

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: str = "config") -> PipelineConfig:
        if not isinstance(data, Mapping):
            raise ConfigError("must hold a table of settings", path=source, fix=f"Known keys: {_known(cls)}")
        return _validated(cls, dict(data), source=source)

    @classmethod
    def from_file(cls, path: str | Path) -> PipelineConfig:
        """Load a ``.toml``, ``.yaml`` or ``.yml`` file."""
        path = Path(path)
        if path.suffix not in (".toml", ".yaml", ".yml"):
            raise ConfigError(
                "is not a config file type clear-rag reads",
                path=str(path),
                field="extension",
                value=path.suffix,
                fix="Use .toml, .yaml or .yml",
            )
        from clear_rag import yamlfile  # the size limit (and, for YAML, the alias limits) for both

        raw = yamlfile.read_bytes(path)
        if path.suffix == ".toml":
            data: Any = _toml(yamlfile.decode(raw, str(path)), str(path))
        else:
            data = yamlfile.parse(raw, str(path))
        return cls.from_mapping({} if data is None else data, source=str(path))


def _toml(text: str, source: str) -> dict[str, Any]:
    """Parsed TOML, or one line naming the file, line and column of the first syntax error."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        # tomllib says "Invalid value (at line 1, column 10)"; lift the place into the path
        found = re.fullmatch(r"(.*) \(at line (\d+), column (\d+)\)", str(err))
        what, where = (found[1], f"{source}:{found[2]}:{found[3]}") if found else (str(err), source)
        raise ConfigError(
            f"is not valid TOML: {what[:1].lower()}{what[1:]}",
            path=where,
            fix="Fix it at that line and column",
        ) from None


def _non_finite(data: Any, key: str = "") -> tuple[str, float] | None:
    """The first ``nan`` or ``inf`` in ``data`` and the dotted key it sits at, or ``None``.

    TOML's ``nan`` and ``inf`` and YAML's ``.nan`` and ``.inf`` are floats. A range check alone
    calls ``nan`` "out of range" (of a bound it has no place on) and lets ``inf`` through every lower
    bound, into a run and into the config's hash as ``Infinity``, which is not JSON. Checked over the
    raw data before any field sees it, so every float setting is covered, the ones added later too.
    """
    if isinstance(data, float) and not math.isfinite(data):
        return key, data
    if isinstance(data, list | tuple):  # an item is reported as its list's key, as pydantic's errors are
        children = [(key, item) for item in data]
    elif isinstance(data, Mapping):
        children = [(f"{key}.{name}" if key else str(name), value) for name, value in data.items()]
    else:
        children = []
    for child_key, value in children:
        found = _non_finite(value, child_key)
        if found is not None:
            return found
    return None


def _known(kind: type[BaseModel]) -> str:
    return ", ".join(kind.model_fields)


def _fault(key: str, value: Any, what: str, *, also: str = "") -> ConfigError:
    """``what`` is wrong with the setting ``key``, said with what it accepts (``_Settings`` adds where)."""
    expected = EXPECTED.get(key) or EXPECTED.get(key.split(".")[0], "a number")
    return ConfigError(what, field=key, value=value, fix=f"Expected {expected}{also}")


def _delta(values: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        default = defaults.get(key)
        if isinstance(value, dict) and isinstance(default, dict) and key != "weights":
            nested = _delta(value, default)
            if nested:
                out[key] = nested
        elif value != default:
            out[key] = value
    return out


M = TypeVar("M", bound=_Settings)


def _validated(kind: type[M], data: dict[str, Any], *, source: str) -> M:
    try:
        return kind(**data)
    except ConfigError as err:
        # raised by __init__ with the class name as its source; say which file or row it came from
        raise err.at(source) from None
