"""Hard negatives: abstracts that clear-rag's own retrieval ranks high for a claim but that are not
judged relevant to it.

A reranker trained against random negatives learns to tell topics apart, which BM25 already does; the
shortlist it re-scores is made of near misses, so those are what it must learn to push down (Karpukhin
et al. 2020, DPR; Nogueira and Cho 2019). For each claim the ranking of the mining retriever is cut to
its first ``pool`` documents, the judged ones removed, and ``negatives`` of the rest drawn without
replacement by a generator seeded from ``(seed, claim id)``: the same inputs give the same negatives on
any machine, and adding or removing one claim leaves every other claim's draw as it was. Drawing from
a pool rather than taking the very top softens the false-negative problem of sparse judgements (the
highest-ranked unjudged abstract is the one most likely to be relevant after all; Qu et al. 2021,
RocketQA).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from clear_rag.atomic import write_atomic

Retrieve = Callable[[str], Sequence[str]]  # a claim -> document ids, best first
MINING_ROW = "hybrid min-max (lucene idf, unstemmed)"  # the best beir-scifact row: how negatives are mined
MINING_SUITE = "beir-scifact"


@dataclass(frozen=True, slots=True)
class Group:
    """One claim with its judged abstracts and its mined negatives (in the retriever's rank order)."""

    query_id: str
    query: str
    positives: tuple[str, ...]
    negatives: tuple[str, ...]


def claim_rng(seed: int, query_id: str) -> np.random.Generator:
    """A generator for one claim: seeded by the first 8 bytes of ``sha256(f"{seed}:{query_id}")``."""
    digest = hashlib.sha256(f"{seed}:{query_id}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def training_lists(
    groups: Sequence[Group], texts: Mapping[str, str], *, seed: int, negatives: int, epochs: int
) -> list[tuple[str, list[str]]]:
    """What both models train on, epoch after epoch: the claims in each epoch's seeded order, each
    with one positive then exactly ``negatives`` of its mined hard negatives, drawn by the claim's
    seeded generator (claims that were mined fewer are left out, so every group has the same size)."""
    lists = []
    for epoch in range(epochs):
        for i in np.random.default_rng(seed + epoch).permutation(len(groups)):
            group = groups[int(i)]
            if len(group.negatives) < negatives:
                continue
            rng = claim_rng(seed + epoch, group.query_id)
            positive = group.positives[int(rng.integers(len(group.positives)))]
            picked = sorted(rng.choice(len(group.negatives), size=negatives, replace=False))
            lists.append((group.query, [texts[positive], *(texts[group.negatives[int(j)]] for j in picked)]))
    return lists


def mine(
    retrieve: Retrieve,
    claims: Mapping[str, str],
    positives: Mapping[str, Mapping[str, float]],
    *,
    negatives: int = 7,
    pool: int = 30,
    seed: int = 0,
) -> list[Group]:
    """One ``Group`` per claim, in sorted claim-id order; a claim with no positive is left out.

    Negatives are never judged relevant (any grade above 0 counts as judged). A claim whose pool holds
    fewer than ``negatives`` unjudged documents gets all of them.
    """
    if isinstance(negatives, bool) or negatives < 1:
        raise ValueError(f"negatives={negatives!r} is invalid; use a positive count such as 7")
    if isinstance(pool, bool) or pool < negatives:
        raise ValueError(f"pool={pool!r} is smaller than negatives={negatives}; use a pool such as 30")
    groups = []
    for query_id in sorted(claims):
        judged = sorted(doc for doc, grade in positives.get(query_id, {}).items() if grade > 0)
        if not judged:
            continue
        ranked = list(dict.fromkeys(retrieve(claims[query_id])))
        candidates = [doc for doc in ranked[:pool] if doc not in set(judged)]
        if len(candidates) > negatives:
            picked = claim_rng(seed, query_id).choice(len(candidates), size=negatives, replace=False)
            candidates = [candidates[i] for i in sorted(picked)]
        groups.append(Group(query_id, claims[query_id], tuple(judged), tuple(candidates)))
    return groups


def save_groups(path: Path, groups: Sequence[Group], settings: Mapping[str, Any]) -> None:
    """The mined groups and how they were mined, as one JSON file (written atomically)."""
    document = {"settings": dict(settings), "groups": [asdict(g) for g in groups]}
    write_atomic(path, json.dumps(document, indent=1, sort_keys=True) + "\n")


def load_groups(path: Path) -> tuple[list[Group], dict[str, Any]]:
    document = json.loads(path.read_text(encoding="utf-8"))
    groups = [
        Group(g["query_id"], g["query"], tuple(g["positives"]), tuple(g["negatives"]))
        for g in document["groups"]
    ]
    return groups, document["settings"]


def hybrid_retriever(stores: Path, embedder_name: str = "minilm") -> tuple[Retrieve, dict[str, str], Any]:
    """The mining retriever: the ``beir-scifact`` suite's best row (BM25 + the embedded MiniLM int8
    dense index, fused min-max) over its store, brought up to date the way the ablation runner does
    (``stores.prepare``: nothing is embedded again when the store has the vectors).

    Returns the retrieve function, the models it records, and the store (to be closed by the caller).
    """
    from clear_rag.eval import stores as suite_stores
    from clear_rag.eval.suite import load_suite
    from clear_rag.providers.select import make_embedder
    from clear_rag.retrieve.pipeline import final_ranking
    from clear_rag.session import open_pipeline

    suite = load_suite(MINING_SUITE)
    row = next(r for r in suite.rows if r.name == MINING_ROW)
    config = row.config.replace(rerank=False)
    embedder = make_embedder(embedder_name)
    store, _ = suite_stores.prepare(suite, config.chunking, stores, embedder)
    pipeline = open_pipeline(store, config, embedder=embedder)

    def retrieve(claim: str) -> list[str]:
        return [c.doc_id for c in final_ranking(pipeline.retrieve(claim).stages)]

    return retrieve, dict(pipeline.models), store
