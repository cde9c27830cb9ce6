"""One Obsidian note: parse it, render it, edit its frontmatter or links without touching the rest.

Contracts:
- `parse(text)` never raises. A note has frontmatter only when it starts with a `---` line and
  has a closing `---`/`...` line (see frontmatter.py). Broken YAML leaves the note indexable:
  `frontmatter_error` holds the message, `frontmatter` is `{}` and the whole text is the body.
- `render(fm, body)` is the inverse: `parse(render(fm, body))` gives `fm` and `body` back for
  JSON-like `fm` (finite floats).
- `update_frontmatter` and `rewrite_links` change only the bytes they must: the changed keys'
  lines, or the note part of the rewritten links. Line endings (CRLF) are kept.
- Links are found by markdown_scan.py (code and comments skipped) in the body, and as
  wiki-links inside frontmatter string values (`related: "[[X]]"`), all in text order.
- Tags: frontmatter `tags`/`tag` (a list, or a string split on commas and whitespace) then inline
  `#tags`, "#" removed, in order of first appearance, deduplicated case-insensitively (first
  spelling kept). Aliases: frontmatter `aliases`/`alias` (a list, or a string split on commas).
  As Obsidian reads them (`/^tags?$/i`, `/^alias(es)?$/i`), those keys match in any case
  (`Tags:`, `ALIASES:`), every matching key in the block's order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..errors import NoteFormatError
from .frontmatter import BOM, dump, find_block, lines_view, load, update
from .link_keys import fold
from .markdown_scan import Link, LinkSite, bare_note_path, scan_body, scan_wiki

__all__ = [
    "PARSE",
    "Link",
    "Note",
    "NoteFormatError",
    "frontmatter_tags",
    "parse",
    "render",
    "rewrite_links",
    "tag_key",
    "update_frontmatter",
]

# The version of what `parse` makes of a text (frontmatter, aliases, tags, body, links): raised
# whenever some text parses to other rows. An index whose notes were parsed by another version
# re-parses every note from its file at its next full sync (storage/reparse.py). 1: markdown
# links only with `.md`; 2: `[x](Some%20Note)` without `.md` is a link too (session 21); 3: a
# wiki-link in a quoted frontmatter value is read unescaped (`'[[bob''s bike]]'`, session 25);
# 4: a markdown destination may hold balanced parentheses (`[x](Swan%20(book).md)`) and a
# `(title)`, tags and aliases are read under their keys in any case (`Tags:`, `ALIASES:`), and
# plain YAML scalars as YAML 1.2's core schema reads them (`12:30`, `yes` text), and inline
# tags run to punctuation (`#2024-05`, emoji; session 27); 5: a `<!--` inside a line and not
# closed in its paragraph is literal text, not a comment hiding the rest (session 28); 6: nor
# one not closed on its heading line, or closed only past a heading line below it; 7: tags
# deduplicated by case and Unicode form (`#café` typed composed and decomposed is one tag), and
# a file whose lines end in a lone CR (classic Mac) read as lines, as CodeMirror splits them
# (session 30); 8: nothing inside math (`$...$`, `$$...$$`) is a link, tag or heading; 9: but
# a `$` inside a wiki-link opens no math (`[[$AAPL]] and [[$TSLA]]`), and a `$$` after text on
# its line ("Price: $$") closes in its paragraph or is text (session 31); 10: so does a `$$`
# at a line's start (a "$$ = mid-range" legend hid the paragraphs below it; session 32); 11: a
# note without frontmatter is scanned from after its byte-order mark, which hid a heading, a
# tag or a code fence on its first line (session 41).
PARSE = 11

_TAG_SPLIT = re.compile(r"[,\s]+")
_COMMA = re.compile(",")
_URL_UNSAFE = re.compile(r"[%\s()<>#\[\]]")
_FM_OPENER = re.compile(r"---\r?(?:\n|$)")
_ESCAPED = re.compile(r'\\(["\\])')


@dataclass(frozen=True)
class Note:
    """A parsed note. `text` is the file text, untouched; offsets index into it."""

    text: str
    frontmatter: dict[str, Any]
    frontmatter_error: str | None
    body: str
    body_start: int
    links: tuple[Link, ...]
    tags: tuple[str, ...]
    aliases: tuple[str, ...]
    headings: tuple[str, ...]


def _items(value: object, split: re.Pattern[str]) -> list[str]:
    """String items of a list-or-string property; nested mappings/lists and nulls skipped."""
    if isinstance(value, str):
        raw: list[object] = list(split.split(value))
    elif isinstance(value, list):
        raw = [v for v in value if v is not None and not isinstance(v, dict | list)]
    elif value is None or isinstance(value, dict):
        raw = []
    else:
        raw = [value]
    out = []
    for v in raw:
        s = (v if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)).strip()
        if s:
            out.append(s)
    return out


def tag_key(tag: str) -> str:
    """A tag as tags compare (Obsidian: case-insensitive; one tag in either Unicode form): the
    caseless match of Unicode 15, section 3.13, as notes/links.py `fold` compares names."""
    return fold(tag)


def _dedupe(items: list[str], fold: bool) -> tuple[str, ...]:
    seen: set[str] = set()
    out = []
    for item in items:
        key = tag_key(item) if fold else item
        if key not in seen:
            seen.add(key)
            out.append(item)
    return tuple(out)


def frontmatter_tags(frontmatter: Mapping[str, Any]) -> list[str]:
    """The tags a note's loaded frontmatter gives: under `tags`/`tag` in any case, in the
    block's order (module docstring), "#" removed, not deduplicated."""
    out: list[str] = []
    for key, value in frontmatter.items():
        if (key.lower() if key.isascii() else "") in ("tags", "tag"):
            out.extend(t.lstrip("#") for t in _items(value, _TAG_SPLIT))
    return out


def _scan(raw: str) -> tuple[Note, list[LinkSite]]:
    text = lines_view(raw)  # offsets into it are offsets into `raw`
    fm: dict[str, Any] = {}
    error: str | None = None
    body_start = 0
    sites: list[LinkSite] = []
    block = find_block(text)
    if block is not None:
        try:
            loaded = load(text[block.yaml_start : block.yaml_end])
        except NoteFormatError as exc:
            error = exc.reason
        else:
            fm, body_start = loaded.data, block.body_start
            for a, b, quote in loaded.value_spans:
                sites.extend(_in_yaml(site, quote) for site in
                             scan_wiki(text, block.yaml_start + a, block.yaml_start + b))
    # A byte-order mark (kept, so the file round-trips) is no text: a first line after it
    # starts a line, as after a frontmatter block.
    scan_start = body_start or (1 if text.startswith(BOM) else 0)
    scanned = scan_body(text[scan_start:], scan_start)
    sites.extend(scanned.sites)
    tag_items = frontmatter_tags(fm)
    alias_items: list[str] = []
    for key, value in fm.items():  # in the block's order, the key in any case (as Obsidian)
        if (key.lower() if key.isascii() else "") in ("aliases", "alias"):
            alias_items.extend(_items(value, _COMMA))
    tag_items.extend(scanned.tags)
    note = Note(
        text=raw,
        frontmatter=fm,
        frontmatter_error=error,
        body=raw[body_start:],  # as written: a store or a rewrite keeps the file's line ends
        body_start=body_start,
        links=tuple(s.link for s in sites),
        tags=_dedupe([t for t in tag_items if t], fold=True),
        aliases=_dedupe(alias_items, fold=False),
        headings=scanned.headings,
    )
    return note, sites


def parse(text: str) -> Note:
    """Parse a note's text; never raises."""
    return _scan(text)[0]


def render(frontmatter: Mapping[str, Any] | None, body: str) -> str:
    """New note text: a `---` block with `frontmatter` (none when empty) followed by `body`.

    With no frontmatter and a body that itself opens with a `---` line, an empty block is written
    first so that the body cannot be mistaken for frontmatter.
    """
    if frontmatter:
        return "---\n" + dump(frontmatter) + "---\n" + body
    if _FM_OPENER.match(body):
        return "---\n---\n" + body
    return body


def update_frontmatter(text: str, changes: Mapping[str, Any | None]) -> str:
    """Set top-level keys (None deletes), every other byte kept; see frontmatter.update.

    Raises NoteFormatError (a VaultError) when the existing YAML is broken: never rewrites it.
    """
    return update(text, changes)


_ANGLE_UNSAFE = re.compile(r"#|%(?=[0-9A-Fa-f]{2})")


def _encode_path(path: str) -> str:
    return _URL_UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), path)


def _in_yaml(site: LinkSite, quote: str) -> LinkSite:
    """A wiki-link found in a frontmatter scalar of style `quote`: its parts as YAML reads them
    (`'bob''s'` is bob's, `"a \\"b\\""` is a "b"), where the note names it."""
    link = site.link
    if quote in ("'", '"'):
        link = replace(link, target=_unquote(link.target, quote),
                       heading=None if link.heading is None else _unquote(link.heading, quote),
                       alias=None if link.alias is None else _unquote(link.alias, quote))
    return replace(site, link=link, quote=quote)


def _unquote(raw: str, quote: str) -> str:
    if quote == "'":
        return raw.replace("''", "'")
    return _ESCAPED.sub(lambda m: m.group(1), raw)  # \" and \\ (other escapes kept as written)


def _format_target(site: LinkSite, new: str) -> str:
    """The note part `new` as the site writes it; in a quoted frontmatter value escaped as its
    quote needs, so that the YAML still reads (a move to "Bob's" in `rel: '[[Bob]]'`)."""
    out = _formatted(site, new)
    if site.quote == "'":
        return out.replace("'", "''")
    if site.quote == '"':
        return out.replace("\\", "\\\\").replace('"', '\\"')
    if site.quote == ":" and ": " in out:
        raise NoteFormatError(f"link target {new!r} cannot be written in a plain YAML value")
    return out


def _formatted(site: LinkSite, new: str) -> str:
    if "\n" in new or "\r" in new:
        raise NoteFormatError(f"link target contains a line break: {new!r}")
    if site.link.kind == "wiki":
        if any(c in new for c in "[]|#"):
            raise NoteFormatError(f"wiki-link target cannot contain [ ] | #: {new!r}")
        return new + ".md" if site.md_suffix and not new.lower().endswith(".md") else new
    path = new if new.lower().endswith(".md") else new + ".md"
    if not site.md_suffix and bare_note_path(path[:-3]):  # written without `.md`: kept so
        path = path[:-3]
    if site.angle:
        if "<" in path or ">" in path:
            raise NoteFormatError(f"link target cannot contain < or >: {new!r}")
        # the scan cuts `#heading` and %-decodes here too: only what it would misread is
        # encoded (`#`, a `%` before two hex digits), so `<Plan 50% done.md>` stays as is
        return _ANGLE_UNSAFE.sub(lambda m: "%23" if m.group() == "#" else "%25", path)
    return _encode_path(path)


def rewrite_links(text: str, rewrite: Callable[[Link], str | None]) -> str:
    """Replace the note part of each link with `rewrite(link)` (None keeps it).

    Everything else stays: "!", "#heading", "#^block", "|alias", markdown link text and title,
    `<...>` brackets, a written ".md" suffix of a wiki-link. Markdown destinations are
    %-encoded where needed (space, %, parentheses, <, >, #, brackets).
    """
    out: list[str] = []
    pos = 0
    for site in _scan(text)[1]:
        new = rewrite(site.link)
        if new is None or new == site.link.target:
            continue
        out.append(text[pos : site.target_start])
        out.append(_format_target(site, new))
        pos = site.target_end
    out.append(text[pos:])
    return "".join(out)
