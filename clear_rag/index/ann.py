"""Approximate vector search (faiss HNSW or IVF-flat) behind the exact index's interface.

An experiment, measured in ``bench/ann.py`` (``results/bench/ann.json``): the default vector index
stays exact (``clear_rag.index.vectors.VectorIndex``), and a config selects this one with
``vector_index = "hnsw"`` or ``"ivf"``. It is built in memory from the exact index's vectors when a
pipeline opens, and searched like it: ``search(query_vec, k)`` gives ``(chunk_id, cosine)`` pairs,
best first, ties by id.

- ``hnsw``: faiss ``IndexHNSWFlat`` (Malkov and Yashunin 2018, "Efficient and robust approximate
  nearest neighbor search using Hierarchical Navigable Small World graphs"): ``m`` links per node,
  ``ef_construction`` candidates while linking, ``ef_search`` while searching.
- ``ivf``: faiss ``IndexIVFFlat`` (Jegou et al. 2011): k-means into ``nlist`` lists (default about
  ``sqrt(n)``), a query reads the ``nprobe`` lists nearest to it.

Both score by inner product over the L2-normalised vectors, so a score is the cosine. The hits are
sorted by score and then id, as every stage's are. An approximate index may miss some of the exact
top k; nothing else about the list changes. faiss comes from the ``ann`` extra
(``pip install 'clear-rag[ann]'``), imported only when an index is built.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

import numpy as np
import numpy.typing as npt

from clear_rag.errors import ConfigError
from clear_rag.index.dense import l2_normalise
from clear_rag.index.vectors import VectorIndex

Backend = Literal["hnsw", "ivf"]
BACKENDS: tuple[str, ...] = get_args(Backend)
EXTRA = "pip install 'clear-rag[ann]'"
# IVF's k-means trains on at most TRAIN_PER_LIST vectors per list (faiss's own cap) and at most
# TRAIN_MAX in all (k-means over 1M vectors would take longer than the rest of the build), drawn with
# a fixed seed.
TRAIN_PER_LIST = 256
TRAIN_MAX = 65_536


@dataclass(frozen=True, slots=True)
class AnnSettings:
    """One backend and its parameters. The HNSW defaults reach recall@10 of at least 0.99 in
    bench/ann.py (results/bench/ann.json, site/ann.md) on SciFact's MiniLM vectors and on 100k
    synthetic ones at about half a millisecond; IVF's ``nprobe`` 32 of ``sqrt(n)`` lists falls just
    short of 0.99 on SciFact (it reads nearly half the lists there, so it is no faster than exact)."""

    backend: Backend = "hnsw"
    m: int = 32
    ef_construction: int = 100
    ef_search: int = 128
    nlist: int | None = None  # None: about sqrt(n), at least 1
    nprobe: int = 32
    seed: int = 1234

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"AnnSettings backend={self.backend!r} is not one of {list(BACKENDS)}")
        for name in ("m", "ef_construction", "ef_search", "nprobe"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"AnnSettings {name}={value!r} is invalid; use a positive integer")
        if self.nlist is not None and (isinstance(self.nlist, bool) or self.nlist < 1):
            raise ValueError(f"AnnSettings nlist={self.nlist!r} is invalid; use a positive integer or None")

    def describe(self) -> str:
        """The backend and the settings that shape it, as result rows name them."""
        if self.backend == "hnsw":
            return (
                f"faiss IndexHNSWFlat M={self.m} efConstruction={self.ef_construction} "
                f"efSearch={self.ef_search}"
            )
        nlist = "sqrt(n)" if self.nlist is None else str(self.nlist)
        return f"faiss IndexIVFFlat nlist={nlist} nprobe={self.nprobe}"


def import_faiss() -> Any:
    """faiss, or a ConfigError naming the extra that brings it."""
    try:
        import faiss  # type: ignore[import-untyped, import-not-found, unused-ignore]
    except ImportError:
        raise ConfigError(
            "needs faiss, which is not installed",
            field="vector_index",
            fix=f"Install the approximate-index extra: {EXTRA}; or set vector_index = 'exact'",
        ) from None
    return faiss


def default_nlist(rows: int) -> int:
    """About ``sqrt(n)`` lists: the lower end of faiss's rule of thumb (its wiki's "Guidelines to
    choose an index" says 4 to 16 sqrt(n) from a million vectors up); below that a list needs about
    40 vectors to train, which 4 sqrt(n) does not leave at SciFact's 5,183."""
    return max(1, min(rows, round(math.sqrt(rows))))


class AnnIndex:
    """Vectors keyed by string ids, searched approximately by cosine similarity (see the module)."""

    def __init__(self, dim: int, settings: AnnSettings | None = None) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            raise ValueError(f"AnnIndex dim={dim!r} is invalid; use the embedder's dimension")
        self.dim = dim
        self.settings = settings or AnnSettings()
        self._faiss = import_faiss()
        self._ids: list[str] = []
        self._index: Any = None

    def __len__(self) -> int:
        return len(self._ids)

    @classmethod
    def from_exact(cls, exact: VectorIndex, settings: AnnSettings | None = None) -> AnnIndex:
        """An approximate index over the vectors and ids of ``exact``."""
        index = cls(exact.dim, settings)
        index.build(exact.ids, exact.matrix)
        return index

    def build(self, ids: Sequence[str], vectors: npt.ArrayLike) -> None:
        """Index ``vectors`` (normalised here) under ``ids``, replacing whatever was indexed before."""
        ids = list(ids)
        rows = np.ascontiguousarray(l2_normalise(np.asarray(vectors, dtype=np.float32)))
        if rows.ndim != 2 or rows.shape != (len(ids), self.dim):
            raise ValueError(f"vectors of shape {rows.shape} do not fit {len(ids)} ids of dim {self.dim}")
        if len(set(ids)) != len(ids):
            raise ValueError("ids appear more than once; pass each id once")
        faiss, s = self._faiss, self.settings
        if s.backend == "hnsw":
            index = faiss.IndexHNSWFlat(self.dim, s.m, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = s.ef_construction
        else:
            nlist = min(s.nlist or default_nlist(len(ids)), max(1, len(ids)))
            quantizer = faiss.IndexFlatIP(self.dim)
            index = faiss.IndexIVFFlat(quantizer, self.dim, nlist, faiss.METRIC_INNER_PRODUCT)
            index.cp.seed = s.seed
            train = rows
            cap = min(TRAIN_PER_LIST * nlist, TRAIN_MAX)
            if len(rows) > cap:
                pick = np.random.default_rng(s.seed).choice(len(rows), cap, replace=False)
                train = rows[np.sort(pick)]
            if len(rows):
                index.train(train)
        if len(rows):
            index.add(rows)
        self._index, self._ids = index, ids
        self._set_search_params()

    def _set_search_params(self) -> None:
        s = self.settings
        if s.backend == "hnsw":
            self._index.hnsw.efSearch = s.ef_search
        else:
            self._index.nprobe = s.nprobe

    def tune(self, *, ef_search: int | None = None, nprobe: int | None = None) -> None:
        """Change the search-time parameter without rebuilding (the benchmark sweeps it)."""
        from dataclasses import replace

        self.settings = replace(
            self.settings,
            ef_search=self.settings.ef_search if ef_search is None else ef_search,
            nprobe=self.settings.nprobe if nprobe is None else nprobe,
        )
        if self._index is not None:
            self._set_search_params()

    @property
    def nbytes(self) -> int:
        """Bytes of the index as faiss serialises it: vectors, graph or lists, and its header."""
        if self._index is None:
            return 0
        return int(self._faiss.serialize_index(self._index).nbytes)

    def search(self, query_vec: npt.ArrayLike, k: int) -> list[tuple[str, float]]:
        """Up to ``k`` ``(id, cosine)`` pairs, by score then id; ``[]`` on an empty index or zero query."""
        return self.search_many(np.asarray(query_vec, dtype=np.float64)[None, :], k)[0]

    def search_many(self, query_vecs: npt.ArrayLike, k: int) -> list[list[tuple[str, float]]]:
        """``search`` for each row of ``query_vecs``, in one faiss call."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k={k!r} is invalid; ask for a positive number of results")
        queries = np.asarray(query_vecs, dtype=np.float64)
        if queries.ndim != 2 or queries.shape[1] != self.dim:
            raise ValueError(f"query of shape {queries.shape} does not fit this index of dim {self.dim}")
        if not np.isfinite(queries).all():
            raise ValueError("query vector has NaN or infinite values; check the embedder's output")
        if not self._ids:
            return [[] for _ in range(queries.shape[0])]
        scores, rows = self._index.search(np.ascontiguousarray(l2_normalise(queries)), min(k, len(self._ids)))
        found: list[list[tuple[str, float]]] = []
        for query, row_scores, row_ids in zip(queries, scores.tolist(), rows.tolist(), strict=True):
            if not query.any():
                found.append([])
                continue
            pairs = [(self._ids[r], float(s)) for r, s in zip(row_ids, row_scores, strict=True) if r >= 0]
            pairs.sort(key=lambda pair: (-pair[1], pair[0]))
            found.append(pairs)
        return found


def settings_for(name: str) -> AnnSettings:
    """The settings a config's ``vector_index`` names (``hnsw`` or ``ivf``), at their defaults."""
    if name not in BACKENDS:
        raise ConfigError(
            "is not an approximate index",
            field="vector_index",
            value=name,
            fix=f"Use exact, or one of {', '.join(BACKENDS)}",
        )
    return AnnSettings(backend=name)  # type: ignore[arg-type]  # checked just above
