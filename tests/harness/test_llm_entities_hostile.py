"""`[extract] entities = "llm"` against a hostile model answer and a hostile answer cache.

Before (PLUG6, session 32) each case below ended `rmh ingest` and `vault.ingest` with a
traceback: an answer nested past the JSON parser (RecursionError, after the model answered),
and a VAULT/.rmh/entities-llm.sqlite that is not SQLite, empty, another program's, holds rows
that are not JSON lists of strings, is locked by another process, or is a folder. The cache is
derived: what it cannot give is asked again; a damaged file is made anew; a locked one leaves
the answers used but not kept (the report says so); a folder is refused before any call.
Each case runs the real step against a real HTTP server on loopback, counting its requests.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from harness.config import load
from harness.errors import Refused
from harness.extraction import fallback_lines, prepare
from harness.llm_entities import CACHE_FILE, cache_key, prompt_version
from tests.harness.llm_stub_endpoint import ChatEndpoint, Reply
from vault import load_transcript

BREAK_AFTER = 3  # harness/llm_entities.BREAK_AFTER (not imported: main has none to import)
HANG_GUARD_S = 120.0  # only ends a hung step (main's FIFO case); a passing run takes < 1 s
TEXTS = ("Bob sold the old bike on day 1.", "Carla repaired the kayak on day 2.",
         "Dmitri painted the tent on day 3.")


def answer(n: int, body: dict[str, Any]) -> Reply:
    return Reply(text=json.dumps(body["messages"][-1]["content"].split()[:2]))


def setup(tmp: Path, url: str, llm: str = "max_retries = 0\ntimeout_s = 30.0",
          texts: Sequence[str] = TEXTS) -> tuple[Any, Path, list[Any]]:
    root = tmp / "v"
    (root / ".rmh").mkdir(parents=True)
    (root / "rmh.toml").write_text(
        f'[llm]\nbase_url = "{url}"\nmodel = "stub"\n{llm}\n'
        '[extract]\nentities = "llm"\n', encoding="utf-8")
    doc = {"format": "rmh-conversation/1", "id": "c1", "sessions": [
        {"id": "s1", "date": "2024-05-01T10:00",
         "turns": [{"speaker": "Alice", "text": t} for t in texts]}]}
    loaded = load_transcript(json.dumps(doc), "auto", "c1", None)
    return load(vault=root), root, list(loaded.conversations)


def entities(convs: list[Any]) -> list[Any]:
    return [t.entities for c in convs for t in c.turns()]


@pytest.mark.parametrize("depth", [2_000, 50_000, 400_000])
@pytest.mark.parametrize("shape", ["[{}]", '{{"a": {}}}', "[1, {}]"])
def test_an_answer_nested_past_the_parser_is_a_malformed_answer(
        tmp_path: Path, depth: int, shape: str) -> None:
    inner = "[" * depth + "]" * depth
    deep = shape.format(inner)
    with ChatEndpoint(lambda n, b: Reply(text=deep)) as ep:
        cfg, root, convs = setup(tmp_path, ep.url)
        out, _, report = prepare(cfg, root, convs)
        assert ep.count == len(TEXTS)
    assert entities(out) == [None] * len(TEXTS)  # each turn kept automatic extraction
    assert [f["reason"] for f in report["fallback"]] == [
        "malformed answer: JSON nested past the parser's depth"] * len(TEXTS)


def guarded(job: Callable[[], Any], kind: str) -> Any:
    """`job()`'s result, or the exception it raised, run on a daemon thread so that a hang
    fails the test instead of stalling the run (HANG_GUARD_S is a guard, no timing)."""
    box: list[Any] = []

    def step() -> None:
        try:
            box.append(job())
        except BaseException as exc:  # the result, checked by the caller
            box.append(exc)

    worker = threading.Thread(target=step, daemon=True)
    worker.start()
    worker.join(HANG_GUARD_S)
    assert box, f"the ingest's LLM step hung on a {kind} named {CACHE_FILE}"
    return box[0]


def not_sqlite(path: Path) -> None:
    path.write_bytes(b"this is no sqlite file " * 100)


def empty(path: Path) -> None:
    path.write_bytes(b"")


def other_table(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t(x)")
    conn.commit()
    conn.close()


def rows(value: str) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE answers(key TEXT PRIMARY KEY, model TEXT NOT NULL, "
                     "prompt TEXT NOT NULL, entities TEXT NOT NULL)")
        conn.executemany("INSERT INTO answers VALUES (?, ?, ?, ?)",
                         [(cache_key("stub", prompt_version(), t), "stub", "x", value)
                          for t in TEXTS])
        conn.commit()
        conn.close()
    return write


CACHES = [not_sqlite, empty, other_table, rows("5"), rows('"Bob"'), rows("{}"),
          rows("not json"), rows("[1, 2]"), rows('[["Bob"]]'), rows("[" * 100_000)]


@pytest.mark.parametrize("damage", CACHES)
def test_a_cache_that_cannot_answer_is_asked_around_and_made_anew(
        tmp_path: Path, damage: Callable[[Path], None]) -> None:
    with ChatEndpoint(answer) as ep:
        cfg, root, convs = setup(tmp_path, ep.url)
        damage(root / ".rmh" / CACHE_FILE)
        out, _, report = prepare(cfg, root, convs)
        assert ep.count == len(TEXTS) and report["answered"] == len(TEXTS)
        assert entities(out) == [tuple(t.split()[:2]) for t in TEXTS]
        again, _, second = prepare(cfg, root, convs)  # now every answer is cached
        assert ep.count == len(TEXTS)
    assert second["cached"] == len(TEXTS) and entities(again) == entities(out)
    assert "not_cached" not in report


def test_a_locked_cache_is_read_around_and_the_answers_used_not_kept(tmp_path: Path) -> None:
    with ChatEndpoint(answer) as ep:
        cfg, root, convs = setup(tmp_path, ep.url)
        rows("[]")(root / ".rmh" / CACHE_FILE)
        lock = sqlite3.connect(root / ".rmh" / CACHE_FILE, isolation_level=None)
        lock.execute("BEGIN EXCLUSIVE")  # another process's write, held throughout
        try:
            out, _, report = prepare(cfg, root, convs)
        finally:
            lock.close()
        assert ep.count == len(TEXTS)
    assert entities(out) == [tuple(t.split()[:2]) for t in TEXTS]
    assert "database is locked" in report["not_cached"]
    assert any("not cached" in line for line in fallback_lines(report))


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_cache_name_taken_by_no_file_is_refused_before_any_call(
        tmp_path: Path, kind: str) -> None:
    """Before: a folder was "sqlite3.OperationalError: disk I/O error"; a FIFO hung the ingest
    for ever (SQLite's open waits for a writer). The step runs on a daemon thread so that a
    hang fails the test instead of stalling the run: the guard is no timing."""
    with ChatEndpoint(answer) as ep:
        cfg, root, convs = setup(tmp_path, ep.url)
        path = root / ".rmh" / CACHE_FILE
        path.mkdir() if kind == "folder" else os.mkfifo(path)
        got = guarded(lambda: prepare(cfg, root, convs), kind)
        assert isinstance(got, Refused) and "is not a file" in str(got), got
        assert ep.count == 0


MANY = tuple(f"Bob sold bike number {k} to Carla." for k in range(24))
FAILING = {  # each reply fails the call: (reply, attempts a turn makes with max_retries = 1)
    "never answers": (Reply(until_closed=True), 2),
    "HTTP 500": (Reply(status=500), 2),
    "HTTP 401": (Reply(status=401), 1),  # not retried
    "not a completion": (Reply(raw=b"<html>busy</html>"), 1),
}


@pytest.mark.parametrize("in_flight", [1, 3])
@pytest.mark.parametrize("kind", sorted(FAILING))
def test_an_endpoint_failing_every_call_is_no_longer_asked(
        tmp_path: Path, kind: str, in_flight: int) -> None:
    """Before: every turn was sent (its timeout and retries each), 24 turns = 24-48 requests
    here; with the defaults (60 s, 2 retries) a 1,000-turn ingest waited hours to fall back."""
    reply, attempts = FAILING[kind]
    llm = (f"max_retries = 1\nretry_backoff_s = 0.01\ntimeout_s = 0.5\n"
           f"in_flight = {in_flight}")
    with ChatEndpoint(lambda n, b: reply) as ep:
        cfg, root, convs = setup(tmp_path, ep.url, llm, MANY)
        out, _, report = prepare(cfg, root, convs)
        sent = ep.count
    assert entities(out) == [None] * len(MANY)
    turns_sent = BREAK_AFTER + in_flight - 1  # those already under way when the 3rd failed
    assert BREAK_AFTER * attempts <= sent <= turns_sent * attempts
    reasons = [f["reason"] for f in report["fallback"]]
    assert len(reasons) == len(MANY) and sum(
        r.startswith("not asked: the calls of 3 turns in a row failed") for r in reasons
    ) >= len(MANY) - turns_sent


@pytest.mark.parametrize("period", [2, 3])
def test_failures_not_in_a_row_and_bad_answers_never_stop_the_asking(
        tmp_path: Path, period: int) -> None:
    """`period` - 1 failed calls, then an answer, over and over; and a malformed answer is
    no endpoint failure: every turn is asked (one at a time, so the order is the script's)."""
    def script(n: int, body: dict[str, Any]) -> Reply:
        if n % period:
            return Reply(status=500)
        return Reply(text="not json" if n % (2 * period) else answer(n, body).text)

    with ChatEndpoint(script) as ep:
        cfg, root, convs = setup(tmp_path, ep.url, "max_retries = 0\nin_flight = 1", MANY)
        _, _, report = prepare(cfg, root, convs)
        assert ep.count == len(MANY)
    assert not any(f["reason"].startswith("not asked") for f in report["fallback"])


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_cache_name_taken_while_the_model_answers_leaves_the_answers_unkept(
        tmp_path: Path, kind: str) -> None:
    """The name taken after the step began (here: by the endpoint, while it answers the first
    turn): before, `put` raised sqlite3.OperationalError ("unable to open database file",
    "disk I/O error"), the ingest ended and the answers were lost."""
    made: list[bool] = []

    def take_the_name(n: int, body: dict[str, Any]) -> Reply:
        if not made:
            made.append(True)
            path = root / ".rmh" / CACHE_FILE
            path.mkdir() if kind == "folder" else os.mkfifo(path)
        return answer(n, body)

    with ChatEndpoint(take_the_name) as ep:
        cfg, root, convs = setup(tmp_path, ep.url, "max_retries = 0\nin_flight = 1")
        got = guarded(lambda: prepare(cfg, root, convs), kind)
        assert isinstance(got, tuple), got
        out, _, report = got
        assert ep.count == len(TEXTS)
    assert entities(out) == [tuple(t.split()[:2]) for t in TEXTS]
    assert report["not_cached"] == f"{CACHE_FILE}: not a file"
