"""The ablation runner's library side, behind ``clear-rag ablate`` and ``clear-rag beir``: a suite run
with the models it names (and their generation cache), a result file derived again from its own
per-question values, replayed from stored traces, merged a row at a time, and printed as a table.
The commands parse options and print; what they do is here.
"""

from __future__ import annotations

import hashlib
import shlex
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clear_rag.config import PipelineConfig
from clear_rag.errors import ConfigError, InputError
from clear_rag.eval.suite import Suite
from clear_rag.providers.base import close_provider


def run_with_models(
    suite: Suite,
    *,
    store: Path,
    embedder: str,
    chat: str,
    results_dir: Path,
    regenerate: bool,
    timeout: float | None,
) -> tuple[dict[str, Any], str]:
    """Run the suite with its models; the result document and what the generation cache did."""
    from clear_rag.eval import generations, runner, stores
    from clear_rag.providers.select import make_chat, make_embedder

    uses_vectors = any("vector" in row.config.retrievers for row in suite.rows)
    model = make_embedder(embedder, timeout=timeout) if uses_vectors else None
    chat_model = None
    if any(suite.needs_chat(row) for row in suite.rows):
        model_chat = make_chat(chat, timeout=timeout)
        chat_model = generations.cached_chat(model_chat, suite, results_dir, regenerate=regenerate)
    opened: dict[str, Any] = {}

    def own(name: str) -> Any:
        """A row's own chat model (``chat:`` in the suite), through the same generation cache."""
        if name not in opened:
            built = make_chat(name, timeout=timeout)
            cache = chat_model.cache if chat_model is not None else None
            opened[name] = generations.cached_chat(
                built, suite, results_dir, regenerate=regenerate, cache=cache
            )
        return opened[name]

    try:
        result = runner.run_suite(
            suite,
            embedder=model,
            chat=chat_model,
            root=stores.stores_root(store),
            show_progress=True,
            chats=own,
        )
    finally:
        for each in [*([chat_model] if chat_model is not None else []), *opened.values()]:
            each.cache.save()
            close_provider(each)
    used = [c for c in [chat_model, *opened.values()] if c is not None]
    summaries = [c.summary() if len(used) == 1 else f"{c.name}: {c.summary()}" for c in used]
    where = chat_model or next(iter(opened.values()), None)
    return result, (f"generations: {'; '.join(summaries)} ({where.cache.path})" if where is not None else "")


def rederived(suite: Suite, target: Path, command: str) -> dict[str, Any]:
    """The result file ``target`` derived again from its own per-question values (``document.rederive``),
    each question's subset read from the suite's data files; the labels must be the ones it was
    measured on."""
    from clear_rag.eval import beir
    from clear_rag.eval.labels import label_files
    from clear_rag.eval.subsets import training_subsets
    from clear_rag.results.document import rederive

    result = existing(suite, target, "re-derive")
    training = None
    if suite.beir is not None and suite.training_split is not None:
        digest = hashlib.sha256(b"".join(p.read_bytes() for p in label_files(suite))).hexdigest()
        if digest != result.get("golden", {}).get("sha256"):
            raise InputError(
                f"was measured on other labels than {', '.join(map(str, label_files(suite)))} hold now",
                path=str(target),
                fix=f"Run `clear-rag ablate {suite.name} --save-results` again, which assigns the subsets",
            )
        dataset = beir.load(suite.beir, split=suite.split)
        qrels = beir.qrels_path(suite.beir, suite.training_split)
        training = training_subsets(dataset.qrels, suite.training_split, qrels)
    return rederive(result, training, command)


def existing(suite: Suite, target: Path, what: str) -> dict[str, Any]:
    """The suite's result file, read; an ``InputError`` saying how to make it when there is none."""
    from clear_rag.results.files import read_result

    if not target.exists():
        raise InputError(
            f"does not exist, so there is nothing to {what}",
            path=str(target),
            fix=f"Run `clear-rag ablate {suite.name} --save-results` first",
        )
    return read_result(target)


def replay_differences(suite: Suite, target: Path, root: Path) -> tuple[list[tuple[str, str]], int]:
    """The (row, question) pairs of ``target`` whose results differ when replayed from the stored traces
    under ``root``, and how many question results there are; an ``InputError`` where the stores are
    not on this machine."""
    from clear_rag.eval import runner, stores

    result = existing(suite, target, "replay")
    missing = stores.missing_stores(result, suite, root)
    if missing:
        raise InputError(
            f"was measured in stores this machine does not have ({', '.join(missing)}): nothing has been "
            "run here yet",
            path=str(target),
            fix=f"Run `clear-rag ablate {suite.name}` (or `make run`) first, then replay",
        )
    replayed = runner.replay(result, suite, root)
    differ = [
        (row["name"], q["id"])
        for row in result["rows"]
        for q in row["questions"]
        if replayed[row["name"]][q["id"]] != runner.replayable(q)
    ]
    return differ, sum(len(r["questions"]) for r in result["rows"])


def table(result: dict[str, Any]) -> str:
    """The suite as a text table: metrics per row, and the headline change against the baseline."""
    names = result["metric_names"]
    main = result.get("headline") or names[0]
    rows = result["rows"]
    width = max([len(r["name"]) for r in rows] + [3])
    head = f"{'row':<{width}}  " + "  ".join(f"{n:>9}" for n in names) + f"  vs baseline {main} [95% CI] p"
    lines = [f"suite {result['suite']}: {result['golden']['questions']} questions", head]
    for row in rows:
        cells = "  ".join(f"{row['metrics'][n]:>9.4f}" if n in row["metrics"] else f"{'':>9}" for n in names)
        versus = row.get("comparisons", {}).get("baseline", {}).get(main)
        note = (
            f"  {versus['difference']:+.4f} [{versus['ci_low']:+.3f}, {versus['ci_high']:+.3f}] "
            f"{_p(versus['p_sign'])} ({versus['up']} up, {versus['down']} down)"
            if versus
            else "  (baseline)"
        )
        lines.append(f"{row['name']:<{width}}  {cells}{note}")
    for skipped in result.get("skipped", []):
        lines.append(f"{skipped['name']:<{width}}  not run: {skipped['reason']}")
    return "\n".join(lines)


def _p(value: float) -> str:
    return "p<0.001" if value < 0.001 else f"p={value:.3f}"


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """``key=value`` pairs, values read as TOML (``true``, ``60``, ``["keyword"]``) or else as text;
    ``chunking.size=128`` sets a nested key."""
    data: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise ConfigError("is not key=value", field="--set", value=pair, fix="Write e.g. --set rrf_k=60")
        try:
            value = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw
        *parents, leaf = key.split(".")
        target = data
        for depth, parent in enumerate(parents, start=1):
            target = target.setdefault(parent, {})
            if not isinstance(target, dict):  # --set chunking=5 --set chunking.size=3
                raise ConfigError(
                    "sets a key inside a setting that another --set gave a value",
                    field="--set",
                    value=pair,
                    fix=f"Set {'.'.join(parents[:depth])} either as a whole or key by key, not both",
                )
        target[leaf] = value
    return data


def check_against(target: Path, against: str | None, save_results: bool) -> None:
    """Fail before anything runs if ``--against`` names no row of ``target`` (or comes without
    ``--save-results``, which it needs)."""
    from clear_rag.results.files import read_result

    if against is None:
        return
    existing = read_result(target) if save_results and target.exists() else None
    names = [r["name"] for r in (existing or {}).get("rows", [])]
    if against not in names:
        raise ConfigError(
            f"is not a row of {target}" + ("" if save_results else " (it needs --save-results)"),
            field="--against",
            value=against,
            fix=f"Name one of its rows: {', '.join(names) or '(it has none yet)'}",
        )


def save_row(
    target: Path,
    result: dict[str, Any],
    command: list[str],
    against: str | None,
    order: Sequence[str] = (),
    *,
    suite_row: bool = False,
) -> None:
    """Merge the one row of ``result`` into ``target``: compared with ``against`` if given, and with
    ``command``, the command that made it, recorded for the reproduce page, unless the row is one the
    suite file defines (``suite_row``) and ``target`` records the suite's command, which makes it too;
    the rows of the suite file stand in its ``order``, first."""
    from clear_rag.results.document import merge
    from clear_rag.results.files import read_result, write_result

    (made,) = result["rows"]
    # read again: another run may have merged a row while this one ran
    existing = read_result(target) if target.exists() else None
    if not (suite_row and existing is not None and existing.get("command")):
        result = {**result, "row_commands": {made["name"]: shlex.join(command)}}
    if against is not None:
        made["against"] = against
    write_result(target, merge(existing, result, order) if existing is not None else result)


def default_name(settings: PipelineConfig) -> str:
    """E.g. ``bm25 (fts5 idf, porter)``, ``dense``, ``hybrid rrf (lucene idf, unstemmed)``."""
    kinds = set(settings.retrievers)
    name = {frozenset({"keyword"}): "bm25", frozenset({"vector"}): "dense"}.get(
        frozenset(kinds), f"hybrid {'rrf' if settings.fusion == 'rrf' else 'min-max'}"
    )
    if "keyword" in kinds:
        name += f" ({settings.idf} idf, {'porter' if settings.stem else 'unstemmed'})"
    return name + (" + rerank" if settings.rerank else "")
