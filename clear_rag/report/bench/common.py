"""What every benchmark table shares: the footer that says where and when it ran, and one way of
printing a figure (``number``, ``times``)."""

from __future__ import annotations

import math
from typing import Any

# Fields every benchmark records beside its numbers (bench/common.py), said once in the footer.
ENVIRONMENT = ("date", "commit", "python", "machine", "cpus")
OURS = "clear-rag"  # the engine and method names of clear-rag's own rows start with this


def number(value: float) -> str:
    """A figure as every bench table prints it: a count as it is (5,183), a measure in whole units
    with thousands separators from 100 up (6,938), else to three significant figures (98.1, 0.760,
    0.0465)."""
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):  # json.loads reads NaN and Infinity
        return str(value)
    rounded = float(f"{value:.3g}")
    if rounded == 0:
        return "0"
    if abs(rounded) >= 100:
        return f"{value:,.0f}"
    return f"{rounded:.{2 - math.floor(math.log10(abs(rounded)))}f}"


def times(value: float) -> str:
    """A ratio: ``2.96×``."""
    return f"{number(value)}×"


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _spread(summary: dict[str, float]) -> str:
    return f"{number(summary['median'])} / {number(summary['p90'])}"


def source(name: str) -> str:
    return f"results/bench/{name}.json"


def footer(doc: dict[str, Any], name: str) -> str:
    """Where and when the benchmark ran, the versions and load it records, and the file it came from."""
    where = [
        str(doc["machine"]) if "machine" in doc else "",
        f"{doc['cpus']} CPUs" if "cpus" in doc else "",
        f"Python {doc['python']}" if "python" in doc else "",
        f"commit `{doc['commit']}`" if doc.get("commit") else "",
        str(doc["date"])[:10] if "date" in doc else "",
    ]
    parts = [f"Run on {', '.join(w for w in where if w)}"] if any(where) else []
    versions = doc.get("versions")
    if isinstance(versions, dict) and versions:
        parts.append("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    loads = [
        f"{', '.join(number(x) for x in doc[key])} {when}"
        for key, when in (("load_average_at_start", "at the start"), ("load_average_at_end", "at the end"))
        if doc.get(key)
    ]
    if loads:
        parts.append(f"load average (1, 5 and 15 minutes) {' and '.join(loads)}")
    parts.append(f"from `{source(name)}`")
    return "; ".join(parts) + "."


# -- ratios -------------------------------------------------------------------------------------
