"""`rmh forget` as a user runs it: after erasure, a byte search of the vault folder, every file
under `.rmh/` and the shared embedding cache finds none of the erased text (issue 32)."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.forks import run_cli
from vault.storage.folders import SETTLED_NS

ROOT = Path(__file__).resolve().parents[2]
SECRET = "Zephyr-Orchid-7731"
LINE = "The vault combination for the Orchid archive is kept in the blue binder."


def rmh(*args: str, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return run_cli(args, env=env, cwd=ROOT, stdin=stdin)


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env.update({"PYTHONPATH": str(ROOT), "RMH_EMBED_CACHE": str(tmp / "shared.sqlite"),
                "HOME": str(tmp)})
    return env


def _vault(tmp: Path) -> Path:
    root = tmp / "vault"
    (root / "people").mkdir(parents=True)
    (root / "people" / "Zed.md").write_text(
        f"# Zed\nZed's badge is {SECRET}.\n{LINE}\nZed works on [[Nimbus]].\n")
    (root / "diary.md").write_text(f"Met the owner of {SECRET} at lunch.\nA quiet day.\n")
    (root / "Nimbus.md").write_text("Nimbus is the storage project. Owner: [[Zed]].\n")
    (root / "keep.md").write_text("Groceries: apples, bread, and tea for the week.\n")
    return root


def _occurrences(files: list[Path], needle: str) -> dict[str, int]:
    low = needle.casefold().encode()
    found = {}
    for f in files:
        data = f.read_bytes().decode("utf-8", "surrogateescape").casefold().encode(
            "utf-8", "surrogateescape")
        if low in data or low in str(f).casefold().encode():
            found[str(f)] = data.count(low)
    return found


def _all_files(root: Path, tmp: Path) -> list[Path]:
    files = [p for p in root.rglob("*") if p.is_file()]
    return files + [p for p in tmp.glob("shared.sqlite*") if p.is_file()]


def _digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _serve_session(root: Path, env: dict[str, str], query: str) -> None:
    """One learning session through `rmh serve`: the query (naming the secret), a read."""
    frames = [{"jsonrpc": "2.0", "id": 1, "method": "session.start", "params": {"session": "s1"}},
              {"jsonrpc": "2.0", "id": 2, "method": "vault.search",
               "params": {"query": query, "k": 3}},
              {"jsonrpc": "2.0", "id": 3, "method": "vault.read", "params": {"note": "Zed"}},
              {"jsonrpc": "2.0", "id": 4, "method": "session.end", "params": {}}]
    out = subprocess.run([sys.executable, "-m", "harness", "--vault", str(root), "serve"],
                         input="".join(json.dumps(f) + "\n" for f in frames), text=True,
                         capture_output=True, env=env, cwd=ROOT, timeout=300)
    replies = [json.loads(line) for line in out.stdout.splitlines()]
    assert all("result" in r for r in replies), replies


def test_forget_subject_leaves_no_trace_anywhere(tmp_path: Path) -> None:
    env = _env(tmp_path)
    root = _vault(tmp_path)
    assert rmh("--vault", str(root), "init", env=env).returncode == 0
    _serve_session(root, env, f"who has badge {SECRET}")
    assert rmh("--vault", str(root), "delete", "diary", env=env).returncode == 0
    before = _occurrences(_all_files(root, tmp_path), SECRET)
    assert any("trash" in f for f in before) and any("learned" in f for f in before), before

    dry = rmh("--vault", str(root), "forget", "--subject", SECRET.upper(), "--dry-run",
              "--json", env=env)
    assert dry.returncode == 0, dry.stderr
    plan = json.loads(dry.stdout)
    assert plan["notes"] == ["people/Zed.md"] and plan["trash"] == ["diary.md"]
    assert _occurrences(_all_files(root, tmp_path), SECRET) == before  # nothing changed

    r = rmh("--vault", str(root), "forget", "--subject", SECRET.upper(), "--json", env=env)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["proof"]["occurrences"] == 0 and doc["proof"]["files"] >= 3
    assert doc["embeddings_removed"] > 0 and doc["learning"]["events_dropped"] > 0
    files = _all_files(root, tmp_path)
    assert _occurrences(files, SECRET) == {}
    assert _occurrences(files, LINE) == {}
    assert not (root / "people" / "Zed.md").exists()
    assert (root / "keep.md").exists() and (root / "Nimbus.md").exists()
    # Every command still works, and the learned state is a replay of the rewritten log.
    assert rmh("--vault", str(root), "replay", "--check", env=env).returncode == 0
    hits = json.loads(rmh("--vault", str(root), "search", "badge owner", "--json",
                          env=env).stdout)["hits"]
    assert all(h["note"] != "people/Zed.md" for h in hits)
    doctor = rmh("--vault", str(root), "doctor", "--json", env=env)
    assert doctor.returncode == 0, doctor.stderr


def test_forget_one_note_keeps_the_rest(tmp_path: Path) -> None:
    env = _env(tmp_path)
    root = _vault(tmp_path)
    assert rmh("--vault", str(root), "init", "--no-dense", env=env).returncode == 0
    keep_before = (root / "diary.md").read_bytes()
    r = rmh("--vault", str(root), "forget", "Zed", env=env)
    assert r.returncode == 0, r.stderr
    assert "0 occurrences in" in r.stdout
    assert not (root / "people" / "Zed.md").exists()
    assert (root / "diary.md").read_bytes() == keep_before  # names the secret, not erased
    assert _occurrences(_all_files(root, tmp_path), LINE) == {}


def _settle(root: Path) -> None:
    """Wait until every note is SETTLED_NS old, so the index stores their true ctimes now.

    A note whose ctime is younger when a sync reads it is stored as racily clean
    (vault/storage/folders.py) and read again by the next open, whichever command opens:
    one that lands after the window re-records it, which rewrites the derived
    `.rmh/stat-columns.bin` and `.rmh/catch-up.json` (the index's own catch-up, not the
    command's doing). Whether the commands below landed before or after the window
    depended on the machine's load (seen failing under pytest-xdist on a loaded machine)."""
    newest = max(p.stat().st_ctime_ns for p in root.rglob("*"))
    time.sleep(max(0, newest + SETTLED_NS - time.time_ns()) / 1e9 + 0.1)


def _tables(db: Path) -> str:
    """A SQLite file's content (its SQL dump): what its bytes and WAL do not show alike."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        return "\n".join(con.iterdump())


def test_forget_dry_run_and_bad_arguments_change_nothing(tmp_path: Path) -> None:
    """Neither a refused `forget` nor a dry run changes a note, the index, the learned state
    or any file the index derives (the notes are settled first: `_settle`)."""
    env = _env(tmp_path)
    root = _vault(tmp_path)
    _settle(root)
    assert rmh("--vault", str(root), "init", "--no-dense", env=env).returncode == 0
    before = _digest(root)
    dbs = [root / ".rmh" / "index.sqlite", root / ".rmh" / "learned.sqlite"]
    tables = [_tables(db) for db in dbs]
    assert rmh("--vault", str(root), "forget", env=env).returncode == 1
    assert rmh("--vault", str(root), "forget", "no-such-note", env=env).returncode == 1
    assert rmh("--vault", str(root), "forget", "--subject", SECRET, "--dry-run",
               env=env).returncode == 0
    after = _digest(root)
    assert {k: v for k, v in after.items() if "sqlite" not in k} == \
        {k: v for k, v in before.items() if "sqlite" not in k}
    assert [_tables(db) for db in dbs] == tables


def test_an_incomplete_erasure_is_one_json_error_carrying_its_report(tmp_path: Path) -> None:
    """A file the index skips (a name that is not UTF-8) still names the subject: the proof
    finds it; under --json that is one document, the error, with the erasure's report."""
    env = _env(tmp_path)
    root = _vault(tmp_path)
    assert rmh("--vault", str(root), "init", "--no-dense", env=env).returncode == 0
    (root / os.fsdecode(b"skipped\xff.md")).write_text(f"badge {SECRET}\n", "utf-8")
    r = rmh("--vault", str(root), "forget", "--subject", SECRET, "--json", env=env)
    assert r.returncode == 1
    (doc,) = [json.loads(line) for line in r.stdout.splitlines()]
    assert doc["error"]["kind"] == "erasure_incomplete"
    assert doc["error"]["report"]["proof"]["occurrences"] == 1
    assert doc["error"]["report"]["erased"]["notes"]  # the notes it could erase are gone


def test_the_files_the_proof_names_are_one_line_each_however_they_are_named(
        tmp_path: Path) -> None:
    """A file the proof finds is named as its name reads (storage/paths.py `printable`): a
    newline in a name broke the error's one line (a name can write a line of its own, "rmh:
    proof: 0 occurrences"), a U+202E turned the rest of the line around on a terminal."""
    env = _env(tmp_path)
    root = _vault(tmp_path)
    assert rmh("--vault", str(root), "init", "--no-dense", env=env).returncode == 0
    for name in ("a\nrmh: erased, proof: 0 occurrences.md", "b\u202ed.md", "c\x1b[2J.md"):
        (root / name).write_text(f"badge {SECRET}\n", "utf-8")
    r = rmh("--vault", str(root), "forget", "--subject", SECRET, env=env)
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and r.stdout.count("\n") == 1, (r.stdout, r.stderr)
    for shown in ("a\\x0armh: erased", "b\\u202ed.md", "c\\x1b[2J.md"):
        assert shown in r.stderr and shown in r.stdout, (shown, r.stderr)
    assert "\x1b" not in r.stderr + r.stdout and "\u202e" not in r.stderr + r.stdout


def test_a_short_subject_erases_the_notes_naming_the_word_and_proves_it(tmp_path: Path) -> None:
    """`--subject Ann` names the word Ann, as `rmh forget --help` says: not "annual", "Joanna"
    or a hex digest (a substring rule erased those notes for good, and its proof then found
    "ann" by chance in the index's hex hashes and the embedding cache's vectors: exit 1 on
    every vault, whatever was erased)."""
    env = _env(tmp_path)
    root = tmp_path / "vault"
    (root / "people").mkdir(parents=True)
    notes = {"people/Ann.md": "Ann fires the kiln on Fridays.\n",
             "call.md": "Call [[Ann]] about the glaze; ann's number is in the binder.\n",
             "budget.md": "The annual budget review with Joanna and Hanna.\n",
             "hashes.md": "Digests: 3ann0f, ann1, fann, an n.\n"}
    notes.update({f"filler/n{i}.md": f"Filler note {i} about tea, bread and annotation.\n"
                  for i in range(60)})
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    assert rmh("--vault", str(root), "init", env=env).returncode == 0
    for query in ("when does Ann fire the kiln", "annual budget review"):
        assert rmh("--vault", str(root), "search", query, env=env).returncode == 0
    r = rmh("--vault", str(root), "forget", "--subject", "ANN", "--json", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout)
    assert sorted(doc["erased"]["notes"]) == ["call.md", "people/Ann.md"]
    assert doc["proof"]["occurrences"] == 0, doc["proof"]
    kept = {rel for rel in notes if (root / rel).exists()}
    assert kept == set(notes) - {"call.md", "people/Ann.md"}
    assert all((root / rel).read_text() == notes[rel] for rel in kept)
    learned = (root / ".rmh" / "learned.sqlite").read_bytes()
    assert b"annual budget review" in learned and b"fire the kiln" not in learned


def test_forget_erases_the_llm_entity_cache_too(tmp_path: Path) -> None:
    """`[extract] entities = "llm"` caches each turn's entities in .rmh/entities-llm.sqlite;
    `forget --subject` left "Quillon" there and its proof failed (exit 1) on every vault that
    had used it. Answers naming the subject go; the others stay."""
    from harness.llm_entities import CACHE_FILE, Cache

    env = _env(tmp_path)
    root = tmp_path / "vault"
    root.mkdir()
    (root / "Q.md").write_text("Quillon kayaks in Oslo every summer.\n")
    (root / "keep.md").write_text("Tea and bread for the week.\n")
    assert rmh("--vault", str(root), "init", "--no-dense", env=env).returncode == 0
    Cache(root).put([("k1", "m", "p", ("Quillon", "Oslo")), ("k2", "m", "p", ("tea",)),
                     ("k3", "m", "p", ("Quillonaire",))])
    r = rmh("--vault", str(root), "forget", "--subject", "quillon", "--json", env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout)["proof"]["occurrences"] == 0
    assert sorted(Cache(root).get(["k1", "k2", "k3"])) == ["k2", "k3"]
    assert b"Quillon\"" not in (root / ".rmh" / CACHE_FILE).read_bytes()


def test_a_forgotten_subject_is_not_sent_to_the_llm_again(tmp_path: Path,
                                                          monkeypatch: Any) -> None:
    """After `forget --subject Quillon`, the next ingest (a hook's, every turn) with
    `[extract] entities = "llm"` sent the turns naming Quillon to the model and cached its
    answers ("Quillon") again in .rmh/entities-llm.sqlite: the ingest then left the turns out,
    but the cache and the model had them."""
    import harness.llm_entities as le
    from harness.config import load
    from vault import load_conversations
    from vault.storage import forgotten

    root = tmp_path / "vault"
    (root / ".rmh").mkdir(parents=True)
    (root / "rmh.toml").write_text('[llm]\nmodel = "m"\n[extract]\nentities = "llm"\n')
    forgotten.remember(root / ".rmh", "Quillon", [])
    asked: list[str] = []

    def ask(cfg: Any, texts: Any) -> Any:
        asked.extend(texts)
        return {t: tuple(w for w in ("Quillon", "Oslo") if w in t) for t in texts}, {}, 0, False

    monkeypatch.setattr(le, "_ask", ask)
    (conv,) = load_conversations(json.dumps({"format": "rmh-conversation/1", "id": "c",
        "sessions": [{"id": "s1", "date": "2024-05-01T10:00", "turns": [
            {"speaker": "Ann", "text": "Quillon kayaks in Oslo."},
            {"speaker": "Quillon", "text": "I do."},
            {"speaker": "Ann", "text": "Oslo is cold."}]}]}))
    out, report = le.llm_entities(load(vault=root, env={}), root, [conv])
    assert asked == ["Oslo is cold."] and report.turns == 1
    assert b"Quillon" not in (root / ".rmh" / le.CACHE_FILE).read_bytes()
    assert [t.entities for t in out[0].turns()] == [None, None, ("Oslo",)]
