"""A `$$` at a line's start opens display math only up to the next blank line, as Obsidian's
reading view renders a note section by section (vault/notes/math_spans.py): a money legend
("$$ = mid-range" on its own line) or a formula broken by a blank line hid every heading,
link and tag down to the next `$$`, paragraphs away."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from vault import Vault
from vault.notes.markdown_scan import scan_body

# lines that start with `$$` and do not close it in their paragraph
STRAY = ["$$ = mid-range", "$$$ = expensive", "$$", "$$\n\\sum_i x_i", "$$ budget tier",
         "> $$ quoted price"]
CLOSED = ["$$\n[[in math]] \\cdot #notatag\n$$", "$$[[in math]]$$", "$$\n# [[in math]]\n$$"]


def _note(rng: random.Random) -> tuple[str, list[str], list[str], list[str]]:
    """Paragraphs: stray `$$` lines, closed display math, and sections each with a heading,
    a link and a tag; (text, the links, tags and headings outside math, in order)."""
    parts: list[str] = []
    links: list[str] = []
    tags: list[str] = []
    heads: list[str] = []
    for i in range(rng.randint(3, 8)):
        r = rng.random()
        if r < 0.35:
            parts.append(rng.choice(STRAY))
        elif r < 0.5:
            parts.append(rng.choice(CLOSED))
        else:
            parts.append(f"## Part {i}\nSee [[Note {i}]] #topic{i}")
            heads.append(f"Part {i}")
            links.append(f"Note {i}")
            tags.append(f"topic{i}")
    return "\n\n".join(parts) + "\n", links, tags, heads


@pytest.mark.parametrize("seed", range(4))
def test_a_dollar_pair_at_a_line_start_hides_nothing_past_its_paragraph(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(80):
        text, links, tags, heads = _note(rng)
        scan = scan_body(text)
        assert [s.link.target for s in scan.sites] == links, text
        assert (list(scan.tags), list(scan.headings)) == (tags, heads), text


@pytest.mark.parametrize("seed", range(2))
def test_a_legend_of_price_tiers_keeps_the_links_below_it(tmp_path: Path, seed: int) -> None:
    """The vault's links and backlinks, then a move, past `$$` legend lines."""
    rng = random.Random(seed)
    root = tmp_path / "v"
    root.mkdir()
    (root / "Note 0.md").write_text("# zero\n", encoding="utf-8")
    for i in range(6):
        legend = rng.choice(STRAY[:3])
        text = f"Legend:\n\n{legend}\n\n## Cafes\n\n[[Note 0]] #coffee\n\n$$$ = expensive\n"
        (root / f"n{i}.md").write_text(text, encoding="utf-8")
    with Vault.init(root) as v:
        assert v.backlinks("Note 0") == [f"n{i}.md" for i in range(6)]
        v.move("Note 0", "moved/Zero")
        for i in range(6):
            assert [ln.resolved for ln in v.links(f"n{i}.md")] == ["moved/Zero.md"]
            assert "[[moved/Zero]]" in (root / f"n{i}.md").read_text(encoding="utf-8") or \
                "[[Zero]]" in (root / f"n{i}.md").read_text(encoding="utf-8")
