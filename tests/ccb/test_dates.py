"""The one coercion of frontmatter and state-file dates (ccb/dates.py)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from ccb.dates import as_aware, as_date, day_in, iso

TOKYO = timezone(timedelta(hours=9))


@pytest.mark.parametrize(("value", "day"), [
    (date(2026, 5, 2), date(2026, 5, 2)),
    (datetime(2026, 5, 2, 23, 30), date(2026, 5, 2)),
    (datetime(2026, 5, 2, 1, 0, tzinfo=TOKYO), date(2026, 5, 2)),  # the day as written
    ("2026-05-02", date(2026, 5, 2)),
    (" 2026-05-02T23:00:00-05:00 ", date(2026, 5, 2)),
    ("2026-05-02 standup", date(2026, 5, 2)),
    ("", None), ("soon", None), ("2026-13-01", None), ("2026-05", None), (None, None),
    (20260502, None), (True, None),
])
def test_as_date(value: object, day: date | None) -> None:
    assert as_date(value) == day


@pytest.mark.parametrize(("value", "stamp"), [
    (datetime(2026, 5, 2, 9, 30), datetime(2026, 5, 2, 9, 30, tzinfo=UTC)),  # naive is UTC
    (datetime(2026, 5, 2, 9, 30, tzinfo=TOKYO), datetime(2026, 5, 2, 0, 30, tzinfo=UTC)),
    (date(2026, 5, 2), datetime(2026, 5, 2, tzinfo=UTC)),
    ("2026-05-02T09:30:00Z", datetime(2026, 5, 2, 9, 30, tzinfo=UTC)),
    ("2026-05-02", datetime(2026, 5, 2, tzinfo=UTC)),
    ("last week", None), ("", None), (None, None), (3.5, None),
])
def test_as_aware(value: object, stamp: datetime | None) -> None:
    assert as_aware(value) == stamp
    assert stamp is None or as_aware(value).tzinfo is not None  # type: ignore[union-attr]


def test_iso() -> None:
    assert iso(date(2026, 5, 2)) == "2026-05-02"
    assert iso(datetime(2026, 5, 2, 9, 30, tzinfo=UTC)) == "2026-05-02T09:30:00+00:00"
    assert iso("2026-05-02") is None


@pytest.mark.parametrize(
    ("value", "zone", "day"),
    [
        ("2026-12-01T20:41:00Z", "Asia/Tokyo", date(2026, 12, 2)),  # 05:41 on the 2nd
        ("2026-12-01T20:41:00Z", "UTC", date(2026, 12, 1)),
        ("2026-12-02T07:30:00+00:00", "America/Los_Angeles", date(2026, 12, 1)),
        (datetime(2026, 12, 1, 20, 41, tzinfo=UTC), "Asia/Tokyo", date(2026, 12, 2)),
        (datetime(2026, 12, 1, 20, 41), "Asia/Tokyo", date(2026, 12, 2)),  # naive: UTC
        ("2026-12-01", "Asia/Tokyo", date(2026, 12, 1)),  # a bare day stays as written
        (date(2026, 12, 1), "Pacific/Kiritimati", date(2026, 12, 1)),
        ("tbd", "UTC", None),
        (None, "UTC", None),
    ],
)
def test_day_in_the_users_zone(value: object, zone: str, day: date | None) -> None:
    assert day_in(value, ZoneInfo(zone)) == day
