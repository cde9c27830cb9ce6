"""Episodic memory (goal, steps tried, outcome, lesson) and the working partition (4D seed)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from vault import Vault, build_context, ingest_conversations
from vault.conversation.episodes import find_episodes
from vault.conversation.events import build_events
from vault.conversation.formats import Conversation, Session, Turn
from vault.conversation.working import demoted_text, session_end, working_note, working_path

T0 = datetime(2024, 3, 4, 9, 0)


def cors(lesson: bool = True, outcome: str = "That fixed it. I also dislike verbose error "
         "messages.") -> Conversation:
    """The 4D seed's coding-assistant exchange, with a lesson said after the fix."""
    said = [("Sarah", "user", "I'm getting a CORS error on the payments API."),
            ("Agent", "assistant", "The API is missing the Access-Control-Allow-Origin header."),
            ("Sarah", "user", outcome)]
    if lesson:
        said.append(("Sarah", "user", "Lesson: check the response headers first next time."))
    said.append(("Sarah", "user", "My team uses tabs rather than spaces."))
    turns = tuple(Turn(f"s1:{i}", sp, text, T0 + timedelta(minutes=i), role=role)
                  for i, (sp, role, text) in enumerate(said))
    return Conversation("sarah", (Session("s1", T0, turns),))


def test_a_task_shaped_exchange_becomes_one_labelled_episode() -> None:
    (ep,) = find_episodes(build_events(cors()))
    assert (ep.goal.tick, ep.goal.label) == (0, "goal")
    assert [(p.tick, p.label) for p in ep.steps] == [(1, "tried")]
    assert (ep.outcome.tick, ep.outcome.label, ep.succeeded) == (2, "success", True)
    assert ep.lesson is not None and ep.lesson.tick == 3 and ep.ticks == (0, 1, 2, 3)
    assert ep.summary().startswith("Goal: I'm getting a CORS error on the payments API. Tried: ")


def test_no_outcome_no_episode_and_failures_are_labelled() -> None:
    assert find_episodes(build_events(cors(lesson=False, outcome="Thanks, I will look."))) == ()
    (bad,) = find_episodes(build_events(cors(lesson=False, outcome="No luck, still broken.")))
    assert bad.outcome.label == "failure" and bad.lesson is None


def test_episode_notes_link_their_turns_and_are_found_by_search_and_context(
        tmp_path: Path) -> None:
    with Vault.init(tmp_path / "v") as v:
        report = ingest_conversations(v, cors())
        assert report.episodes == 1
        note = v.read("conversations/sarah/episodes/sarah s1 episode 1")
        fm = note.frontmatter
        assert (fm["tier"], fm["extraction"], fm["outcome"]) == ("episodic", "patterns",
                                                                 "success")
        assert [p["label"] for p in fm["parts"]] == ["goal", "tried", "success", "lesson"]
        assert len(fm["turns"]) == 4 and "sarah s1-0" in fm["turns"][0]
        assert "**Lesson**" in note.body and "no model wrote it" in note.body
        hits = [h.note for h in v.search("CORS error lesson headers", 10).hits]
        assert "conversations/sarah/episodes/sarah s1 episode 1.md" in hits
        ctx = build_context(v, "What did we learn about the CORS error?", 200)
        assert any(ln.item.kind == "episode" for ln in ctx.lines)
        assert any(line.startswith("[2024-03-04 09:00] Episode (patterns): Goal:")
                   for line in ctx.text.splitlines())


def test_working_notes_are_promoted_when_cited_or_confirmed_else_archived(
        tmp_path: Path) -> None:
    with Vault.init(tmp_path / "v") as v:
        ingest_conversations(v, cors())
        kept = working_path("sarah", "s1", "cors header")
        sure = working_path("sarah", "s1", "tabs")
        drop = working_path("sarah", "s1", "maybe nginx")
        v.write(kept, working_note("sarah", "s1", "CORS: add the Allow-Origin header.", T0))
        v.write(sure, working_note("sarah", "s1", "Sarah's team uses tabs.", T0, confirmed=True))
        v.write(drop, working_note("sarah", "s1", "Perhaps nginx strips the header.", T0))
        live = build_context(v, "nginx strips the header", 100)
        assert any(ln.item.kind == "working" for ln in live.lines)  # shown while live
        v.write("answer.md", "Fixed, see [[conversations/sarah/working/s1/cors header]].\n")
        decisions = session_end(v.corpus(), "sarah", "s1")
        got = {d.note: (d.action, d.reason) for d in decisions}
        assert got == {
            kept: ("promote", "cited by answer.md"),
            drop: ("archive", "neither cited nor confirmed by session end"),
            sure: ("promote", "confirmed"),
        }
        for d in decisions:
            if d.action == "promote":
                v.write(d.note, d.text)
        promoted = v.read(kept)
        assert (promoted.frontmatter["tier"], promoted.frontmatter["promoted_from"]) == (
            "L2", "working")
        assert session_end(v.corpus(), "sarah", "s1") == (decisions[1],)  # only the archive left
        back = demoted_text(promoted.frontmatter, promoted.body)
        assert back is not None
        v.write(kept, back)  # reversible: the working note is back as it was
        assert v.read(kept).frontmatter == {"tier": "working", "conversation": "sarah",
                                            "session": "s1", "date": T0.isoformat()}
