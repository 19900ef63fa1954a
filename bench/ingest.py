"""Re-ingest cost: an unchanged corpus should cost its hashes and nothing more.

    python -m bench.ingest [--repeat 3] [--limit N]

Writes the SciFact abstracts (or, where ../shared/data is absent, copies of the sample corpus) as
text files, ingests them into a fresh store, ingests again with nothing changed, and reports the
median time of each and their ratio. Written to results/bench/ingest.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from bench.common import ROOT, SCIFACT, write_result
from clear_rag.chunk.factory import make_chunker
from clear_rag.ingest import ingest
from clear_rag.store import Store


def _write_corpus(folder: Path, limit: int) -> str:
    corpus = SCIFACT / "corpus.jsonl"
    if corpus.exists():
        with corpus.open(encoding="utf-8") as lines:
            for n, line in enumerate(lines):
                if n >= limit:
                    break
                row = json.loads(line)
                (folder / f"{row['_id']}.txt").write_text(
                    f"{row['title']}\n\n{row['text']}\n", encoding="utf-8"
                )
        return f"beir-scifact corpus.jsonl, first {limit} abstracts as .txt files"
    samples = sorted((ROOT / "corpora" / "sample").iterdir())
    for n in range(limit):
        source = samples[n % len(samples)]
        (folder / f"{n:05d}{source.suffix}").write_bytes(source.read_bytes())
    return f"{limit} copies of corpora/sample files (SciFact absent)"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit", type=int, default=5183)
    args = parser.parse_args()
    chunker = make_chunker("structural", size=256)
    first, again = [], []
    load_at_start = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory() as tmp:
        docs = Path(tmp) / "docs"
        docs.mkdir()
        corpus = _write_corpus(docs, args.limit)
        for run in range(args.repeat):
            with Store(Path(tmp) / f"store{run}", root=tmp) as store:
                started = time.perf_counter()
                report = ingest(store, [docs], chunker)
                first.append(time.perf_counter() - started)
                started = time.perf_counter()
                second = ingest(store, [docs], chunker)
                again.append(time.perf_counter() - started)
                files, chunks = report.count("added"), store.stats().chunks
                if second.count("unchanged") != files:
                    raise SystemExit(
                        f"re-ingest was not a no-op: {second.count('unchanged')} of {files} unchanged"
                    )
    first_s, again_s = statistics.median(first), statistics.median(again)
    result = {
        "benchmark": "ingest",
        "corpus": corpus,
        "files": files,
        "chunks": chunks,
        "chunker": dict(chunker.settings()),
        "repeat": args.repeat,
        "first_ingest_s": {"median": round(first_s, 3), "runs": [round(t, 3) for t in first]},
        "re_ingest_s": {"median": round(again_s, 3), "runs": [round(t, 3) for t in again]},
        "re_ingest_fraction": round(again_s / first_s, 4),
        "load_average_at_start": load_at_start,
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
    }
    path = write_result("ingest", result)
    print(f"{files} files, {chunks} chunks ({corpus})")
    print(f"first ingest  median {first_s:.2f} s over {args.repeat} runs")
    print(f"re-ingest     median {again_s:.3f} s  = {again_s / first_s:.1%} of the first")
    print(f"written to {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
