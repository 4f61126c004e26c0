"""Dates as notes and state files hold them: the one coercion of YAML and ISO values.

A frontmatter date arrives in three shapes: YAML 1.1 turns an unquoted ``2026-05-02`` into a
``date`` and ``2026-05-02T09:30:00`` into a ``datetime`` (naive, or aware with an offset); a
quoted value, the state files (JSON) and the index's ``properties_json`` give the same ISO text.
Every reader of a date goes through :func:`as_date` or :func:`as_aware`, so a value means the
same day wherever it is read.

A naive datetime is read as UTC: every stamp dreamd writes carries its offset (``DESIGN.md``,
"times are stored in UTC"), so a naive one is a hand edit with no better reading. Text that is
not ISO 8601 (``"last week"``, ``"tbd"``) is no date: the functions return ``None`` and never
raise.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, tzinfo

__all__ = ["as_aware", "as_date", "as_written", "day_in", "iso"]

#: ``YYYY-MM-DD``: the length of an ISO calendar date, the prefix of every ISO stamp.
_ISO_DAY_LEN = 10


def as_aware(value: object) -> datetime | None:
    """``value`` as an aware datetime: a ``datetime`` (naive read as UTC), a ``date`` (its
    midnight, UTC) or ISO 8601 text of either; ``None`` for anything else."""
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if not isinstance(value, str):
        return None
    text = value.strip()
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        return None
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)


def as_date(value: object) -> date | None:
    """The calendar day of ``value`` as written: a ``date``, the day of a ``datetime`` in its
    own offset (``2026-05-02T23:00-05:00`` is the 2nd, the day its writer lived), or the
    leading ``YYYY-MM-DD`` of ISO text; ``None`` for anything else."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if not isinstance(value, str):
        return None
    text = value.strip()
    if len(text) < _ISO_DAY_LEN:
        return None
    try:
        return date.fromisoformat(text[:_ISO_DAY_LEN])
    except ValueError:
        return None


def day_in(value: object, zone: tzinfo) -> date | None:
    """The user's day of ``value``: a bare date (``2026-05-02``) as written, a stamp with a
    time (dreamd writes them in UTC) as the day it was in ``zone`` — ``2026-12-01T20:41:00Z``
    is the 2nd in Asia/Tokyo; ``None`` for anything else."""
    if isinstance(value, str) and len(value.strip()) == _ISO_DAY_LEN:
        return as_date(value)
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    stamp = as_aware(value)
    return stamp.astimezone(zone).date() if stamp is not None else None


def as_written(value: object) -> date | datetime | None:
    """ISO text read as it was written: a ``date`` for a bare ``YYYY-MM-DD``, else an aware
    datetime (:func:`as_aware`); a ``date``/``datetime`` as it is; ``None`` otherwise."""
    if isinstance(value, datetime):
        return as_aware(value)
    if isinstance(value, date):
        return value
    if not isinstance(value, str) or not value.strip():
        return None
    return as_date(value) if len(value.strip()) == _ISO_DAY_LEN else as_aware(value)


def iso(value: object) -> str | None:
    """ISO text of a ``date`` or ``datetime`` (as it is, offset kept), else ``None``."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    return None
