"""Self-supervised pairs: cut from the store's own text, never from a question or a label, and seeded."""

from __future__ import annotations

import string
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clear_rag.train import corpus as corpus_module
from clear_rag.train import pairs as p
from clear_rag.train.corpus import corpus_pairs, ingest_folder, open_corpus, passages, store_digest

ROOT = Path(__file__).resolve().parents[2]


def lexical_search(items: list[p.Passage]) -> p.Search:
    """A stand-in BM25: passages by the number of the query's words they hold, ties by id."""

    def search(query: str, k: int) -> list[str]:
        words = set(query.lower().split())
        scored = [(-len(words & set(x.text.lower().split())), x.id) for x in items]
        return [pid for score, pid in sorted(scored) if score < 0][:k]

    return search


WORDS = [
    "replication", "partition", "webhook", "retention", "quota", "signature", "region", "failover",
    "cluster", "tenant", "billing", "archive", "latency", "schema", "token", "export",
]  # fmt: skip


@st.composite
def corpora(draw: st.DrawFn) -> list[p.Passage]:
    """Two to fourteen documents (so both units are drawn) of one to four chunks, each chunk two to six
    sentences of 6-14 words."""
    items = []
    for d in range(draw(st.integers(2, 14))):
        for c in range(draw(st.integers(1, 4))):
            sentences = []
            for _ in range(draw(st.integers(2, 6))):
                words = draw(st.lists(st.sampled_from(WORDS), min_size=6, max_size=14))
                sentences.append(" ".join(words).capitalize() + ".")
            items.append(p.Passage(f"doc{d}#{c:04d}", f"doc{d}", " ".join(sentences)))
    return items


SETTINGS = p.PairSettings(queries=50, negatives=2, pool=5, holdout=0.3)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=corpora(), seed=st.integers(0, 10_000), crop=st.sampled_from([0.0, 0.5, 0.9]))
def test_every_pair_is_cut_from_the_store_and_keeps_the_held_out_documents_apart(
    items: list[p.Passage], seed: int, crop: float
) -> None:
    chosen = replace(SETTINGS, seed=seed, crop_share=crop)
    built = p.build_pairs(items, lexical_search(items), chosen)
    by_id = {x.id: x for x in items}
    probes = {probe.id: probe for probe in p.draw_probes(items, chosen)}
    assert [g.query_id for g in built.groups] == list(probes)
    unit = p.unit_of(items)
    assert unit == ("document" if len({x.doc_id for x in items}) >= p.MIN_DOCUMENTS else "chunk")
    for group in built.groups:
        probe = probes[group.query_id]
        chunk = by_id[probe.chunk_id]
        start, end = probe.sentence
        assert probe.query in chunk.text[start:end]  # a sentence of the chunk, or words of one
        assert (probe.query == chunk.text[start:end]) == (probe.kind == "ict")
        assert not p.apart(chunk, unit, chosen)
        (positive,) = group.positives
        expected = chunk.text if probe.kept else p.positive_text(chunk, probe)
        assert built.texts[positive] == expected
        if not probe.kept:  # the sentence taken out: shorter by it, give or take a joining space
            assert len(built.texts[positive]) <= len(chunk.text) - (end - start) + 1
        for negative in group.negatives:
            assert negative != chunk.id
            if unit == "document":
                assert by_id[negative].doc_id != chunk.doc_id  # never the query's own document
            assert not p.apart(by_id[negative], unit, chosen)
            assert built.texts[negative] == by_id[negative].text
    held = {x.doc_id if unit == "document" else x.id for x in items if p.apart(x, unit, chosen)}
    assert built.held_out == held


@settings(max_examples=30, deadline=None)
@given(items=corpora(), seed=st.integers(0, 10_000))
def test_the_same_store_and_seed_give_the_same_pairs(items: list[p.Passage], seed: int) -> None:
    chosen = replace(SETTINGS, seed=seed)
    first = p.build_pairs(items, lexical_search(items), chosen)
    again = p.build_pairs(list(reversed(items)), lexical_search(items), chosen)
    assert first == again


@given(doc=st.text(string.ascii_letters, min_size=1, max_size=20), seed=st.integers(0, 100))
def test_a_document_is_held_out_by_its_own_id_alone(doc: str, seed: int) -> None:
    chosen = replace(SETTINGS, seed=seed)
    assert p.held_out(doc, chosen) == p.held_out(doc, replace(chosen, queries=7))


def test_the_held_out_share_is_near_the_setting() -> None:
    chosen = replace(SETTINGS, holdout=0.2)
    share = sum(p.held_out(f"doc{i}", chosen) for i in range(4000)) / 4000
    assert 0.18 < share < 0.22


def test_probes_come_from_the_held_out_side_when_asked() -> None:
    items = [
        p.Passage(f"d{i}#0000", f"d{i}", "Replication of the cluster takes a while to finish. " * 3)
        for i in range(40)
    ]
    chosen = replace(SETTINGS, holdout=0.5, queries=100)
    training = p.draw_probes(items, chosen)
    probes = p.draw_probes(items, chosen, want_held_out=True)
    assert training and probes
    assert {x.doc_id for x in training}.isdisjoint({x.doc_id for x in probes})
    assert all(p.held_out(x.doc_id, chosen) for x in probes)


def test_a_crop_is_words_a_person_would_search_with() -> None:
    sentence = "See Section 38.16.3 for details about replication slots and their retention."
    crops = [sentence[a:b] for a, b in p._crops(sentence, 4)]
    assert "See Section 38.16.3 for" not in crops
    assert "about replication slots and" in crops


@pytest.mark.parametrize(
    ("field", "value"),
    [("holdout", 1.0), ("keep", -0.1), ("queries", 0), ("crop_words", 1), ("crop_words", 7)],
)
def test_bad_settings_name_the_field_and_the_fix(field: str, value: Any) -> None:
    with pytest.raises(ValueError, match=field):
        replace(SETTINGS, **{field: value})


def test_the_tech_store_gives_pairs_that_hold_no_suite_question(tmp_path: Path) -> None:
    """On a real store (the tech corpus, ingested keyword-only): every query is a verbatim slice of a
    stored chunk, and no question of the tech suite's golden set is one, so none was used."""
    store_dir = ingest_folder(ROOT / "corpora" / "tech", tmp_path / "store", lambda _: None)
    built, digest = corpus_pairs(store_dir, replace(SETTINGS, queries=80), tmp_path / "pairs.json", print)
    with open_corpus(store_dir) as store:
        texts = [x.text for x in passages(store)]
        assert digest == store_digest(store)
    golden = yaml.safe_load((ROOT / "golden" / "tech.yaml").read_text(encoding="utf-8"))
    questions = {q["question"] for q in golden["questions"]}
    assert len(built.groups) == 80
    for group in built.groups:
        assert any(group.query in text for text in texts)
        assert group.query not in questions
        assert len(group.negatives) == 2
    assert not any(q in text for q in questions for text in texts)  # so a slice is never a question


def test_a_second_run_reads_the_pairs_it_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store_dir = ingest_folder(ROOT / "corpora" / "sample", tmp_path / "store", lambda _: None)
    cache = tmp_path / "pairs.json"
    first, _ = corpus_pairs(store_dir, replace(SETTINGS, queries=10), cache, print)

    def refuse(*args: object) -> None:
        raise AssertionError("built again")

    monkeypatch.setattr(corpus_module, "build_pairs", refuse)
    again, _ = corpus_pairs(store_dir, replace(SETTINGS, queries=10), cache, print)
    assert again == first
    with pytest.raises(AssertionError, match="built again"):  # other settings: built anew
        corpus_pairs(store_dir, replace(SETTINGS, queries=11), cache, print)


def test_a_folder_without_a_store_is_named(tmp_path: Path) -> None:
    from clear_rag.errors import InputError

    with pytest.raises(InputError, match="holds no clear-rag store"):
        open_corpus(tmp_path)
