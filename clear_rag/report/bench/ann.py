"""The approximate-index experiment (bench/ann.py) against exact search."""

from __future__ import annotations

import itertools
from typing import Any

from clear_rag.report.bench.common import (
    number,
    times,
)
from clear_rag.report.tables import markdown_table

# -- the approximate-index experiment (bench/ann.py) ---------------------------------------------

EXACT = "clear-rag exact"
EXACT_SEARCH = "clear-rag search (int8 pre-pass + float32 rescoring)"
RECALL_FLOOR = 0.99  # the recall@10 an approximate index must reach to stand in for the exact one
# Exact search stays the default while one exact search costs at most this share of the rest of a
# hybrid question's retrieval (query embedding, BM25, fusion): past it, an approximate index saves
# more than a tenth of the retrieval time.
EXACT_SHARE = 0.1


def _ann_sections(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    found = [("SciFact", doc["scifact"])] if doc.get("scifact") else []
    return found + [(f"synthetic {number(s['vectors'])}", s) for s in doc.get("synthetic", [])]


def _setting(row: dict[str, Any]) -> str:
    return " ".join(f"{k} {v}" for k, v in row["settings"].items())


def _short(row: dict[str, Any]) -> str:
    """A bar's setting in few characters: ``M32 ef64`` for HNSW, ``72/64 lists`` for IVF."""
    shape = row["settings"]
    if "M" in shape:
        return f"M{shape['M']} ef{shape['efSearch']}"
    return f"{shape['nprobe']}/{shape['nlist']} lists"


def ann_best(rows: list[dict[str, Any]], index: str, floor: float = RECALL_FLOOR) -> dict[str, Any] | None:
    """The fastest row of ``index`` ("hnsw" or "ivf") whose recall@10 reaches ``floor``, or None."""
    fit = [r for r in rows if r["index"] == index and r["recall_at_10"] >= floor]
    return min(fit, key=lambda r: r["latency_ms"]) if fit else None


def ann_ratios(doc: dict[str, Any]) -> list[tuple[str, float]]:
    """Bars of the ann plot: per corpus, the fastest HNSW and IVF settings at recall@10 of at least
    ``RECALL_FLOOR`` (their latency ÷ clear-rag exact's), then faiss IndexFlatIP against clear-rag's
    exact search at each dense size (faiss ÷ clear-rag)."""
    bars = []
    for label, section in _ann_sections(doc):
        exact = next(r for r in section["rows"] if r["index"] == EXACT)
        for index in ("hnsw", "ivf"):
            best = ann_best(section["rows"], index)
            if best is not None:
                bars.append(
                    (
                        f"{label}: {index} {_short(best)} (recall {number(best['recall_at_10'])})",
                        best["latency_ms"] / exact["latency_ms"],
                    )
                )
    for dense in doc.get("dense", []):
        engines = dense["engines"]
        bars.append(
            (
                f"dense {number(dense['vectors'])}: faiss IndexFlatIP (exact)",
                engines["faiss IndexFlatIP"]["latency_ms"] / engines[EXACT_SEARCH]["latency_ms"],
            )
        )
    return bars


def exact_crossover(doc: dict[str, Any]) -> dict[str, float] | None:
    """Where exact search stops being the right default: the vector count at which one exact search
    (one thread) costs ``EXACT_SHARE`` of the rest of a hybrid question's retrieval.

    The rest is SciFact's hybrid median retrieve time with the exact index, less its exact vector
    search; the exact latency at n vectors is interpolated linearly between the dense sizes measured
    (and beyond the largest, extrapolated in proportion to n, as a full scan grows)."""
    hybrid = {h["vector_index"]: h for h in doc.get("scifact", {}).get("hybrid", [])}
    points = sorted((d["vectors"], d["engines"][EXACT_SEARCH]["latency_ms"]) for d in doc.get("dense", []))
    if "exact" not in hybrid or not points:
        return None
    exact_at_scifact = next(r for r in doc["scifact"]["rows"] if r["index"] == EXACT)["latency_ms"]
    budget = EXACT_SHARE * (hybrid["exact"]["retrieve_ms_median"] - exact_at_scifact)
    chunks = points[-1][0] * budget / points[-1][1]
    for (n0, t0), (n1, t1) in itertools.pairwise([(0, 0.0), *points]):
        if t1 >= budget:
            chunks = n0 + (n1 - n0) * (budget - t0) / (t1 - t0) if t1 > t0 else n1
            break
    return {"budget_ms": budget, "chunks": float(f"{chunks:.2g}")}


def _ann_table(label: str, section: dict[str, Any]) -> list[str]:
    exact = next(r for r in section["rows"] if r["index"] == EXACT)
    scored = "doc_ndcg_at_10" in exact
    head = [
        "index",
        "backend and settings",
        "build s",
        "index MB",
        "recall@10",
        "latency ms",
        "latency ÷ exact",
    ]
    rows = [
        [
            r["index"],
            r["backend"],
            "—" if r["build_s"] is None else number(r["build_s"]),
            number(r["index_bytes"] / 1e6),
            number(r["recall_at_10"]),
            number(r["latency_ms"]),
            times(r["latency_ms"] / exact["latency_ms"]),
            *([number(r["doc_ndcg_at_10"])] if scored else []),
        ]
        for r in section["rows"]
    ]
    parts = [
        f"**{label}: {number(section['vectors'])} vectors of {section['dim']} dimensions, "
        f"{number(section['queries'])} queries**",
        markdown_table(head + (["doc nDCG@10"] if scored else []), rows),
        f"Data: {section['data']}.",
    ]
    if section.get("hybrid"):
        hybrid = [
            [h["vector_index"], number(h["doc_ndcg_at_10"]), number(h["retrieve_ms_median"])]
            for h in section["hybrid"]
        ]
        parts += [
            f"**{label}, hybrid end to end** ({section['hybrid'][0]['config']}; `vector_index` at its "
            "defaults: hnsw M 32, efConstruction 100, efSearch 128; ivf nlist sqrt(n), nprobe 32)",
            markdown_table(
                ["vector_index", "doc nDCG@10", "retrieve ms, median (query embedding included)"], hybrid
            ),
        ]
    return parts


def _ann_reach(doc: dict[str, Any]) -> str:
    """Per corpus, the fastest setting at recall@10 of at least ``RECALL_FLOOR`` and its build time,
    or that none of the settings built reached it."""
    said = []
    for label, section in _ann_sections(doc):
        fit = [b for b in (ann_best(section["rows"], i) for i in ("hnsw", "ivf")) if b is not None]
        if not fit:
            said.append(f"on {label} none of the settings built did")
            continue
        best = min(fit, key=lambda r: r["latency_ms"])
        said.append(
            f"on {label}, {best['index']} {_setting(best)} ({number(best['recall_at_10'])} at "
            f"{number(best['latency_ms'])} ms, built in {number(best['build_s'])} s)"
        )
    return "; ".join(said)


def _ann(doc: dict[str, Any], name: str) -> str:
    parts = [p for label, section in _ann_sections(doc) for p in _ann_table(label, section)]
    if doc.get("dense"):
        rows = [
            [
                number(d["vectors"]),
                method,
                number(e["latency_ms"]),
                times(e["clear_rag_over_peer_speed"]),
                f"{e['same_top10_as_clear_rag']} of {d['queries']}",
            ]
            for d in doc["dense"]
            for method, e in d["engines"].items()
        ]
        head = ["vectors", "method", "latency ms", "peer ÷ clear-rag latency", "same top 10 as clear-rag"]
        sizes = ", ".join(
            f"{number(d['int8_copy_bytes'] / 1e6)} MB to {number(d['matrix_bytes'] / 1e6)} MB"
            for d in doc["dense"]
        )
        parts += [
            "**Exact dense top 10, one query at a time, one thread each**",
            markdown_table(head, rows),
            "Synthetic clustered vectors (`bench.ann.synthetic_vectors`); the methods take turns query by "
            f"query. The int8 copy clear-rag searches first adds, by size: {sizes} of float32 matrix.",
        ]
    crossover = exact_crossover(doc)
    if crossover is not None:
        parts.append(
            f"Exact search stays the default up to about **{number(crossover['chunks'])} chunks**: there "
            f"one exact search (one thread) costs {number(crossover['budget_ms'])} ms, a tenth of the rest "
            "of a hybrid SciFact question's retrieval in the same run (query embedding, BM25, fusion). "
            f"Past it an approximate index saves more than that where it reaches recall@10 of at least "
            f"{RECALL_FLOOR}: {_ann_reach(doc)}."
        )
    notes = [f"{key.capitalize()}: {doc[key]}" for key in ("latency", "threads", "memory") if doc.get(key)]
    parts.append(". ".join(notes) + ".")
    return "\n\n".join(parts)
