"""Hostile argument values on the command line (session 28, CLIFUZZ): each is a usage error
(exit 2, a JSON `usage` error under --json) or an operational one (exit 1), never a
traceback, and a refused command writes nothing: not in the vault, not beside it."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pytest

from tests.forks import run_cli
from tests.harness.test_cli_notes import ROOT

pytestmark = pytest.mark.slow


def cli(cwd: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    base = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    base.update(PYTHONPATH=str(ROOT), HOME=str(cwd), **(env or {}))
    r = run_cli(args, env=base, cwd=cwd, timeout=120)
    assert "Traceback" not in r.stderr, r.stderr
    return r.returncode, r.stdout, r.stderr


@pytest.mark.parametrize("command", ["init", "demo"])
def test_an_empty_folder_argument_is_a_usage_error(tmp_path: Path, command: str) -> None:
    """`rmh init ""` initialised $RMH_VAULT, `rmh demo ""` wrote ./rmh-demo-vault: the empty
    word was read as no PATH at all."""
    other = tmp_path / "other"
    other.mkdir()
    code, out, err = cli(tmp_path, command, "", "--no-dense", "--json",
                         env={"RMH_VAULT": str(other)})
    assert code == 2, (out, err)
    assert json.loads(out)["error"]["kind"] == "usage"
    assert "must not be empty" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other"]
    assert list(other.iterdir()) == []


def _vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    assert cli(tmp_path, "--vault", str(root), "init", "--no-dense")[0] == 0
    return root


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.md"))}


@pytest.mark.parametrize("argv", [
    ("search", "q", "--no-dense", "--as-of", "2024-02-30"),  # was exit 1, `--as-of nan` exit 2
    ("search", "q", "--no-dense", "--as-of", "yesterday"),
    ("search", "q", "--no-dense", "--as-of", ""),
    ("lifecycle", "--today", "2024-02-30"),  # was exit 1, `context --from 2024-02-30` exit 2
    ("lifecycle", "--today", ""),
    ("fact", "confirm", "Note", "--at", "2024-02-30"),  # was written into the note
    ("fact", "confirm", "Note", "--at", "yesterday"),
    ("fact", "confirm", "Note", "--at", "nan"),
    ("fact", "confirm", "Note", "--by", ""),  # JSON-RPC's vault.correct refuses these
    ("fact", "confirm", "Note", "--by", "b" * 201),
    ("fact", "confirm", "Note", "--reason", "r" * 1001),
    ("fact", "supersede", "Note", "--value", "v" * 1001),
    # a malformed hash was "changed since it was read" (edit_conflict, exit 1): session 29
    ("write", "Note", "--expected-hash", "abc"),
    ("write", "Note", "--expected-hash", "A" * 64),
    ("write", "Note", "--expected-hash", "a\nb"),
    ("write", "Note", "--expected-hash", "g" * 64),
    ("edit", "Note", "replace", "--expected-hash", "0" * 63, "--find", "Note", "--text", "X"),
    ("conversation", "note", "c1", "s1", "T", "t", "--date", "nan"),  # was a traceback
    ("conversation", "note", "c1", "s1", "T", "t", "--date", ""),
    # a subject of non-UTF-8 bytes was a UnicodeEncodeError traceback writing the intent
    ("forget", "--subject", os.fsdecode(b"bad\xff\xfe")),
    ("forget", "--subject", os.fsdecode(b"\xc3"), "--dry-run"),
])
def test_a_malformed_value_is_a_usage_error_naming_the_option(
        tmp_path: Path, argv: tuple[str, ...]) -> None:
    root = _vault(tmp_path)
    (root / "Note.md").write_text("# Note\n", encoding="utf-8")
    before = _snapshot(root)
    code, out, err = cli(tmp_path, "--vault", str(root), *argv, "--json")
    assert code == 2, (out, err)
    error = json.loads(out)["error"]
    option = next(a for a in argv if a.startswith("--") and a != "--no-dense")
    assert error["kind"] == "usage" and f"argument {option}:" in error["message"]
    assert _snapshot(root) == before


@pytest.mark.parametrize("argv", [
    ("search", "q", "--no-dense", "--as-of", "2024-01-01T00:00:00Z"),
    ("search", "q", "--no-dense", "--as-of", "1733011200.5"),
    ("lifecycle", "--today", "2024-02-29"),
])
def test_a_well_formed_value_still_runs(tmp_path: Path, argv: tuple[str, ...]) -> None:
    root = _vault(tmp_path)
    code, out, err = cli(tmp_path, "--vault", str(root), *argv, "--json")
    assert code == 0, (out, err)
    assert "error" not in json.loads(out)


@pytest.mark.parametrize("argv", [("status",), ("read", "x"), ("list",)])
def test_a_vault_name_too_long_to_look_up_is_one_line(tmp_path: Path,
                                                      argv: tuple[str, ...]) -> None:
    """`--vault` with a component past 255 bytes (ENAMETOOLONG) was a traceback."""
    code, out, err = cli(tmp_path, "--vault", str(tmp_path / ("a" * 300)), *argv, "--json")
    assert code == 1 and err.count("\n") == 1, err
    assert json.loads(out)["error"]["kind"] == "not_a_vault"


@pytest.mark.parametrize("word", ["a\nb", "a\rb", "a\x1b[31mb", "a\x85b"])
@pytest.mark.parametrize("argv", [
    ("--vault", "{word}", "status"),
    ("--vault", "{vault}", "init", "{word}"),
])
def test_an_error_quoting_a_control_character_stays_one_line(
        tmp_path: Path, word: str, argv: tuple[str, ...]) -> None:
    """An error quotes the user's words: a newline in one made the one stderr line several,
    and ESC reached the terminal raw."""
    root = _vault(tmp_path)
    (root / "Note.md").write_text("# Note\n", encoding="utf-8")
    before = _snapshot(root)
    args = [a.format(word=word, vault=root) for a in argv]
    code, out, err = cli(tmp_path, *args, "--json")
    assert code == 1 and err.count("\n") == 1 and err.startswith("rmh: "), err
    assert "\x1b" not in err and "\r" not in err and "\x85" not in err
    assert word in json.loads(out)["error"]["message"]  # JSON keeps the words as given
    assert _snapshot(root) == before


@pytest.mark.parametrize("argv, asked", [
    (("read", "--", "--json", "extra"), False),  # a note named --json: no JSON asked for
    (("search", "--", "--json", "-k", "0"), False),
    (("read", "--json", "--", "x", "extra"), True),
])
def test_json_after_double_dash_is_a_word_not_the_option(
        tmp_path: Path, argv: tuple[str, ...], asked: bool) -> None:
    root = _vault(tmp_path)
    code, out, err = cli(tmp_path, "--vault", str(root), *argv)
    assert code == 2, err
    assert (json.loads(out)["error"]["kind"] == "usage") if asked else out == ""


def _leaf_parsers() -> list[tuple[list[str], argparse.ArgumentParser]]:
    """(command words, its parser) for every command of the CLI without subcommands."""
    from harness.cli import build_parser

    found: list[tuple[list[str], argparse.ArgumentParser]] = []

    def walk(parser: argparse.ArgumentParser, path: list[str]) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            found.append((path, parser))
        for name, sp in (subs[0].choices.items() if subs else ()):
            walk(sp, [*path, name])

    walk(build_parser(None), [])
    return found


def _value_options() -> list[tuple[list[str], str, str, list[str]]]:
    """(command words, an option taking a value, its dest, the command's required
    positionals) for every command of the parser."""
    found: list[tuple[list[str], str, str, list[str]]] = []
    for path, parser in _leaf_parsers():
        pos = [next(iter(a.choices)) if a.choices else "Note" for a in parser._actions
               if not a.option_strings and a.nargs not in ("?", "*")]
        found.extend((path, a.option_strings[-1], a.dest, pos) for a in parser._actions
                     if a.option_strings and a.nargs != 0 and a.option_strings[-1][:2] == "--")
    return found


@pytest.mark.parametrize("path, option, dest, pos", _value_options(), ids=str)
def test_an_option_whose_value_is_double_dash_gets_that_value(
        path: list[str], option: str, dest: str, pos: list[str]) -> None:
    """Python 3.11's argparse gave `--session=--` the value [] (a list, never converted or
    checked): `rmh read --session=-- Note` was a TypeError traceback. It is the text "--"
    now, checked like any other value: a value or a usage error (exit 2)."""
    from harness.cli import build_parser

    try:
        ns = build_parser(None).parse_args([*path, f"{option}=--", *pos])
    except SystemExit as exc:
        assert exc.code == 2
        return
    assert not isinstance(getattr(ns, dest), list), vars(ns)


def test_read_with_session_double_dash_answers(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    (root / "Note.md").write_text("# Note\n", encoding="utf-8")
    code, out, err = cli(tmp_path, "--vault", str(root), "read", "--session=--", "Note", "--json")
    assert code == 0, err
    assert json.loads(out)["note"] == "Note.md"


def test_a_query_of_bytes_that_are_not_utf8_is_searched(tmp_path: Path) -> None:
    """`rmh search $'\\xff'` (with the dense encoder) was a TypeError traceback."""
    root = _vault(tmp_path)
    (root / "Note.md").write_text("# Note\n", encoding="utf-8")
    code, out, err = cli(tmp_path, "--vault", str(root), "search", "--json", "--",
                         os.fsdecode(b"Note \xff\xfe"))
    assert code == 0, err
    assert [h["note"] for h in json.loads(out)["hits"]] == ["Note.md"]


def _positionals() -> list[tuple[list[str], int, list[tuple[str, object]]]]:
    """(command words, index of a required positional, every required positional's dest and
    choices) for every command with one."""
    found: list[tuple[list[str], int, list[tuple[str, object]]]] = []
    for path, parser in _leaf_parsers():
        pos: list[tuple[str, object]] = [(a.dest, a.choices) for a in parser._actions
                                         if not a.option_strings and a.nargs is None]
        found.extend((path, j, pos) for j in range(len(pos)))
    return found


@pytest.mark.parametrize("path, j, pos", _positionals(), ids=str)
def test_a_positional_after_the_separator_may_be_double_dash(
        path: list[str], j: int, pos: list[tuple[str, object]]) -> None:
    """`rmh conversation note -- ID -- T X`: the session "--" was [] (Python 3.11's argparse
    drops every "--"), then a TypeError traceback."""
    from harness.cli import build_parser

    words = ["--" if k == j else (next(iter(c)) if c else "w")  # type: ignore[call-overload]
             for k, (_, c) in enumerate(pos)]
    try:
        ns = build_parser(None).parse_args([*path, "--", *words])
    except SystemExit as exc:
        assert exc.code == 2 and pos[j][1] is not None  # "--" is no choice
        return
    assert getattr(ns, pos[j][0]) == "--"
