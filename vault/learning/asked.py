"""Query-log neighbours (learning v7): a note is found by questions that mean what the
questions it was used for meant, whatever their words.

The word channel (expansion.py) matches a new question to the Snowball stems of the questions
a note was used for; a paraphrase that shares meaning more than words ("Why did Jon start his
dance studio?" after "What made Jon open a studio for dancing?") shares few stems. Click-log
work finds related queries through what users did with them: queries whose clicks share
documents are related (Beeferman & Berger 2000, "Agglomerative clustering of a search engine
query log", KDD; Craswell & Szummer 2007, "Random walks on the click graph", SIGIR), and a new
query is matched to logged queries by their content as well as their clicks (Wen, Nie & Zhang
2002, "Query clustering using user logs", ACM TOIS 20(1)). Here the log is the agent's own:

- Profile (`NoteState.use_queries`): when a session ends with a note used (rewards.py), the
  texts of the queries it was used for (expansion.py `asking_queries`) are kept with the
  sequence number of the session's end event; a note keeps its `queries_cap` most recent
  (`add_queries`; ties by text), so the state stays bounded. Texts, not vectors: replay folds
  the same events into the same texts, and the vectors are a function of the text and the
  encoder (vault/retrieval/asked_channel.py embeds them through the embedding cache).
- Channel value, with e() the dense channel's sentence encoder (L2-normalised, so the inner
  product is the cosine):
      s(d, Q) = max_k cos(e(Q), e(Q_dk))       over the note's kept queries Q_dk
      x(d, Q) = q(d) * g(s),   g(s) = clip((s - floor) / (1 - floor), 0, 1)
  q(d) the note's positive learned score (evidence.py; 0 for a note never used or passed
  over more than used): a question less similar than `floor` to every question the note was
  used for leaves it untouched (g = 0), a repeat of one gets the note's whole score.
  Walk form (`weights.asked_walk`, on by default): each passing kept query t's gate is shared,
  g_t * g_t / sum_t' g_t', one step of the click graph's walk from Q to the logged queries
  (Craswell & Szummer 2007), so a question near many logged ones lifts each of their notes
  little; a lone passing query keeps its whole gate.
- Ranking: fused like the word channel (vault/retrieval/scope.py `expansion_channel`, weight
  `[search] weights.asked`, 0 = off, the default; the floor is `weights.asked_floor`, FLOOR),
  held below the notes the query names (learned_stages.py). Off by default: on LoCoMo, where
  held-out questions about the same turns are not rewordings, MiniLM puts a held-out question
  closer to training questions about other turns than to those about its own, so the channel
  lifts the wrong turns (measured, NOTES-L5.md).

Pure and deterministic: no clock, sorted iteration; `replay == live`.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

# The similarity below which a question is about something else. With MiniLM on the knowledge
# workload (bench/asked_similarity.py) a reworded question lies at 0.78-0.96 of its original
# (5th-95th percentile) and an unrelated one at 0.48-0.76 of the closest logged question: 0.8
# is the lowest floor no unrelated question reaches (88 % of rewordings pass). The walk form
# (the default, WALK) shares the gate among the logged questions that pass, so a lower floor
# costs little: 0.7 (98 % of rewordings pass) lifted more on the knowledge workload with
# unrelated questions unchanged; chosen after those runs, confirmed on a second vault and two
# other LoCoMo conversations (NOTES-L5.md).
FLOOR = 0.7
WALK = 1.0  # weights.asked_walk: 1 = the walk form, 0 = every passing query's whole gate


def add_queries(kept: dict[str, int], queries: Iterable[str], stamp: int, cap: int) -> None:
    """Stamp each non-empty query of `queries` with `stamp` in `kept` (in place), then keep
    the `cap` most recent (ties: by text)."""
    for text in sorted({q.strip() for q in queries} - {""}):
        kept[text] = max(stamp, kept.get(text, stamp))
    if len(kept) > cap:
        keep = sorted(kept.items(), key=lambda kv: (-kv[1], kv[0]))[:cap]
        kept.clear()
        kept.update(sorted(keep))


def recent(kept: dict[str, int]) -> tuple[str, ...]:
    """The kept queries, newest first (ties: by text)."""
    return tuple(t for t, _ in sorted(kept.items(), key=lambda kv: (-kv[1], kv[0])))


def gate(similarity: npt.ArrayLike, floor: float = FLOOR) -> npt.NDArray[np.float64]:
    """g(s) = clip((s - floor) / (1 - floor), 0, 1) (module docstring); floor in [0, 1)."""
    if not 0.0 <= floor < 1.0:
        raise ValueError(f"the similarity floor must lie in [0, 1), not {floor}")
    s = np.asarray(similarity, dtype=np.float64)
    return np.asarray(np.clip((s - floor) / (1.0 - floor), 0.0, 1.0), dtype=np.float64)
