"""The files of a BM25 index: what ``BM25Index.save`` writes and ``BM25Index.load`` maps.

Format 2. ``bm25.json`` holds the settings, the ids and the vocabulary; beside it five ``.npy`` arrays,
each in the narrowest unsigned integer type that holds it (:func:`clear_rag.index.files.narrowest`):
the raw postings by term (``indptr``, ``docs``, ``tfs``), each document's length (``doc_len``) and
each document's place in id order (``id_rank``, which breaks ties). Reading opens every array by
memory map (read-only: an update builds new arrays, copy on write, and never writes through to a
file), tokenises nothing and loops over no id or term in Python: the checks are array passes, and
the order of the ids is read, not sorted again (a sort of a million unsorted ids took a second).

What is not stored is each posting's BM25 weight: stored as the float64 the kernels add up (a float32
would round some scores differently and reorder near-ties), it takes 8 bytes a posting, on top of the
4 of its document row, which puts the files at 1.5 times bm25s's (bm25s stores float32 weights). So
a term's weights are computed the first time a query names it (:mod:`clear_rag.index.weights`), and a
load computes none. The document rows are read where they lie: from 65,536 documents on the file holds
them as uint32, which the kernels read as int32 through a view of the map (rows stay below 2**31); a
smaller index's narrower rows are copied to int32, a few MB at most.

Format 1 (no ``id_rank``, read whole and checked posting by posting) is not read: its files give a
:class:`StoreError` naming the rebuild command. Its postings are the same, so nothing is lost but the
rebuild's time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from clear_rag.atomic import write_atomic
from clear_rag.errors import StoreError
from clear_rag.index.files import REBUILD, narrowest, write_array
from clear_rag.index.postings import MAX_DOCS, Postings
from clear_rag.index.scoring import DocArray, IntArray

FORMAT = 2
META_FILE = "bm25.json"
ARRAY_FILES = ("indptr", "docs", "tfs", "doc_len", "id_rank")
FILES = (*(f"bm25_{name}.npy" for name in ARRAY_FILES), META_FILE)  # every file ``save`` writes


def write(folder: Path, settings: dict[str, Any], raw: Postings, id_rank: IntArray) -> None:
    """Every file of the index, each replaced atomically by way of a temporary file of its own."""
    folder.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, npt.NDArray[np.integer[Any]]] = {
        "indptr": raw.indptr,
        "docs": raw.docs,
        "tfs": raw.tfs,
        "doc_len": raw.doc_len,
        "id_rank": id_rank,
    }
    for name in ARRAY_FILES:
        write_array(folder / f"bm25_{name}.npy", narrowest(arrays[name]))
    # ensure_ascii (the default) keeps stems holding stray UTF-8 bytes, as lone surrogates, writable.
    meta = {"format": FORMAT, **settings, "ids": list(raw.ids), "vocab": list(raw.vocab)}
    write_atomic(folder / META_FILE, json.dumps(meta))


def read(folder: Path) -> tuple[dict[str, Any], Postings, IntArray]:
    """The settings, the raw postings (arrays memory-mapped, read-only) and the id order; a
    :class:`StoreError` naming the fix for a missing, truncated, garbled or old-format file."""
    try:
        meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
        if not isinstance(meta, dict):
            raise ValueError(f"{META_FILE} holds no settings")
        if meta.get("format") != FORMAT:
            raise ValueError(
                f"{META_FILE} is format {meta.get('format', 1)!r}, written by an earlier clear-rag; "
                f"this one reads format {FORMAT}"
            )
        ids, vocab = meta.pop("ids"), meta.pop("vocab")
        if not isinstance(ids, list) or not isinstance(vocab, list):
            raise ValueError("ids and vocab must be lists")
        indptr, docs, tfs, doc_len, id_rank = (_mapped(folder / f"bm25_{name}.npy") for name in ARRAY_FILES)
        raw = Postings(tuple(ids), tuple(vocab), _int64(indptr), docs, tfs, doc_len)
        rank = _int64(id_rank)
        check_mapped(raw, rank)
        raw = raw._replace(docs=_rows(docs))  # what the kernels read; tfs and doc_len stay mapped as they are
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
        raise StoreError(f"the BM25 index cannot be read ({err})", path=str(folder), fix=REBUILD) from err
    return meta, raw, rank


def _mapped(path: Path) -> npt.NDArray[Any]:
    """The array in ``path``, memory-mapped read-only, as a plain ndarray (not an ``np.memmap``,
    whose slices and results would all be memmaps too)."""
    array: npt.NDArray[Any] = np.load(path, mmap_mode="r", allow_pickle=False)
    if array.ndim != 1 or array.dtype.kind not in "iu":
        raise ValueError(f"{path.name} holds {array.dtype} {array.shape}, not a row of integers")
    plain: npt.NDArray[Any] = array.view(np.ndarray)
    return plain


def _int64(array: npt.NDArray[Any]) -> IntArray:
    """A writable int64 copy of a short array (a term's or a document's), as the kernels read it
    (numba compiles one version per dtype and per read-only flag; the warm-up compiles these)."""
    return np.array(array, dtype=np.int64)


def _rows(docs: npt.NDArray[Any]) -> DocArray:
    """The postings' document rows, checked to lie below the number of documents (at most
    ``MAX_DOCS``), as int32: the mapped uint32 file itself, viewed, or a copy of narrower rows."""
    if docs.dtype == np.uint32:
        rows: DocArray = docs.view(np.int32)
        return rows
    return docs.astype(np.int32)


def check_mapped(raw: Postings, id_rank: IntArray) -> None:
    """Raise ValueError unless the arrays describe one well-formed inverted index: shapes, ranges and
    totals, each one pass over an array, and the ids strictly ascending in ``id_rank``'s order (which
    makes them distinct and the order right at once, comparing the strings in C)."""
    ids, vocab, indptr, docs, tfs, doc_len = raw
    n_docs, n_terms = len(ids), len(vocab)
    if n_docs > MAX_DOCS:
        raise ValueError(f"{n_docs:,} documents, more than an index holds ({MAX_DOCS:,})")
    if not {*map(type, ids), *map(type, vocab)} <= {str}:  # bm25.json may hold numbers or nulls there
        raise ValueError("ids and terms must be strings")
    if indptr.shape != (n_terms + 1,) or indptr[0] != 0 or indptr[-1] != docs.size:
        raise ValueError("indptr does not fit the terms and postings")
    if docs.shape != tfs.shape or doc_len.shape != (n_docs,) or id_rank.shape != (n_docs,):
        raise ValueError("array lengths disagree")
    # rows as written are unsigned, and need no pass for this
    negative = docs.size > 0 and docs.dtype.kind == "i" and int(docs.min()) < 0
    if docs.size and (
        (np.diff(indptr) < 1).any() or negative or int(docs.max()) >= n_docs or int(tfs.min()) < 1
    ):
        raise ValueError("postings out of range")
    if int(tfs.sum(dtype=np.int64)) != int(doc_len.sum(dtype=np.int64)):
        raise ValueError("document lengths disagree with the postings")
    if len(dict.fromkeys(vocab)) != n_terms:
        raise ValueError("terms must be distinct")
    if n_docs:
        if int(id_rank.min()) < 0 or int(id_rank.max()) >= n_docs:
            raise ValueError("id_rank out of range")
        in_order = np.empty(n_docs, dtype=object)
        in_order[id_rank] = ids
        if (in_order == None).any() or not (in_order[1:] > in_order[:-1]).all():  # noqa: E711 - elementwise
            raise ValueError("ids are repeated or id_rank does not sort them")
