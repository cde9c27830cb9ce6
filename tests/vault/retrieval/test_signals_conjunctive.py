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


def slow_scores(texts: list[str], query: str) -> list[float]:
    """IDF-cosine over unit sets computed with dicts (no hashing, no matrices)."""
    docs = [units(content_terms(tokenize(t))) for t in texts]
    n = len(docs)
    df: dict[str, int] = {}
    for d in docs:
        for u in d:
            df[u] = df.get(u, 0) + 1
    idf = {u: math.log((n + 1) / (c + 1)) + 1 for u, c in df.items()}
    q = [u for u in units(content_terms(tokenize(query))) if u in idf]
    qn = math.sqrt(sum(idf[u] ** 2 for u in q))
    out = []
    for d in docs:
        dn = math.sqrt(sum(idf[u] ** 2 for u in d))
        dot = sum(idf[u] ** 2 for u in q if u in d)
        out.append(dot / (dn * qn) if dn and qn else 0.0)
    return out


def test_matches_slow_twin() -> None:
    texts = [b for _, b in incident_reports()[:40]] + ["auth failed on monday again", ""]
    idx = ConjunctiveIndex.from_texts(texts)
    for query in ("What went wrong with the auth service on Monday?", "billing latency",
                  "nothing matches zzz"):
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
