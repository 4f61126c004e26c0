"""The user's day: ``time.zone`` (default the system's) decides what "today", "yesterday",
"上周" and a new memory's ``valid_from`` mean, at the edges of a day; stamps stay UTC."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from ccb.parse import parse_note
from config.errors import ConfigError
from config.settings import system_zone
from daemon.app import App, load

Builder = Callable[..., tuple[App, object]]

#: 20:41 UTC on Tuesday 1 December 2026: 05:41 on Wednesday the 2nd in Tokyo, 12:41 on
#: the 1st in Los Angeles.
EVENING_UTC = datetime(2026, 12, 1, 20, 41, tzinfo=UTC)
#: 07:30 UTC on the 2nd: 16:30 in Tokyo, 23:30 on the 1st in Los Angeles.
MORNING_UTC = datetime(2026, 12, 2, 7, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("zone", "instant", "query", "start", "end"),
    [
        ("Asia/Tokyo", EVENING_UTC, "what did I do yesterday", date(2026, 12, 1),
         date(2026, 12, 1)),
        ("UTC", EVENING_UTC, "what did I do yesterday", date(2026, 11, 30), date(2026, 11, 30)),
        ("America/Los_Angeles", EVENING_UTC, "what did I do yesterday", date(2026, 11, 30),
         date(2026, 11, 30)),
        ("Asia/Tokyo", EVENING_UTC, "今天的安排", date(2026, 12, 2), date(2026, 12, 2)),
        ("UTC", EVENING_UTC, "今天的安排", date(2026, 12, 1), date(2026, 12, 1)),
        ("America/Los_Angeles", MORNING_UTC, "today's notes", date(2026, 12, 1),
         date(2026, 12, 1)),
        ("Asia/Tokyo", MORNING_UTC, "today's notes", date(2026, 12, 2), date(2026, 12, 2)),
        # Wednesday in Tokyo: last week is 23–29 November; still Tuesday in UTC: the same
        ("Asia/Tokyo", EVENING_UTC, "上周的会议", date(2026, 11, 23), date(2026, 11, 29)),
        ("Asia/Tokyo", EVENING_UTC, "on Tuesday", date(2026, 12, 1), date(2026, 12, 1)),
        ("UTC", EVENING_UTC, "on Tuesday", date(2026, 11, 24), date(2026, 11, 24)),
        ("Asia/Tokyo", EVENING_UTC, "in the last 24 hours", date(2026, 12, 1),
         date(2026, 12, 2)),
        ("UTC", EVENING_UTC, "in the last 24 hours", date(2026, 11, 30), date(2026, 12, 1)),
        ("America/Los_Angeles", EVENING_UTC, "过去24小时", date(2026, 11, 30),
         date(2026, 12, 1)),
        ("Asia/Tokyo", EVENING_UTC, "上上周末", date(2026, 11, 21), date(2026, 11, 22)),
        ("America/Los_Angeles", MORNING_UTC, "下下周", date(2026, 12, 14), date(2026, 12, 20)),
    ],
)
def test_time_expressions_count_days_in_the_users_zone(
    vault: Path, make_app: Builder, zone: str, instant: datetime, query: str, start: date,
    end: date,
) -> None:
    app, _ = make_app(vault, **{"time.zone": zone})
    app.sync()
    app.search(query, limit=3, now=instant, count_recall=False)
    trace = app.last_search_trace
    assert trace is not None and trace.intent.time_range is not None, query
    assert (trace.intent.time_range.start, trace.intent.time_range.end) == (start, end)


@pytest.mark.parametrize(("zone", "day"), [
    ("Asia/Tokyo", date(2026, 12, 2)), ("UTC", date(2026, 12, 1)),
    ("America/Los_Angeles", date(2026, 12, 1)),
])
def test_a_new_memory_holds_from_the_users_day_and_is_stamped_in_utc(
    vault: Path, make_app: Builder, zone: str, day: date,
) -> None:
    app, _ = make_app(vault, **{"time.zone": zone})
    app.sync()
    assert app.clock().utcoffset() == ZoneInfo(zone).utcoffset(datetime.now())
    service = app.memories(clock=lambda: EVENING_UTC.astimezone(app.zone))
    made = service.remember("The kiln is fired on Wednesdays.", type="project")
    text = (vault / made.path).read_text(encoding="utf-8")
    memory = parse_note(made.path, text.encode()).memory
    assert memory is not None and memory.valid_from == day
    assert "created: 2026-12-01T20:41:00Z" in text or "created: 2026-12-01T20:41:00+00:00" \
        in text, text


@pytest.mark.parametrize(("zone", "text", "day"), [
    # the user's day is the 2nd in Tokyo, the 1st in UTC and Los Angeles
    ("Asia/Tokyo", "The day before yesterday I ran 5 km.", date(2026, 11, 30)),
    ("UTC", "The day before yesterday I ran 5 km.", date(2026, 11, 29)),
    ("America/Los_Angeles", "Two days ago I ran 5 km.", date(2026, 11, 29)),
    ("Asia/Tokyo", "三天前跑了 5 公里", date(2026, 11, 29)),
    ("UTC", "大前天跑了 5 公里", date(2026, 11, 28)),
])
def test_a_day_counted_back_holds_from_the_users_day(
    vault: Path, make_app: Builder, zone: str, text: str, day: date,
) -> None:
    app, _ = make_app(vault, **{"time.zone": zone})
    app.sync()
    service = app.memories(clock=lambda: EVENING_UTC.astimezone(app.zone))
    made = service.remember(text, type="user")
    memory = parse_note(made.path, (vault / made.path).read_bytes()).memory
    assert memory is not None and memory.valid_from == day


def test_unset_zone_is_the_systems(monkeypatch: pytest.MonkeyPatch, vault: Path,
                                   make_app: Builder) -> None:
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    assert str(system_zone()) == "Asia/Kolkata"
    app, _ = make_app(vault)
    assert str(app.zone) == "Asia/Kolkata"


def test_an_unknown_zone_is_a_clear_config_error(vault: Path) -> None:
    with pytest.raises(ConfigError, match="unknown time zone 'Mars/Olympus'"):
        load(None, None, {"vault.path": str(vault), "time.zone": "Mars/Olympus"})
