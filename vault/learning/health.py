"""The learning audit for `rmh doctor`: is learning running, pointing the right way, bounded?

Each number answers one failure the seed's own audits found (Ori-Mnemos): rewards that never
fire (counts by source, forward citations), learning that runs inverted (Pearson correlation
of exposure with Q, and of use rate = sessions that used the note / impressions with Q, over
exposed notes). Read them together: a negative exposure-Q correlation with a clearly positive
use-rate-Q correlation means the ranker often shows notes nobody uses and learning demotes
them (intended); a use-rate-Q correlation near zero or negative means learning is inverted
(Ori's audit: exposure-Q -0.537); unbounded or dead co-occurrence (edge weight
distribution); and state keyed by something that drifted (rows naming notes missing from
the index; must be zero).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .formulas import LEARNING_VERSION
from .state import LearnedState


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson's r, or None with fewer than 2 points or a constant variable."""
    if len(xs) < 2:
        return None
    x = np.asarray(xs, dtype=np.float64)
    y = np.asarray(ys, dtype=np.float64)
    dx, dy = x - x.mean(), y - y.mean()
    den = float(np.sqrt((dx * dx).sum() * (dy * dy).sum()))
    return None if den == 0.0 else float((dx * dy).sum() / den)


def distribution(values: Sequence[float]) -> dict[str, Any]:
    """Count, min, quartiles, p90, max and a 10-bin histogram over [0, 1]."""
    if not values:
        return {"count": 0}
    v = np.sort(np.asarray(values, dtype=np.float64))
    hist, _ = np.histogram(v, bins=10, range=(0.0, 1.0))
    return {
        "count": len(values),
        "min": float(v[0]),
        "p25": float(np.quantile(v, 0.25)),
        "p50": float(np.quantile(v, 0.5)),
        "p90": float(np.quantile(v, 0.9)),
        "max": float(v[-1]),
        "histogram_0_1": [int(h) for h in hist],
    }


def _latest(state: LearnedState, recovered: bool, limit: int = 20) -> list[dict[str, Any]]:
    """The last `limit` ended sessions that were (or were not) recovered, newest first."""
    rows = sorted(((info.ended or 0.0, sid) for sid, info in state.sessions.items()
                   if info.ended is not None and info.recovered == recovered), reverse=True)
    return [{"session": sid, "ended": t, "started": state.sessions[sid].started}
            for t, sid in rows[:limit]]


def health(
    state: LearnedState,
    event_counts: Mapping[str, int],
    edge_weights: Sequence[float],
    existing_ids: Iterable[int],
    query_log_capacity: int | None = None,
    session_capacity: int | None = None,
) -> dict[str, Any]:
    """The audit as one JSON-safe dict (see module docstring); `query_log` says how full the
    query log's bounded df tables are (query_log.py: keys held, the bound each table is cut
    back to, keys forgotten so far); `sessions` counts every session ever (the rows held and
    the ended ones forgotten, ended.py); `rows` the session rows and tombstones held."""
    alive = set(existing_ids)
    notes = state.notes
    missing_notes = sorted(n for n in notes if n not in alive)
    missing_pairs = sum(1 for a, b in state.pairs if a not in alive or b not in alive)
    missing_sessions = sum(1 for n, _ in state.note_sessions if n not in alive)
    exposed = sorted(n for n in notes if notes[n].shown > 0)
    qs = [notes[n].q for n in sorted(notes)]
    sessions = state.sessions.values()
    forgotten, forgotten_recovered = state.sessions_forgotten
    return {
        "version": LEARNING_VERSION,
        "events": dict(sorted(event_counts.items())),
        "sessions": {
            "open": sum(1 for s in sessions if s.ended is None),
            "ended": sum(1 for s in sessions if s.ended is not None and not s.recovered)
            + forgotten - forgotten_recovered,
            "recovered": sum(1 for s in sessions if s.recovered) + forgotten_recovered,
        },
        "rows": {"sessions": len(state.sessions), "session_capacity": session_capacity,
                 "sessions_forgotten": forgotten, "tombstones": len(state.gone)},
        "recovered_sessions": _latest(state, recovered=True),
        "open_sessions": sorted(s for s, info in state.sessions.items() if info.ended is None),
        "rewards": {k: {"n": n, "sum": round(t, 6)} for k, (n, t) in sorted(state.rewards.items())},
        "forward_citations": state.rewards.get("cite", (0, 0.0))[0],
        "exposure_q_pearson": pearson(
            [float(notes[n].shown) for n in exposed], [notes[n].q for n in exposed]
        ),
        "use_rate_q_pearson": pearson(
            [notes[n].recalled / notes[n].shown for n in exposed], [notes[n].q for n in exposed]
        ),
        "q": {
            "notes": len(qs),
            "updated": sum(1 for n in notes.values() if n.q_updates > 0),
            "min": min(qs) if qs else None,
            "max": max(qs) if qs else None,
            "mean": float(np.mean(qs)) if qs else None,
        },
        "edges": {"pairs": len(state.pairs), "weights": distribution(edge_weights)},
        "query_log": {"phrases": len(state.query_df), "words": len(state.word_df),
                      "capacity": query_log_capacity, "forgotten": state.terms_forgotten},
        "archived": sum(1 for n in notes.values() if n.archived_at is not None),
        "missing_rows": len(missing_notes) + missing_pairs + missing_sessions,
        "missing_notes": missing_notes[:20],
    }
