"""A model of Obsidian's link resolver, to check rmh's against (test_relinks.py,
tests/vault/test_obsidian_links.py).

`obsidian` is `MetadataCache.getLinkpathDest` as de-minified from Obsidian's app.js
(docs/measurements/session29/NOTES-MDLINK.md), which Obsidian's `resolveLinks` calls on every
link's path, decoded and without its `#subpath`, markdown links included. Where rmh differs on
purpose (session 28's NOTES-OBSID.md) the model follows Obsidian and the tests' vaults avoid the
case: its suffix and folder tests are bare `endsWith`/`startsWith` (rmh: at a `/`), a `./`
path naming no file falls through to the suffix search (rmh: none), and it compares
`toLowerCase` (rmh: casefold and NFC). Ties in length: code points (Obsidian: load order).
"""

from __future__ import annotations

import posixpath


def obsidian(linkpath: str, source: str, paths: list[str]) -> str | None:
    """Obsidian's getLinkpathDest(linkpath, source)[0], transcribed (lower-case compares, the
    file name looked up as written if it has a dot, else with `.md`; `./` and `../` exact;
    the vault path; `/x` stops there; else the paths ending with it, under the source's
    folder first, each group by length; ties: code points, where Obsidian keeps load order)."""
    n = linkpath.lower()
    i = posixpath.basename(n)
    r = [f for f in paths if posixpath.basename(f).lower() == i] if "." in i else []
    if not r:
        n = (linkpath + ".md").lower()
        i = posixpath.basename(n)
        r = [f for f in paths if posixpath.basename(f).lower() == i]
    if not r:
        return None
    if i == n and len(r) == 1:
        return r[0]
    o = posixpath.dirname(source).lower()
    if n.startswith(("./", "../")):
        if n.startswith("./../"):
            n = n[2:]
        if n.startswith("./"):
            n = (o + "/" if o else "") + n[2:]
        else:
            while n.startswith("../"):
                n, o = n[3:], posixpath.dirname(o)
            n = (o + "/" if o else "") + n
        for f in r:
            if f.lower() == n:
                return f
    n = n.removeprefix("/")
    for f in r:
        if f.lower() == n:
            return f
    if linkpath.startswith("/"):
        return None
    ends = [f for f in r if f.lower().endswith(n)]
    ranked = sorted(ends, key=lambda f: (not f.lower().startswith(o), len(f), f))
    return ranked[0] if ranked else None
