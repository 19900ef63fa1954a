"""One typed, frozen configuration for a retrieval pipeline, and its stable hash.

The hash names result rows and (later) Dagster partitions, so it covers every setting that can
change a ranking and nothing else: two configs that retrieve the same way hash the same.
Loading from TOML or YAML rejects unknown keys, wrong types and out-of-range values with the file,
the key, the value and what was expected.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from clear_rag.errors import ConfigError

Retriever = Literal["keyword", "vector"]
Fusion = Literal["rrf", "minmax"]
Idf = Literal["lucene", "fts5"]  # the same names as clear_rag.index.bm25.IdfName
ChunkerName = Literal["fixed", "structural", "whole"]


@dataclass(frozen=True, slots=True)
class ChunkingConfig:
    chunker: ChunkerName = "structural"
    size: int = 256
    overlap: int | None = None  # None: the chunker's default, about 12% of size


@dataclass(frozen=True, slots=True)
class PipelineConfig:
    """How one question is answered, from first-stage search to the packed context."""

    retrievers: tuple[Retriever, ...] = ("keyword", "vector")
    depth: int = 100  # candidates each first-stage retriever returns
    fusion: Fusion = "rrf"
    rrf_k: int = 60
    weights: Mapping[str, float] = field(default_factory=dict)  # min-max fusion only; missing = 1.0
    rerank: bool = False
    expand: int = 0  # other phrasings the chat model writes, each searched (multi-query); 0 = off
    hyde: bool = False  # also search with a hypothetical answer passage, embedded as a document
    shortlist: int = 50  # candidates the reranker re-scores
    top_k: int = 10  # candidates handed to context assembly
    budget_tokens: int = 1500
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    idf: Idf = "lucene"
    stem: bool = False
    chunking: ChunkingConfig = field(default_factory=ChunkingConfig)

    def __post_init__(self) -> None:
        _validate(self, source="PipelineConfig")

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["retrievers"] = list(self.retrievers)
        data["weights"] = dict(sorted(self.weights.items()))
        return data

    def hash(self) -> str:
        """First 12 hex digits of the SHA-256 of the canonical JSON of every setting."""
        canonical = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:12]

    def replace(self, **changes: Any) -> PipelineConfig:
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: str = "config") -> PipelineConfig:
        _check_keys(data, cls, source, prefix="")
        values = dict(data)
        if "chunking" in values:
            chunking = values["chunking"]
            if not isinstance(chunking, Mapping):
                raise _wrong(source, "chunking", chunking, "a table of chunker, size, overlap")
            _check_keys(chunking, ChunkingConfig, source, prefix="chunking.")
            _check_types(chunking, ChunkingConfig, source, prefix="chunking.")
            values["chunking"] = ChunkingConfig(**chunking)
        if "retrievers" in values and isinstance(values["retrievers"], list):
            values["retrievers"] = tuple(values["retrievers"])
        _check_types({k: v for k, v in values.items() if k != "chunking"}, cls, source, prefix="")
        try:
            return cls(**values)
        except ConfigError as err:
            raise ConfigError(err.what, fix=err.fix, path=source, field=err.field, value=err.value) from None

    @classmethod
    def from_file(cls, path: str | Path) -> PipelineConfig:
        """Load a ``.toml``, ``.yaml`` or ``.yml`` file."""
        path = Path(path)
        try:
            raw = path.read_text(encoding="utf-8")
        except OSError as err:
            raise ConfigError(
                f"cannot be read ({err.strerror})", path=str(path), fix="Check the path"
            ) from err
        try:
            if path.suffix == ".toml":
                data: Any = tomllib.loads(raw)
            elif path.suffix in (".yaml", ".yml"):
                import yaml

                data = yaml.safe_load(raw) or {}
            else:
                raise ConfigError(
                    "is not a config file type clear-rag reads",
                    path=str(path),
                    field="extension",
                    value=path.suffix,
                    fix="Use .toml, .yaml or .yml",
                )
        except (tomllib.TOMLDecodeError, ValueError) as err:
            if isinstance(err, ConfigError):
                raise
            raise ConfigError(f"is not valid ({err})", path=str(path), fix="Fix the syntax") from err
        if not isinstance(data, Mapping):
            raise ConfigError("must hold a table of settings", path=str(path), fix="See docs for keys")
        return cls.from_mapping(data, source=str(path))


def _check_keys(data: Mapping[str, Any], kind: type, source: str, *, prefix: str) -> None:
    known = [f.name for f in dataclasses.fields(kind)]
    for key in data:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f"Did you mean {close[0]!r}? " if close else ""
            raise ConfigError(
                "is not a setting",
                path=source,
                field=f"{prefix}{key}",
                fix=f"{hint}Known keys: {', '.join(known)}",
            )


_SCALARS: dict[str, tuple[type, ...]] = {
    "depth": (int,),
    "rrf_k": (int,),
    "shortlist": (int,),
    "top_k": (int,),
    "budget_tokens": (int,),
    "size": (int,),
    "overlap": (int, type(None)),
    "bm25_k1": (int, float),
    "bm25_b": (int, float),
    "rerank": (bool,),
    "hyde": (bool,),
    "expand": (int,),
    "stem": (bool,),
    "weights": (Mapping,),
}


def _check_types(data: Mapping[str, Any], kind: type, source: str, *, prefix: str) -> None:
    for key, value in data.items():
        expected = _SCALARS.get(key)
        if expected is None:
            continue
        is_bool = isinstance(value, bool)
        if not isinstance(value, expected) or (is_bool and bool not in expected):
            names = " or ".join("null" if t is type(None) else t.__name__ for t in expected)
            raise _wrong(source, f"{prefix}{key}", value, names)


def _wrong(source: str, key: str, value: object, expected: str) -> ConfigError:
    return ConfigError("has the wrong type", path=source, field=key, value=value, fix=f"Expected {expected}")


def _validate(config: PipelineConfig, *, source: str) -> None:
    def fail(key: str, value: object, expected: str) -> None:
        raise ConfigError("is out of range", path=source, field=key, value=value, fix=f"Expected {expected}")

    allowed = get_args(Retriever)
    if not config.retrievers or any(r not in allowed for r in config.retrievers):
        fail("retrievers", list(config.retrievers), f"a non-empty list of {list(allowed)}")
    if len(set(config.retrievers)) != len(config.retrievers):
        fail("retrievers", list(config.retrievers), "each retriever at most once")
    if config.fusion not in get_args(Fusion):
        fail("fusion", config.fusion, f"one of {list(get_args(Fusion))}")
    if config.idf not in get_args(Idf):
        fail("idf", config.idf, f"one of {list(get_args(Idf))}")
    for key in ("depth", "rrf_k", "shortlist", "top_k", "budget_tokens"):
        if getattr(config, key) < 1:
            fail(key, getattr(config, key), "an integer of at least 1")
    if not 0 <= config.expand <= 8:
        fail("expand", config.expand, "0 (off) to 8 phrasings")
    if config.bm25_k1 < 0:
        fail("bm25_k1", config.bm25_k1, "a number of at least 0")
    if not 0 <= config.bm25_b <= 1:
        fail("bm25_b", config.bm25_b, "a number from 0 to 1")
    for name, weight in config.weights.items():
        if name not in config.retrievers:
            fail(f"weights.{name}", weight, f"weights only for the retrievers {list(config.retrievers)}")
        if weight < 0:
            fail(f"weights.{name}", weight, "a weight of at least 0")
    chunking = config.chunking
    if chunking.chunker not in get_args(ChunkerName):
        fail("chunking.chunker", chunking.chunker, f"one of {list(get_args(ChunkerName))}")
    if chunking.size < 1:
        fail("chunking.size", chunking.size, "an integer of at least 1")
    if chunking.overlap is not None and not 0 <= chunking.overlap < chunking.size:
        fail("chunking.overlap", chunking.overlap, f"0 to {chunking.size - 1} tokens")
