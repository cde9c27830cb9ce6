"""The commands a person runs, on generated vaults of 0, 1 and 2 notes (a learning session
that read one note and passed over the others, a conversation of as many turns), through the
real CLI: no line they print, human or `search --explain --json`'s stage reports, says a count
of one with a plural noun ("ran (1 notes, weight 0.5)", "passed over: 1 notes", "rebuilt
learned state from 3 events: 1 notes, 0 pairs" before HOUSE40)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.cli import main

from ..vault.test_plural import NOUNS

ONE_PLURAL = re.compile(rf"(?<![\d.,/+-])1 ({'|'.join(map(re.escape, NOUNS))})\b")


def _vault(root: Path, n: int) -> Path:
    root.mkdir()
    for i in range(n):
        link = f" See [[N{i - 1}]]." if i else ""
        (root / f"N{i}.md").write_text(f"# N{i}\nKiwi orchard note {i} #fruit.{link}\n",
                                       "utf-8")
    return root


def _conversation(path: Path, n: int) -> Path:
    turns = [{"speaker": "Alice", "text": f"I started pottery class number {i} on Monday."}
             for i in range(max(n, 1))]
    path.write_text(json.dumps({"format": "rmh-conversation/1", "id": f"c{n}", "sessions": [
        {"id": "s1", "date": "2024-05-01T10:00", "turns": turns}]}), "utf-8")
    return path


@pytest.mark.parametrize("n", [0, 1, 2])
def test_no_command_says_one_with_a_plural(tmp_path: Path, n: int,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    root = _vault(tmp_path / "v", n)
    conv = _conversation(tmp_path / "c.json", n)
    said: list[tuple[str, str]] = []

    def rmh(*argv: str) -> str:
        main(["--vault", str(root), *argv])
        got = capsys.readouterr()
        said.extend((" ".join(argv), line) for line in (got.out + got.err).splitlines())
        return got.out

    rmh("init", "--no-dense")
    rmh("index", "--no-dense")
    for query in ("kiwi orchard", "kiwi"):
        hits = json.loads(rmh("search", query, "--json", "--no-dense", "--session", "s1"))
        if hits["hits"]:  # the last hit read: the others passed over
            rmh("read", hits["hits"][-1]["note"], "--session", "s1")
    rmh("end-session", "s1")
    for query in ("kiwi orchard", "kiwi", "orchard note", "what happened on Monday"):
        rmh("search", query, "--explain", "--no-dense")
        doc = json.loads(rmh("search", query, "--explain", "--json", "--no-dense"))
        said.extend((f"search {query} stages", s) for s in doc["stages"].values())
    for argv in (["status", "--no-dense"], ["list"], ["list", "folders"], ["list", "tags"],
                 ["doctor"], ["learning"], ["replay"], ["ingest", str(conv)],
                 ["context", "pottery class", "--no-dense"], ["links", "N1"],
                 ["backlinks", "N0"], ["forget", "N0", "--dry-run"], ["forget", "N0"]):
        rmh(*argv)
    assert [(cmd, line) for cmd, line in said if ONE_PLURAL.search(line)] == []
    assert any(cmd == "replay" for cmd, _ in said)  # the commands ran and printed
