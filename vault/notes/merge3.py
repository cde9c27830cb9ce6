"""A three-way merge of line-based text: a planned edit replayed over somebody else's.

A move plans each referrer's rewrite as (text then, text after the rewrite). When an editor
saved the referrer in between (a crash left the plan to the next process, or the save fell
between the plan and the swap), the planned text would undo their change, and leaving the file
as it is leaves its links to the moved note dangling. `merge3(base, ours, theirs)` is diff3's
merge (Khanna, Kuber and Pierce, "A Formal Investigation of Diff3", FSTTCS 2007): lines where
`base`, `ours` and `theirs` all agree are stable; each region between stable lines is taken
from whichever side changed it (both alike: that text). Where both changed a region, it is
merged line by line when `ours` replaced its lines one for one (a link rewrite never adds or
removes a line) and `theirs` kept every line `ours` replaced: their added, removed and other
changed lines stay, ours replace the lines they kept. Otherwise the region is a conflict and
the merge gives None (the caller keeps `theirs`: their bytes win).

Lines keep their endings (`str.splitlines(keepends=True)`), so every byte of either side
outside the changed regions is kept. The matching is difflib's `SequenceMatcher` without its
junk heuristic: deterministic, not always minimal (a longer matching of equal lines can only
make fewer regions, never a wrong merge: each region is still checked against `base`).
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher


def _matched(base: Sequence[str], other: Sequence[str]) -> list[int | None]:
    """For each line of `base`, the index of the line of `other` it is matched with."""
    at: list[int | None] = [None] * len(base)
    for block in SequenceMatcher(None, base, other, autojunk=False).get_matching_blocks():
        for k in range(block.size):
            at[block.a + k] = block.b + k
    return at


def _region(base: Sequence[str], ours: Sequence[str],
            theirs: Sequence[str]) -> Sequence[str] | None:
    if list(ours) == list(base):
        return theirs
    if list(theirs) == list(base) or list(ours) == list(theirs):
        return ours
    if len(ours) != len(base):
        return None
    # both changed the region: line by line where ours replaced lines one for one (as a link
    # rewrite does) and theirs kept each line ours replaced (an editor's line added next to
    # it, or another line changed, is no conflict)
    at = _matched(base, theirs)
    merged = list(theirs)
    for i, (was, now) in enumerate(zip(base, ours, strict=True)):
        if was != now:
            if (j := at[i]) is None:
                return None
            merged[j] = now
    return merged


def merge3(base: str, ours: str, theirs: str) -> str | None:
    """`theirs` with the change from `base` to `ours` made where they did not change the same
    lines; None when both changed a region differently (module docstring)."""
    b = base.splitlines(keepends=True)
    o = ours.splitlines(keepends=True)
    t = theirs.splitlines(keepends=True)
    to_o, to_t = _matched(b, o), _matched(b, t)
    out: list[str] = []
    ib = io = it = 0
    while True:
        k = next((k for k in range(ib, len(b))
                  if (ko := to_o[k]) is not None and (kt := to_t[k]) is not None
                  and ko >= io and kt >= it), None)
        eo, et = (len(o), len(t)) if k is None else (to_o[k], to_t[k])
        assert eo is not None and et is not None
        end = len(b) if k is None else k
        region = _region(b[ib:end], o[io:eo], t[it:et])
        if region is None:
            return None
        out.extend(region)
        if k is None:
            return "".join(out)
        out.append(t[et])  # a stable line: the same in all three
        ib, io, it = k + 1, eo + 1, et + 1


def holds(base: str, ours: str, theirs: str) -> bool:
    """Whether `theirs` already holds every line `ours` changed from `base` (matched in
    order): a merge made before, which `merge3` would call a conflict (its lines are no
    longer `base`'s)."""
    b = base.splitlines(keepends=True)
    o = ours.splitlines(keepends=True)
    at = _matched(o, theirs.splitlines(keepends=True))
    changed = [i for i, _ in enumerate(o) if i >= len(b) or o[i] != b[i]]
    return len(o) == len(b) and all(at[i] is not None for i in changed)
