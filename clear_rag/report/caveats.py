"""What a suite's numbers support and what they do not, written from them, as a list under its tables.

Each caveat is a rule over the result file, stated with the figures that trigger it, so a newer result
file rewrites the sentences with the table:

- which differences from the baseline sit inside their 95% interval (not told apart from noise here),
  and which lie outside it;
- where the sign test and the interval disagree (a consistent small shift, or a few large moves);
- a metric near its ceiling in most rows, where it stops telling rows apart;
- a metric on which no row differs from the baseline beyond its interval;
- categories small enough that one question moves their figure by a large step;
- the rows that did not run, and why.
"""

from __future__ import annotations

from typing import Any

from clear_rag.report.tables import category_counts, footer, headline, table_metrics

CEILING = 0.9  # a metric at or above this in most rows is near its ceiling
SMALL_CATEGORY = 20  # fewer questions than this: one question moves the mean by more than 0.05
ALPHA = 0.05


def _names(rows: list[str]) -> str:
    return "; ".join(rows)


def _baseline(row: dict[str, Any]) -> dict[str, Any]:
    return dict(row.get("comparisons", {}).get("baseline", {}))


def _inside(versus: dict[str, Any]) -> bool:
    return bool(versus["ci_low"] <= 0.0 <= versus["ci_high"])


def caveats(result: dict[str, Any], source: str) -> str:
    rows = result["rows"]
    main = headline(result)
    found: list[str] = []
    compared = [(r["name"], r["comparisons"]["baseline"][main]) for r in rows if main in _baseline(r)]
    inside = [name for name, versus in compared if _inside(versus)]
    outside = [f"{name} ({versus['difference']:+.4f})" for name, versus in compared if not _inside(versus)]
    if compared:
        found.append(
            f"On {main}, {len(inside)} of the {len(compared)} rows compared with the baseline "
            f"({result.get('baseline')}) differ from it by less than their 95% interval (it includes zero), "
            f"so this suite does not tell them apart from it: {_names(inside) or 'none'}. "
            f"Beyond their interval: {_names(outside) or 'none'}."
        )
    disagree = [
        f"{name} (p {versus['p_sign']:.3f}, interval [{versus['ci_low']:+.3f}, {versus['ci_high']:+.3f}])"
        for name, versus in compared
        if (versus["p_sign"] < ALPHA) == _inside(versus)
    ]
    if disagree:
        found.append(
            f"The sign test and the interval disagree on {main} for {_names(disagree)}: the count of "
            "questions moved up and down and the size of the moves tell different stories; read both."
        )
    for metric in table_metrics(result):
        values = [r["metrics"][metric] for r in rows if metric in r.get("metrics", {})]
        high = [v for v in values if v >= CEILING]
        if values and len(high) * 2 > len(values):
            found.append(
                f"{metric} is at least {CEILING} in {len(high)} of {len(values)} rows "
                f"(from {min(values):.4f} to {max(values):.4f}): near its ceiling it stops telling rows "
                f"apart; compare them on {main}."
            )
        if metric == main:
            continue
        against = [_baseline(r)[metric] for r in rows if metric in _baseline(r)]
        if against and all(_inside(v) for v in against):
            found.append(
                f"No row differs from the baseline on {metric} beyond its 95% interval "
                f"(differences from {min(v['difference'] for v in against):+.4f} to "
                f"{max(v['difference'] for v in against):+.4f})."
            )
    counts = category_counts(result)
    small = sorted((n, c) for c, n in counts.items() if n < SMALL_CATEGORY)
    if small and any(r.get("by_category") for r in rows):
        listed = ", ".join(f"{c} ({n})" for n, c in small)
        found.append(
            f"Small categories: {listed} questions; one question moves such a category's mean by up to "
            f"1/{small[0][0]}, so read per-category differences there as anecdotes."
        )
    found += [f"Not run: {s['name']}: {s['reason']}." for s in result.get("skipped", [])]
    if not found:
        found.append(
            "Nothing in these numbers calls for a caveat under the rules of `clear_rag/report/caveats.py`."
        )
    return "".join(f"- {line}\n" for line in found) + "\n" + footer(result, source) + "\n"
