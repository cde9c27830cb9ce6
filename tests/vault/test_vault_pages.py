"""links, backlinks and neighbors in pages (offset, count): the pages of a hub's list, read in
turn, are the whole list in its order, and `limit` refuses a page, not the list."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault import QuotaExceeded, Vault


def hub_vault(root: Path, referrers: int) -> Vault:
    """`hub` linked to by `referrers` notes, and linking to `referrers` names (every other
    one dangling)."""
    (root / "r").mkdir(parents=True)
    (root / "hub.md").write_text("# hub\n" + " ".join(
        f"[[r{i:03d}]] [[gone{i:03d}]]" for i in range(referrers)) + "\n")
    for i in range(referrers):
        (root / "r" / f"r{i:03d}.md").write_text(f"see [[hub]] {i}\n")
    return Vault.init(root)


@pytest.mark.parametrize("referrers", [0, 1, 7, 23])
def test_pages_read_in_turn_are_the_whole_list(tmp_path: Path, referrers: int) -> None:
    vault = hub_vault(tmp_path / "v", referrers)
    try:
        whole = {"backlinks": vault.backlinks("hub"), "neighbors": vault.neighbors("hub"),
                 "links": [ln.target for ln in vault.links("hub")]}
        assert len(whole["backlinks"]) == referrers and len(whole["links"]) == 2 * referrers
        for count in (1, 3, 10):
            for what, items in whole.items():
                pages: list[str] = []
                for offset in range(0, len(items) + count, count):  # one page past the end
                    if what == "links":
                        page = [ln.target for ln in vault.links(
                            "hub", limit=count, offset=offset, count=count)]
                    elif what == "backlinks":
                        page = vault.backlinks("hub", limit=count, offset=offset, count=count)
                    else:
                        page = vault.neighbors("hub", limit=count, offset=offset, count=count)
                    assert len(page) <= count
                    pages += page
                assert pages == items, (what, count)
    finally:
        vault.close()


def test_limit_refuses_a_page_over_it_and_names_the_way_out(tmp_path: Path) -> None:
    vault = hub_vault(tmp_path / "v", 12)
    try:
        with pytest.raises(QuotaExceeded) as whole:
            vault.backlinks("hub", limit=10)
        assert "offset" in str(whole.value)
        assert len(vault.backlinks("hub", limit=10, offset=2)) == 10  # the 10 from the third
        assert len(vault.backlinks("hub", limit=10, offset=5, count=10)) == 7
        with pytest.raises(QuotaExceeded):
            vault.links("hub", limit=10, offset=4, count=11)
    finally:
        vault.close()
