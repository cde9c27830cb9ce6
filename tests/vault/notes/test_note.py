"""vault.notes.note: frontmatter, links, tags, headings, and byte-preserving edits of one note."""

from __future__ import annotations

from typing import Any

import pytest

from vault.notes.note import (
    Link,
    NoteFormatError,
    parse,
    rewrite_links,
    update_frontmatter,
)


def only_link(text: str) -> Link:
    links = parse(text).links
    assert len(links) == 1, links
    return links[0]


# -- links -----------------------------------------------------------------------------------------

LINK_FORMS: list[tuple[str, tuple[str, str | None, str | None, str | None, bool, str]]] = [
    ("[[Target]]", ("Target", None, None, None, False, "wiki")),
    ("[[Target|shown]]", ("Target", None, None, "shown", False, "wiki")),
    ("[[Target#Heading]]", ("Target", "Heading", None, None, False, "wiki")),
    ("[[Target#Heading|shown]]", ("Target", "Heading", None, "shown", False, "wiki")),
    ("[[Target#^blk-1]]", ("Target", None, "blk-1", None, False, "wiki")),
    ("[[Target#^blk|shown]]", ("Target", None, "blk", "shown", False, "wiki")),
    ("![[Target]]", ("Target", None, None, None, True, "wiki")),
    ("![[pic.png|100]]", ("pic.png", None, None, "100", True, "wiki")),
    ("[[Target.md]]", ("Target", None, None, None, False, "wiki")),
    ("[[Folder/Sub/Target]]", ("Folder/Sub/Target", None, None, None, False, "wiki")),
    ("[[#Local heading]]", ("", "Local heading", None, None, False, "wiki")),
    ("[[#^blk]]", ("", None, "blk", None, False, "wiki")),
    ("[[ Spaced ]]", ("Spaced", None, None, None, False, "wiki")),
    ("[[H#One#Two]]", ("H", "One#Two", None, None, False, "wiki")),
    ("| [[Target\\|shown]] |", ("Target", None, None, "shown", False, "wiki")),
    ("[[Ünïcode Nöte]]", ("Ünïcode Nöte", None, None, None, False, "wiki")),
    ("[text](Target.md)", ("Target", None, None, "text", False, "markdown")),
    ("[text](path/to/Target.md)", ("path/to/Target", None, None, "text", False, "markdown")),
    ("[t](../up/Target.md)", ("../up/Target", None, None, "t", False, "markdown")),
    ("[t](My%20Note.md)", ("My Note", None, None, "t", False, "markdown")),
    ("[t](<My Note.md>)", ("My Note", None, None, "t", False, "markdown")),
    ("[t](<My Note.md#Sec>)", ("My Note", "Sec", None, "t", False, "markdown")),
    ("[t](Note.md#^b1)", ("Note", None, "b1", "t", False, "markdown")),
    ('[t](Note.md "a title")', ("Note", None, None, "t", False, "markdown")),
    ("[](Note.md)", ("Note", None, None, None, False, "markdown")),
    ("![](Note.md)", ("Note", None, None, None, True, "markdown")),
    ("[t](Note.MD)", ("Note", None, None, "t", False, "markdown")),
    # Obsidian's links without `.md` (the note `T.md`, resolved as `[t](T.md)` is)
    ("[t](Target)", ("Target", None, None, "t", False, "markdown")),
    ("[t](Some%20Note)", ("Some Note", None, None, "t", False, "markdown")),
    ("[t](folder/note)", ("folder/note", None, None, "t", False, "markdown")),
    ("[t](<My Note>)", ("My Note", None, None, "t", False, "markdown")),
    ("[t](Some%20Note#Sec)", ("Some Note", "Sec", None, "t", False, "markdown")),
    ("[t](../up/Note#^b1)", ("../up/Note", None, "b1", "t", False, "markdown")),
    ("[t](Note%202.0)", ("Note 2.0", None, None, "t", False, "markdown")),
    ("[t](Dr.%20Who)", ("Dr. Who", None, None, "t", False, "markdown")),
    ("![](Some%20Note)", ("Some Note", None, None, None, True, "markdown")),
    # balanced parentheses in the destination (CommonMark; Obsidian leaves them unencoded)
    ("[t](Black%20Swan%20(book).md)", ("Black Swan (book)", None, None, "t", False, "markdown")),
    ("[t](a/(x)%20b.md#Sec)", ("a/(x) b", "Sec", None, "t", False, "markdown")),
    ("[t](Swan%20(book))", ("Swan (book)", None, None, "t", False, "markdown")),
    ("[t](f(1)(2).md 'x')", ("f(1)(2)", None, None, "t", False, "markdown")),
    ("[t](Note.md (a title))", ("Note", None, None, "t", False, "markdown")),  # CommonMark
]


@pytest.mark.parametrize(("syntax", "expected"), LINK_FORMS)
def test_every_link_form(syntax: str, expected: tuple[Any, ...]) -> None:
    text = f"before {syntax} after\n"
    link = only_link(text)
    got = (link.target, link.heading, link.block, link.alias, link.embed, link.kind)
    assert got == expected
    written = text[link.start : link.end]
    assert written == syntax.strip("| ")


@pytest.mark.parametrize(
    "text",
    [
        "[site](http://example.com/a.md)",
        "[site](https://example.com)",
        "[mail](mailto:a@b.md)",
        "[app](obsidian://open?vault=x)",
        "[proto](//host/a.md)",
        "[img](pic.png)",
        "[doc](file.pdf)",
        "[anchor](#heading)",
        "[anchor](#Some%20Heading)",
        "[img](pic.PNG)",
        "[arc](archive.tar.gz)",
        "[site](www.example.com)",
        "[site](example.com)",
        "[folder](folder/)",
        "[up](..)",
        "[here](.)",
        "[t](a/.md)",
        "[t](Some Note)",  # a space must be %-encoded (or the path put in <...>)
        "[[]]",
        "[[ ]]",
        "[[|alias only]]",
        "[[T\nT]]",
        "[t](.md)",
        "plain [brackets] and (parens)",
        "[t](a(b.md)",  # unbalanced parentheses end no destination
    ],
)
def test_not_links(text: str) -> None:
    assert parse(text).links == ()


def test_links_in_text_order_with_offsets() -> None:
    text = "a [[One]] b [two](Two.md) c ![[Three]] d [[One]]"
    links = parse(text).links
    assert [ln.target for ln in links] == ["One", "Two", "Three", "One"]
    assert [text[ln.start : ln.end] for ln in links] == [
        "[[One]]",
        "[two](Two.md)",
        "![[Three]]",
        "[[One]]",
    ]


def test_frontmatter_links_are_included_with_offsets_into_the_text() -> None:
    text = '---\nrelated: "[[X]]"\nlist:\n  - "[[Y|y]]"\n# not [[Comment]]\n---\n[[Z]]\n'
    note = parse(text)
    assert [ln.target for ln in note.links] == ["X", "Y", "Z"]
    assert [text[ln.start : ln.end] for ln in note.links] == ["[[X]]", "[[Y|y]]", "[[Z]]"]
    assert note.links[1].alias == "y"


def test_frontmatter_link_offsets_count_characters_with_crlf_and_non_ascii() -> None:
    text = "---\r\ntitle: ééé 😀\r\nrel: [\"[[Ä]]\", '[[B|b]]']\r\n---\r\nx [[C]]"
    links = parse(text).links
    assert [text[ln.start : ln.end] for ln in links] == ["[[Ä]]", "[[B|b]]", "[[C]]"]


# -- code and comments -----------------------------------------------------------------------------

EXCLUDED = [
    "```\n[[Fenced]] #fenced\n```\n",
    "```python\n[[Fenced]]\n```\n",
    "~~~\n[[Tilde]]\n~~~\n",
    "````\n```\n[[Inner]]\n```\n````\n",  # a shorter fence does not close a longer one
    "```\n~~~\n[[Mixed]]\n```\n",  # a tilde line does not close a backtick fence
    "```\n[[Unclosed]] to the end\n",
    "   ```\n[[Indented fence]]\n   ```\n",
    "> ```\n> [[Quoted fence]]\n> ```\n",
    "`[[Inline]]` `#inline`",
    "``[[Double ` tick]]``",
    "```[[three ticks inline]]```",
    "<!-- [[Html comment]] #c -->",
    "<!--\n[[Multi line]]\n-->",
    "%% [[Obsidian comment]] #c %%",
    "%%\n[[Block comment]]\n%%",
    "%% [[Unclosed comment]] to the end",
]


@pytest.mark.parametrize("snippet", EXCLUDED)
def test_code_and_comments_hide_links_and_tags(snippet: str) -> None:
    note = parse(f"[[Before]] #before\n{snippet}")
    assert [ln.target for ln in note.links] == ["Before"]
    assert note.tags == ("before",)


def test_text_after_a_closed_fence_or_span_is_scanned() -> None:
    text = "```\n[[No]]\n```\n[[Yes1]]\n`[[No]]` [[Yes2]] ``a`b`` [[Yes3]] <!-- x --> [[Yes4]]"
    assert [ln.target for ln in parse(text).links] == ["Yes1", "Yes2", "Yes3", "Yes4"]


def test_unmatched_backtick_does_not_hide_the_rest() -> None:
    assert [ln.target for ln in parse("a ` b [[Seen]] #seen").links] == ["Seen"]
    assert parse("a ` b [[Seen]] #seen").tags == ("seen",)
    assert [ln.target for ln in parse("``a` [[Seen]]").links] == ["Seen"]


def test_inline_code_does_not_cross_a_blank_line() -> None:
    assert [ln.target for ln in parse("`open\n\n[[Seen]] `").links] == ["Seen"]


# A `<!--` inside a line, not closed in its paragraph, is literal text (CommonMark 6.6, which
# Obsidian follows): the links and tags after it are read. One that opens a line (after
# indentation, `>` or a list marker) opens an HTML block that runs to `-->` or the end (4.6).
_SENTENCES = ["a <!-- b", "write <!--x", "**<!--** here", "[[Seen0]] <!-- ", "1 <!- <!--"]
_AFTER = [" [[Seen1]] #seen", "\n[[Seen1]] #seen", "\n\n[[Seen1]] #seen", "\n\n> [[Seen1]] #seen"]


@pytest.mark.parametrize("sentence", _SENTENCES)
@pytest.mark.parametrize("after", _AFTER)
def test_an_unclosed_comment_inside_a_line_hides_nothing(sentence: str, after: str) -> None:
    note = parse(f"{sentence}{after}\n\nlater [[Seen2]] -->")
    assert [ln.target for ln in note.links if ln.target != "Seen0"] == ["Seen1", "Seen2"]
    assert note.tags == ("seen",)


@pytest.mark.parametrize("prefix", ["", "   ", "> ", "- ", "1. ", "\t* ", "> - "])
def test_a_comment_opening_a_line_hides_the_rest_or_up_to_its_end(prefix: str) -> None:
    assert [ln.target for ln in parse(f"[[A]]\n{prefix}<!-- x\n\n[[No]] #no").links] == ["A"]
    note = parse(f"[[A]]\n{prefix}<!-- x\n\n[[No]]\n-->[[B]]")
    assert [ln.target for ln in note.links] == ["A", "B"]


def test_an_inline_comment_closes_within_its_paragraph_only() -> None:
    assert [ln.target for ln in parse("a <!-- x\n[[No]] --> [[A]]").links] == ["A"]
    assert [ln.target for ln in parse("a <!-- x\n\n[[B]] --> [[A]]").links] == ["B", "A"]


def test_backtick_fence_info_string_with_backtick_is_not_a_fence() -> None:
    assert [ln.target for ln in parse("``` a`b\n[[Seen]]\n").links] == ["Seen"]


# -- tags and headings -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tags"),
    [
        ("#tag", ("tag",)),
        ("a #tag b", ("tag",)),
        ("#nested/tag/deep", ("nested/tag/deep",)),
        ("#tag-with_dash", ("tag-with_dash",)),
        ("#ünïcode #日本語", ("ünïcode", "日本語")),
        ("#tag, #other.", ("tag", "other")),
        ("# Heading\n## Sub", ()),
        ("#123 #2024", ()),
        ("#123abc #y2024", ("123abc", "y2024")),
        ("http://x.org/#frag https://y/a#b", ()),
        ("a#b word#tag", ()),
        ("[[Note#heading]]", ()),
        ("[t](Note.md#frag)", ()),
        ("#Tag #tag #TAG", ("Tag",)),
        ("\t#tab\n#line", ("tab", "line")),
        ("## Title #intitle", ("intitle",)),
        # as Obsidian: not all digits is enough (`-`, `/`, `_` count), emoji are tag characters,
        # punctuation ends a tag
        ("#2024-05 #2024/q1 #1_000", ("2024-05", "2024/q1", "1_000")),
        ("#\U0001f680rocket #\U0001f4da/books #\u2705\ufe0f",
         ("\U0001f680rocket", "\U0001f4da/books", "\u2705\ufe0f")),
        ("#tag\u2019s #a.b #c:d #e(f) #g;h #i! #j? #k] #l\"m #n'o", ("tag", *"acegijkln")),
    ],
)
def test_inline_tags(text: str, tags: tuple[str, ...]) -> None:
    assert parse(text).tags == tags


@pytest.mark.parametrize(
    ("fm", "tags"),
    [
        ("tags: [a, '#b', nested/c]", ("a", "b", "nested/c")),
        ("tags:\n  - a\n  - b", ("a", "b")),
        ("tags: a, b c", ("a", "b", "c")),
        ("tags: single", ("single",)),
        ("tags: 2024", ("2024",)),
        ("tags:", ()),
        ("tag: old", ("old",)),
        ("tags: [A, a, B]", ("A", "B")),
        # the keys in any case, every one in the block's order (Obsidian's /^tags?$/i)
        ("Tags: [a, b]", ("a", "b")),
        ("TAG: x y", ("x", "y")),
        ("tag: one\nTags: [two]\ntags: three", ("one", "two", "three")),
        ("t\u00e4gs: [x]\ntagsx: [y]\nmytags: [z]", ()),
    ],
)
def test_frontmatter_tags(fm: str, tags: tuple[str, ...]) -> None:
    assert parse(f"---\n{fm}\n---\nbody\n").tags == tags


def test_tags_order_of_first_appearance_deduplicated_case_insensitively() -> None:
    note = parse("---\ntags: [Zeta, alpha]\n---\n#beta #ALPHA #zeta #gamma\n")
    assert note.tags == ("Zeta", "alpha", "beta", "gamma")


@pytest.mark.parametrize(
    ("fm", "aliases"),
    [
        ("aliases: [Bob, Bobby]", ("Bob", "Bobby")),
        ("aliases:\n  - Bob\n  - 'Robert, Jr'", ("Bob", "Robert, Jr")),
        ("aliases: Bob, Bobby", ("Bob", "Bobby")),
        ("alias: Bob", ("Bob",)),
        ("aliases: [Bob, Bob, null]", ("Bob",)),
        ("aliases:", ()),
        ("Aliases: [Bob]", ("Bob",)),
        ("ALIAS: Bob, Bobby", ("Bob", "Bobby")),
        ("Alias: Al\naliases: [Bob]", ("Al", "Bob")),
        ("aliasesx: [Bob]\nmy_alias: Al", ()),
    ],
)
def test_aliases(fm: str, aliases: tuple[str, ...]) -> None:
    assert parse(f"---\n{fm}\n---\n").aliases == aliases


def test_headings() -> None:
    text = "# One\nx\n## Two ##\n   ### Three\n    #### indented\n#nospace\n```\n# Fenced\n```\n"
    assert parse(text).headings == ("One", "Two", "Three")


# -- rewrite_links ---------------------------------------------------------------------------------

REWRITES = [
    ("[[Old]]", "[[New Name]]"),
    ("[[Old|shown]]", "[[New Name|shown]]"),
    ("[[Old#Heading|shown]]", "[[New Name#Heading|shown]]"),
    ("[[Old#^blk]]", "[[New Name#^blk]]"),
    ("![[Old]]", "![[New Name]]"),
    ("[[Old.md]]", "[[New Name.md]]"),
    ("[[ Old ]]", "[[ New Name ]]"),
    ("| [[Old\\|a]] |", "| [[New Name\\|a]] |"),
    ("[text](Old.md)", "[text](New%20Name.md)"),
    ("[text](Old.md#Sec 'title')", "[text](New%20Name.md#Sec 'title')"),
    ("![](Old.md)", "![](New%20Name.md)"),
    ("[text](<Old.md>)", "[text](<New Name.md>)"),
    ("[text](<Old.md#^b>)", "[text](<New Name.md#^b>)"),
    ("[text](Old)", "[text](New%20Name)"),  # written without `.md`: rewritten without it
    ("[text](Old#Sec)", "[text](New%20Name#Sec)"),
    ("[text](<Old>)", "[text](<New Name>)"),
    ("![](Old)", "![](New%20Name)"),
    ("[text](Old%20(v1).md#S)", "[text](New%20Name.md#S)"),
    ("(see [text](Old%20(v1)))", "(see [text](New%20Name))"),
    ("[text](Old.md (title))", "[text](New%20Name.md (title))"),
]


@pytest.mark.parametrize(("before", "after"), REWRITES)
def test_rewrite_preserves_syntax(before: str, after: str) -> None:
    text = f"x {before} y\r\n"
    out = rewrite_links(text, lambda link: "New Name" if link.target in ("Old", "Old (v1)")
                        else None)
    assert out == f"x {after} y\r\n"


def test_rewrite_only_touches_chosen_links_and_skips_code() -> None:
    text = (
        '---\nrel: "[[Old]]"\nother: "[[Keep]]"\n---\n'
        "[[Old]] [[Keep]] `[[Old]]`\n```\n[[Old]]\n```\n%% [[Old]] %% [[#Old]]\n"
    )
    seen: list[str] = []

    def retarget(link: Link) -> str | None:
        seen.append(link.target)
        return "folder/New" if link.target == "Old" else None

    out = rewrite_links(text, retarget)
    assert seen == ["Old", "Keep", "Old", "Keep", ""]
    assert out == text.replace('rel: "[[Old]]"', 'rel: "[[folder/New]]"').replace(
        "\n[[Old]] [[Keep]]", "\n[[folder/New]] [[Keep]]"
    )
    assert parse(out).frontmatter["rel"] == "[[folder/New]]"


def test_rewrite_same_note_link_gains_a_target() -> None:
    assert rewrite_links("[[#H|a]]", lambda link: "Other") == "[[Other#H|a]]"


def test_rewrite_encodes_markdown_destinations() -> None:
    out = rewrite_links("[t](a.md)", lambda link: "dir/50% (draft)")
    assert out == "[t](dir/50%25%20%28draft%29.md)"
    assert only_link(out).target == "dir/50% (draft)"


@pytest.mark.parametrize("name", ["Caf\u00e9 #1", "a#b", "50%25 x", "#", "x %41 #2", "50% done"])
def test_a_rewritten_angle_destination_reads_back_as_the_name(name: str) -> None:
    """`<...>` keeps a name as written, but the scan cuts `#heading` and %-decodes there too:
    a `#` or a `%` before two hex digits is encoded, the rest stays (`<50% done.md>`)."""
    out = rewrite_links("[t](<Old.md#H>)", lambda link: name)
    assert only_link(out).target == name and only_link(out).heading == "H"
    assert out.startswith("[t](<") and (" " not in name or " " in out)


NAME_PARTS = ["Note", "note", "Caf\u00e9", "Cafe\u0301", "50%", "(draft)", "a b", "v1.2", "x.y z",
              "#1", "Dr.", "\u00fcber", "\u65e5\u672c", "a&b", "q?", "Report.v2", "pic.png", "x.MD"]


def _strip_md(path: str) -> str:
    return path[:-3] if path.lower().endswith(".md") else path


def _other_extension(path: str) -> bool:
    """Whether the file name ends in an extension that is not `.md`: a dot, then 1-8 ASCII
    letters or digits, a letter among them."""
    leaf = path.rsplit("/", 1)[-1]
    ext = leaf.rpartition(".")[2] if leaf.rfind(".") > 0 else ""
    return (0 < len(ext) <= 8 and ext.isascii() and ext.isalnum() and not ext.isdigit()
            and not path.lower().endswith(".md"))


@pytest.mark.parametrize("seed", range(20))
def test_generated_markdown_links_without_md(seed: int) -> None:
    """A generated note path written %-encoded without `.md` is a link to it unless its file
    name ends in another extension (then it names an attachment, not a note), and a rewrite
    to another generated path keeps the link's form: no `.md` added where the new name still
    reads as a note without it, the `#heading` kept."""
    import random
    from urllib.parse import quote

    rng = random.Random(seed)
    for _ in range(30):
        old = "/".join(rng.choice(NAME_PARTS) for _ in range(rng.randint(1, 3)))
        new = "/".join(rng.choice(NAME_PARTS) for _ in range(rng.randint(1, 3)))
        text = f"see [t]({quote(old)}#H) and [[Other]]\n"
        links = parse(text).links
        if _other_extension(old):
            assert [ln.target for ln in links] == ["Other"], old
            continue
        assert [(ln.target, ln.heading, ln.kind) for ln in links] == [
            (_strip_md(old), "H", "markdown"), ("Other", None, "wiki")], old

        def to_new(ln: Link, new: str = new) -> str | None:
            return new if ln.kind == "markdown" else None

        out = rewrite_links(text, to_new)
        (moved,) = [ln for ln in parse(out).links if ln.kind == "markdown"]
        assert (moved.target, moved.heading) == (_strip_md(new), "H"), (old, new, out)
        written = out[out.index("](") + 2:out.index("#H)")]
        with_md = old.lower().endswith(".md") or _other_extension(_strip_md(new))
        assert written.lower().endswith(".md") == with_md, (old, new, out)


def test_rewrite_refuses_targets_that_break_the_syntax() -> None:
    for bad in ("a]]b", "a|b", "a#b", "a\nb"):

        def to_bad(link: Link, bad: str = bad) -> str:
            return bad

        with pytest.raises(NoteFormatError):
            rewrite_links("[[Old]]", to_bad)
    with pytest.raises(NoteFormatError):
        rewrite_links("[t](<Old.md>)", lambda link: "a>b")


def test_a_leading_byte_order_mark_does_not_hide_frontmatter() -> None:
    # The store keeps a UTF-8 BOM in the text (files round-trip byte for byte).
    text = "\ufeff---\ntitle: x\n---\nbody [[L]]\n"
    note = parse(text)
    assert note.frontmatter == {"title": "x"} and note.body == "body [[L]]\n"
    assert [text[ln.start : ln.end] for ln in note.links] == ["[[L]]"]
    assert update_frontmatter(text, {"a": 1}) == "\ufeff---\ntitle: x\na: 1\n---\nbody [[L]]\n"
    assert update_frontmatter("\ufeffplain\n", {"a": 1}) == "\ufeff---\na: 1\n---\nplain\n"


def test_a_link_in_a_quoted_frontmatter_value_reads_as_yaml_reads_it() -> None:
    """`'[[bob''s bike]]'` names bob's bike (ingest writes entity links so), `"[[a \\"b\\"]]"`
    names a "b"; each is written back escaped as its quote needs (session 25)."""
    text = "---\nx: '[[bob''s bike|the ''bike'']]'\ny: \"[[a \\\"b\\\" \\\\ c]]\"\n---\n[[it''s]]\n"
    links = parse(text).links
    assert [(ln.target, ln.alias) for ln in links] == [
        ("bob's bike", "the 'bike'"), ('a "b" \\ c', None), ("it''s", None)]
    out = rewrite_links(text, lambda link: "Al's \"car\"" if link.target != "it''s" else None)
    assert out == ("---\nx: '[[Al''s \"car\"|the ''bike'']]'\ny: \"[[Al's \\\"car\\\"]]\"\n---\n"
                   "[[it''s]]\n")
    assert [ln.target for ln in parse(out).links][:2] == ["Al's \"car\""] * 2


def test_a_target_a_plain_yaml_value_cannot_hold_is_refused() -> None:
    with pytest.raises(NoteFormatError):
        rewrite_links("---\nsee: also [[Old]]\n---\n", lambda link: "Plan: B")
    assert rewrite_links("---\nsee: also [[Old]]\n---\n", lambda link: "Plan:B") == (
        "---\nsee: also [[Plan:B]]\n---\n")


@pytest.mark.parametrize("heading", ["# T", "## T", "   ### T", "# T #", "###### T\t"])
def test_an_inline_comment_does_not_cross_a_heading_line(heading: str) -> None:
    # a heading is one line, and it ends the paragraph above it (CommonMark 4.2): an inline
    # `<!--` there is closed by a `-->` on its own line or nowhere
    assert [ln.target for ln in parse(f"{heading} <!-- x\n[[A]] -->").links] == ["A"]
    note = parse(f"a <!-- x\n{heading}\n[[A]] --> [[B]]")
    assert [ln.target for ln in note.links] == ["A", "B"]
    assert note.headings == ("T",)
    assert [ln.target for ln in parse(f"{heading} <!-- [[No]] --> [[A]]").links] == ["A"]
    assert [ln.target for ln in parse(f"a <!-- [[No]]\nb --> [[A]]\n{heading}").links] == ["A"]
