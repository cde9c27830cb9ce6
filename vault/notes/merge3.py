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
outside the changed regions is kept. The matching of two texts' lines is Myers' O((N+M)D) diff
("An O(ND) Difference Algorithm and Its Variations", 1986): a longest common subsequence,
deterministic, its cost linear in the notes' length for a few edits (difflib's
`SequenceMatcher` without its junk heuristic took 338 s of CPU on 16,000 lines of 10 kinds,
under the write lock: NOTES-REV2.md). Past `MAX_EDITS` line edits it matches nothing, which
makes the merge a conflict: the file is left and reported, never merged wrongly (each region
is checked against `base`), except where the two have as many lines (a link rewrite of more than
`MAX_EDITS / 2` lines): those match line by line.
"""

from __future__ import annotations

from collections.abc import Sequence

MAX_EDITS = 2000
"""Line insertions plus deletions past which two texts are not matched (the cost bound)."""


def _matched(base: Sequence[str], other: Sequence[str]) -> list[int | None]:
    """For each line of `base`, the index of the line of `other` it is matched with: a longest
    common subsequence (Myers); past `MAX_EDITS` edits, position by position where the two
    have as many lines (a one-for-one rewrite of many lines), else nothing."""
    n, m = len(base), len(other)
    at: list[int | None] = [None] * n
    off = MAX_EDITS + 1
    v = [0] * (2 * off + 1)
    trace: list[list[int]] = []
    for d in range(MAX_EDITS + 1):
        trace.append(v[off - d - 1:off + d + 2])  # v[k] for k in -d-1..d+1, before step d
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[off + k - 1] < v[off + k + 1]):
                x = v[off + k + 1]
            else:
                x = v[off + k - 1] + 1
            y = x - k
            while x < n and y < m and base[x] == other[y]:
                x, y = x + 1, y + 1
            v[off + k] = x
            if x >= n and y >= m:
                return _back(trace, at, n, m)
    return [i if base[i] == other[i] else None for i in range(n)] if n == m else at


def _back(trace: list[list[int]], at: list[int | None], x: int, y: int) -> list[int | None]:
    """Walk Myers' trace back from (x, y) to (0, 0), marking the diagonal (matched) steps."""
    for d in range(len(trace) - 1, -1, -1):
        v, k = trace[d], x - y  # v[k + d + 1] is V[k] (the slice _matched kept)
        prev_k = k + 1 if k == -d or (k != d and v[k + d] < v[k + d + 2]) else k - 1
        prev_x = v[prev_k + d + 1]
        prev_y = prev_x - prev_k
        while x > prev_x and y > prev_y:
            x, y = x - 1, y - 1
            at[x] = y
        x, y = prev_x, prev_y
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
