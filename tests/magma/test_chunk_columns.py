"""The packed chunk ids and content hashes of a snapshot read back the very strings given."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from magma.chunk_columns import (
    NO_ADDRESS,
    ChunkHashes,
    ChunkIds,
    addresses_of,
    digests_of,
    ordinals_of,
    packed_hashes,
    packed_ids,
)
from magma.chunking import chunk_hash as content_hash

PATHS = ["notes/alpha.md", "笔记/会议 记录.md", "a#b/c#1.md", "notes/alpha.md", "", "x.md",
         "日记/2026-12-07.md", "x.md", "x.md", "x.md", "x.md", "x.md", "x.md", "x.md", "x.md"]
IDS = ["notes/alpha.md#0", "笔记/会议 记录.md#12", "a#b/c#1.md#3", "notes/alpha.md#1", "",
       "x.md#2147483647",  # past an int32: kept as it is
       "日记/2026-12-07.md#0",
       "x.md#07", "x.md#-1", "x.md#", "x.md", "x.md#٣", "y.md#1", "x.md#1 ", "x.md#1#2"]
HASHES = [content_hash("one"), content_hash("二"), "", "A" * 32, "0" * 32, "0" * 31 + " ",
          "zz" * 16, "ab" * 17, hashlib.sha256(b"x").hexdigest()[:32], "00" * 16,
          "0a" * 15 + "0", "ｆ" * 32, "a b" * 10 + "ab", "ff" * 16, "12" * 16]


def test_ids_read_back_as_given_spelled_ones_packed() -> None:
    ids = ChunkIds.of(IDS, PATHS)
    assert list(ids) == IDS and ids == IDS and len(ids) == len(IDS)
    assert ids[-1] == IDS[-1] and ids[1:3] == IDS[1:3]
    assert sorted(ids._odd) == [5, 7, 8, 9, 10, 11, 12, 13, 14]  # only these as strings
    with pytest.raises(IndexError):
        ids[len(IDS)]


def test_ids_followed_as_lists_would_be() -> None:
    ids = ChunkIds.of(IDS, PATHS)
    paths = [*PATHS, "新.md", "n#.md"]
    paths[0] = paths[5] = ""
    more = ["新.md#4", "n#.md#x"]
    followed = ids.followed(None, [0, 5], more, paths)
    want = [*IDS, *more]
    want[0] = want[5] = ""
    assert list(followed) == want
    keep = [6, 1, 5, 13]
    kept = [paths[i] for i in keep] + ["新.md"]
    assert list(ids.followed(keep, [], ["新.md#0"], kept)) \
        == [IDS[i] for i in keep] + ["新.md#0"]
    assert list(ChunkIds.of(IDS, PATHS)) == IDS  # the first left as it was
    assert list(packed_ids(IDS, keep, [], ["新.md#0"], kept)) \
        == [IDS[i] for i in keep] + ["新.md#0"]


def test_addresses_follow_their_rows_and_dead_or_unknown_ones_are_not_given() -> None:
    ids = ChunkIds(PATHS, ordinals_of(IDS, PATHS, 0)[0], ordinals_of(IDS, PATHS, 0)[1],
                   np.arange(100, 100 + len(IDS), dtype=np.uint64))
    assert ids.addresses([0, 1, 4]) == {IDS[0]: 100, IDS[1]: 101}  # row 4 is dead ("")
    assert ChunkIds.of(IDS, PATHS).addresses(range(len(IDS))) == {}  # none known
    paths = [*PATHS, "新.md", "n.md"]
    paths[0] = ""
    followed = ids.followed(None, [0], ["新.md#4", "n.md#0"], paths,
                            np.asarray([7, NO_ADDRESS], dtype=np.uint64))
    assert followed.addresses([0, 1, len(IDS), len(IDS) + 1]) == {IDS[1]: 101, "新.md#4": 7}
    keep = [6, 1]
    kept = ids.followed(keep, [], ["新.md#0"], [paths[6], paths[1], "新.md"])
    assert kept.addresses([0, 1, 2]) == {IDS[6]: 106, IDS[1]: 101}  # the new one unknown
    assert ids.with_addresses(np.zeros(len(IDS), dtype=np.uint64)).addresses([1]) \
        == {IDS[1]: 0} and ids.addresses([1]) == {IDS[1]: 101}  # the first unchanged
    assert packed_ids(IDS, None, [], ["z.md#0"], [*PATHS, "z.md"],
                      np.asarray([3], dtype=np.uint64)).addresses([len(IDS)]) == {"z.md#0": 3}
    with pytest.raises(ValueError, match="addresses for"):
        addresses_of([1, 2], 3)


def test_ordinals_start_at_the_row_given() -> None:
    ordinals, odd = ordinals_of(["b.md#x", "a.md#2"], ["", "", "b.md", "a.md"], 2)
    assert ordinals.tolist()[1] == 2 and odd == {2: "b.md#x"}


def test_hashes_read_back_as_given_hex_ones_packed() -> None:
    hashes = ChunkHashes.of(HASHES)
    assert list(hashes) == HASHES and hashes == HASHES
    assert hashes._digests.shape == (len(HASHES), 16)
    assert sorted(hashes._odd) == [2, 3, 5, 6, 7, 10, 11, 12]
    every = [content_hash(str(i)) for i in range(1000)]
    digests, odd = digests_of(every, 0)  # all hex: one call
    assert odd == {} and list(ChunkHashes(digests, odd)) == every


def test_hashes_followed_as_lists_would_be() -> None:
    hashes = ChunkHashes.of(HASHES)
    want = [*HASHES, "ab" * 16, "odd"]
    want[4] = ""
    assert list(hashes.followed(None, [4], ["ab" * 16, "odd"])) == want
    keep = np.asarray([3, 0, 14])
    assert list(packed_hashes(hashes, keep, [1], [])) == [HASHES[3], "", HASHES[14]]
    assert list(packed_hashes(HASHES, keep, [], ["cd" * 16])) \
        == [HASHES[3], HASHES[0], HASHES[14], "cd" * 16]


def test_the_digest_of_the_rows_names_them_in_order_however_packed() -> None:
    # (the saved IVF's partitions are taken for the rows of this digest only)
    whole = ChunkHashes.of(HASHES)
    followed = ChunkHashes.of(HASHES[:5]).followed(None, (), HASHES[5:])
    assert whole.digest() == followed.digest() == packed_hashes(HASHES, None, (), ()).digest()
    swapped = [HASHES[1], HASHES[0], *HASHES[2:]]
    dead = ChunkHashes.of(HASHES).followed(None, [3], ())
    others = {ChunkHashes.of(swapped).digest(), ChunkHashes.of(HASHES[:-1]).digest(),
              ChunkHashes.of([*HASHES, ""]).digest(), dead.digest(),
              ChunkHashes.of([h.upper() for h in HASHES]).digest()}
    assert whole.digest() not in others and len(others) == 5
    assert dead.digest() == ChunkHashes.of([*HASHES[:3], "", *HASHES[4:]]).digest()


def test_addresses_of_a_lancedb_read_hold_none_of_its_batch(tmp_path) -> None:
    """The addresses kept of a read are a copy: a view of the batch's ``_rowid`` column would
    keep that whole batch of vectors alive until the snapshot is built (a 100,000-note
    vault's snapshot read whole peaked at 2.9 GB instead of 1.4)."""
    import lancedb
    import pyarrow as pa

    from magma.catalogue import row_addresses

    db = lancedb.connect(tmp_path)
    vectors = np.arange(64 * 8, dtype=np.float32).reshape(64, 8)
    table = db.create_table("chunks", pa.table({
        "chunk_id": [f"n.md#{i}" for i in range(64)],
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), 8)}))
    batch = next(iter(table.search().select(["chunk_id", "vector"]).with_row_id(True)
                      .limit(None).to_batches(64)))
    column = batch.column("_rowid").to_numpy(zero_copy_only=False)
    kept = row_addresses(batch)
    assert kept.tolist() == column.tolist()
    assert kept.flags.owndata and not np.shares_memory(kept, column)
    assert addresses_of(column, len(column)).flags.owndata
