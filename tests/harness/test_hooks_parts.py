"""The hooks' parts: the protocol answer per client, the settings merge, the hooks' index
kept in step with the vault, the engine path, `rmh ingest` of a transcript, [hooks] config."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.config import ConfigError, load
from harness.hooks import CLIENTS, HookInput, HookInputError, answer
from harness.hooks_index import by_path, refresh, search
from harness.hooks_install import install, uninstall, without_ours
from harness.hooks_recall import passage, recall
from tests.vault.conversation.transcript_fixtures import CI_TASK, claude_lines
from vault import Vault, tokenize


def test_answers_per_client() -> None:
    cc, gem = CLIENTS["claude-code"], CLIENTS["gemini"]
    doc = json.loads(answer(cc, "prompt", "mem"))
    assert doc == {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                          "additionalContext": "mem"}}
    assert json.loads(answer(gem, "prompt", "m"))["hookSpecificOutput"]["hookEventName"] == \
        "BeforeAgent"
    assert answer(cc, "prompt", "") == "" and answer(gem, "session-end", "x") == "{}"
    assert answer(CLIENTS["codex"], "session-start", "b").startswith('{"hookSpecificOutput"')
    with pytest.raises(HookInputError):
        HookInput.parse("[]")
    assert HookInput.parse('{"prompt": 3, "session_id": "s"}').prompt == ""


def test_settings_merge_keeps_everything_else(tmp_path: Path) -> None:
    cc = CLIENTS["claude-code"]
    theirs = {"hooks": {"Stop": [{"hooks": []}], "SessionStart": [
        {"matcher": "startup", "hooks": [{"type": "command", "command": "rmh hook x"}]}]},
        "env": {"A": "1"}}
    assert without_ours(json.loads(json.dumps(theirs)), cc) == (theirs, 0)
    vault = tmp_path / "v"
    install("claude-code", "user", vault, tmp_path, tmp_path / "home")
    path = tmp_path / "home" / ".claude" / "settings.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    # a handler the user added to rmh's group survives uninstall; rmh's goes
    doc["hooks"]["SessionEnd"][0]["hooks"].append({"type": "command", "command": "mine"})
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert uninstall("claude-code", "user", tmp_path, tmp_path / "home")["removed"] == 4
    assert json.loads(path.read_text(encoding="utf-8")) == {"hooks": {"SessionEnd": [
        {"hooks": [{"type": "command", "command": "mine"}]}]}}


def test_hooks_index_follows_edits_and_removals(tmp_path: Path) -> None:
    root = tmp_path / "v"
    with Vault.init(root) as v:
        v.write("deploy.md", "The deploy pipeline runs on the blue cluster.\n")
        v.write("garden.md", "Tomatoes need sun.\n")
        v.sync()
        assert refresh(v) == {"notes": 2, "changed": 2, "removed": 0}
        assert refresh(v)["changed"] == 0
        assert [r.path for r in search(root, ["cluster"], 5)] == ["deploy.md"]
        v.write("deploy.md", "The deploy pipeline moved to the green cluster.\n",
                overwrite=True)
        v.delete("garden.md")
        v.sync()
        assert refresh(v) == {"notes": 1, "changed": 1, "removed": 1}
    assert "green" in search(root, ["cluster"], 5)[0].body
    assert search(root, ["tomatoes"], 5) == []
    text, notes = recall(root, "which cluster does the deploy pipeline use", 50, k=5,
                         min_share=0.3)
    assert notes == ["deploy.md"] and "deploy.md" in text and "green cluster" in text
    assert recall(root, "tomatoes", 50, k=5, min_share=0.3) == ("", [])


def test_stop_words_connect_nothing(tmp_path: Path) -> None:
    """A note shares only function words with a prompt: it is never shown, whatever the mix
    (generated prompts, both recall paths: the hooks' index and the engine's context)."""
    import random

    from harness.hooks_memory import prompt_memory
    from vault.notes.text import STOPWORDS

    root = tmp_path / "v"
    musing = "I am not sure what to do with it, can you tell me what you would do about it?"
    stop = sorted(set(tokenize(musing)) & STOPWORDS)  # the note's own function words
    with Vault.init(root) as v:
        v.write("musing.md", musing + "\n")
        v.write("deploy.md", "The deploy pipeline runs on the blue cluster.\n")
        v.sync()
        refresh(v)
        rng = random.Random(7)
        for _ in range(40):
            words = rng.sample(stop, rng.randint(2, 12)) + rng.sample(
                ["parser", "kiln", "invoice", "quarterly", "zebra"], rng.randint(0, 2))
            prompt = " ".join(rng.sample(words, len(words))) + "?"
            assert recall(root, prompt, 80, k=5, min_share=0.3) == ("", []), prompt
            assert prompt_memory(v, prompt, 80, k=5, min_share=0.3, session=None) == "", prompt
        text, notes = recall(root, "what do you think about the blue cluster?", 80, k=5,
                             min_share=0.3)
        assert notes == ["deploy.md"] and "musing.md" not in text



def test_the_floor_reads_words_in_any_form_as_the_search_does(tmp_path: Path) -> None:
    """Both searches stem ("tests", "failing" find "test", "fails"), so the floor does too:
    a note holding every content word of the prompt in another form is shown, on both
    recall paths; one holding none of them is not."""
    from harness.hooks_memory import prompt_memory

    root = tmp_path / "v"
    with Vault.init(root) as v:
        v.write("flaky.md", "The test fails when the cache is cold.\n")
        v.write("deploy.md", "The deploy pipeline runs on the blue cluster.\n")
        v.sync()
        refresh(v)
        prompt = "why are the tests failing?"
        assert recall(root, prompt, 80, k=5, min_share=0.5)[1] == ["flaky.md"]
        # (the engine's search declines that prompt: its coverage reads exact words)
        prompt = "why does the test fail?"
        assert "flaky.md" in prompt_memory(v, prompt, 80, k=5, min_share=0.6, session=None)
        assert recall(root, "why are the invoices failing?", 80, k=5, min_share=0.6) == ("", [])



def test_a_word_memory_never_uses_weighs_most(tmp_path: Path) -> None:
    """The floor weighs a prompt's terms by idf, as the search judges relevance: a prompt
    about a topic memory lacks ("Jupiter"), sharing one common word with many notes, injects
    nothing, although a third of its content words match (which passed the count floor); the
    same common word beside the rare word a note holds is shown. Generated over topics and
    fillers, both recall paths."""
    import random

    from harness.hooks_memory import prompt_memory

    root = tmp_path / "v"
    rng = random.Random(5)
    common = ["moon", "project", "garden", "meeting"]
    rare = ["kiln", "sourdough", "telescope", "kayak", "violin", "invoice"]
    with Vault.init(root) as v:
        for i in range(24):  # every common word in many notes, each rare word in one
            words = rng.sample(common, 2) + ([rare[i]] if i < len(rare) else [])
            v.write(f"n{i:02d}.md", f"Notes: the {' and the '.join(words)} came up today.\n")
        v.sync()
        refresh(v)
        for absent in ("jupiter", "tungsten", "saxophone", "glacier"):
            for word in common:
                prompt = f"How many {word}s does {absent} have?"
                assert recall(root, prompt, 80, k=5, min_share=0.3) == ("", []), prompt
                assert prompt_memory(v, prompt, 80, k=5, min_share=0.3, session=None) == ""
        for i, word in enumerate(rare):
            prompt = f"What about the {word} and the {common[i % len(common)]} plans?"
            assert f"n{i:02d}.md" in recall(root, prompt, 80, k=5, min_share=0.3)[1], prompt


def test_an_identifier_in_a_prompt_is_searched_by_its_words(tmp_path: Path) -> None:
    """"parse_config" is the words "parse" and "config" to the index (unicode61) and to the
    floor (`vault.tokenize`), so the FTS query holds them too (a word with "_" was dropped).
    (The vault also knows "crash": a word memory never uses would weigh most in the floor.)"""
    root = tmp_path / "v"
    with Vault.init(root) as v:
        v.write("parser.md", "parse_config fails on an empty file.\n")
        v.write("release.md", "The release crashed twice on Monday.\n")
        v.sync()
        refresh(v)
        assert recall(root, "why does parse_config crash?", 80, k=5, min_share=0.5)[1] == [
            "parser.md"]


def test_a_fact_is_recalled_by_what_was_said_and_old_indexes_are_rebuilt(
        tmp_path: Path) -> None:
    """A fact note's provenance lines ("confirmed 1 time(s) ... last confirmed") are not its
    memory: a prompt about "the last time" does not recall it by them; an index written in
    another format is rebuilt whole on the next refresh."""
    import sqlite3

    from harness.hooks_index import FORMAT, index_path, recall_text

    fact = ("# user clear build cache\n\nFact (L2), fact: confidence 0.700, confirmed 1 "
            "time(s) in 1 session(s), first observed 2025-03-04, last confirmed 2025-03-04."
            "\n\n> i cleared the build cache first.\n\n## Evidence\n\n- 2025-03-04 u4\n")
    assert recall_text("L2", {}, fact) == "i cleared the build cache first."
    assert recall_text("L2", {}, "no quote\n") == "no quote"
    root = tmp_path / "v"
    with Vault.init(root) as v:
        v.write("facts/f.md", "---\ntier: L2\nfirst_observed: 2025-03-01\n"
                "last_confirmed: 2025-03-04\n---\n" + fact)
        v.sync()
        refresh(v)
        assert recall(root, "when was the last time we confirmed it", 80, k=5,
                      min_share=0.3) == ("", [])
        text, shown = recall(root, "the build cache", 80, k=5, min_share=0.3)
        assert shown == ["facts/f.md"]
        assert "facts/f.md [2025-03-04]" in text  # dated when confirmed, not when written
        conn = sqlite3.connect(index_path(root))
        with conn:
            conn.execute("UPDATE notes SET body = 'stale'")
            conn.execute("PRAGMA user_version = 1")
        conn.close()
        assert refresh(v)["changed"] == 1
    conn = sqlite3.connect(index_path(root))
    assert conn.execute("PRAGMA user_version").fetchone()[0] == FORMAT
    assert conn.execute("SELECT body FROM notes").fetchall() == [
        ("i cleared the build cache first.",)]
    conn.close()



def test_rules_and_corrections_are_recalled_by_what_was_said_a_working_note_by_all_of_it(
        ) -> None:
    """An L3 rule has a fact's provenance lines ("Rule (L3) ... confirmed 3 time(s) ...");
    a correction has no quote, only "a correction: bob said at ... that this replaces", so it
    is recalled by its statement; a working note promoted to L2 is the agent's own note, whose
    quotes are a part of it, not what it is."""
    from harness.hooks_index import recall_text

    rule = ("# user prefers tea\n\nRule (L3), preference: confidence 0.950, confirmed 3 "
            "time(s) in 3 session(s), first observed 2025-01-04, last confirmed 2025-03-04."
            "\n\n> i always drink tea.\n\n## Evidence\n\n- 2025-03-04 u4\n")
    assert recall_text("L3", {"tier": "L3", "key": "drink", "value": "tea"}, rule) == (
        "i always drink tea.")
    fixed = ("# alice city paris\n\nFact (L2), a correction: bob said at 2026-01-02T10:00 "
             "that this replaces [[facts/alice city lyon|lyon]].\n")
    fm = {"tier": "L2", "key": "city", "value": "paris", "statement": "alice city paris"}
    assert recall_text("L2", fm, fixed) == "alice city paris"
    note = "# Deploy plan\n\nWe deploy blue-green.\n\n> measure twice\n\nThen cut over.\n"
    working = {"tier": "L2", "kind": "working-note", "promoted_from": "working"}
    assert recall_text("L2", working, note) == note.strip()



def test_a_prompt_reads_the_old_index_whole_while_it_is_rebuilt(tmp_path: Path) -> None:
    """A rebuild (a new format) is one transaction larger than SQLite's default page cache:
    a prompt hook reading meanwhile sees the old index whole, neither a half-built one nor
    "database is locked" after waiting its timeout (the writer spilled its cache and held
    the file exclusively)."""
    import sqlite3
    from collections.abc import Iterator
    from types import SimpleNamespace
    from typing import cast

    from harness.hooks_index import index_path

    root = tmp_path / "v"
    (root / ".rmh").mkdir(parents=True)

    def row(i: int, body: str) -> SimpleNamespace:
        return SimpleNamespace(id=i, path=f"n{i}.md", content_hash=f"h{i}", frontmatter={},
                               body=body, title=f"n{i}", mtime_ns=0)

    class Stub:
        def __init__(self, rows: list[SimpleNamespace]) -> None:
            self.root, self.rows, self.seen = root, rows, list[object]()

        def note_rows(self) -> Iterator[SimpleNamespace]:
            yield from self.rows
            try:  # the rebuild's rows are written, not committed
                self.seen.append([r.path for r in search(root, ["apple"], 5)])
            except sqlite3.OperationalError as exc:
                self.seen.append(exc)

    refresh(cast("Vault", Stub([row(0, "an old apple")])))
    conn = sqlite3.connect(index_path(root))
    with conn:
        conn.execute("PRAGMA user_version = 1")
    conn.close()
    pears = " ".join(f"pear{j}" for j in range(400))
    stub = Stub([row(i, pears) for i in range(1, 3001)])
    assert refresh(cast("Vault", stub))["changed"] == 3000
    assert stub.seen == [["n0.md"]]
    assert search(root, ["apple"], 5) == [] and len(search(root, ["pear7"], 5000)) == 3000


def test_hooks_index_follows_a_rename_outside_rmh(tmp_path: Path) -> None:
    root = tmp_path / "v"
    with Vault.init(root) as v:
        v.write("kiln.md", "The pottery kiln fires every Friday.\n")
        v.sync()
        refresh(v)
        (root / "kiln.md").rename(root / "studio kiln.md")  # the same text, a new name
        assert v.sync().renamed
        assert refresh(v) == {"notes": 1, "changed": 1, "removed": 0}
        assert refresh(v)["changed"] == 0
    assert [r.path for r in search(root, ["kiln"], 5)] == ["studio kiln.md"]
    assert by_path(root, "kiln.md") is None
    text, _ = recall(root, "when does the kiln fire", 50, k=5, min_share=0.3)
    assert "studio kiln.md" in text and "- kiln.md" not in text


def test_passage_starts_at_the_best_sentence() -> None:
    body = "Intro words here. The billing service owns invoices. Unrelated end."
    assert passage(body, {"invoic", "billing"}).startswith("… The billing service")


def test_ingest_of_a_claude_code_transcript_reports_bad_lines(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault, transcript = tmp_path / "v", tmp_path / "s.jsonl"
    transcript.write_text("\n".join([*claude_lines(CI_TASK), "{torn"]), encoding="utf-8")
    assert main(["--vault", str(vault), "init", "--no-dense"]) == 0
    capsys.readouterr()
    assert main(["--vault", str(vault), "ingest", str(transcript), "--json"]) == 0
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert doc["turns"] == 6 and doc["episodes"] == 1 and len(doc["skipped_lines"]) == 1
    assert "skipped line" in out.err


def test_hooks_config_section(tmp_path: Path) -> None:
    cfg = tmp_path / "rmh.toml"
    cfg.write_text("[hooks]\nprompt_words = 60\nengine = true\n", encoding="utf-8")
    h = load(vault=tmp_path, env={}, config_file=cfg).hooks
    assert (h.prompt_words, h.engine, h.dense, h.min_term_share) == (60, True, False, 0.3)
    cfg.write_text("[hooks]\nprompt_word = 60\n", encoding="utf-8")
    with pytest.raises(ConfigError):
        load(vault=tmp_path, env={}, config_file=cfg)


_REBUILD = """
import sys, time
from types import SimpleNamespace
from pathlib import Path
from harness.hooks_index import refresh
root = Path(sys.argv[1])
class Stub:
    root = root
    def note_rows(self):
        for i in range(1, 2001):
            if i % 100 == 0:
                print(i, flush=True)
                time.sleep(0.01)
            yield SimpleNamespace(id=i, path=f"n{i}.md", content_hash=f"h{i}", frontmatter={},
                                  body=f"pear{i} orchard", title=f"n{i}", mtime_ns=0)
refresh(Stub())
print("done", flush=True)
"""


@pytest.mark.parametrize("after_rows", [100, 700, 1500, 2000])
def test_a_rebuild_killed_midway_leaves_the_old_index_whole(tmp_path: Path,
                                                             after_rows: int) -> None:
    """kill -9 of a process rebuilding the hooks' index (a format change) at any point: the
    index is the old one, whole and readable, or the new one; the next refresh completes it."""
    import os
    import signal
    import sqlite3
    import subprocess
    import sys
    from types import SimpleNamespace
    from typing import cast

    from harness.hooks_index import FORMAT, index_path

    from .test_server_e2e import REPO

    root = tmp_path / "v"
    (root / ".rmh").mkdir(parents=True)
    old = SimpleNamespace(root=root, note_rows=lambda: iter([SimpleNamespace(
        id=0, path="n0.md", content_hash="h0", frontmatter={}, body="an old apple",
        title="n0", mtime_ns=0)]))
    refresh(cast("Vault", old))
    conn = sqlite3.connect(index_path(root))
    with conn:
        conn.execute("PRAGMA user_version = 1")
    conn.close()
    child = subprocess.Popen([sys.executable, "-c", _REBUILD, str(root)], cwd=REPO,
                             env={**os.environ, "PYTHONPATH": str(REPO)},
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    for line in child.stdout:
        if line.split()[0] in (str(after_rows), "done"):
            break
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    conn = sqlite3.connect(index_path(root))
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    count = conn.execute("SELECT count(*) FROM notes").fetchone()[0]
    conn.close()
    if version == 1:
        assert count == 1 and [r.path for r in search(root, ["apple"], 5)] == ["n0.md"]
    else:  # the kill came after the commit
        assert (version, count) == (FORMAT, 2000)
    stub = SimpleNamespace(root=root, note_rows=lambda: iter([SimpleNamespace(
        id=i, path=f"n{i}.md", content_hash=f"h{i}", frontmatter={}, body=f"pear{i} orchard",
        title=f"n{i}", mtime_ns=0) for i in range(1, 2001)]))
    refresh(cast("Vault", stub))
    assert len(search(root, ["orchard"], 5000)) == 2000 and search(root, ["apple"], 5) == []


def test_a_vault_without_a_clock_still_reads_a_day_asked_alone(tmp_path: Path) -> None:
    """The engine path reads the day asked against the vault's clock, else the wall clock's
    UTC day, as the hooks' own path does: a vault opened with no usage recorder still
    answers "What happened on 8 May 2024?" by that day's notes, on both paths."""
    from harness.hooks_memory import prompt_memory
    from vault import NullUsage

    root = tmp_path / "v"
    with Vault.init(root) as v:
        v.write("kiln.md", "---\ndate: 2024-05-08\n---\nFired the kiln for the vases.\n")
        v.write("garden.md", "---\ndate: 2024-03-02\n---\nTomatoes need sun.\n")
        v.sync()
        refresh(v)
    prompt = "What happened on 8 May 2024?"
    assert recall(root, prompt, 80, k=5, min_share=0.3)[1] == ["kiln.md"]
    with Vault.open(root, usage=NullUsage()) as v:
        assert v.today() is None
        text = prompt_memory(v, prompt, 80, k=5, min_share=0.3, session=None)
    assert "kiln.md" in text and "garden.md" not in text


def test_the_best_covered_notes_come_first(tmp_path: Path) -> None:
    """Within the budget, the notes covering most of the prompt's idf-weighted terms are
    shown first (the index's BM25 order breaks ties): a generated vault, generated prompts,
    the shown notes' coverage never rises down the list."""
    import random

    from harness.hooks_index import frequencies
    from vault import term_coverage, topic_terms

    rng = random.Random(3)
    words = ["kiln", "glaze", "vase", "clay", "wheel", "oven", "paint", "brush", "canvas",
             "easel", "frame", "gallery"]
    root = tmp_path / "v"
    with Vault.init(root) as v:
        for i in range(30):
            v.write(f"n{i:02d}.md", " ".join(rng.choices(words, k=rng.randint(2, 12))) + ".\n")
        v.sync()
        refresh(v)
    for _ in range(25):
        prompt = "What about the " + " and ".join(rng.sample(words, rng.randint(2, 4))) + "?"
        _, notes = recall(root, prompt, 400, k=10, min_share=0.3)
        terms = topic_terms(prompt)
        n, dfs = frequencies(root, terms)
        got = [term_coverage(terms, dfs, n, [(root / p).read_text(encoding="utf-8")])
               for p in notes]
        assert got == sorted(got, reverse=True), (prompt, notes, got)


def test_engine_memory_fills_the_budget_with_covered_lines_in_date_order(tmp_path: Path) -> None:
    """The engine path builds its context at spare budget, keeps the hits over the floor,
    best first while they fit, and shows them in date order: generated dated notes and
    prompts; never over the budget, every line's note over the floor, dates ascending."""
    import random
    import re

    from harness.hooks_memory import prompt_memory
    from vault import term_coverage, topic_terms

    rng = random.Random(9)
    words = ["kiln", "glaze", "vase", "clay", "wheel", "oven", "paint", "brush", "canvas"]
    root = tmp_path / "v"
    with Vault.init(root) as v:
        for i in range(40):
            body = " ".join(rng.choices(words, k=rng.randint(3, 14)))
            v.write(f"n{i:02d}.md", f"---\ndate: 2024-{1 + i % 12:02d}-{1 + i % 27:02d}\n---\n"
                                    f"{body}.\n")
        v.sync()
        shown = 0
        for _ in range(15):
            prompt = "Tell me about the " + " and ".join(rng.sample(words, 3)) + "."
            text = prompt_memory(v, prompt, 60, k=20, min_share=0.3, session=None)
            lines = [ln for ln in text.splitlines() if ln.startswith("- ")]
            shown += len(lines)
            assert sum(len(ln.split()) for ln in lines) <= 60, text
            dates = [re.search(r"\[(\d{4}-\d{2}-\d{2})\]", ln).group(1)  # type: ignore[union-attr]
                     for ln in lines]
            assert dates == sorted(dates), text
            terms = topic_terms(prompt)
            dfs, n = v.document_frequency(terms), len(v.corpus())
            for ln in lines:
                note = re.search(r"(n\d\d\.md)", ln).group(1)  # type: ignore[union-attr]
                body = (root / note).read_text(encoding="utf-8").split("---\n")[-1]
                assert term_coverage(terms, dfs, n, [body]) >= 0.3, (prompt, ln)
        assert shown >= 15  # not vacuous: the prompts do inject


USER_FILES = ['{"hooks": {}}', '{\n    "hooks": {}\n}\n', '{"hooks": {"SessionStart": []}, "m": 1}',
              '{"m": "x",   "hooks": {"Stop": [{"hooks": []}], "UserPromptSubmit": []}}\n',
              "", "{}", '  {"env": {"A": "1"}}  \n', '{"hooks": {"BeforeAgent": [], "X": []}}']


@pytest.mark.parametrize("client", sorted(CLIENTS))
@pytest.mark.parametrize("text", USER_FILES)
@pytest.mark.parametrize("installs", [1, 2])
def test_uninstall_gives_back_the_users_file_byte_for_byte(
        tmp_path: Path, client: str, text: str, installs: int) -> None:
    """A file the user had is theirs again after install + uninstall, to the byte: session 28
    dropped an empty `"hooks": {}` or `EVENT: []` they had (and deleted a file left `{}`)."""
    home = tmp_path / "home"
    path = home / CLIENTS[client].user_file
    path.parent.mkdir(parents=True)
    path.with_name(path.name + ".bak").write_text('{"older": 1}', encoding="utf-8")
    path.write_text(text, encoding="utf-8")
    for _ in range(installs):
        install(client, "user", tmp_path / "v", tmp_path, home)
    assert path.read_text(encoding="utf-8") != text
    assert uninstall(client, "user", tmp_path, home)["removed"] == 4
    assert path.read_text(encoding="utf-8") == text


def test_uninstall_after_the_user_edited_keeps_the_edit(tmp_path: Path) -> None:
    """No backup is the file less rmh's entries: they are removed from it as it is."""
    home = tmp_path / "home"
    path = home / CLIENTS["claude-code"].user_file
    path.parent.mkdir(parents=True)
    path.write_text('{"hooks": {}}', encoding="utf-8")
    install("claude-code", "user", tmp_path / "v", tmp_path, home)
    doc = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**doc, "model": "y"}), encoding="utf-8")
    assert uninstall("claude-code", "user", tmp_path, home)["removed"] == 4
    assert json.loads(path.read_text(encoding="utf-8")) == {"model": "y"}
