"""A move never turns its rewritten links into text (session 41, DISK41).

A new name holding a backtick, `$`, `%%` or `<!--` can open code, math or a comment with a
character a referrer already holds (`` `code` ``, `$x$`, `%% note %%`, `-->`), or on its own
(`%%` with no close hides the rest of the note): the link `rmh move` wrote was then text.
Nothing reported it (`doctor` lists no dangling link: there is no link), and the note lost its
backlinks for good. On main, moves to generated names of such pieces lost 1-3 of 3 referrers'
links. Now a move whose rewritten links would not all be read as links is refused
(`path_refused`), changing nothing.

Real processes (`python -m harness`), one vault, the note moved from name to name along a
seeded chain of generated names; after each step every referrer still links to it (its
backlinks) or the move was refused and no byte changed."""

from __future__ import annotations

import json
import random
from pathlib import Path

from tests.harness.test_cli_notes import rmh

PIECES = ("`", "$", "%%", "<!--", "-->", "a", "b", " ", "é", "~~", "*", "<b>", "=")
REFERRERS = {
    "R0.md": "ref [[Hub]] end $5 and %% note %% --> `x`\n",
    "R1.md": "ref [md](Hub.md) end and $x$ `code`\n",
    "R2.md": "ref [[Hub#Part]]\n",
    "R3.md": "![[Hub]] then `one` and $2$\n",
}


def names(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        name = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 4)))
        out.append("n" + name)  # never empty, never a leading dash or dot
    return out


def files(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(root.glob("*.md"))}


def test_a_move_to_any_name_keeps_every_link_a_link(tmp_path: Path) -> None:
    root = tmp_path / "v"
    root.mkdir()
    (root / "Hub.md").write_text("# Hub\n## Part\ntext ^blk\n", encoding="utf-8")
    for name, text in REFERRERS.items():
        (root / name).write_text(text, encoding="utf-8")
    v = ("--vault", str(root))
    assert rmh(*v, "init", "--no-dense").returncode == 0
    here, moved, refused, lost = "Hub", 0, 0, []
    for new in names(41, 24):
        before = files(root)
        r = rmh(*v, "move", "--json", "--", here, new)
        assert "Traceback" not in r.stderr, r.stderr
        if r.returncode != 0:
            assert r.returncode == 1, r.stderr
            assert json.loads(r.stdout)["error"]["kind"] == "path_refused", r.stdout
            assert files(root) == before, new
            refused += 1
            continue
        moved += 1
        here = new
        out = rmh(*v, "backlinks", "--json", "--", here)
        assert out.returncode == 0, out.stderr
        if sorted(json.loads(out.stdout)["backlinks"]) != sorted(REFERRERS):
            lost.append((new, json.loads(out.stdout)["backlinks"]))  # main: links made text
    assert not lost, lost
    assert moved and refused, (moved, refused)  # both sides of the rule were walked
