"""The cost of growth: ingest and index time and peak memory against document size and corpus size.

    python -m bench.growth [--sizes 1,4,16,50,64] [--files 250,1000,4000,16000] [--repeat 1]

Two series, each point in a fresh subprocess so that its peak memory is its own:

- **document size**: one text file of N MB on a single line (no line breaks, so no block structure:
  the worst case for a chunker, and the file that once ran for 15 minutes at 6 GB);
- **corpus size**: N files of about 2 KB of text in paragraphs.

Each point times ``ingest`` (read, hash, parse, chunk, store) and the index sync that
``clear-rag ingest`` runs after it (BM25 postings, and vectors from the hash embedder, so that what
is timed is clear-rag's own data path and not a model), and reads the process's resident-set
high-water mark before and after. The slope is the least-squares exponent of time against size on
log-log axes: 1.0 is linear. Written to ``results/bench/growth.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import ROOT, reset_peak, status_kb, write_result

WORDS = 20_000  # vocabulary of the generated text, drawn Zipf-like so common words repeat as in prose
MB = 1_000_000
# The chunks series: the peers that build and answer a million passages in minutes (rank-bm25 scores
# every document in Python and FTS5 every matching one; bench.retrieval times them at 100k).
SCALE_ENGINES = ("clear-rag", "bm25s-numba", "tantivy")
PASSAGES_PER_CHUNK = (
    0.55  # synthetic passages per chunk of the default chunker: 4,000 passages made 7,327 chunks
)
ZIPF = list(itertools.accumulate(1 / (rank + 1) for rank in range(WORDS)))  # cumulative, for choices()


def _vocabulary(rng: random.Random) -> list[str]:
    letters = "etaoinshrdlcumwfgypbvkjxqz"
    return [
        "".join(rng.choice(letters[: 6 + n % 20]) for _ in range(rng.randint(2, 10))) for n in range(WORDS)
    ]


def _write_text(
    path: Path, size: int, rng: random.Random, words: list[str], *, line_every: int | None
) -> None:
    """``size`` bytes of seeded words to ``path``, written in pieces (never whole in memory)."""
    written = 0
    with path.open("w", encoding="utf-8") as out:
        while written < size:
            drawn = rng.choices(words, cum_weights=ZIPF, k=min(2000, size // 4 + 1))
            piece = " ".join(drawn)
            if line_every is not None:
                lines = (drawn[i : i + line_every] for i in range(0, len(drawn), line_every))
                piece = "\n\n".join(" ".join(line) for line in lines)
            piece = piece[: size - written] + " "
            out.write(piece)
            written += len(piece)


def _corpus(folder: Path, kind: str, amount: int) -> int:
    """Write one point's input under ``folder``; the number of bytes written."""
    rng = random.Random(f"{kind}-{amount}")
    words = _vocabulary(rng)
    folder.mkdir(parents=True)
    if kind == "document":
        _write_text(folder / "big.txt", amount * MB, rng, words, line_every=None)
    else:
        for n in range(amount):
            _write_text(folder / f"{n:06d}.txt", 2000, rng, words, line_every=60)
    return sum(p.stat().st_size for p in folder.iterdir())


def _peak_mb() -> float:
    return status_kb("VmHWM") / 1024


def measure(folder: Path, store_dir: Path) -> dict[str, Any]:
    """Ingest and index ``folder`` into a fresh store, in this process: times, counts, memory."""
    from clear_rag.chunk.factory import chunker_for
    from clear_rag.config import PipelineConfig
    from clear_rag.ingest import ingest
    from clear_rag.providers.select import make_embedder
    from clear_rag.session import sync_indexes
    from clear_rag.store import Store

    settings = PipelineConfig()
    chunking = settings.chunking
    chunker = chunker_for(chunking)
    embedder = make_embedder("hash")
    reset_peak()  # the peak inherited from the parent (getrusage's survives exec) is not ours
    baseline = _peak_mb()
    with Store(store_dir, root=folder.parent) as store:
        started = time.perf_counter()
        report = ingest(store, [folder], chunker)
        ingested = time.perf_counter()
        synced = sync_indexes(store, [settings], embedder)
        indexed = time.perf_counter()
        chunks = store.stats().chunks
    failed = [o.message for o in report.outcomes if o.action == "failed"]
    if failed:
        raise SystemExit(f"growth point failed: {failed[0]}")
    return {
        "ingest_s": round(ingested - started, 3),
        "index_s": round(indexed - ingested, 3),
        "total_s": round(indexed - started, 3),
        "chunks": chunks,
        "indexed_chunks": {r.index: r.chunks_added for r in synced},
        "baseline_rss_mb": round(baseline, 1),
        "peak_rss_mb": round(_peak_mb(), 1),
    }


def _point(kind: str, amount: int, repeat: int, tmp: Path) -> dict[str, Any]:
    folder = tmp / f"{kind}-{amount}" / "docs"
    size = _corpus(folder, kind, amount)
    runs = []
    for run in range(repeat):
        store_dir = folder.parent / f"store{run}"
        child = subprocess.run(
            [sys.executable, "-m", "bench.growth", "--measure", str(folder), str(store_dir)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        if child.returncode != 0:
            raise SystemExit(f"{kind} {amount}: {child.stderr.strip()}")
        runs.append(json.loads(child.stdout.strip().splitlines()[-1]))
    total = statistics.median(r["total_s"] for r in runs)
    growth = statistics.median(r["peak_rss_mb"] - r["baseline_rss_mb"] for r in runs)
    return {
        "kind": kind,
        "amount": amount,
        "bytes": size,
        "runs": runs,
        "total_s": total,
        "ingest_s": statistics.median(r["ingest_s"] for r in runs),
        "index_s": statistics.median(r["index_s"] for r in runs),
        "s_per_mb": round(total / (size / MB), 3),
        "rss_growth_mb": round(growth, 1),
        "rss_growth_per_input_byte": round(growth * MB / size, 2),
    }


def _passages_corpus(folder: Path, passages: int, per_file: int = 40) -> int:
    """The synthetic passages of ``bench.retrieval.synthetic`` written ``per_file`` to a file as
    paragraphs; the number of bytes written."""
    from bench.retrieval import synthetic

    _, texts, _, _ = synthetic(passages, 0)
    folder.mkdir(parents=True)
    for first in range(0, passages, per_file):
        text = "\n\n".join(texts[first : first + per_file]) + "\n"
        (folder / f"{first // per_file:06d}.txt").write_text(text, encoding="utf-8")
    return sum(p.stat().st_size for p in folder.iterdir())


def _ingest_point(chunks: int, tmp: Path) -> dict[str, Any]:
    """``measure`` in a fresh process on about ``chunks`` chunks of synthetic passages."""
    folder = tmp / f"ingest-{chunks}" / "docs"
    size = _passages_corpus(folder, round(chunks * PASSAGES_PER_CHUNK))
    child = subprocess.run(
        [sys.executable, "-m", "bench.growth", "--measure", str(folder), str(folder.parent / "store")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if child.returncode != 0:
        raise SystemExit(f"ingest of {chunks} chunks: {child.stderr.strip()}")
    run = json.loads(child.stdout.strip().splitlines()[-1])
    return {
        "target_chunks": chunks,
        "bytes": size,
        **run,
        "rss_growth_mb": run["peak_rss_mb"] - run["baseline_rss_mb"],
    }


def scale_point(chunks: int, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """BM25 build and queries against the peers, exact dense search against faiss, at ``chunks``
    synthetic passages (one passage is one chunk to every engine here), and ingest on the real path
    where ``chunks`` is in ``--ingest-chunks``."""
    from bench.dense import ONE, measure, random_set
    from bench.retrieval import keyword_suite, synthetic

    print(f"{chunks} chunks:", flush=True)
    data = synthetic(chunks, args.queries)
    keyword = keyword_suite(f"synthetic-{chunks}", data, args, tmp, engines=SCALE_ENGINES, trace=False)
    dense = measure(random_set(chunks, args.dim, args.dense_queries), 1, args.repeat, only={(ONE, 1)})
    point: dict[str, Any] = {"chunks": chunks, "keyword": keyword, "dense": dense}
    if chunks in args.ingest_chunks:
        point["ingest"] = _ingest_point(chunks, tmp)
    return point


def scale(args: argparse.Namespace) -> None:
    """The chunks series: every point of ``--chunks`` to results/bench/scale.json."""
    args.ingest_chunks = {int(n) for n in args.ingest_chunks.split(",") if n}
    args.rank_bm25_queries = args.fts5_queries = 0  # neither runs here (SCALE_ENGINES)
    with tempfile.TemporaryDirectory() as tmp:
        points = [scale_point(int(n), args, Path(tmp)) for n in args.chunks.split(",")]
    path = write_result(
        "scale",
        {
            "benchmark": "scale",
            # scale.json has no bench/scale.py: the command that writes it is recorded.
            "command": " ".join(
                [
                    "python -m bench.growth --series chunks",
                    f"--chunks {args.chunks}",
                    f"--ingest-chunks {','.join(map(str, sorted(args.ingest_chunks)))}",
                    f"--queries {args.queries} --dense-queries {args.dense_queries}",
                    f"--dim {args.dim} --repeat {args.repeat}",
                ]
            ),
            "engines": list(SCALE_ENGINES),
            "repeat": args.repeat,
            "threads": "one per engine (bench.retrieval's and bench.dense's settings)",
            "ingest": "the real path in a fresh process (read, parse, chunk with the default config, store "
            "in SQLite, BM25 postings and the hash embedder's vectors) over files of 40 synthetic passages",
            "points": points,
        },
    )
    print(f"wrote {path.relative_to(ROOT)}")


def slope(points: list[dict[str, Any]]) -> float:
    """The least-squares exponent b of time = a * size^b: 1.0 is linear, 2.0 quadratic."""
    xs = [math.log(p["bytes"]) for p in points]
    ys = [math.log(p["total_s"]) for p in points]
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    return round(sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread, 3)


def _table(title: str, unit: str, points: list[dict[str, Any]]) -> list[str]:
    lines = [
        title,
        f"  {unit:>8} {'MB':>8} {'chunks':>8} {'ingest s':>9} {'index s':>8} {'s/MB':>6} "
        f"{'RSS+ MB':>8} {'RSS/input':>9}",
    ]
    for p in points:
        lines.append(
            f"  {p['amount']:>8} {p['bytes'] / MB:>8.1f} {p['runs'][0]['chunks']:>8} {p['ingest_s']:>9.2f} "
            f"{p['index_s']:>8.2f} {p['s_per_mb']:>6.2f} {p['rss_growth_mb']:>8.1f} "
            f"{p['rss_growth_per_input_byte']:>8.1f}x"
        )
    lines.append(f"  slope of time against size (log-log): {slope(points)}  (1.0 is linear)")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1,4,16,50,64", help="document sizes in MB")
    parser.add_argument("--files", default="250,1000,4000,16000", help="corpus sizes in files of ~2 KB")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument(
        "--series", default="document,corpus", help="document and corpus (growth.json), chunks (scale.json)"
    )
    parser.add_argument("--chunks", default="10000,100000,1000000", help="chunk counts of the chunks series")
    parser.add_argument(
        "--ingest-chunks",
        default="10000,100000,1000000",
        help="the chunk counts also ingested on the real path",
    )
    parser.add_argument("--queries", type=int, default=1_000, help="BM25 queries per chunks point")
    parser.add_argument("--dense-queries", type=int, default=200, help="dense queries per chunks point")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--measure", nargs=2, metavar=("FOLDER", "STORE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(Path(args.measure[0]), Path(args.measure[1]))))
        return
    series = set(args.series.split(","))
    if "chunks" in series:
        scale(args)
    if not series & {"document", "corpus"}:
        return
    with tempfile.TemporaryDirectory() as tmp:
        documents = [_point("document", int(n), args.repeat, Path(tmp)) for n in args.sizes.split(",")]
        corpora = [_point("corpus", int(n), args.repeat, Path(tmp)) for n in args.files.split(",")]
    lines = [
        *_table("one single-line document of N MB", "MB", documents),
        *_table("a corpus of N files of ~2 KB", "files", corpora),
        "embedder: hash (the fake: what is timed is parse, chunk, store and index, not a model);",
        "chunking: the default config's (structural, 256 tokens of all-MiniLM-L6-v2's tokenizer);",
        "RSS+ is the growth of the resident-set high-water mark over the process's baseline after imports.",
    ]
    print("\n".join(lines))
    path = write_result(
        "growth",
        {
            "benchmark": "growth",
            "embedder": "hash",
            "chunking": "structural, 256 tokens (the default config)",
            "repeat": args.repeat,
            "document_size": {"points": documents, "slope": slope(documents)},
            "corpus_size": {"points": corpora, "slope": slope(corpora)},
            "summary": lines,
        },
    )
    print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
