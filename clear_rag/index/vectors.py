"""Exact vector search over an L2-normalised float32 matrix.

One matrix-vector product scores every vector (``clear_rag.index.dense``), ``np.argpartition``
finds the top k without sorting the rest, and only the winners are sorted, by score and then by id
so that two runs give the same list (``clear_rag.index.selection``). Exact search over a few hundred
thousand chunks takes milliseconds; an approximate index is worth its recall loss only as a measured
experiment (``clear_rag.index.ann``, ``bench/ann.py``).

From ``PREPASS_MIN`` vectors on, one query is answered by the int8 pre-pass of
:mod:`clear_rag.index.prepass`: a quantised copy (a quarter of the bytes) rules out every row that
provably cannot reach the top k, and the rest are scored exactly in float32. The list is the one a
full exact pass gives (the proof is in that module, the differential test in
``tests/index/test_ann.py``); it reads about a quarter of the memory a full pass reads, which is what
bounds single-query speed. Until its compiled loops are ready (:mod:`clear_rag.index.compiled`
compiles them in the background, never in a question) and where numba is not installed, a search is
the full product.

Many queries at once (``search_many``) are bound by arithmetic, not memory: one matrix product scores
a block of queries against every vector, and the compiled batched top k of
:mod:`clear_rag.index.batched` takes it a tile of vectors at a time, keeping each query's best as
the scores come (why, and what it costs beside faiss's flat index, is in that module). Until it is
ready, each line of the product is ranked by ``selection.top_k``: the same lists.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from clear_rag.atomic import write_atomic
from clear_rag.errors import StoreError
from clear_rag.index import compiled, dense
from clear_rag.index.dense import (
    FloatArray,
    default_threads,
    l2_normalise,
    scores_of,
    shared_pool,
    unit_rows,
)
from clear_rag.index.files import REBUILD, write_array
from clear_rag.index.selection import top_k

VECTORS_FILE = "vectors.npy"
IDS_FILE = "ids.json"
FILES = (VECTORS_FILE, IDS_FILE)  # every file ``save`` writes


# From this many vectors on, ``search`` runs the int8 pre-pass (clear_rag.index.prepass). Below it the
# matrix is a few MB, one product takes well under a millisecond, and the copy is not worth keeping.
PREPASS_MIN = 4096


def _batched() -> ModuleType | None:
    """The compiled batched top k (:mod:`clear_rag.index.batched`) once it is loaded, or None: then
    ``search_many`` ranks each line of a product on numpy, the same lists."""
    ready = compiled.kernels()
    return ready.batched if ready is not None else None


def _prepass() -> ModuleType | None:
    """The compiled pre-pass once it is loaded, or None (numba not installed, or its compile still
    running in the background: :mod:`clear_rag.index.compiled`): then a search is one full product,
    which finds the same rows, its scores equal to the pre-pass's to float32 rounding (BLAS sums a
    row in another order than the compiled loop)."""
    ready = compiled.kernels()
    return ready.prepass if ready is not None else None


# Queries scored together by search_many on numpy: their scores take 4 bytes per query and vector, so
# a block holds at least QUERY_BLOCK queries and otherwise as many as SCORES_BYTES of scores allow (all
# 300 of bench/dense.py's queries at 5k vectors in one product, which took a fifth less time than 256
# and then 44; 256 at 100k).
QUERY_BLOCK = 256
SCORES_BYTES = 100_000_000
# Queries per call of the compiled batched top k, which holds their scores for batched.TILE vectors at a
# time (4 MB at 512): a product taking more queries at once packs each tile of the matrix fewer times
# (faiss's IndexFlatIP takes 4,096 at a time).
BATCH_QUERIES = 512


def _check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k={k!r} is invalid; ask for a positive number of results")


class VectorIndex:
    """Vectors keyed by string ids, searched exactly by cosine similarity.

    Vectors are normalised on the way in, so a dot product is the cosine. ``add`` and ``remove``
    change the index in place without touching other vectors; re-adding an id replaces its vector.
    """

    def __init__(self, dim: int, *, threads: int | None = None) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            raise ValueError(f"VectorIndex dim={dim!r} is invalid; use the embedder's dimension")
        self.dim = dim
        # Threads one search may use on a large matrix (see dense.PARALLEL_MIN); 1 scores on the caller's.
        self.threads = default_threads() if threads is None else max(1, threads)
        self._ids: list[str] = []
        self._row: dict[str, int] = {}
        # Rows [0, len(ids)) of the buffer are live. The buffer grows by doubling, so adding one
        # document at a time costs amortised O(rows added), not a copy of the whole matrix each time.
        self._buffer: FloatArray = np.zeros((0, dim), dtype=np.float32)
        # The pre-pass's int8 copy of the live rows, made at the first search that needs it and
        # dropped by every add and remove.
        self._quantised: Any = None
        # Each row's place in id order, and the ids as an array, for search_many's compiled top k;
        # made when first needed and dropped with the int8 copy.
        self._rank: npt.NDArray[np.intp] | None = None
        self._id_array: npt.NDArray[np.object_] | None = None

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self._row

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self._ids)

    @property
    def matrix(self) -> FloatArray:
        """The live rows, in the order of ``ids``; read-only."""
        view = self._buffer[: len(self._ids)]
        view.flags.writeable = False
        return view

    def add(self, ids: Sequence[str], vectors: npt.ArrayLike) -> None:
        """Add or replace the vectors of ``ids``; rejects zero and non-finite vectors by id."""
        ids = list(ids)
        rows = np.asarray(vectors, dtype=np.float64)
        if not ids and rows.size == 0:
            return
        if rows.ndim != 2 or rows.shape != (len(ids), self.dim):
            raise ValueError(
                f"vectors of shape {rows.shape} do not fit {len(ids)} ids; expected ({len(ids)}, {self.dim})"
            )
        if len(set(ids)) != len(ids):
            repeated = sorted({i for i in ids if ids.count(i) > 1})
            raise ValueError(f"ids {repeated} appear more than once in one add(); pass each id once")
        finite = np.logical_and.reduce(np.isfinite(rows), axis=1)
        nonzero = np.logical_or.reduce(rows != 0.0, axis=1)
        # Checked for all rows at once (a loop over rows took half a second at 100k); the first
        # bad row in order is reported, as before.
        bad = np.flatnonzero(~(finite & nonzero))
        if bad.size:
            row = int(bad[0])
            if not finite[row]:
                raise ValueError(f"vector for id {ids[row]!r} has NaN or infinite values; re-embed it")
            raise ValueError(
                f"vector for id {ids[row]!r} is all zeros and has no direction; "
                "skip texts without content before embedding"
            )
        normalised = l2_normalise(rows)
        self._quantised = self._rank = self._id_array = None
        fresh = [i for i in ids if i not in self._row]
        self._reserve(len(self._ids) + len(fresh))
        for chunk_id in fresh:
            self._row[chunk_id] = len(self._ids)
            self._ids.append(chunk_id)
        self._buffer[[self._row[i] for i in ids]] = normalised

    def remove(self, ids: Iterable[str]) -> int:
        """Remove the vectors of ``ids``; ids not in the index are ignored. Returns how many went."""
        gone = {i for i in ids if i in self._row}
        if not gone:
            return 0
        keep = [row for row, chunk_id in enumerate(self._ids) if chunk_id not in gone]
        self._quantised = self._rank = self._id_array = None
        self._reserve(len(self._ids))
        # Fancy indexing copies first, so compacting the buffer onto itself is safe.
        self._buffer[: len(keep)] = self._buffer[keep]
        self._ids = [self._ids[row] for row in keep]
        self._row = {chunk_id: row for row, chunk_id in enumerate(self._ids)}
        return len(gone)

    def search(self, query_vec: npt.ArrayLike, k: int) -> list[tuple[str, float]]:
        """The ``k`` ids most similar to ``query_vec`` with their cosines, best first.

        An empty index, or a zero query (a text with no words), gives ``[]``: a vector with no
        direction is similar to nothing, and ranking everything at 0.0 would only list ids.
        """
        _check_k(k)
        query, norm = self._unit_queries(query_vec, ndim=1)
        if not self._ids or not norm[0]:
            return []
        if len(self._ids) >= PREPASS_MIN:
            found = self._search_prepass(query, k)
            if found is not None:
                return found
        scores = scores_of(self.matrix, query, self.threads)
        return top_k(scores, self._ids, k)

    def _search_prepass(self, query: FloatArray, k: int) -> list[tuple[str, float]] | None:
        """``search`` through the int8 pre-pass (None while it is not ready): bounds for every row, in
        ``threads`` slices of rows at once (the kernels release the GIL), then the survivors scored
        exactly."""
        prepass = _prepass()
        if prepass is None:
            return None
        try:
            return self._prepass_with(prepass, query, k)
        except TypeError as err:  # no compiled version for these argument types, and none may be made
            compiled.fall_back(err)
            return None

    def _prepass_with(self, prepass: ModuleType, query: FloatArray, k: int) -> list[tuple[str, float]]:
        if self._quantised is None:
            self._quantised = prepass.quantise(self.matrix)
        quantised = self._quantised
        rows = len(self._ids)
        lo, hi = np.empty(rows, dtype=np.float32), np.empty(rows, dtype=np.float32)
        threads = self.threads if quantised.codes.size >= dense.PARALLEL_MIN else 1
        bounds = [min(rows, round(rows * i / threads)) for i in range(threads + 1)]
        slices = [
            (prepass.Quantised(quantised.codes[a:b], quantised.scale[a:b], quantised.bound[a:b]), a, b)
            for a, b in itertools.pairwise(bounds)
        ]
        pending = [
            shared_pool().submit(prepass.bounds, part, query, lo[a:b], hi[a:b]) for part, a, b in slices[1:]
        ]
        part, a, b = slices[0]
        prepass.bounds(part, query, lo[a:b], hi[a:b])
        for job in pending:
            job.result()
        survivors = prepass.survivors(lo, hi, k)
        scores = prepass.exact_scores(self.matrix, query, survivors)
        return top_k(scores, [self._ids[i] for i in survivors.tolist()], k)

    def search_many(self, query_vecs: npt.ArrayLike, k: int) -> list[list[tuple[str, float]]]:
        """``search`` for each row of ``query_vecs``: a block of queries per call of the compiled batched
        top k (:mod:`clear_rag.index.batched`), or per matrix product while it is not ready, the queries
        shared out over ``threads`` (numpy and the kernels release the GIL)."""
        _check_k(k)
        normalised, norms = self._unit_queries(query_vecs, ndim=2)
        if not self._ids:
            return [[] for _ in range(normalised.shape[0])]
        asked: list[bool] = (norms[:, 0] > 0).tolist()
        # With several threads each takes an equal run of the queries, in blocks, on its own core.
        rows = normalised.shape[0]
        threads = min(self.threads, rows) if self.matrix.size * rows >= dense.PARALLEL_MIN else 1
        cuts = [rows * t // threads for t in range(threads + 1)]
        ready = _batched()
        step = BATCH_QUERIES if ready is not None else self._numpy_step()

        def run(lo: int, hi: int) -> list[list[tuple[str, float]]]:
            return [
                hits
                for start in range(lo, hi, step)
                for hits in self._block(ready, normalised, asked, start, min(hi, start + step), k)
            ]

        pending = [shared_pool().submit(run, lo, hi) for lo, hi in itertools.pairwise(cuts[1:])]
        found = run(cuts[0], cuts[1])  # the calling thread takes the first run rather than wait idle
        for job in pending:
            found += job.result()
        return found

    def _block(
        self,
        ready: ModuleType | None,
        normalised: FloatArray,
        asked: list[bool],
        start: int,
        end: int,
        k: int,
    ) -> list[list[tuple[str, float]]]:
        """The top ``k`` of queries ``[start, end)``, by the compiled batched top k, or on numpy while it
        is not ready (or refuses the arguments)."""
        if ready is None:
            return self._numpy_block(normalised, asked, start, end, k)
        if self._rank is None or self._id_array is None:
            rank = np.empty(len(self._ids), dtype=np.intp)
            rank[sorted(range(len(self._ids)), key=self._ids.__getitem__)] = np.arange(len(self._ids))
            self._rank, self._id_array = rank, np.array(self._ids, dtype=object)
        try:
            best, scores = ready.top_k(normalised[start:end], self.matrix, k, self._rank)
        except TypeError as err:  # no compiled version for these argument types, and none may be made
            compiled.fall_back(err)
            return self._numpy_block(normalised, asked, start, end, k)
        # The pairs of all queries made by one zip in C, then cut into each query's list: a
        # comprehension making each tuple in Python took over a tenth of a 300-query batch's time
        # outside the product.
        pairs = list(zip(self._id_array[best.ravel()].tolist(), scores.ravel().tolist(), strict=True))
        width = best.shape[1]
        return [
            pairs[at : at + width] if query else []
            for at, query in zip(range(0, len(pairs), width), asked[start:end], strict=True)
        ]

    def _numpy_step(self) -> int:
        """Queries per product on numpy: at least QUERY_BLOCK, else as many as SCORES_BYTES allow."""
        return max(QUERY_BLOCK, SCORES_BYTES // (4 * len(self._ids)))

    def _numpy_block(
        self, normalised: FloatArray, asked: list[bool], start: int, end: int, k: int
    ) -> list[list[tuple[str, float]]]:
        """Queries ``[start, end)`` on numpy: one product per ``_numpy_step`` queries, each line ranked
        by ``selection.top_k``."""
        found: list[list[tuple[str, float]]] = []
        for lo in range(start, end, self._numpy_step()):
            hi = min(end, lo + self._numpy_step())
            lines = normalised[lo:hi] @ self.matrix.T
            found += [
                top_k(line, self._ids, k) if query else []
                for line, query in zip(lines, asked[lo:hi], strict=True)
            ]
        return found

    def save(self, directory: str | Path) -> None:
        """Write ``vectors.npy`` and ``ids.json`` into ``directory``, each replaced atomically.

        Each goes through a temporary file of its own (the predecessor's fixed ``vectors.npy.tmp``
        was shared by every process writing the same index). Replaced, never overwritten: an index
        loaded earlier may still memory-map the old file, and writing through it would change that
        index's vectors under it.
        """
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        write_array(folder / VECTORS_FILE, np.ascontiguousarray(self.matrix))
        write_atomic(folder / IDS_FILE, json.dumps(self._ids))

    @classmethod
    def load(cls, directory: str | Path, *, mmap: bool = True, threads: int | None = None) -> VectorIndex:
        """Open an index written by ``save``; with ``mmap`` the matrix is paged in as searched.

        A memory-mapped matrix is read-only; the first ``add`` or ``remove`` copies it into memory.
        """
        folder = Path(directory)
        vectors_path, ids_path = folder / VECTORS_FILE, folder / IDS_FILE
        try:
            ids = json.loads(ids_path.read_text(encoding="utf-8"))
            matrix = np.load(vectors_path, mmap_mode="r" if mmap else None)
        except (OSError, ValueError) as err:
            raise StoreError(
                f"the vector index cannot be read ({err})",
                path=str(folder),
                fix=REBUILD,
            ) from err
        if (
            not isinstance(ids, list)
            or not all(isinstance(i, str) for i in ids)
            or len(set(ids)) != len(ids)
            or matrix.dtype != np.float32
            or matrix.ndim != 2
            or matrix.shape[0] != len(ids)
            or matrix.shape[1] < 1
        ):
            raise StoreError(
                f"{IDS_FILE} and {VECTORS_FILE} disagree (matrix {matrix.dtype} {matrix.shape}, "
                f"{len(ids) if isinstance(ids, list) else 'no'} ids)",
                path=str(folder),
                fix=REBUILD,
            )
        index = cls(int(matrix.shape[1]), threads=threads)
        index._ids = list(ids)
        index._row = {chunk_id: row for row, chunk_id in enumerate(ids)}
        index._buffer = matrix
        index._quantised = index._rank = index._id_array = None
        return index

    def _reserve(self, rows: int) -> None:
        """Make the buffer writable (a loaded memory map is not) and able to hold ``rows`` rows."""
        capacity = self._buffer.shape[0]
        if self._buffer.flags.writeable and capacity >= rows:
            return
        grown = np.zeros((max(rows, 2 * capacity, 16), self.dim), dtype=np.float32)
        grown[: len(self._ids)] = self._buffer[: len(self._ids)]
        self._buffer = grown

    def _unit_queries(self, query: npt.ArrayLike, *, ndim: int) -> tuple[FloatArray, npt.NDArray[np.float64]]:
        """The query rows normalised (``l2_normalise``) and their norms, once the shape is checked
        and every value is finite (a non-finite value makes its row's norm non-finite)."""
        rows = np.asarray(query)
        if rows.ndim != ndim or rows.shape[-1] != self.dim:
            expected = f"({self.dim},)" if ndim == 1 else f"(n, {self.dim})"
            raise ValueError(f"query of shape {rows.shape} does not fit this index; expected {expected}")
        normalised, norms = unit_rows(rows)
        if not np.isfinite(norms).all():
            raise ValueError(
                "query vector has NaN or infinite values (or values too large to square in float64); "
                "check the embedder's output"
            )
        return normalised, norms
