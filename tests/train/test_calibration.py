"""The support check's calibration: the pairs it is fitted on, the class-balanced fit, the AUC, and the
record `clear-rag train support` writes (on the toy BEIR dataset and the lexical fake)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clear_rag.eval import beir
from clear_rag.generate.verdicts import BOUNDARY
from clear_rag.providers.fake import LexicalReranker
from clear_rag.train.calibration import auc, calibrate, fit, pairs
from tests.toy import write_beir


def test_auc_is_the_chance_a_positive_outscores_a_negative() -> None:
    y = np.array([False, False, True, True])
    # positives 0.35 and 0.8 against negatives 0.1 and 0.4: three of the four pairs ordered right
    assert auc(np.array([0.1, 0.4, 0.35, 0.8]), y) == 3 / 4
    assert auc(np.array([0.5, 0.5, 0.5, 0.5]), y) == 1 / 2  # ties count half
    assert np.isnan(auc(np.array([1.0, 2.0]), np.array([True, True])))


def test_the_fit_puts_the_boundary_between_separated_classes() -> None:
    x = np.array([[-3.0, 0.1], [-2.0, 0.0], [-2.5, 0.2], [2.0, 0.9], [3.0, 0.8], [2.5, 1.0]])
    y = np.array([False, False, False, True, True, True])
    a, c, b = fit(x, y)
    p = 1 / (1 + np.exp(-(x @ np.array([a, c]) + b)))
    assert (p[y] > BOUNDARY).all() and (p[~y] < BOUNDARY).all()


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 5))
def test_both_classes_weigh_the_same_whatever_their_sizes(seed: int, copies: int) -> None:
    """Repeating every negative ``copies`` times leaves the fit as it was: 0.5 does not move with the
    share of positives."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(40, 2))
    y = x[:, 0] + rng.normal(scale=1.0, size=40) > 0
    if y.all() or not y.any():
        return
    more = np.concatenate([x[y], *([x[~y]] * copies)])
    labels = np.concatenate([np.ones(int(y.sum()), bool), np.zeros(int((~y).sum()) * copies, bool)])
    assert fit(more, labels) == pytest.approx(fit(x, y), abs=1e-6)


def test_pairs_mark_rationale_sentences_and_add_an_unrelated_abstract(tmp_path: Path) -> None:
    dataset = beir.load(write_beir(tmp_path / "toy", rationales=True))
    texts = {doc.id: doc.text for doc in beir.documents(dataset)}
    found = pairs(dataset, texts)
    # q1's rationale supports it; q2's contradicts it, so q2 is left out
    assert {p.query_id for p in found} == {"q1"}
    positives = [p.sentence for p in found if p.positive]
    assert positives == ["Disc brake pads wear down."]
    # q1 is judged for d1 and d3, so the unrelated abstract is none of them; here every record is q1's
    assert all(p.claim == "brake pads" for p in found)


def _claims(folder: Path) -> Path:
    """Four numbered claims, each supported by the first sentence of its own two-sentence abstract."""
    import json

    subjects = ["brake pads", "tyre pressure", "chain stretch", "spoke tension"]
    (folder / "qrels").mkdir(parents=True)
    docs = [{"_id": f"d{n}", "title": "", "text": f"The {s} matter. Unrelated words follow here."} for n, s in
            enumerate(subjects)]  # fmt: skip
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in docs), encoding="utf-8")
    queries = [{"_id": str(n), "text": f"{s} matter"} for n, s in enumerate(subjects)]
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries), encoding="utf-8")
    qrels = "".join(f"{n}\td{n}\t1\n" for n in range(len(subjects)))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + qrels, encoding="utf-8")
    rationales = []
    for n, s in enumerate(subjects):
        first = f"The {s} matter."
        rationales.append({"query_id": str(n), "claim": f"{s} matter", "doc_id": f"d{n}", "label": "SUPPORT",
                           "spans": [{"start": 0, "end": len(first), "text": first}]})  # fmt: skip
    (folder / beir.RATIONALES).write_text("\n".join(json.dumps(r) for r in rationales), encoding="utf-8")
    return folder


def test_the_record_says_what_was_fitted_and_how_it_holds_out(tmp_path: Path) -> None:
    record = calibrate(
        _claims(tmp_path), LexicalReranker(), command="clear-rag train support", log=lambda _: None
    )
    assert record["model"] == "lexical-reranker@overlap-1"
    # claims 0 and 2 fit it, 1 and 3 check it: each claim has 2 sentences of its own and 2 of another abstract
    assert record["fitted_on"] == {"split": "test", "claims": "even ids", "pairs": 8}
    held = record["held_out"]
    assert held["claims"] == 2 and held["pairs"] == 8 and held["positives"] == 2
    # the rationale holds every claim word and the other sentences none: the fit separates them
    assert held["auc_probability"] == 1.0 and held["recall"] == 1.0 and held["precision"] == 1.0
    assert set(record["data"]) == {"corpus.jsonl", "queries.jsonl", "qrels/test.tsv", beir.RATIONALES}
    assert record["source"].startswith("fitted by `clear-rag train support` on SciFact test claims")


def test_too_few_rationales_is_an_error_that_names_the_file(tmp_path: Path) -> None:
    from clear_rag.errors import InputError

    folder = write_beir(tmp_path / "toy", rationales=True)  # one supported claim: one half is empty
    with pytest.raises(InputError, match="too few rationale sentences") as raised:
        calibrate(folder, LexicalReranker(), command="c", log=lambda _: None)
    assert beir.RATIONALES in str(raised.value)
