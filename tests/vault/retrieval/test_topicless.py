"""A query that asks for a time and nothing else (vault/retrieval/topicless.py): which queries
are topicless, the time channel finds every note dated in the time named whatever its words,
the search is relevant exactly when a head note lies in that time, a topic (absent or present)
keeps the ordinary search, and `context` shows that time's turns."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pytest

from tests.harness.test_conv_depiction_surfaces import SEED  # the NDM seed's four turns
from vault import Vault, build_context, ingest_conversations, load_conversations
from vault.notes.times_asked import FRAME_WORDS, topicless
from vault.retrieval.pipeline import SearchEngine, SearchParams
from vault.retrieval.topicless import time_scores
from vault.storage.corpus import Corpus

from ..retrieval_fixtures import make_corpus

NOW = date(2023, 4, 1)
TOPICS = ("lamp", "garden", "violin", "invoice", "kayak", "sourdough", "telescope", "chess")
TIMES = ("on 4 March 2023", "last week", "yesterday", "in February 2023", "on 2023-03-10",
         "two weeks ago", "in the last three days")
FRAMES = ("What happened {t}?", "What did we talk about {t}?", "What was I up to {t}?",
          "Anything {t}?", "{t}", "Summarize my notes from {t}", "What did I work on {t}?")


@pytest.mark.parametrize("seed", range(4))
def test_frame_words_and_a_time_are_topicless_and_any_topic_word_is_not(seed: int) -> None:
    rng = random.Random(seed)
    frames = FRAME_WORDS.split()
    for _ in range(25):
        t = rng.choice(TIMES)
        q = rng.choice(FRAMES).format(t=t)
        assert topicless(q), q
        extra = " ".join(rng.sample(frames, 2))
        assert topicless(f"{q} {extra}"), extra
        topic = rng.choice(TOPICS)
        assert not topicless(f"What happened to the {topic} {t}?")
        assert not topicless(f"{topic} {t}")


def daily(days_back: list[int], rng: random.Random) -> Corpus:
    """Notes dated `days_back` days before NOW, each about one topic, with no frame word."""
    rows = [(f"n{i}", f"The {rng.choice(TOPICS)} needs a {rng.choice(TOPICS)} soon.")
            for i in range(len(days_back))]
    c = make_corpus(rows)
    return replace(c, frontmatter=tuple({"date": (NOW - timedelta(days=d)).isoformat()}
                                        for d in days_back))


@pytest.mark.parametrize("seed", range(6))
def test_every_note_of_the_day_asked_comes_first_whatever_its_words(seed: int) -> None:
    rng = random.Random(seed)
    back = [rng.randint(20, 400) for _ in range(rng.randint(30, 80))]
    target = rng.randint(40, 300)
    for j in rng.sample(range(len(back)), 3):
        back[j] = target
    corpus = daily(back, rng)
    day = NOW - timedelta(days=target)
    engine = SearchEngine.lexical()
    q = f"What happened on {day.day} {day.strftime('%B')} {day.year}?"
    got = engine.search(corpus, q, 5, now=NOW)
    want = {f"n{i}.md" for i, d in enumerate(back) if d == target}
    assert {h.note for h in got.hits[:len(want)]} == want
    assert got.relevance is not None and got.relevance.relevant
    assert got.hits[0].receipt["signals"]["time"]["rank"] is not None
    assert got.stages["time"].startswith("ran (")
    # the same words without `now`, or with the time prior off: no time channel
    assert "time" not in engine.score(corpus, q).signals
    off = engine.with_params(SearchParams(weights={"when": 0.0}))
    assert "time" not in off.score(corpus, q, now=NOW).signals
    # a day no note is near: nothing relevant
    far = NOW - timedelta(days=2000)
    none = engine.search(corpus, f"What happened on {far.isoformat()}?", 5, now=NOW)
    assert none.relevance is not None and not none.relevance.relevant


def test_a_topic_keeps_the_ordinary_search() -> None:
    rng = random.Random(7)
    corpus = daily([30, 30, 60, 90], rng)
    engine = SearchEngine.lexical()
    asked = "the melting point of tungsten on 2 March 2023"
    assert time_scores(corpus, asked, NOW) is None
    s = engine.score(corpus, asked, now=NOW)
    assert "time" not in s.signals and s.stages["time"].startswith("skipped")
    r = engine.search(corpus, asked, 3, now=NOW).relevance
    assert r is not None and not r.relevant


def test_scores_are_the_closeness_of_each_note_date() -> None:
    rng = random.Random(3)
    corpus = daily([10, 11, 12, 40], rng)
    t = time_scores(corpus, "What happened ten days ago?", NOW)
    assert t is not None
    assert t.tolist() == pytest.approx([1.0, 2 / 3, 1 / 3, 0.0])
    undated = replace(corpus, frontmatter=tuple({} for _ in range(4)))
    assert np.all(time_scores(undated, "What happened ten days ago?", NOW) == 0)



def test_context_shows_the_turns_of_the_time_asked_and_nothing_for_an_absent_topic(
        tmp_path: Path) -> None:
    conv = tmp_path / "seed.json"
    conv.write_text(json.dumps(SEED), encoding="utf-8")
    root = tmp_path / "v"
    with Vault.init(root) as v:
        ingest_conversations(v, load_conversations(conv.read_text(encoding="utf-8")))
    with Vault.open(root) as v:
        day = date(2024, 5, 20)
        got = build_context(v, "What happened on 8 May 2024?", 60, now=day)
        assert got.relevant and "Carla praised the vase" in got.text
        assert "pottery class and made a vase" not in got.text  # 1 May is another week
        week = build_context(v, "What did we talk about in the first week of May 2024?", 80,
                             now=day)
        assert "pottery class and made a vase" in week.text
        absent = build_context(v, "What is the melting point of tungsten in May 2024?", 60,
                               now=day)
        assert not absent.relevant and absent.lines == ()


@pytest.mark.parametrize("seed", range(5))
def test_the_vectorised_closeness_is_the_closeness_of_each_day(seed: int) -> None:
    from vault.notes.clocks import TimeRef
    from vault.retrieval.when import NO_DAY, closeness, closeness_days

    rng = random.Random(seed)
    asked = tuple(
        TimeRef("x", (s := NOW - timedelta(days=rng.randint(0, 900))),
                s + timedelta(days=rng.choice([0, 6, 30, 364])),
                rng.choice(["day", "week", "month", "year"]))
        for _ in range(rng.randint(1, 3)))
    days = [None if rng.random() < 0.2 else NOW - timedelta(days=rng.randint(0, 1000))
            for _ in range(200)]
    got = closeness_days(asked, np.asarray([NO_DAY if d is None else d.toordinal()
                                            for d in days], dtype=np.int64))
    assert got.tolist() == pytest.approx([closeness(asked, d, ()) for d in days])


def test_the_days_of_one_corpus_never_answer_for_another() -> None:
    rng = random.Random(11)
    a, b = daily([5, 6], rng), daily([40, 41], rng)
    q = "What happened five days ago?"
    first = time_scores(a, q, NOW)
    assert first is not None and first[0] == 1.0
    other = time_scores(b, q, NOW)
    assert other is not None and not other.any()
    again = time_scores(a, q, NOW)
    assert again is not None and again.tolist() == first.tolist()


@pytest.mark.parametrize("seed", range(3))
def test_context_shows_the_plain_notes_of_the_day_asked(tmp_path: Path, seed: int) -> None:
    """Plain notes (no conversation) share no word with "What happened on D?"; the day
    connects them in `context` as it does in the search, however the day is written."""
    rng = random.Random(seed)
    days = [NOW - timedelta(days=rng.randint(3, 200)) for _ in range(3)]
    dated: dict[date, set[str]] = {d: set() for d in days}
    with Vault.init(tmp_path / "v") as v:
        for i in range(9):
            d = rng.choice(days)
            note, text = rng.choice([
                (f"Journal/{d.isoformat()}.md", ""),
                (f"spelled{i}.md", f"---\ndate: {d.day} {d.strftime('%B')}, {d.year}\n---\n"),
                (f"iso{i}.md", f"---\ndate: {d.isoformat()}\n---\n")])
            if note not in dated[d]:
                v.write(note, f"{text}The {rng.choice(TOPICS)} needs a {rng.choice(TOPICS)}.\n")
                dated[d].add(note)
        v.sync()
        for d, notes in dated.items():
            got = build_context(v, f"What happened on {d.day} {d.strftime('%B')} {d.year}?",
                                400, now=NOW)
            assert got.relevant and {ln.item.note for ln in got.lines} == notes, got.text


@pytest.mark.parametrize("seed", range(6))
def test_a_time_named_without_a_year_is_the_latest_that_is_over(seed: int) -> None:
    """"on 8 May", "May 8th", "in March", "on Monday": each is the latest such time before
    the day asked (a question asks about the past), never one still running, and its words
    are no topic words."""
    from vault.notes.clocks import MONTHS, WEEKDAYS
    from vault.notes.times_asked import asked_ranges, untimed_asked

    rng = random.Random(seed)
    for _ in range(40):
        now = date(2020, 1, 1) + timedelta(days=rng.randint(0, 2000))
        month = rng.randint(1, 12)
        name = MONTHS[month - 1].capitalize()
        day = rng.randint(1, 28)
        for text, gran in ((f"What did I do on {day} {name}?", "day"),
                           (f"What did I do on {name} {day}th?", "day"),
                           (f"What did I buy in {name}?", "month")):
            got = asked_ranges(text, now)
            assert untimed_asked(text).split()[-1].rstrip("?") in ("do", "buy", "on", ""), text
            if gran == "month" and date(now.year, month, 1) <= now <= (
                    date(now.year + (month == 12), month % 12 + 1, 1) - timedelta(days=1)):
                assert got == (), (text, now)  # still running: not asked about
                continue
            (r,) = got
            assert r.end < now and r.start.month == month, (text, now, r)
            later = r.end.replace(year=r.end.year + 1, day=min(r.end.day, 28))  # a year on:
            assert later >= now or (gran == "month" and later.month == now.month)  # not over
        wd = rng.randrange(7)
        (r,) = asked_ranges(f"What happened on {WEEKDAYS[wd].capitalize()}?", now)
        assert r.start.weekday() == wd and 1 <= (now - r.start).days <= 7


def test_may_the_verb_and_a_weekly_habit_are_no_time() -> None:
    from vault.notes.times_asked import asked_ranges, untimed_asked

    for text in ("I may 3 times a week go running", "you may 2 weeks wait", "How may I help?",
                 "What time do I wake up on Saturday mornings?", "I jog on Sundays"):
        assert asked_ranges(text, NOW) == () and untimed_asked(text) == text
    assert [r.start for r in asked_ranges("What did I plant on May 3?", NOW)] == [
        date(2022, 5, 3)]
