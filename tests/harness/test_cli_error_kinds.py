"""What the CLI says when something is wrong (issue 27 item 7): every `kind` it prints is
snake_case, the no-vault error included; frontmatter keys that YAML loads as one key are a
parse error `doctor` reports, with the file untouched and the note still searchable."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.cli import error_kind
from harness.commands.output import CommandFailed
from harness.config import ConfigError
from tests.harness.test_cli_notes import rmh

pytestmark = pytest.mark.slow
SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")


def kind_of(*args: str) -> str:
    r = rmh(*args, "--json")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1, r.stderr  # one line
    kind: str = json.loads(r.stdout)["error"]["kind"]
    assert SNAKE.match(kind), kind
    return kind


def test_every_printed_kind_is_snake_case(tmp_path: Path) -> None:
    assert kind_of("search", "x") == "config_error"  # no vault given at all
    assert kind_of("--vault", str(tmp_path / "none"), "search", "x") == "not_a_vault"
    root = tmp_path / "v"
    assert rmh("--vault", str(root), "init", "--no-dense").returncode == 0
    assert kind_of("--vault", str(root), "read", "Nobody") == "note_not_found"
    assert kind_of("--vault", str(root), "write", "../x") == "path_refused"
    # refused by the operation once it ran: bad_argument naming the parameter, as on MCP
    for argv, param in ((("list", "notes", "--cursor", "garbage"), "cursor"),
                        (("list", "notes", "--folder", "Nope"), "folder")):
        assert kind_of("--vault", str(root), *argv) == "bad_argument"
        error = json.loads(rmh("--vault", str(root), *argv, "--json").stdout)["error"]
        assert error["param"] == param and error["reason"]
    r = rmh("--vault", str(root), "list")  # an empty vault points nowhere
    assert r.returncode == 0 and r.stdout == "(none)\n"
    (root / "Projects").mkdir()
    (root / "Projects" / "plan.md").write_text("# Plan\n", encoding="utf-8")
    r = rmh("--vault", str(root), "list")  # an empty top folder says where the notes are
    assert r.returncode == 0 and "rmh list folders" in r.stdout, r.stdout


def test_error_kind_names() -> None:
    assert error_kind(ConfigError("x")) == "config_error"
    assert error_kind(CommandFailed("x")) == "command_failed"
    assert error_kind(OSError(5, "io")) == "os_error"
    assert error_kind(KeyError("x")) == "key_error"


@pytest.mark.parametrize("block", ["1: one\ntrue: two", "a: 1\na: 2", "true: x\nTrue: y"])
def test_keys_that_collide_are_a_parse_error_in_doctor(tmp_path: Path, block: str) -> None:
    root = tmp_path / "v"
    root.mkdir()
    raw = f"---\n{block}\n---\nkiwi orchard words\n".encode()
    (root / "Dup.md").write_bytes(raw)
    assert rmh("--vault", str(root), "init", "--no-dense").returncode == 0
    r = rmh("--vault", str(root), "doctor", "--json")
    assert r.returncode == 0, r.stderr
    errors = json.loads(r.stdout)["vault"]["parse_errors"]
    assert [e["note"] for e in errors] == ["Dup.md"]
    assert "duplicate key" in errors[0]["error"]
    hits = json.loads(rmh("--vault", str(root), "search", "kiwi orchard", "--json",
                          "--no-dense").stdout)["hits"]
    assert [h["note"] for h in hits] == ["Dup.md"]
    r = rmh("--vault", str(root), "read", "Dup", "--json")
    assert json.loads(r.stdout)["frontmatter"] == {}
    assert (root / "Dup.md").read_bytes() == raw  # untouched


def test_a_vault_path_that_is_a_file_is_not_a_folder_for_every_command(tmp_path: Path) -> None:
    """`init`, `demo` and `setup` make a missing folder; a file in its place is one line
    naming it (not the OS's "File exists"), and the file is left as it was."""
    afile = tmp_path / "notes.md"
    afile.write_text("mine\n", encoding="utf-8")
    for argv in (("init", str(afile)), ("--vault", str(afile), "init"), ("demo", str(afile)),
                 ("setup", "generic", "--vault", str(afile), "--yes"),
                 ("--vault", str(afile), "search", "x")):
        assert kind_of(*argv) == "not_a_vault", argv
        r = rmh(*argv)
        assert r.stderr == f"rmh: not a vault: {afile} (not a folder)\n", argv
    assert afile.read_text(encoding="utf-8") == "mine\n"


def test_vault_after_the_command_says_where_it_goes(tmp_path: Path) -> None:
    """`rmh setup CLIENT --vault PATH` takes it after the command; every other command takes
    it before: the usage error says so instead of only 'unrecognized arguments'."""
    hint = "(--vault goes before the command: rmh --vault PATH COMMAND ...)"
    for argv in (("search", "--vault", str(tmp_path), "x"), ("status", f"--vault={tmp_path}")):
        r = rmh(*argv)
        assert r.returncode == 2 and r.stderr.rstrip().endswith(hint), r.stderr
    r = rmh("search", "x", "--bogus")
    assert r.returncode == 2 and "--vault goes" not in r.stderr
