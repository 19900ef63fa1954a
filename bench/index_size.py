"""What a keyword index takes on disk and how long it takes to open: clear-rag's BM25 files against
bm25s's and tantivy's on the same passages, bytes per passage, seconds to load and seconds to answer
the first query after the load (medians of ``--repeat``), each engine at its defaults; with ``--before
REV``, clear-rag's as an earlier commit writes and opens them (its ``clear_rag`` package from ``git
archive`` of that commit, in a process of its own). clear-rag's compiled kernels are ready for those
first queries (waited for after the build), so what the query after a load costs beyond a later one
is work the load left to it: clear-rag computes a term's weights at the first query naming it.

    python -m bench.index_size --passages 100000,1000000 --before 9f6756c

Then what a person waits for and what it costs in memory, cold: a fresh process per engine imports
it, opens the index and answers one query (the first synthetic query, top 10), ``--repeat`` rounds
with the engines in a rotating order each round (one untimed round first, to fill the page cache
alike), medians. Per engine: seconds from spawn to the answer (measured by this process, so Python's
start and the imports are in it), the child's own seconds to open and to answer, and its resident
peak (VmHWM) beside its resident size before opening, MB: the loader's own cost is their difference.
clear-rag's first query in a fresh process runs on numpy while the compiled kernels load in the
background (clear_rag.index.compiled), as a first ``ask`` does.

The passages are synthetic (bench.retrieval.synthetic: 30-120 words drawn from one Zipf
distribution, seeded), so every engine indexes the same words; nothing is a real corpus. Writes
``results/bench/index-size.json``. Bytes are the files each engine writes (clear-rag: the BM25 arrays
and bm25.json with its ids and vocabulary; bm25s: ``BM25.save`` without the corpus; tantivy: the index
folder after one commit and merge).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import ROOT, publish, run_script
from bench.package_size import checkout
from bench.retrieval import SEED, WORD, synthetic
from clear_rag.packaged import LIBRARIES

# Run by the earlier commit's Python, with only its clear_rag importable: build, save, open, ask.
OWN = """
import json, statistics, sys, time
from pathlib import Path
from clear_rag.index.bm25 import BM25Index
texts, folder, repeat = json.loads(Path(sys.argv[1]).read_text()), Path(sys.argv[2]), int(sys.argv[3])
query = sys.argv[4]
index = BM25Index()
index.add([f"p{i:06d}" for i in range(len(texts))], texts)
index.save(folder)
try:  # the first queries below on the compiled kernels, as a server's once they are loaded
    from clear_rag.index import compiled
    index.search(query, 10)
    compiled.wait()
except ImportError:  # a commit from before the background warm-up
    pass
del index, texts
loads, firsts = [], []
for _ in range(repeat):
    started = time.perf_counter()
    loaded = BM25Index.load(folder)
    opened = time.perf_counter()
    loaded.search(query, 10)
    firsts.append(time.perf_counter() - opened)
    loads.append(opened - started)
    del loaded
size = sum(p.stat().st_size for p in folder.iterdir())
print(json.dumps({"bytes": size, "load_s": statistics.median(loads),
                  "query_after_load_s": statistics.median(firsts)}))
"""


# Run in a fresh process per cold measurement: argv engine, folder, query. Each engine opens its
# index and answers the query as its own documentation shows; the figures go to stdout as JSON.
COLD = """
import json, sys, time
from pathlib import Path
started = time.perf_counter()
engine, folder, query = sys.argv[1:4]
def kb(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
if engine == "clear-rag":
    from clear_rag.index.bm25 import BM25Index
    imported, base = time.perf_counter(), kb("VmRSS")
    index = BM25Index.load(folder)
    opened = time.perf_counter()
    found = [i for i, _ in index.search(query, 10)]
elif engine == "bm25s":
    import bm25s
    imported, base = time.perf_counter(), kb("VmRSS")
    model = bm25s.BM25.load(folder)
    opened = time.perf_counter()
    tokens = bm25s.tokenize([query], stopwords=None, token_pattern=sys.argv[4], return_ids=False,
                            show_progress=False)
    rows, scores = model.retrieve(tokens, k=10, n_threads=1, show_progress=False)
    found = [r for r, s in zip(rows[0].tolist(), scores[0].tolist()) if s > 0]
else:
    import tantivy
    imported, base = time.perf_counter(), kb("VmRSS")
    index = tantivy.Index.open(folder)
    searcher = index.searcher()
    opened = time.perf_counter()
    hits = searcher.search(index.parse_query(query, ["body"]), 10).hits
    found = [searcher.doc(address)["id"][0] for _, address in hits]
answered = time.perf_counter()
print(json.dumps({"cold_load_s": opened - imported, "first_query_s": answered - opened, "found": len(found),
                  "rss_before_load_mb": base / 1024, "peak_rss_mb": kb("VmHWM") / 1024}))
"""


def clear_rag_at(
    source: Path, texts: list[str], query: str, scratch: Path, repeat: int
) -> tuple[dict[str, float], Path]:
    """clear-rag's BM25 files, load time and first query's time with the ``clear_rag`` package found
    at ``source``, and the folder holding them."""
    corpus, folder = scratch / "texts.json", scratch / f"clear-rag-{source.name}"
    corpus.write_text(json.dumps(texts), encoding="utf-8")
    found: dict[str, float] = run_script(source, OWN, [str(corpus), str(folder), str(repeat), query], scratch)
    return found, folder


def cold(engine: str, source: Path, folder: Path, query: str) -> dict[str, float]:
    """One fresh process opening the index in ``folder`` and answering ``query``: spawn to exit."""
    kind = "clear-rag" if engine.startswith("clear-rag") else engine
    started = time.perf_counter()
    arguments = [kind, str(folder), query, WORD.pattern]
    figures: dict[str, float] = run_script(source, COLD, arguments, folder.parent)
    return {"cold_s": time.perf_counter() - started, **figures}


def cold_rounds(places: dict[str, tuple[Path, Path]], query: str, repeat: int) -> dict[str, dict[str, float]]:
    """Each engine's cold figures, medians of ``repeat`` rounds in rotating order after one untimed."""
    names = list(places)
    for name in names:  # numba's cache filled first, or a first search compiles in the background
        if name.startswith("clear-rag"):
            source = places[name][0]
            env = {**os.environ, "PYTHONPATH": str(source)}
            subprocess.run([sys.executable, "-m", "clear_rag.index.warm"], env=env, cwd=source, check=True)
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    for round_ in range(repeat + 1):
        for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
            figures = cold(name, *places[name], query)
            if round_:
                runs[name].append(figures)
    return {
        name: {key: round(statistics.median(run[key] for run in each), 4) for key in each[0]}
        for name, each in runs.items()
    }


def bm25s_files(ids: list[str], texts: list[str], query: str, folder: Path, repeat: int) -> dict[str, float]:
    import bm25s  # type: ignore[import-untyped, import-not-found, unused-ignore]

    tokens = bm25s.tokenize(texts, stopwords=None, token_pattern=WORD.pattern, show_progress=False)
    model = bm25s.BM25()
    model.index(tokens, show_progress=False)
    model.save(str(folder))

    def ask(loaded: Any) -> None:  # as the cold script asks
        words = bm25s.tokenize(
            [query], stopwords=None, token_pattern=WORD.pattern, return_ids=False, show_progress=False
        )
        loaded.retrieve(words, k=10, n_threads=1, show_progress=False)

    return {"bytes": _bytes(folder), **_median_load(lambda: bm25s.BM25.load(str(folder)), ask, repeat)}


def tantivy_files(
    ids: list[str], texts: list[str], query: str, folder: Path, repeat: int
) -> dict[str, float]:
    import tantivy  # type: ignore[import-untyped, import-not-found, unused-ignore]

    schema = tantivy.SchemaBuilder()
    schema.add_text_field("id", stored=True, tokenizer_name="raw", index_option="basic")
    schema.add_text_field("body", index_option="freq")  # no positions: BM25 needs none
    built = schema.build()
    folder.mkdir()
    index = tantivy.Index(built, path=str(folder))
    writer = index.writer(heap_size=200_000_000, num_threads=1)
    for doc_id, text in zip(ids, texts, strict=True):
        writer.add_document(tantivy.Document(id=doc_id, body=text))
    writer.commit()
    writer.wait_merging_threads()

    def opened() -> Any:
        loaded = tantivy.Index.open(str(folder))
        return loaded, loaded.searcher()

    def ask(pair: Any) -> None:
        loaded, searcher = pair
        searcher.search(loaded.parse_query(query, ["body"]), 10)

    return {"bytes": _bytes(folder), **_median_load(opened, ask, repeat)}


def _bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _median_load(load: Callable[[], Any], ask: Callable[[Any], None], repeat: int) -> dict[str, float]:
    """Medians of ``repeat`` loads and of the query asked right after each."""
    loads, firsts = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        opened = load()
        loaded = time.perf_counter()
        ask(opened)
        firsts.append(time.perf_counter() - loaded)
        loads.append(loaded - started)
    return {"load_s": statistics.median(loads), "query_after_load_s": statistics.median(firsts)}


def point(passages: int, before: Path | None, repeat: int, scratch: Path) -> dict[str, Any]:
    ids, texts, queries, _ = synthetic(passages, 1)
    engines: dict[str, dict[str, float]] = {}
    places: dict[str, tuple[Path, Path]] = {}  # engine: (its PYTHONPATH, its index folder)
    engines["clear-rag"], folder = clear_rag_at(ROOT, texts, queries[0], scratch, repeat)
    places["clear-rag"] = (ROOT, folder)
    if before is not None:
        engines["clear-rag before"], folder = clear_rag_at(before, texts, queries[0], scratch, repeat)
        places["clear-rag before"] = (before, folder)
    engines["bm25s"] = bm25s_files(ids, texts, queries[0], scratch / "bm25s", repeat)
    engines["tantivy"] = tantivy_files(ids, texts, queries[0], scratch / "tantivy", repeat)
    places |= {name: (ROOT, scratch / name) for name in ("bm25s", "tantivy")}
    del ids, texts  # a million passages take a gigabyte of this process while the children run
    for name, figures in cold_rounds(places, queries[0], repeat).items():
        engines[name] |= figures
    for figures in engines.values():
        figures["bytes_per_passage"] = round(figures["bytes"] / passages, 1)
        figures["load_s"] = round(figures["load_s"], 4)
        figures["query_after_load_s"] = round(figures["query_after_load_s"], 6)  # often under a millisecond
    return {"passages": passages, "query": queries[0], "engines": engines}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", default="100000,1000000", help="passage counts, comma-separated")
    parser.add_argument("--repeat", type=int, default=5, help="loads timed per engine (median)")
    parser.add_argument("--before", help="an earlier commit whose clear-rag to measure beside")
    args = parser.parse_args()
    from clear_rag.packaged import library_versions
    from clear_rag.report.bench import bench_table

    started = time.perf_counter()
    load_at_start = [round(x, 2) for x in os.getloadavg()]
    points = []
    with tempfile.TemporaryDirectory() as name:
        scratch = Path(name)
        then = checkout(args.before, scratch) if args.before else None
        for passages in (int(n) for n in args.passages.split(",")):
            with tempfile.TemporaryDirectory(dir=scratch) as each:
                points.append(point(passages, then, args.repeat, Path(each)))
    result = {
        "benchmark": "index-size",
        "data": f"synthetic passages of 30-120 words, Zipf s=1 over 50,000 words, seed {SEED} "
        "(bench.retrieval.synthetic)",
        "repeat": args.repeat,
        "load_average_at_start": load_at_start,
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        **({"before": args.before} if args.before else {}),
        "versions": library_versions((*LIBRARIES, "bm25s", "tantivy")),
        "points": points,
        "elapsed_s": round(time.perf_counter() - started, 1),
    }
    publish("index-size", result, lambda doc: bench_table(doc, "index-size") + "\n")


if __name__ == "__main__":
    main()
