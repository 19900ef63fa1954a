"""Every numba kernel a search calls, compiled into numba's on-disk cache ahead of the search.

    python -m clear_rag.index.warm [--nice N] [--force]

numba compiles a kernel at its first call and keeps the machine code in its cache (``__pycache__``
beside the source, or under ``$NUMBA_CACHE_DIR``), keyed on a hash of the source file, the numba
version and the CPU. A fresh install has no cache: the first search of a fresh clone compiled the
BM25 kernel for 15.7 s inside the question, and a server's first question waited 19 to 43 s
(issue 26). :mod:`clear_rag.index.compiled` keeps searches on numpy until the kernels are ready and
runs this module as a command, in a process of its own, to compile them: the compile holds that
process's GIL, not the server's.

:func:`exercise` calls each kernel searches call (``kernels.top_k``, ``kernels.top_one``,
``prepass.bounds``, ``prepass.survivors``, ``prepass.exact_scores``, ``batched.top_k``) once, on a
tiny index, with arguments of the very types the searches pass (numba compiles one machine-code version
per combination of argument types, and read-only arrays are a type of their own). In the command's
process that compiles them; in a serving process, after the command, the same calls load them from the
cache in well under a second.
``tests/index/test_compiled.py`` runs the searches against the result with compiling switched off,
so a search that passed other types would fail there, not compile in a question.

The command then writes a stamp (:data:`STAMP`) saying for which sources, numba, Python and machine
the cache is complete, so that a later process reads the stamp and loads at once rather than start
the command again (and the command itself, run again, stops there; ``--force`` calls the kernels
all the same). The stamp is a hint read without importing numba: where it is wrong (the cache
deleted behind it, another CPU under a shared cache folder), loading compiles what is missing, in the
background, which the loader reports. Two commands at once (two processes starting together) take
turns on a lock beside the stamp, so a second compile does not run beside the first; the second then
only loads.

numba keys a cached kernel on its own source file, but a kernel holds a copy of what it inlined from
:mod:`clear_rag.index.heaps`: so the stamp counts that file among its sources, and where the
sources differ from the stamp's the command empties the entry points' cache (:func:`forget`) before
compiling, rather than let numba load a kernel built on an older heaps.py.

numba writes each cache file to a temporary name and renames it, index before data: a command
killed midway leaves at worst an index entry whose data is missing, which numba reads as not cached,
and no stamp, so the next process compiles again. Nothing here imports numba until
:func:`exercise` runs, so the stamp can be read at the cost of hashing two files.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from clear_rag.atomic import write_atomic
from clear_rag.errors import ClearRagError

HERE = Path(__file__).resolve().parent
# The modules holding numba kernels, beside this one, and heaps.py, whose functions are inlined into them.
SOURCES = ("kernels.py", "prepass.py", "batched.py", "heaps.py")
STAMP = "clear-rag-warm.json"
LOCK = "clear-rag-warm.lock"
# numba's own setting for where its cache goes; read only to key the stamp on it, as numba reads it.
NUMBA_CACHE_DIR = "NUMBA_CACHE_DIR"


def stamp_dir() -> Path:
    """Where the stamp and the lock go: ``$NUMBA_CACHE_DIR`` where it is set (numba's cache is under
    it), else this folder's ``__pycache__``, where numba keeps the cache of these sources."""
    configured = os.environ.get(NUMBA_CACHE_DIR, "")
    return Path(configured).resolve() if configured else HERE / "__pycache__"


def fingerprint() -> dict[str, Any]:
    """What numba's cache of these kernels depends on, as far as it can be known without importing
    numba: the sources' bytes, numba's and Python's versions, the cache folder and the machine."""
    try:
        numba_version = importlib.metadata.version("numba")
    except importlib.metadata.PackageNotFoundError:
        numba_version = None
    return {
        "sources": {name: hashlib.sha256((HERE / name).read_bytes()).hexdigest() for name in SOURCES},
        "numba": numba_version,
        "python": sys.version,
        "cache": str(stamp_dir()),
        "machine": [platform.machine(), platform.node()],
    }


def is_warm() -> bool:
    """Whether the stamp says numba's cache holds every kernel for these sources, here."""
    try:
        stamp = json.loads((stamp_dir() / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(stamp, dict) and stamp.get("fingerprint") == fingerprint()


def _same_sources() -> bool:
    """Whether the stamp was written for these sources' bytes (whatever else changed)."""
    try:
        stamp = json.loads((stamp_dir() / STAMP).read_text(encoding="utf-8"))
        return bool(stamp["fingerprint"]["sources"] == fingerprint()["sources"])
    except (OSError, ValueError, TypeError, KeyError):
        return False


def write_stamp(seconds: float) -> None:
    """Record that numba's cache now holds every kernel (the command took ``seconds``)."""
    write_atomic(
        stamp_dir() / STAMP,
        json.dumps({"fingerprint": fingerprint(), "seconds": round(seconds, 3)}, indent=2) + "\n",
    )


def entry_points() -> list[Any]:
    """The numba dispatchers searches call from Python (the others are compiled into these)."""
    from clear_rag.index import batched, kernels, prepass

    return [
        kernels._top_k,
        kernels._top_one,
        prepass._approximate,
        prepass._survivors,
        prepass._exact_at,
        batched._scan,
        batched._settle,
        batched._sort,
    ]


def exercise() -> int:
    """Call every entry point once with the argument types searches pass, compiling what numba's
    cache does not hold; returns how many versions were compiled rather than loaded (its misses)."""
    from clear_rag.index import batched, kernels, prepass

    # BM25 (clear_rag.index.ranking.top_k): int64 term pointers and float64 weights, writable, and the
    # document rows int32 and read-only, as BM25Index builds and loads them (weights.TermWeights);
    # a dense row for the common term.
    indptr = np.array([0, 3, 4], dtype=np.int64)
    docs = np.array([0, 1, 2, 2], dtype=np.int32)
    docs.flags.writeable = False
    weights = np.array([1.0, 0.5, 0.25, 0.75])
    bounds = np.array([1.0, 0.75])
    dense_row = np.array([0, -1], dtype=np.int64)
    dense = np.array([[1.0, 0.5, 0.25]])
    id_rank = np.arange(3, dtype=np.int64)
    term_ids, query_ptr = np.array([0, 1], dtype=np.int64), np.array([0, 2], dtype=np.int64)
    kernels.top_k(term_ids, query_ptr, indptr, docs, weights, bounds, dense_row, dense, id_rank, 2)
    # One query (clear_rag.index.ranking.top_one): the same arrays, its scratch and its output buffers.
    out_rows, out_scores = np.empty(2, dtype=np.int64), np.empty(2)
    scratch = kernels.scratch(id_rank.size)
    arrays = (indptr, docs, weights, bounds, dense_row, dense, id_rank)
    kernels.top_one(term_ids, arrays, 2, scratch, out_rows, out_scores)
    # The pre-pass (clear_rag.index.vectors.VectorIndex._search_prepass): its int8 copy and writable
    # float32 query and bounds; the matrix read-only, as VectorIndex.matrix hands it out (memory-mapped
    # or not), and the rows intp, as prepass.survivors returns them.
    matrix = np.eye(4, dtype=np.float32)
    matrix.flags.writeable = False
    query = np.full(4, 0.5, dtype=np.float32)
    lo, hi = np.empty(4, dtype=np.float32), np.empty(4, dtype=np.float32)
    prepass.bounds(prepass.quantise(matrix), query, lo, hi)
    prepass.exact_scores(matrix, query, prepass.survivors(lo, hi, 2))
    # search_many's batched top k (clear_rag.index.batched): its own float32 buffers of scores and
    # intp rows, and the index's id ranks, intp; a few best (kept sorted) and more (kept in a heap,
    # sorted at the end), over several tiles so that the scan runs both filling and full. The matrix
    # read-only, as VectorIndex.matrix hands it out (the ties are settled by reading it).
    many = np.ones((batched.SMALL_K + 2, 4), dtype=np.float32)
    many.flags.writeable = False
    rank = np.arange(many.shape[0], dtype=np.intp)
    for k in (2, batched.SMALL_K + 1):
        batched.top_k(np.eye(2, 4, dtype=np.float32), many, k, rank, tile=16)
    return misses()


def forget() -> None:
    """Empty numba's cache of every entry point, so the next call compiles it. numba keys a cached
    function on its own source file only; a function it inlined from another file (:mod:`heaps`) can
    change under it unseen. Called when the stamp's sources differ from these, before compiling.
    Only a cache under :func:`stamp_dir` is emptied: numba fixed each kernel's cache folder when it
    imported it, and a process whose $NUMBA_CACHE_DIR changed since (a test) must not empty another."""
    folder = stamp_dir()
    for point in entry_points():
        if Path(point._cache._cache_path).resolve().is_relative_to(folder):
            point._cache.flush()


def misses() -> int:
    """Versions of the entry points this process compiled because numba's cache did not hold them."""
    return sum(sum(point.stats.cache_misses.values()) for point in entry_points())


def freeze() -> None:
    """Stop numba compiling new versions of the entry points at call time: a call with argument types
    :func:`exercise` did not cover then raises ``TypeError`` (the caller falls back to numpy) rather
    than compile inside a question."""
    for point in entry_points():
        point.disable_compile()


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """One command at a time per cache folder (where ``fcntl`` exists, that is off Windows)."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / LOCK).open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes, also if this process dies
        yield


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m clear_rag.index.warm",
        description="Compile every search kernel into numba's on-disk cache, so no search waits on it.",
    )
    parser.add_argument("--nice", type=int, default=0, help="lower this process's priority by N first")
    parser.add_argument(
        "--force", action="store_true", help="call every kernel even where the stamp says the cache is warm"
    )
    args = parser.parse_args(argv)
    if importlib.util.find_spec("numba") is None:  # a step of `make` must not fail for an extra
        print("clear-rag: numba is not installed, so there is nothing to compile: searches use numpy")
        return 0
    if args.nice and hasattr(os, "nice"):
        os.nice(args.nice)  # a compile started by a server yields the cores to its questions
    started = time.perf_counter()
    folder = stamp_dir()
    with _locked(folder):  # taken before numba is imported, so a second command waits at once
        if is_warm() and not args.force:  # another command just filled it, or `make` runs this again
            print(f"clear-rag: numba's cache ({folder}) already holds every search kernel")
            return 0
        if not _same_sources():
            forget()
        compiled = exercise()
        seconds = time.perf_counter() - started
        try:
            write_stamp(seconds)
        except ClearRagError as err:  # the cache is warm all the same; later processes check again
            print(f"note: no stamp written ({err})", file=sys.stderr)
    what = f"compiled {compiled} kernel version(s)" if compiled else "loaded every kernel"
    print(f"clear-rag: {what} in {seconds:.1f} s; numba's cache ({folder}) holds every search kernel")
    return 0


if __name__ == "__main__":
    sys.exit(main())
