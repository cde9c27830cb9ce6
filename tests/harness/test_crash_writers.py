"""The writers no sweep covered, each killed after every one of its file operations
(RMH_FAULT_AFTER_OPS=N for N = 1, 2, ... until it finishes: vault/storage/faults.py), then
opened again by `rmh doctor`:

- `rmh ingest --regenerate` (hand-edited notes rewritten, the edits to the trash first),
- `rmh hook session-end` (the client's transcript ingested, the session ended),
- `rmh exec` (a cell calling the vault's write functions: the host process writes),
- `rmh serve` answering the writing tools (`vault.write`, `vault.edit`, `vault.move`,
  `vault.delete`), one process for all of them (the REPL's writes: `rmh exec`, the same
  host functions as `repl.exec`; `session.end`: test_crash_end_session.py),
- `rmh setup` (the vault's init, then the client's settings) and `rmh hooks install`.

After each kill and the next open: every file of the vault (notes, trash) holds its bytes
of before or of an uninterrupted run, never others; the writers that promise all-or-none
(an ingest's conversation, a move with its referrers) are whole or absent; no intent is left,
`doctor` lists no leftover and no dangling link, and the ledger replays. `--regenerate` run
again after a kill ends byte for byte as one uninterrupted run (before: a kill after its
trash copies and before its journal left them there, and the run again copied the same bytes
a second time, `NAME (1).md`: storage/removal.py `_same_file`). The client settings that
`setup` and `hooks install` write were no kill point (written outside the store, uncounted):
now each of their file operations counts, and a kill leaves them old (a whole backup beside,
or none) or new. docs/measurements/session35/NOTES-STORE10.md has the sweeps' seconds.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.forks import CLI_PRELOAD, ForkServer, cli_env

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
TOML = '[hooks]\ndaemon = false\n[extract]\nentities = "rules"\n'
CHECKED = (".rmh/trash/",)  # the .rmh files checked as notes are (the rest is derived state)


@dataclass(frozen=True)
class Writer:
    """A command (`args`, `stdin`; "@W@" is the run's folder) on a vault `make` prepared;
    `whole`: the groups of files that land together or not at all; `again`: run it once
    more after each kill, which must end as one uninterrupted run."""

    make: Callable[[ForkServer, Path], None]
    args: tuple[str, ...]
    stdin: str = ""
    whole: tuple[tuple[str, ...], ...] = ()
    again: bool = False
    outside: tuple[str, ...] = ()  # files of the run's folder, outside the vault, checked too
    seen_both: tuple[str, ...] = ()  # files some kill leaves old and some kill leaves new


def rmh(server: ForkServer, work: Path, args: list[str], stdin: str = "",
        fault_after: int | None = None) -> subprocess.CompletedProcess[str]:
    return server.run(args, module="harness", env=cli_env(work, fault_after=fault_after),
                      cwd=work, stdin=stdin)


def files(work: Path, outside: tuple[str, ...] = ()) -> dict[str, bytes]:
    """Every file under `work/v` but the derived state in `.rmh` (`CHECKED` is kept), and
    those of `work` matching the globs `outside` (as "../NAME", the run's folder as "@W@")."""
    root = work / "v"
    out = {f"../{p.relative_to(work).as_posix()}": p.read_bytes().replace(
        str(work).encode(), b"@W@") for pattern in outside for p in sorted(work.glob(pattern))
        if ".rmh-tmp-" not in p.name}  # a killed write's temporary: the next one removes it
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and (not rel.startswith(".rmh/") or rel.startswith(CHECKED)):
            out[rel] = path.read_bytes()
    return out


def vault(server: ForkServer, work: Path, notes: dict[str, str]) -> None:
    v = work / "v"
    work.mkdir(parents=True)
    assert rmh(server, work, ["--vault", str(v), "init", "--no-dense"]).returncode == 0
    (v / "rmh.toml").write_text(TOML)
    for name, text in notes.items():
        (v / name).parent.mkdir(parents=True, exist_ok=True)
        (v / name).write_text(text)


CHAT = {"id": "c1", "messages": [
    {"role": "user", "content": "is the kiln hot?"},
    {"role": "assistant", "content": "yes, very."}]}


def regenerate_vault(server: ForkServer, work: Path) -> None:
    vault(server, work, {"kiln.md": "# Kiln\n"})
    (work / "chat.json").write_text(json.dumps(CHAT))
    assert rmh(server, work, ["--vault", str(work / "v"), "ingest",
                              str(work / "chat.json")]).returncode == 0
    turns = sorted((work / "v" / "conversations" / "c1" / "c1").glob("*.md"))
    assert len(turns) == 2
    for path in turns:  # edited by hand: rewritten, each edit kept in the trash first
        path.write_text(path.read_text() + "\nEdited by hand.\n")


TRANSCRIPT = [
    {"type": "user", "sessionId": "s1", "timestamp": "2024-05-01T10:00:00Z",
     "message": {"role": "user", "content": "is it hot?"}},
    {"type": "assistant", "sessionId": "s1", "timestamp": "2024-05-01T10:00:05Z",
     "message": {"role": "assistant", "content": [{"type": "text", "text": "See [[kiln]]."}]}}]


def hook_vault(server: ForkServer, work: Path) -> None:
    vault(server, work, {"kiln.md": "# Kiln\nThe kiln fires at 1200 C.\n"})
    (work / "t.jsonl").write_text("".join(json.dumps(line) + "\n" for line in TRANSCRIPT))
    start = json.dumps({"session_id": "s1", "transcript_path": str(work / "t.jsonl"),
                        "hook_event_name": "SessionStart", "cwd": str(work)})
    assert rmh(server, work, ["--vault", str(work / "v"), "hook", "session-start"],
               stdin=start).returncode == 0


SERVED = {"a.md": "# A\nSee [[m]].\n", "m.md": "# M\nMoved.\n", "e.md": "# E\n",
          "d.md": "# D\nDeleted.\n"}


def frames(*calls: tuple[str, dict[str, object]]) -> str:
    return "".join(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
                   + "\n" for i, (method, params) in enumerate(calls, 1))


def settings_vault(server: ForkServer, work: Path) -> None:
    vault(server, work, {"kiln.md": "# Kiln\n"})
    (work / "proj" / ".claude").mkdir(parents=True)
    (work / "proj" / ".claude" / "settings.json").write_text('{"theme": "dark"}\n')


def setup_folder(server: ForkServer, work: Path) -> None:
    (work / "v").mkdir(parents=True)
    (work / "v" / "kiln.md").write_text("# Kiln\n")
    (work / ".mcp.json").write_text('{"mcpServers": {"other": {"command": "x"}}}\n')


WRITERS = {
    "setup": Writer(
        setup_folder, ("setup", "claude-code", "--scope", "project", "--yes", "--no-dense",
                       "--no-check"), outside=(".mcp.json*",), seen_both=("../.mcp.json",)),
    "hooks-install": Writer(
        settings_vault, ("hooks", "install", "claude-code", "--project", "@W@/proj"),
        outside=("proj/.claude/*",), seen_both=("../proj/.claude/settings.json",)),
    "ingest-regenerate": Writer(
        regenerate_vault, ("ingest", "@W@/chat.json", "--regenerate"),
        whole=(("conversations/c1/c1/c1 m1.md", "conversations/c1/c1/c1 m2.md",  # and their
                ".rmh/trash/conversations/c1/c1/c1 m1.md",  # trash copies (FIX36: a kill left
                ".rmh/trash/conversations/c1/c1/c1 m2.md"),), again=True),  # them alone)
    "hook-session-end": Writer(
        hook_vault, ("hook", "session-end"),
        json.dumps({"session_id": "s1", "transcript_path": "@W@/t.jsonl",
                    "hook_event_name": "SessionEnd", "cwd": "@W@"}),
        whole=(("conversations/s1/s1/s1 L1.md", "conversations/s1/s1/s1 L2.md"),)),
    "exec-cell": Writer(
        lambda server, work: vault(server, work, SERVED),
        ("exec", "-c", "write('new', '# New [[a]]')\nedit('e', 'append', text='from a cell')")),
    "serve-tools": Writer(
        lambda server, work: vault(server, work, SERVED),
        ("serve", "--no-dense"), frames(  # (`session.end`: test_crash_end_session.py)
            ("vault.write", {"note": "new", "content": "# New\n[[a]]\n"}),
            ("vault.edit", {"note": "e", "kind": "append", "text": "served"}),
            ("vault.move", {"note": "m", "new": "sub/m2"}),
            ("vault.delete", {"note": "d"})),
        whole=(("a.md", "m.md", "sub/m2.md"),)),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForkServer]:
    with ForkServer(CLI_PRELOAD, workdir=tmp_path_factory.mktemp("forks"), cwd=ROOT) as s:
        yield s


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_a_writer_killed_after_any_operation_leaves_old_or_new_bytes(
        name: str, server: ForkServer, tmp_path: Path) -> None:
    writer = WRITERS[name]
    template = tmp_path / "template"
    writer.make(server, template)
    if (template / "v" / ".rmh").is_dir():  # indexed now: the kills land in the writer's
        rmh(server, template, ["--vault", str(template / "v"), "doctor"])  # own operations

    def run(work: Path, fault_after: int | None = None) -> subprocess.CompletedProcess[str]:
        args = ["--vault", str(work / "v"), *(a.replace("@W@", str(work)) for a in writer.args)]
        return rmh(server, work, args, writer.stdin.replace("@W@", str(work)), fault_after)

    ref = tmp_path / "ref"
    shutil.copytree(template, ref)
    done = run(ref)
    assert done.returncode == 0, done.stderr
    before, after = files(template, writer.outside), files(ref, writer.outside)
    assert before != after
    for group in writer.whole:  # each group changes as a whole
        assert all(before.get(p) != after.get(p) for p in group), (group, sorted(after))
    work, points, seen = tmp_path / "work", 0, set()
    for n in range(1, 300):
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(template, work)
        killed = run(work, fault_after=n)
        if killed.returncode != -9:
            assert killed.returncode == 0, killed.stderr
            break
        points += 1
        if (work / "v" / ".rmh").is_dir():  # else `rmh setup` killed before its init made it
            doctor = rmh(server, work, ["--vault", str(work / "v"), "doctor", "--json"])
            assert doctor.returncode == 0, (n, doctor.stderr)
            doc = json.loads(doctor.stdout)
            found = doc["vault"]
            assert (found["intents"]["pending"], found["leftovers"],
                    found["dangling_links"]) == ([], [], []), (n, found)
            assert doc["learning"]["replay_matches"], n
        now = files(work, writer.outside)
        seen |= {(p, now.get(p) == after.get(p)) for p in writer.seen_both}
        torn = [p for p in sorted(set(now) | set(before))
                if now.get(p) not in (before.get(p), after.get(p))]
        assert torn == [], (n, torn)
        for group in writer.whole:
            sides = {now.get(p) == after.get(p) for p in group}
            assert len(sides) == 1, (n, group)  # all old or all new
        if writer.again:
            assert run(work).returncode == 0, n
            assert files(work, writer.outside) == after, n
    else:
        raise AssertionError("never finished")
    assert points >= 2, points
    # kills landed on both sides of each of these files' writes (on main the client settings'
    # writes were no kill points: no kill ever left them new)
    assert seen == {(p, side) for p in writer.seen_both for side in (False, True)}, seen


def test_a_delete_killed_after_any_operation_and_run_again_leaves_one_trash_copy(
        server: ForkServer, tmp_path: Path) -> None:
    """`rmh delete` links the note into the trash, then removes its name: killed between the
    two, the delete run again made a second trash entry of the same file (`d (1).md`)."""
    template = tmp_path / "template"
    vault(server, template, {"d.md": "# D\nDeleted.\n"})
    before = files(template)
    points = 0
    for n in range(1, 50):
        work = tmp_path / "work"
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(template, work)
        killed = rmh(server, work, ["--vault", str(work / "v"), "delete", "d"], fault_after=n)
        if killed.returncode != -9:
            assert killed.returncode == 0, killed.stderr
            break
        points += 1
        rmh(server, work, ["--vault", str(work / "v"), "doctor"])  # the next open settles
        now = files(work)  # (a kill with the name aside: FIX37's rename aside of the unlink)
        assert before["d.md"] in (now.get("d.md"), now.get(".rmh/trash/d.md")), n
        if "d.md" in now:  # else deleted: the kill came after the name was removed
            again = rmh(server, work, ["--vault", str(work / "v"), "delete", "d"])
            assert again.returncode == 0, (n, again.stderr)
        assert files(work) == {".rmh/trash/d.md": before["d.md"], "rmh.toml": TOML.encode()}, n
    else:
        raise AssertionError("never finished")
    assert points >= 2, points


def test_a_delete_run_again_and_killed_anywhere_loses_nothing(
        server: ForkServer, tmp_path: Path) -> None:
    """The rerun of a delete killed between its link and its unlink removes the note's name
    by renaming it aside and unlinking it there (FIX36: no unlink by name after the inode
    check, which an editor's save between the two lost). Killed after any of its own
    operations, then run once more: one trash copy, the note's bytes, nothing aside left."""
    template = tmp_path / "template"
    vault(server, template, {"d.md": "# D\nDeleted.\n"})
    before, work = files(template), tmp_path / "work"

    def half(n: int) -> bool:  # killed after its n-th operation: the link and the name both?
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(template, work)  # (copytree would break the link: made here)
        killed = rmh(server, work, ["--vault", str(work / "v"), "delete", "d"], fault_after=n)
        assert killed.returncode == -9, n
        return {"d.md", ".rmh/trash/d.md"} <= set(files(work))

    n = next(n for n in range(1, 50) if half(n))
    points = 0
    for m in range(1, 50):
        half(n)
        killed = rmh(server, work, ["--vault", str(work / "v"), "delete", "d"], fault_after=m)
        if killed.returncode != -9:
            assert killed.returncode == 0, killed.stderr
            break
        points += 1
        rmh(server, work, ["--vault", str(work / "v"), "doctor"])  # the next open settles
        now = files(work)
        assert before["d.md"] in (now.get("d.md"), now.get(".rmh/trash/d.md")), m
        if "d.md" in now:
            again = rmh(server, work, ["--vault", str(work / "v"), "delete", "d"])
            assert again.returncode == 0, (m, again.stderr)
        assert files(work) == {".rmh/trash/d.md": before["d.md"], "rmh.toml": TOML.encode()}, (
            m, sorted(files(work)))
    else:
        raise AssertionError("never finished")
    assert points >= 2, points
