"""The `rmh` command line as recorded: every command's `--help` and the output of a sequence
of vault commands (real subprocesses, one real vault), compared with `cli_surface.json`.

The record was made from the CLI as it was before its vault commands were generated from the
operation table (issue 28), so a change of a command's name, option, help text or output fails
here. A deliberate change is re-recorded with `RMH_RECORD_CLI=1 pytest
tests/harness/test_cli_surface.py` and shows in the diff of the JSON file; the differences the
operation table made (its bounds, named in `ALLOWED`) are checked one by one.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from harness.cli import build_parser
from tests.forks import CLI_PRELOAD, ForkServer
from vault import nlp_status

ROOT = Path(__file__).resolve().parents[2]
RECORD = Path(__file__).with_name("cli_surface.json")

NOTES = {"Alice": "Alice owns the [[Billing]] service.\n",
         "Billing": "Billing charges customers every month. #service\n",
         "Notes/Carla": "Carla rotates the certificates with [[Alice]].\n"}

# (argv after --vault V, stdin); run in order against one vault
SCRIPT: tuple[tuple[tuple[str, ...], str], ...] = (
    (("init", "--no-dense"), ""),
    *((("write", name), text) for name, text in NOTES.items()),
    (("write", "Alice"), "again\n"),
    (("write", "Alice", "--json"), "again\n"),
    (("write", "Dora", "--json", "--session", "s1"), "Dora audits [[Billing]].\n"),
    (("write", "Alice", "--overwrite"), NOTES["Alice"]),
    (("write", "Alice", "--expected-hash", "0" * 64), "x\n"),
    (("read", "Billing"), ""),
    (("read", "Billing", "--json"), ""),
    (("read", "Nobody"), ""),
    (("read", "Nobody", "--json"), ""),
    (("read", "  "), ""),
    (("edit", "Billing", "append", "--text", "Invoices go out on the 1st."), ""),
    (("edit", "Billing", "prepend", "--json"), "Top line.\n"),
    (("edit", "Billing", "replace", "--find", "month", "--text", "week", "--json"), ""),
    (("edit", "Billing", "replace", "--find", "nothing-like-this", "--text", "y"), ""),
    (("edit", "Billing", "replace", "--find", "week", "--count", "0"), ""),
    (("edit", "Billing", "section", "--heading", "Plans", "--text", "- more\n"), ""),
    (("edit", "Billing", "bogus"), ""),
    (("search", "customers billing", "--no-dense"), ""),
    (("search", "customers billing", "--no-dense", "--json"), ""),
    (("search", "customers billing", "--no-dense", "-k", "1", "--explain"), ""),
    (("search", "customers billing", "--no-dense", "--json", "--explain", "--no-learn"), ""),
    (("search", "zzzz qqqq", "--no-dense"), ""),
    (("search", "billing", "--no-dense", "--as-of", "0"), ""),
    (("search", "billing", "--no-dense", "--as-of", "yesterday"), ""),
    (("search", "billing", "--no-dense", "--session", "s1", "--json"), ""),
    (("search", "  ", "--no-dense"), ""),
    (("search", "billing", "--no-dense", "-k", "0"), ""),
    (("search", "billing", "--no-dense", "-k", "x"), ""),
    (("search", "billing", "--no-dense", "-k", "1000"), ""),
    (("links", "Alice"), ""),
    (("links", "Alice", "--json"), ""),
    (("backlinks", "Billing"), ""),
    (("backlinks", "Billing", "--json"), ""),
    (("list",), ""),
    (("list", "tags", "--json"), ""),
    (("list", "folders"), ""),
    (("list", "--limit", "1"), ""),
    (("list", "--limit", "0"), ""),
    (("list", "--folder", "Notes", "--json"), ""),
    (("move", "Alice", "People/Alice"), ""),
    (("move", "People/Alice", "Alice", "--json"), ""),
    (("move", "Nobody", "Else"), ""),
    (("delete", "Notes/Carla"), ""),
    (("delete", "Dora", "--json"), ""),
    (("delete", "Nobody", "--json"), ""),
    (("backlinks", "Alice"), ""),
    (("ingest", "<TMP>/c.json", "--json"), ""),
    (("context", "sold bike", "--budget", "15", "--no-dense", "--json"), ""),
    (("context", "pottery", "--no-dense"), ""),
    (("context", "pottery", "--no-dense", "--from", "2024-05-05", "--to", "2024-06-01"), ""),
    (("context", "pottery", "--no-dense", "--conversation", "nope"), ""),
    (("context", "pottery", "--no-dense", "--from", "May"), ""),
    (("context", "pottery", "--no-dense", "--budget", "0"), ""),
)
CONVERSATION = {"format": "rmh-conversation/1", "id": "ab", "sessions": [
    {"id": "s1", "date": "2024-05-01T10:00", "turns": [
        {"speaker": "Alice", "text": "I started a pottery class."},
        {"speaker": "Bob", "text": "My teacher Carla runs the pottery class."}]},
    {"id": "s2", "date": "2024-05-09T09:00", "turns": [
        {"speaker": "Bob", "text": "Last month I sold my bike."}]}]}

# The differences the operation table made from the CLI before it (3160d45, issue 28): argv ->
# (the exit code now, what stderr now says); each is a bound the table declares that the
# command line lacked. They are in the record since it was re-recorded (session 10, with the
# new `fact`/`why` commands and `search --history`), and checked here one by one.
ALLOWED: dict[tuple[str, ...], tuple[int, str]] = {
    ("read", "  "): (2, "argument note: the note must not be empty"),
    ("edit", "Billing", "replace", "--find", "week", "--count", "0"):
        (2, "argument --count: must be an integer from 1 to 100000"),
    ("search", "billing", "--no-dense", "-k", "0"):
        (2, "argument -k: must be an integer from 1 to 100"),
    ("search", "billing", "--no-dense", "-k", "x"):
        (2, "argument -k: must be an integer from 1 to 100"),
    ("search", "billing", "--no-dense", "-k", "1000"):
        (2, "argument -k: must be an integer from 1 to 100"),
    ("context", "pottery", "--no-dense", "--from", "May"):
        (2, "argument --from: must be an ISO date (YYYY-MM-DD)"),
    ("context", "pottery", "--no-dense", "--budget", "0"):
        (2, "argument --budget: must be an integer from 1 to 20000"),
}


CLOCK = re.compile(r'"clock": [0-9.e+-]+')


# runs whose output depends on which extractor ingest used (spaCy's parse or the rules)
EXTRACTION_DEPENDENT = {("ingest", "<TMP>/c.json", "--json"),
                        ("context", "sold bike", "--budget", "15", "--no-dense", "--json")}


def normalised(text: str, vault: Path) -> str:
    """`text` with the vault's path, its folder's and the wall clock (a search basis) masked."""
    text = text.replace(str(vault), "<VAULT>").replace(str(vault.parent), "<TMP>")
    return CLOCK.sub('"clock": 0', text)


def helps() -> dict[str, str]:
    """`rmh --help` and `rmh COMMAND --help` for every command, at a fixed width."""
    parser = build_parser()
    out = {"rmh": parser.format_help()}
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, p in sorted(sub.choices.items()):  # type: ignore[union-attr]
        out[name] = p.format_help()
    return out


def run_script(tmp: Path) -> list[dict[str, Any]]:
    vault = tmp / "vault"
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env.update(PYTHONHASHSEED="0", PYTHONPATH=str(ROOT), COLUMNS="100")
    (tmp / "c.json").write_text(json.dumps(CONVERSATION), encoding="utf-8")
    out = []
    # Each command is its own process, forked from one that imported the CLI (tests/forks.py)
    with ForkServer(CLI_PRELOAD, workdir=tmp / "forks", env=env, cwd=ROOT) as server:
        for argv, stdin in SCRIPT:
            words = [word.replace("<TMP>", str(tmp)) for word in argv]
            r = server.run(["--vault", str(vault), *words], module="harness", env=env,
                           cwd=ROOT, stdin=stdin or "", timeout=120)
            out.append({"argv": list(argv), "rc": r.returncode,
                        "stdout": normalised(r.stdout, vault),
                        "stderr": normalised(r.stderr, vault)})
    return out


@pytest.fixture()
def record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setenv("COLUMNS", "100")
    now = {"help": helps(), "runs": run_script(tmp_path)}
    if os.environ.get("RMH_RECORD_CLI") == "1":
        RECORD.write_text(json.dumps(now, indent=1, ensure_ascii=False, sort_keys=True) + "\n",
                          encoding="utf-8")
    return now


def test_help_and_behaviour_are_as_recorded(record: dict[str, Any]) -> None:
    was = json.loads(RECORD.read_text(encoding="utf-8"))
    assert sorted(record["help"]) == sorted(was["help"])
    for name, text in was["help"].items():
        assert record["help"][name] == text, name
    assert [r["argv"] for r in record["runs"]] == [r["argv"] for r in was["runs"]]
    # The record was made with the `nlp` extra (CI installs it, RMH_REQUIRE_NLP=1): without
    # it, what ingest extracts differs, so those runs keep only their status and keys.
    parsed = nlp_status()["extractor"] == "spacy"
    changed = [n["argv"] for n, b in zip(record["runs"], was["runs"], strict=True)
               if n != b and (parsed or tuple(n["argv"]) not in EXTRACTION_DEPENDENT)]
    assert changed == []
    for n, b in zip(record["runs"], was["runs"], strict=True):
        if tuple(n["argv"]) in EXTRACTION_DEPENDENT:
            assert n["rc"] == b["rc"] == 0, n["stderr"]
            assert sorted(json.loads(n["stdout"])) == sorted(json.loads(b["stdout"]))
    runs = {tuple(n["argv"]): n for n in record["runs"]}
    for argv, (rc, stderr) in ALLOWED.items():
        assert runs[argv]["rc"] == rc and stderr in runs[argv]["stderr"], argv
        assert runs[argv]["stdout"] == "", argv
