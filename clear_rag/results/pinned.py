"""Every row of a result file read against one pinned row: what the Results view shows.

A result file compares each row with the baseline and the previous row only. A person reading it
wants to pin any row and ask of every other one: which settings differ, did each metric move by more
than noise, and which questions moved. These are pure functions over a result document
(``clear_rag.results.document``), so the page and a static export compute the same figures.

Comparisons go through ``clear_rag.eval.significance.compare`` exactly as the stored ones do (questions
paired by id, in the other row's question order, over the questions that have the metric in both
rows), so pinning the baseline reproduces the file's baseline comparisons to the last digit.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from typing import Any

from clear_rag.config import PipelineConfig
from clear_rag.errors import InputError, did_you_mean
from clear_rag.eval.significance import compare

Row = Mapping[str, Any]


def config_diff(
    a: Mapping[str, Any], b: Mapping[str, Any], defaults: Mapping[str, Any] | None = None
) -> dict[str, tuple[Any, Any]]:
    """The settings whose values differ between configs ``a`` and ``b``, as ``{key: (a, b)}``.

    Nested tables become dotted keys (``chunking.size``) so a change of chunk size reads as that and
    not as two whole tables; a key that only one config has is ``None`` on the other side, unless
    its value there is its value in ``defaults`` (``PipelineConfig()``'s, by default): a row written
    before a setting existed ran with what is now its default, so a row merged in later that records
    ``rerank_fusion: replace`` differs from them in nothing (the predecessor showed that key as a
    difference against every other row). Keys come in ``a``'s order, then those only ``b`` has.
    """
    flat_a, flat_b = dict(_flatten(a)), dict(_flatten(b))
    flat_defaults = _default_settings() if defaults is None else dict(_flatten(defaults))
    keys = list(flat_a) + [k for k in flat_b if k not in flat_a]
    return {
        k: (flat_a.get(k), flat_b.get(k))
        for k in keys
        if flat_a.get(k) != flat_b.get(k) and not _default_where_lacking(k, flat_a, flat_b, flat_defaults)
    }


@cache
def _default_settings() -> dict[str, Any]:
    return dict(_flatten(PipelineConfig().to_dict()))


def _default_where_lacking(
    key: str, flat_a: Mapping[str, Any], flat_b: Mapping[str, Any], defaults: Mapping[str, Any]
) -> bool:
    """True when one config lacks ``key`` altogether (no ``key.…`` under it either: ``weights: {}``
    against ``weights.vector`` is a real difference) and the other has it at its default."""
    if key not in defaults:
        return False
    for has, other in ((flat_a, flat_b), (flat_b, flat_a)):
        lacking = key not in other and not any(o.startswith(f"{key}.") for o in other)
        if key in has and lacking and has[key] == defaults[key]:
            return True
    return False


def _flatten(table: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in table.items():
        # An empty table (``weights: {}``) is a value of its own: flattening it would make it vanish.
        if isinstance(value, Mapping) and value:
            yield from _flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def find_row(document: Mapping[str, Any], name: str, *, source: str | None = None) -> Row:
    """The measured row called ``name``; an ``InputError`` naming the file, the row and the nearest
    names when there is none (a skipped row has no figures to read)."""
    rows: Sequence[Row] = document.get("rows", [])
    for row in rows:
        if row.get("name") == name:
            return row
    names = [str(r.get("name")) for r in rows]
    skipped = {s.get("name"): s.get("reason") for s in document.get("skipped", [])}
    where = source or str(document.get("suite", "the result file"))
    if name in skipped:
        raise InputError(
            f"the row was skipped ({skipped[name]})", path=where, field="row", value=name,
            fix="Pin a measured row: " + ", ".join(repr(n) for n in names),
        )  # fmt: skip
    hint = did_you_mean(name, names, cutoff=0.4)
    raise InputError(
        "no row has this name", path=where, field="row", value=name,
        fix=f"{hint}The rows are: " + ", ".join(repr(n) for n in names),
    )  # fmt: skip


def _pairs(pinned: Row, other: Row, metric: str) -> tuple[list[float], list[float]]:
    """The metric's values for the questions both rows have it for, paired by id in ``other``'s
    question order (the order ``document.comparisons`` pairs in: the bootstrap depends on it)."""
    theirs = {q["id"]: q["metrics"] for q in pinned["questions"]}
    pairs = [
        (theirs[q["id"]][metric], q["metrics"][metric])
        for q in other["questions"]
        if metric in q["metrics"] and metric in theirs.get(q["id"], {})
    ]
    return [p for p, _ in pairs], [o for _, o in pairs]


def against_pinned(
    document: Mapping[str, Any], pinned_row_name: str, *, source: str | None = None
) -> list[dict[str, Any]]:
    """Every other row read against the pinned one, in the file's order, skipped rows last.

    Each entry: ``name``, ``config_diff`` (``{key: [pinned, other]}``) and ``comparisons``: per metric of
    ``metric_names`` a ``Comparison`` as a dict, ``difference`` being other minus pinned. A metric no
    question has in both rows is left out rather than shown as a difference of zero. A skipped row has
    its ``skipped`` reason and no comparisons. ``source`` names the file in errors.
    """
    pinned = find_row(document, pinned_row_name, source=source)
    metrics: Sequence[str] = document.get("metric_names", [])
    out: list[dict[str, Any]] = []
    for row in document["rows"]:
        if row["name"] == pinned_row_name:
            continue
        entry: dict[str, Any] = {
            "name": row["name"],
            # a row's own chat model (``chat:`` in its suite) is a setting of the row as much as its config
            "config_diff": {
                k: list(v)
                for k, v in config_diff(
                    {**pinned["config"], "chat": pinned.get("chat")},
                    {**row["config"], "chat": row.get("chat")},
                ).items()
            },
        }
        if "skipped" in row:
            out.append({**entry, "skipped": row["skipped"], "comparisons": {}})
            continue
        found = {}
        for metric in metrics:
            base, other = _pairs(pinned, row, metric)
            if base:
                found[metric] = compare(metric, pinned_row_name, base, other).to_dict()
        out.append({**entry, "comparisons": found})
    for skipped in document.get("skipped", []):
        out.append(
            {"name": skipped["name"], "skipped": skipped["reason"], "config_diff": {}, "comparisons": {}}
        )
    return out


def moves(
    document: Mapping[str, Any], pinned: str, other: str, metric: str, *, source: str | None = None
) -> list[dict[str, Any]]:
    """The questions behind one cell: each question whose ``metric`` differs between the two rows.

    Each: ``id``, ``category``, ``difference`` (other minus pinned), ``direction`` (``up`` or ``down``),
    and for ``pinned`` and ``row`` its ``value``, ``first_rank`` (first covering rank), loss ``verdict``,
    ``trace`` id, and in a suite that grades answers the ``answer``, the grader's ``graded`` verdict
    and, where the support check read the answer, its ``support`` (line, reason, sentence verdicts).
    Largest moves first, ties by id, so the list is the same on every call; the ups and downs counted
    here are the comparison's ``up`` and ``down``.
    """
    a, b = find_row(document, pinned, source=source), find_row(document, other, source=source)
    names: Sequence[str] = document.get("metric_names", [])
    if metric not in names:
        raise InputError(
            "is not a metric of this file", path=source or str(document.get("suite")), field="metric",
            value=metric, fix="Use one of: " + ", ".join(names),
        )  # fmt: skip
    theirs = {q["id"]: q for q in a["questions"]}
    found = []
    for q in b["questions"]:
        p = theirs.get(q["id"])
        if p is None or metric not in q["metrics"] or metric not in p["metrics"]:
            continue
        before, after = p["metrics"][metric], q["metrics"][metric]
        if before == after:
            continue
        found.append(
            {
                "id": q["id"],
                "category": q.get("category"),
                "difference": after - before,
                "direction": "up" if after > before else "down",
                "pinned": _side(p, before),
                "row": _side(q, after),
            }
        )
    return sorted(found, key=lambda m: (-abs(m["difference"]), m["id"]))


def _side(question: Mapping[str, Any], value: float) -> dict[str, Any]:
    return {
        "value": value,
        "first_rank": question.get("first_rank"),
        "verdict": (question.get("lost") or {}).get("verdict"),
        "trace": question.get("trace"),
        **(
            {
                "answer": question.get("answer", ""),
                "graded": question["graded"].get("verdict"),
                # the support check's line and sentence verdicts beside the grader's, where it ran
                **({"support": question["graded"]["support"]} if "support" in question["graded"] else {}),
            }
            if "graded" in question
            else {}
        ),
    }
