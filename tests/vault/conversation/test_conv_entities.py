"""Entity normalisation and extraction rules."""

from __future__ import annotations

from datetime import date

from vault.conversation.entities import extract, name_lexicon, normalise, supplied


def test_the_vase_and_vase_share_a_row_my_vase_by_two_speakers_do_not() -> None:
    assert normalise("the vase") == normalise("vase") == normalise("The Vases") == "vase"
    assert normalise("my vase", speaker="Alice") != normalise("my vase", speaker="Bob")
    assert normalise("my vase", speaker="Alice") == normalise("Alice's vase") == "alice's vase"
    assert normalise("your vase", speaker="Bob", addressee="Alice") == "alice's vase"
    assert normalise("the") == ""


def test_extraction_kinds_and_order() -> None:
    lex = name_lexicon(["I met Carla at the pottery class."], ["Alice", "Bob"])
    got = extract(
        "Hey! Carla sold 3 bowls for $40 yesterday at the Riverside Market.",
        speaker="Alice", addressee="Bob", lexicon=lex, anchor=date(2024, 5, 9),
        speakers=["Alice", "Bob"],
    )
    assert [(e.key, e.kind) for e in got] == [
        ("2024-05-08", "date"),
        ("carla", "name"),
        ("riverside market", "thing"),
        ("3", "number"),
        ("$40", "number"),
    ]  # "Hey" is sentence-initial and unknown: not a name


def test_sentence_initial_word_is_a_name_only_when_known() -> None:
    assert [e.key for e in extract("Dana called.", speaker="A")] == []
    lex = name_lexicon(["I saw Dana."])
    assert [e.key for e in extract("Dana called.", speaker="A", lexicon=lex)] == ["dana"]


def test_speaker_names_are_speaker_rows_and_supplied_entities_normalise() -> None:
    got = extract("I told Bob about it.", speaker="Alice", speakers=["Alice", "Bob"])
    assert [(e.key, e.kind) for e in got] == [("bob", "speaker")]
    sup = supplied(["the vase", "my bike", "Carla"], speaker="Bob", speakers=["Alice", "Bob"])
    assert [(e.key, e.kind) for e in sup] == [
        ("vase", "thing"), ("bob's bike", "thing"), ("carla", "name")
    ]


def test_vague_nouns_are_not_rows() -> None:
    assert extract("It was a lot of fun, the time flew.", speaker="A") == ()


def test_sentence_initial_names_are_found_by_conversation_evidence() -> None:
    texts = ["Carla is my teacher at the pottery class.", "Carla praised the vase you made."]
    lex = name_lexicon(texts, ["Alice", "Bob"])
    assert "carla" in lex and "pottery" not in lex
    got = extract(texts[0], speaker="Bob", lexicon=lex)
    assert (got[0].key, got[0].kind) == ("carla", "name")
    # a common opener, or a word the conversation also writes in lower case, is not a name
    lex2 = name_lexicon(["Thanks a lot.", "Pottery is fun.", "I love pottery."])
    assert "thanks" not in lex2 and "pottery" not in lex2
    # a title-case run after the sentence start
    run = extract("Riverside Market opened.", speaker="A")
    assert [(e.key, e.kind) for e in run] == [("riverside market", "name")]


def test_plural_proper_names_stay_and_possessives_are_things() -> None:
    assert normalise("Payments") == "payments" and normalise("the payments") == "payment"
    sup = supplied(["Alice's vase", "Payments", "Backend Team"], speaker="Bob",
                   speakers=["Alice", "Bob"])
    assert [(e.key, e.kind) for e in sup] == [
        ("alice's vase", "thing"), ("payments", "name"), ("backend team", "name")
    ]
    lex = name_lexicon([], names=["Payments"])
    assert "payments" in lex


def test_an_ordinal_or_a_phrasal_verb_is_no_thing() -> None:
    """NEWUSER5 (session 33): the rules made entity notes `second.md` ("a second raised bed":
    the participle ended the phrase after "second") and `aphids come back.md` from a 4-turn
    chat. A phrase of ordinals alone is no row; a particle ends the phrase, and so does the
    verb before it. A noun phrase with them inside stays."""
    def keys(text: str) -> list[str]:
        return [e.key for e in extract(text, speaker="Jonas")]

    assert keys("We should build a second raised bed next to the greenhouse.") == ["greenhouse"]
    assert keys("Good idea, but the aphids come back every spring.") == ["aphid"]
    assert keys("The first was better.") == []
    assert keys("I took the car back.") == ["car"]
    assert keys("the kids grow up fast") == ["kid"]
    assert keys("Then we plant marigolds around the second bed.") == ["second bed"]
    assert keys("the back door is open") == ["back door"]
    assert keys("my next project") == ["jonas's next project"]
