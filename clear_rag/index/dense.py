"""Scoring an L2-normalised float32 matrix against a query: ``matrix @ query``, split across threads
on a large matrix, and the normalisation that makes a dot product the cosine."""

from __future__ import annotations

import itertools
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
import numpy.typing as npt

from clear_rag import environ

FloatArray = npt.NDArray[np.float32]


def l2_normalise(vectors: npt.NDArray[np.floating[Any]]) -> FloatArray:
    """``v / ||v||_2`` row by row, in float64 and then stored as float32; zero rows stay zero."""
    return unit_rows(vectors)[0]


def unit_rows(vectors: npt.ArrayLike) -> tuple[FloatArray, npt.NDArray[np.float64]]:
    """``l2_normalise(vectors)`` and the rows' norms in float64 (shape ``(..., 1)``): a caller that
    needs both (which rows are zero, whether all are finite) reads the norms, not the rows again."""
    rows = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(rows, axis=-1, keepdims=True)
    # A zero row divided by 1 stays zero; the others are divided as before, to the same bits. A
    # masked divide into a zeroed array took a third longer (300 queries of 384 dimensions).
    return (rows / np.where(norms > 0, norms, 1.0)).astype(np.float32), norms


# A matrix of at least this many floats (8 MB) is scored by several threads, one slice of rows each.
# Scoring one query reads the whole matrix once, so its speed is the memory bandwidth one core can
# draw; a second core draws about as much again (measured in bench/retrieval.py). Below this size the
# matrix sits in cache and handing out slices costs more than it saves.
PARALLEL_MIN = 1 << 21
ROW_ALIGN = 64

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def default_threads() -> int:
    """Threads one search uses: ``$CLEAR_RAG_THREADS`` if set, else the cores this process may use."""
    configured = environ.whole_number(environ.THREADS)
    if configured is not None:
        return configured
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def shared_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(thread_name_prefix="clear-rag-vectors")
        return _pool


def scores_of(matrix: FloatArray, query: FloatArray, threads: int = 1) -> FloatArray:
    """``matrix @ query``; a large matrix is split into ``threads`` slices of rows scored at once.

    numpy releases the GIL inside the product, so the slices really run in parallel. Each row's
    score is the same dot product either way, so the split changes no score.
    """
    rows = matrix.shape[0]
    if threads <= 1 or matrix.size < PARALLEL_MIN:
        return np.asarray(matrix @ query, dtype=np.float32)
    out = np.empty(rows, dtype=np.float32)
    # Slices start at multiples of ROW_ALIGN rows: the BLAS kernel scores rows in small groups with a
    # tail path for what is left over, and equal grouping is what keeps each score bit for bit the same.
    bounds = [min(rows, round(rows * i / threads / ROW_ALIGN) * ROW_ALIGN) for i in range(threads + 1)]
    bounds[-1] = rows
    slices = list(itertools.pairwise(bounds))
    pool = shared_pool()
    # The calling thread scores the first slice itself rather than wait idle.
    pending: list[Future[FloatArray]] = [
        pool.submit(np.matmul, matrix[lo:hi], query, out=out[lo:hi]) for lo, hi in slices[1:]
    ]
    lo, hi = slices[0]
    np.matmul(matrix[lo:hi], query, out=out[lo:hi])
    for job in pending:
        job.result()
    return out
