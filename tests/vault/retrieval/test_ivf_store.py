"""The persisted approximate dense layout (ivf_store.py): a build in a new process maps the
codes instead of chunking, embedding and training, equals the build that saved it byte for
byte, and a store that is stale (an edit, a delete, an added note, another shape, parameters
or layout) or broken (torn, truncated, garbage, its codes gone) is ignored and rebuilt, never
a crash."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from bench.synthetic_encoder import SyntheticEncoder
from vault.retrieval import ivf_store
from vault.retrieval.signals.dense import DenseIndex, DenseParams
from vault.retrieval.signals.ivf import IvfParams
from vault.storage.corpus import Corpus
from vault.storage.embeddings import MemoryEmbeddingCache

from ..retrieval_fixtures import make_corpus

WORDS = [f"{a}{b}" for a in ("red", "blue", "green", "amber", "grey")
         for b in ("fox", "owl", "elk")]
TOKENS = 12
PARAMS = DenseParams(approx_above=50, ivf=IvfParams(nprobe=4, train_per_list=8))


ENC = SyntheticEncoder()  # its tables take a while to draw: one for the module


class Counting:
    """The module's encoder, counting what it tokenises (chunking) and embeds."""

    def __init__(self) -> None:
        self.counted = 0
        self.encoded = 0
        self.fingerprint = ENC.fingerprint
        self.dim = ENC.dim

    def count_tokens(self, text: str) -> int:
        self.counted += 1
        return ENC.count_tokens(text)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.encoded += len(texts)
        return ENC.encode(texts)


def notes(seed: int, n: int = 80) -> list[tuple[str, str]]:
    rng = np.random.default_rng(seed)
    return [(f"note {i}", " ".join(" ".join(rng.choice(WORDS, int(rng.integers(3, 9)))) + "."
                                   for _ in range(int(rng.integers(1, 5)))))
            for i in range(n)]


def build(c: Corpus, scratch: Path | None, enc: Counting | None = None,
          params: DenseParams = PARAMS, tokens: int = TOKENS) -> DenseIndex:
    return DenseIndex.build(c, enc or Counting(), MemoryEmbeddingCache(), tokens,
                            params=params, scratch=None if scratch is None else str(scratch))


def same(a: DenseIndex, b: DenseIndex) -> None:
    assert a.ivf is not None and b.ivf is not None
    for name in ("centroids", "mean", "offsets", "scale", "note"):
        assert getattr(a.ivf, name).tobytes() == getattr(b.ivf, name).tobytes(), name
    rows = a.ivf.rows
    assert rows == b.ivf.rows
    assert (np.asarray(a.ivf.codes.span(0, rows)).tobytes()
            == np.asarray(b.ivf.codes.span(0, rows)).tobytes())
    assert a.starts.tobytes() == b.starts.tobytes() and a.cut.tobytes() == b.cut.tobytes()
    assert a.capped == b.capped and a.n_chunks == b.n_chunks
    for v in ENC.encode(["redfox blueowl", "amberelk", "greyowl greenfox"]):
        assert a.score_vector(v).tobytes() == b.score_vector(v).tobytes()


def test_a_new_process_maps_the_codes_instead_of_building(tmp_path: Path) -> None:
    c = make_corpus(notes(1))
    fresh = build(c, None)
    assert fresh.ivf is not None  # the approximate layout
    first = build(c, tmp_path)  # builds and saves
    same(first, fresh)
    assert (tmp_path / ivf_store.INDEX).is_file()
    enc = Counting()
    again = build(c, tmp_path, enc)  # as a new process would: an empty embedding cache
    assert enc.counted == 0 and enc.encoded == 0  # nothing chunked, embedded or trained
    same(again, fresh)
    assert again.ivf is not None
    assert isinstance(getattr(again.ivf.codes, "array", None), np.memmap)


def test_edits_deletes_and_additions_rebuild_and_resave(tmp_path: Path) -> None:
    base = notes(2)
    build(make_corpus(base), tmp_path)
    edited = list(base)
    edited[3] = (edited[3][0], "amberfox greenowl. redelk redelk blueowl amberowl.")
    del edited[9]
    edited.append(("added", "greenelk amberfox."))
    for version in (edited, base[:-1], [*base, ("more", "greyfox")]):
        c = make_corpus(version, generation=2)
        enc = Counting()
        same(build(c, tmp_path, enc), build(c, None))
        assert enc.counted > 0  # stale: a full build
        again = Counting()
        same(build(c, tmp_path, again), build(c, None))
        assert again.counted == 0  # and the store now holds this version
    assert len(list(tmp_path.glob(f"{ivf_store.CODES_PREFIX}*.npy"))) == 1  # old ones go


def test_other_parameters_or_layout_ignore_the_store(tmp_path: Path) -> None:
    c = make_corpus(notes(3))
    build(c, tmp_path)
    other = DenseParams(approx_above=50, ivf=IvfParams(nprobe=4, train_per_list=8,
                                                       train_iters=3))
    enc = Counting()
    same(build(c, tmp_path, enc, other), build(c, None, params=other))
    assert enc.counted > 0
    enc = Counting()
    same(build(c, tmp_path, enc, tokens=TOKENS + 4), build(c, None, tokens=TOKENS + 4))
    assert enc.counted > 0
    exact = DenseParams(approx_above=0)  # the exact layout: this store is not used
    got = build(c, tmp_path, params=exact)
    assert got.ivf is None
    assert got.matrix.tobytes() == build(c, None, params=exact).matrix.tobytes()


@pytest.mark.parametrize("damage", ["truncated codes", "torn index", "garbage index",
                                    "codes gone", "garbage codes", "offsets out of range"])
def test_a_broken_store_is_ignored_and_rebuilt(tmp_path: Path, damage: str) -> None:
    c = make_corpus(notes(4))
    fresh = build(c, None)
    build(c, tmp_path)
    index = tmp_path / ivf_store.INDEX
    (codes,) = tmp_path.glob(f"{ivf_store.CODES_PREFIX}*.npy")
    if damage == "truncated codes":
        codes.write_bytes(codes.read_bytes()[:-100])
    elif damage == "torn index":
        index.write_bytes(index.read_bytes()[: index.stat().st_size // 2])
    elif damage == "garbage index":
        index.write_bytes(b"not an npz at all")
    elif damage == "codes gone":
        codes.unlink()
    elif damage == "garbage codes":
        codes.write_bytes(b"\x93NUMPY garbage")
    else:
        with np.load(index, allow_pickle=False) as z:
            meta = {k: z[k] for k in z.files}
        meta["offsets"] = meta["offsets"] + 1
        with open(index, "wb") as fh:
            np.savez(fh, **meta)
    enc = Counting()
    same(build(c, tmp_path, enc), fresh)
    assert enc.counted > 0  # rebuilt
    enc = Counting()
    same(build(c, tmp_path, enc), fresh)
    assert enc.counted == 0  # and saved whole again


def test_an_unwritable_folder_costs_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "folder"
    c = make_corpus(notes(5))
    same(build(c, missing), build(c, None))
    assert not missing.exists()
