"""The Lab's model knobs in a real browser: every reranker and embedder that ships or can be pulled is
listed, one that is here can be chosen and is then used, and one that is not is disabled with one
short reason a person can act on.

A shipped model's presence is faked the way ``providers.select`` judges it, by the files in its folder
(``clear_rag.models.FOLDER``), and the download cache is an empty folder, so nothing depends on what
this machine has pulled; the reranker a question asks for is the lexical fake, so no ONNX file loads.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clear_rag import models as shipped
from clear_rag.eval.check import save_check
from clear_rag.providers.base import Reranker
from clear_rag.providers.fake import EchoChatModel, HashEmbedder, LexicalReranker
from clear_rag.providers.select import make_reranker
from clear_rag.store import Store
from clear_rag.web.app import create_app
from clear_rag.web.runner import Models
from tests.conftest import toy_config
from tests.web.browser import require_browser
from tests.web.conftest import serving
from tests.web.test_page import ask, build_store, page, trace_of_latest

sync_api = require_browser()

__all__ = ["page"]  # the fixture, imported from test_page

SHIPPED = "scifact-minilm-l6"
CHECKED = {  # what `clear-rag check` keeps in a store: the Lab shows its rerank verdicts
    "store": "toy",
    "reranker": "lexical",
    "probes": 40,
    "date": "2026-12-02T00:00:00+00:00",
    "rows": [
        {"name": "hybrid rrf", "ndcg@10": 0.7},
        {
            "name": "bm25 only",
            "ndcg@10": 0.9,
            "difference": 0.2,
            "ci": [0.1, 0.3],
            "p": 0.001,
            "verdict": "helps",
        },
        {
            "name": "rerank, fused (shortlist 10)",
            "ndcg@10": 0.6,
            "difference": -0.1,
            "ci": [-0.2, -0.05],
            "p": 0.01,
            "verdict": "hurts",
        },
    ],
}
PULLED = "ms-marco-minilm-l6"  # the config's default reranker, never pulled here


def fake_shipped(folder: Path, name: str) -> None:
    """A shipped model's folder as its loader finds it (manifest, ONNX file, tokenizer), all empty."""
    (folder / name).mkdir(parents=True)
    for file in (shipped.MANIFEST, "model_int8.onnx", "tokenizer.json"):
        (folder / name / file).write_text("{}", encoding="utf-8")


class Rerankers:
    """The server's reranker factory: the lexical fake under the name of one that is here, and the
    real ``make_reranker`` for any other, so an absent one fails as it does in a real server."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, name: str) -> Reranker:
        self.asked.append(name)
        return LexicalReranker() if name == SHIPPED else make_reranker(name)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Rerankers]]:
    """The app over the page's store, the default reranker missing and the shipped one here; yields
    its URL, the shipped-models folder and the reranker factory."""
    root = tmp_path_factory.mktemp("lab")
    folder = root / "shipped"
    fake_shipped(folder, SHIPPED)
    store: Store = build_store(root)
    save_check(store.directory, CHECKED)
    rerankers = Rerankers()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(shipped, "FOLDER", folder)
        patch.setenv("XDG_CACHE_HOME", str(root / "cache"))
        try:
            models = Models(HashEmbedder(dim=64), EchoChatModel(), rerankers)
            with serving(create_app(store, toy_config(), models)) as base:
                yield base, folder, rerankers
        finally:
            store.close()


def reasons(page: Any) -> list[str]:
    page.wait_for_selector("#lab [data-knob='reranker']")
    found: list[str] = page.locator("#lab .reason").all_inner_texts()
    return found


def test_a_shipped_reranker_is_chosen_and_used_when_the_default_is_missing(
    page: Any, lab: tuple[str, Path, Rerankers]
) -> None:
    base, _, rerankers = lab
    page.goto(base)
    knob = page.locator("#lab [data-knob='reranker']")
    sync_api.expect(knob).to_have_attribute("data-available", "true")
    sync_api.expect(knob.locator(f"[data-choice='{SHIPPED}'] input")).to_be_enabled()
    absent = knob.locator(f"[data-choice='{PULLED}']")
    sync_api.expect(absent.locator("input")).to_be_disabled()
    sync_api.expect(absent.locator(".reason")).to_contain_text(f"clear-rag models pull {PULLED}")
    rerank = page.locator("#lab [data-knob='rerank'] input")
    sync_api.expect(rerank).to_be_enabled()
    # Turning rerank on with the server's (absent) reranker picks the one that is here, in sight.
    rerank.check()
    sync_api.expect(knob.locator(f"[data-choice='{SHIPPED}'] input")).to_be_checked()
    sync_api.expect(page.locator("#lab-overrides")).to_contain_text(f'"reranker":"{SHIPPED}"')
    sync_api.expect(page.locator("#lab-overrides")).to_contain_text('"rerank":true')
    ask(page, "when do disc brake pads need replacing")
    trace = trace_of_latest(page, base)
    assert trace["trace"]["config"]["reranker"] == SHIPPED and trace["trace"]["config"]["rerank"] is True
    assert "rerank" in {e["data"]["name"] for e in trace["events"] if e["event"] == "stage"}
    assert rerankers.asked[-1] == SHIPPED


def test_a_reranker_chosen_by_hand_is_sent_and_reset_takes_it_back(
    page: Any, lab: tuple[str, Path, Rerankers]
) -> None:
    base, _, _ = lab
    page.goto(base)
    choice = page.locator(f"#lab [data-knob='reranker'] [data-choice='{SHIPPED}'] input")
    choice.check()
    sync_api.expect(page.locator("#lab-overrides")).to_contain_text(f'{{"reranker":"{SHIPPED}"}}')
    page.click("#lab-reset")
    sync_api.expect(choice).not_to_be_checked()
    sync_api.expect(page.locator("#lab-overrides")).not_to_contain_text("reranker")


def test_every_model_is_listed_and_each_reason_is_said_once_without_a_path(
    page: Any, lab: tuple[str, Path, Rerankers]
) -> None:
    from axe_playwright_python.sync_playwright import Axe

    base, folder, _ = lab
    page.goto(base)
    said = reasons(page)
    assert said and all("/" not in reason and str(folder) not in reason for reason in said), said
    assert len(said) == len(set(said)), said
    for knob in ("reranker", "embedder"):
        for option in page.locator(f"#lab [data-knob='{knob}'] [data-choice]").all():
            absent = "absent" in (option.get_attribute("class") or "")
            assert option.locator(".reason").count() == (1 if absent else 0), option.inner_text()
            assert not absent or option.locator("input").is_disabled(), option.inner_text()
    # the embedder: the server's is shown in use; the shipped ones are listed, not sent
    embedder = page.locator("#lab [data-knob='embedder']")
    sync_api.expect(embedder.locator("input:checked")).to_have_count(1)
    listed = embedder.locator("[data-choice]").evaluate_all("els => els.map(e => e.dataset.choice)")
    assert {"minilm", "scifact-minilm-l6-embed"} <= set(listed)
    sync_api.expect(embedder.locator("[data-choice='scifact-minilm-l6-embed'] .reason")).to_contain_text(
        "clear-rag train embedder"
    )
    found = Axe().run(page, context="#lab").response["violations"]
    assert [(v["id"], [n["target"] for n in v["nodes"]]) for v in found] == []


def test_with_no_reranker_here_rerank_is_off_with_one_reason(
    page: Any, lab: tuple[str, Path, Rerankers], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, _, _ = lab
    monkeypatch.setattr(shipped, "FOLDER", tmp_path)  # nothing shipped, nothing pulled
    page.goto(base)
    said = reasons(page)
    rerank = page.locator("#lab [data-knob='rerank']")
    sync_api.expect(rerank.locator("input")).to_be_disabled()
    sync_api.expect(rerank.locator(".reason")).to_have_count(1)
    knob = page.locator("#lab [data-knob='reranker']")
    sync_api.expect(knob).to_have_attribute("data-available", "false")
    sync_api.expect(knob.locator("input:enabled")).to_have_count(0)
    sync_api.expect(knob.locator(f"[data-choice='{SHIPPED}'] .reason")).to_contain_text(
        "clear-rag train reranker"
    )
    assert len(said) == len(set(said)), said


def test_the_stores_check_is_shown_beside_the_rerank_knob_with_how_far_to_trust_it(
    page: Any, lab: tuple[str, Path, Rerankers]
) -> None:
    base, _, _ = lab
    page.goto(base)
    note = page.locator("#lab [data-knob='rerank'] [data-check='rerank']")
    sync_api.expect(note).to_contain_text(
        "Checked on this store with 40 probe questions, reranker lexical (2026-12-02)"
    )
    sync_api.expect(note.locator("[data-verdict='hurts']")).to_contain_text(
        "rerank, fused (shortlist 10): hurts (nDCG@10 -0.100, interval -0.200 to -0.050)"
    )
    assert "bm25 only" not in note.inner_text()  # only the rerank rows, beside the rerank knob
    sync_api.expect(note.locator(".trust")).to_contain_text("Probes are not real questions")
