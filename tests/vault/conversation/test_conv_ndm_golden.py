"""The NDM seed's own example (Alice, Bob, the pottery class, Carla, the vase, the bike)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path

import numpy as np
import pytest

from vault import Bm25Index, tokenize
from vault.conversation.context import EventIndex, Parts, Weights, context_from_items, score_parts
from vault.conversation.events import Event, build_events, incidence
from vault.conversation.formats import Conversation, Session, Turn
from vault.conversation.incidence import collision_pairs, jaccard
from vault.conversation.items import Item, item_of

ALICE, BOB = "Alice", "Bob"


def ndm_conversation(fifth: bool = True) -> Conversation:
    turns = [
        Turn("t0", ALICE, "I started a pottery class.", datetime(2024, 5, 1, 10, 0)),
        Turn("t1", BOB, "My teacher Carla runs the pottery class.", datetime(2024, 5, 1, 10, 5)),
        Turn("t2", ALICE, "Carla praised my vase.", datetime(2024, 5, 8, 18, 0)),
        Turn("t3", BOB, "Last month I sold my bike.", datetime(2024, 5, 9, 9, 0)),
    ]
    if fifth:
        turns.append(
            Turn("t4", ALICE, "She said it was my best work.", datetime(2024, 5, 10, 12, 0))
        )
    return Conversation("ndm", (Session("S1", datetime(2024, 5, 1, 10, 0), tuple(turns)),))


def seed_dialogue(fifth: bool = True, supplied: bool = False) -> Conversation:
    """The seed's dialogue as issue 16 quotes it: Carla only ever stands sentence-initially."""
    rows: list[tuple[str, str, str, datetime, list[str]]] = [
        ("t0", ALICE, "I started a pottery class and made a vase.", datetime(2024, 5, 1, 10, 0),
         ["pottery class", "vase"]),
        ("t1", BOB, "Carla is my teacher at the pottery class.", datetime(2024, 5, 1, 10, 5),
         ["Carla", "my teacher", "pottery class"]),
        ("t2", BOB, "Carla praised the vase you made, Alice.", datetime(2024, 5, 8, 18, 0),
         ["Carla", "Alice's vase", "Alice"]),
        ("t3", BOB, "Last month I sold my bike.", datetime(2024, 5, 9, 9, 0), ["my bike"]),
    ]
    if fifth:
        rows.append(("t4", ALICE, "She said it was my best work.", datetime(2024, 5, 10, 12, 0),
                     ["my best work"]))
    turns = tuple(Turn(i, sp, text, when, entities=tuple(ents) if supplied else None)
                  for i, sp, text, when, ents in rows)
    return Conversation("seed", (Session("S1", turns[0].when, turns),))


def keys(event: Event) -> set[str]:
    return {e.key for e in event.entities}


def test_rows_are_normalised_and_owned() -> None:
    ev = build_events(ndm_conversation())
    assert "pottery class" in keys(ev[0]) and "pottery class" in keys(ev[1])
    assert "alice's vase" in keys(ev[2])
    assert "bob's bike" in keys(ev[3])
    assert {e.kind for e in ev[0].entities if e.key == "alice"} == {"speaker"}


def test_collisions_chain_t0_t1_t2_and_bike_isolated() -> None:
    inc = incidence(build_events(ndm_conversation(fifth=False)))
    assert collision_pairs(inc) == ((0, 1), (1, 2))
    assert inc.components() == ((0, 1, 2), (3,))
    # Speakers are hubs: every turn mentions one, yet t0 and t2 (both Alice) do not collide.
    assert (0, 2) not in collision_pairs(inc)


def test_carla_trajectory_and_ties() -> None:
    inc = incidence(build_events(ndm_conversation(fifth=False)))
    assert inc.trajectory("carla") == (1, 2)
    tied = dict(inc.ties("carla"))
    assert set(tied) == {"alice's vase", "pottery class", "bob's teacher"}
    assert tied["alice's vase"] > tied["pottery class"]  # t2 is less crowded than t1
    assert inc.ties("bob's bike") == (("2024-04", 1.0 / __import__("math").log(2)),)


def test_last_month_on_9_may_means_april() -> None:
    ev = build_events(ndm_conversation())
    (ref,) = ev[3].time_refs
    assert (ref.expr, ref.start, ref.end, ref.label) == (
        "Last month", date(2024, 4, 1), date(2024, 4, 30), "2024-04"
    )
    assert ev[3].tick == 3 and ev[3].when.date() == date(2024, 5, 9)


def test_she_is_resolved_by_a_unique_count_and_it_stays_open() -> None:
    ev = build_events(ndm_conversation())
    refs = {r.expr: r for r in ev[4].references}
    she, it = refs["she"], refs["it"]
    assert (she.status, she.entity) == ("resolved", "carla")
    assert she.evidence == ((1, "carla"), (2, "carla"))
    assert it.status == "open" and len(it.candidates) >= 2 and it.entity is None


def test_she_with_two_women_stays_open_and_with_none_is_unknown() -> None:
    conv = ndm_conversation()
    s = conv.sessions[0]
    two = (*s.turns[:3], Turn("t3", BOB, "I think Dana liked it too.", s.turns[3].when),
           s.turns[4])
    ev = build_events(Conversation("x", (Session("S1", s.when, two),)))
    she = next(r for r in ev[4].references if r.expr == "she")
    assert she.status == "open" and she.candidates == ("carla", "dana")
    alone = (Turn("a", ALICE, "She said hello.", s.when),)
    ev2 = build_events(Conversation("y", (Session("S1", s.when, alone),)))
    assert ev2[0].references[0].status == "unknown"


def test_jaccard_of_name_drift_is_one_half() -> None:
    a = [(0, 1), (1, 2)]
    b = [(1, 2)]
    assert jaccard(a, b) == 0.5
    assert jaccard([], []) == 1.0
    assert jaccard(a, [(2, 1), (1, 0)]) == 1.0


def test_events_are_deterministic() -> None:
    assert build_events(ndm_conversation()) == build_events(ndm_conversation())


SEED_QUESTION = "When was Alice's vase praised?"
SEED_LINES = [
    "[2024-05-01 10:00] Alice: I started a pottery class and made a vase.",
    "[2024-05-01 10:05] Bob: Carla is my teacher at the pottery class.",
    "[2024-05-08 18:00] Bob: Carla praised the vase you made, Alice.",
]


def test_carla_is_found_although_she_only_opens_sentences() -> None:
    ev = build_events(seed_dialogue())
    assert [(e.key, e.kind) for e in ev[1].entities if e.key == "carla"] == [("carla", "name")]
    assert "carla" in keys(ev[2])
    inc = incidence(build_events(seed_dialogue(fifth=False)))
    assert inc.trajectory("carla") == (1, 2)
    assert inc.components() == ((0, 1, 2), (3,))  # the bike connects to nothing


@pytest.mark.parametrize("supplied", [False, True])
def test_she_is_carla_only_when_she_is_the_one_candidate(supplied: bool) -> None:
    ev = build_events(seed_dialogue(supplied=supplied))
    she = next(r for r in ev[4].references if r.expr == "she")
    # "Alice's vase" (supplied) is a thing, not a person: Carla stays the only candidate
    assert (she.status, she.entity, she.candidates) == ("resolved", "carla", ("carla",))
    kinds = {e.key: e.kind for e in ev[2].entities}
    assert kinds["carla"] == "name" and kinds.get("alice's vase", "thing") == "thing"
    s = seed_dialogue(supplied=supplied).sessions[0]
    two = (*s.turns[:3], Turn("t3", BOB, "I think Dana liked it too.", s.turns[3].when,
                              entities=("Dana",) if supplied else None), s.turns[4])
    ev2 = build_events(Conversation("x", (Session("S1", s.when, two),)))
    she2 = next(r for r in ev2[4].references if r.expr == "she")
    assert she2.status == "open" and she2.candidates == ("carla", "dana")


def seed_context(budget: int, fifth: bool = False) -> list[str]:
    items = [item_of(e) for e in build_events(seed_dialogue(fifth=fifth))]
    lex = Bm25Index.from_documents([tokenize(it.text) for it in items]).score(SEED_QUESTION)
    return context_from_items(items, SEED_QUESTION, budget, lex).text.splitlines()


def test_seed_depiction_is_exactly_three_lines_at_any_budget_that_fits_them() -> None:
    fits = sum(len(line.split()) for line in SEED_LINES)
    for budget in (fits, fits + 1, 60, 100, 1000):
        assert seed_context(budget) == SEED_LINES
    # the bike sale asks "when"-worthy dates but shares nothing with the question: never shown
    assert not any("bike" in line for b in (5, 10, 20, fits, 1000) for line in seed_context(b))
    # over budget, the lowest priority goes first: the turn before t2 (priority 0.5 s(t2))
    assert seed_context(fits - 1) == [SEED_LINES[0], SEED_LINES[2]]
    assert seed_context(len(SEED_LINES[2].split())) == [SEED_LINES[2]]


def test_the_fifth_turn_shares_only_a_stop_word_and_is_not_shown() -> None:
    """"She said it was my best work." shares "was" with the question; raw BM25 scores it
    (0.38 of the best, above LEX_STRONG), but a stop word connects nothing, so neither it nor
    the bike turn before it enters."""
    fits = sum(len(line.split()) for line in SEED_LINES)
    for budget in (fits, fits + 1, 60, 100, 1000):
        assert seed_context(budget, fifth=True) == SEED_LINES


def test_context_score_formula_by_hand_on_three_events() -> None:
    """s(t) = rel(t)·(1 + 0.3·time)·(1 + 0.1·spk), rel = lex + 0.5·ent if connected."""
    when = datetime(2024, 5, 1, 9, 0)
    d = (("in May", date(2024, 5, 1), date(2024, 5, 31)),)
    items = [
        Item(0, "c", "S1", "e0", "Kim", when, "The vase is done.", ("vase",), ()),
        Item(1, "c", "S1", "e1", "Lee", when, "The kiln cracked the vase.", ("vase", "kiln"), d),
        Item(2, "c", "S1", "e2", "Lee", when, "I sold my bike.", ("bike",), d),
    ]
    q = "when did kim fire the vase in the kiln"
    parts = score_parts(EventIndex.build(items), q, [2.0, 4.0, 0.8])
    # lex / max = 0.5, 1, and 0 for e2, whose text holds no content term of q (its 0.8 came
    # from words q does not have); idf(vase) = ln(1 + 3/2), idf(kiln) = ln(1 + 3/1), their
    # sum ln 10, so ent(e0) = log10(2.5), ent(e1) = 1, ent(e2) = 0 (bike is not in q)
    assert parts.lex.tolist() == pytest.approx([0.5, 1.0, 0.0])
    assert parts.ent.tolist() == pytest.approx([0.3979400087, 1.0, 0.0])
    assert parts.time.tolist() == [0.0, 1.0, 1.0] and parts.speaker.tolist() == [1.0, 0.0, 0.0]
    s = parts.combine(Weights())
    # e0: (0.5 + 0.5·log10 2.5)·1.1 = 0.7688670; e1: (1 + 0.5)·1.3 = 1.95;
    # e2: lex 0 and no shared entity -> 0 although it has a date
    assert s.tolist() == pytest.approx([0.55 * (1 + 0.3979400087), 1.95, 0.0])
    assert isinstance(parts, Parts)


def test_the_lex_gate_reads_words_in_any_form() -> None:
    """A turn whose lexical score comes from a content word in another form ("hiking" asked,
    "hike" said: the vault's search stems) keeps it; one sharing only stop words does not."""
    when = datetime(2024, 5, 1, 9, 0)
    items = [
        Item(0, "c", "S1", "e0", "Kim", when, "I went on a long hike.", (), ()),
        Item(1, "c", "S1", "e1", "Lee", when, "Where were you then?", (), ()),
    ]
    parts = score_parts(EventIndex.build(items), "When did Kim go hiking?", [2.0, 1.0])
    assert parts.lex.tolist() == pytest.approx([1.0, 0.0])


_SNAPSHOT = """
import json
from tests.vault.conversation.test_conv_ndm_golden import seed_dialogue, ndm_conversation
from tests.vault.conversation.test_conv_ndm_golden import seed_context, SEED_QUESTION
from vault.conversation.events import build_events, incidence
for conv in (seed_dialogue(), seed_dialogue(supplied=True), ndm_conversation()):
    ev = build_events(conv)
    print(repr(ev))
    inc = incidence(ev)
    print(inc.keys, inc.kinds, inc.collisions(), inc.components())
    print(json.dumps([[k, v] for k, v in inc.ties("carla")]))
print(seed_context(100))
"""


def test_extraction_is_byte_identical_under_two_hash_seeds() -> None:
    """Set and dict order must never leak: two interpreters, two PYTHONHASHSEEDs, same bytes."""
    root = Path(__file__).resolve().parents[3]
    outs = []
    for seed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root)}
        done = subprocess.run([sys.executable, "-c", _SNAPSHOT], cwd=root, env=env,
                              capture_output=True, check=True, timeout=120)
        outs.append(done.stdout)
    assert outs[0] == outs[1] and len(outs[0]) > 1000


def test_a_time_the_question_names_connects_the_turns_it_holds() -> None:
    """"What happened on 8 May 2024?" shares no word with t2, but names its day: t2 is shown
    (with the turn before it, the seed's rule); no other day's turn is. A question that only
    asks "when" names no time: the bike turn, dated but unconnected, stays out."""
    items = [item_of(e) for e in build_events(seed_dialogue(fifth=True))]

    def shown(q: str, now: date | None = None) -> list[str]:
        lex = Bm25Index.from_documents([tokenize(it.text) for it in items]).score(q)
        ctx = context_from_items(items, q, 100, lex, now=now)
        return [ln.item.turn_id for ln in ctx.lines]

    assert shown("What happened on 8 May 2024?") == ["t1", "t2"]
    assert shown("Anything on 2024-05-10?") == ["t3", "t4"]
    assert shown("What happened in April 2024?") == ["t2", "t3"]  # "Last month" = April
    # a time longer than the one asked is no evidence of it: April is not 15 April
    assert shown("What happened on 15 April 2024?") == []
    # the words of the date connect no entity: "May" is no entity row of a May turn
    assert shown("Anything on 1 January 2019?") == []
    # read against the day asked: "last week" from 14 May 2024 is 6-12 May
    assert shown("What happened last week?", now=date(2024, 5, 14)) == ["t1", "t2", "t3", "t4"]
    assert shown("When?") == [] and "t3" not in shown(SEED_QUESTION)


def test_a_named_time_never_ranks_a_connected_turn_below_an_unconnected_one() -> None:
    """Both turns lie in the time the question names; the first also shares an entity with
    it, weakly (rel = W_ENTITY · 0.2 = 0.1 < DATE_ALONE). The named time connects both, so
    the connected one must score at least what the time alone gives (was 0.13 < 0.325)."""
    one = np.ones(2)
    parts = Parts(lex=np.zeros(2), ent=np.array([0.2, 0.0]), time=one, speaker=np.zeros(2),
                  omega=np.zeros(2), named=one)
    s = parts.combine(Weights())
    assert s[0] >= s[1] > 0
    # without a named time nothing changes: the weak entity connection alone
    assert replace(parts, named=None).combine(Weights())[0] == pytest.approx(0.1 * 1.3)


def test_only_the_first_ranges_a_question_names_are_read() -> None:
    """Bounded work for a hostile question: of the distinct times it names, the first
    MAX_ASKED count (when.py), so a day named after eight others connects nothing."""
    from vault.notes.times_asked import MAX_ASKED

    items = [item_of(e) for e in build_events(seed_dialogue(fifth=True))]
    others = ", ".join(f"{d} January 2020" for d in range(1, MAX_ASKED + 1))
    for q, shown in ((f"Anything on 8 May 2024, {others}?", ["t1", "t2"]),
                     (f"Anything on {others} or 8 May 2024?", [])):
        lex = Bm25Index.from_documents([tokenize(it.text) for it in items]).score(q)
        got = [ln.item.turn_id for ln in context_from_items(items, q, 100, lex).lines]
        assert got == shown, q
