"""How far the dense index is from a fresh build, for `rmh status`, `rmh doctor` and the
`status` method: the layout, the chunk rows changed since the IVF was trained, their share,
a level and the remedy.

An exact layout, and an IVF of at most `DenseParams.retrain_max_rows` rows (trained again at
every change: signals/dense.py), always equal a fresh build. A larger IVF keeps its lists
between trainings; with u = `DenseIndex.untrained_rows` (rows added, changed or removed since
the training) and B its trained rows,

    share = u / B

is what a running process compares with `DenseParams.retrain_share` to train again
(`DenseIndex.updated`). The level follows it:

    "ok"           u = 0, or never stale (exact, or under the retraining bound);
    "stale"        0 < share <= retrain_share: hits beyond the first can differ from a fresh
                   build's, at a cost within the tolerance measured below;
    "warning"      share > retrain_share: past it;
    "not checked"  an IVF over the bound this process did not prepare (`rmh status` prepares
                   it only while few units wait to be embedded: harness health.py).

retrain_share = 0.1 was set on generated notes of bench_dense_scale's shape (3x10^4 and
10^5 notes, the bound lowered through DenseParams, changes on the same topics and on new
ones; docs/measurements/session40/NOTES-DENSE42.md): a stale index's recall@10 against exact
search showed no resolvable loss against a fresh build's at any share measured (1-27 % of
rows; means -0.02..+0.03, intervals +-0.03-0.04: a k-means draw moves it that much), but its
query CPU grew x1.1-1.2 at 1-3 %, x1.3-1.4 at 13 % and x1.6-1.9 at 27 % (new rows are
float32 and join few lists; masked rows are still scanned). The stated tolerance, a third
more query CPU, is passed near 12 %; 0.1 keeps a running process inside it.

The remedy for both is `rmh index` (it trains again and saves the result for later
processes).
"""

from __future__ import annotations

from typing import Any

from .signals.dense import DenseIndex, DenseParams

REMEDY = "rmh index"


def dense_health(index: DenseIndex | None, chunks: int | None, params: DenseParams,
                 encoder: bool) -> dict[str, Any]:
    """The report (module docstring) of `index` (None: not built in this process; then
    `chunks`, the notes' chunk rows when counted, says which layout a build picks)."""
    if not encoder:
        return {"layout": "off", "level": "ok", "untrained_rows": 0}
    if index is None:
        if chunks is None:
            return {"layout": "not built yet", "level": "ok", "untrained_rows": 0}
        approx = 0 < params.approx_above < chunks
        if approx and chunks > params.retrain_max_rows:  # it could be stale: not built here
            return {"layout": "int8 IVF", "rows": chunks, "level": "not checked",
                    "reason": "not prepared here (units to embed first)", "remedy": REMEDY}
        return {"layout": "int8 IVF" if approx else "exact", "rows": chunks,
                "untrained_rows": 0, "share": 0.0, "level": "ok",
                "trained": "at every change" if approx else "exact: no training"}
    out: dict[str, Any] = {"layout": "exact" if index.ivf is None else "int8 IVF",
                           "rows": index.n_chunks, "generation": index.generation}
    if index.ivf is None:
        return {**out, "untrained_rows": 0, "share": 0.0, "level": "ok",
                "trained": "exact: no training"}
    untrained = index.untrained_rows
    share = untrained / max(1, index.base_rows)
    level = ("ok" if not untrained else "warning" if share > params.retrain_share
             else "stale")
    out.update(untrained_rows=untrained, share=round(share, 4), level=level,
               retrain_share=params.retrain_share,
               trained=("at every change" if index.n_chunks <= params.retrain_max_rows
                        else "when the share reaches retrain_share, or by `rmh index`"))
    if untrained:
        out["remedy"] = REMEDY
    return out


def dense_health_line(doc: dict[str, Any]) -> str:
    """`dense_health`'s report in one line of `rmh status` / `rmh doctor`."""
    words = f"{doc['layout']}"
    if "rows" in doc:
        words += f", {doc['rows']} chunk rows"
    if doc.get("untrained_rows"):
        words += (f"; {doc['untrained_rows']} changed since its training "
                  f"({100 * doc['share']:.1f}% of its rows; a running process trains again at "
                  f"{100 * doc['retrain_share']:g}%): hits beyond the first can differ from a "
                  f"fresh build's; run `{doc['remedy']}` to train it again")
    elif doc["level"] == "not checked":
        words += f"; its training not checked: {doc['reason']}; `{doc['remedy']}` trains it"
    elif "trained" in doc:
        words += f"; trained {doc['trained']}" if doc["layout"] != "exact" else ""
    return words
