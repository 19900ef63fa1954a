"""``clear-rag ablate SUITE``: run every row of a suite, print the table, write results/<suite>.json.

``clear-rag ablate SUITE --row ROW`` runs one row, changed by ``--set`` and renamed by ``--name`` if
asked (with another ``--embedder`` too), and merges it into the suite's result file, recording the
command that made it. ``clear-rag beir PATH`` is the same runner over a BEIR folder without a suite
file: one row, the config from ``--config`` and ``--set``, merged into ``results/beir-<dataset>.json``.
Both merge through ``save_row``.
"""

from __future__ import annotations

import hashlib
import shlex
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from clear_rag import environ
from clear_rag.cli.app import (
    DEFAULT_STORE,
    EmbedderOption,
    RerankerOption,
    StoreOption,
    SupportOption,
    TimeoutOption,
    app,
    close_provider,
    fail,
)
from clear_rag.config import PipelineConfig
from clear_rag.errors import ClearRagError, ConfigError, InputError
from clear_rag.providers.select import DEFAULT_EMBEDDER, DEFAULT_WRITER
from clear_rag.results.files import BASELINE_FAKE

if TYPE_CHECKING:
    from clear_rag.eval.suite import Suite


ResultsDirOption = Annotated[Path, typer.Option("--results-dir", help="Where result files go.")]
SaveOption = Annotated[bool, typer.Option("--save-results", help="Write the result file (atomically).")]
SuiteChatOption = Annotated[
    str,
    typer.Option(
        "--chat",
        envvar=environ.CHAT.name,
        help="Chat model of the rows that answer (a suite with generate: true), expand the query or "
        "use HyDE; their generations come from results/generations/SUITE.json where cached, so the "
        "model runs only for new ones.",
    ),
]
SetOption = Annotated[
    list[str] | None, typer.Option("--set", help="Override a setting: key=value (repeatable).")
]
AgainstOption = Annotated[
    str | None,
    typer.Option(
        help="With --save-results: compare the row with this row of the file, not the one before it."
    ),
]


@app.command("ablate")
def ablate_command(
    suite: Annotated[str, typer.Argument(help="A suite name (golden/suites/NAME.yaml) or a suite file.")],
    store: StoreOption = Path(DEFAULT_STORE),
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
    chat: SuiteChatOption = DEFAULT_WRITER,
    reranker: RerankerOption = None,
    support: SupportOption = None,
    timeout: TimeoutOption = None,
    golden: Annotated[
        Path | None,
        typer.Option(
            "--golden", help="Evaluate this golden file's questions against the suite's rows instead."
        ),
    ] = None,
    save_results: SaveOption = False,
    bless: Annotated[
        bool,
        typer.Option(
            "--bless", help=f"Re-bless {BASELINE_FAKE}, the fake-provider baseline `make test` gates on."
        ),
    ] = False,
    replay: Annotated[
        bool, typer.Option("--replay", help="Recompute the saved results from stored traces, without models.")
    ] = False,
    rederive: Annotated[
        bool,
        typer.Option(
            "--rederive",
            help="Derive the saved result file again from its own per-question values, running no "
            "retrieval: each row's aggregates per subset (the suite's training_split) and every paired "
            "comparison; with --save-results, write it back.",
        ),
    ] = False,
    regenerate: Annotated[
        bool,
        typer.Option(
            "--regenerate",
            help="Ask the chat model again instead of the cached generations; report how many changed "
            "and how far each metric moved.",
        ),
    ] = False,
    results_dir: ResultsDirOption = Path("results"),
    row: Annotated[
        str | None,
        typer.Option(
            "--row",
            help="Run only this row; with --save-results, merge it into the suite's result file. With "
            "--set or --name it becomes a new row, which records the command that made it.",
        ),
    ] = None,
    overrides: SetOption = None,
    name: Annotated[str | None, typer.Option(help="With --row: the name of the row it makes.")] = None,
    against: AgainstOption = None,
) -> None:
    """Run an ablation suite: every row over the same golden questions, with paired comparisons.

    The suite's stores live under the store directory (--store, $CLEAR_RAG_STORE), in ablate/.
    """
    from clear_rag.eval import runner
    from clear_rag.eval.suite import load_suite
    from clear_rag.results import reproduce
    from clear_rag.results.files import read_result, write_result

    try:
        loaded = load_suite(suite)
        if golden is not None:
            loaded = loaded.with_golden(golden)
        loaded.check_data()
        if reranker is not None:
            loaded = loaded.with_reranker(reranker)
        if support is not None and loaded.generate:  # only a suite that answers checks its answers
            loaded = loaded.with_support(support)
        target = results_dir / f"{loaded.name}.json"
        if row is None:
            given = [o for o, v in (("--set", overrides), ("--name", name), ("--against", against)) if v]
            if given:
                raise ConfigError(
                    "changes one row, and no --row names it", field=given[0], fix="Add --row ROW"
                )
        else:
            whole = [
                o
                for o, v in (
                    ("--bless", bless),
                    ("--replay", replay),
                    ("--regenerate", regenerate),
                    ("--rederive", rederive),
                )
                if v
            ]
            if whole:
                raise ConfigError(
                    "works on the whole suite", field=whole[0], fix=f"Drop --row, or drop {whole[0]}"
                )
            order = [r.name for r in loaded.rows]
            loaded = loaded.one_row(row, parse_overrides(overrides or []), name)
            check_against(target, against, save_results)
        if replay:
            _replay(loaded, target, runner.stores_root(store))
            return
        if rederive:
            runs = [
                o for o, v in (("--bless", bless), ("--replay", replay), ("--regenerate", regenerate)) if v
            ]
            if runs:
                raise ConfigError(
                    "runs the suite, and --rederive runs nothing", field=runs[0], fix="Use one or the other"
                )
            command = [
                "clear-rag", "ablate", suite, "--rederive",
                *(["--results-dir", str(results_dir)] if results_dir != Path("results") else []),
                "--save-results",
            ]  # fmt: skip
            rederived = _rederive(loaded, target, shlex.join(command))
            typer.echo(table(rederived))
            if save_results:
                write_result(target, rederived)
                typer.echo(f"re-derived and written to {target}")
            return
        if bless and embedder != "hash":
            raise ConfigError(
                "records the fake-provider baseline", field="--bless", fix="Pass --embedder hash with it"
            )
        before = read_result(target) if regenerate and target.exists() else None
        result, summary = _run(
            loaded,
            store=store,
            embedder=embedder,
            chat=chat,
            results_dir=results_dir,
            regenerate=regenerate,
            timeout=timeout,
        )
    except ClearRagError as err:
        raise fail(err) from None
    typer.echo(table(result))
    if summary:
        typer.echo(summary)
    if row is not None:
        if save_results:
            made, vectors = loaded.rows[0].name, "vector" in loaded.rows[0].config.retrievers
            new = made != row or bool(overrides)  # a row the suite file does not define
            command = [
                "clear-rag", "ablate", suite, "--row", row,
                *(part for pair in overrides or [] for part in ("--set", pair)),
                *(["--golden", str(golden)] if golden is not None else []),
                *(["--embedder", embedder] if vectors else []),
                *(["--reranker", reranker] if reranker is not None else []),
                *(["--support", support] if support is not None and loaded.generate else []),
                *(["--name", made] if made != row else []),
                *(["--against", against] if against is not None else []),
                "--save-results",
            ]  # fmt: skip
            save_row(target, result, command if new else None, against, order)
            typer.echo(f"row {made!r} merged into {target}")
        return
    for path, wanted in ((target, save_results), (BASELINE_FAKE, bless)):
        if wanted:
            write_result(path, result)
            typer.echo(f"written to {path}")
    if before is not None:
        moved = reproduce.compare(result, before, target)
        if moved is not None:
            typer.echo(reproduce.format(moved, every_metric=True))


def _run(
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
    from clear_rag.eval import runner
    from clear_rag.providers.select import make_chat, make_embedder

    uses_vectors = any("vector" in row.config.retrievers for row in suite.rows)
    model = make_embedder(embedder, timeout=timeout) if uses_vectors else None
    chat_model = None
    if any(suite.needs_chat(row) for row in suite.rows):
        model_chat = make_chat(chat, timeout=timeout)
        chat_model = runner.cached_chat(model_chat, suite, results_dir, regenerate=regenerate)
    opened: dict[str, Any] = {}

    def own(name: str) -> Any:
        """A row's own chat model (``chat:`` in the suite), through the same generation cache."""
        if name not in opened:
            built = make_chat(name, timeout=timeout)
            cache = chat_model.cache if chat_model is not None else None
            opened[name] = runner.cached_chat(built, suite, results_dir, regenerate=regenerate, cache=cache)
        return opened[name]

    try:
        result = runner.run_suite(
            suite,
            embedder=model,
            chat=chat_model,
            root=runner.stores_root(store),
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


def _rederive(suite: Suite, target: Path, command: str) -> dict[str, Any]:
    """The result file ``target`` derived again from its own per-question values (``document.rederive``),
    each question's subset read from the suite's data files; the labels must be the ones it was
    measured on."""
    from clear_rag.eval import beir
    from clear_rag.eval.labels import label_files
    from clear_rag.eval.subsets import training_subsets
    from clear_rag.results.document import rederive

    result = _existing(suite, target, "re-derive")
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


def _existing(suite: Suite, target: Path, what: str) -> dict[str, Any]:
    """The suite's result file, read; an ``InputError`` saying how to make it when there is none."""
    from clear_rag.results.files import read_result

    if not target.exists():
        raise InputError(
            f"does not exist, so there is nothing to {what}",
            path=str(target),
            fix=f"Run `clear-rag ablate {suite.name} --save-results` first",
        )
    return read_result(target)


def _replay(suite: Suite, target: Path, root: Path) -> None:
    from clear_rag.eval import runner

    result = _existing(suite, target, "replay")
    missing = runner.missing_stores(result, suite, root)
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
    count = sum(len(r["questions"]) for r in result["rows"])
    if differ:
        typer.echo(f"{len(differ)} of {count} question results differ when replayed, e.g. {differ[:3]}")
        raise typer.Exit(1)
    typer.echo(f"replayed {count} question results from stored traces: all metrics and verdicts identical")


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


@app.command("beir")
def beir_command(
    path: Annotated[
        Path, typer.Argument(help="A BEIR dataset folder (corpus.jsonl, queries.jsonl, qrels/).")
    ],
    config: Annotated[Path | None, typer.Option("--config", help="Pipeline settings file.")] = None,
    overrides: SetOption = None,
    name: Annotated[str | None, typer.Option(help="Row name in the results file.")] = None,
    against: AgainstOption = None,
    split: Annotated[str, typer.Option(help="Which qrels split to evaluate.")] = "test",
    store: StoreOption = Path(DEFAULT_STORE),
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
    reranker: RerankerOption = None,
    timeout: TimeoutOption = None,
    save_results: Annotated[
        bool,
        typer.Option(
            "--save-results",
            help="Merge the row into results/beir-<dataset>.json (beir-<dataset>-<split>.json for "
            "another split).",
        ),
    ] = False,
    results_dir: ResultsDirOption = Path("results"),
) -> None:
    """Evaluate one config on a BEIR dataset (nDCG@10, recall@100, MRR@10 over documents).

    The same runner as `clear-rag ablate`, with a one-row suite made from the folder. Chunking
    defaults to one chunk per document ("whole"), since BEIR judges whole documents.
    """
    from clear_rag.eval import beir, runner
    from clear_rag.eval.suite import Row, Suite
    from clear_rag.eval.suite import merge as merge_settings
    from clear_rag.providers.select import make_embedder

    try:
        base = PipelineConfig.from_file(config) if config is not None else PipelineConfig()
        data = base.to_dict()
        if config is None or "chunking" not in base.model_fields_set:
            data["chunking"]["chunker"] = "whole"
        # merged like a suite row's set: (a nested table key by key); a value of the wrong kind,
        # such as chunking=5, replaces the table and is then reported by the config's checks
        settings = PipelineConfig.from_mapping(
            merge_settings(data, parse_overrides(overrides or [])), source="--set"
        )
        if reranker is not None:
            settings = settings.replace(rerank=True, reranker=reranker)
        dataset = beir.load(path, split=split)
        row_name = name or default_name(settings)
        # another split is another question set: its rows go to a file of their own, never among the
        # test split's
        suite = Suite(
            f"beir-{dataset.name.removeprefix('beir-')}" + (f"-{split}" if split != "test" else ""),
            path,
            (Row(row_name, settings),),
            row_name,
            beir=path,
            split=split,
            spans=False,
            metrics=("doc ndcg@10", "doc recall@100", "doc mrr@10"),
        )
        target = results_dir / f"{suite.name}.json"
        check_against(target, against, save_results)
        model = make_embedder(embedder, timeout=timeout) if "vector" in settings.retrievers else None
        result = runner.run_suite(suite, embedder=model, root=runner.stores_root(store), show_progress=True)
        if save_results:
            # the command that made the row, so that the reproduce page can name it beside the suite's
            command = [
                "clear-rag", "beir", str(path), *(["--config", str(config)] if config is not None else []),
                *(part for pair in overrides or [] for part in ("--set", pair)),
                *(["--split", split] if split != "test" else []),
                *(["--embedder", embedder] if model is not None else []),
                *(["--reranker", reranker] if reranker is not None else []),
                "--name", row_name, *(["--against", against] if against is not None else []),
                "--save-results",
            ]  # fmt: skip
            save_row(target, result, command, against)
    except ClearRagError as err:
        raise fail(err) from None
    typer.echo(table(result))
    if save_results:
        typer.echo(f"row {row_name!r} written to {target}")


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
    command: list[str] | None,
    against: str | None,
    order: Sequence[str] = (),
) -> None:
    """Merge the one row of ``result`` into ``target``: compared with ``against`` if given, and with
    ``command``, the command that made it, recorded for the reproduce page (a row the suite file
    does not define has no other); the rows of the suite file stand in its ``order``, first."""
    from clear_rag.results.document import merge
    from clear_rag.results.files import read_result, write_result

    (made,) = result["rows"]
    if command is not None:
        result["row_commands"] = {made["name"]: shlex.join(command)}
    if against is not None:
        made["against"] = against
    # read again: another run may have merged a row while this one ran
    write_result(target, merge(read_result(target), result, order) if target.exists() else result)


def default_name(settings: PipelineConfig) -> str:
    """E.g. ``bm25 (fts5 idf, porter)``, ``dense``, ``hybrid rrf (lucene idf, unstemmed)``."""
    kinds = set(settings.retrievers)
    name = {frozenset({"keyword"}): "bm25", frozenset({"vector"}): "dense"}.get(
        frozenset(kinds), f"hybrid {'rrf' if settings.fusion == 'rrf' else 'min-max'}"
    )
    if "keyword" in kinds:
        name += f" ({settings.idf} idf, {'porter' if settings.stem else 'unstemmed'})"
    return name + (" + rerank" if settings.rerank else "")
