"""Text a cell controls (a note it wrote, its output in a transcript) scanned by the harness's
link patterns in time linear in its length (session 42, SBX18): each pattern tried every `[[`
(or `[tool `, or word) and scanned from it to the text's end, one C call holding the GIL, so
one note or output froze the process for hours. The patterns now stop at the next `[` (no
note name holds one: Obsidian refuses `[` and `]` in names) or within a path's bounds."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from harness import ask_evidence, ask_used, hooks_memory

ROOT = Path(__file__).resolve().parents[2]

_CHILD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_CPU, (60, 60))
from harness.ask_evidence import bridge_names
from harness.ask_used import used_notes
from harness.hooks_memory import cited_notes
big = 4 << 20  # a note written in one call
for unit in ("[[", "[[a|", "[[a#", "[[a#|", "Ann [["):
    body = unit * (big // len(unit))
    bridge_names({"text": body, "title": "t"}, "who is Ann?", set())
    used_notes(body, "who is Ann?", {})
out = 64 << 10  # a cell's output on one stream
for unit in ("[tool read", "[tool read: a", "a ", "a a/", "[[", "x/y "):
    cited_notes([unit * (out // len(unit))])
print("done")
"""


def test_unclosed_link_markup_is_scanned_in_linear_time() -> None:
    """Within 60 s of CPU in all (well under 1 s here); main did not finish the first unit
    (8 KiB of `[[` alone took ask_evidence 2 s, and the time grew with its square)."""
    run = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                         timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0 and run.stdout.strip() == "done", (run.returncode,
                                                                  run.stderr[-600:])


_OLD_LINK = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|([^\]]+))?\]\]")
_OLD_WIKI = re.compile(r"\[\[([^\]|#]+)(?:[#|][^\]]*)?\]\]")
_OLD_PATH = re.compile(r"(?<![\w/.-])((?:[\w .-]+/)*[\w .-]+\.md)\b")
_OLD_TOOL = re.compile(r"\[tool [^\]:]*read[^\]:]*: ([^\]]+)\]")
# text around links whose parts hold no `[` (a note's name never does)
_PARTS = ["[[", "]]", "|", "#", "a", "b c", " ", "\n", "]", "x.md", "/", ":", "[tool read: ",
          "[tool ls: ", "."]


def _same_where_no_bracket_inside(new: re.Pattern[str], old: re.Pattern[str], text: str,
                                  skip: int) -> None:
    """`new` finds what `old` found, except where `old` found a match holding a `[` past its
    opening `skip` characters (a name with `[`, which no note has): there `new` may differ."""
    odd = [m.span() for m in old.finditer(text) if "[" in m.group(0)[skip:]]

    def clear(span: tuple[int, int]) -> bool:
        return not any(a < span[1] and span[0] < b for a, b in odd)

    assert [(m.span(), m.groups()) for m in new.finditer(text) if clear(m.span())] == [
        (m.span(), m.groups()) for m in old.finditer(text) if clear(m.span())]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PARTS), max_size=24))
def test_links_without_a_bracket_inside_are_read_as_before(parts: list[str]) -> None:
    text = "".join(parts)
    _same_where_no_bracket_inside(ask_evidence._LINK, _OLD_LINK, text, 2)
    _same_where_no_bracket_inside(ask_used.WIKI_LINK, _OLD_WIKI, text, 2)
    _same_where_no_bracket_inside(hooks_memory._CITED[1], _OLD_PATH, text, 0)
    odd = [m.span() for m in _OLD_TOOL.finditer(text) if "[" in m.group(0)[1:]]
    if not odd:
        assert [m.group(2) for m in hooks_memory._TOOL.finditer(text)
                if "read" in m.group(1)] == [m.group(1) for m in _OLD_TOOL.finditer(text)]
