"""Link resolution the way Obsidian does it, and the graph's node ids (the vault graph itself:
:mod:`magma.vault_graph`).

Resolution rules (DESIGN.md "Obsidian" facts): case-insensitive; a target naming a folder or
ending in ``.md`` is first matched as a vault path (exact, with or without ``.md``; then as a
path suffix, ``sub/Note`` -> ``a/sub/Note.md``); otherwise by file name — note stem, note file
name, or an attachment's full file name. When several files share a name the shortest path wins
(ties: lexicographic). Aliases are never link targets. Markdown links (``[x](../a/b.md)``) are
tried relative to the source folder first and may be URL-encoded (``My%20Note.md``). Paths and
targets are compared in NFC (:func:`ccb.names.nfc_key`): ``[[Café]]`` typed on any keyboard
finds ``Café.md`` whose name a Mac stored decomposed; resolution answers the path as stored.
"""

from __future__ import annotations

import posixpath
import sys
from collections.abc import Iterable, Iterator
from typing import Protocol
from urllib.parse import unquote

from ccb.model import PATH_LINK_KINDS, LinkKind
from ccb.names import nfc_key

__all__ = [
    "GraphLink",
    "LinkResolver",
    "link_key",
    "node_id",
    "path_key",
]

_NOTE_EXT = ".md"
_URL_SCHEMES = ("http://", "https://", "mailto:", "file://", "obsidian://", "ftp://")


def _strip_md(path: str) -> str:
    return path[: -len(_NOTE_EXT)] if path.lower().endswith(_NOTE_EXT) else path


def link_key(target: str) -> str:
    """Lower-cased NFC file name of a link target without ``.md`` (``"../A/My%20Note.md"`` ->
    ``"my note"``): a target can only resolve to a path with the same :func:`path_key`."""
    name = posixpath.basename(unquote(target.strip().replace("\\", "/")))
    return _strip_md(nfc_key(name).lower())


def path_key(path: str) -> str:
    """Lower-cased NFC file name of a vault path without ``.md`` (``"a/Note.md"`` ->
    ``"note"``)."""
    return _strip_md(nfc_key(posixpath.basename(path)).lower())


def _better(candidate: str, current: str | None) -> bool:
    """Shortest path wins; ties go to the lexicographically smaller path."""
    return current is None or (len(candidate), candidate) < (len(current), current)


#: The paths of one resolution key: the one path, or the set of them when several share it.
_Bucket = str | set[str]


class LinkResolver:
    """Resolves link targets against a set of vault paths (notes end in ``.md``).

    :meth:`add` and :meth:`discard` keep it current in O(1) per path, so a writer can hold
    one across batches; :meth:`resolve` is O(1) except for folder-suffix targets, which scan
    the files sharing the target's file name.
    """

    def __init__(self, paths: Iterable[str] = ()) -> None:
        # each key holds its one path as a ``str`` (most keys: a set of one is 216 bytes
        # more by sys.getsizeof, ~86 MB over the four keys of each of 100,000 paths), a
        # ``set`` once it has several
        self._by_path: dict[str, _Bucket] = {}
        self._by_stemless_path: dict[str, _Bucket] = {}
        self._by_name: dict[str, _Bucket] = {}
        #: answers to targets that do not depend on the linking note, until a path changes
        self._memo: dict[tuple[str, str], str | None] = {}
        for path in paths:
            self.add(path)

    def _keys(self, path: str) -> Iterator[tuple[dict[str, _Bucket], str]]:
        lower = nfc_key(path).lower()
        name = posixpath.basename(lower)
        yield self._by_path, lower
        yield self._by_name, name
        if lower.endswith(_NOTE_EXT):
            yield self._by_stemless_path, lower[: -len(_NOTE_EXT)]
            yield self._by_name, name[: -len(_NOTE_EXT)]

    def add(self, path: str) -> None:
        """Make ``path`` a possible link target."""
        self._memo.clear()
        path = sys.intern(path)
        for index, key in self._keys(path):
            bucket = index.get(key)
            if bucket is None:
                index[sys.intern(key)] = path
            elif isinstance(bucket, str):
                if bucket != path:
                    index[key] = {bucket, path}
            else:
                bucket.add(path)

    def discard(self, path: str) -> None:
        """Forget ``path`` (no error if unknown)."""
        self._memo.clear()
        for index, key in self._keys(path):
            bucket = index.get(key)
            if bucket is None:
                continue
            if isinstance(bucket, str):
                if bucket == path:
                    del index[key]
                continue
            bucket.discard(path)
            if len(bucket) == 1:
                index[key] = next(iter(bucket))

    @staticmethod
    def _best(paths: _Bucket | None) -> str | None:
        if not paths:
            return None
        if isinstance(paths, str):  # most names are unique: no sort key to build
            return paths
        return min(paths, key=lambda p: (len(p), p))

    def resolve(self, target: str, src: str, *, kind: LinkKind = "wikilink") -> str | None:
        """Vault path that ``target`` (as written in note ``src``) points at, or ``None``.

        An empty target (``[[#Heading]]``) is the source note itself; URLs are ``None``.
        """
        # the answer depends on the linking note only for a relative path (and an empty
        # target, the note itself)
        alone = kind not in PATH_LINK_KINDS and not target.strip().startswith(".") \
            and "%" not in target
        if alone and (target, kind) in self._memo:  # most targets are linked many times
            return self._memo[(target, kind)]
        found = self._resolve_target(target, src, kind)
        if alone and target.strip():
            self._memo[(target, kind)] = found
        return found

    def _resolve_target(self, target: str, src: str, kind: LinkKind) -> str | None:
        target = nfc_key(target.strip())
        if not target:
            return src
        if target.lower().startswith(_URL_SCHEMES):
            return None
        relative = kind in PATH_LINK_KINDS
        found = self._resolve(target, src, relative=relative)
        if found is None and "%" in target:
            found = self._resolve(nfc_key(unquote(target)), src, relative=relative)
        return found

    def _resolve(self, target: str, src: str, *, relative: bool) -> str | None:
        target = target.replace("\\", "/")
        if relative or target.startswith(("./", "../")):
            joined = posixpath.normpath(posixpath.join(nfc_key(posixpath.dirname(src)), target))
            if not joined.startswith("../"):
                hit = self._as_path(joined.lower())
                if hit is not None:
                    return hit
        key = posixpath.normpath(target.lstrip("/")).lower()
        if key in ("", "."):
            return None
        if "/" in key or key.endswith(_NOTE_EXT):
            hit = self._as_path(key)
            if hit is not None:
                return hit
        if "/" in key:
            return self._by_suffix(key)
        return self._best(self._by_name.get(key))

    def _as_path(self, key: str) -> str | None:
        return self._best(self._by_path.get(key)) or self._best(self._by_stemless_path.get(key))

    def _by_suffix(self, key: str) -> str | None:
        name = posixpath.basename(key)
        best: str | None = None
        found = self._by_name.get(name, ())
        for path in (found,) if isinstance(found, str) else found:
            lower = nfc_key(path).lower()
            suffix_match = lower.endswith("/" + key) or _strip_md(lower).endswith("/" + key)
            if suffix_match and _better(path, best):
                best = path
        return best


class GraphLink(Protocol):
    """What the vault graph reads of a link record (``magma.store.LinkRecord`` fits); the
    graph resolves the target itself (:class:`LinkResolver`), as the store does."""

    @property
    def src(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def subpath(self) -> str | None: ...


def node_id(kind: str, name: str) -> str:
    """Graph node id: ``"note:<path>"``, ``"attachment:<path>"``, ``"tag:<name>"``,
    ``"unresolved:<target>"``; interned (:func:`sys.intern`): a graph keys each edge by the
    id objects it is given, so it holds one object per node instead of one per edge end
    (part of what ``bench/graph_memory.py`` measures)."""
    return sys.intern(f"{kind}:{name}")
