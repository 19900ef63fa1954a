"""The models and what draws them: embedding throughput (bench/embed.py), batch sizes
(bench/batch.py), the rank flow (bench/rankflow.py) and what pip installs (bench/package_size.py)."""

from __future__ import annotations

from typing import Any

from clear_rag.report.bench.common import (
    _plural,
    number,
    times,
)
from clear_rag.report.tables import markdown_table


def _embed(doc: dict[str, Any], name: str) -> str:
    """Embedding throughput (bench/embed.py): texts/s of each embedder or step, its ratio to the base
    the file names, and the min and median cosine of its vectors to sentence-transformers' fp32 ones."""
    section = doc.get("main") or doc
    table = section.get("contenders") or section["steps"]
    base = next(k for k in next(iter(table.values())) if k.startswith("ratio_to_"))
    head = ["embedder", "texts/s", f"÷ {base.removeprefix('ratio_to_')}", "cosine min", "cosine median"]
    rows = [
        [
            label,
            number(row["texts_per_s"]),
            times(row[base]),
            *(f"{c:.4f}" for c in row["cosine_to_torch_fp32"].values()),
        ]
        for label, row in table.items()
    ]
    how = (
        f"{section['slices']} slices interleaved, median"
        if "slices" in section
        else f"{section['rounds']} rounds interleaved, median"
    )
    st = section.get("settings", {}).get("sentence-transformers", {})
    peer = f"; sentence-transformers batch {st['batch_size']}, its own length sorting" if st else ""
    summary = (
        f"{doc['data']}: {_plural(section['texts'], 'text')} timed, {doc['max_tokens']} tokens, "
        f"{doc['threads']} threads each; {how}{peer}; cosine to sentence-transformers on the fp32 weights."
    )
    return "\n\n".join([markdown_table(head, rows), summary])


def _batch(doc: dict[str, Any], name: str) -> str:
    """Batch size of the shipped models (bench/batch.py): per workload and size, ms per text or pair,
    the ratio to the fastest size, and the largest change of a row's output against the row alone."""
    head = ["model and workload", "batch", "ms each", "÷ fastest", "largest change against alone"]
    rows = []
    for label, part in doc["parts"].items():
        for size, row in part["by_batch"].items():
            moved = row["max_abs_diff_to_alone"]
            rows.append(
                [
                    f"{label}: {part['data']}" if size == next(iter(part["by_batch"])) else "",
                    size + (" (fastest)" if int(size) == part["fastest"] else ""),
                    number(row["ms_per_unit"]),
                    times(row["ratio_to_fastest"]),
                    "0 (exactly)" if moved == 0 else f"{moved:.4g}",
                ]
            )
    said = (
        f"{doc['rounds']} rounds, the sizes' order reversing each round, median; 2 threads. The last "
        "column is the largest absolute difference, over every row, between a row's output (a vector "
        "component, or a logit) in the batched call and the same row computed alone."
    )
    return "\n\n".join([markdown_table(head, rows), said])


def _rankflow(doc: dict[str, Any], name: str) -> str:
    """The page's rank flow (bench/rankflow.py): per stored question and build of the page, the wait
    from a click in the history to the painted replay, the longest main-thread task in it, and the
    synchronous redraws, medians over the rounds, with this tree's per-round ratio to the peer."""
    head = ["question", "page", "boxes", "replay painted ms", "longest task ms"]
    head += ["rows: all ms", "rows: back ms", "unfold phrasings ms"]

    def shown(value: float | None) -> str:
        return "—" if value is None else number(value)

    rows, ratios = [], []
    for question, point in doc["traces"].items():
        for i, (page, row) in enumerate(point["contenders"].items()):
            rows.append(
                [
                    f"{question} ({point['stages']} stages)" if i == 0 else "",
                    page,
                    number(row["boxes"]),
                    *[shown(row[key]) for key in ("painted_ms", "longest_task_ms", "rows_all_ms")],
                    *[shown(row[key]) for key in ("rows_back_ms", "unfold_ms")],
                ]
            )
            if "ratio_to_peer" in row:
                r = row["ratio_to_peer"]
                ratios.append(
                    f"{question}: painted {shown(r['painted_ms'])}×, longest task "
                    f"{shown(r['longest_task_ms'])}×, rows all {shown(r['rows_all_ms'])}×"
                )
    said = (
        f"{doc['rounds']} rounds, the pages' order alternating, median; a long task is one over 50 ms "
        f"(0: none was). {doc['corpus']}; {doc['providers']}; {doc['browser']}; peer: {doc['peer']}."
    )
    parts = [markdown_table(head, rows), said]
    if ratios:
        parts.append("This tree ÷ the peer, median of the per-round ratios: " + "; ".join(ratios) + ".")
    return "\n\n".join(parts)


def _package_size(doc: dict[str, Any], name: str) -> str:
    """What pip builds of the code and of the weights (``bench/package_size.py``), and a checkout's
    files, beside the code package of an earlier commit where one was measured."""
    rows = [
        ["code", f"`{doc['code_wheel']}`", number(doc["code_wheel_mb"])],
        ["weights", f"`{doc['weights_wheel']}`", number(doc["weights_wheel_mb"])],
    ]
    said = f"A checkout's files: {number(doc['checkout_mb'])} MB"
    if doc.get("before"):
        rows.append(
            [
                f"code at {doc['before']}, weights inside",
                f"`{doc['code_wheel_before']}`",
                number(doc["code_wheel_mb_before"]),
            ]
        )
        said += f" ({number(doc['checkout_mb_before'])} MB at {doc['before']})"
    table = markdown_table(["package", "wheel", "MB"], rows)
    return f"{table.rstrip()}\n\n{said}; wheels built with `pip wheel --no-deps`."
