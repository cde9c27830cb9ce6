"""The conjunctive binding code: engram's incident reports, a slow twin, stable hashing."""

from __future__ import annotations

import math

import numpy as np

from vault.notes.text import content_terms, tokenize
from vault.retrieval.signals.conjunctive import ConjunctiveIndex
from vault.retrieval.signals.unit_codes import unit_hash, units

from ..retrieval_fixtures import DAYS, SERVICES, incident_reports


def test_units_are_terms_and_near_pairs() -> None:
    got = units(["auth", "monday", "outage", "rollout", "auth"])
    assert {"auth", "monday", "outage", "rollout"} <= got
    assert "auth\x00monday" in got and "monday\x00outage" in got and "auth\x00rollout" in got
    # "monday" and "auth" (second) are 3 apart -> paired; "auth" with itself never
    assert "auth\x00auth" not in got
    # distance 4 ("auth" at 0 and "auth" at 4) pairs nothing new; "monday"/"rollout" are 2 apart
    assert "monday\x00rollout" in got


def test_hash_is_stable_across_processes() -> None:
    # blake2b with a 4-byte digest: fixed by the algorithm, not by PYTHONHASHSEED.
    assert unit_hash("auth") == int.from_bytes(
        __import__("hashlib").blake2b(b"auth", digest_size=4).digest(), "big")
    assert 0 <= unit_hash("auth\x00monday") < 2**32


def slow_rho(docs: list[set[str]], q: list[str]) -> float:
    """rho(q) with sets: the best note's share of the query's held pairs over its share of
    the query's held terms (conjunctive.py's module docstring), 1 with no held pair."""
    pairs = [u for u in q if "\x00" in u]
    terms = [u for u in q if "\x00" not in u]
    if not pairs:
        return 1.0
    h_p = max(sum(u in d for u in pairs) for d in docs)
    h_t = max(sum(u in d for u in terms) for d in docs)
    return min(1.0, (h_p / len(pairs)) / (h_t / len(terms)))


def slow_scores(texts: list[str], query: str) -> list[float]:
    """IDF-cosine over unit sets computed with dicts (no hashing, no matrices), the query's
    pairs weighted by rho."""
    docs = [units(content_terms(tokenize(t))) for t in texts]
    n = len(docs)
    df: dict[str, int] = {}
    for d in docs:
        for u in d:
            df[u] = df.get(u, 0) + 1
    idf = {u: math.log((n + 1) / (c + 1)) + 1 for u, c in df.items()}
    q = [u for u in units(content_terms(tokenize(query))) if u in idf]
    rho = slow_rho(docs, q)
    xq = {u: idf[u] * (rho if "\x00" in u else 1.0) for u in q}
    qn = math.sqrt(sum(v * v for v in xq.values()))
    out = []
    for d in docs:
        dn = math.sqrt(sum(idf[u] ** 2 for u in d))
        dot = sum(idf[u] * xq[u] for u in q if u in d)
        out.append(dot / (dn * qn) if dn and qn else 0.0)
    return out


def test_matches_slow_twin() -> None:
    texts = [b for _, b in incident_reports()[:40]] + ["auth failed on monday again", ""]
    idx = ConjunctiveIndex.from_texts(texts)
    assert idx.pair_weight(tokenize("Monday outage billing Tuesday latency auth")) == 2 / 3
    for query in ("What went wrong with the auth service on Monday?", "billing latency",
                  "nothing matches zzz", "Monday outage billing Tuesday latency auth"):
        got = idx.score(query)
        assert np.allclose(got, slow_scores(texts, query), atol=1e-12)


def test_incident_reports_find_service_and_day() -> None:
    reports = incident_reports()
    idx = ConjunctiveIndex.from_texts(b for _, b in reports)
    for day in DAYS:
        for service in SERVICES:
            scores = idx.score(f"What went wrong with the {service} service on {day}?")
            top5 = np.argsort(-scores, kind="stable")[:5]
            for i in top5:
                assert f"On {day} the {service} service" in reports[i][1]
            # the five matching reports are tied (the query names two of three attributes)
            assert np.ptp(scores[top5]) < 1e-12
            assert scores[top5[-1]] > np.sort(scores)[-6] + 1e-9


def test_pair_weight_hand_case() -> None:
    # query terms red, apple, green, pear; its six pairs, three of them held, one per note
    texts = ["red apple", "green pear", "red xa xb xc green apple xd xe xf pear"]
    idx = ConjunctiveIndex.from_texts(texts)
    query = tokenize("red apple green pear")
    # h_P / |P| = 1/3 (red-apple, green-pear, green-apple), h_T / |T| = 4/4 (the third note)
    assert idx.pair_weight(query) == 1 / 3
    docs = [units(content_terms(tokenize(t))) for t in texts]
    held = sorted(u for u in units(content_terms(query)) if any(u in d for d in docs))
    assert slow_rho(docs, held) == 1 / 3
    assert np.allclose(idx.score_tokens(query), slow_scores(texts, "red apple green pear"),
                       atol=1e-12)
    # the pairs one note holds together: rho = 1, the unweighted cosine
    assert idx.pair_weight(tokenize("green apple")) == 1.0
    assert idx.pair_weight(tokenize("pear")) == 1.0  # no pair at all
    assert idx.pair_weight(tokenize("qq zz")) == 1.0  # nothing held
    assert ConjunctiveIndex.from_texts([]).pair_weight(query) == 1.0


def test_a_query_whose_pairs_one_note_holds_keeps_the_plain_cosine() -> None:
    reports = incident_reports()
    idx = ConjunctiveIndex.from_texts(b for _, b in reports)
    q = tokenize(f"the {SERVICES[0]} service on {DAYS[0]}")
    assert idx.pair_weight(q) == 1.0
    texts = [b for _, b in reports]
    assert np.allclose(idx.score_tokens(q), slow_scores(texts, " ".join(q)), atol=1e-12)
