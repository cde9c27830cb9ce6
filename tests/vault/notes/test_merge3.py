"""notes/merge3.py: diff3's merge of a planned edit over somebody else's. Generated texts:
changes to disjoint, separated line ranges are both made, every byte of each side outside
the other's changes kept; the same region changed differently is a conflict (None); the
merge of a side with itself, or with the base, is that side."""

from __future__ import annotations

import itertools
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vault.notes.merge3 import MAX_EDITS, _matched, holds, merge3

LINE = st.text(st.sampled_from("ab [] xy\t\u00e9"), max_size=6).map(lambda s: s + "\n")


@st.composite
def _split(draw: st.DrawFn) -> tuple[list[str], list[tuple[int, int]]]:
    """Unique base lines and a set of separated regions (start, end) of it, in order."""
    n = draw(st.integers(0, 30))
    base = [f"line {i} {draw(LINE)}" for i in range(n)]
    regions, at = [], 0
    while at < n:
        at += draw(st.integers(1, 4))  # at least one untouched line between two regions
        width = draw(st.integers(0, 3))
        if at + width > n:
            break
        regions.append((at, at + width))
        at += width + 1
    return base, regions


def _apply(base: list[str], edits: dict[int, tuple[int, list[str]]]) -> str:
    out, i = [], 0
    while i < len(base):
        if i in edits and edits[i][0] > i:
            end, new = edits[i]
            out.extend(new)
            i = end
            continue
        if i in edits:  # an insertion before line i
            out.extend(edits[i][1])
        out.append(base[i])
        i += 1
    return "".join(out)


@given(_split(), st.data())
def test_changes_to_separated_regions_are_both_made(
        split: tuple[list[str], list[tuple[int, int]]], data: st.DataObject) -> None:
    base, regions = split
    ours: dict[int, tuple[int, list[str]]] = {}
    theirs: dict[int, tuple[int, list[str]]] = {}
    for lo, hi in regions:
        side = data.draw(st.sampled_from([ours, theirs]))
        new = [f"{'ours' if side is ours else 'theirs'} {lo} {k} " + data.draw(LINE)
               for k in range(data.draw(st.integers(0 if hi > lo else 1, 3)))]
        side[lo] = (hi, new)
    both = {**ours, **theirs}
    assert merge3("".join(base), _apply(base, ours), _apply(base, theirs)) == _apply(base, both)


@given(st.lists(LINE, max_size=12), st.lists(LINE, max_size=12))
def test_a_side_merged_with_the_base_or_itself_is_that_side(a: list[str], b: list[str]) -> None:
    base, other = "".join(a), "".join(b)
    assert merge3(base, other, base) == other
    assert merge3(base, base, other) == other
    assert merge3(base, other, other) == other


@given(st.lists(LINE, min_size=1, max_size=10).map(lambda ls: [f"{i} {s}" for i, s in
                                                             enumerate(ls)]),
       st.data())
def test_one_line_changed_two_ways_is_a_conflict(base: list[str], data: st.DataObject) -> None:
    i = data.draw(st.integers(0, len(base) - 1))
    ours, theirs = list(base), list(base)
    ours[i], theirs[i] = "ours\n", "theirs\n"
    assert merge3("".join(base), "".join(ours), "".join(theirs)) is None


def test_a_moved_notes_link_is_rewritten_under_an_editors_appended_line() -> None:
    base = "Ref 1 links [[Target]].\nAlso [[Sib]].\n"
    ours = "Ref 1 links [[Target Moved]].\nAlso [[Sib]].\n"
    theirs = base + "An editor's line.\n"
    assert merge3(base, ours, theirs) == ours + "An editor's line.\n"
    assert merge3(base, ours, "Edited [[Target]] here.\nAlso [[Sib]].\n") is None
    no_newline = "Ref 1 links [[Target]].\nAlso [[Sib]]."  # last line without its newline
    assert merge3(no_newline, ours[:-1], "Top.\n" + no_newline) == "Top.\n" + ours[:-1]


@given(st.lists(LINE, min_size=1, max_size=10).map(lambda ls: [f"{i} {s}" for i, s in
                                                             enumerate(ls)]),
       st.data())
def test_lines_replaced_one_for_one_merge_next_to_their_edits(
        base: list[str], data: st.DataObject) -> None:
    """Ours replaces some lines one for one (a link rewrite); theirs inserts lines anywhere,
    even right beside them, and changes or removes other lines: all of theirs is kept and
    each line ours replaced is replaced in theirs."""
    n = len(base)
    mine = set(data.draw(st.lists(st.integers(0, n - 1), min_size=1, unique=True)))
    ours = [f"ours {line}" if i in mine else line for i, line in enumerate(base)]
    theirs: list[str] = []
    expected: list[str] = []
    for i, line in enumerate(base):
        for k in range(data.draw(st.integers(0, 2))):
            theirs.append(f"added {i} {k}\n")
            expected.append(f"added {i} {k}\n")
        if i in mine:
            theirs.append(line)
            expected.append(ours[i])
        elif (what := data.draw(st.sampled_from(["keep", "edit", "drop"]))) != "drop":
            kept = line if what == "keep" else f"edited {line}"
            theirs.append(kept)
            expected.append(kept)
    assert merge3("".join(base), "".join(ours), "".join(theirs)) == "".join(expected)


def test_a_merge_made_before_is_held_not_a_conflict() -> None:
    """A recovery killed after writing the merge finds the merged text: `merge3` calls it a
    conflict (the replaced lines are no longer the base's), `holds` says it is made."""
    base = "See [[Target]].\n"
    ours = "See [[Target Moved]].\n"
    merged = merge3(base, ours, base + "An editor's line.\n")
    assert merged == ours + "An editor's line.\n"
    assert merge3(base, ours, merged) is None and holds(base, ours, merged)
    assert not holds(base, ours, base + "An editor's line.\n")
    assert not holds(base, ours, "Rewritten by hand.\n")


@given(st.lists(st.sampled_from("abc"), max_size=14), st.lists(st.sampled_from("abc"),
                                                              max_size=14))
def test_the_matching_is_a_longest_common_subsequence(a: list[str], b: list[str]) -> None:
    at = _matched(a, b)
    pairs = [(i, j) for i, j in enumerate(at) if j is not None]
    assert all(a[i] == b[j] for i, j in pairs)
    assert all(p[1] < q[1] for p, q in itertools.pairwise(pairs))
    best = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            best[i][j] = (best[i + 1][j + 1] + 1 if a[i] == b[j]
                          else max(best[i + 1][j], best[i][j + 1]))
    assert len(pairs) == best[0][0]


@pytest.mark.parametrize("kinds", [10, 0])
def test_a_long_note_of_repeated_lines_merges_in_linear_cpu(kinds: int) -> None:
    """4,000 lines, a link every 50th, an editor's change every 97th and a line added: on
    difflib's SequenceMatcher (autojunk off) 6 s of CPU with 10 kinds of line (338 s at
    16,000: quadratic and more, under the vault's write lock); Myers' diff: milliseconds."""
    lines = [f"line {i % kinds if kinds else i}\n" for i in range(4000)]
    lines[::50] = [f"see [[old]] {i}\n" for i in range(0, 4000, 50)]
    theirs = [f"edited {s}" if i % 97 == 7 and i % 50 else s for i, s in enumerate(lines)]
    theirs.insert(2000, "added\n")
    base, ours = "".join(lines), "".join(lines).replace("[[old]]", "[[new]]")
    cpu = time.process_time()
    merged = merge3(base, ours, "".join(theirs))
    assert time.process_time() - cpu < 1.0
    assert merged == "".join(theirs).replace("[[old]]", "[[new]]")


def test_past_max_edits_the_merge_is_a_conflict_not_a_cost() -> None:
    base = "".join(f"line {i % 3}\n" for i in range(3 * MAX_EDITS))
    ours = base.replace("line 0", "[[new]]")
    theirs = "".join(f"other {i % 3}\n" for i in range(3 * MAX_EDITS + 1))
    cpu = time.process_time()
    assert merge3(base, ours, theirs) is None
    assert time.process_time() - cpu < 30.0
