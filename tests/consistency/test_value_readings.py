"""What a memory's words are read as, and how two readings compare (no model: the pair is
judged at a given cosine, as ``remember`` judges it with the real one). Each case is one
reading a blind pair set or a break-it round found wrong; the sentences are new ones."""

from __future__ import annotations

from datetime import date

import pytest

from consistency.claims import read_claim
from consistency.judgement import MemorySide, judge_pair


def _verdict(old: str, new: str, cosine: float, subject: str | None = None) -> str:
    return judge_pair(MemorySide("user", subject, read_claim(old)),
                      MemorySide("user", subject, read_claim(new)), cosine=cosine).verdict


def _values(text: str) -> set[tuple[str, str, str]]:
    return {(v.kind, v.text, v.unit) for v in read_claim(text).values}


@pytest.mark.parametrize(("old", "new"), [
    ("The gym membership is $55 a month.", "The gym membership is €55 a month."),
    ("每月房租 4500 元。", "每月房租 4500 美元。"),
    ("Cycles 20 km to work.", "Cycles 20 miles to work."),
    ("The suitcase limit is 23 kg.", "The suitcase limit is 23 lb."),
])
def test_the_same_amount_in_another_currency_or_unit_is_a_change(old: str, new: str) -> None:
    assert _verdict(old, new, 0.93) in {"contradiction", "possible_contradiction"}


@pytest.mark.parametrize(("old", "new"), [
    ("Cycles 20 km to work.", "Cycles about 12.4 miles to work."),
    ("The suitcase limit is 23 kg.", "The suitcase limit is 50.7 lb."),
])
def test_one_amount_in_two_units_is_the_same_value(old: str, new: str) -> None:
    assert _verdict(old, new, 0.9) == "duplicate"


def test_every_morning_is_daily_and_keeps_its_part_of_the_day() -> None:
    claim = read_claim("Water the orchids every morning.")
    assert ("frequency", "1/1", "") in _values("Water the orchids every morning.")
    assert "morning" in claim.tokens
    assert _verdict("Post the standup notes once a week.",
                    "Post the standup notes every morning.", 0.88) == "contradiction"


@pytest.mark.parametrize(("text", "rate"), [
    ("每周去游泳两次。", "2/7"),       # the period and its count written apart
    ("每周三次去练瑜伽。", "3/7"),     # not Wednesday: 周三 followed by 次
    ("一周三次。", "3/7"),
    ("周会改成双周一次。", "1/14"),    # 双周: every two weeks
])
def test_chinese_frequencies(text: str, rate: str) -> None:
    assert ("frequency", rate, "") in _values(text)


def test_wednesday_stays_a_weekday() -> None:
    assert ("weekday", "3", "") in _values("每周三下午开周会。")


def test_a_month_written_year_dash_month_dates_a_record() -> None:
    assert read_claim("2026-02 的电费是 310 元。").event_day == date(2026, 2, 1)
    assert read_claim("Electricity bill 2026-03: $88").event_day == date(2026, 3, 1)
    assert _verdict("2026-02 的电费是 310 元。", "2026-03 的电费是 287 元。", 0.92) == "series"


def test_x_free_denies_x() -> None:
    claim = read_claim("Keeps a strictly dairy-free diet.")
    assert "dairy" in claim.negated
    assert _verdict("Can't have dairy.", "Keeps a strictly dairy-free diet.", 0.72) != \
        "contradiction"


def test_the_thing_compared_against_is_not_the_one_preferred() -> None:
    claim = read_claim("比起米饭更喜欢吃面。")
    assert claim.negated and claim.concepts.get("like") == frozenset({True})


def test_a_label_naming_another_thing_never_supersedes() -> None:
    assert _verdict("Project Kestrel: demo on Thursday", "Project Osprey: demo on Thursday",
                    0.8) != "contradiction"


def test_the_newer_saying_it_changed_is_never_merged_on_shared_values() -> None:
    assert _verdict("家里的路由器放在书房。", "家里的路由器现在挪到客厅了。", 0.66) != "duplicate"


def test_a_named_tool_with_another_version_is_related() -> None:
    assert _verdict("Java version is 17", "我们用 Java 21", 0.52) == "contradiction"


def test_a_narrower_thing_across_languages_is_not_merged() -> None:
    assert _verdict("Drinks tea at night.", "晚上喝奶茶", 0.75) != "duplicate"


@pytest.mark.parametrize(("old", "new"), [
    ("Bug backlog at the end of sprint 7: 41 tickets.",
     "Bug backlog at the end of sprint 8: 36 tickets."),
    ("Q3 的营收是 120 万元。", "Q4 的营收是 135 万元。"),
    ("Blood pressure in March: 128 mmHg.", "Blood pressure in August: 121 mmHg."),
])
def test_a_measure_of_another_period_is_a_series(old: str, new: str) -> None:
    assert _verdict(old, new, 0.9) == "series"


def test_a_period_label_is_no_count() -> None:
    assert ("period", "sprint:12", "") in _values("Sprint 12 的 velocity 是 34 点。")
    assert ("period", "quarter:2", "") in _values("Net worth at the end of Q2: $191k.")
    assert ("period", "week:3", "") in _values("第3周的周报已经交了。")


def test_two_values_changed_across_languages_is_never_sure() -> None:
    """Words the lexicon does not read cannot say what the values belong to: a weekly
    meeting moved to Friday 10:00 and a daily standup at 9:30 are perhaps two meetings."""
    assert _verdict("Orion 每周例会改到周五上午十点", "The Orion daily standup is at 9:30",
                    0.63) == "possible_contradiction"
