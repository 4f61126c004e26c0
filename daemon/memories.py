"""Writing memories: ``dreamd remember``, ``show``, ``forget`` and the ``MEMORY.md`` rebuild.

Every write goes through one :class:`ccb.writer.NoteWriter` (compare-before-write, merge or
conflict copy) after the secret check, and then the same files are indexed like any edit.
Which memory a new fact is — the same, a restatement, a contradiction or new — is decided by
the pure :func:`consistency.duplicates.decide`; this module only gathers its inputs and
carries out its answer:

- ``Duplicate``: nothing is written; the existing memory is returned.
- ``Update``: the existing file gets the new sentences (``merge_bodies``), ``updated`` and
  ``version`` + 1, by a minimal frontmatter edit.
- ``Supersede``: the old memory gets ``valid_to`` (it stays on disk and in the index), and the
  new one is written with ``supersedes: "[[old]]"``.
- ``New``: a new file in the memory folder, named by a slug of its name.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np
import structlog
from ulid import ULID

from ccb.entry_notes import is_entry_path, split_entry_path
from ccb.frontmatter_edit import replace_body, set_properties
from ccb.memory_file import (
    NewMemory,
    content_hash_normalised,
    memory_path,
    render_memory,
    slugify,
)
from ccb.memory_text import checked_field, checked_memory_text
from ccb.model import MemoryMeta, MemoryType, PropertyValue, memory_key
from ccb.names import nfc_key
from ccb.owner import Owner, parse_owner
from ccb.parse import parse_note
from ccb.writer import NoteWriter, WriteOutcome
from config.errors import DreamdError, InvalidOwnerError, MemoryNotFoundError, StoreError
from config.settings import MEMORY_MAX_CHARS
from consistency.duplicates import (
    Duplicate,
    MemoryDraft,
    MemoryFacts,
    New,
    Possible,
    Series,
    Supersede,
    Update,
    claim_of,
    decide,
    merge_bodies,
)
from consistency.lifecycle import MemoryState, is_current
from consistency.profile import PROFILE_SUBJECT
from consistency.secrets import refuse_secrets
from daemon.entry_remember import EntryOutcome, entry_pairs, on_entry, settle_entry_pair
from daemon.forget_links import link_stem
from daemon.forgetting import ForgetReport, Forgetting, forget_memory, unfinished_forget
from daemon.index_writer import IndexWrites
from daemon.memory_index_keeper import MemoryIndexKeeper
from daemon.memory_pool import MemoryPool, StoredMemory
from daemon.owners import refuse_secrets_in_owner
from daemon.pair_links import SETTLED_APART_KEY, with_link
from magma.chunking import Chunk, chunk_note
from magma.embedder import Embedder
from magma.inline_data import without_inline_data
from magma.store import MagmaStore

__all__ = ["ForgetReport", "MemoryService", "RememberResult", "derived_description",
           "derived_name"]

log = structlog.get_logger("dreamd.memories")

#: Longest name derived from a memory's text when none is given, in characters.
NAME_MAX_CHARS = 60
#: Longest description derived from a memory's text, in characters (MEMORY.md hook length).
DESCRIPTION_MAX_CHARS = 150


@dataclass(frozen=True, slots=True)
class RememberResult:
    """What ``remember`` did; ``path`` is the memory the fact now lives in."""

    action: Literal["created", "duplicate", "updated", "superseded"]
    memory_id: str
    path: str
    superseded: str | None = None
    reason: str | None = None
    conflict_path: str | None = None
    #: The stored memory the decision was about (the closest judged one), and how it was
    #: judged: ``verdict`` (``duplicate``, ``contradiction``, ``series``,
    #: ``possible_duplicate``, ``possible_contradiction``, ``distinct``) and ``judgement``,
    #: one line naming the rule, the slot, what differed and the similarity.
    candidate: str | None = None
    verdict: str | None = None
    judgement: str | None = None
    #: A possible duplicate or contradiction: both memories are kept and link each other
    #: under this frontmatter property (``dreamd check`` lists the pair).
    linked_as: str | None = None


class MemoryService:
    """Remember, show and forget memories of one vault (plain constructor arguments).

    ``pool`` holds the memory files (their folder, and how the index cuts them into chunks);
    ``memory_index`` is the one owner of that folder's ``MEMORY.md``.

    ``index`` indexes paths after a write (:class:`IndexWrites`: now, or a ``remember``'s
    right after its answer; ``store`` is read without waiting for that: files, vectors kept
    of memories just written, committed rows, else embedded, :meth:`MemoryPool.facts`).
    ``store`` may be ``None`` before the first sync (no embedding candidates then).
    ``owner`` is who the service acts for: it sees shared memories and that owner's
    (:meth:`ccb.owner.Owner.sees`), and new memories are written with it; ``None`` (the vault's
    owner at the CLI) sees every memory and writes shared ones. ``max_memory_chars``:
    ``memory.max_chars``. The attribute ``origin`` names the writer in the version history
    (``api``; ``dream`` for facts a dream extracted).
    """

    def __init__(
        self,
        *,
        writer: NoteWriter,
        pool: MemoryPool,
        memory_index: MemoryIndexKeeper,
        store: MagmaStore | None,
        embedder: Callable[[], Embedder],
        index: IndexWrites,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        owner: Owner | None = None,
        forgetting: Forgetting | None = None,
        max_memory_chars: int = MEMORY_MAX_CHARS,
    ) -> None:
        self.origin = "api"
        self.max_memory_chars = max_memory_chars
        self._forgetting = forgetting
        self.writer = writer
        self.memory_index = memory_index
        self.owner = owner
        self.memory_folder = pool.memory_folder
        self.chunk_max_chars = pool.chunk_max_chars
        self.store = store
        self._embedder = embedder
        self._index = index
        self._clock = clock
        self._pool = pool

    # ------------------------------------------------------------------ reading

    def memories(self) -> list[StoredMemory]:
        """Every memory file in the memory folder this service's owner may see, parsed
        (problems included)."""
        return _seen_by(self.owner, self._all_memories())

    def _all_memories(self) -> list[StoredMemory]:
        return self._pool.memories()

    def find(self, id_or_name: str) -> StoredMemory:
        """The memory whose id, name, file stem, path or whole text is ``id_or_name``
        (case-insensitive, compared in NFC: ``Memory/crème.md`` typed names the file a Mac
        stored decomposed; a long text's name is cut, so the text itself names it too).
        Raises :class:`MemoryNotFoundError` when none or several match."""
        wanted = _lookup_key(id_or_name)
        found = []
        for stored in self.memories():
            meta = stored.note.memory
            assert meta is not None
            if meta.id and meta.id.casefold() == wanted:
                return stored  # an id names one memory
            keys = {meta.name, stored.note.title, stored.path, stored.path.rsplit("/", 1)[-1],
                    stored.note.body}
            if wanted in {_lookup_key(k) for k in keys if k}:
                found.append(stored)
        today = self._clock().date()
        return _one_found([s for s in found if _current(s, today)] or found, id_or_name)

    # ------------------------------------------------------------------ writing

    def remember(
        self,
        text: str,
        *,
        type: MemoryType,
        name: str | None = None,
        description: str | None = None,
        subject: str | None = None,
        pinned: bool = False,
        source: str = "user",
        derived_from: Sequence[str] = (),
    ) -> RememberResult:
        """Store one fact as a memory (see the module docstring for what happens), owned by
        this service's owner. Duplicates and contradictions are looked for among memories of
        the same type and the same owner only (one person's fact never closes another's).

        Raises, with nothing written: ``MemoryTextError`` first (:mod:`ccb.memory_text`),
        ``SecretRefusedError`` when a field carries a credential, ``VaultNotWritableError``;
        ``StaleWriteError`` when a file vanished mid-write.
        """
        body = checked_memory_text(text, max_chars=self.max_memory_chars, fields={
            "name": name, "description": description, "subject": subject})
        for value, where in ((body, "text"), (name or "", "name"),
                             (description or "", "description"), (subject or "", "subject")):
            refuse_secrets(value, where=f"remember: memory {where}")
        if self.owner is not None:  # (written into the memory's file)
            refuse_secrets_in_owner(str(self.owner), where="remember: memory owner")
        name = (_given(name) or derived_name(body)).strip()
        description = _one_line(_given(description) or derived_description(body))
        now = self._clock()
        draft = MemoryDraft(
            type=type, subject=_given(subject), name=name, description=description, body=body,
            content_hash=content_hash_normalised(body), written=now.date(),
            derived_from=tuple(derived_from))
        draft = replace(draft, embedding=self._draft_embedding(draft))
        # One remember at a time per vault, across processes (the writer lock): the decision
        # is made on the memories as they are when it is written, never on a view another
        # remember is changing (two would supersede one memory twice, or pick one file name).
        with self.writer.batch():
            now = self._clock()  # (after the wait: a supersession is never dated before it)
            draft = replace(draft, written=now.date())
            result, changed = self._decide_and_write(draft, now, pinned, source)
            paths = _unindexed(self.store, self.writer.root, _file_of(result.path), self._index) \
                if result.action == "duplicate" else list(dict.fromkeys(_file_of(p) for p in [
                    result.path, *([result.superseded] if result.superseded else []), *changed]))
            rebuilt = self._rebuilt(paths, recheck=True) if paths else []  # (lock held)
        if paths:  # the versions of the bytes written, then the index: after the answer
            self._index.record_versions(self._pool.memories(recheck=paths), paths)
            self._index.index_soon([*paths, *rebuilt])
        log.info("memory.remembered", action=result.action, id=result.memory_id,
                 path=result.path, judgement=result.judgement)
        return result

    def _decide_and_write(
        self, draft: MemoryDraft, now: datetime, pinned: bool, source: str,
    ) -> tuple[RememberResult, list[str]]:
        """:meth:`remember`'s decision and writes, with the writer lock held: the result and
        the other memory files it changed."""
        body = draft.body
        owner = str(self.owner) if self.owner else None
        # memory files and the entries of entry files (daemon.entry_remember) alike, one look
        files, entries = self._pool.memories_and_entries()
        stored = [s for s in [*_seen_by(self.owner, files), *entries]
                  if _comparable(s.note.memory, draft.type, owner)]
        decision = decide(draft, self._facts(stored))
        by_id = {memory_key(s.note.memory.id, s.path): s for s in stored if s.note.memory}
        draft = replace(draft, claim=claim_of(draft))
        why = decision.why
        target = getattr(decision, "existing_id", None) or getattr(decision, "nearest_id", None)
        same_text = isinstance(decision, Duplicate) and why is None
        judged: dict[str, Any] = {
            "candidate": by_id[target].path if target in by_id else None,
            "verdict": "duplicate" if same_text else (why.verdict if why else None),
            "judgement": "duplicate (same text)" if same_text else (
                why.explain() if why else None)}
        changed: list[str] = []
        closed = None
        if target in by_id and is_entry_path(by_id[target].path):  # daemon.entry_remember
            done = on_entry(self.writer, decision, by_id[target], draft, today=now.date(),
                            pinned=pinned, origin=self.origin)
            if done is not None:
                return replace(_entry_result(done), **judged), []
            # a fact no entry can hold: a memory file (a contradicted entry got vt)
            closed = by_id[target].path if isinstance(decision, Supersede) else None
            decision = New() if isinstance(decision, Supersede | Possible) else decision
        match decision:
            case Duplicate(existing_id=existing):
                hit = by_id[existing]
                log.info("memory.duplicate", id=existing, path=hit.path)
                return RememberResult("duplicate", existing, hit.path, **judged), []
            case Update(existing_id=existing):
                hit = by_id[existing]
                if merge_bodies(hit.note.body.rstrip("\n"), body) == hit.note.body.rstrip("\n"):
                    # the same fact and not one sentence to add: already known
                    return RememberResult("duplicate", existing, hit.path, **judged), []
                result = self._update(hit, body, now)
            case Supersede(existing_id=existing, reason=reason, also_contradicts=also):
                others = _memory_files(also, by_id)  # of several facts: linked, kept live
                result = self._supersede(by_id[existing], draft, now, pinned, owner, source,
                                         reason, also=others)
                changed.extend(_link(self.writer, other, "possible_contradiction", result.path,
                                     self.origin) for other in others)
            case Possible(existing_id=existing, kind=kind):
                # an unsure pair: both stay live, linked both ways, listed by dreamd check —
                # nothing is merged or superseded on a guess
                link = f"possible_{kind}"
                memory_id, outcome = self._create(draft, now, pinned, owner, source,
                                                  supersedes=(), links={link: [by_id[existing]]})
                changed.append(_link(self.writer, by_id[existing], link, outcome.path,
                                     self.origin))
                result = RememberResult("created", memory_id, outcome.path,
                                        conflict_path=outcome.conflict_path, linked_as=link)
            case New() | Series():
                # a series member is a memory of its own: both stay live
                memory_id, outcome = self._create(draft, now, pinned, owner, source,
                                                  supersedes=())
                result = RememberResult("created", memory_id, outcome.path,
                                        conflict_path=outcome.conflict_path)
        if closed is not None:
            result = replace(result, action="superseded", superseded=closed)
        return replace(result, **judged), changed

    def _draft_embedding(self, draft: MemoryDraft) -> np.ndarray | None:
        """The embedding of the draft's first chunk as the memory file will be indexed (the
        same text as the stored memories' vectors), ``None`` before the first sync; the store
        keeps it for indexing that chunk (:func:`_first_chunk`), and an embedder of indexing
        (the app's) the user's embedding cache under the chunk's hash."""
        chunk = _first_chunk(draft, self.memory_folder, self.chunk_max_chars) \
            if self.store is not None else None
        if self.store is None or chunk is None:
            return None
        vector = self._embedder().embed([chunk.embed_text])[0]
        self.store.recent_vectors.add([chunk.content_hash], vector[None, :])
        return vector

    def _facts(self, stored: Sequence[StoredMemory]) -> list[MemoryFacts]:
        embed = (lambda texts: self._embedder().embed(texts)) if self.store is not None else None
        return self._pool.facts(stored, self.store, embed=embed, settle=self._index.settle)

    def _create(
        self, draft: MemoryDraft, now: datetime, pinned: bool, owner: str | None, source: str,
        *, supersedes: tuple[str, ...], links: Mapping[str, Sequence[StoredMemory]] | None = None,
    ) -> tuple[str, WriteOutcome]:
        """Write ``draft`` as a new memory file. A memory that names the day it happened
        ("deployed on 2026-03-02", "昨天") is valid from that day, else from today."""
        memory_id = str(ULID())
        existing = _folder_files(self.writer.root, self.memory_folder)  # new files go there
        path = memory_path(existing, self.memory_folder, draft.name)
        event_day = draft.claim.event_day if draft.claim is not None else None
        data = render_memory(NewMemory(
            name=draft.name, description=draft.description, type=draft.type, id=memory_id,
            created=now, updated=now, body=draft.body + "\n", subject=draft.subject,
            valid_from=event_day if event_day and event_day <= now.date() else now.date(),
            supersedes=supersedes, pinned=pinned, source=source, owner=owner,
        ))
        added = _link_properties(links or {})
        if draft.derived_from:  # where a dream read it (the raw diary's lines)
            added["derived_from"] = list(draft.derived_from)
        if added:
            data = set_properties(data, added, path=path)
        return memory_id, self.writer.write(path, data, base=None, origin=self.origin)

    def _update(self, old: StoredMemory, body: str, now: datetime) -> RememberResult:
        meta = old.note.memory
        assert meta is not None
        merged_body = merge_bodies(old.note.body.rstrip("\n"), body)
        checked_field(merged_body, where=f"remember: {old.path} with this fact merged in",
                      max_chars=self.max_memory_chars)
        data = set_properties(old.data, {"updated": now, "version": (meta.version or 1) + 1},
                              path=old.path)
        data = replace_body(data, merged_body + "\n")
        outcome = self.writer.write(old.path, data, base=old.data, origin=self.origin)
        return RememberResult("updated", memory_key(meta.id, old.path), old.path,
                              conflict_path=outcome.conflict_path)

    def _supersede(
        self, old: StoredMemory, draft: MemoryDraft, now: datetime, pinned: bool, owner: str | None,
        source: str, reason: str, *, also: Sequence[StoredMemory] = (),
    ) -> RememberResult:
        meta = old.note.memory
        assert meta is not None
        memory_id, outcome = self._create(draft, now, pinned, owner, source,
                                          supersedes=(old.note.title,),
                                          links={"possible_contradiction": also})
        # the older memory names its successor, as a dream's supersession does
        closed = set_properties(
            old.data, {"valid_to": now.date(), "superseded_by": f"[[{Path(outcome.path).stem}]]",
                       "updated": now, "version": (meta.version or 1) + 1},
            path=old.path,
        )
        self.writer.write(old.path, closed, base=old.data, origin=self.origin)
        return RememberResult("superseded", memory_id, outcome.path, superseded=old.path,
                              reason=reason, conflict_path=outcome.conflict_path)

    # ------------------------------------------------------------------ possible pairs

    def settle_pair(self, id_or_name: str, answer: Literal["same", "changed", "different"],
                    *, other: str | None = None) -> str:
        """Settle a pair ``remember`` kept apart on a guess (``possible_duplicate`` /
        ``possible_contradiction`` links): ``same`` merges the newer into the older (every
        sentence kept; the newer archived with ``merged_into``), ``changed`` lets the newer
        supersede the older (both stay; the older gets ``valid_to``), ``different`` keeps
        both as two facts (each names the other in ``distinct_from``: a dream unsure of them
        again does not link them again, :mod:`daemon.pair_links`). The links go either way.
        Minimal frontmatter edits through the one writer; returns a line for the user.
        Raises ``MemoryNotFoundError`` when the memory has no such pair (or several and
        ``other`` names none of them)."""
        if is_entry_path(id_or_name):  # two lines of an entry file (daemon.entry_remember)
            message = settle_entry_pair(
                self.writer, self._pool.entries(), id_or_name, answer, owner=self.owner,
                other=other, today=self._clock().date(), origin=self.origin)
            self.after_change([_file_of(id_or_name)])
            return message
        first = self.find(id_or_name)
        partners = {path: kind for kind, path in self._pair_links(first)}
        if other is not None:
            wanted = self.find(other)
            partners = {p: k for p, k in partners.items() if p == wanted.path}
        if len(partners) != 1:
            listed = ", ".join(sorted(partners)) or "none"
            raise MemoryNotFoundError(
                f"conflicts resolve {id_or_name}: {len(partners)} possible pairs ({listed}); "
                + ("name the other memory with --with" if partners else
                   "this memory was not kept apart from another one"))
        second = next(s for s in self.memories() if s.path == next(iter(partners)))
        older, newer = sorted((first, second), key=_written_order)
        now = self._clock()
        edits = {s.path: _unlinked(s, {older.path, newer.path}) for s in (older, newer)}
        if answer == "changed":
            meta = older.note.memory
            assert meta is not None
            edits[older.path] = set_properties(edits[older.path], {
                "valid_to": now.date(), "updated": now, "version": (meta.version or 1) + 1},
                path=older.path)
            targets = list(newer.note.memory.supersedes) if newer.note.memory else []
            links: list[PropertyValue] = [f"[[{t}]]" for t in targets]
            links.append(f"[[{Path(older.path).stem}]]")
            edits[newer.path] = set_properties(
                edits[newer.path], {"supersedes": links[0] if len(links) == 1 else links},
                path=newer.path)
        elif answer == "same":
            meta = older.note.memory
            assert meta is not None
            if "```" not in newer.note.body and "~~~" not in newer.note.body:
                merged = merge_bodies(older.note.body.rstrip("\n"), newer.note.body.strip())
                if merged.rstrip("\n") != older.note.body.rstrip("\n"):
                    edited = set_properties(edits[older.path], {
                        "updated": now, "version": (meta.version or 1) + 1}, path=older.path)
                    edits[older.path] = replace_body(edited, merged.rstrip("\n") + "\n")
            status = newer.note.memory.status if newer.note.memory else None
            updates: dict[str, PropertyValue] = {
                "status": "archived", "archived": now.date(),
                "archived_reason": "duplicate (settled by you)",
                "merged_into": f"[[{Path(older.path).stem}]]"}
            if status:
                updates["status_before"] = status
            edits[newer.path] = set_properties(edits[newer.path], updates, path=newer.path)
        else:  # two facts: a dream unsure of them again links them no more
            for stored, partner in ((older, newer), (newer, older)):
                edits[stored.path] = with_link(edits[stored.path], stored.note.properties,
                                               SETTLED_APART_KEY, partner.path, path=stored.path)
        for stored in (older, newer):
            if edits[stored.path] != stored.data:
                self.writer.write(stored.path, edits[stored.path], base=stored.data,
                                  origin=self.origin)
        self.after_change([older.path, newer.path])
        return {
            "same": f"merged {newer.path} into {older.path} (archived with merged_into)",
            "changed": f"{newer.path} supersedes {older.path} (both stay; the older has "
                       "valid_to)" + _said_besides(older.note.body, newer.note.body),
            "different": f"kept {older.path} and {newer.path} as two facts",
        }[answer]

    def possible_pairs(self) -> list[tuple[str, str, str]]:
        """``(kind, older path, newer path)`` of every live pair kept apart on a guess."""
        today = self._clock().date()
        live = {s.path: s for s in self.memories() if _current(s, today)}
        found: set[tuple[str, str, str]] = set()
        for stored in live.values():
            for kind, other in self._pair_links(stored):
                if other in live:
                    a, b = sorted((stored, live[other]), key=_written_order)
                    found.add((kind, a.path, b.path))
        found |= entry_pairs(self._pool.entries(), self.owner, today)
        return sorted(found)

    def _pair_links(self, stored: StoredMemory) -> list[tuple[str, str]]:
        """``(kind, path)`` of the memories ``stored`` links as a possible pair."""
        by_stem = {link_stem(s.path): s.path for s in self.memories()}
        return [(kind, path) for kind in _PAIR_KINDS for link in _links_of(stored, kind)
                if (path := by_stem.get(link_stem(link))) is not None and path != stored.path]

    # ------------------------------------------------------------------ forget

    def forget(self, id_or_name: str, *, remains: tuple[str, str] | None = None
               ) -> ForgetReport:
        """Delete a memory for good (:func:`daemon.forgetting.forget_memory`: also one whose
        file is gone, ``remains`` = ``(history key, vault path)``, or whose forget was cut
        short)."""
        return forget_memory(self, self._forgetting, id_or_name, remains=remains)

    def unfinished_forget(self, id_or_name: str) -> tuple[str, str] | None:
        """``(history key, path)`` of a forget cut short that ``id_or_name`` names."""
        return unfinished_forget(self, self._forgetting, id_or_name)

    # ------------------------------------------------------------------ MEMORY.md

    def rebuild_index(self, changed: Collection[str] = (), *, recheck: bool = False
                      ) -> WriteOutcome:
        """Rewrite ``MEMORY.md`` from the live memories of every owner (the file is the
        vault's; superseded and expired left out). A hand-edited ``MEMORY.md`` is kept beside
        it as a conflict copy (:meth:`ccb.writer.NoteWriter.write_generated`). ``recheck``:
        the caller holds the writer lock and only ``changed`` are looked at again."""
        text, inputs = self.index_text(recheck=changed if recheck else None)
        self._adopt_index(changed)
        return self.memory_index.write(text, inputs)

    @property
    def index_path(self) -> str:
        """Vault path of ``MEMORY.md``."""
        return self.memory_index.path

    def _adopt_index(self, changed: Collection[str]) -> None:
        """A ``MEMORY.md`` this state folder has no record of (a first write here) is dreamd's
        own, not a hand edit, when it is what the memories gave before this change (those
        not in ``changed``)."""
        if not changed or self.memory_index.has_record():
            return
        current = self.memory_index.current_bytes()
        if current is not None and self.index_text(exclude=changed)[0] == current:
            self.memory_index.adopt(current)

    def index_text(self, *, exclude: Collection[str] = (),
                   recheck: Collection[str] | None = None) -> tuple[bytes, str]:
        """What ``MEMORY.md`` should hold now, and the fingerprint of the memories it was
        built from (:meth:`MemoryIndexKeeper.text_of`; ``exclude`` leaves some out;
        ``recheck``: :meth:`daemon.memory_pool.MemoryPool.memories`)."""
        return self.memory_index.text_of(
            ((s.path, s.note) for s in self._pool.memories(recheck=recheck)
             if s.path not in exclude),
            self._clock().date())

    def after_change(self, paths: Sequence[str], *, purge: bool = False) -> bool:
        """Rebuild ``MEMORY.md`` and index ``paths`` after memory files changed; returns
        what the indexer returned (False: a running daemon indexes)."""
        return self._index.index_now([*paths, *self._rebuilt(paths)], purge=purge)

    def _rebuilt(self, paths: Sequence[str], *, recheck: bool = False) -> list[str]:
        """Rebuild ``MEMORY.md`` after ``paths`` changed (:meth:`rebuild_index`): ``[its
        path]``, or ``[]`` when it could not be written (logged; the memories stay)."""
        try:
            return [self.rebuild_index(changed=paths, recheck=recheck).path]
        except (DreamdError, OSError) as error:
            log.warning("memory_index.not_rebuilt", path=self.index_path, error=str(error))
            return []


def _unindexed(store: MagmaStore | None, root: Path, path: str, index: IndexWrites
               ) -> list[str]:
    """``[path]`` when ``store`` does not hold the file ``root/path`` as it is on disk (no
    file row, or another size or mtime), else ``[]`` (also without a store, or one that
    cannot be read, and when ``index`` is about to index it: a memory just written). A
    ``remember`` killed after its write and before its indexing, said again, finds its
    memory "already known": it is indexed then, not left unsearchable until the next sync."""
    if store is None or index.asked(path):
        return []
    index.settle()
    try:
        known = store.file_index().get(path)
        stat = (root / path).stat()
    except (StoreError, OSError):
        return []
    if known is not None and (known.size, known.mtime_ns) == (stat.st_size, stat.st_mtime_ns):
        return []
    return [path]


def _first_chunk(draft: MemoryDraft, memory_folder: str, max_chars: int) -> Chunk | None:
    """The first chunk of ``draft`` as its memory file will be indexed (``None``: none). Its
    vector, kept by the store under the chunk's content hash
    (:class:`magma.store_memo.RecentVectors`), is what indexing the file just written takes
    instead of looking the chunk up in the chunks table and the user's embedding cache (the
    same model's vector of the same text; a file whose first chunk differs has another hash
    and is looked up)."""
    at = datetime(2000, 1, 1, tzinfo=UTC)
    data = render_memory(NewMemory(
        name=draft.name, description=draft.description, type=draft.type, id="draft",
        created=at, updated=at, body=draft.body + "\n", subject=draft.subject))
    preview = parse_note(f"{memory_folder}/{slugify(draft.name)}.md", data)
    chunks = chunk_note(without_inline_data(preview), max_chars=max_chars)
    return chunks[0] if chunks else None


def _seen_by(owner: Owner | None, stored: list[StoredMemory]) -> list[StoredMemory]:
    """The memories of ``stored`` that ``owner`` may see (``None``: every one)."""
    return [s for s in stored
            if owner is None or owner.sees(s.note.memory.owner if s.note.memory else None)]


def _one_found(candidates: list[StoredMemory], id_or_name: str) -> StoredMemory:
    """The one memory of ``candidates`` (those ``id_or_name`` names); of several, the one
    whose file path or file name is ``id_or_name`` written exactly (case counts: ``a.md``
    and ``A.md``). Raises :class:`MemoryNotFoundError` when none or several are left."""
    if len(candidates) > 1:
        typed = nfc_key(id_or_name.strip())
        exact = [s for s in candidates
                 if typed in {nfc_key(s.path), nfc_key(s.path.rsplit("/", 1)[-1])}]
        candidates = exact if len(exact) == 1 else candidates
    if len(candidates) == 1:
        return candidates[0]
    if candidates:
        raise MemoryNotFoundError(
            f"memory {id_or_name!r}: {len(candidates)} memories have that name ("
            + ", ".join(s.path + (f" id {s.note.memory.id}" if s.note.memory.id else "")
                        for s in candidates if s.note.memory)
            + "); name one by its id, or by its file path written exactly (case counts)")
    raise MemoryNotFoundError(f"memory {id_or_name!r}: no memory has that id or name")


_PAIR_KINDS = ("possible_duplicate", "possible_contradiction")


#: Where a memory's text is cut into sentences for :func:`_said_besides`.
_SENTENCE_CUT = re.compile(r"(?<=[.!?;。！？；])\s*|\n+")


def _said_besides(older: str, newer: str) -> str:
    """For ``conflicts resolve --as changed``: the sentences of the older memory the newer
    one does not restate (a third of their words or Han character pairs, at least), which
    stop showing with it; ``""`` for a memory of one sentence (the one that changed)."""
    said = _word_set(newer)
    sentences = [s.strip() for s in _SENTENCE_CUT.split(older) if s.strip()]
    shares = [len(_word_set(s) & said) / max(1, len(_word_set(s))) for s in sentences]
    if len(sentences) < 2:
        return ""
    left = [s for s, share in zip(sentences, shares, strict=True) if share < 1 / 3]
    if len(left) == len(sentences):  # none restated: the closest one is what changed
        left.pop(shares.index(max(shares)))
    if not left:
        return ""
    return ("; NOTE: the older memory also said " + " / ".join(f"'{s}'" for s in left[:3])
            + ": it no longer shows either; remember what still holds")


def _word_set(text: str) -> set[str]:
    """Words, and Han runs as character pairs ("住在里斯本" → 住在, 在里, 里斯, 斯本)."""
    out: set[str] = set()
    for word in re.findall(r"\w+", text.casefold()):
        if re.search(r"[\u3400-\u9fff]", word) and len(word) > 1:
            out.update(word[i:i + 2] for i in range(len(word) - 1))
        else:
            out.add(word)
    return out


def _link_properties(links: Mapping[str, Sequence[StoredMemory]]) -> dict[str, PropertyValue]:
    """``{key: ["[[stem]]", …]}`` of the memories to link under each key (empty lists left
    out)."""
    return {key: [f"[[{Path(other.path).stem}]]" for other in others]
            for key, others in links.items() if others}


def _memory_files(ids: Sequence[str], by_id: Mapping[str, StoredMemory]) -> list[StoredMemory]:
    """The memory files of ``ids`` (an entry of an entry file is left out): the older
    memories of several facts a superseding memory may also contradict
    (:attr:`consistency.duplicates.Supersede.also_contradicts`), each stays live and is
    linked as a possible contradiction both ways."""
    return [by_id[i] for i in ids if i in by_id and not is_entry_path(by_id[i].path)]


def _link(writer: NoteWriter, stored: StoredMemory, key: str, other: str, origin: str) -> str:
    """Add ``[[other]]`` to ``stored``'s list property ``key`` (a minimal frontmatter
    edit; the rest of the file is kept byte for byte); returns its path."""
    data = with_link(stored.data, stored.note.properties, key, other, path=stored.path)
    if data != stored.data:
        writer.write(stored.path, data, base=stored.data, origin=origin)
    return stored.path


def _entry_result(done: EntryOutcome) -> RememberResult:
    """What :func:`daemon.entry_remember.on_entry` did, as ``remember``'s result."""
    return RememberResult(done.action, done.memory_id, done.path, superseded=done.superseded,
                          reason=done.reason, conflict_path=done.conflict_path,
                          linked_as=done.linked_as)


def _folder_files(root: Path, memory_folder: str) -> list[str]:
    """Vault paths of the names in ``root / memory_folder`` (``[]`` when it cannot be
    listed)."""
    try:
        names = [entry.name for entry in os.scandir(root / memory_folder)]  # no Path per file
    except OSError:
        return []
    return [f"{memory_folder}/{name}" if memory_folder else name for name in names]


def _file_of(path: str) -> str:
    """The file a path is in: an entry path's file (``Memory/facts.md#3f2a9c1d``), else
    ``path``."""
    parts = split_entry_path(path)
    return parts[0] if parts else path


def _lookup_key(text: str) -> str:
    """How :meth:`MemoryService.find` compares a name: NFC, runs of white space as one
    space, case-folded."""
    return " ".join(nfc_key(text).split()).casefold()


def _links_of(stored: StoredMemory, kind: str) -> list[str]:
    """The links of ``stored``'s ``kind`` property (one value or a list)."""
    value = stored.note.properties.get(kind)
    return [str(v) for v in (value if isinstance(value, list) else [value] if value else [])]


def _unlinked(stored: StoredMemory, pair: set[str]) -> bytes:
    """``stored``'s bytes without its possible-pair links to the other of ``pair``."""
    stems = {link_stem(p) for p in pair if p != stored.path}
    updates: dict[str, PropertyValue] = {}
    remove: list[str] = []
    for kind in _PAIR_KINDS:
        links = _links_of(stored, kind)
        kept = [v for v in links if link_stem(v) not in stems]
        if links and not kept:
            remove.append(kind)
        elif kept != links:
            updates[kind] = list[PropertyValue](kept)
    if not updates and not remove:
        return stored.data
    return set_properties(stored.data, updates, remove=remove, path=stored.path)


def _written_order(stored: StoredMemory) -> tuple[str, str]:
    """Older first: by ``created`` (ISO text), then path."""
    meta = stored.note.memory
    created = meta.created if meta is not None else None
    return (str(created) if created is not None else "", stored.path)


def _comparable(memory: MemoryMeta | None, kind: str, owner: str | None) -> bool:
    """Whether ``remember`` compares a draft of type ``kind`` with this stored memory: one
    type, one owner, and never the dream's distilled profile (it holds no fact of its own)."""
    return (memory is not None and memory.type == kind and _same_owner(memory.owner, owner)
            and memory.subject != PROFILE_SUBJECT)


def _same_owner(written: str | None, owner: str | None) -> bool:
    if not written or not written.strip():
        return owner is None
    try:
        return owner is not None and str(parse_owner(written)) == owner
    except InvalidOwnerError:
        return False


_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s")


def derived_name(body: str) -> str:
    """The name ``remember`` gives a memory written without one: its first sentence, cut
    to :data:`NAME_MAX_CHARS` characters (``…`` marks a cut)."""
    return _first_words(body, NAME_MAX_CHARS)


def derived_description(body: str) -> str:
    """The ``MEMORY.md`` description ``remember`` gives a memory written without one: its
    first sentence on one line, cut to :data:`DESCRIPTION_MAX_CHARS` characters."""
    return _one_line(_first_words(body, DESCRIPTION_MAX_CHARS))


def _first_words(text: str, limit: int) -> str:
    """The first sentence of ``text`` on one line, cut before ``limit`` characters at the
    last space when there is one in its second half, so a word or a number is never cut in
    two ("…listens on port 8080" is never "…listens on port 80…"); text without spaces
    (Chinese) is cut at a character."""
    line = _one_line(_SENTENCE_END.split(text.strip(), maxsplit=1)[0])
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2 and not line[limit - 1].isspace():
        cut = cut[:space]
    return cut.rstrip() + "…"


def _given(field: str | None) -> str | None:
    """A field of ``remember`` as given, ``None`` when it is blank (``--name "  "``): a field
    given blank is a field not given, as an empty one is."""
    return field.strip() or None if field is not None else None


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _current(stored: StoredMemory, today: date) -> bool:
    """Is ``stored`` a memory current on ``today`` (the one rule,
    :func:`consistency.lifecycle.is_current`)?"""
    meta = stored.note.memory
    return meta is not None and is_current(MemoryState.of(meta, past=False), today)
