"""Dream rules: when a dream is due, and which memories it merges or supersedes.

Pure functions over typed values; no clock, no files. The daemon's dream runner gathers the
inputs and carries out the answers (``daemon/dream.py``).

**Gate** (:func:`dream_due`, DESIGN.md "Dreaming"): due when at least ``min_hours`` have passed
since the last dream *and* at least ``min_sessions`` sessions happened since; forced once
``max_hours`` have passed, sessions or not. A vault that never dreamed counts as "long ago".

**Consolidation** (:func:`plan_consolidation`), over the *current* memories (not archived,
superseded or expired), grouped by owner and type — one person's fact never closes another's:

1. *Exact duplicates*: the same normalised content hash, type and subject (the same words
   about two subjects — "dark mode" for the editor and for the terminal — are two facts).
   A pinned memory is kept (and never archived by any merge or supersession); else the
   oldest (``created``, then id)
   is kept; each other one is archived with ``merged_into`` the keeper. Nothing of it is lost:
   its text equals the keeper's up to case, spacing and emphasis.
2. *Near-duplicates*: within the same type, each memory is decided against the older
   current ones of its subject and those ``remember`` would judge it against by meaning
   (its nearest by cosine, with or without a subject: :func:`_comparison_groups`) by the
   write path's rules (:func:`consistency.duplicates.decide`). ``Update`` → merged:
   the keeper (the older) gets the sentences only the newer has
   (:func:`consistency.duplicates.merge_bodies`), the newer is archived with ``merged_into``.
   ``Supersede`` (a changed value or a negation) → the newer supersedes the older; both are
   kept. ``Possible`` (unsure) → both kept, live, and linked both ways
   (:class:`LinkPossible`: ``possible_duplicate`` / ``possible_contradiction``), as
   ``remember`` links them: ``dreamd check`` lists the pair, ``dreamd conflicts resolve``
   settles it; so are the other memories a superseding one may also contradict
   (:attr:`consistency.duplicates.Supersede.also_contradicts`).
3. *Incremental*: a group is looked at only when one of its members changed since the last
   dream (``changed``); two unchanged memories are never compared again — the last dream
   already did.

Every action is idempotent when the runner applies it as a set of frontmatter values and a
merged body: re-planning after a crash part-way finds the applied ones gone (archived or
superseded memories are no longer current) and plans only the rest.
"""

from __future__ import annotations

import functools
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from typing import Literal, TypeAlias

import numpy as np

from ccb.model import MemoryType
from consistency.claims import read_tokens
from consistency.duplicates import (
    CANDIDATES_BY_COSINE,
    Decision,
    Duplicate,
    MemoryDraft,
    MemoryFacts,
    New,
    Possible,
    Supersede,
    Update,
    Vectors,
    claim_of,
    decide,
    merge_bodies,
    normalise_text,
)
from consistency.judgement import PairJudgement, subject_class, subject_key
from consistency.pair_candidates import GroupScores
from magma.lineage import link_stem, name_key

__all__ = [
    "Consolidation",
    "DreamMemory",
    "Gate",
    "LinkPossible",
    "MergeDuplicate",
    "Settle",
    "SupersedeOld",
    "dream_due",
    "groups_to_compare",
    "plan_consolidation",
]


@dataclass(frozen=True, slots=True)
class Gate:
    """Whether a dream is due, and why (one line for the log and ``dreamd status``)."""

    due: bool
    reason: str
    forced: bool = False


def dream_due(
    *, last_dream: datetime | None, sessions: int, now: datetime, min_hours: float,
    max_hours: float, min_sessions: int,
) -> Gate:
    """Is a dream due at ``now`` (aware)? ``sessions`` counts sessions since ``last_dream``.

    Due when ``hours since ≥ min_hours`` and ``sessions ≥ min_sessions``; forced when
    ``hours since ≥ max_hours``. The numbers come from ``auto_dream`` in the config (seed:
    24 h, 5 sessions, 168 h).
    """
    if last_dream is None:
        hours = float("inf")
    else:
        hours = max(0.0, (now - last_dream) / timedelta(hours=1))
    if hours >= max_hours:
        since = "never dreamed" if last_dream is None else f"{hours:.1f} h since the last dream"
        return Gate(True, f"forced: {since} (at most {max_hours:g} h)", forced=True)
    if hours < min_hours:
        return Gate(False, f"{hours:.1f} h since the last dream (needs {min_hours:g} h)")
    if sessions < min_sessions:
        return Gate(False, f"{sessions} session{'' if sessions == 1 else 's'} since the last "
                           f"dream (needs {min_sessions})")
    return Gate(True, f"{hours:.1f} h and {sessions} sessions since the last dream")


@dataclass(frozen=True, slots=True)
class DreamMemory:
    """A current memory as the consolidation sees it.

    ``content_hash`` is the normalised-text hash of the body
    (:func:`consistency.duplicates.normalised_hash`); ``created`` orders a group (the caller
    gives the file's modification time when the frontmatter has no date); ``body`` may be
    ``None`` for a memory
    outside every group of :func:`groups_to_compare` (it is not read then). ``changed``: new or
    edited since the last dream. ``owner`` as written in the frontmatter (``None``: shared).
    """

    id: str
    path: str
    type: MemoryType
    name: str
    description: str
    subject: str | None
    owner: str | None
    content_hash: str
    created: datetime | date | None
    changed: bool
    body: str | None = None
    embedding: np.ndarray | None = field(default=None, compare=False, repr=False)
    pinned: bool = False
    #: the stems of the memories it was derived from (``derived_from``): never merged with,
    #: nor superseding, one of its own sources
    derived_from: frozenset[str] = frozenset()
    #: the ids of the current memories its ``supersedes`` names (the user may write one by
    #: hand: the dream then supersedes them as ``remember`` would have)
    supersedes: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class MergeDuplicate:
    """Archive ``duplicate`` with ``merged_into`` the keeper; the keeper's body becomes
    ``keeper_body`` when that is not ``None`` (the sentences only the duplicate had)."""

    keeper_id: str
    keeper_path: str
    duplicate_id: str
    duplicate_path: str
    kind: Literal["exact", "near"]
    keeper_body: str | None = None


@dataclass(frozen=True, slots=True)
class SupersedeOld:
    """``new`` supersedes ``old`` (``old`` gets ``valid_to``, ``new`` a ``supersedes`` link);
    both stay. ``reason`` names the changed value or the negation."""

    old_id: str
    old_path: str
    new_id: str
    new_path: str
    reason: str


@dataclass(frozen=True, slots=True)
class LinkPossible:
    """The rules were unsure whether ``new`` says the same as ``old`` (``kind``
    ``"duplicate"``) or changes it (``"contradiction"``): both stay live and each names the
    other under ``possible_<kind>``, as ``remember`` links such a pair. ``evidence`` is the
    judgement in one line (:meth:`consistency.judgement.PairJudgement.explain`)."""

    old_id: str
    old_path: str
    new_id: str
    new_path: str
    kind: Literal["duplicate", "contradiction"]
    evidence: str = ""


#: The closed set of consolidation actions.
Consolidation: TypeAlias = MergeDuplicate | SupersedeOld | LinkPossible


def _created_key(memory: DreamMemory) -> tuple[float, int, str]:
    """Oldest first: by ``created``; ties (and copies made the same second) by the shorter
    path, so ``lint.md`` is older than ``lint-2.md``, then by path."""
    created = memory.created
    if created is None:
        return (float("inf"), len(memory.path), memory.path)
    if not isinstance(created, datetime):
        created = datetime(created.year, created.month, created.day, tzinfo=UTC)
    elif created.tzinfo is None:
        created = created.replace(tzinfo=UTC)  # naive: taken as UTC, as the reader does
    return (created.timestamp(), len(memory.path), memory.path)


def _owner_key(owner: str | None) -> str:
    return (owner or "").strip().casefold()


@functools.lru_cache(maxsize=16384)
def _subject_key(subject: str | None) -> str | None:
    """The subject as grouped (:func:`ccb.memory_file.normalise_text`), kept per subject: a
    dream groups its memories by subject twice (9,850 subjects of the planted 10,000
    memories of ``bench/dream_bench.py``)."""
    key = normalise_text(subject) if subject else ""
    return key or None


def _groups(memories: Iterable[DreamMemory]) -> tuple[
    dict[tuple[str, str, str], list[DreamMemory]], dict[tuple[str, str, str], list[DreamMemory]],
]:
    by_hash: dict[tuple[str, str, str], list[DreamMemory]] = defaultdict(list)
    by_subject: dict[tuple[str, str, str], list[DreamMemory]] = defaultdict(list)
    for memory in memories:
        subject = _subject_key(memory.subject)
        by_hash[(_owner_key(memory.owner), f"{memory.type}/{subject or ''}",
                 memory.content_hash)].append(memory)
        if subject is not None:
            by_subject[(_owner_key(memory.owner), memory.type, subject)].append(memory)
    return by_hash, by_subject


#: A changed memory is compared with the memories ``remember`` would judge it against by
#: meaning (:func:`consistency.duplicates.decide`: the
#: :data:`~consistency.duplicates.CANDIDATES_BY_COSINE` nearest by cosine, however far).
NEIGHBOURS_BY_COSINE = CANDIDATES_BY_COSINE


def _comparison_groups(memories: Sequence[DreamMemory]) -> list[list[DreamMemory]]:
    """Groups of memories to judge against one another, where at least one changed: those of
    one owner, type and subject, joined with the memories each changed memory would be
    judged against by ``remember`` (:func:`_meaning_pairs`: its nearest by meaning of the
    same owner and type, no subject needed; embeddings where known). Groups that share a
    memory are one group (connected components), ordered by their smallest id, members in
    the order given."""
    sets = _IdSets(m.id for m in memories)
    _, by_subject = _groups(memories)
    for group in by_subject.values():
        if len(group) > 1 and any(g.changed for g in group):
            first = group[0].id
            for member in group[1:]:
                sets.union(first, member.id)
    for a, b in _meaning_pairs(memories):
        sets.union(a, b)
    smallest = sets.smallest()
    components: dict[str, list[DreamMemory]] = defaultdict(list)
    for memory in memories:
        components[smallest[memory.id]].append(memory)
    return [group for _root, group in sorted(components.items())
            if len(group) > 1 and any(m.changed for m in group)]


class _IdSets:
    """Disjoint sets of ids (union-find over list indices, with path halving): the sets
    ``networkx.utils.UnionFind`` makes of the same unions, without its sort and set of roots
    per union (75,000 unions of the planted 10,000 memories of ``bench/dream_bench.py``:
    0.23 s of CPU with it)."""

    def __init__(self, ids: Iterable[str]) -> None:
        self._index: dict[str, int] = {}
        for member in ids:
            self._index.setdefault(member, len(self._index))
        self._parent = list(range(len(self._index)))

    def _root(self, at: int) -> int:
        parent = self._parent
        while parent[at] != at:
            parent[at] = parent[parent[at]]
            at = parent[at]
        return at

    def union(self, a: str, b: str) -> None:
        """Put the sets of ``a`` and ``b`` together (ids given at the start only)."""
        ra, rb = self._root(self._index[a]), self._root(self._index[b])
        if ra != rb:
            self._parent[max(ra, rb)] = min(ra, rb)

    def smallest(self) -> dict[str, str]:
        """``{id: the smallest id of its set}`` for every id."""
        least: dict[int, str] = {}
        roots: dict[str, int] = {}
        for member, at in self._index.items():
            root = roots[member] = self._root(at)
            if root not in least or member < least[root]:
                least[root] = member
        return {member: least[root] for member, root in roots.items()}


def _meaning_pairs(memories: Sequence[DreamMemory]) -> list[tuple[str, str]]:
    """``(id, id)`` of each changed memory and each memory of its owner and type that
    :func:`consistency.duplicates.decide` would judge it against, as ``remember`` does: its
    :data:`NEIGHBOURS_BY_COSINE` nearest by cosine among the older memories, however far
    (:class:`consistency.pair_candidates.GroupScores`, the same candidates as the plan's),
    those that share its words (Dice of the normalised, order-free tokens ≥
    :data:`~consistency.duplicates.CANDIDATE_LEXICAL`: :func:`_lexical_tokens`), and the same
    among the newer unchanged ones (a memory edited since the last dream is a candidate of
    the memories written after it; the newer changed ones are judged against it
    themselves). By cosine: memories with a vector only; by words: every memory, a vector
    or not.

    A pair of two explicit subjects that read as two subjects is left out: ``decide``
    judges it apart before reading a word (the gate of
    :func:`consistency.judgement.judge_pair`; a dream's subjects are never inferred), so it
    never changes a decision and would only join groups (the planted 10,000 memories of
    ``bench/dream_bench.py``, every one with a subject of its own, are then never joined
    by meaning at all). A cutoff by cosine instead (0.55 before) kept apart the
    contradictions ``remember`` finds without a subject ("My editor is Neovim." / "VS Code
    now."): 17 of 40 of ``bench/write_pairs/family57.jsonl`` found by the dream, 39 by
    ``remember``."""
    by_kind: dict[tuple[str, str], list[DreamMemory]] = defaultdict(list)
    for memory in memories:
        by_kind[(_owner_key(memory.owner), memory.type)].append(memory)
    pairs: list[tuple[str, str]] = []
    for members in by_kind.values():
        if len(members) > 1 and any(m.changed for m in members):
            pairs.extend(_kind_pairs(sorted(members, key=_created_key)))
    return pairs


def _usable(vector: np.ndarray | None) -> bool:
    """A vector with a direction: neither missing, nor zero, nor holding a NaN."""
    if vector is None:
        return False
    norm = float(np.linalg.norm(vector))
    return norm > 0.0 and np.isfinite(norm)


def _lexical_tokens(memory: DreamMemory) -> tuple[str, ...]:
    """The tokens a memory's words are compared by when groups are joined
    (:func:`consistency.claims.read_tokens`: case, punctuation, markdown emphasis, list
    markers, contractions, CJK spacing and word order normalised away): those of its
    description, read from what every memory's record holds — the groups decide which
    bodies a dream reads, so they are found without one. ``remember``'s description is the
    body's first sentence (Claude Code's, a one-line hook); :func:`_plan_group` then compares
    the bodies themselves. None for a memory without a description (its name is a title:
    ``decide`` never reads it, and memories named alike would all be joined)."""
    created = memory.created
    written = created.date() if isinstance(created, datetime) else created
    return _read_lexical(memory.description.strip(), written)


@functools.lru_cache(maxsize=16384)
def _read_lexical(text: str, written: date | None) -> tuple[str, ...]:
    return read_tokens(text, written=written) if text else ()


def _kind_pairs(members: Sequence[DreamMemory]) -> list[tuple[str, str]]:
    """:func:`_meaning_pairs` of the members of one owner and type, oldest first."""
    classes = [None if (key := subject_key(m.subject)) is None else subject_class(key)
               for m in members]
    spellings: dict[frozenset[str] | str, set[str | None]] = defaultdict(set)
    for memory, kind in zip(members, classes, strict=True):
        if kind is not None:
            spellings[kind].add(_subject_key(memory.subject))
    subjectless = None in classes
    # A member with a subject of its own, in a kind where every member has one, can only
    # be judged together with the members of its subject (joined by subject already).
    drafts = [i for i, kind in enumerate(classes) if members[i].changed and (
        subjectless or (kind is not None and len(spellings[kind]) > 1))]
    if not drafts:
        return []
    by_id = {m.id: m for m in members}
    scores = GroupScores(members, lambda mid: _lexical_tokens(by_id[mid]))
    if not scores.exact:
        return []  # vectors of two models: never compared
    usable = np.array([_usable(m.embedding) for m in members], dtype=bool)
    unchanged = np.flatnonzero(~np.array([m.changed for m in members]))
    pairs: list[tuple[str, str]] = []
    for row in drafts:
        kind = classes[row]
        found: set[int] = set()
        for rows in (np.arange(row, dtype=np.int64), unchanged[unchanged > row]):
            if usable[row]:
                found.update(scores.candidates(row, rows[usable[rows]]))
            found.update(scores.lexical(row, rows))
        pairs.extend((members[row].id, members[other].id) for other in sorted(found)
                     if kind is None or classes[other] is None or classes[other] == kind)
    return pairs


def groups_to_compare(memories: Sequence[DreamMemory]) -> set[str]:
    """Ids of the memories whose bodies :func:`plan_consolidation` needs: members of a group
    to judge (same owner, type and subject, or near in meaning to a changed memory of the
    same owner and type) of at least two where at least one changed."""
    return {m.id for group in _comparison_groups(memories) for m in group}


def _facts(memory: DreamMemory, body: str) -> MemoryFacts:
    created = memory.created
    return MemoryFacts(
        id=memory.id, type=memory.type, subject=memory.subject, name=memory.name,
        description=memory.description, body=body, content_hash=memory.content_hash,
        # float64 once per memory, not once per pair in ``decide`` (the same values)
        embedding=None if memory.embedding is None
        else np.asarray(memory.embedding, dtype=np.float64).ravel(),
        written=created.date() if isinstance(created, datetime) else created,
    )


#: Settles a pair the rules were unsure of (``old`` written first): ``"duplicate"``,
#: ``"contradiction"``, ``"distinct"`` or ``None`` (no answer: the pair stays as it is).
Settle: TypeAlias = Callable[[DreamMemory, DreamMemory, PairJudgement | None], str | None]


def _stem(memory: DreamMemory) -> str:
    return link_stem(memory.path)  # the key derived_from names it by


def _with_ancestors(memories: Sequence[DreamMemory]) -> list[DreamMemory]:
    """``memories`` each with every memory it derives from, directly or through another
    (``derived_from`` followed to its end; a loop walked once), as file stems (a source
    named by its memory name is found by it, :func:`magma.lineage.name_key`): a digest of a
    summary of a memory is never merged with that memory either."""
    if not any(m.derived_from for m in memories):
        return list(memories)
    # a source named by its memory name, not its file's stem (written by hand): its stem
    key = {name_key(m.name): _stem(m) for m in memories if m.name}
    key.update({_stem(m): _stem(m) for m in memories})
    direct = {_stem(m): {key.get(s, s) for s in m.derived_from} for m in memories
              if m.derived_from}
    out = []
    for memory in memories:
        seen: set[str] = set()
        todo = [key.get(s, s) for s in memory.derived_from]
        while todo:
            stem = todo.pop()
            if stem not in seen:
                seen.add(stem)
                todo.extend(direct.get(stem, ()))
        out.append(replace(memory, derived_from=frozenset(seen)) if seen else memory)
    return out


def plan_consolidation(memories: Sequence[DreamMemory], *,
                       settle: Settle | None = None) -> list[Consolidation]:
    """The merges and supersessions for the current ``memories`` (see the module docstring).

    ``settle`` is asked about each pair :func:`consistency.duplicates.decide` was unsure of
    (the ``llm.judge`` role); its ``"duplicate"`` merges, its ``"contradiction"`` supersedes
    (both files stay), its ``"distinct"`` leaves the pair apart; without an answer (or
    without ``settle``) the pair is linked as a possible one (:class:`LinkPossible`).

    Deterministic (groups and members in a fixed order). Every id in the answer is an id of
    the input; a memory is archived by at most one action and never both kept and archived.
    Raises ``ValueError`` when a member of a group to compare has no ``body``.
    """
    actions: list[Consolidation] = []
    memories = _with_ancestors(memories)
    by_hash, _ = _groups(memories)
    archived: set[str] = set()
    for key in sorted(by_hash):
        group = sorted(by_hash[key], key=_created_key)
        if len(group) < 2 or not any(m.changed for m in group):
            continue
        keeper = next((m for m in group if m.pinned), group[0])  # a pin is the user's word
        for duplicate in group:
            if duplicate is keeper or duplicate.pinned or _derived_pair(keeper, duplicate):
                continue  # a pin, or a synthesis and its own source: never archived by a merge
            actions.append(MergeDuplicate(keeper.id, keeper.path, duplicate.id, duplicate.path,
                                          "exact"))
            archived.add(duplicate.id)
    written = _written_supersessions([m for m in memories if m.id not in archived])
    actions.extend(written)
    archived.update(step.old_id for step in written)
    remaining = [m for m in memories if m.id not in archived]
    for group in _comparison_groups(remaining):
        actions.extend(_plan_group(sorted(group, key=_created_key), settle))
    return _final_keepers(actions, {m.id: m for m in memories})


def _written_supersessions(memories: Sequence[DreamMemory]) -> list[SupersedeOld]:
    """The ``supersedes`` a user wrote by hand in a memory new or edited since the last dream,
    naming a current memory: superseded as ``remember`` supersedes (the older archived with
    ``superseded_by``), so that ``MEMORY.md``, search, the context and the check all read the
    link the same way. Never a pinned memory, one of the memory's own sources, or a link of a
    loop (the older's own ``supersedes`` leading back to the newer)."""
    by_id = {m.id: m for m in memories}
    gone: set[str] = set()
    out: list[SupersedeOld] = []
    for memory in sorted(memories, key=_created_key):
        if not memory.changed or memory.id in gone:
            continue
        for target in sorted(memory.supersedes):
            old = by_id.get(target)
            if old is None or old is memory or old.pinned or old.id in gone or \
                    _derived_pair(memory, old) or _leads_to(old, memory.id, by_id):
                continue
            out.append(SupersedeOld(old.id, old.path, memory.id, memory.path,
                                    "as its supersedes says"))
            gone.add(old.id)
    return out


def _leads_to(start: DreamMemory, goal: str, by_id: Mapping[str, DreamMemory]) -> bool:
    """Does following ``supersedes`` from ``start`` reach the memory ``goal``?"""
    seen: set[str] = set()
    todo = [start]
    while todo:
        memory = todo.pop()
        if memory.id == goal:
            return True
        if memory.id not in seen:
            seen.add(memory.id)
            todo.extend(by_id[t] for t in memory.supersedes if t in by_id)
    return False


def _final_keepers(actions: list[Consolidation], by_id: Mapping[str, DreamMemory]
                   ) -> list[Consolidation]:
    """An exact duplicate's keeper that the near-duplicate step then merged into an older
    memory: point the exact duplicate at that final keeper (no chain of merges) — unless
    that final keeper is a source of the duplicate or derived from it: then the duplicate
    stays (a synthesis is never merged into its own source, however the merges chain)."""
    into = {a.duplicate_id: a for a in actions if isinstance(a, MergeDuplicate)}
    out: list[Consolidation] = []
    for action in actions:
        if isinstance(action, MergeDuplicate) and action.kind == "exact":
            final = action
            seen = {action.duplicate_id}
            while final.keeper_id in into and final.keeper_id not in seen:
                seen.add(final.keeper_id)
                final = into[final.keeper_id]
            if final is not action:
                keeper, duplicate = by_id.get(final.keeper_id), by_id.get(action.duplicate_id)
                if keeper is not None and duplicate is not None and \
                        _derived_pair(keeper, duplicate):
                    continue
                action = replace(action, keeper_id=final.keeper_id,
                                 keeper_path=final.keeper_path)
        out.append(action)
    return out


#: Groups larger than this choose what each ``decide`` sees in bulk
#: (:class:`consistency.pair_candidates.GroupScores`); smaller ones give it every member.
BULK_GROUP = 2 * NEIGHBOURS_BY_COSINE


class _Alive:
    """The members of a group still current as it is decided, oldest first, and for one
    member the older ones ``decide`` is to see: a set that gives the answer ``decide``
    gives for every one of them (changed ones only for an unchanged member).

    *By subject* (:func:`_own_subjects`): a member whose subject no other subject of its
    type in the group reads as the same (:func:`consistency.judgement.subject_class`), in a
    group where every member of its type has a subject, sees the older members of its own
    subject key only. ``decide`` judges each of those (every memory of the draft's subject
    is a candidate), and every other candidate it would judge is told apart before its
    words are read — another type, or two explicit subjects (the gate of
    :func:`consistency.judgement.judge_pair`; a dream's subjects are never inferred):
    ``distinct``, which never outranks another verdict. So the merge, supersession or doubt
    ``decide`` finds is the same, and when none of its own subject is older, nothing is
    read or judged at all (the planted 10,000 memories of ``bench/dream_bench.py``: 600
    memories decided instead of 9,598, 612 pairs judged instead of 177,082, 1,476 texts
    read into claims instead of 10,424, the plan the same). When ``decide`` finds nothing,
    its :class:`~consistency.duplicates.New` may name another nearest memory: the dream
    does nothing with it.

    Otherwise every older member — or, in a group of more than :data:`BULK_GROUP`, the
    superset of its candidates :class:`consistency.pair_candidates.GroupScores` finds (the
    same answer, without a Python loop over every pair of the group; made when first
    needed, from the bodies as they are then).
    """

    def __init__(self, group: Sequence[DreamMemory],
                 facts_of: Callable[[DreamMemory], MemoryFacts]) -> None:
        self.members: list[DreamMemory] = []
        self._group = list(group)
        self._facts_of = facts_of
        self._row = {m.id: i for i, m in enumerate(group)}
        self._own = _own_subjects(group)
        self._subject = [(m.type, subject_key(m.subject)) for m in group]
        self._of_subject: dict[tuple[str, str | None], list[int]] = defaultdict(list)
        self._scores: GroupScores | None = None
        self._scored = len(group) <= BULK_GROUP  # GroupScores made, or not wanted
        self._rows: list[int] = []
        self._changed = np.zeros(len(group), dtype=bool)
        self._at: dict[int, DreamMemory] = {}

    def append(self, memory: DreamMemory) -> None:
        self.members.append(memory)
        row = self._row[memory.id]
        self._rows.append(row)
        self._changed[row] = memory.changed
        self._at[row] = memory
        self._of_subject[self._subject[row]].append(row)

    def remove(self, memory: DreamMemory) -> None:
        row = self._row[memory.id]
        i = self._rows.index(row)  # by row, not by comparing every field of each member
        del self.members[i]
        del self._rows[i]
        del self._at[row]
        self._of_subject[self._subject[row]].remove(row)

    def grew(self, keeper: DreamMemory) -> None:
        """``keeper``'s body grew by a merge: it is "changed" for the rest of the group."""
        changed = replace(keeper, changed=True)
        row = self._row[keeper.id]
        self.members[self._rows.index(row)] = changed
        self._changed[row] = True
        self._at[row] = changed
        if self._scores is not None:
            self._scores.retoken(keeper.id, _tokens(self._facts_of(changed)))

    def older(self, memory: DreamMemory) -> list[DreamMemory]:
        """What ``decide`` sees of the older members for ``memory`` (two unchanged
        memories were compared by an earlier dream already)."""
        row = self._row[memory.id]
        if self._own[row]:
            return [self._at[r] for r in self._of_subject[self._subject[row]]
                    if memory.changed or self._changed[r]]
        scores = self._bulk_scores()
        if scores is None:
            return self.members if memory.changed else [m for m in self.members if m.changed]
        rows = np.array(self._rows, dtype=np.int64)
        if not memory.changed:
            rows = rows[self._changed[rows]]
        return [self._at[r] for r in scores.candidates(row, rows)]

    def _bulk_scores(self) -> GroupScores | None:
        if not self._scored:
            self._scored = True
            by_id = {m.id: m for m in self._group}
            scores = GroupScores(self._group, lambda mid: _tokens(self._facts_of(by_id[mid])))
            self._scores = scores if scores.exact else None
        return self._scores


def _own_subjects(group: Sequence[DreamMemory]) -> list[bool]:
    """For each member: is it decided against the members of its own subject key alone
    (:class:`_Alive`)? Yes when it has a subject, every member of its type in the group has
    one, and no other subject key of that type reads as the same subject. Never when two
    members' vectors differ in width (``decide`` raises on such a pair: it must see it)."""
    widths = {np.asarray(m.embedding).size for m in group if m.embedding is not None}
    if len(widths) > 1:
        return [False] * len(group)
    keys = [subject_key(m.subject) for m in group]
    kinds: dict[str, set[str | None]] = defaultdict(set)
    for memory, key in zip(group, keys, strict=True):
        kinds[memory.type].add(key)
    shared: Counter[tuple[str, frozenset[str] | str]] = Counter()
    for kind, kind_keys in kinds.items():
        if None not in kind_keys:
            shared.update((kind, subject_class(k)) for k in kind_keys if k is not None)
    return [key is not None and None not in kinds[m.type]
            and shared[(m.type, subject_class(key))] == 1
            for m, key in zip(group, keys, strict=True)]


def _read_facts(member: DreamMemory, *, bodies: Mapping[str, str],
                known: dict[str, MemoryFacts]) -> MemoryFacts:
    """``member``'s facts with its claim read, once per body (``known`` keeps them: a claim
    costs milliseconds, and a member is compared with many)."""
    facts = known.get(member.id)
    if facts is None or facts.body != bodies[member.id]:
        facts = _facts(member, bodies[member.id])
        facts = replace(facts, claim=claim_of(facts))
        known[member.id] = facts
    return facts


def _tokens(facts: MemoryFacts) -> tuple[str, ...]:
    assert facts.claim is not None
    return facts.claim.tokens


def _derived_pair(a: DreamMemory, b: DreamMemory) -> bool:
    """Is one of the two derived from the other (by its file's stem)?"""
    return _stem(b) in a.derived_from or _stem(a) in b.derived_from


def _settled(decision: Possible, memory: DreamMemory, others: Sequence[DreamMemory],
             bodies: Mapping[str, str], settle: Settle) -> Decision:
    """An uncertain pair as the judge role settles it: merged, superseded, two facts, or
    left as it is (linked as a possible pair)."""
    old = next(m for m in others if m.id == decision.existing_id)
    answer = settle(replace(old, body=bodies[old.id]), replace(memory, body=bodies[memory.id]),
                    decision.why)
    if answer == "duplicate":
        return Update(old.id, decision.why)
    if answer == "contradiction":
        reason = "judged changed by llm.judge" + (
            f" ({decision.why.reason()})" if decision.why else "")
        return Supersede(old.id, reason, decision.why)
    if answer == "distinct":  # two facts: nothing to link
        return New(decision.why, decision.existing_id)
    return decision


def _plan_group(group: Sequence[DreamMemory], settle: Settle | None = None
                ) -> list[Consolidation]:
    """Decide each member against the older current ones of its subject group."""
    actions: list[Consolidation] = []
    bodies: dict[str, str] = {}
    for memory in group:
        if memory.body is None:
            raise ValueError(f"dream: memory {memory.id} ({memory.path}) needs its body")
        bodies[memory.id] = memory.body
    facts: dict[str, MemoryFacts] = {}
    facts_of = functools.partial(_read_facts, bodies=bodies, known=facts)
    alive = _Alive(group, facts_of)
    vectors: Vectors = {}  # each embedding's float64 form and norm, read once for the group
    for memory in group:
        others = alive.older(memory)
        if not others:
            alive.append(memory)
            continue
        own = facts_of(memory)
        draft = MemoryDraft(
            type=memory.type, subject=memory.subject, name=memory.name,
            description=memory.description, body=own.body,
            content_hash=memory.content_hash, embedding=own.embedding,
            written=own.written, claim=own.claim,
        )
        decision = decide(draft, [facts_of(m) for m in others], vectors=vectors)
        if isinstance(decision, Possible) and settle is not None:
            decision = _settled(decision, memory, others, bodies, settle)
        match decision:
            case Duplicate(existing_id=existing) | Update(existing_id=existing) | Supersede(
                    existing_id=existing) if _derived_pair(memory, next(
                        m for m in others if m.id == existing)):
                alive.append(memory)  # a synthesis and its own source: both stay as they are
            case Duplicate() | Update() if memory.pinned:
                alive.append(memory)  # a pinned memory is never archived by a merge
            case Supersede(existing_id=existing) if next(
                    m for m in others if m.id == existing).pinned:
                alive.append(memory)  # nor superseded: the user pinned that value
            case Duplicate(existing_id=existing) | Update(existing_id=existing):
                keeper = next(m for m in others if m.id == existing)
                merged = merge_bodies(bodies[keeper.id].rstrip("\n"), bodies[memory.id])
                changed_body = None
                if merged.rstrip("\n") != bodies[keeper.id].rstrip("\n"):
                    bodies[keeper.id] = merged
                    changed_body = merged
                actions.append(MergeDuplicate(keeper.id, keeper.path, memory.id, memory.path,
                                              "near", changed_body))
                alive.grew(keeper)  # "changed" for the rest of this group
            case Supersede(existing_id=existing) if _created_key(next(
                    m for m in others if m.id == existing))[0] == _created_key(memory)[0]:
                alive.append(memory)  # written at one moment: which one is newer is unknown
            case Supersede(existing_id=existing, reason=reason):
                old = next(m for m in others if m.id == existing)
                actions.append(SupersedeOld(old.id, old.path, memory.id, memory.path, reason))
                actions.extend(_possible_links(decision, memory, others))
                alive.remove(old)
                alive.append(memory)
            case _:
                actions.extend(_possible_links(decision, memory, others))
                alive.append(memory)
    return actions


def _possible_links(decision: Decision, memory: DreamMemory, others: Sequence[DreamMemory]
                    ) -> list[LinkPossible]:
    """The pairs ``remember`` would link for ``decision`` about ``memory`` (both kept):
    an unsure pair (:class:`~consistency.duplicates.Possible`), and the other older memories
    a superseding memory may also contradict (one statement of several they hold), each as
    a possible contradiction. Never a memory and one of its own sources."""
    by_id = {m.id: m for m in others}
    match decision:
        case Possible(existing_id=existing, kind=kind, why=why):
            pairs = [(by_id[existing], kind, why)]
        case Supersede(also_contradicts=also, why=why):
            pairs = [(by_id[i], "contradiction", why) for i in also if i in by_id]
        case _:
            return []
    return [LinkPossible(old.id, old.path, memory.id, memory.path, kind,
                         why.explain() if why is not None and old.id == getattr(
                             decision, "existing_id", None) else "")
            for old, kind, why in pairs if not _derived_pair(memory, old)]
