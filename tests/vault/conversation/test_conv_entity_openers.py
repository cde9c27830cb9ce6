"""An agent's reply opens sentences with prepositions, connectives and short past forms ("Per
the docs", "Via the config", "Added a lock"): none of them is an entity note after an ingest,
while a name that opens a sentence, or stands mid-sentence, still is (session 42, REVIEW42)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.vault.conversation.transcript_fixtures import claude_lines
from vault import Vault, ingest_conversations, load_transcript
from vault.conversation.entities import extract, name_lexicon

# Words that opened sentences of a real agent reply and became entity notes before the fix.
OPENERS = ("Per", "Via", "Unlike", "Whereas", "Overall", "Based", "Added", "Despite", "Beyond",
           "Thus", "Hence", "Moreover", "Therefore", "Given", "Within", "Fixed", "Moved",
           "Tried", "Saved", "Toward", "Besides", "Nonetheless", "Upon", "According")
TEMPLATES = ("{w} the docs, the timeout is 30 seconds.", "{w} a lock around the flush.",
             "{w} before, nothing leaks.", "{w} on the logs the retry loop races.")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(OPENERS), st.sampled_from(TEMPLATES)),
                min_size=1, max_size=6))
def test_openers_are_no_names_and_a_mid_sentence_name_still_is(
        pairs: list[tuple[str, str]]) -> None:
    texts = [t.format(w=w) for w, t in pairs] + ["Dana owns the queue, ask Dana."]
    lexicon = name_lexicon(texts, ["user", "assistant"])
    keys = {e.key for text in texts
            for e in extract(text, speaker="assistant", lexicon=lexicon,
                             speakers=["user", "assistant"])}
    assert not {w.casefold() for w, _ in pairs} & (lexicon | keys)
    assert "dana" in lexicon and "dana" in keys


# A reply as an agent writes one (the probe that found the defect, `rmh ingest` of a Claude Code
# transcript: on main it wrote entity notes added, based, overall, per, unlike, via, whereas).
REPLY = ("Looking at the test now. Based on the logs, the retry loop races the queue. Here is the "
         "fix. Added a lock around the flush. Updated the fixture too. Per the docs, the timeout "
         "is 30 seconds. Via the config you can raise it. Regarding the queue, Dana owns it. "
         "Without the lock it fails. Running the suite again. Done. All green. Overall the change "
         "is small. Unlike before, nothing leaks. Whereas the old code spun.")


def test_an_agent_reply_ingested_makes_no_entity_note_of_an_opener(tmp_path: Path) -> None:
    lines = claude_lines([("user", "Can you fix the flaky test in the billing module?", ()),
                          ("assistant", REPLY, ())], session="s-openers", noise=False)
    root = tmp_path / "v"
    with Vault.init(root) as v:
        # the rules, as with no `nlp` extra installed (the default install) or `[extract]
        # entities = "rules"`; the parsed extraction reads these openers right already
        ingest_conversations(v, load_transcript("\n".join(lines)).conversations, use_nlp=False)
    names = {p.stem for p in (root / "conversations" / "s-openers" / "entities").glob("*.md")}
    assert "dana" in names
    openers = {"added", "based", "overall", "per", "unlike", "via", "whereas", "regarding",
               "without", "running", "looking", "updated", "here", "done", "all"}
    assert not names & openers, sorted(names)
