"""The time a query names (vault/retrieval/when.py): its ranges, the note's date, how close a
note is, and the stage in the pipeline (it lifts only notes found and dated near the time,
changes nothing without a time, a date or `now`, and says what it did in the receipt)."""

from __future__ import annotations

import functools
import random
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from vault import Ledger, NullUsage, Vault, open_read_only_ledger
from vault.notes import times_asked
from vault.notes.clocks import resolve
from vault.retrieval import when
from vault.retrieval.pipeline import SearchEngine, SearchParams
from vault.storage.corpus import Corpus

from ..retrieval_fixtures import make_corpus

NOW = date(2023, 4, 1)  # a Saturday


def test_ranges_of_a_query() -> None:
    got = {r.expr: (r.start, r.end) for r in times_asked.asked_ranges(
        "What did I buy four weeks ago, and in the last two weeks?", NOW)}
    assert got == {"four weeks ago": (date(2023, 3, 1), date(2023, 3, 7)),  # 4 March +- 3
                   "in the last two weeks": (date(2023, 3, 18), NOW)}
    month = times_asked.asked_ranges("the plants I got in the past month", NOW)
    assert [(r.start, r.end) for r in month] == [(date(2023, 3, 2), NOW)]
    assert [(r.start, r.end) for r in times_asked.asked_ranges("last month", NOW)] == [
        (date(2023, 3, 1), date(2023, 3, 31))]
    assert times_asked.asked_ranges("How many days ago did I go?", NOW) == ()
    # "the last week of August" is a part of August: not the past 7 days, not last ISO week
    part = times_asked.asked_ranges("what did I do in the last week of August 2022?", NOW)
    assert [(r.expr, r.start, r.end) for r in part] == [
        ("August 2022", date(2022, 8, 1), date(2022, 8, 31))]
    assert [r.expr for r in resolve("the last day of May; last Friday", NOW)] == ["last Friday"]


@pytest.mark.parametrize(("front", "want"), [
    ({"date": date(2023, 3, 4)}, date(2023, 3, 4)),
    ({"date": datetime(2023, 3, 4, 17, 44)}, date(2023, 3, 4)),
    ({"date": "2023/03/04 (Sat) 17:44"}, date(2023, 3, 4)),
    ({"date": "2023-03-04T17:44:00"}, date(2023, 3, 4)),
    ({"date": "1:56 pm on 8 May, 2023"}, date(2023, 5, 8)),
    ({"updated": "2023-02-30", "created": "2023-01-02"}, date(2023, 1, 2)),
    ({"date": "yesterday"}, None),
    ({"date": "13/5/2024"}, date(2024, 5, 13)),
    ({"date": "08.05.2024"}, date(2024, 5, 8)),
    ({"date": "8/5/2024"}, None),  # 5 August or 8 May: no day rather than a wrong one
    ({"date": "8/5/2024", "created": "2024-05-08"}, date(2024, 5, 8)),
    ({"date": "Christmas 2023"}, date(2023, 12, 25)),
    ({"date": ["2023-01-02"]}, None),
    ({}, None),
])
def test_a_note_date_from_its_frontmatter(front: dict[str, object], want: date | None) -> None:
    assert when.note_day(front) == want


def test_closeness_inside_near_and_far() -> None:
    (asked,) = times_asked.asked_ranges("28 days ago", NOW)
    day = asked.start
    assert when.closeness([asked], day, ()) == 1.0
    assert when.closeness([asked], day + timedelta(days=1), ()) == pytest.approx(2 / 3)
    assert when.closeness([asked], day - timedelta(days=3), ()) == 0.0
    assert when.closeness([asked], None, ()) == 0.0
    # said on 9 May about "last month": the note names April, so April's query finds it
    said = date(2023, 5, 9)
    april = times_asked.asked_ranges("in April 2023", date(2023, 6, 1))
    assert when.closeness(april, said, resolve("Last month I sold my bike.", said)) == 1.0
    assert when.closeness(april, said, ()) == 0.0


def dated(days_back: list[int | None], bodies: list[str] | None = None) -> Corpus:
    n = len(days_back)
    bodies = bodies or [f"I bought a lamp for the study, note {i}." for i in range(n)]
    c = make_corpus([(f"n{i}", bodies[i]) for i in range(n)])
    front = tuple({} if d is None else {"date": (NOW - timedelta(days=d)).isoformat()}
                  for d in days_back)
    return replace(c, frontmatter=front)


def test_the_note_dated_in_the_asked_time_rises_and_says_why() -> None:
    corpus = dated([1, 10, 28, 60, None])
    engine = SearchEngine.lexical()
    plain = engine.search(corpus, "What lamp did I buy four weeks ago?", 5)
    lifted = engine.search(corpus, "What lamp did I buy four weeks ago?", 5, now=NOW)
    assert plain.hits[0].note != "n2.md"
    assert lifted.hits[0].note == "n2.md"
    top = lifted.hits[0].receipt
    assert top["when_factor"] == 2.0 and top["when"] == pytest.approx(lifted.hits[0].score / 2)
    assert "'four weeks ago' = 2023-03-01..2023-03-07" in lifted.stages["when"]
    assert {h.note: h.receipt["when_factor"] for h in lifted.hits[1:]} == {
        "n0.md": 1.0, "n1.md": 1.0, "n3.md": 1.0, "n4.md": 1.0}


@pytest.mark.parametrize("seed", range(6))
def test_without_a_time_a_date_or_now_nothing_changes(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(3, 12)
    corpus = dated([rng.choice([None, rng.randint(0, 90)]) for _ in range(n)])
    engine = SearchEngine.lexical()
    off = engine.with_params(SearchParams(weights={"when": 0.0}))
    asked = "What lamp did I buy two weeks ago?"
    base = off.score(corpus, asked, now=NOW).final
    assert np.array_equal(engine.score(corpus, asked).final, base)  # no `now`
    assert np.array_equal(engine.score(corpus, "What lamp did I buy?", now=NOW).final,
                          off.score(corpus, "What lamp did I buy?", now=NOW).final)
    undated = replace(corpus, frontmatter=tuple({} for _ in range(n)))
    assert np.array_equal(engine.score(undated, asked, now=NOW).final,
                          off.score(undated, asked, now=NOW).final)
    got = engine.score(corpus, asked, now=NOW)
    ratio = np.divide(got.final, base, out=np.ones_like(base), where=base > 0)
    assert np.all((ratio >= 1.0) & (ratio <= 2.0))  # bounded, and only upwards
    assert np.all(got.final[base == 0] == 0)  # a note nothing found stays unfound


def test_the_vault_places_the_time_on_its_clock(tmp_path: Path) -> None:
    for i, d in enumerate((date(2023, 3, 4), date(2023, 3, 25))):
        (tmp_path / f"lamp{i}.md").write_text(
            f"---\ndate: {d.isoformat()}\n---\nI bought a lamp for the study.\n")
    clock = datetime(2023, 4, 1, 12, 0, tzinfo=UTC).timestamp()
    with Vault.init(tmp_path) as v:
        ledger = Ledger.open(tmp_path / ".rmh" / "learned.sqlite", clock=lambda: clock)
    with Vault.open(tmp_path, usage=ledger) as v:
        asked = "Which lamp did I buy four weeks ago?"
        assert v.search(asked, 2, learn=False).hits[0].note == "lamp0.md"
        asked = "Which lamp did I buy a week ago?"
        assert v.search(asked, 2, learn=False).hits[0].note == "lamp1.md"
        pinned = v.search(asked, 2, learn=False, now=date(2023, 3, 11))
        assert pinned.hits[0].note == "lamp0.md"


def test_counts_in_words_any_case_and_hostile_texts_are_bounded() -> None:
    got = times_asked.asked_ranges("In The Past Two Weeks and over the last FEW months", NOW)
    assert [(r.start, r.end) for r in got] == [(NOW - timedelta(days=14), NOW),
                                               (NOW - timedelta(days=90), NOW)]
    flood = " ".join(f"{k} days ago" for k in range(1, 500))
    assert len(times_asked.asked_ranges(flood, NOW)) == times_asked.MAX_ASKED
    body = "I bought a lamp. " + " ".join(f"on {k % 28 + 1} March 2023" for k in range(5000))
    corpus = replace(dated([28, 5]), bodies=(body * 20, "I bought a lamp."))
    s = SearchEngine.lexical().score(corpus, flood + " lamp", now=NOW)
    assert s.when is not None and s.when[0] == 2.0  # its own first dates are still read


def test_with_learning_off_the_clock_still_dates_the_query(tmp_path: Path) -> None:
    for i, d in enumerate((date(2023, 3, 4), date(2023, 3, 25))):
        (tmp_path / f"lamp{i}.md").write_text(
            f"---\ndate: {d.isoformat()}\n---\nI bought a lamp for the study.\n")
    clock = datetime(2023, 4, 1, 12, 0, tzinfo=UTC).timestamp()
    with Vault.init(tmp_path, usage=NullUsage(lambda: clock)) as v:
        hits = v.search("Which lamp did I buy a week ago?", 2).hits
        assert hits[0].note == "lamp1.md" and hits[0].receipt["when_factor"] == 2.0
    with Vault.open(tmp_path, usage=NullUsage()) as v:  # no clock: no date to read against
        result = v.search("Which lamp did I buy a week ago?", 2)
        assert result.hits[0].note == "lamp0.md"
        assert result.stages["when"] == "skipped: no date the query is asked on"


@pytest.mark.parametrize("seed", range(4))
def test_the_memo_of_a_note_ranges_never_changes_an_answer(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(when, "OWN_CACHE", 3)  # evictions on every few calls
    rng = random.Random(seed)
    bits = ["last month", "two weeks ago", "on 3 March 2023", "yesterday", "next Friday",
            "in 2022", "the lamp", "we met", "in a week ago"]
    for _ in range(60):
        body = " ".join(rng.choice(bits) for _ in range(rng.randint(0, 12)))
        day = NOW - timedelta(days=rng.randint(0, 400))
        want = times_asked.distinct(resolve(body[:when.SCAN], day), when.MAX_OWN)
        assert when.own_ranges(body, day) == want
        assert when.own_ranges(body, day) == want  # the memo's answer
    assert len(when._OWN) <= 3


def test_a_range_reaching_before_year_one_starts_at_year_one() -> None:
    early = date(500, 6, 1)
    got = times_asked.asked_ranges("What did I do in the last 999 years?", early)
    assert [(r.start, r.end) for r in got] == [(date.min, early)]


def test_the_clock_that_placed_the_time_is_the_basis_and_any_replay_time_answers(
        tmp_path: Path) -> None:
    (tmp_path / "lamp.md").write_text("---\ndate: 2023-03-04\n---\nI bought a lamp.\n")
    clock = datetime(2023, 4, 1, 12, 0, tzinfo=UTC).timestamp()
    with Vault.init(tmp_path) as v:
        ledger = Ledger.open(tmp_path / ".rmh" / "learned.sqlite", clock=lambda: clock)
    with Vault.open(tmp_path, usage=ledger) as v:
        timed = v.search("Which lamp did I buy four weeks ago?", 1, learn=False)
        assert timed.hits[0].receipt["when_factor"] == 2.0
        assert timed.basis["clock"] == clock  # nothing learned, yet its day ranked: replayable
        assert v.search("Which lamp did I buy?", 1, learn=False).basis["clock"] is None
        pinned = v.search("Which lamp did I buy four weeks ago?", 1, learn=False,
                          now=date(2023, 4, 1))
        assert pinned.basis["clock"] is None  # the caller's date, not the clock's
        for as_of in (1e12, float("inf"), 253402300800.0):  # past 9999-12-31: no day, no crash
            got = v.search("Which lamp did I buy four weeks ago?", 1, as_of=as_of)
            assert got.hits[0].receipt["when_factor"] == 1.0
            assert "skipped" in got.stages["when"]
    assert when.clock_day(clock) == date(2023, 4, 1)
    assert when.clock_day(0.0) is None and when.clock_day(float("nan")) is None


def test_a_note_naming_a_longer_time_is_no_evidence_of_a_shorter_one() -> None:
    (day,) = times_asked.asked_ranges("What lamp did I buy four weeks ago?", NOW)
    december = date(2022, 12, 20)
    assert when.closeness([day], december, resolve("Next year I buy a lamp.", december)) == 0.0
    old = date(2019, 1, 1)
    assert when.closeness([day], old, resolve("I will buy a lamp in 2023.", old)) == 0.0
    months = times_asked.asked_ranges("lamps in the last two months", NOW)
    said = date(2023, 3, 20)
    assert when.closeness(months, date(2022, 1, 1), resolve("Last month, a lamp.", said)) == 1.0


def test_only_the_matched_words_are_taken_out_of_a_query() -> None:
    got = times_asked.asked_ranges("in the last year, Berlin the last year", NOW)
    assert [(r.expr, r.start, r.end) for r in got] == [
        ("in the last year", NOW - timedelta(days=365), NOW),
        ("last year", date(2022, 1, 1), date(2022, 12, 31))]  # Berlin's: still read


def test_a_datetime_for_now_is_its_day() -> None:
    corpus = dated([1, 28, 14])
    engine = SearchEngine.lexical()
    for asked in ("lamp four weeks ago", "lamp in the last two weeks"):
        by_day = engine.search(corpus, asked, 3, now=NOW)
        by_time = engine.search(corpus, asked, 3, now=datetime(2023, 4, 1, 23, 59))
        assert [(h.note, h.score) for h in by_time.hits] == [
            (h.note, h.score) for h in by_day.hits]
        assert by_time.stages["when"] == by_day.stages["when"]


def test_a_time_still_running_or_to_come_is_not_asked_about() -> None:
    """"Finish the billing refactor today" is an instruction: no range, no lift."""
    for text in ("finish the billing refactor today", "deploy it tonight", "this week",
                 "plans for this weekend", "next Friday", "tomorrow", "in two days",
                 "how much this month?", "in this year"):
        assert times_asked.asked_ranges(text, NOW) == (), text
    past = times_asked.asked_ranges("this past weekend, yesterday, in the past week", NOW)
    assert [r.expr for r in past] == ["in the past week", "this past weekend", "yesterday"]


@pytest.mark.parametrize(("path", "want"), [
    ("Daily/2023-03-04.md", date(2023, 3, 4)),
    ("Journal/2023/2023-03-04 Saturday.md", date(2023, 3, 4)),
    ("2023-03-04/notes.md", None),  # a folder's name is not the note's
    ("build-12023-03-045.md", None),
    ("2023-02-30.md", None),
    ("plain.md", None),
    ("Trips/2023-03-04 to 2023-03-10.md", date(2023, 3, 4)),  # the first day named
    ("Daily/2023-13-01 2023-03-05.md", date(2023, 3, 5)),  # the first that is a day
    ("Журнал/2023-03-04 суббота.md", date(2023, 3, 4)),
])
def test_a_note_date_from_its_file_name(path: str, want: date | None) -> None:
    assert when.name_day(path) == want


def test_a_daily_note_is_found_by_the_day_asked(tmp_path: Path) -> None:
    (tmp_path / "Daily").mkdir()
    for d in (date(2023, 3, 4), date(2023, 3, 25)):
        (tmp_path / "Daily" / f"{d.isoformat()}.md").write_text("Met Dana about the lamp.\n")
    with Vault.init(tmp_path) as v:
        hits = v.search("What did Dana and I say about the lamp a week ago?", 2,
                        now=date(2023, 4, 1)).hits
        assert [h.note for h in hits] == ["Daily/2023-03-25.md", "Daily/2023-03-04.md"]
        assert hits[0].receipt["when_factor"] == 2.0


def test_every_recorder_gives_the_vault_its_day(tmp_path: Path) -> None:
    """`Vault.today` reads the recorder's clock (`now()`), not its learned state."""
    clock = datetime(2023, 4, 1, 23, 59, tzinfo=UTC).timestamp()
    with Vault.init(tmp_path / "v") as v:
        assert v.today() is None  # NullUsage(): no clock
    ledger = Ledger.open(tmp_path / "v" / ".rmh" / "learned.sqlite", clock=lambda: clock)
    with Vault.open(tmp_path / "v", usage=ledger) as v:
        assert ledger.now() == clock and v.today() == date(2023, 4, 1)
    read_only = open_read_only_ledger(tmp_path / "v" / ".rmh" / "learned.sqlite",
                                      clock=lambda: clock + 60)
    assert read_only is not None and read_only.now() == clock + 60
    read_only.close()
    for odd in (float("inf"), float("nan"), -5.0, 0.0, 1e300):
        with Vault.open(tmp_path / "v", usage=NullUsage(functools.partial(float, odd))) as v:
            assert v.today() is None
