"""WhatsApp's own lines and media placeholders in any language (session 30 CHATPERF): an
Android export whose subject changes hold ": " and whose placeholders are another language's
reads back exactly the messages people wrote (generated over locales, names and texts)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vault import load_transcript

# System lines whose subject (b) holds ": ", shaped as WhatsApp writes them: the quotation
# marks of each language round the subject (templates written for this test)
SUBJECT_CHANGES = (
    '{n} changed the subject from "{a}" to "{b}"',
    "{n} hat den Betreff von \u201e{a}\u201c zu \u201e{b}\u201c ge\u00e4ndert",
    "{n} a modifi\u00e9 le sujet de \u00ab {a} \u00bb en \u00ab {b} \u00bb",
    '{n} cambi\u00f3 el asunto de "{a}" a "{b}"',
    "{n} \u0438\u0437\u043c\u0435\u043d\u0438\u043b(-\u0430) \u0442\u0435\u043c\u0443 \u0441 "
    "\u00ab{a}\u00bb \u043d\u0430 \u00ab{b}\u00bb",
    "{n}\u304c\u30b0\u30eb\u30fc\u30d7\u540d\u3092\u300c{a}\u300d\u304b\u3089\u300c{b}\u300d"
    "\u306b\u5909\u66f4\u3057\u307e\u3057\u305f",
    "{n} \u5c06\u7fa4\u7ec4\u540d\u79f0\u4ece\u201c{a}\u201d\u66f4\u6539\u4e3a\u201c{b}\u201d",
    '{n} heeft het onderwerp gewijzigd van "{a}" naar "{b}"',
)
OTHER_SYSTEM = ("{n} hat {m} hinzugef\u00fcgt", "{n} a ajout\u00e9 {m}",
                "{n} sali\u00f3", "{n}\u304c{m}\u3092\u8ffd\u52a0\u3057\u307e\u3057\u305f")
PLACEHOLDERS = ("<Media omitted>", "<Medien ausgeschlossen>", "<Multimedia omitido>",
                "<M\u00e9dias omis>", "<M\u00eddia oculta>", "<Media weggelaten>",
                "<\u30e1\u30c7\u30a3\u30a2\u306f\u542b\u307e\u308c\u3066\u3044\u307e\u305b\u3093>")

_WORD = st.text(st.sampled_from("abcxyzÄöçßжёπ日本0123456789"), min_size=1, max_size=6)
_NAME = st.one_of(
    st.lists(_WORD, min_size=1, max_size=3).map(" ".join),
    st.tuples(_WORD, _WORD, _WORD).map(lambda t: f'{t[0]} "{t[1]}" {t[2]}'),  # a nickname
    st.tuples(_WORD, _WORD).map(lambda t: f"{t[0]} \u201e{t[1]}\u201c"))
_TEXT = st.lists(st.tuples(_WORD, st.sampled_from([" ", ": ", ", ", " - "])), min_size=1,
                 max_size=5).map(lambda ws: "".join(w + s for w, s in ws).strip(" :,-"))
_EVENT = st.one_of(
    st.tuples(st.just("said"), _NAME, _TEXT),
    st.tuples(st.just("subject"), _NAME, st.tuples(st.sampled_from(SUBJECT_CHANGES), _TEXT,
                                                   _TEXT, _WORD)),
    st.tuples(st.just("system"), _NAME, st.tuples(st.sampled_from(OTHER_SYSTEM), _NAME)),
    st.tuples(st.just("media"), _NAME, st.sampled_from(PLACEHOLDERS)))


@settings(max_examples=300, deadline=None)
@given(st.lists(_EVENT, min_size=1, max_size=12))
def test_an_export_in_any_language_reads_back_only_what_people_wrote(
        events: list[tuple[str, str, object]]) -> None:
    rows, want = [], []
    for i, (kind, name, what) in enumerate(events):
        head = f"13/01/2024, {10 + i // 60:02d}:{i % 60:02d} - "
        if kind == "said":
            assert isinstance(what, str)
            rows.append(f"{head}{name}: {what}")
            if what:
                want.append((name, what))
        elif kind == "subject":
            assert isinstance(what, tuple)
            template, a, b, c = what
            rows.append(head + template.format(n=name, a=a, b=f"{b}: {c}"))
        elif kind == "system":
            assert isinstance(what, tuple)
            rows.append(head + what[0].format(n=name, m=what[1]))
        else:
            rows.append(f"{head}{name}: {what}")
    loaded = load_transcript("\n".join(rows) + "\n", "whatsapp", "wa")
    got = [(t.speaker, t.text) for c in loaded.conversations for t in c.turns()]
    assert got == want
    assert loaded.problems == ()


def test_a_german_subject_with_a_colon_and_a_placeholder_are_no_turns() -> None:
    text = ("13/01/2024, 10:00 - Ann hat den Betreff von \u201eAlt\u201c zu "
            "\u201eTreffen: Montag\u201c ge\u00e4ndert\n"
            "13/01/2024, 10:01 - Bob: <Medien ausgeschlossen>\n"
            '13/01/2024, 10:02 - Robert "Bobby" Tables: Zeit: 10 Uhr\n')
    (conv,) = load_transcript(text, "auto", "wa").conversations
    assert [(t.speaker, t.text) for t in conv.turns()] == [
        ('Robert "Bobby" Tables', "Zeit: 10 Uhr")]
