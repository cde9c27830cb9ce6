"""Extraction from the spaCy parse (the `nlp` extra): the issue's CI exchange through the real
`rmh ingest`, byte-identical re-ingest, the rules as fallback, and no spaCy on the search path.

Skipped when the extra is not installed, except in CI (RMH_REQUIRE_NLP=1 makes it a failure)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.forks import CLI_PRELOAD, ForkServer
from vault import build_events, find_episodes, load_conversations, turn_statements

from .nlp_fixtures import INSTALLED, needs_nlp

REPO = Path(__file__).resolve().parents[3]

CI = {"format": "rmh-conversation/1", "id": "ci", "sessions": [
    {"id": "S1", "date": "2026-11-02T09:00", "turns": [
        {"id": "t0", "speaker": "Dana",
         "text": "I'm trying to get the nightly build to pass on the CI server."},
        {"id": "t1", "speaker": "Agent", "role": "assistant",
         "text": "Try clearing the build cache first."},
        {"id": "t2", "speaker": "Dana",
         "text": "I cleared the build cache first but the build still failed."},
        {"id": "t3", "speaker": "Agent", "role": "assistant",
         "text": "The runner upgraded the compiler. Pin the compiler to version 12."},
        {"id": "t4", "speaker": "Dana",
         "text": "Pinning the compiler to version 12 worked, the build passes now."},
        {"id": "t5", "speaker": "Dana",
         "text": "Lesson learned: always pin the compiler version in CI."}]}]}
NOT_ENTITIES = {"try", "lesson", "pinning", "pin", "build still failed", "build cache first",
                "build pass", "version"}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    env["PYTHONPATH"] = str(REPO)
    return env


def _cold(*args: str) -> subprocess.CompletedProcess[str]:
    """`python -m harness ARGS` in a fresh interpreter (its own random hash seed)."""
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True,
                          text=True, env=_env(), cwd=REPO, timeout=600, check=False)


@pytest.fixture(scope="module")
def forks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForkServer]:
    """`rmh` processes forked from one Python that imported the CLI and (with the extra)
    loaded the parse model once (tests/forks.py: each run is still its own process)."""
    preload = CLI_PRELOAD + ("vault.nlp_status(load=True)\n" if INSTALLED else "")
    with ForkServer(preload, workdir=tmp_path_factory.mktemp("forks"), env=_env(),
                    cwd=REPO) as server:
        yield server


@pytest.fixture
def rmh(forks: ForkServer) -> Callable[..., subprocess.CompletedProcess[str]]:
    """`python -m harness ARGS` (a forked child of `forks`)."""
    return lambda *args: forks.run(list(args), module="harness", env=_env(), cwd=REPO,
                                   timeout=600)


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.md"))}


@needs_nlp
def test_the_ci_exchange_gives_its_episode_sensible_entities_and_same_bytes_twice(
        tmp_path: Path, rmh: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    conv = tmp_path / "ci.json"
    conv.write_text(json.dumps(CI), encoding="utf-8")
    docs = []
    # "b" in a fresh interpreter: another hash seed than the fork server's children have
    for name, run in (("a", rmh), ("b", _cold)):
        vault = tmp_path / name
        assert run("--vault", str(vault), "init", "--no-dense").returncode == 0
        out = run("--vault", str(vault), "ingest", str(conv), "--json")
        assert out.returncode == 0, out.stderr
        docs.append(json.loads(out.stdout))
    assert docs[0]["episodes"] == 1
    entities = {p.stem for p in (tmp_path / "a" / "conversations" / "ci" / "entities").iterdir()}
    assert {"compiler", "build cache", "ci server", "nightly build"} <= entities
    assert not entities & NOT_ENTITIES, entities & NOT_ENTITIES
    episode = (tmp_path / "a" / "conversations" / "ci" / "episodes" / "ci S1 episode 1.md")
    assert "success" in episode.read_text(encoding="utf-8")
    # Re-ingest into a second vault: the same bytes (the parse is deterministic).
    assert _files(tmp_path / "a" / "conversations") == _files(tmp_path / "b" / "conversations")
    # And the same vault again changes nothing.
    again = json.loads(rmh("--vault", str(tmp_path / "a"), "ingest", str(conv),
                            "--json").stdout)
    assert again["written"] == 0


@needs_nlp
def test_facts_come_as_subject_verb_object_from_the_parse_and_not_when_hedged() -> None:
    said = turn_statements("Hey Joanna, check this out! I won my fourth video game tournament "
                           "on Friday!", "Nate", ("Nate", "Joanna"))
    assert ("did:win", "nate's fourth video game tournament") in {
        (s.key, s.value) for s in said}
    for hedged in ("I'll bring my binoculars.", "If I won the lottery I would buy a boat.",
                   "I didn't win the tournament.", "Did you win the tournament?",
                   "I took that pic in Tokyo."):
        assert not [s for s in turn_statements(hedged, "Nate", ("Nate", "Joanna"))
                    if s.key.startswith("did:")], hedged
    assert not [s for s in turn_statements("I won my fourth tournament.", "Nate",
                                           ("Nate", "Joanna"), use_nlp=False)
                if s.key.startswith("did:")]


@needs_nlp
def test_the_rules_still_run_when_asked_and_agree_on_the_episode() -> None:
    (conv,) = load_conversations(json.dumps(CI), "auto")
    parsed, rules = build_events(conv), build_events(conv, use_nlp=False)
    assert [ep.outcome.label for ep in find_episodes(parsed)] == ["success"]
    assert [ep.outcome.label for ep in find_episodes(rules)] == ["success"]


def test_doctor_says_which_extractor_runs(
        tmp_path: Path, rmh: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    vault = tmp_path / "v"
    assert rmh("--vault", str(vault), "init", "--no-dense").returncode == 0
    out = rmh("--vault", str(vault), "doctor", "--json")
    assert out.returncode == 0, out.stderr
    extraction = json.loads(out.stdout)["extraction"]
    assert extraction["extractor"] == ("spacy" if INSTALLED else "rules")
    if not INSTALLED:
        assert "nlp" in extraction["reason"]


def test_search_and_context_never_import_spacy(
        tmp_path: Path, rmh: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    vault = tmp_path / "v"
    (tmp_path / "v").mkdir()
    (vault / "a.md").write_text("The nightly build passes on the CI server.\n", encoding="utf-8")
    assert rmh("--vault", str(vault), "init", "--no-dense").returncode == 0
    for cmd in (["search", "nightly build", "--no-dense"],
                ["context", "nightly build", "--no-dense"]):
        out = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "harness", "--vault", str(vault), *cmd],
            capture_output=True, text=True, cwd=REPO, timeout=600, check=False,
            env={**{k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")},
                 "PYTHONPATH": str(REPO)})
        assert out.returncode == 0, out.stderr[-2000:]
        imported = {line.rsplit("|", 1)[-1].strip().split(".")[0]
                    for line in out.stderr.splitlines() if line.startswith("import time:")}
        assert "spacy" not in imported and "thinc" not in imported, cmd


@needs_nlp
def test_a_turn_longer_than_spacy_takes_is_read_by_the_rules(
        tmp_path: Path, rmh: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    """spaCy refuses a text over 1,000,000 characters (a ValueError): one pasted log in a
    turn failed the whole ingest with a traceback (a session-end hook: the session never
    ingested). Such a turn is read by the rules, and the conversation ingests whole."""
    long = "The build log follows. " + "step ok " * 150_000  # 1.2 M characters, 1.2 MB
    doc = {"format": "rmh-conversation/1", "id": "big", "sessions": [
        {"id": "S1", "date": "2026-11-02T09:00", "turns": [
            {"id": "t0", "speaker": "Dana", "text": "Here is what the nightly build printed."},
            {"id": "t1", "speaker": "Dana", "text": long}]}]}
    conv = tmp_path / "big.json"
    conv.write_text(json.dumps(doc), encoding="utf-8")
    vault = tmp_path / "v"
    assert rmh("--vault", str(vault), "init", "--no-dense").returncode == 0
    out = rmh("--vault", str(vault), "ingest", str(conv), "--json")
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr[-2000:]
    assert json.loads(out.stdout)["turns"] == 2
    turns = sorted((vault / "conversations" / "big" / "S1").iterdir())
    assert len(turns) == 2 and any("step ok" in p.read_text(encoding="utf-8") for p in turns)
