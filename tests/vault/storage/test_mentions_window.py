"""The proof's whole-word count in bytes (storage/mentions.py `count_in_bytes`) reads a file in
windows with `pread`: a file that another program shortens while it is read reads short
instead of killing the process with SIGBUS (it was mapped whole: `rmh forget`'s proof died,
exit 135, when a file of the vault, a WAL being checkpointed or a note an editor truncates in
place, shrank under it), and the windows count exactly what one read of the file counts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from vault.storage import mentions

PIECES = ["Ann", "ann's", "ANN", "Ann Lee", "Ann\n\n  Lee", "annual", "Joann", "x", " ", "\n",
          "\\n", "\x00", "\x01\x02\x03", "é", "Zoë", "Zoe\u0308", "a" * 40, "[[Ann]]", "_",
          "C++", "9", "+", "++", " " * 70, "\n" * 90, "Lee"]


@settings(max_examples=300, deadline=None)
@example(pieces=["a" * 40, " Ann", " " * 70, "Lee ", "a" * 40], needle="Ann Lee", window=1)
@example(pieces=["a" * 40, "Ann", "\n" * 90, "\\n", "LEE", "a" * 40], needle="Ann Lee",
         window=3)
@example(pieces=["a" * 40, "++", "+", "a" * 40], needle="++", window=1)
@example(pieces=["Ann", "a" * 40], needle="Ann", window=2)
@example(pieces=["\x01\x02\x03", "Ann", " " * 117, "Lee", " ", "a" * 100], needle="Ann Lee",
         window=1)  # text on the right only, ending near a window's margin
@given(pieces=st.lists(st.sampled_from(PIECES), max_size=60),
       needle=st.sampled_from(["Ann", "Ann Lee", "Zoë", "C++", "aa", "++"]),
       window=st.integers(1, 50))
def test_windows_count_what_one_read_counts(tmp_path_factory: pytest.TempPathFactory,
                                            pieces: list[str], needle: str,
                                            window: int) -> None:
    file = tmp_path_factory.mktemp("w") / "f.bin"
    file.write_bytes("".join(pieces).encode("utf-8"))
    whole = mentions.count_in_bytes(file, needle)  # one window: every file here is small
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mentions, "WINDOW", window)
        mp.setattr(mentions, "MARGIN", 4 * mentions.CONTEXT)
        assert mentions.count_in_bytes(file, needle) == whole


CHILD = """
import os, sys, threading, time
from pathlib import Path
from vault.storage.mentions import count_in_bytes
p = Path(sys.argv[1])
data = b"Quillon said so. " * ((8 << 20) // 17)
p.write_bytes(data)
full = count_in_bytes(p, "Quillon")
done = threading.Event()
def shrink():
    while not done.is_set():
        os.truncate(p, 4096)
        time.sleep(0.05)
        with open(p, "r+b") as f:
            f.write(data)
        time.sleep(0.05)
threading.Thread(target=shrink, daemon=True).start()
for _ in range(40):
    assert 0 <= count_in_bytes(p, "Quillon") <= full
done.set()
print("ok", full)
"""


def test_a_file_shortened_while_it_is_counted_reads_short(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "shrinks.bin")],
                         capture_output=True, text=True, check=False, timeout=600,
                         cwd=Path(__file__).resolve().parents[3])
    assert run.returncode == 0, f"rc {run.returncode} (-7: SIGBUS) {run.stderr[-500:]}"
    assert run.stdout.startswith("ok ")
