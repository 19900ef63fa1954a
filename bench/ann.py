"""The approximate-index experiment, and exact dense search one query at a time against faiss flat.

    python -m bench.ann [--sizes 100000,1000000] [--dense-sizes 10000,100000,1000000] [--quick]

Three sections, written to results/bench/ann.json (after each section, so a long run keeps what it
measured):

- ``scifact``: the 5,183 SciFact abstracts as the store the BEIR suite built holds them (MiniLM int8
  vectors, one chunk per abstract), the 300 test claims embedded as queries. For every index and
  setting: recall@10 against clear-rag's exact index, median single-query latency (one thread), build
  time, index bytes, and doc nDCG@10 of dense retrieval against the qrels
  (``clear_rag.eval.metrics``); then the hybrid pipeline (BM25 + vectors, RRF) opened with
  ``vector_index`` exact, hnsw and ivf, end to end.
- ``synthetic``: ``synthetic_vectors`` at each of ``--sizes``, the same measures without qrels.
- ``dense``: exact top 10, one query at a time, one thread each: clear-rag's ``VectorIndex.search``
  (the int8 pre-pass with exact float32 rescoring), faiss ``IndexFlatIP``, one full numpy/BLAS
  product with clear-rag's top-k selection (the search before the pre-pass), and one full pass of the
  compiled float32 loop the pre-pass rescores with, interleaved query by query so that a busy spell
  on the shared machine slows them all.

``--sections dense`` (or any part of the three) re-runs those sections only and keeps the others'
figures from the file.

Threads: numpy/BLAS and numba get one (set before numpy loads). Every search is timed on one thread
(faiss ``omp_set_num_threads(1)``); builds get both cores (faiss ``omp_set_num_threads(2)``), as a
user building an index would. HNSW at 1M is bounded to one graph (M 16, efConstruction 40, faiss's
default), the sweep at 1M to efSearch; IVF's k-means trains on at most 65,536 vectors
(``clear_rag.index.ann.TRAIN_MAX``); see ``SWEEPS``.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import gc  # noqa: E402
import importlib.metadata  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402

from bench.common import ROOT, SCIFACT, write_result  # noqa: E402
from clear_rag.index import prepass  # noqa: E402
from clear_rag.index.ann import AnnIndex, AnnSettings, default_nlist  # noqa: E402
from clear_rag.index.dense import l2_normalise, scores_of  # noqa: E402
from clear_rag.index.selection import top_k  # noqa: E402
from clear_rag.index.vectors import VectorIndex  # noqa: E402

K = 10
SEED = 20240607
BUILD_THREADS = 2
# Per corpus size: HNSW graphs (M, efConstruction) and the efSearch values searched on each; IVF
# list counts and the nprobe values. 1M is bounded: faiss builds HNSW at about 4k vectors/s on the
# two shared cores here (measured at 100k), so one graph with faiss's default efConstruction.
SWEEPS: dict[str, dict[str, Any]] = {
    "small": {
        "hnsw": [(16, 40), (32, 100)],
        "ef_search": [10, 16, 32, 64, 128, 256],
        "nlist": [None],
        "nprobe": [1, 2, 4, 8, 16, 32, 64],
    },
    "100k": {
        "hnsw": [(16, 40), (32, 64)],
        "ef_search": [16, 32, 64, 128, 256],
        "nlist": [316, 1024],
        "nprobe": [1, 4, 16, 64],
    },
    "1M": {
        "hnsw": [(16, 40)],
        "ef_search": [16, 32, 64, 128, 256],
        "nlist": [1000],
        "nprobe": [4, 16, 64],
    },
}

FloatArray = npt.NDArray[np.float32]


# -- data -----------------------------------------------------------------------------------------


def _centres(n: int, dim: int, seed: int) -> FloatArray:
    clusters = max(1, n // 100)
    return l2_normalise(np.random.default_rng([seed, 0]).standard_normal((clusters, dim), dtype=np.float32))


def _around(centres: FloatArray, count: int, rng: np.random.Generator, spread: float) -> FloatArray:
    dim = centres.shape[1]
    out = np.empty((count, dim), dtype=np.float32)
    for lo in range(0, count, 65_536):
        hi = min(count, lo + 65_536)
        picks = rng.integers(0, centres.shape[0], size=hi - lo)
        noise = rng.standard_normal((hi - lo, dim), dtype=np.float32) * np.float32(spread / np.sqrt(dim))
        block = centres[picks] + noise
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[lo:hi] = block
    return out


def synthetic_vectors(n: int, dim: int = 384, seed: int = SEED, *, spread: float = 1.0) -> FloatArray:
    """``n`` seeded, clustered unit vectors (float32): ``n // 100`` cluster centres drawn uniformly on
    the sphere, each vector a centre picked uniformly at random plus Gaussian noise of total length
    about ``spread``, L2-normalised. With spread 1 a vector's cosine to its centre is about 0.71, to
    another of its cluster about 0.5, to the rest about 0 ± 1/sqrt(dim): neighbours are a cluster, not
    uniform noise. Drawn in blocks, so 1M x 384 needs no more than the result's 1.5 GB."""
    return _around(_centres(n, dim, seed), n, np.random.default_rng([seed, 1]), spread)


def synthetic_queries(
    count: int, n: int, dim: int = 384, seed: int = SEED, *, spread: float = 1.0
) -> FloatArray:
    """``count`` queries drawn like ``synthetic_vectors(n, dim, seed)``'s vectors (the same centres,
    other noise), so a query has a cluster of true neighbours."""
    return _around(_centres(n, dim, seed), count, np.random.default_rng([seed, 2]), spread)


# -- measuring ------------------------------------------------------------------------------------


def rss_bytes() -> int:
    """This process's resident set now (VmRSS), in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def _faiss() -> Any:
    import faiss  # type: ignore[import-untyped, import-not-found, unused-ignore]

    return faiss


def median_ms(times_s: Sequence[float]) -> float:
    return statistics.median(times_s) * 1000.0


def time_each(search: Callable[[FloatArray], Any], queries: FloatArray) -> tuple[list[Any], list[float]]:
    """Each query's result and wall time, one after the other."""
    found, times = [], []
    for q in queries:
        started = time.perf_counter()
        found.append(search(q))
        times.append(time.perf_counter() - started)
    return found, times


def recall(found: Sequence[Sequence[str]], truth: Sequence[Sequence[str]]) -> float:
    """Mean over queries of |found ∩ truth| / |truth| (recall@10 against the exact top 10)."""
    return float(np.mean([len(set(f) & set(t)) / max(1, len(t)) for f, t in zip(found, truth, strict=True)]))


class Corpus:
    """Vectors with ids, an exact index over them, queries, and the exact top 10 of each query."""

    def __init__(self, name: str, ids: list[str], matrix: FloatArray, queries: FloatArray, note: str) -> None:
        self.name, self.ids, self.queries, self.note = name, ids, queries, note
        self.exact = VectorIndex(matrix.shape[1], threads=1)
        self.exact.add(ids, matrix)
        self.truth = [[i for i, _ in hits] for hits in self.exact.search_many(queries, K)]


def exact_rows(corpus: Corpus, score: Callable[[list[list[str]]], dict[str, Any]]) -> list[dict[str, Any]]:
    """clear-rag's exact index and faiss IndexFlatIP, one thread each, timed query by query in turn."""
    faiss = _faiss()
    faiss.omp_set_num_threads(BUILD_THREADS)
    before = rss_bytes()
    started = time.perf_counter()
    flat = faiss.IndexFlatIP(corpus.exact.dim)
    flat.add(np.ascontiguousarray(corpus.exact.matrix))
    flat_build = time.perf_counter() - started
    flat_rss = rss_bytes() - before
    faiss.omp_set_num_threads(1)
    ids = corpus.ids
    corpus.exact.search(corpus.queries[0], K)  # makes the int8 copy (and compiles, on a first run)
    ours_found, ours_t, flat_found, flat_t = [], [], [], []
    for q in corpus.queries:
        started = time.perf_counter()
        ours_found.append([i for i, _ in corpus.exact.search(q, K)])
        ours_t.append(time.perf_counter() - started)
        started = time.perf_counter()
        row = flat.search(q[None, :], K)[1][0]
        flat_t.append(time.perf_counter() - started)
        flat_found.append([ids[r] for r in row.tolist()])
    quantised = corpus.exact._quantised
    return [
        {
            "index": "clear-rag exact",
            "backend": "clear-rag VectorIndex: int8 pre-pass, survivors rescored exactly in float32",
            "settings": {},
            "build_s": None,
            "index_bytes": int(
                corpus.exact.matrix.nbytes + (quantised.nbytes if quantised is not None else 0)
            ),
            "recall_at_10": recall(ours_found, corpus.truth),
            "latency_ms": median_ms(ours_t),
            **score(ours_found),
        },
        {
            "index": "faiss flat",
            "backend": "faiss IndexFlatIP (exact, one thread)",
            "settings": {},
            "build_s": flat_build,
            "rss_growth_bytes": flat_rss,
            "index_bytes": int(faiss.serialize_index(flat).nbytes),
            "recall_at_10": recall(flat_found, corpus.truth),
            "latency_ms": median_ms(flat_t),
            **score(flat_found),
        },
    ]


def ann_rows(
    corpus: Corpus, sweep: dict[str, Any], score: Callable[[list[list[str]]], dict[str, Any]]
) -> list[dict[str, Any]]:
    """Every HNSW graph and IVF list count of ``sweep``, each searched at every search-time setting."""
    faiss = _faiss()
    rows: list[dict[str, Any]] = []
    builds: list[tuple[AnnSettings, str, list[int]]] = [
        (AnnSettings("hnsw", m=m, ef_construction=efc), "ef_search", sweep["ef_search"])
        for m, efc in sweep["hnsw"]
    ]
    builds += [(AnnSettings("ivf", nlist=nlist), "nprobe", sweep["nprobe"]) for nlist in sweep["nlist"]]
    for settings, knob, values in builds:
        gc.collect()
        faiss.omp_set_num_threads(BUILD_THREADS)
        before = rss_bytes()
        started = time.perf_counter()
        index = AnnIndex.from_exact(corpus.exact, settings)
        build_s = time.perf_counter() - started
        growth = rss_bytes() - before
        nbytes = index.nbytes
        faiss.omp_set_num_threads(1)
        nlist = settings.nlist or default_nlist(len(corpus.ids))
        print(f"  {corpus.name}: built {settings.describe()} in {build_s:.1f} s", flush=True)
        for value in values:
            index.tune(**{knob: value})
            index.search(corpus.queries[0], K)
            found, times = time_each(partial(_ids_of, index), corpus.queries)
            shape = (
                {"M": settings.m, "efConstruction": settings.ef_construction, "efSearch": value}
                if settings.backend == "hnsw"
                else {"nlist": nlist, "nprobe": value}
            )
            rows.append(
                {
                    "index": settings.backend,
                    "backend": index.settings.describe().replace("sqrt(n)", str(nlist)),
                    "settings": shape,
                    "build_s": build_s,
                    "rss_growth_bytes": growth,
                    "index_bytes": nbytes,
                    "recall_at_10": recall(found, corpus.truth),
                    "latency_ms": median_ms(times),
                    **score(found),
                }
            )
            print(
                f"    {shape}: recall@10 {rows[-1]['recall_at_10']:.4f}, {rows[-1]['latency_ms']:.3f} ms",
                flush=True,
            )
        del index
    return rows


def _ids_of(index: AnnIndex, query: FloatArray) -> list[str]:
    return [i for i, _ in index.search(query, K)]


def _no_score(found: list[list[str]]) -> dict[str, Any]:
    return {}


# -- sections -------------------------------------------------------------------------------------


def scifact_store() -> Path | None:
    """The store the BEIR SciFact suite built (one chunk per abstract), if it is on this machine."""
    found = sorted((ROOT / ".clear-rag" / "ablate").glob("beir-scifact-whole-*/index/vectors-*"))
    return found[0].parents[1] if found else None


def scifact_section(quick: bool) -> dict[str, Any] | None:
    from clear_rag.config import ChunkingConfig, PipelineConfig
    from clear_rag.eval import beir
    from clear_rag.eval.metrics import first_occurrences, ndcg_at_k
    from clear_rag.providers.select import make_embedder
    from clear_rag.session import open_pipeline
    from clear_rag.store.sqlite import Store

    store_dir = scifact_store()
    if store_dir is None or not SCIFACT.is_dir():
        print("SciFact skipped: no built store under .clear-rag/ablate (run the beir-scifact suite)")
        return None
    vector_dir = next((store_dir / "index").glob("vectors-*"))
    stored = VectorIndex.load(vector_dir, mmap=False, threads=1)
    dataset = beir.load(SCIFACT, split="test")
    qids = sorted(dataset.queries)
    embedder = make_embedder("minilm")
    started = time.perf_counter()
    queries = np.asarray(embedder.embed([dataset.queries[q] for q in qids], kind="query"), dtype=np.float32)
    print(f"SciFact: embedded {len(qids)} claims in {time.perf_counter() - started:.1f} s", flush=True)
    with Store(store_dir, mode="read") as store:
        doc_of = {cid: doc for cid, doc, _, _ in store.chunk_spans()}

        def score(found: list[list[str]]) -> dict[str, Any]:
            per = [
                ndcg_at_k(first_occurrences([doc_of[c] for c in hits]), dataset.qrels[qid], K)
                for qid, hits in zip(qids, found, strict=True)
            ]
            return {"doc_ndcg_at_10": float(np.mean(per))}

        corpus = Corpus(
            "scifact",
            list(stored.ids),
            np.asarray(stored.matrix),
            queries,
            f"{len(stored.ids)} abstracts (title + text, one chunk each) embedded by {embedder.name}, "
            f"from the store {store_dir.relative_to(ROOT)}; {len(qids)} test claims embedded as queries",
        )
        rows = exact_rows(corpus, score) + ann_rows(corpus, SWEEPS["small"], score)
        hybrid = []
        chunking = ChunkingConfig(chunker="whole")
        for name in ("exact", "hnsw", "ivf"):
            config = PipelineConfig(chunking=chunking, vector_index=name)
            pipeline = open_pipeline(store, config, embedder=embedder)
            per, seconds = [], []
            for qid in qids:
                started = time.perf_counter()
                ranked = pipeline.retrieve(dataset.queries[qid]).ranked
                seconds.append(time.perf_counter() - started)
                per.append(ndcg_at_k(first_occurrences([c.doc_id for c in ranked]), dataset.qrels[qid], K))
            hybrid.append(
                {
                    "vector_index": name,
                    "config": "keyword + vector, RRF k 60, depth 100, chunker whole (the defaults)",
                    "doc_ndcg_at_10": float(np.mean(per)),
                    "retrieve_ms_median": median_ms(seconds),
                }
            )
            print(
                f"  hybrid with vector_index={name}: nDCG@10 {hybrid[-1]['doc_ndcg_at_10']:.4f}", flush=True
            )
    return {
        "vectors": len(corpus.ids),
        "dim": int(queries.shape[1]),
        "queries": len(qids),
        "data": corpus.note,
        "embedder": embedder.name,
        "rows": rows,
        "hybrid": hybrid,
    }


def synthetic_section(n: int, queries: int, sweep: dict[str, Any], dim: int) -> dict[str, Any]:
    started = time.perf_counter()
    matrix = synthetic_vectors(n, dim)
    qs = synthetic_queries(queries, n, dim)
    corpus = Corpus(f"synthetic {n:,}", [f"{i:07d}" for i in range(n)], matrix, qs, "")
    del matrix
    print(f"synthetic {n:,}: data and exact top 10 in {time.perf_counter() - started:.1f} s", flush=True)
    rows = exact_rows(corpus, _no_score) + ann_rows(corpus, sweep, _no_score)
    return {
        "vectors": n,
        "dim": dim,
        "queries": queries,
        "data": f"synthetic_vectors({n}, {dim}, seed {SEED}): {n // 100:,} clusters, spread 1.0; queries "
        "from synthetic_queries (same centres, other noise)",
        "rows": rows,
    }


def dense_section(n: int, queries: int, dim: int, rounds: int) -> dict[str, Any]:
    """clear-rag exact search, faiss IndexFlatIP and the full BLAS product, one thread, query by query."""
    faiss = _faiss()
    faiss.omp_set_num_threads(1)
    matrix = synthetic_vectors(n, dim, SEED + 1)
    qs = synthetic_queries(queries, n, dim, SEED + 1)
    ids = [f"{i:07d}" for i in range(n)]
    index = VectorIndex(dim, threads=1)
    index.add(ids, matrix)
    del matrix
    flat = faiss.IndexFlatIP(dim)
    flat.add(np.ascontiguousarray(index.matrix))
    started = time.perf_counter()
    index.search(qs[0], K)
    first_s = time.perf_counter() - started  # the int8 copy is made here

    def blas(q: FloatArray) -> list[str]:
        return [i for i, _ in top_k(scores_of(index.matrix, l2_normalise(q), 1), ids, K)]

    def compiled(q: FloatArray) -> list[str]:
        return [i for i, _ in top_k(prepass.exact_scores(index.matrix, l2_normalise(q)), ids, K)]

    methods: dict[str, Callable[[FloatArray], list[str]]] = {
        "clear-rag search (int8 pre-pass + float32 rescoring)": lambda q: [i for i, _ in index.search(q, K)],
        "faiss IndexFlatIP": lambda q: [ids[r] for r in flat.search(q[None, :], K)[1][0].tolist()],
        "clear-rag full product (numpy BLAS sgemv + top-k)": blas,
        "clear-rag full pass, compiled float32 loop (numba) + top-k": compiled,
    }
    times: dict[str, list[float]] = {name: [] for name in methods}
    found: dict[str, list[list[str]]] = {name: [] for name in methods}
    for r in range(rounds):
        for q in qs:  # each query by every method in turn
            for name, run in methods.items():
                started = time.perf_counter()
                got = run(q)
                times[name].append(time.perf_counter() - started)
                if r == 0:
                    found[name].append(got)
    ours = next(iter(methods))
    engines = {
        name: {
            "latency_ms": median_ms(times[name]),
            "queries_per_s": 1000.0 / median_ms(times[name]),
            "same_top10_as_clear_rag": sum(a == b for a, b in zip(found[name], found[ours], strict=True)),
        }
        for name in methods
    }
    for name, row in engines.items():
        row["clear_rag_over_peer_speed"] = row["latency_ms"] / engines[ours]["latency_ms"]
        print(f"  dense {n:,} {name}: {row['latency_ms']:.3f} ms", flush=True)
    quantised = index._quantised
    return {
        "vectors": n,
        "dim": dim,
        "queries": queries,
        "rounds": rounds,
        "data": f"synthetic_vectors({n}, {dim}, seed {SEED + 1}) and synthetic_queries",
        "first_search_s": first_s,
        "matrix_bytes": int(index.matrix.nbytes),
        "int8_copy_bytes": int(quantised.nbytes) if quantised is not None else 0,
        "engines": engines,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--dense-sizes", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--dense-queries", type=int, default=100)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--sections", default="scifact,synthetic,dense")
    parser.add_argument("--quick", action="store_true", help="10k and 20k only, few queries: a smoke run")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.dense_sizes, args.queries, args.dense_queries = "10000", "10000,20000", 30, 20
    faiss = _faiss()
    sections = args.sections.split(",")
    result: dict[str, Any] = {
        "benchmark": "ann",
        "k": K,
        "threads": "searches one thread each (faiss omp_set_num_threads(1); "
        "OMP/OPENBLAS/MKL/NUMBA_NUM_THREADS=1); "
        f"builds {BUILD_THREADS} threads (faiss omp_set_num_threads({BUILD_THREADS}))",
        "latency": "median wall time of single queries (one search call each), after one untimed query",
        "memory": "index_bytes: the index as faiss serialises it (vectors, graph or lists); for clear-rag "
        "exact, the float32 matrix plus its int8 copy. rss_growth_bytes: resident set after the build "
        "minus before (the build's scratch freed by then)",
        "sweeps": {
            name: {k: [list(v) if isinstance(v, tuple) else v for v in vs] for k, vs in s.items()}
            for name, s in SWEEPS.items()
        },
        "versions": {
            "numpy": np.__version__,
            "faiss-cpu": faiss.__version__,
            "numba": importlib.metadata.version("numba"),
        },
        "load_average_at_start": os.getloadavg(),
    }
    started = time.perf_counter()
    name = "ann-quick" if args.quick else "ann"
    kept = ROOT / "results" / "bench" / f"{name}.json"
    if set(sections) != {"scifact", "synthetic", "dense"} and kept.is_file():
        # a partial run replaces only its own sections of the file
        earlier = json.loads(kept.read_text(encoding="utf-8"))
        result.update({key: earlier[key] for key in ("scifact", "synthetic", "dense") if key in earlier})
    if "scifact" in sections:
        found = scifact_section(args.quick)
        if found is not None:
            result["scifact"] = found
            write_result(name, result)
    if "dense" in sections:
        result["dense"] = []
        for n in (int(s) for s in args.dense_sizes.split(",")):
            rounds = 1 if n >= 1_000_000 else 3  # at 1M a round of faiss and BLAS takes a minute
            result["dense"].append(dense_section(n, args.dense_queries, args.dim, rounds=rounds))
            write_result(name, result)
            gc.collect()
    if "synthetic" in sections:
        result["synthetic"] = []
        for n in (int(s) for s in args.sizes.split(",")):
            sweep = SWEEPS["1M" if n >= 1_000_000 else "100k" if n >= 100_000 else "small"]
            result["synthetic"].append(synthetic_section(n, args.queries, sweep, args.dim))
            result["load_average_at_end"] = os.getloadavg()
            write_result(name, result)
            gc.collect()
    result["load_average_at_end"] = os.getloadavg()
    result["elapsed_s"] = round(time.perf_counter() - started, 1)
    path = write_result(name, result)
    print(f"written to {path.relative_to(ROOT)} in {result['elapsed_s']} s")


if __name__ == "__main__":
    main()
