"""`rmh ingest` of a WhatsApp export through the real CLI entry point (session 29 CHATTXT): the
date order it cannot decide is a one-line error naming `--date-order`, which settles it; bytes
that are not UTF-8 are read as U+FFFD; the same file again writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main

CHAT = ("03/04/23, 10:00 - Ann: I moved to Porto\r\n05/06/23, 11:00 - Bo: caf\xe9 ok\r\n"
        "still Bo\r\n").encode("latin-1")  # the é a Latin-1 byte: no UTF-8


def test_an_undecided_date_order_names_the_option_that_settles_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault, chat = tmp_path / "v", tmp_path / "WhatsApp Chat with Bo.txt"
    chat.write_bytes(b"\xef\xbb\xbf" + CHAT)
    assert main(["--vault", str(vault), "init"]) == 0
    capsys.readouterr()
    assert main(["--vault", str(vault), "ingest", str(chat)]) == 1
    err = capsys.readouterr().err
    assert "--date-order dmy" in err and "Traceback" not in err
    assert main(["--vault", str(vault), "ingest", str(chat), "--date-order", "dmy",
                 "--json"]) == 0
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert doc["turns"] == 2 and "not valid UTF-8" in out.err
    notes = sorted(p for p in doc["written_notes"] if p.count("/") == 3
                   and "/entities/" not in p and "/facts/" not in p)
    folder = "conversations/WhatsApp Chat with Bo"
    assert notes == [f"{folder}/2023-04-03/WhatsApp Chat with Bo 10-00.md",
                     f"{folder}/2023-06-05/WhatsApp Chat with Bo 11-00.md"]
    body = (vault / notes[1]).read_text(encoding="utf-8")
    assert "Bo: caf\ufffd ok\nstill Bo" in body
    assert main(["--vault", str(vault), "ingest", str(chat), "--date-order", "dmy",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["written"] == 0


def test_an_unzipped_slack_export_folder_ingests_a_conversation_a_channel(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault, export = tmp_path / "v", tmp_path / "Acme Slack export"
    (export / "general").mkdir(parents=True)
    (export / "users.json").write_text(json.dumps([{"id": "U1", "real_name": "Ann Lee"}]))
    day = [{"type": "message", "user": "U1", "text": "I sold my bike", "ts": "1714557600.0002"}]
    (export / "general" / "2024-05-01.json").write_text(json.dumps(day))
    assert main(["--vault", str(vault), "init"]) == 0
    capsys.readouterr()
    assert main(["--vault", str(vault), "ingest", str(export), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["conversations"] == ["general"] and doc["turns"] == 1
    assert "Ann Lee: I sold my bike" in (
        vault / "conversations/general/2024-05-01/general 1714557600.0002.md").read_text()
    assert main(["--vault", str(vault), "ingest", str(export), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["written"] == 0
