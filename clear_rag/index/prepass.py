"""Exact top k over an L2-normalised float32 matrix, read mostly as int8: a pre-pass with a proof.

One query reads every vector once, so single-query search is bound by memory traffic: 1.5 kB a row
in float32. The pre-pass reads a quantised copy, a quarter of the bytes, and scores it
approximately; a bound on each approximate score's error rules out every row that cannot be among
the k best; only the few rows left are scored exactly in float32, and those exact scores rank them.

The quantised copy (Jegou et al. 2011 use the same scalar codes as the first pass of an exact
re-ranking; here the bound makes it lossless rather than probable). Row ``m`` (unit length) is
stored as int8 codes ``c = round(m / s)`` with its own scale ``s = max|m_j| / 127``, and the
exact length of what rounding left behind, ``R = ||m - s c||_2`` (computed in float64).

The bound. For a query ``q``, by Cauchy-Schwarz ``|m·q - s (c·q)| = |(m - s c)·q| <= R ||q||``.
The pre-pass computes ``a = s (c·q)`` in float32, and the exact pass ``e = m·q`` in float32; a
float32 sum of ``d`` products, in any order, is within ``gamma_(d+2) sum_j |x_j y_j|`` of the real
dot product (Higham 2002, "Accuracy and Stability of Numerical Algorithms", section 3.1, with
``gamma_n = n u / (1 - n u)`` and ``u = 2**-24``), and ``sum_j |x_j y_j| <= ||x|| ||y||``. So

    |a - e| <= ||q|| (R + gamma_(d+2) (s ||c|| + ||m||)) + SLACK = ||q|| b + SLACK

with ``b`` kept per row and ``SLACK`` (a few units of float32 rounding at the scores' size, at most
about 1) covering the roundings of ``a ± bound`` and of the bound itself. Call ``lo = a - bound``
and ``hi = a + bound``: then ``lo <= e <= hi`` for every row.

Why no row of the exact top k is dropped. Let ``L`` be the k-th largest ``lo``. The k rows holding
the k largest ``lo`` have exact scores of at least ``L``, so the k-th best exact score ``e_k`` is
at least ``L``. A row of the exact top k, or one tied with ``e_k``, has ``hi >= e >= e_k >= L``; so
keeping every row with ``hi >= L`` keeps them all, and the survivors scored exactly and ranked by
score then id give the list a full exact pass gives. ``L`` itself is found exactly, in one compiled
pass keeping the k largest ``lo`` in a heap (:func:`survivors`).

The exact scores come from one compiled loop (:func:`exact_scores`) that computes each row's dot
product with the same instructions whatever the row's place: a row's score does not depend on which
rows are scored with it, so the survivors' scores are the scores a full pass of the same loop gives,
bit for bit (``tests/index/test_ann.py`` checks it against that full pass and against numpy in
float64). numba compiles the loops on their first call and caches the machine code beside this file;
searches call them only once :mod:`clear_rag.index.compiled` has had them compiled in a subprocess and
loaded from that cache.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
import numpy.typing as npt

from clear_rag.index import heaps

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.intp]

U = 2.0**-24  # unit roundoff of float32
SLACK = 16 * U  # roundings of a ± bound and of the bound's own product; scores are at most about 1


BLOCK_VALUES = 1 << 19  # values of one float64 temporary of quantise: 4 MB


def gamma(n: int) -> float:
    """Higham's ``gamma_n = n u / (1 - n u)``: the relative error bound of a float32 sum of n terms."""
    return n * U / (1.0 - n * U)


@dataclass(frozen=True, slots=True)
class Quantised:
    """The int8 copy of a matrix: codes, per-row scale and per-row error bound ``b`` (see above)."""

    codes: npt.NDArray[np.int8]
    scale: FloatArray
    bound: FloatArray

    @property
    def nbytes(self) -> int:
        return int(self.codes.nbytes + self.scale.nbytes + self.bound.nbytes)


def quantise(matrix: FloatArray, block: int | None = None) -> Quantised:
    """Per-row symmetric int8 codes of ``matrix`` and each row's bound, in blocks of ``block`` rows
    (by default as many as make a float64 temporary of ``BLOCK_VALUES`` values). Every figure is a
    row's own, so the block changes no code, scale or bound.

    The predecessor took 65,536 rows a block: at 256 dimensions each float64 temporary was 134 MB and
    the expression below holds several at once: most of a 100k-chunk server's peak while it
    answered its first question (python -m bench.serve --memory)."""
    rows, dim = matrix.shape
    if block is None:
        block = max(1, BLOCK_VALUES // max(dim, 1))
    if block < 1:
        raise ValueError(f"quantise block={block!r} is invalid; use a positive number of rows, or None")
    codes = np.empty((rows, dim), dtype=np.int8)
    scale = np.empty(rows, dtype=np.float32)
    bound = np.empty(rows, dtype=np.float32)
    g = gamma(dim + 2)
    for lo in range(0, rows, block):
        m = np.asarray(matrix[lo : lo + block], dtype=np.float64)
        peak = np.abs(m).max(axis=1)
        s = (np.where(peak > 0, peak, 1.0) / 127.0).astype(np.float32).astype(np.float64)
        c = np.clip(np.rint(m / s[:, None]), -127, 127)
        residual = np.linalg.norm(m - s[:, None] * c, axis=1)
        b = residual + g * (s * np.linalg.norm(c, axis=1) + np.linalg.norm(m, axis=1))
        codes[lo : lo + block] = c.astype(np.int8)
        scale[lo : lo + block] = s
        # Rounded up to float32, so the stored bound is never below the real one.
        bound[lo : lo + block] = np.nextafter(b.astype(np.float32), np.float32(np.inf))
    return Quantised(codes, scale, bound)


@numba.njit(cache=True, nogil=True, fastmath=True, boundscheck=False)
def _approximate(
    codes: Any, scale: Any, bound: Any, query: Any, qnorm: float, lo_out: Any, hi_out: Any
) -> None:  # pragma: no cover - compiled
    """``lo`` and ``hi`` of every row (see the module docstring).

    Four rows at a time share each load of the query (13% faster than one at a time at MiniLM's 384
    dimensions, measured with bench/dense.py's 5k set); the bound holds for any order of summation."""
    rows, dim = codes.shape
    qn = np.float32(qnorm)
    slack = np.float32(SLACK)
    whole = rows - rows % 4
    for i in range(0, whole, 4):
        a0 = a1 = a2 = a3 = np.float32(0.0)
        for j in range(dim):
            x = query[j]
            a0 += np.float32(codes[i, j]) * x
            a1 += np.float32(codes[i + 1, j]) * x
            a2 += np.float32(codes[i + 2, j]) * x
            a3 += np.float32(codes[i + 3, j]) * x
        _interval(a0, i, scale, bound, qn, slack, lo_out, hi_out)
        _interval(a1, i + 1, scale, bound, qn, slack, lo_out, hi_out)
        _interval(a2, i + 2, scale, bound, qn, slack, lo_out, hi_out)
        _interval(a3, i + 3, scale, bound, qn, slack, lo_out, hi_out)
    for i in range(whole, rows):
        acc = np.float32(0.0)
        for j in range(dim):
            acc += np.float32(codes[i, j]) * query[j]
        _interval(acc, i, scale, bound, qn, slack, lo_out, hi_out)


@numba.njit(inline="always", nogil=True, fastmath=True, boundscheck=False)
def _interval(
    acc: Any, i: int, scale: Any, bound: Any, qn: Any, slack: Any, lo_out: Any, hi_out: Any
) -> None:  # pragma: no cover - compiled
    a = acc * scale[i]
    margin = bound[i] * qn + slack
    lo_out[i] = a - margin
    hi_out[i] = a + margin


@numba.njit(cache=True, nogil=True, fastmath=True, boundscheck=False)
def _exact_at(matrix: Any, rows: Any, query: Any, out: Any) -> None:  # pragma: no cover - compiled
    """``out[t] = matrix[rows[t]] · query`` in float32, one fixed loop for every row."""
    dim = matrix.shape[1]
    for t in range(rows.shape[0]):
        i = rows[t]
        acc = np.float32(0.0)
        for j in range(dim):
            acc += matrix[i, j] * query[j]
        out[t] = acc


def exact_scores(matrix: FloatArray, query: FloatArray, rows: IntArray | None = None) -> FloatArray:
    """The float32 dot product of ``query`` with each of ``rows`` of ``matrix`` (all rows if None)."""
    picked = np.arange(matrix.shape[0], dtype=np.intp) if rows is None else rows
    out = np.empty(picked.shape[0], dtype=np.float32)
    if picked.shape[0]:
        _exact_at(matrix, picked, np.ascontiguousarray(query, dtype=np.float32), out)
    return out


def bounds(quantised: Quantised, query: FloatArray, lo: FloatArray, hi: FloatArray) -> None:
    """Fill ``lo`` and ``hi`` for rows ``quantised`` holds (a slice of rows may be passed, in place)."""
    if quantised.codes.shape[0] == 0:
        return
    q = np.ascontiguousarray(query, dtype=np.float32)
    # ||q|| in float64, rounded up: the bound's factor must not be below the real norm.
    qnorm = math.nextafter(float(np.linalg.norm(q.astype(np.float64))) * (1 + 4 * U), math.inf)
    _approximate(quantised.codes, quantised.scale, quantised.bound, q, qnorm, lo, hi)


def survivors(lo: FloatArray, hi: FloatArray, k: int) -> IntArray:
    """The rows whose ``hi`` reaches the k-th largest ``lo``: a superset of the exact top k and of
    every row tied with its k-th score (proof in the module docstring), in row order."""
    n = lo.shape[0]
    if k >= n:
        return np.arange(n, dtype=np.intp)
    rows = np.empty(n, dtype=np.intp)
    return rows[: _survivors(lo, hi, k, rows)]


@numba.njit(cache=True, nogil=True, boundscheck=False)
def _survivors(lo: Any, hi: Any, k: int, rows: Any) -> int:  # pragma: no cover - compiled
    """Write the rows with ``hi >= L`` to ``rows`` in order and return how many, ``L`` the k-th
    largest ``lo`` (``k < len(lo)``): found in one pass holding the k largest seen in a min-heap,
    whose root is replaced only by a larger value (rarely, after the first rows). Two compiled passes
    replace the numpy calls of the predecessor (a strided sample, two partitions, three masks), which
    took a quarter of a 5k-vector search."""
    floor = heaps.kth_largest(lo, lo.shape[0], k, np.empty(k, dtype=lo.dtype))
    count = 0
    for i in range(hi.shape[0]):
        if hi[i] >= floor:
            rows[count] = i
            count += 1
    return count
