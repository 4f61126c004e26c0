"""Expiration and lifecycle of memories: pure policies over typed memories, ``now`` a parameter.

:func:`plan_lifecycle` answers, for each memory, which transitions are due; the daemon (the
dream's lifecycle step, ``dreamd expire``) carries them out as minimal frontmatter edits through
the one writer. Nothing here deletes: archive is a status (``status: archived``), undone by
``dreamd restore``. The rules (DESIGN.md "Expiration and lifecycle", the dreaming issue):

- Pinned memories are never touched. ``user`` memories and L2 rules (feedback with rule
  force, :func:`has_rule_force`) never expire, decay, get promoted or demoted.
- A superseded memory (``valid_to`` on or before today) is archived — a ``user`` memory and
  an L2 rule too: "never touched" (DESIGN.md) keeps a preference or a rule from ageing out,
  but one superseded was replaced by the user's own newer word; it is hidden already, and
  its archive (a status, undone by ``dreamd restore``) is what the dream's diary reports for
  every other type (left out, a superseded preference stayed unarchived and unreported).
- ``project``: archived when ``status: done``, or when neither edited nor recalled for
  :attr:`LifecyclePolicy.project_inactive_days`.
- ``reference``: its links are checked by the caller (vault paths and wikilinks always, URLs
  only when enabled); the unreachable ones are recorded in ``broken_links`` — the memory is
  not archived for that. Old and unimportant (never recalled, neither edited nor recalled for
  :attr:`LifecyclePolicy.reference_unused_days`) → archived.
- ``feedback``: never expires; its priority decays ×``decay_factor`` per whole
  ``decay_period_days`` since it was last edited or recalled (1.0 right after):
  :func:`feedback_priority`. The priority is computed where it is used (ranking), never
  written: a decay that rewrote every feedback file each period would flood the user's vault,
  its sync and the version history with edits nobody made.
- Recalled in at least :attr:`LifecyclePolicy.promote_min_distinct_queries` distinct queries
  → promoted to the resident set (``resident: true``); a memory the dream promoted that has not
  been recalled for :attr:`LifecyclePolicy.demote_after_days` → demoted.
- An ``expires`` date in the past hides a memory from search and from ``MEMORY.md``; the file
  stays on disk as it is.

Whether a memory is *current* on a day is decided here once, by :func:`is_current` over a
:class:`MemoryState`, for search, ``MEMORY.md``, the session-start context, the checker and the
dream alike: a memory with a ``valid_to`` still ahead is current everywhere until that day.

Properties (tested with hypothesis): every transition names a memory of the input; a type
without a policy (``user``) never gets one but the archive of a supersession, a pinned memory
none; the set of archived memories only grows with ``now``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any, TypeAlias

from ccb.dates import as_date
from ccb.model import MemoryType
from magma.layers import has_rule_force
from magma.recalls import RecallStats

__all__ = [
    "ARCHIVED",
    "Archive",
    "Demote",
    "LifecycleMemory",
    "LifecyclePolicy",
    "MarkBroken",
    "MemoryState",
    "Promote",
    "RecallStats",
    "Transition",
    "decayed_priority",
    "feedback_priority",
    "has_rule_force",
    "is_archived",
    "is_current",
    "plan_lifecycle",
]

#: The frontmatter ``status`` of an archived memory.
ARCHIVED = "archived"
#: Statuses that take a memory out of the live set (``superseded`` is what older dreamd
#: versions and hand edits write; both mean "kept, not current").
_NOT_LIVE = frozenset({ARCHIVED, "superseded"})

@dataclass(frozen=True, slots=True)
class LifecycleMemory:
    """One memory as the lifecycle policy sees it.

    ``status`` is the frontmatter ``status`` (``None`` when absent); ``resident`` is
    ``resident: true`` in the frontmatter (set by a promotion); ``rule`` is the caller's
    :func:`has_rule_force` of a feedback memory's text. Dates may be dates or aware
    datetimes.
    ``broken_links`` is what the file records; ``unreachable`` is what the caller's link
    check found now (``None``: not checked this time, keep the record).
    """

    id: str
    path: str
    type: MemoryType
    status: str | None = None
    pinned: bool = False
    resident: bool = False
    rule: bool = False
    created: datetime | date | None = None
    updated: datetime | date | None = None
    valid_to: datetime | date | None = None
    expires: datetime | date | None = None
    broken_links: tuple[str, ...] = ()
    unreachable: tuple[str, ...] | None = None
    recall: RecallStats = field(default_factory=RecallStats)


@dataclass(frozen=True, slots=True)
class LifecyclePolicy:
    """The numbers of the policy; defaults are the ``lifecycle`` section of the config.

    ``decay_factor`` 0.95 per period is DESIGN.md's; the day counts are dreamd's defaults
    (a quarter for a project, a year for an unused reference, two months for a promotion).
    """

    project_inactive_days: float = 90
    reference_unused_days: float = 365
    decay_factor: float = 0.95
    decay_period_days: float = 30
    promote_min_distinct_queries: int = 3
    demote_after_days: float = 60


@dataclass(frozen=True, slots=True)
class Archive:
    """Set ``status: archived`` (with the date and ``code``); undone by ``dreamd restore``.
    ``reason`` is the sentence for the diary; ``code`` the short one written in the file
    (``superseded``, ``project done``, ``project inactive``, ``reference unused``)."""

    id: str
    path: str
    reason: str
    code: str = "archived"


@dataclass(frozen=True, slots=True)
class MarkBroken:
    """Record ``links`` (the unreachable ones, possibly none) as the memory's ``broken_links``."""

    id: str
    path: str
    links: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Promote:
    """Add the memory to the resident set (``resident: true``)."""

    id: str
    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class Demote:
    """Take a promoted memory out of the resident set (``resident`` removed)."""

    id: str
    path: str
    reason: str


#: The closed set of lifecycle transitions.
Transition: TypeAlias = Archive | MarkBroken | Promote | Demote


def _moment(value: datetime | date | None) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    return datetime(value.year, value.month, value.day, tzinfo=UTC)


def _day(value: datetime | date) -> date:
    """The day as written (:func:`ccb.dates.as_date`), as :func:`is_current` reads it."""
    return value.date() if isinstance(value, datetime) else value


def is_archived(status: str | None) -> bool:
    """True for a status that takes a memory out of the live set (archived, superseded)."""
    return (status or "").strip().casefold() in _NOT_LIVE


@dataclass(frozen=True, slots=True)
class MemoryState:
    """What decides whether a memory is current: its ``status`` and its days.

    ``valid_to`` is the first day it no longer holds (a supersession writes its successor's
    ``valid_from`` there); ``expires`` is the last day it holds; ``archived`` the day the dream
    or ``expire`` set it aside; ``valid_from`` / ``created`` the day it began.
    """

    status: str | None = None
    valid_from: date | None = None
    valid_to: date | None = None
    expires: date | None = None
    created: date | None = None
    archived: date | None = None

    @classmethod
    def of(cls, fields: Mapping[str, Any] | object, *, past: bool = True) -> MemoryState:
        """From frontmatter, indexed properties or any object with those attributes (a parsed
        :class:`~ccb.model.MemoryMeta`, a dream record); dates as ``date``/``datetime`` or ISO
        text (:func:`ccb.dates.as_date`), anything unreadable as absent. ``past=False`` reads
        only what :func:`is_current` needs for today (status, ``valid_to``, ``expires``): the
        search path asks it of every candidate."""
        names = _STATE_FIELDS if past else _TODAY_FIELDS
        if isinstance(fields, Mapping):
            found = {name: fields.get(name) for name in names}
        else:
            found = {name: getattr(fields, name, None) for name in names}
        status = found.pop("status")
        if not status and not any(found.values()):
            return _NO_STATE  # most memories: nothing to read
        return cls(
            status=status.strip() if isinstance(status, str) and status.strip() else None,
            **{name: as_date(value) if value else None for name, value in found.items()},
        )


#: The fields of :class:`MemoryState`, as frontmatter and indexed properties name them, and
#: those that decide whether a memory is current today.
_STATE_FIELDS = ("status", "valid_from", "valid_to", "expires", "created", "archived")
_TODAY_FIELDS = ("status", "valid_to", "expires")
_NO_STATE = MemoryState()


def is_current(state: MemoryState, day: date, *, past: bool = False) -> bool:
    """Is a memory current on ``day``? The one rule (module docstring).

    On today (``past`` false): not archived or superseded by status, no ``valid_to`` on or
    before ``day``, not expired (``expires`` before ``day``). On a past day (``past``,
    ``search --as-of``): it had begun (``valid_from``, else ``created``, on or before ``day``)
    and was not yet set aside: an archived memory counts until its ``archived`` day (else its
    ``valid_to``), and one with neither date is not current on any day.
    """
    if is_archived(state.status):
        set_aside = state.archived or state.valid_to
        if not past or set_aside is None or set_aside <= day:
            return False
    if state.valid_to is not None and state.valid_to <= day:
        return False
    if state.expires is not None and state.expires < day:
        return False
    if past:
        began = state.valid_from or state.created
        if began is not None and began > day:
            return False
    return True


def _last_activity(memory: LifecycleMemory) -> datetime | None:
    moments = [m for m in (_moment(memory.updated), _moment(memory.created), memory.recall.last
                           and _moment(memory.recall.last)) if m is not None]
    return max(moments) if moments else None


def _idle_days(memory: LifecycleMemory, now: datetime) -> float | None:
    last = _last_activity(memory)
    if last is None:
        return None
    return max(0.0, (now - last) / timedelta(days=1))


def decayed_priority(idle_days: float, policy: LifecyclePolicy) -> float:
    """``decay_factor ** floor(idle_days / decay_period_days)``, to three decimals, at least
    0.001 (a priority never reaches zero: feedback never expires)."""
    periods = math.floor(max(0.0, idle_days) / policy.decay_period_days)
    return max(0.001, round(policy.decay_factor ** periods, 3))


def feedback_priority(memory: LifecycleMemory, now: datetime,
                      policy: LifecyclePolicy | None = None) -> float:
    """A feedback memory's priority at ``now``: :func:`decayed_priority` of the days since it
    was last edited or recalled; 1.0 for an L2 rule, a pinned memory and any other type."""
    if memory.type != "feedback" or memory.rule or memory.pinned:
        return 1.0
    idle = _idle_days(memory, now)
    return 1.0 if idle is None else decayed_priority(idle, policy or LifecyclePolicy())


def _untouchable(memory: LifecycleMemory) -> bool:
    return memory.type == "user" or memory.pinned or (memory.type == "feedback" and memory.rule)


def _transitions(memory: LifecycleMemory, now: datetime, policy: LifecyclePolicy
                 ) -> Iterable[Transition]:
    if memory.pinned or is_archived(memory.status):
        return
    today = now.date()  # the day in the zone ``now`` carries: the user's (App.clock)
    if memory.valid_to is not None and _day(memory.valid_to) <= today:
        yield Archive(memory.id, memory.path, f"superseded on {_day(memory.valid_to)}",
                      "superseded")  # a preference or a rule too (module docstring)
        return
    if _untouchable(memory):
        return
    idle = _idle_days(memory, now)
    if memory.type == "project":
        if (memory.status or "").strip().casefold() == "done":
            yield Archive(memory.id, memory.path, "project done", "project done")
            return
        if idle is not None and idle >= policy.project_inactive_days:
            yield Archive(memory.id, memory.path,
                          f"project inactive for {int(idle)} days (no edit or recall)",
                          "project inactive")
            return
    if memory.type == "reference":
        if memory.unreachable is not None and (
                tuple(sorted(memory.unreachable)) != tuple(sorted(memory.broken_links))):
            yield MarkBroken(memory.id, memory.path, tuple(sorted(memory.unreachable)))
        if (memory.recall.count == 0 and not memory.resident and idle is not None
                and idle >= policy.reference_unused_days):
            yield Archive(memory.id, memory.path,
                          f"reference unused for {int(idle)} days and never recalled",
                          "reference unused")
            return
    last_recall = _moment(memory.recall.last)
    if not memory.resident:
        if memory.recall.distinct_queries >= policy.promote_min_distinct_queries and (
                last_recall is None
                or (now - last_recall) / timedelta(days=1) < policy.demote_after_days):
            yield Promote(memory.id, memory.path,
                          f"recalled in {memory.recall.distinct_queries} distinct queries")
    else:
        since = last_recall or _moment(memory.updated) or _moment(memory.created)
        if since is not None and (now - since) / timedelta(days=1) >= policy.demote_after_days:
            yield Demote(memory.id, memory.path,
                         f"not recalled for {int((now - since) / timedelta(days=1))} days")


def plan_lifecycle(
    memories: Sequence[LifecycleMemory], now: datetime, policy: LifecyclePolicy | None = None
) -> list[Transition]:
    """The transitions due at ``now`` (aware datetime) for ``memories``, in input order.

    At most one :class:`Archive` per memory, and an archived memory gets nothing else.
    Deterministic; raises ``ValueError`` for a naive ``now``.
    """
    if now.tzinfo is None:
        raise ValueError("lifecycle: now must be timezone-aware")
    policy = policy or LifecyclePolicy()
    planned: list[Transition] = []
    for memory in memories:
        planned.extend(_transitions(memory, now, policy))
    return planned
