"""A full disk in the middle of the prompt hook's journal line (STORE13, session 38).

`journal_shown` wrote its line with one `os.write` and ignored how much of it went: on a full
disk the kernel wrote part of the line and returned the short count, the hook said done, and
the journal kept a cut line (the next append ended it, so it was read as a bad line and
dropped: the prompt's shown notes lost silently). Now a short write is taken back (the file
as it was) and raised as OSError, which the hook reports on stderr. A real process whose file
size limit (RLIMIT_FSIZE, SIGXFSZ ignored) stands in for the full disk: the kernel cuts the
write at the limit exactly as at ENOSPC (`STORE13_full_disk_hooks.py.txt` ran on a real
tmpfs: 12 of 28 fill levels cut a line on main, 0 here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from vault import Vault

ROOT = Path(__file__).resolve().parents[2]
CHILD = """
import resource, signal, sys
from pathlib import Path
from harness.hooks_used import journal_shown, session_journal
root = Path(sys.argv[1])
size = session_journal(root, "s").stat().st_size
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (size + 100, size + 100))
try:
    journal_shown(root, "s", "second", [f"n{i:040d}.md" for i in range(300)])
    print("done")
except OSError as exc:
    print("refused", exc.errno)
"""


def test_a_journal_line_cut_by_a_full_disk_is_taken_back_and_reported(tmp_path: Path) -> None:
    from harness.hooks_used import journal_shown, session_journal, take_shown

    root = tmp_path / "v"
    Vault.init(root).close()
    journal_shown(root, "s", "first", ["a.md"])
    before = session_journal(root, "s").read_bytes()
    out = subprocess.run([sys.executable, "-c", CHILD, str(root)], capture_output=True,
                         text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["refused", "28"]  # ENOSPC; main: "done", a cut line left
    assert session_journal(root, "s").read_bytes() == before
    journal_shown(root, "s", "after", ["b.md"])
    lines = session_journal(root, "s").read_text().splitlines()
    assert [json.loads(line)["prompt"] for line in lines] == ["first", "after"]
    assert take_shown(root, "s") == [("first", ["a.md"]), ("after", ["b.md"])]
