"""Fusion calibration from pseudo-queries (vault/retrieval/calibration.py): deterministic,
content-seeded, a misleading channel loses its weight, recalibration when the vault changes
enough, persisted beside the index, and its place in the pipeline's report."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import numpy.typing as npt

from vault.notes.text import tokenize
from vault.retrieval import calibration as cal
from vault.retrieval.pipeline import SearchEngine, SearchParams
from vault.storage.corpus import Corpus

from ..retrieval_fixtures import incident_reports, make_corpus

F64 = npt.NDArray[np.float64]
CONF = {"bm25": 0.5, "dense": 1.0, "conjunctive": 1.0}


def corpus(generation: int = 1) -> Corpus:
    return make_corpus(incident_reports(), generation=generation)


def lexical_channels(c: Corpus) -> cal.Channels:
    engine = SearchEngine.lexical()
    return lambda text: engine.score(c, text).signals


def df_of(c: Corpus) -> cal.Frequency:
    engine = SearchEngine.lexical()
    return lambda toks: engine.document_frequency(c, toks)


def test_the_sample_and_queries_follow_content_not_order() -> None:
    c = corpus()
    a = cal.pseudo_queries(c, cal.sample_notes(c), df_of(c))
    assert len(a) == cal.SAMPLE and a == cal.pseudo_queries(c, cal.sample_notes(c), df_of(c))
    assert {q.kind for q in a} <= set(cal.KINDS)
    assert {q.kind for q in a} >= {"sentence", "phrase"}  # titles here are file names
    rev = make_corpus(list(reversed(incident_reports())))
    b = cal.pseudo_queries(rev, cal.sample_notes(rev), df_of(rev))
    n = len(c)
    # the same notes give the same queries wherever they sit
    assert sorted((n - 1 - q.source, q.kind, q.text) for q in b) == sorted(
        (q.source, q.kind, q.text) for q in a)
    for q in a:  # every query comes from its source note
        assert set(tokenize(q.text)) <= set(tokenize(c.titles[q.source] + " " + c.bodies[
            q.source]))


def test_honest_channels_keep_the_configured_weights() -> None:
    c = corpus()
    got = cal.calibrate(c, lexical_channels(c), df_of(c), CONF, k=60, depth=1000)
    assert got.multipliers == (1.0, 1.0, 1.0) and got.weights == CONF
    assert got.queries == cal.SAMPLE and got.notes == len(c)
    assert 0 < got.reliability["bm25"] <= 1 and "dense" not in got.reliability
    again = cal.calibrate(c, lexical_channels(c), df_of(c), CONF, k=60, depth=1000)
    assert again == got


def test_a_misleading_channel_loses_its_weight() -> None:
    c = corpus()
    honest = lexical_channels(c)

    def channels(text: str) -> dict[str, F64]:
        sig = dict(honest(text))
        bm25 = sig["bm25"]
        liar = np.where(bm25 > 0, 0.001, 1.0)  # everything the query does not match first
        liar[np.argsort(-bm25)[:3]] = 0.0005
        return {"bm25": bm25, "dense": bm25.copy(), "conjunctive": liar}

    got = cal.calibrate(c, channels, df_of(c), CONF, k=60, depth=1000)
    assert got.multipliers[2] < 1.0 and got.weights["conjunctive"] < CONF["conjunctive"]
    assert got.reliability["conjunctive"] < 0.05 < got.reliability["bm25"]
    assert got.mrr > got.configured_mrr + cal.MARGIN
    assert f"conjunctive {got.weights['conjunctive']:g}" in got.describe()


def test_too_few_notes_keep_the_configured_weights() -> None:
    c = make_corpus(incident_reports()[:5])
    got = cal.calibrate(c, lambda t: {"bm25": np.zeros(5), "conjunctive": np.ones(5)},
                        df_of(c), CONF, k=60, depth=0)
    assert got.queries == 5 and got.multipliers == (1.0, 1.0, 1.0)


def test_recalibration_when_the_vault_changes_enough() -> None:
    c = corpus()
    got = cal.calibrate(c, lexical_channels(c), df_of(c), CONF, k=60, depth=1000)
    assert cal.stale(got, c, "", CONF) is None
    assert cal.stale(got, c, "other-model", CONF) == "another encoder"
    assert cal.stale(got, c, "", {**CONF, "bm25": 1.0}) == "other weights configured"
    notes = incident_reports()
    grown = make_corpus(notes + [(f"extra {i}", "a new note") for i in range(12)])
    assert cal.stale(got, grown, "", CONF) is None  # 137 notes: within 10 % of 125
    grown = make_corpus(notes + [(f"extra {i}", "a new note") for i in range(13)])
    assert "138 notes" in str(cal.stale(got, grown, "", CONF))
    sampled = {c.ids.index(i) for i, _ in got.sample}
    edit = sorted(sampled)[: int(len(sampled) * 0.2)]  # 20 % of the sample edited: still fits
    edited = [(t, b + " edited" if i in edit else b) for i, (t, b) in enumerate(notes)]
    assert cal.stale(got, make_corpus(edited), "", CONF) is None
    edit = sorted(sampled)[: int(len(sampled) * 0.2) + 1]
    edited = [(t, b + " edited" if i in edit else b) for i, (t, b) in enumerate(notes)]
    assert "sampled notes unchanged" in str(cal.stale(got, make_corpus(edited), "", CONF))
    unsampled = [(t, b + " edited" if i not in sampled else b) for i, (t, b) in
                 enumerate(notes)]
    assert cal.stale(got, make_corpus(unsampled), "", CONF) is None


def test_persisted_round_trip_and_broken_files(tmp_path: Path) -> None:
    c = corpus()
    got = cal.calibrate(c, lexical_channels(c), df_of(c), CONF, k=60, depth=1000)
    assert cal.load(tmp_path) is None
    assert cal.save(tmp_path, got) and cal.load(tmp_path) == got
    assert not list(tmp_path.glob(".*.tmp"))
    for broken in ("", "{", "[]", json.dumps({**got.to_json(), "version": 99}),
                   json.dumps({**got.to_json(), "weights": None})):
        (tmp_path / cal.FILE).write_text(broken, encoding="utf-8")
        assert cal.load(tmp_path) is None
    assert not cal.save(tmp_path / "missing", got)


def test_the_pipeline_calibrates_once_reports_it_and_persists_it(tmp_path: Path) -> None:
    c = corpus()
    off = SearchEngine.lexical()
    on = SearchEngine(SearchParams(calibrate=True), scratch=str(tmp_path))
    q = "auth outage on Monday"
    plain = off.search(c, q, 5)
    assert "calibrated" not in plain.stages["fusion"] and off.calibration(c) is None
    a = on.search(c, q, 5)
    assert "calibrated on 64 pseudo-queries of 125 notes" in a.stages["fusion"]
    # honest lexical channels keep the configured weights: the same ranking as off
    assert [(h.id, h.score) for h in a.hits] == [(h.id, h.score) for h in plain.hits]
    saved = (tmp_path / cal.FILE).read_bytes()
    first = on.calibration(c)
    assert first is not None and on.prepare(c)["calibration"] == first.describe()
    # a new process (a new engine on the same folder) reads it instead of making one
    (tmp_path / cal.FILE).write_text(json.dumps({**json.loads(saved), "mrr": 0.125}),
                                     encoding="utf-8")
    other = SearchEngine(SearchParams(calibrate=True), scratch=str(tmp_path))
    got = other.calibration(c)
    assert got is not None and got.mrr == 0.125 and replace(got, mrr=first.mrr) == first
    # an edit to one note (a new generation) keeps it; a vault grown by a quarter does not
    edited = make_corpus([(t, b + " x" if i == 0 else b) for i, (t, b) in
                          enumerate(incident_reports())], generation=2)
    assert other.calibration(edited) is got
    grown = make_corpus(incident_reports() + [(f"extra {i}", f"note {i} about the rollout "
                                                "of the billing service on a quiet day")
                                               for i in range(40)], generation=3)
    fresh = other.calibration(grown)
    assert fresh is not None and fresh.notes == 165
    assert json.loads((tmp_path / cal.FILE).read_text())["notes"] == 165

