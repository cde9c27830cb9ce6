"""README's command line is `rmh --help`'s: every command and every option of it is named where
README speaks of that command (a `rmh COMMAND ...` code span, or its row of the command table),
and every option README gives a command there is one the command has."""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path

from harness.cli import build_parser
from tests.forks import run_cli
from tests.harness.test_server_e2e import CHILD_ENV, REPO

README = Path(__file__).resolve().parents[2] / "README.md"

# README sends the reader to `--help` for these benchmark commands' tuning options
# ("`--help` lists their options"); their other options must still be named.
HELP_ONLY = {"bench": {"--granularity", "--limit", "--ablate", "--weights", "--normalize",
                       "--redundancy-head", "--calibrate", "--cloze", "--second-pass", "--rerank",
                       "--cache", "--threads", "--ray-workers"},
             "bench-ask": {"--data", "--granularity", "--seed", "--dense", "--ablate", "--limit",
                           "--cache", "--threads"}}
GLOBAL = {"--vault", "--json", "--help", "--version"}


def commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def actions(parser: argparse.ArgumentParser) -> list[tuple[str, ...]]:
    """The option strings of each of the command's options, and of its own sub-commands'
    (`hooks daemon --idle`)."""
    out: list[tuple[str, ...]] = []
    for action in parser._actions:
        if action.option_strings and "-h" not in action.option_strings:
            out.append(tuple(action.option_strings))
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                out += actions(child)
    return out


def options(parser: argparse.ArgumentParser) -> set[str]:
    return {o for strings in actions(parser) for o in strings}


def named(words: str) -> list[str]:
    """The commands a `rmh ...` text names: the first word after the global options, each of
    `a|b|c` when so written (`rmh search|read --session ID`)."""
    rest = words.split()[1:]
    while rest and rest[0].startswith("-"):
        rest = rest[2:] if rest[0] == "--vault" else rest[1:]
    return rest[0].replace("\\|", "|").split("|") if rest else []


def documentation() -> dict[str, str]:
    """Per command: the text of every code span that starts `rmh COMMAND`, and of its table
    row's first cell."""
    text = README.read_text(encoding="utf-8")
    docs: dict[str, str] = {}
    for span in re.findall(r"`(rmh [^`]+)`", text):
        for command in named(span):
            docs[command] = docs.get(command, "") + " " + span
    for line in text.splitlines():
        if line.startswith("| `rmh "):
            cell = re.split(r"(?<!\\)\|", line)[1]
            for command in {c for span in re.findall(r"`(rmh [^`]+)`", cell)
                            for c in named(span)}:
                docs[command] = docs.get(command, "") + " " + cell
    return docs


def test_every_command_and_option_is_in_readme() -> None:
    docs = documentation()
    missing = []
    for name, parser in commands().items():
        if name not in docs:
            missing.append(name)
            continue
        said = set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", docs[name]))
        skip = GLOBAL | HELP_ONLY.get(name, set())
        missing += [f"{name} {'/'.join(strings)}" for strings in actions(parser)
                    if not set(strings) & (said | skip)]
    assert missing == []


def test_every_option_readme_gives_a_command_exists() -> None:
    table = commands()
    text = README.read_text(encoding="utf-8")
    wrong = []
    for span in re.findall(r"`(rmh [^`]+)`", text):
        names = [n for n in named(span) if n in table]
        if not names:
            continue
        allowed = set().union(*(options(table[n]) for n in names)) | GLOBAL
        wrong += [f"{span}: {o}" for o in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", span)
                  if o not in allowed]
    assert wrong == []


def test_every_rmh_word_in_readme_is_a_command() -> None:
    table = commands()
    text = README.read_text(encoding="utf-8")
    unknown = {c for span in re.findall(r"`(rmh [^`]+)`", text) for c in named(span)
               if re.fullmatch(r"[a-z][a-z-]*", c) and c not in table}
    assert sorted(unknown) == []


def test_exec_json_prints_the_fields_readme_lists(tmp_path: Path) -> None:
    """README's `rmh exec --json` field list is the document's keys (it lacked duration_s and
    stdout_truncated / stderr_truncated)."""
    text = re.sub(r"\s+", " ", README.read_text(encoding="utf-8"))
    listed = re.search(r"`--json` prints `([^`]+)`", text)
    assert listed is not None
    fields = {re.sub(r"\{.*\}", "", f).strip() for f in listed[1].split(", ")}
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "a.md").write_text("alpha\n", encoding="utf-8")
    init = run_cli(["init", str(vault), "--no-dense"], env=env, cwd=tmp_path)
    assert init.returncode == 0, init.stderr
    out = run_cli(["--vault", str(vault), "exec", "--no-dense", "--json", "-c", "1 / 0"],
                  env=env, cwd=tmp_path)
    doc = json.loads(out.stdout)
    assert set(doc) == fields
    assert set(doc["error"]) == {"type", "message", "traceback"}


def test_the_command_tables_row_names_every_option_of_its_command() -> None:
    """The command table is where a reader looks a command up: its row names each of the
    command's own options (`search --as-of --no-learn --session`, `read|write|edit
    --session`, `lifecycle --today` and `learning --no-dense` were only said elsewhere, or
    only by `--help`; session 37, NOTES-NEWUSER8)."""
    rows: dict[str, str] = {}
    for line in README.read_text(encoding="utf-8").splitlines():
        if line.startswith("| `rmh "):
            cell = re.split(r"(?<!\\)\|", line)[1]
            for command in {c for span in re.findall(r"`(rmh [^`]+)`", cell) for c in named(span)}:
                rows[command] = rows.get(command, "") + " " + cell
    missing = []
    for name, parser in commands().items():
        said = set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", rows.get(name, "")))
        skip = GLOBAL | HELP_ONLY.get(name, set())
        missing += [f"{name} {'/'.join(a.option_strings)}" for a in parser._actions
                    if a.option_strings and "-h" not in a.option_strings
                    and not set(a.option_strings) & (said | skip)]
    assert missing == []
