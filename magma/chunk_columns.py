"""The chunk ids and content hashes of a snapshot's rows, packed instead of one Python string
per row.

A snapshot (:class:`magma.catalogue.Snapshot`) names each row's chunk and its content hash.
As lists of strings, at 100,000 notes (928,740 chunks) they held 102 MB and 80 MB of the
process's heap. Yet a chunk id is ``"<path>#<ordinal>"`` (:meth:`magma.store.MagmaStore`
writes it so) and the row's path is kept already (``chunk_paths``): :class:`ChunkIds` keeps
the ordinal (4 bytes a row) and spells the id when it is read. A content hash is 32 hex
digits (:func:`magma.chunking.chunk_hash`): :class:`ChunkHashes` keeps its 16 bytes. Any
other value (an id not spelled so, a hash not of that form, ``""`` for a dead row) is kept as
it is, by row: every row reads back the very string it was given.

:class:`ChunkIds` also keeps where each row's chunk was in the chunks table when the row was
read (LanceDB's ``_rowid``: the row's address, ``fragment << 32 | offset``, without stable
row ids), 8 bytes a row, :data:`NO_ADDRESS` when unknown. A search reads a chunk's text by its
address (:meth:`magma.store.MagmaStore.chunks_by_id`) instead of through the id's index. An
address goes stale when the table is compacted; the reader checks each chunk it gets back
is the one asked for.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from typing import overload

import numpy as np

__all__ = ["NO_ADDRESS", "ChunkHashes", "ChunkIds", "addresses_of", "digests_of",
           "ordinals_of", "packed_hashes", "packed_ids"]

#: An ordinal of :class:`ChunkIds` for a dead row (id ``""``) and for an id kept as it is.
DEAD, ODD = -1, -2
#: Bytes of a packed content hash (32 hex digits).
HASH_BYTES = 16
#: The address of a row whose place in the chunks table is not known (the largest uint64:
#: LanceDB gives no row that address).
NO_ADDRESS = np.uint64(2**64 - 1)


class _Column(Sequence[str]):
    """A read-only sequence of strings, equal to any sequence of the same strings."""

    __slots__ = ()

    def __len__(self) -> int:
        raise NotImplementedError

    def _at(self, row: int) -> str:
        raise NotImplementedError

    @overload
    def __getitem__(self, row: int) -> str: ...
    @overload
    def __getitem__(self, row: slice) -> list[str]: ...

    def __getitem__(self, row: int | slice) -> str | list[str]:
        if isinstance(row, slice):
            return [self._at(i) for i in range(*row.indices(len(self)))]
        row = int(row)
        if row < 0:
            row += len(self)
        if not 0 <= row < len(self):
            raise IndexError(row)
        return self._at(row)

    def __iter__(self) -> Iterator[str]:
        return (self._at(i) for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({list(self)!r})"


class ChunkIds(_Column):
    """The chunk id of each row, ``"<path>#<ordinal>"`` read from the row's path (``paths``,
    the snapshot's ``chunk_paths``, never changed after) and its ordinal."""

    __slots__ = ("_addresses", "_odd", "_ordinals", "_paths")

    def __init__(self, paths: Sequence[str], ordinals: np.ndarray, odd: dict[int, str],
                 addresses: np.ndarray | None = None) -> None:
        """``addresses``: each row's address in the chunks table (``uint64[rows]``,
        :data:`NO_ADDRESS` when unknown; ``None``: none known)."""
        self._paths, self._ordinals, self._odd = paths, ordinals, odd
        self._addresses = addresses_of(addresses, len(ordinals))

    @classmethod
    def of(cls, ids: Iterable[str], paths: Sequence[str]) -> ChunkIds:
        """The ids ``ids`` of the rows whose paths are ``paths``."""
        ordinals, odd = ordinals_of(ids, paths, 0)
        return cls(paths, ordinals, odd)

    def address_array(self) -> np.ndarray:
        """Each row's address (``uint64[rows]``, :data:`NO_ADDRESS` when unknown; read only)."""
        view = self._addresses.view()
        view.flags.writeable = False
        return view

    def with_addresses(self, addresses: np.ndarray) -> ChunkIds:
        """These ids at ``addresses`` (``uint64[rows]``); ``self`` is unchanged."""
        return ChunkIds(self._paths, self._ordinals, self._odd, addresses)

    def addresses(self, rows: Iterable[int]) -> dict[str, int]:
        """``{chunk id: address in the chunks table}`` of the living ``rows`` whose address
        is known."""
        found: dict[str, int] = {}
        for row in rows:
            address = self._addresses[row]
            if address != NO_ADDRESS and self._ordinals[row] != DEAD:
                found[self._at(row)] = int(address)
        return found

    def __len__(self) -> int:
        return len(self._ordinals)

    def _at(self, row: int) -> str:
        ordinal = int(self._ordinals[row])
        if ordinal >= 0:
            return f"{self._paths[row]}#{ordinal}"
        return "" if ordinal == DEAD else self._odd[row]

    def followed(self, keep: Sequence[int] | None, dead: Iterable[int], ids: Iterable[str],
                 paths: Sequence[str], addresses: np.ndarray | None = None) -> ChunkIds:
        """These rows (those of ``keep`` in its order, all for ``None``), ``dead`` ones (of
        the rows kept) read ``""``, then ``ids`` appended at ``addresses`` (``uint64``, one
        an id; ``None``: unknown); ``paths``: every row's path."""
        if keep is None:
            ordinals, odd = self._ordinals.copy(), dict(self._odd)
            kept = self._addresses
        else:
            at = np.asarray(keep, dtype=np.int64)
            ordinals = self._ordinals[at]
            odd = {new: self._odd[old] for new, old in enumerate(at.tolist())
                   if ordinals[new] == ODD}
            kept = self._addresses[at]
        for row in dead:
            ordinals[row] = DEAD
            odd.pop(row, None)
        more, more_odd = ordinals_of(ids, paths, len(ordinals))
        odd.update(more_odd)
        return ChunkIds(paths, np.concatenate([ordinals, more]), odd,
                        np.concatenate([kept, addresses_of(addresses, len(more))]))


def addresses_of(addresses: np.ndarray | Sequence[int] | None, rows: int) -> np.ndarray:
    """``addresses`` as ``uint64[rows]``, a copy (never a view of them); :data:`NO_ADDRESS` for
    each row when ``None``.
    Raises ``ValueError`` when they are not ``rows`` addresses."""
    if addresses is None:
        return np.full(rows, NO_ADDRESS, dtype=np.uint64)
    # a copy: a view would keep the whole record batch it came from alive (Arrow's buffers
    # of a LanceDB read; the 928,739 chunks of a 100,000-note vault read whole for a
    # snapshot (``magma.catalogue.vectors_of``) peaked at 2,942 MB of RSS with views, 1,394 MB
    # with copies, the rows read alone 865 MB)
    out = np.array(addresses, dtype=np.uint64)
    if out.shape != (rows,):
        raise ValueError(f"{out.shape} addresses for {rows} rows")
    return out


def ordinals_of(ids: Iterable[str], paths: Sequence[str], start: int
                ) -> tuple[np.ndarray, dict[int, str]]:
    """The ordinals of ``ids``, rows ``start`` on of ``paths``, and the ids kept as they are."""
    ordinals: list[int] = []
    odd: dict[int, str] = {}
    for row, chunk_id in enumerate(ids, start):
        path, hash_, tail = chunk_id.rpartition("#")
        if hash_ and path == paths[row] and 0 < len(tail) < 10 and tail.isascii() \
                and tail.isdigit() and (tail[0] != "0" or tail == "0"):
            ordinals.append(int(tail))
        elif chunk_id:
            ordinals.append(ODD)
            odd[row] = chunk_id
        else:
            ordinals.append(DEAD)
    return np.asarray(ordinals, dtype=np.int32), odd


class ChunkHashes(_Column):
    """The content hash of each row, 32 lowercase hex digits kept as their 16 bytes."""

    __slots__ = ("_digests", "_odd")

    def __init__(self, digests: np.ndarray, odd: dict[int, str]) -> None:
        self._digests, self._odd = digests, odd

    @classmethod
    def of(cls, hashes: Sequence[str]) -> ChunkHashes:
        """The hashes ``hashes`` of the rows, in order."""
        digests, odd = digests_of(hashes, 0)
        return cls(digests, odd)

    def __len__(self) -> int:
        return len(self._digests)

    def _at(self, row: int) -> str:
        text = self._odd.get(row)
        return text if text is not None else self._digests[row].tobytes().hex()

    def digest(self) -> str:
        """A digest of every row's hash in row order (32 hex digits; a dead row's ``""``
        counts): equal for equal rows, however they were packed."""
        packed = self._digests
        if self._odd:  # (a row kept as it is: its bytes, zeros or left from before, unread)
            packed = packed.copy()
            packed[list(self._odd)] = 0
        out = hashlib.blake2b(np.ascontiguousarray(packed).data, digest_size=16)
        for row, text in sorted(self._odd.items()):
            out.update(f"\0{row}\0{text}".encode())
        return out.hexdigest()

    def followed(self, keep: Sequence[int] | None, dead: Iterable[int], hashes: Sequence[str]
                 ) -> ChunkHashes:
        """As :meth:`ChunkIds.followed`: these rows, ``dead`` ones ``""``, ``hashes``
        appended."""
        if keep is None:
            digests, odd = self._digests, dict(self._odd)
        else:
            at = np.asarray(keep, dtype=np.int64)
            digests = self._digests[at]
            odd = {new: self._odd[old] for new, old in enumerate(at.tolist())
                   if old in self._odd}
        for row in dead:
            odd[row] = ""
        more, more_odd = digests_of(hashes, len(digests))
        odd.update(more_odd)
        return ChunkHashes(np.concatenate([digests, more]), odd)


def _digest(text: str, size: int = HASH_BYTES) -> bytes | None:
    """The ``size`` bytes ``text`` spells in lowercase hex, else ``None``."""
    if len(text) != 2 * size:
        return None
    try:
        digest = bytes.fromhex(text)
    except ValueError:
        return None
    return digest if len(digest) == size and digest.hex() == text else None


def digests_of(hashes: Sequence[str], start: int) -> tuple[np.ndarray, dict[int, str]]:
    """The 16 bytes of each of ``hashes`` (rows ``start`` on; zeros for one kept as it is,
    in the dict returned)."""
    if set(map(len, hashes)) <= {2 * HASH_BYTES}:  # all of that length: one call, if hex
        joined = "".join(hashes)
        digest = _digest(joined, len(hashes) * HASH_BYTES)
        if digest is not None:
            return np.frombuffer(digest, dtype=np.uint8).reshape(-1, HASH_BYTES).copy(), {}
    packed = bytearray()
    odd: dict[int, str] = {}
    zero = bytes(HASH_BYTES)
    for row, text in enumerate(hashes, start):
        digest = _digest(text)
        if digest is not None:
            packed += digest
        else:
            packed += zero
            odd[row] = text
    return np.frombuffer(bytes(packed), dtype=np.uint8).reshape(-1, HASH_BYTES).copy(), odd


def packed_ids(ids: Sequence[str], keep: Sequence[int] | None, dead: Iterable[int],
               more: Iterable[str], paths: Sequence[str], addresses: np.ndarray | None = None
               ) -> ChunkIds:
    """:meth:`ChunkIds.followed` of ``ids`` (a plain sequence is packed first, its rows'
    addresses unknown)."""
    if not isinstance(ids, ChunkIds):
        kept = list(ids) if keep is None else [ids[i] for i in keep]
        ids = ChunkIds.of(kept, paths[:len(kept)])
        keep = None
    return ids.followed(keep, dead, more, paths, addresses)


def packed_hashes(hashes: Sequence[str], keep: Sequence[int] | None, dead: Iterable[int],
                  more: Sequence[str]) -> ChunkHashes:
    """:meth:`ChunkHashes.followed` of ``hashes`` (a plain sequence is packed first)."""
    if not isinstance(hashes, ChunkHashes):
        hashes = ChunkHashes.of(list(hashes) if keep is None else [hashes[i] for i in keep])
        keep = None
    return hashes.followed(keep, dead, more)
