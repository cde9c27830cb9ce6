"""Math in Obsidian notes (`$...$`, `$$...$$`, rendered by MathJax): a `[[x]]` inside it (an
Iverson bracket, denotational semantics' ⟦e⟧ typed `[[e]]`) is no link, a `#` no tag, a `# `
line no heading, so no backlink, no dangling link, and a move leaves the formula's bytes alone;
dollars as prices ("$5 and $10") are text and the links after them stay links."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from vault import Vault
from vault.notes.markdown_scan import scan_body

MATH = ["${}$", "$x = {} + 1$", "$$\n\\sum {}\n$$", "$${}$$", "$$\n# {}\n$$",
        "$\\mathcal{{E}}{}_\\rho$", "$$\na\n{} b\n$$"]
PROSE = ["Costs $5 and $10, see {}.", "{} costs \\$3.", "Pay $ 4 for {} $ now.",
         "From $2 to {}.", "`$` {} `$`", "{}"]


def _texts(rng: random.Random) -> tuple[str, int, int]:
    """A note of paragraphs, each a formula holding `[[Target]]` (or a tag) or prose holding
    it as a link; (text, links outside math, tags outside math)."""
    parts, links, tags = [], 0, 0
    for _ in range(rng.randint(2, 7)):
        inside = rng.random() < 0.5
        item = rng.choice(["[[Target]]", "[[Target#Sec|t]]", "#mathtag" if inside else "#prose"])
        form = rng.choice(MATH if inside else PROSE)
        parts.append(form.format(item))
        if not inside:
            links += item.startswith("[[")
            tags += item.startswith("#")
    return "\n\n".join(parts) + "\n", links, tags


@pytest.mark.parametrize("seed", range(6))
def test_links_and_tags_inside_math_do_not_count(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(60):
        text, links, tags = _texts(rng)
        scan = scan_body(text)
        assert len(scan.sites) == links and len(scan.tags) == tags, text
        assert all(h == "" or "Target" not in h for h in scan.headings), text


@pytest.mark.parametrize("seed", range(3))
def test_a_move_leaves_math_alone_and_follows_the_links_around_it(tmp_path: Path,
                                                                  seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / "v"
    root.mkdir()
    (root / "Target.md").write_text("# Target\n\n## Sec\n", encoding="utf-8")
    notes: dict[str, tuple[str, int]] = {}
    for i in range(8):
        text, links, _ = _texts(rng)
        notes[f"n{i}.md"] = (text, links)
        (root / f"n{i}.md").write_text(text, encoding="utf-8")
    with Vault.init(root) as v:
        for name, (text, links) in notes.items():
            assert [ln.resolved for ln in v.links(name)] == ["Target.md"] * links, text
        assert v.backlinks("Target") == sorted(n for n, (_, k) in notes.items() if k)
        v.move("Target", "moved/Renamed")
        for name, (text, links) in notes.items():
            after = (root / name).read_text(encoding="utf-8")
            assert after.count("[[Target") == text.count("[[Target") - links, (text, after)
            assert [ln.resolved for ln in v.links(name)] == ["moved/Renamed.md"] * links


# notes whose names hold a dollar: tickers (cashtags), prices, a price tier
DOLLAR_NAMES = ["$AAPL", "$TSLA", "Cost $5", "$$ tier", "US$ bonds", "$x$"]
LINK_FORMS = ["[[{}]]", "[[{}|shown]]", "![[{}]]", "[[{}#Sec]]"]


@pytest.mark.parametrize("seed", range(3))
def test_a_dollar_inside_a_wiki_link_opens_no_math(tmp_path: Path, seed: int) -> None:
    """`[[$AAPL]] and [[$TSLA]]`: each link starts before its `$`, so the two dollars are
    no formula `$AAPL]] and [[$` hiding both links (they were dropped: no backlink, and a
    move of `$AAPL.md` left them naming nothing); math beside them still hides its own."""
    rng = random.Random(seed)
    root = tmp_path / "v"
    root.mkdir()
    for name in DOLLAR_NAMES:
        (root / f"{name}.md").write_text("# t\n\n## Sec\n", encoding="utf-8")
    linked: dict[str, list[str]] = {}
    for i in range(8):
        names = [rng.choice(DOLLAR_NAMES) for _ in range(rng.randint(2, 5))]
        words = [rng.choice(LINK_FORMS).format(n) for n in names]
        line = " and ".join(words) + rng.choice(["", " cost $5", " as $x + [[y]]$ says"])
        (root / f"n{i}.md").write_text(f"{line}\n\n$$[[in math]]$$\n", encoding="utf-8")
        linked[f"n{i}.md"] = names
        assert [s.link.target for s in scan_body(line).sites] == names, line
    with Vault.init(root) as v:
        for note, names in linked.items():
            assert [ln.resolved for ln in v.links(note)] == [f"{n}.md" for n in names]
        v.move("$AAPL", "moved/Apple")
        for note, names in linked.items():
            want = [("moved/Apple" if n == "$AAPL" else n) + ".md" for n in names]
            assert [ln.resolved for ln in v.links(note)] == want


@pytest.mark.parametrize("seed", range(4))
def test_a_price_tier_after_text_is_no_math_across_paragraphs(seed: int) -> None:
    """A `$$` after text on its line ("Price: $$") closes in its paragraph or is a dollar:
    a restaurant list of price tiers read everything between two tiers, paragraphs apart, as
    one formula (its headings, tags and links gone). A block `$$` closed in its paragraph
    is still math."""
    rng = random.Random(seed)
    for _ in range(40):
        parts, heads, links, tags = [], 0, 0, 0
        for i in range(rng.randint(2, 6)):
            tier = rng.choice(["$", "$$", "$$$", "$$$$"])
            parts.append(f"## Place {i}\nPrice: {tier}\nTags: #food [[City {i}]]")
            heads, tags, links = heads + 1, tags + 1, links + 1
            if rng.random() < 0.5:  # inline display math, closed in its paragraph
                parts.append(rng.choice(["As $$[[hidden]]$$ says.", "Rate $$x$$ and [[shown]]."]))
                links += "shown" in parts[-1]
        if rng.random() < 0.5:
            parts.insert(rng.randrange(len(parts) + 1), "$$\n[[in block]]\n#blocktag\n$$")
        text = "\n\n".join(parts) + "\n"
        scan = scan_body(text)
        assert [h for h in scan.headings if h.startswith("Place")] == [
            f"Place {i}" for i in range(heads)], text
        assert (len(scan.sites), len(scan.tags)) == (links, tags), text
