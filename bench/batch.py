"""Batch size of the shipped ONNX models: how fast, and whether a row's output depends on its batch.

    python -m bench.batch [--rounds 3] [--sizes 1,4,8,16,32]

The work is the project's own (nothing from ../shared): corpora/tech parsed and cut by the structural
chunker at 256 tokens, as the tech suite's stores are, and the sentences of those chunks (the support
check's and the extractive answerer's unit), scored against the tech golden set's first questions.

- **embedder** (``minilm``, the shipped int8 file): the chunks embedded as documents at each batch size.
- **cross-encoder, passages** (``scifact-minilm-l6``, int8): each question against its first
  ``--passages`` chunks, as the rerank stage scores a shortlist.
- **cross-encoder, sentences**: each question against ``--sentences`` sentences, as the support check
  and the extractive answerer score them.

For each batch size: milliseconds per text or pair (the median over ``--rounds`` interleaved rounds,
the order of the sizes reversing each round, so that load from other work falls on all of them), and
how far a row's output moves with its batch: the largest absolute difference between each row's
output in the batched call and the same row computed alone (batch 1), over every row. An int8 model
quantised dynamically (per tensor, at run time) scales each batch by its own range, so a passage's
logit can depend on which other passages share its batch; an output that does not is exactly 0.
Written to results/bench/batch.json.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from bench.common import ROOT, publish

Run = Callable[[int], np.ndarray]  # batch size -> every output of the workload, stacked
RERANKER = "scifact-minilm-l6"
EMBEDDER = "scifact-minilm-l6-embed"


def tech_chunks(size: int = 256) -> list[str]:
    """The chunk texts of corpora/tech at ``size`` tokens, structural chunker: what the suites embed."""
    from clear_rag.chunk.factory import make_chunker
    from clear_rag.ingest import discover, document_id, parse_file

    corpus = ROOT / "corpora" / "tech"
    chunker = make_chunker("structural", size=size)
    texts = []
    files, _ = discover([corpus])
    for path in files:
        document = parse_file(path, document_id(path, corpus)).document
        texts += [chunk.text for chunk in chunker.chunk(document)]
    return texts


def questions(count: int) -> list[str]:
    from clear_rag.eval.golden import read_golden

    written, _ = read_golden(ROOT / "golden" / "tech.yaml")
    return [q.question for q in written.questions[:count]]


def sentences(texts: Sequence[str], count: int) -> list[str]:
    from clear_rag.generate.sentences import sentence_spans

    found = [text[a:b] for text in texts for a, b in sentence_spans(text)]
    step = max(1, len(found) // count)
    return found[::step][:count]


def embedder_run(texts: list[str], load: Callable[[int], Any]) -> Run:
    models: dict[int, Any] = {}

    def run(batch: int) -> np.ndarray:
        model = models.setdefault(batch, load(batch))
        return np.asarray(model.embed(texts, kind="document"))

    return run


def cross_encoder_run(pairs: list[tuple[str, list[str]]]) -> Run:
    from clear_rag.models import shipped_reranker

    models: dict[int, Any] = {}

    def run(batch: int) -> np.ndarray:
        # memo=0: every pair through the model, so that each size is timed on the same work
        model = models.setdefault(batch, shipped_reranker(RERANKER, batch_size=batch, threads=2, memo=0))
        return np.concatenate([np.asarray(model.score(q, passages)) for q, passages in pairs])

    return run


def sweep(run: Run, units: int, sizes: Sequence[int], rounds: int) -> dict[str, Any]:
    """ms per unit at each batch size, and each size's largest departure from batch 1."""
    run(sizes[0])  # warm-up: sessions, thread pools, first allocations
    times: dict[int, list[float]] = {size: [] for size in sizes}
    outputs: dict[int, np.ndarray] = {}
    for round_ in range(rounds):
        for size in sizes if round_ % 2 == 0 else list(reversed(sizes)):
            started = time.perf_counter()
            outputs[size] = run(size)
            times[size].append((time.perf_counter() - started) * 1000 / units)
        print(f"  round {round_ + 1}/{rounds}", file=sys.stderr, flush=True)
    alone = outputs[1] if 1 in outputs else run(1)
    medians = {size: statistics.median(values) for size, values in times.items()}
    fastest = min(sizes, key=medians.__getitem__)
    return {
        "units": units,
        "by_batch": {
            str(size): {
                "ms_per_unit": round(medians[size], 2),
                "ratio_to_fastest": round(medians[size] / medians[fastest], 3),
                "max_abs_diff_to_alone": float(np.abs(outputs[size] - alone).max()),
            }
            for size in sizes
        },
        "fastest": fastest,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sizes", default="1,4,8,16,32", help="batch sizes, comma-separated (1 is added)")
    parser.add_argument("--questions", type=int, default=6, help="tech questions for the cross-encoder")
    parser.add_argument("--passages", type=int, default=50, help="chunks each question is scored against")
    parser.add_argument("--sentences", type=int, default=60, help="sentences each question is scored against")
    args = parser.parse_args(argv)
    sizes = sorted({1, *(int(s) for s in args.sizes.split(","))})
    started = time.perf_counter()
    chunks = tech_chunks()
    asked = questions(args.questions)
    said = sentences(chunks, args.sentences)
    from clear_rag.models import shipped_embedder
    from clear_rag.providers.onnx import minilm_int8

    described = f"{len(chunks)} chunks of corpora/tech (structural 256)"
    work: dict[str, tuple[Run, str, int, str]] = {
        "embedder minilm": (
            embedder_run(chunks, lambda b: minilm_int8(threads=2, batch_size=b)),
            "all-MiniLM-L6-v2-int8 (the default embedder, int8 as published)",
            len(chunks),
            described,
        ),
        f"embedder {EMBEDDER}": (
            embedder_run(chunks, lambda b: shipped_embedder(EMBEDDER, threads=2, batch_size=b)),
            f"{EMBEDDER} (trained and quantised here, int8)",
            len(chunks),
            described,
        ),
        "cross-encoder, passages": (
            cross_encoder_run([(q, chunks[: args.passages]) for q in asked]),
            f"{RERANKER} (trained and quantised here, int8)",
            len(asked) * min(args.passages, len(chunks)),
            f"{len(asked)} tech questions x the first {args.passages} chunks",
        ),
        "cross-encoder, sentences": (
            cross_encoder_run([(q, said) for q in asked]),
            f"{RERANKER} (trained and quantised here, int8)",
            len(asked) * len(said),
            f"{len(asked)} tech questions x {len(said)} sentences of the chunks",
        ),
    }
    parts = {}
    for name, (run, model, units, data) in work.items():
        print(f"{name}: {data}", file=sys.stderr, flush=True)
        parts[name] = {"model": model, "data": data, **sweep(run, units, sizes, args.rounds)}
    result = {
        "benchmark": "batch size of the shipped ONNX models (2 threads)",
        "command": "python -m bench.batch " + " ".join(argv if argv is not None else sys.argv[1:]),
        "rounds": args.rounds,
        "parts": parts,
        "elapsed_s": round(time.perf_counter() - started, 1),
    }
    from clear_rag.report.bench import bench_table

    publish("batch", result, lambda doc: bench_table(doc, "batch") + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
