"""Where each answer was lost: the stage at which the right passage dropped out, read from a trace.

Recall says whether a covering chunk (one holding at least half of a labelled span) reached the top
k; it does not say which stage failed when none did. This follows the best-placed covering chunk
through a stored trace, from the context the model would read back through the stages that fed it:

- ``found``: a covering chunk is in the assembled context (or, in a trace without one, in the top k
  of the final ranking);
- ``cut by the token budget``: the ranking had one in its top k, and assembly left it out;
- ``lost in <stage>``: the stage's input had one in its top k and the stage's own top k has none
  (``lost in fusion``, ``lost in rerank``). A rerank stage keeps the candidates past its shortlist
  at their input ranks, so ``lost in rerank`` means the reranker moved one down within its shortlist,
  never that a shortlist shorter than k cut it off;
- ``retrieved too low``: a search returned one, but below the top k, and nothing later lifted it;
- ``never retrieved``: no search returned a covering chunk within its depth;
- ``lost in parsing``: no quote of the question survived parsing (under a golden set's
  ``unresolved: miss``, every label is unresolved in this row's parsed text), so nothing could cover it.

Walking back, a stage with several inputs (fusion) is followed into the input that ranked a covering
chunk best, so the verdict names the stage on the path the passage took. It needs no model: every
result row's traces can be judged again from the store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clear_rag.eval.metrics import Span, first_covering_rank
from clear_rag.types import StageResult, Trace

FOUND = "found"
BUDGET = "cut by the token budget"
TOO_LOW = "retrieved too low"
NEVER = "never retrieved"
PARSING = "lost in parsing"
CONTEXT = "context"  # the assembly stage's name in a trace
VERDICTS = (FOUND, BUDGET, "lost in rerank", "lost in fusion", TOO_LOW, NEVER, PARSING)


@dataclass(frozen=True, slots=True)
class Loss:
    """A question's verdict, the stage it names (``None`` for found and never retrieved), and the best
    covering rank at every stage of the trace (``None`` where no covering chunk was ranked)."""

    verdict: str
    stage: str | None
    ranks: Mapping[str, int | None]

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "stage": self.stage, "ranks": dict(self.ranks)}


def where_lost(trace: Trace, labels: Sequence[Span], top_k: int | None = None) -> Loss:
    """The verdict for one question's ``trace`` against its labelled spans; ``top_k`` defaults to the
    trace's own config (the k the context was cut from)."""
    k = top_k if top_k is not None else int(trace.config.get("top_k", 10))
    stages = {stage.name: stage for stage in trace.stages}
    ranks = {stage.name: first_covering_rank(stage.candidates, labels) for stage in trace.stages}
    if labels and all(label.end <= label.start for label in labels):
        return Loss(PARSING, "parse", ranks)
    if not any(ranks.values()):
        return Loss(NEVER, None, ranks)
    last = trace.stages[-1]
    if last.name == CONTEXT:
        if ranks[CONTEXT] is not None:
            return Loss(FOUND, None, ranks)
        source = stages.get(str(last.detail.get("input", "")))
        if source is not None and _in_top(ranks[source.name], k):
            return Loss(BUDGET, CONTEXT, ranks)
        current = source
    else:
        if _in_top(ranks[last.name], k):
            return Loss(FOUND, None, ranks)
        current = last
    while current is not None:
        inputs = [stages[name] for name in _inputs(current) if name in stages]
        if not inputs:
            break  # a first stage: it returned one (or another search did) below the top k
        held = [stage for stage in inputs if _in_top(ranks[stage.name], k)]
        if held and not _in_top(ranks[current.name], k):
            return Loss(f"lost in {_kind(current)}", current.name, ranks)
        current = min(inputs, key=lambda stage: _sort_rank(ranks[stage.name]))
    return Loss(TOO_LOW, None, ranks)


def _inputs(stage: StageResult) -> list[str]:
    """The stages this one ranked from: a fusion lists them (``"keyword,vector"``), a rerank or the
    context names its one input; a search has none."""
    inputs = stage.detail.get("inputs")
    if isinstance(inputs, str):
        return [name for name in inputs.split(",") if name]
    if isinstance(inputs, list | tuple):
        return [str(name) for name in inputs]
    if "input" in stage.detail:
        return [str(stage.detail["input"])]
    return []


def _kind(stage: StageResult) -> str:
    """``fusion`` for any fusing stage (across retrievers, or one retriever's phrasings), else its name."""
    return "fusion" if "inputs" in stage.detail else stage.name


def _in_top(rank: int | None, k: int) -> bool:
    return rank is not None and rank <= k


def _sort_rank(rank: int | None) -> float:
    return float("inf") if rank is None else rank
