"""`rmh ingest` and `rmh context` end to end through the real CLI entry point."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

import pytest

from harness.cli import main

CONV = {"format": "rmh-conversation/1", "id": "ab", "sessions": [
    {"id": "s1", "date": "2024-05-01T10:00", "turns": [
        {"speaker": "Alice", "text": "I started a pottery class."},
        {"speaker": "Bob", "text": "My teacher Carla runs the pottery class."}]},
    {"id": "s2", "date": "2024-05-09T09:00", "turns": [
        {"speaker": "Bob", "text": "Last month I sold my bike."}]}]}


def test_ingest_then_context(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault, conv = tmp_path / "v", tmp_path / "c.json"
    conv.write_text(json.dumps(CONV), encoding="utf-8")
    assert main(["--vault", str(vault), "init"]) == 0
    capsys.readouterr()
    assert main(["--vault", str(vault), "ingest", str(conv), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["turns"] == 3 and first["written"] > 0
    assert main(["--vault", str(vault), "ingest", str(conv), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["written"] == 0
    assert main(["--vault", str(vault), "context", "sold bike", "--budget", "15",
                 "--no-dense", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["lines"][-1]["turn"] == "s2:1" and doc["words"] <= 15
    assert "(Last month = 2024-04-01..2024-04-30)" in doc["text"]


def test_bad_file_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{nope", encoding="utf-8")
    assert main(["--vault", str(tmp_path / "v"), "init"]) == 0
    assert main(["--vault", str(tmp_path / "v"), "ingest", str(bad)]) == 1
    assert "not a conversation" in capsys.readouterr().err


def test_bytes_that_are_not_utf8_are_read_as_replacement_characters(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A transcript with a byte that is not UTF-8 (an emoji cut in half, a log in Latin-1)
    was a raw UnicodeDecodeError traceback and nothing ingested; now the rest of the file is
    ingested, the bad bytes read as U+FFFD with a warning, and ingesting it again writes
    nothing. A file that cannot be read at all stays a one-line error."""
    vault, conv = tmp_path / "v", tmp_path / "c.json"
    data = json.dumps(CONV).encode("utf-8")
    data = data.replace(b"pottery class.\"}", b"pottery \xf0\x9f class.\"}", 1)
    conv.write_bytes(data.replace(b"sold my bike", b"sold my v\xe9lo"))
    assert main(["--vault", str(vault), "init"]) == 0
    capsys.readouterr()
    assert main(["--vault", str(vault), "ingest", str(conv), "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["turns"] == 3 and "not valid UTF-8" in out.err
    texts = "".join(p.read_text(encoding="utf-8") for p in vault.rglob("*.md"))
    assert "pottery \ufffd class." in texts and "sold my v\ufffdlo" in texts
    assert main(["--vault", str(vault), "ingest", str(conv), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["written"] == 0
    assert main(["--vault", str(vault), "ingest", str(tmp_path / "missing.json")]) == 1
    assert "cannot read" in capsys.readouterr().err


TABS = {"format": "rmh-conversation/1", "id": "sarah", "sessions": [
    {"id": "s1", "date": "2024-01-02T09:00", "turns": [
        {"speaker": "Sarah", "text": "I live in Paris. I prefer tabs."}]},
    {"id": "s2", "date": "2024-02-20T09:00", "turns": [
        {"speaker": "Sarah", "text": "I moved to Rome."}]}]}


def test_lifecycle_reports_then_archives_through_the_ledger(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault, conv = tmp_path / "v", tmp_path / "c.json"
    conv.write_text(json.dumps(TABS), encoding="utf-8")
    assert main(["--vault", str(vault), "init"]) == 0
    assert main(["--vault", str(vault), "ingest", str(conv)]) == 0
    capsys.readouterr()
    paris = "conversations/sarah/facts/sarah lives in paris.md"
    base = ["--vault", str(vault), "lifecycle", "--today", "2025-06-01"]
    ledger = vault / ".rmh" / "learned.sqlite"
    existed = ledger.exists()
    assert main([*base, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [d["note"] for d in doc["decisions"]] == [paris]
    assert doc["archived"] == 0 and doc["decisions"][0]["already_archived"] is False
    assert ledger.exists() == existed  # a report writes nothing
    assert main([*base, "--apply", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["archived"] == 1
    assert (vault / paris).is_file()  # archived, never deleted
    assert main(base) == 0
    out = capsys.readouterr().out
    assert f"= [lifecycle] {paris}" in out and "0 note(s) to archive" in out
    assert main(["--vault", str(vault), "restore", paris]) == 0
    assert "restored" in capsys.readouterr().out
    assert main([*base, "--today", "2024-06-01", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["decisions"] == []
    with pytest.raises(SystemExit) as bad:  # a malformed date is a usage error, as --from's
        main([*base, "--today", "June"])
    assert bad.value.code == 2


def test_a_note_edited_by_hand_is_kept_and_listed_or_regenerated_with_a_trash_copy(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`rmh ingest` leaves a generated note edited by hand as it is and names it; with
    `--regenerate` it writes it as generated and puts the edited version in the trash."""
    vault, conv = tmp_path / "v", tmp_path / "c.json"
    conv.write_text(json.dumps(CONV), encoding="utf-8")
    assert main(["--vault", str(vault), "init"]) == 0
    assert main(["--vault", str(vault), "ingest", str(conv)]) == 0
    session = vault / "conversations/ab/ab s2.md"
    session.write_text(session.read_text("utf-8") + "My own note.\n", "utf-8")
    grown = json.loads(json.dumps(CONV))
    grown["sessions"][1]["turns"].append({"speaker": "Alice", "text": "Bikes are fun."})
    conv.write_text(json.dumps(grown), encoding="utf-8")
    capsys.readouterr()
    assert main(["--vault", str(vault), "ingest", str(conv)]) == 0
    out = capsys.readouterr().out
    assert "kept 1 note(s) edited by hand" in out and "\n  conversations/ab/ab s2.md" in out
    assert session.read_text("utf-8").endswith("My own note.\n")
    assert main(["--vault", str(vault), "ingest", str(conv), "--regenerate", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["kept_edited"] == [] and [d["note"] for d in doc["trashed"]] == [
        "conversations/ab/ab s2.md"]
    assert (vault / doc["trashed"][0]["trash"]).read_text("utf-8").endswith("My own note.\n")
    assert "My own note." not in session.read_text("utf-8")


@pytest.mark.parametrize("gap", [1, 2, 31, 366])
def test_a_range_that_ends_before_it_starts_is_a_bad_argument(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], gap: int) -> None:
    """`--from` after `--to` holds no day: an error naming the argument, not "Nothing in
    memory is relevant", which blamed the question."""
    vault, conv = tmp_path / "v", tmp_path / "c.json"
    conv.write_text(json.dumps(CONV), encoding="utf-8")
    assert main(["--vault", str(vault), "init"]) == 0
    assert main(["--vault", str(vault), "ingest", str(conv)]) == 0
    capsys.readouterr()
    start = date(2024, 5, 9)
    code = main(["--vault", str(vault), "context", "sold bike", "--no-dense",
                 "--from", start.isoformat(), "--to", (start - timedelta(days=gap)).isoformat()])
    out = capsys.readouterr()
    assert code != 0 and "date_from" in out.err and "Nothing in memory" not in out.out, out
    assert main(["--vault", str(vault), "context", "sold bike", "--no-dense", "--json",
                 "--from", start.isoformat(), "--to", start.isoformat()]) == 0


WHATSAPP = ("[03/11/2026, 09:15:07] Alice Chen: The billing deploy failed again last night.\n"
            "[03/11/2026, 09:16:12] Bob Ruiz: Was it the Postgres connection pool?\n"
            "[04/11/2026, 10:00:00] Alice Chen: Kafka retention is now 14 days, not 7.\n")


def test_stability_reads_a_file_as_ingest_does(tmp_path: Path) -> None:
    """`rmh conversation stability ID --file F` on a chat `rmh ingest F` took: the ingest's id
    (the file's stem: ingest named it so, stability looked for "conversation" and found none)
    and `--date-order` (a WhatsApp export whose dates never show the order was refused with
    "set it with `--date-order`", an option stability lacked). Session 37, NOTES-NEWUSER8."""
    import os

    from tests.forks import run_cli
    root, chat = tmp_path / "v", tmp_path / "team chat.txt"
    root.mkdir()
    (root / "a.md").write_text("alpha\n", encoding="utf-8")
    chat.write_text(WHATSAPP, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])

    def rmh(*args: str) -> tuple[int, str, str]:
        r = run_cli(["--vault", str(root), *args], env=env, cwd=tmp_path, timeout=120)
        return r.returncode, r.stdout, r.stderr

    assert rmh("init", "--no-dense")[0] == 0
    code, out, err = rmh("ingest", str(chat), "--date-order", "dmy", "--json")
    assert code == 0, err
    assert json.loads(out)["conversations"] == ["team chat"]
    code, out, err = rmh("conversation", "stability", "team chat", "--file", str(chat),
                         "--date-order", "dmy", "--json")
    assert code == 0, err
    assert json.loads(out)["conversation"] == "team chat"
    code, _, err = rmh("conversation", "stability", "other", "--file", str(chat),
                       "--date-order", "mdy")
    assert code == 1 and "holds no conversation 'other' (it holds 'team chat')" in err
