"""The Vault's reading layer: names to note ids, a note's text and parts, and the link graph
around a note (links, backlinks, neighbors).

One of the layers `Vault` is built from (vault/core.py's docstring): each call first brings
the index up to date with the folder (`live.fresh`), as every call of the facade does; a
read is logged to the usage recorder unless the caller says otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable

from .notes.records import LinkInfo, NoteRecord
from .parts import VaultParts, page_of, within
from .storage.linkgraph import hops_from


class VaultReads(VaultParts):
    """Names, reading and links of an open vault (module docstring)."""

    # -- names ----------------------------------------------------------------------------------

    def resolve(self, note: str, *, as_link: bool = True) -> int:
        """A vault-relative path (`.md` optional) or a title/alias -> stable note id; a shared
        title as `[[note]]` at the root (`Resolver.by_title`), unless `as_link` is False."""
        self.live.fresh()
        return self._resolve(note, as_link)

    def existing(self, ids: Iterable[int]) -> set[int]:
        """Which of these note ids name notes in the index now (after a sync)."""
        self.live.fresh()
        return self.index.present(ids)

    # -- reading --------------------------------------------------------------------------------

    def read(self, note: str, *, session: str | None = None, learn: bool = True) -> NoteRecord:
        """The note's current text and parsed parts; logged as a read unless `learn` is False
        (a tool reading on the agent's behalf, such as the ask loop's inner reads)."""
        self.live.fresh()
        note_id = self._resolve(note)
        record = self._record(note_id)
        if learn:
            graph = self._snapshot().corpus.graph
            self._learn(lambda: self.usage.on_read(session, note_id, graph))
        return record

    def links(self, note: str, *, limit: int | None = None, offset: int = 0,
              count: int | None = None) -> list[LinkInfo]:
        """Outgoing links of a note in text order, each resolved, an existing attachment
        (`attachment`: its file; the folder is listed only when there is one to find), or
        dangling; only the `count` (None: all) from position `offset` on; more than `limit` of
        those is QuotaExceeded, raised before any is rendered."""
        self.live.fresh()
        note_id = self._resolve(note)
        page = page_of(offset, count)  # range(n)[page]: its length without building it
        within(len(range(len(self.live.links_of(note_id)))[page]), limit, "links")
        return self._with_files(note_id, self._link_infos(note_id)[page])

    def backlinks(self, note: str, *, limit: int | None = None, offset: int = 0,
                  count: int | None = None) -> list[str]:
        """Paths of the notes linking to `note`, sorted; only the `count` (None: all) from
        position `offset` on (more than `limit` of those: QuotaExceeded)."""
        self.live.fresh()
        snap = self._snapshot()
        referrers = snap.referrers(self._resolve(note))
        page = page_of(offset, count)
        within(len(range(len(referrers))[page]), limit, "backlinks")
        return sorted(snap.resolver.id_path[i] for i in referrers)[page]

    def neighbors(self, note: str, hops: int = 1, *, limit: int | None = None, offset: int = 0,
                  count: int | None = None) -> list[str]:
        """Notes within `hops` links (either direction), nearest first, then by path; only the
        `count` (None: all) from position `offset` on (more than `limit` of them: QuotaExceeded)."""
        self.live.fresh()
        note_id = self._resolve(note)
        snap = self._snapshot()
        dist = hops_from(note_id, snap.corpus.graph, hops)
        page = page_of(offset, count)
        within(len(range(len(dist) - 1)[page]), limit, "neighbors")
        paths = snap.resolver.id_path
        return [path for _, path in sorted((d, paths[n]) for n, d in dist.items()
                                           if n != note_id)][page]
