"""What ``dreamd forget`` leaves in the other memories: the links dreamd wrote to the forgotten
one, taken out, and a memory it had superseded made current again; a memory derived from it
keeps only a count of its forgotten sources.

dreamd writes a memory's name into other memories' frontmatter when it supersedes, merges,
archives, links a possible pair or keeps one apart (:data:`LINK_KEYS`). After ``forget``
that name would stay in the vault — it is often the memory's text, slugged — and a memory
it superseded would stay closed by a memory that no longer exists (hidden from context and
search, and a broken link for ``dreamd check``). Each such memory gets one minimal frontmatter
edit through the one writer. Links a user wrote themselves (in the body, or in other
properties) are theirs: they are listed, never edited.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ccb.frontmatter_edit import set_properties
from ccb.model import PropertyValue
from ccb.names import nfc_key
from ccb.parse import parse_note
from ccb.writer import NoteWriter
from config.errors import DreamdError
from consistency.lifecycle import is_archived
from daemon.memory_pool import StoredMemory
from magma.lineage import LineageResolver

__all__ = ["FORGOTTEN_SOURCES_KEY", "LINK_KEYS", "Names", "Unlinked", "by_stem", "link_stem",
           "successor_of", "unlink_forgotten", "unlink_in_version"]

#: Frontmatter properties in which dreamd writes another memory's name.
LINK_KEYS = ("supersedes", "superseded_by", "merged_into", "possible_duplicate",
             "possible_contradiction", "distinct_from", "derived_from")
#: Counts, in a memory derived from others (``derived_from``), the sources forgotten since:
#: the forgotten name leaves the file, the fact that a source changed stays for ``dreamd
#: check`` (``consistency.graph_checks``).
FORGOTTEN_SOURCES_KEY = "forgotten_sources"
#: Keys that close a memory in favour of the one they name: when that one is forgotten, the
#: memory is current again.
_CLOSING_KEYS = frozenset({"superseded_by", "merged_into"})


@dataclass(slots=True)
class Unlinked:
    """What :func:`unlink_forgotten` did: memories edited, those current again, and memories
    whose own text still names the forgotten one (left as the user wrote them)."""

    edited: list[str] = field(default_factory=list)
    current_again: list[str] = field(default_factory=list)
    #: ``(path, successor stem)``: memories the forgotten one closed, now closed by its
    #: successor
    relinked: list[tuple[str, str]] = field(default_factory=list)
    named_by_user: list[str] = field(default_factory=list)


def link_stem(link: str) -> str:
    """``[[folder/name|alias]]`` → ``name``, in NFC (:func:`ccb.names.nfc_key`) and
    case-folded: the file a link names. A vault path (``Memory/name.md``) gives its stem
    the same way, so a link and a file name compare equal however either was spelt."""
    return nfc_key(link.strip().removeprefix("[[").removesuffix("]]").split("|")[0]
                   .split("#")[0].rsplit("/", 1)[-1].removesuffix(".md").strip()).casefold()


def unlink_forgotten(writer: NoteWriter, memories: Sequence[StoredMemory], stem: str,
                     *, origin: str, forgotten: StoredMemory | None = None) -> Unlinked:
    """Take ``[[stem]]`` (the forgotten memory's file name) out of :data:`LINK_KEYS` of
    ``memories``; a memory it superseded or absorbed is current again (``valid_to``, the
    archive keys and the closing link removed, its earlier status back) — unless the
    forgotten memory (``forgotten``) was itself superseded: then its successor
    (:func:`successor_of`) takes its place in the chain (``superseded_by`` names the successor,
    whose ``supersedes`` names the older memory), so forgetting the middle of a chain never
    makes its oldest memory current beside its newest. Without ``forgotten`` (its file is
    gone: deleted by hand, or a forget cut short), the successor is the memory whose
    ``supersedes`` names it. Raises as :meth:`ccb.writer.NoteWriter.write`."""
    wanted = _naming(stem, memories, forgotten)
    written = nfc_key(f"[[{stem}").casefold()
    done = Unlinked()
    successor = successor_of(forgotten, memories) if forgotten is not None else \
        _superseder_of(wanted, memories)
    relinked = _relinked(memories, wanted, successor)
    for stored in memories:
        updates, remove, closed = relinked.get(stored.path) or _edit_of(stored, wanted)
        if updates or remove:
            data = set_properties(stored.data, updates, remove=remove, path=stored.path)
            writer.write(stored.path, data, base=stored.data, origin=origin,
                         change="no longer names a forgotten memory")
            done.edited.append(stored.path)
            if stored.path in relinked and successor is not None and \
                    link_stem(stored.path) != link_stem(successor):
                done.relinked.append((stored.path, successor))
            if closed:
                done.current_again.append(stored.path)
        elif written in nfc_key((stored.note.frontmatter_raw or "") + stored.note.body).casefold():
            done.named_by_user.append(stored.path)
    return done


#: Does a link as written name the forgotten memory?
Names = Callable[[str], bool]


def by_stem(stem: str) -> Names:
    """A link names the memory of file name ``stem`` when its stem is ``stem``
    (:func:`link_stem`): for a file read alone (an earlier version), with no other memory to
    tell two files of one name apart."""
    wanted = link_stem(stem)
    return lambda link: link_stem(link) == wanted


def _naming(stem: str, memories: Sequence[StoredMemory], forgotten: StoredMemory | None
            ) -> Names:
    """A link names the forgotten memory (file name ``stem``) when the lineage's rule
    (:class:`magma.lineage.LineageResolver`) resolves it to the forgotten file among
    ``memories`` and it; a link that resolves to another memory never does
    (``[[work/lunch]]`` when ``home/lunch`` is forgotten); one that names no memory does
    when its stem is ``stem`` (the forgotten file is gone already)."""
    resolve = LineageResolver.of(
        (s.path, s.note.memory.name if s.note.memory and s.note.memory.name
         else Path(s.path).stem) for s in [*memories, *([forgotten] if forgotten else [])])
    alone = by_stem(stem)

    def names(link: str) -> bool:
        target = resolve(link)
        if target is None:
            return alone(link)
        return forgotten is not None and target == forgotten.path

    return names


def successor_of(forgotten: StoredMemory, memories: Sequence[StoredMemory]) -> str | None:
    """The file stem of the live memory in ``memories`` that superseded or absorbed
    ``forgotten`` (its first closing link that names one), else ``None``."""
    stems = {link_stem(s.path): s for s in memories if s.path != forgotten.path}
    for key in sorted(_CLOSING_KEYS):
        for link in _links(forgotten.note.properties.get(key)):
            found = stems.get(link_stem(link))
            if found is not None:
                return Path(found.path).stem
    return None


def _superseder_of(wanted: Names, memories: Sequence[StoredMemory]) -> str | None:
    """The file stem of a memory in ``memories`` whose ``supersedes`` names ``wanted`` (a
    live one first), else ``None``: the successor read from the other end of the link."""
    naming = [s for s in memories
              if any(wanted(v) for v in _links(s.note.properties.get("supersedes")))]
    naming.sort(key=lambda s: (any(_links(s.note.properties.get(k)) for k in _CLOSING_KEYS),
                               s.path))
    return Path(naming[0].path).stem if naming else None


def _links(value: PropertyValue | None) -> list[str]:
    return [str(v) for v in (value if isinstance(value, list) else [value] if value else [])]


def _relinked(memories: Sequence[StoredMemory], wanted: Names, successor: str | None
              ) -> dict[str, tuple[dict[str, PropertyValue], list[str], bool]]:
    """The edits that put ``successor`` in the forgotten memory's place in a chain: each
    memory the forgotten one closed is closed by ``successor`` instead, and ``successor``'s
    ``supersedes`` names them. ``{path: (updates, removals, False)}``."""
    if successor is None:
        return {}
    edits: dict[str, tuple[dict[str, PropertyValue], list[str], bool]] = {}
    closed: list[str] = []
    for stored in memories:
        updates: dict[str, PropertyValue] = {}
        for key in sorted(_CLOSING_KEYS):
            value = stored.note.properties.get(key)
            links = _links(value)
            if any(wanted(v) for v in links):
                kept = [f"[[{successor}]]" if wanted(v) else v for v in links]
                updates[key] = kept[0] if len(kept) == 1 and not isinstance(value, list) \
                    else list[PropertyValue](kept)
        if updates:
            edits[stored.path] = (updates, [], False)
            closed.append(f"[[{Path(stored.path).stem}]]")
    heir = next((s for s in memories if link_stem(s.path) == link_stem(successor)), None)
    if heir is not None and closed:
        updates, remove, _closed = _without_links(heir.note.properties, wanted)
        value = heir.note.properties.get("supersedes")
        named = [v for v in _links(value) if not wanted(v)]
        together = [*named, *(c for c in closed if c not in named)]
        updates["supersedes"] = together[0] if len(together) == 1 else \
            list[PropertyValue](together)
        edits[heir.path] = (updates, [k for k in remove if k != "supersedes"], False)
    return edits


def unlink_in_version(path: str, data: bytes, stem: str) -> bytes | None:
    """An earlier version's bytes (a whole memory file) with ``[[stem]]`` taken out of
    :data:`LINK_KEYS`, nothing else changed (the version's own state stays as it was);
    ``None`` when it names none or does not read."""
    try:
        note = parse_note(path, data)
    except DreamdError:
        return None
    if note.problems:
        return None
    updates, remove, _closed = _without_links(note.properties, by_stem(stem))
    if not updates and not remove:
        return None
    return set_properties(data, updates, remove=remove, path=path)


def _without_links(props: Mapping[str, PropertyValue], wanted: Names
                   ) -> tuple[dict[str, PropertyValue], list[str], bool]:
    """The edit that takes links to ``wanted`` out of :data:`LINK_KEYS`: ``(updates,
    removals, no closing link is left)``."""
    updates: dict[str, PropertyValue] = {}
    remove: list[str] = []
    closed = still_closed = False
    for key in LINK_KEYS:
        value = props.get(key)
        links = [str(v) for v in (value if isinstance(value, list) else [value] if value else [])]
        kept = [v for v in links if not wanted(v)]
        still_closed = still_closed or (key in _CLOSING_KEYS and bool(kept))
        if kept == links:
            continue
        closed = closed or key in _CLOSING_KEYS
        if kept:
            updates[key] = kept[0] if len(kept) == 1 and not isinstance(value, list) \
                else list[PropertyValue](kept)
        else:
            remove.append(key)
    return updates, remove, closed and not still_closed


def _names(value: PropertyValue | None, wanted: Names) -> bool:
    """Does a property value (one link or a list) hold a link to ``wanted``?"""
    links = value if isinstance(value, list) else [value] if value else []
    return any(wanted(str(v)) for v in links)


def _edit_of(stored: StoredMemory, wanted: Names
             ) -> tuple[dict[str, PropertyValue], list[str], bool]:
    """The property edit that takes ``wanted`` out of ``stored``: ``(updates, removals,
    made current again)``."""
    props = stored.note.properties
    updates, remove, closed = _without_links(props, wanted)
    if _names(props.get("derived_from"), wanted):
        before = props.get(FORGOTTEN_SOURCES_KEY)
        count = before if isinstance(before, int) and not isinstance(before, bool) else 0
        updates[FORGOTTEN_SOURCES_KEY] = count + 1
    if closed:
        meta = stored.note.memory
        if meta is not None and meta.valid_to is not None:
            remove.append("valid_to")
        status = props.get("status")
        if isinstance(status, str) and is_archived(status):
            before = props.get("status_before")
            if isinstance(before, str) and before.strip() and not is_archived(before):
                updates["status"] = before
            else:
                remove.append("status")
            remove.extend(k for k in ("archived", "archived_reason", "status_before")
                          if k in props)
    return updates, remove, closed
