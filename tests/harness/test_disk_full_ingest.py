"""A full disk under the newer writers says so in one clear line (STORE14, session 39):

- `rmh ingest` wrote ingest's record of generated notes (`.rmh/generated/H.json`) first; on a
  full disk it said "rmh: cannot write H.json in /proc/self/fd/4/generated" (`os_error`: no
  "disk full", and the held `.rmh`'s descriptor path): now `disk_full` naming
  `.rmh/generated/H.json`, as any other write says it. Since session 41 (STORE16) the first
  file is the conversation's journal (`.rmh/intents/N.json`, the record's lines in it), named
  the same way.
- the index's postponed sync warned at every call of one command ("index not brought up to
  date: disk full ..." three times for one `rmh fact supersede`): now once until a sync goes
  through.

A real tmpfs filled to the last byte (root; skipped elsewhere, saying so)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness.test_cli_notes import rmh
from tests.harness.test_disk_full import fill, tmpfs
from tests.harness.test_refused_midway import FACT

pytestmark = pytest.mark.slow
WARNING = "index not brought up to date"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    yield from tmpfs(tmp_path, "4m", "; nothing else covers a full disk under ingest's record")


def chat(folder: Path, cid: str, text: str) -> Path:
    path = folder / f"{cid}.json"
    path.write_text(json.dumps({"id": cid, "messages": [
        {"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}]}))
    return path


def test_an_ingest_on_a_full_disk_says_disk_full(small_disk: Path, tmp_path: Path) -> None:
    root = small_disk / "v"
    v = ("--vault", str(root))
    assert rmh(*v, "init", "--no-dense").returncode == 0
    (root / "kiln.md").write_text("# Kiln\n")
    assert rmh(*v, "ingest", str(chat(tmp_path, "c1", "Alice Moreau lives in Lyon."))
               ).returncode == 0
    second = chat(tmp_path, "c2", "Alice Moreau moved to Berlin.")
    fill(small_disk)
    r = rmh(*v, "ingest", str(second), "--json")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert json.loads(r.stdout)["error"]["kind"] == "disk_full", r.stdout
    last = r.stderr.splitlines()[-1]
    assert last.startswith("rmh: disk full") and (".rmh/generated/" in last
                                                  or ".rmh/intents/" in last), r.stderr
    assert "/proc/" not in r.stderr and str(small_disk) not in r.stderr, r.stderr
    assert r.stderr.count(WARNING) <= 1, r.stderr
    assert not (root / "conversations" / "c2").exists()  # nothing of it written
    for name in ("filler", "filler-tail"):
        (small_disk / name).unlink()
    again = rmh(*v, "ingest", str(second))
    assert again.returncode == 0, again.stderr
    assert (root / "conversations" / "c2").is_dir()


def test_a_full_disk_warns_once_per_command(small_disk: Path) -> None:
    root = small_disk / "v"
    v = ("--vault", str(root))
    assert rmh(*v, "init", "--no-dense").returncode == 0
    fact = root / "conversations" / "c1" / "facts" / "kiln temperature is 1200 c.md"
    fact.parent.mkdir(parents=True)
    fact.write_text(FACT)
    assert rmh(*v, "doctor").returncode == 0
    (root / "kiln.md").write_text("# Kiln\n")  # an edit the index owes: each call syncs
    fill(small_disk)
    r = rmh(*v, "fact", "supersede", "conversations/c1/facts/kiln temperature is 1200 c",
            "--value", "1250 c", "--by", "t", "--at", "2024-05-01T00:00:00+00:00")
    assert r.returncode == 1 and r.stderr.splitlines()[-1].startswith("rmh: disk full"), r.stderr
    assert r.stderr.count(WARNING) == 1, r.stderr
