"""The NDM seed's own example (Alice, Bob, the pottery class, Carla, the vase, the bike)."""

from __future__ import annotations

from datetime import date, datetime

from vault.conversation.events import Event, build_events, incidence
from vault.conversation.formats import Conversation, Session, Turn
from vault.conversation.incidence import collision_pairs, jaccard

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
