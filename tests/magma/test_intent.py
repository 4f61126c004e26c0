"""Query intent: rules (English and Chinese), exact date ranges for a fixed day, the TTL/LRU
cache with a fake clock, and the parse of an LLM classifier's reply. Pure code: no fakes needed
beyond the clock."""

from __future__ import annotations

import json
import math
from datetime import date, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import magma.intent as intent_module
from magma.intent import (
    INTENT_PROMPT,
    NO_INTENT,
    Intent,
    IntentCache,
    TimeRange,
    analyze_intent,
    llm_messages,
    parse_llm_intent,
)

TODAY = date(2026, 12, 1)  # a Tuesday
D = date


def test_today_is_a_tuesday() -> None:
    assert TODAY.weekday() == 1


def test_public_surface_is_sorted_and_complete() -> None:
    assert intent_module.__all__ == sorted(intent_module.__all__, key=lambda n: (
        0 if n.isupper() else 1 if n[0].isupper() else 2, n))
    assert set(intent_module.__all__) == {
        "INTENT_PROMPT", "NO_INTENT", "CacheResult", "Intent", "IntentCache", "IntentSource",
        "TimeRange", "analyze_intent", "first_time_range", "llm_messages", "parse_llm_intent",
    }
    for name in intent_module.__all__:
        assert hasattr(intent_module, name)


@pytest.mark.parametrize("text", [
    "what did I do two weeks ago?", "三周前体重 80 公斤", "上上周跑了10公里", "last weekend",
    "a month ago I weighed 80 kg", "Use pnpm for every project", "",
])
def test_the_first_time_range_is_the_one_the_intent_reads(text: str) -> None:
    today = date(2026, 12, 5)
    assert intent_module.first_time_range(text, today) == \
        intent_module.analyze_intent(text, today).time_range


# --------------------------------------------------------------------------- categories

USER, FEEDBACK, PROJECT, REFERENCE = "user", "feedback", "project", "reference"


@pytest.mark.parametrize(
    ("query", "types", "layers", "confidence"),
    [
        # preferences
        ("What do I prefer for breakfast?", {USER}, {1}, 0.9),
        ("do I like jazz", {USER}, {1}, 0.9),
        ("my favourite editor", {USER}, {1}, 0.9),
        ("my favorite editor", {USER}, {1}, 0.9),
        ("my coding style", {USER}, {1}, 0.9),
        ("tabs preference", {USER}, {1}, 0.6),
        ("I like dark roast", {USER}, {1}, 0.6),
        ("dislikes", {USER}, {1}, 0.6),
        ("我喜欢什么咖啡", {USER}, {1}, 0.9),
        ("我的编辑器偏好", {USER}, {1}, 0.6),
        ("我的习惯", {USER}, {1}, 0.9),
        ("他的爱好", {USER}, {1}, 0.6),
        ("口味", {USER}, {1}, 0.6),
        ("最爱的歌", {USER}, {1}, 0.6),
        # identity
        ("who am I", {USER}, {1}, 0.9),
        ("what's my name", {USER}, {1}, 0.9),
        ("tell me about me", {USER}, {1}, 0.9),
        ("my role on the team", {USER}, {1}, 0.9),
        ("where do I live", {USER}, {1}, 0.9),
        ("我是谁", {USER}, {1}, 0.9),
        ("我叫什么", {USER}, {1}, 0.9),
        ("关于我", {USER}, {1}, 0.9),
        ("我的工作是什么", {USER}, {1}, 0.9),
        # rules and constraints
        ("should I squash commits", {FEEDBACK}, {2}, 0.9),
        ("am I allowed to push to main", {FEEDBACK}, {2}, 0.9),
        ("is it ok to mock the database", {FEEDBACK}, {2}, 0.9),
        ("commit message rule", {FEEDBACK}, {2}, 0.6),
        ("tests must hit a real database", {FEEDBACK}, {2}, 0.6),
        ("never force push", {FEEDBACK}, {2}, 0.6),
        ("naming conventions", {FEEDBACK}, {2}, 0.6),
        ("do not mock", {FEEDBACK}, {2}, 0.6),
        ("规则", {FEEDBACK}, {2}, 0.6),
        ("必须写测试", {FEEDBACK}, {2}, 0.6),
        ("禁止强推", {FEEDBACK}, {2}, 0.6),
        ("我应该用什么分支", {FEEDBACK}, {2}, 0.9),
        # procedures
        ("how do I rotate the keys", set(), {5}, 0.9),
        ("how to bake bread", set(), {5}, 0.9),
        ("How can I reset the router", set(), {5}, 0.9),
        ("what's the process for a refund", set(), {5}, 0.9),
        ("deploy steps", set(), {5}, 0.6),
        ("bread recipe", set(), {5}, 0.6),
        ("onboarding tutorial", set(), {5}, 0.6),
        ("怎么做面包", set(), {5}, 0.9),
        ("如何部署", set(), {5}, 0.6),
        ("部署步骤", set(), {5}, 0.6),
        ("安装教程", set(), {5}, 0.6),
        # project facts
        ("status of the kiln rewrite", {PROJECT}, {3}, 0.9),
        ("kiln deadline", {PROJECT}, {3}, 0.6),
        ("next release", {PROJECT}, {3}, 0.6),
        ("sprint goals", {PROJECT}, {3}, 0.6),
        ("项目进度", {PROJECT}, {3}, 0.9),
        ("里程碑", {PROJECT}, {3}, 0.6),
        ("截止", {PROJECT}, {3}, 0.6),
        # reference
        ("where is the grafana dashboard", {REFERENCE}, {3}, 0.9),
        ("where can I find the API", {REFERENCE}, {3}, 0.9),
        ("lancedb docs", {REFERENCE}, {3}, 0.6),
        ("url of the wiki", {REFERENCE}, {3}, 0.6),
        ("监控面板在哪里", {REFERENCE}, {3}, 0.9),
        ("文档链接", {REFERENCE}, {3}, 0.6),
    ],
)
def test_categories_route_to_types_and_layers(
    query: str, types: set[str], layers: set[int], confidence: float
) -> None:
    got = analyze_intent(query, TODAY)
    assert (got.types, got.layers, got.confidence) == (types, layers, confidence), got.reasons
    assert got.source == "rules"
    assert got.time_range is None
    assert got.reasons


def test_reasons_name_each_match_in_query_order() -> None:
    got = analyze_intent("What do I prefer last week?", TODAY)
    assert got.reasons == (
        "preference: 'what do i prefer'",
        "time: last week 2026-11-23..2026-11-29",
    )


@pytest.mark.parametrize(
    "query",
    [
        "sourdough hydration ratio",
        "",
        "   ",
        "likely unlikely likeness",  # "like" only on word boundaries
        "mustard ruler projection sprinter linkage policyholder",
        "prefecture favouritism",
        "每周一 例会",  # "every Monday" is not a day
        "这周期",  # "this cycle"
        "以前天气",  # "the weather before", not 前天
        "in December 2099",  # entirely in the future
        "这周五",  # this Friday: still to come on a Tuesday ("下周五" is asked for)
        "every weekend",
        "two weeks",  # a length, not a time
    ],
)
def test_no_match_is_no_intent(query: str) -> None:
    assert analyze_intent(query, TODAY) is NO_INTENT


def test_no_intent_shape() -> None:
    assert Intent(frozenset(), frozenset(), None, 0.0, (), "none") == NO_INTENT


# --------------------------------------------------------------------------- time

@pytest.mark.parametrize(
    ("query", "start", "end", "label"),
    [
        ("what happened today", D(2026, 12, 1), D(2026, 12, 1), "today"),
        ("yesterday's standup", D(2026, 11, 30), D(2026, 11, 30), "yesterday"),
        ("the day before yesterday", D(2026, 11, 29), D(2026, 11, 29),
         "the day before yesterday"),
        ("5 days ago", D(2026, 11, 26), D(2026, 11, 26), "5 days ago"),
        ("two days ago", D(2026, 11, 29), D(2026, 11, 29), "two days ago"),
        ("a day ago", D(2026, 11, 30), D(2026, 11, 30), "a day ago"),
        ("a few days ago", D(2026, 11, 28), D(2026, 11, 30), "a few days ago"),
        ("this week", D(2026, 11, 30), D(2026, 12, 1), "this week"),
        ("last week", D(2026, 11, 23), D(2026, 11, 29), "last week"),
        ("this month", D(2026, 12, 1), D(2026, 12, 1), "this month"),
        ("last month", D(2026, 11, 1), D(2026, 11, 30), "last month"),
        ("this year", D(2026, 1, 1), D(2026, 12, 1), "this year"),
        ("last year", D(2025, 1, 1), D(2025, 12, 31), "last year"),
        ("last 7 days", D(2026, 11, 25), D(2026, 12, 1), "last 7 days"),
        ("past two weeks", D(2026, 11, 18), D(2026, 12, 1), "past two weeks"),
        ("in March", D(2026, 3, 1), D(2026, 3, 31), "in march"),
        ("in December", D(2026, 12, 1), D(2026, 12, 1), "in december"),
        ("in feb 2024", D(2024, 2, 1), D(2024, 2, 29), "in feb 2024"),
        ("in September, 2025", D(2025, 9, 1), D(2025, 9, 30), "in september, 2025"),
        ("on Monday", D(2026, 11, 30), D(2026, 11, 30), "on monday"),
        ("on Tuesday", D(2026, 11, 24), D(2026, 11, 24), "on tuesday"),  # strictly past
        ("last Friday", D(2026, 11, 27), D(2026, 11, 27), "last friday"),
        ("since 2026-11-20", D(2026, 11, 20), D(2026, 12, 1), "since 2026-11-20"),
        ("notes from 2026-10-03", D(2026, 10, 3), D(2026, 10, 3), "2026-10-03"),
        ("recently", D(2026, 11, 18), D(2026, 12, 1), "recently"),
        ("what have I been reading lately", D(2026, 11, 18), D(2026, 12, 1), "lately"),
        ("今天", D(2026, 12, 1), D(2026, 12, 1), "今天"),
        ("昨天开会", D(2026, 11, 30), D(2026, 11, 30), "昨天"),
        ("前天", D(2026, 11, 29), D(2026, 11, 29), "前天"),
        ("大前天", D(2026, 11, 28), D(2026, 11, 28), "大前天"),
        ("3天前", D(2026, 11, 28), D(2026, 11, 28), "3天前"),
        ("三天前", D(2026, 11, 28), D(2026, 11, 28), "三天前"),
        ("两天前", D(2026, 11, 29), D(2026, 11, 29), "两天前"),
        ("十天前", D(2026, 11, 21), D(2026, 11, 21), "十天前"),
        ("二十三天以前", D(2026, 11, 8), D(2026, 11, 8), "二十三天以前"),
        ("几天前", D(2026, 11, 28), D(2026, 11, 30), "几天前"),
        ("本周", D(2026, 11, 30), D(2026, 12, 1), "本周"),
        ("这周", D(2026, 11, 30), D(2026, 12, 1), "这周"),
        ("这个星期", D(2026, 11, 30), D(2026, 12, 1), "这个星期"),
        ("上周", D(2026, 11, 23), D(2026, 11, 29), "上周"),
        ("上个星期", D(2026, 11, 23), D(2026, 11, 29), "上个星期"),
        ("上星期", D(2026, 11, 23), D(2026, 11, 29), "上星期"),
        ("上个星期一", D(2026, 11, 23), D(2026, 11, 23), "上个星期一"),
        ("上周日", D(2026, 11, 29), D(2026, 11, 29), "上周日"),
        ("这周一", D(2026, 11, 30), D(2026, 11, 30), "这周一"),
        ("本月", D(2026, 12, 1), D(2026, 12, 1), "本月"),
        ("这个月", D(2026, 12, 1), D(2026, 12, 1), "这个月"),
        ("上个月", D(2026, 11, 1), D(2026, 11, 30), "上个月"),
        ("上月", D(2026, 11, 1), D(2026, 11, 30), "上月"),
        ("今年", D(2026, 1, 1), D(2026, 12, 1), "今年"),
        ("去年", D(2025, 1, 1), D(2025, 12, 31), "去年"),
        ("最近", D(2026, 11, 18), D(2026, 12, 1), "最近"),
        ("近来", D(2026, 11, 18), D(2026, 12, 1), "近来"),
        ("最近7天", D(2026, 11, 25), D(2026, 12, 1), "最近7天"),
        ("过去两周", D(2026, 11, 18), D(2026, 12, 1), "过去两周"),
        ("周一", D(2026, 11, 30), D(2026, 11, 30), "周一"),
        ("星期二", D(2026, 11, 24), D(2026, 11, 24), "星期二"),
        ("星期日", D(2026, 11, 29), D(2026, 11, 29), "星期日"),
        ("星期天", D(2026, 11, 29), D(2026, 11, 29), "星期天"),
        ("3月", D(2026, 3, 1), D(2026, 3, 31), "3月"),
        ("十一月", D(2026, 11, 1), D(2026, 11, 30), "十一月"),
        ("十二月", D(2026, 12, 1), D(2026, 12, 1), "十二月"),  # this month, so far
        ("2025年3月", D(2025, 3, 1), D(2025, 3, 31), "2025年3月"),
        ("去年3月", D(2025, 3, 1), D(2025, 3, 31), "去年3月"),
        ("11月20日", D(2026, 11, 20), D(2026, 11, 20), "11月20日"),
        ("12月25号", D(2025, 12, 25), D(2025, 12, 25), "12月25号"),
        ("2025年", D(2025, 1, 1), D(2025, 12, 31), "2025年"),
        ("自2026-11-01以来", D(2026, 11, 1), D(2026, 12, 1), "自2026-11-01以来"),
        ("what did I cook two weeks ago", D(2026, 11, 16), D(2026, 11, 22), "two weeks ago"),
        ("a week ago", D(2026, 11, 23), D(2026, 11, 29), "a week ago"),
        ("the week before last", D(2026, 11, 16), D(2026, 11, 22), "the week before last"),
        ("2 months ago", D(2026, 10, 1), D(2026, 10, 31), "2 months ago"),
        ("last weekend's hike", D(2026, 11, 28), D(2026, 11, 29), "last weekend"),
        ("plans for this weekend", D(2026, 12, 5), D(2026, 12, 6), "this weekend"),
        ("what is due next week", D(2026, 12, 7), D(2026, 12, 13), "next week"),
        ("the review on Wednesday next week", D(2026, 12, 9), D(2026, 12, 9),
         "on wednesday next week"),
        ("next Monday", D(2026, 12, 7), D(2026, 12, 7), "next monday"),
        ("三周前", D(2026, 11, 9), D(2026, 11, 15), "三周前"),
        ("两个星期前的会", D(2026, 11, 16), D(2026, 11, 22), "两个星期前"),
        ("上上周", D(2026, 11, 16), D(2026, 11, 22), "上上周"),
        ("上上周三", D(2026, 11, 18), D(2026, 11, 18), "上上周三"),
        ("上周末去了哪里", D(2026, 11, 28), D(2026, 11, 29), "上周末"),
        ("下周三开会", D(2026, 12, 9), D(2026, 12, 9), "下周三"),
        ("下周的安排", D(2026, 12, 7), D(2026, 12, 13), "下周"),
        ("三个月前", D(2026, 9, 1), D(2026, 9, 30), "三个月前"),
        ("半个月前", D(2026, 11, 12), D(2026, 11, 20), "半个月前"),
        # a query about what is to come: the next such day, not the last
        ("Can we put the design review at 16:30 on Wednesday?", D(2026, 12, 2),
         D(2026, 12, 2), "on wednesday"),
        ("remind me on Friday to call the plumber", D(2026, 12, 4), D(2026, 12, 4),
         "on friday"),
        ("打算周五去复查", D(2026, 12, 4), D(2026, 12, 4), "周五"),
        ("notes from the meeting on Friday", D(2026, 11, 27), D(2026, 11, 27), "on friday"),
        # "this weekend" in the past tense, asked on a weekday: the one just past
        ("what did I do this weekend", D(2026, 11, 28), D(2026, 11, 29), "this weekend"),
        ("这周末干了什么", D(2026, 11, 28), D(2026, 11, 29), "这周末"),
        # a rolling span, counted back from today; "last month" alone is the calendar one
        ("what did I buy during the past month", D(2026, 11, 1), D(2026, 12, 1),
         "the past month"),
        ("races I ran in the last two weeks", D(2026, 11, 18), D(2026, 12, 1),
         "the last two weeks"),
        ("books read over the past year", D(2025, 12, 1), D(2026, 12, 1), "the past year"),
        ("the past few weeks", D(2026, 11, 11), D(2026, 12, 1), "the past few weeks"),
        ("in the past couple of months", D(2026, 10, 1), D(2026, 12, 1),
         "the past couple of months"),
        ("the past fortnight", D(2026, 11, 18), D(2026, 12, 1), "the past fortnight"),
        ("过去一个月买了什么", D(2026, 11, 1), D(2026, 12, 1), "过去一个月"),
        ("最近两年", D(2024, 12, 1), D(2026, 12, 1), "最近两年"),
        ("近几个月", D(2026, 9, 1), D(2026, 12, 1), "近几个月"),
    ],
)
def test_time_expressions_resolve_to_exact_ranges(
    query: str, start: date, end: date, label: str
) -> None:
    got = analyze_intent(query, TODAY)
    assert got.time_range == TimeRange(start, end, label), got.reasons
    assert 4 in got.layers
    assert got.reasons[0] == f"time: {label} {start.isoformat()}..{end.isoformat()}"


#: Saturday 5 December 2026, the day of a break-it round whose findings the rows below keep.
SATURDAY = date(2026, 12, 5)


@pytest.mark.parametrize(
    ("query", "start", "end", "label"),
    [
        # the weekend before last, not that whole week; the week after next, not next week
        ("上上周末", D(2026, 11, 21), D(2026, 11, 22), "上上周末"),
        ("上上个周末去了哪里", D(2026, 11, 21), D(2026, 11, 22), "上上个周末"),
        ("the weekend before last", D(2026, 11, 21), D(2026, 11, 22),
         "the weekend before last"),
        ("下下周", D(2026, 12, 14), D(2026, 12, 20), "下下周"),
        ("下下周三开会", D(2026, 12, 16), D(2026, 12, 16), "下下周三"),
        ("下周末的安排", D(2026, 12, 12), D(2026, 12, 13), "下周末"),
        ("plans for next weekend", D(2026, 12, 12), D(2026, 12, 13), "next weekend"),
        ("the weekend after next", D(2026, 12, 19), D(2026, 12, 20), "the weekend after next"),
        # half a month back, half a year ago
        ("近半个月花了多少钱", D(2026, 11, 21), D(2026, 12, 5), "近半个月"),
        ("最近半个月", D(2026, 11, 21), D(2026, 12, 5), "最近半个月"),
        ("半年前我在做什么", D(2026, 5, 5), D(2026, 7, 6), "半年前"),
        # a plural said without a count is a few, as "the past few weeks" is
        ("the past days", D(2026, 12, 3), D(2026, 12, 5), "the past days"),
        ("the past weeks", D(2026, 11, 15), D(2026, 12, 5), "the past weeks"),
        ("these last weeks", D(2026, 11, 15), D(2026, 12, 5), "these last weeks"),
        ("the past few weeks", D(2026, 11, 15), D(2026, 12, 5), "the past few weeks"),
        # a year as a time, as 2025年 is
        ("in 2022", D(2022, 1, 1), D(2022, 12, 31), "in 2022"),
        ("what did I do in 2023", D(2023, 1, 1), D(2023, 12, 31), "in 2023"),
        ("since 2025", D(2025, 1, 1), D(2026, 12, 5), "since 2025"),
        ("in 2024 this was my bike", D(2024, 1, 1), D(2024, 12, 31), "in 2024"),
        ("what happened in 2021 at work", D(2021, 1, 1), D(2021, 12, 31), "in 2021"),
        ("2023年", D(2023, 1, 1), D(2023, 12, 31), "2023年"),
        # years ago: that calendar year, as "2 months ago" is that calendar month
        ("a year ago", D(2025, 1, 1), D(2025, 12, 31), "a year ago"),
        ("2 years ago", D(2024, 1, 1), D(2024, 12, 31), "2 years ago"),
        ("两年前", D(2024, 1, 1), D(2024, 12, 31), "两年前"),
        ("前年", D(2024, 1, 1), D(2024, 12, 31), "前年"),
        ("大前年", D(2023, 1, 1), D(2023, 12, 31), "大前年"),
        # rolling spans of half a year, a decade and hours
        ("近半年", D(2026, 6, 5), D(2026, 12, 5), "近半年"),
        ("过去半年", D(2026, 6, 5), D(2026, 12, 5), "过去半年"),
        ("over the past decade", D(2016, 12, 5), D(2026, 12, 5), "the past decade"),
        ("in the last 24 hours", D(2026, 12, 4), D(2026, 12, 5), "the last 24 hours"),
        ("the past 3 hours", D(2026, 12, 5), D(2026, 12, 5), "the past 3 hours"),
        ("过去24小时", D(2026, 12, 4), D(2026, 12, 5), "过去24小时"),
        ("errors in the past 30 days of logs", D(2026, 11, 6), D(2026, 12, 5),
         "the past 30 days"),
        ("past 2 weeks of standups", D(2026, 11, 22), D(2026, 12, 5), "past 2 weeks"),
    ],
)
def test_break_it_time_expressions_resolve_on_a_saturday(
    query: str, start: date, end: date, label: str
) -> None:
    got = analyze_intent(query, SATURDAY)
    assert got.time_range == TimeRange(start, end, label), got.reasons
    assert 4 in got.layers


@pytest.mark.parametrize("query", [
    "the last 3 days of the trip",  # part of something else
    "the last 3 weeks of the project",
    "last 3 days of the trip",
    "2022 requests", "port 2022", "version 2022.1", "in 2022.1", "in 2022-23",
    "the spike in 2022 requests",
    "in 2027",  # still to come
    "以前年轻的时候",  # "when I was young": no 前年
])
def test_break_it_non_times_give_no_range(query: str) -> None:
    assert analyze_intent(query, SATURDAY).time_range is None


@pytest.mark.parametrize("query", [
    "during the past month", "over the past year", "what did I do in 2023",
    "what happened throughout 2024", "within the past week",
])
def test_a_preposition_before_a_time_is_no_content(query: str) -> None:
    assert analyze_intent(query, SATURDAY).time_only


def test_a_rolling_month_starts_on_the_last_day_of_a_shorter_month() -> None:
    got = analyze_intent("what did I fix during the past month", date(2026, 3, 31))
    assert got.time_range == TimeRange(D(2026, 2, 28), D(2026, 3, 31), "the past month")
    assert analyze_intent("the past month", date(1, 1, 20)).time_range is None


@pytest.mark.parametrize(("query", "time_only"), [
    ("what did I get done yesterday", True),
    ("What have I noted down so far today?", True),
    ("what happened last week", True),
    ("What did I do last weekend?", True),
    ("昨天做了什么", True),
    ("上周都干了些啥", True),
    ("今天记了什么", True),
    ("what did I buy yesterday", False),  # a thing to look for
    ("cook something tonight", False),
    ("what did we settle last week on how list endpoints page", False),
    ("昨天吃了什么", False),
    ("上周和房东谈了什么", False),
    ("what did I do", False),  # no time at all
    ("how many days ago did I go hiking", False),
    ("yesterday's notes", True),
    ("what's happening today", True),
    ("昨天的笔记", True),
    ("昨天在干嘛", True),
    ("昨天有没有做什么", True),
    # a word of any script, a tag or a pictograph is a thing to look for
    ("yesterday паспорт", False),
    ("what did I write about ΑΘΗΝΑ last week", False),
    ("yesterday محمد", False),
    ("yesterday 🚲", False),
    ("what did I do yesterday #work", False),
    # so is what a routing phrase names
    ("what rules did I write yesterday", False),
    ("昨天的项目进度", False),
    ("昨天写了什么文档", False),
])
def test_a_query_that_names_only_a_time(query: str, time_only: bool) -> None:
    assert analyze_intent(query, TODAY).time_only is time_only


def test_strong_and_weak_time_words() -> None:
    assert analyze_intent("last week", TODAY).confidence == 0.9
    assert analyze_intent("上周", TODAY).confidence == 0.9
    assert analyze_intent("recently", TODAY).confidence == 0.6
    assert analyze_intent("最近", TODAY).confidence == 0.6


def test_time_across_a_year_boundary() -> None:
    monday = date(2026, 1, 5)
    assert analyze_intent("last week", monday).time_range == TimeRange(
        D(2025, 12, 29), D(2026, 1, 4), "last week")
    assert analyze_intent("this week", monday).time_range == TimeRange(monday, monday, "this week")
    assert analyze_intent("last month", monday).time_range == TimeRange(
        D(2025, 12, 1), D(2025, 12, 31), "last month")
    assert analyze_intent("in December", monday).time_range == TimeRange(
        D(2025, 12, 1), D(2025, 12, 31), "in december")
    assert analyze_intent("on Monday", monday).time_range == TimeRange(
        D(2025, 12, 29), D(2025, 12, 29), "on monday")


def test_leap_day_is_the_most_recent_one() -> None:
    got = analyze_intent("2月29日", TODAY)
    assert got.time_range == TimeRange(D(2024, 2, 29), D(2024, 2, 29), "2月29日")
    assert analyze_intent("2月30日", TODAY).time_range is None


def test_longest_expression_wins_and_the_first_sets_the_range() -> None:
    # "the day before yesterday" is not "yesterday"; 大前天 is not 前天
    for query in ("the day before yesterday", "大前天"):
        found = analyze_intent(query, TODAY).time_range
        assert found is not None and found.label == query
    got = analyze_intent("yesterday or last week", TODAY)
    assert got.time_range == TimeRange(D(2026, 11, 30), D(2026, 11, 30), "yesterday")
    assert got.reasons == (
        "time: yesterday 2026-11-30..2026-11-30",
        "time: last week 2026-11-23..2026-11-29 (not used: not the first)",
    )


def test_normalisation_case_width_apostrophes_spaces() -> None:
    assert analyze_intent("LAST   WEEK", TODAY).time_range == TimeRange(
        D(2026, 11, 23), D(2026, 11, 29), "last week")
    assert analyze_intent("３天前", TODAY).time_range == TimeRange(
        D(2026, 11, 28), D(2026, 11, 28), "3天前")
    assert analyze_intent("I don\u2019t push on Fridays", TODAY).types == {FEEDBACK}
    # English next to Chinese without a space still matches
    assert analyze_intent("请问how to部署", TODAY).layers == {5}


def test_edges_of_the_calendar_do_not_raise() -> None:
    first, last = date.min, date.max
    assert analyze_intent("yesterday", first).time_range is None
    assert analyze_intent("last year", first).time_range is None
    assert analyze_intent("last 30 days", first).time_range == TimeRange(first, first,
                                                                          "last 30 days")
    assert analyze_intent("this week", last).time_range == TimeRange(
        D(9999, 12, 27), last, "this week")
    assert analyze_intent("999999 days ago", TODAY).time_range is None


# --------------------------------------------------------------------------- mixed

def test_mixed_categories_union_types_and_layers_and_keep_the_time() -> None:
    got = analyze_intent("What did I prefer for lunch last week?", TODAY)
    assert got.types == {USER}
    assert got.layers == {1, 4}
    assert got.time_range == TimeRange(D(2026, 11, 23), D(2026, 11, 29), "last week")
    assert got.confidence == 0.9

    got = analyze_intent("how do I cut a release, and is there a rule about it?", TODAY)
    assert (got.types, got.layers, got.confidence) == ({PROJECT, FEEDBACK}, {2, 3, 5}, 0.9)
    assert got.reasons == ("procedure: 'how do i'", "project: 'release'", "rule: 'rule'")

    got = analyze_intent("上周项目进度文档在哪", TODAY)
    assert got.types == {PROJECT, REFERENCE}
    assert got.layers == {3, 4}
    assert got.time_range is not None and got.time_range.label == "上周"


def test_weak_plus_weak_stays_weak() -> None:
    got = analyze_intent("release rule", TODAY)
    assert got.confidence == 0.6
    assert got.types == {PROJECT, FEEDBACK}


# --------------------------------------------------------------------------- values

def test_values_validate() -> None:
    with pytest.raises(ValueError, match="start 2026-12-02 is after end"):
        TimeRange(D(2026, 12, 2), D(2026, 12, 1), "x")
    with pytest.raises(ValueError, match="unknown memory types"):
        Intent(frozenset({"note"}), frozenset(), None, 0.5, ())
    with pytest.raises(ValueError, match=r"outside 1\.\.5"):
        Intent(frozenset(), frozenset({6}), None, 0.5, ())
    with pytest.raises(ValueError, match="confidence"):
        Intent(frozenset(), frozenset(), None, 1.5, ())
    with pytest.raises(ValueError, match="confidence"):
        Intent(frozenset(), frozenset(), None, float("nan"), ())


# --------------------------------------------------------------------------- cache

class FakeClock:
    """Seconds, advanced by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _intent(tag: str) -> Intent:
    return Intent(frozenset(), frozenset({5}), None, 0.9, (tag,))


def test_cache_hit_miss_and_key_normalisation() -> None:
    cache = IntentCache(ttl_s=60, max_size=8, clock=FakeClock())
    assert cache.get("How do I  deploy", TODAY) is None
    cache.put("How do I  deploy", TODAY, _intent("a"))
    assert cache.get("how do i deploy", TODAY) == _intent("a")
    assert cache.get("  HOW DO I\tDEPLOY ", TODAY) == _intent("a")
    assert cache.get("how do i deploy", date(2026, 12, 2)) is None  # another day: another key
    assert (cache.hits, cache.misses, len(cache)) == (2, 2, 1)


def test_cache_entries_expire_after_ttl() -> None:
    clock = FakeClock()
    cache = IntentCache(ttl_s=30, max_size=8, clock=clock)
    cache.put("q", TODAY, _intent("a"))
    clock.now += 29.9
    assert cache.get("q", TODAY) == _intent("a")
    clock.now += 0.1  # age 30 s: expired
    assert len(cache) == 0
    assert cache.get("q", TODAY) is None
    assert (cache.hits, cache.misses) == (1, 1)
    cache.put("q", TODAY, _intent("b"))  # a put refreshes the age
    clock.now += 10
    assert cache.get("q", TODAY) == _intent("b")


def test_cache_evicts_least_recently_used_beyond_max_size() -> None:
    cache = IntentCache(ttl_s=60, max_size=2, clock=FakeClock())
    cache.put("a", TODAY, _intent("a"))
    cache.put("b", TODAY, _intent("b"))
    assert cache.get("a", TODAY) is not None  # "a" is now the most recent
    cache.put("c", TODAY, _intent("c"))  # evicts "b"
    assert len(cache) == 2
    assert cache.get("b", TODAY) is None
    assert cache.get("a", TODAY) == _intent("a")
    assert cache.get("c", TODAY) == _intent("c")
    cache.put("a", TODAY, _intent("a2"))  # overwriting does not grow the cache
    assert len(cache) == 2 and cache.get("a", TODAY) == _intent("a2")


def test_cache_of_size_zero_keeps_nothing_and_bad_settings_raise() -> None:
    cache = IntentCache(ttl_s=60, max_size=0, clock=FakeClock())
    cache.put("a", TODAY, _intent("a"))
    assert len(cache) == 0 and cache.get("a", TODAY) is None
    with pytest.raises(ValueError, match="ttl_s"):
        IntentCache(ttl_s=-1, max_size=2)
    with pytest.raises(ValueError, match="ttl_s"):
        IntentCache(ttl_s=float("nan"), max_size=2)
    with pytest.raises(ValueError, match="max_size"):
        IntentCache(ttl_s=1, max_size=-1)


def test_cache_defaults_to_the_monotonic_clock() -> None:
    cache = IntentCache(ttl_s=3600, max_size=1)
    cache.put("a", TODAY, NO_INTENT)
    assert cache.get("a", TODAY) is NO_INTENT


def _unit(*values: float) -> list[float]:
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


def test_cache_answers_a_query_close_in_meaning_at_the_threshold_only() -> None:
    clock = FakeClock()
    cache = IntentCache(ttl_s=60, max_size=8, semantic_threshold=0.9, clock=clock)
    cache.put("what units do I prefer", TODAY, _intent("units"), vector=_unit(1, 0, 0))
    cache.put("how do I deploy", TODAY, _intent("deploy"), vector=_unit(0, 1, 0))
    # cos 0.95 with the first: answered by it, counted as a semantic hit
    near = _unit(0.95, math.sqrt(1 - 0.95**2), 0)
    assert cache.lookup("which units do I like", TODAY, near) == (_intent("units"), "semantic-hit")
    # cos 0.85: below the threshold, a miss
    far = _unit(0.85, 0, math.sqrt(1 - 0.85**2))
    assert cache.lookup("units in the lab", TODAY, far) == (None, "miss")
    # no vector: exact keys only; the exact key wins over meaning
    assert cache.lookup("which units do I like", TODAY) == (None, "miss")
    assert cache.lookup("how do I deploy", TODAY, near) == (_intent("deploy"), "hit")
    # another day, or a refused intent: a miss
    assert cache.lookup("x", date(2026, 12, 2), near) == (None, "miss")
    assert cache.lookup("x", TODAY, near, accept=lambda i: False) == (None, "miss")
    assert (cache.hits, cache.semantic_hits, cache.misses) == (2, 1, 4)
    # expired entries answer nothing, by meaning either
    clock.now += 60
    assert cache.lookup("which units do I like", TODAY, near) == (None, "miss")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3)), max_size=40),
       st.integers(0, 4))
def test_cache_by_meaning_agrees_with_a_plain_scan(
        puts: list[tuple[int, int]], max_size: int) -> None:
    """Whatever the puts, overwrites and evictions, a lookup by meaning finds the entry a
    plain scan of the live entries would (the matrix rows never go stale)."""
    axes = [_unit(*(1.0 if i == j else 0.0 for j in range(6))) for i in range(6)]
    clock = FakeClock()
    cache = IntentCache(ttl_s=60, max_size=max_size, semantic_threshold=0.99, clock=clock)
    live: dict[str, int] = {}
    for name, axis in puts:
        cache.put(f"q{name}", TODAY, _intent(f"{name}/{axis}"), vector=axes[axis])
        live.pop(f"q{name}", None)
        live[f"q{name}"] = axis
        while len(live) > max_size:
            live.pop(next(iter(live)))
    for axis in range(6):
        found, how = cache.lookup("a new query", TODAY, axes[axis])
        owners = [q for q, a in live.items() if a == axis]
        assert (how == "semantic-hit") == bool(owners)
        if found is not None:
            assert found.reasons[0].endswith(f"/{axis}")


def test_cache_without_a_threshold_never_matches_by_meaning() -> None:
    cache = IntentCache(ttl_s=60, max_size=8, clock=FakeClock())
    cache.put("a", TODAY, _intent("a"), vector=_unit(1, 0))
    assert cache.lookup("b", TODAY, _unit(1, 0)) == (None, "miss")
    with pytest.raises(ValueError, match="semantic_threshold"):
        IntentCache(ttl_s=1, max_size=1, semantic_threshold=1.5)
    other_model = IntentCache(ttl_s=60, max_size=8, semantic_threshold=0.5, clock=FakeClock())
    other_model.put("a", TODAY, _intent("a"), vector=_unit(1, 0, 0))
    assert other_model.lookup("b", TODAY, _unit(1, 0)) == (None, "miss")  # other dimensions


# --------------------------------------------------------------------------- LLM

def test_llm_messages_carry_prompt_day_and_query() -> None:
    messages = llm_messages("what did I do last week?", TODAY)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == INTENT_PROMPT
    assert "2026-12-01 (Tuesday)" in messages[1]["content"]
    assert "what did I do last week?" in messages[1]["content"]
    for key in ('"types"', '"layers"', '"time"', '"confidence"', "feedback", "reference"):
        assert key in INTENT_PROMPT


GOOD = {"types": ["user"], "layers": [1, 4],
        "time": {"start": "2026-11-23", "end": "2026-11-29"}, "confidence": 0.8}


def test_parse_llm_intent_good_json() -> None:
    got = parse_llm_intent(json.dumps(GOOD), TODAY)
    assert got == Intent(
        frozenset({"user"}), frozenset({1, 4}), TimeRange(D(2026, 11, 23), D(2026, 11, 29), "llm"),
        0.8, ("llm: types user; layers 1,4", "time: llm 2026-11-23..2026-11-29"), "llm",
    )


@pytest.mark.parametrize(
    "reply",
    [
        f"```json\n{json.dumps(GOOD)}\n```",
        f"Sure! Here it is:\n```\n{json.dumps(GOOD, indent=2)}\n```\nHope it helps.",
        f"The answer is {json.dumps(GOOD)} as requested.",
        f"Thinking {{not json}} ... {json.dumps(GOOD)}",
    ],
)
def test_parse_llm_intent_finds_json_in_fences_and_prose(reply: str) -> None:
    got = parse_llm_intent(reply, TODAY)
    assert got is not None
    assert (got.types, got.layers, got.confidence, got.source) == ({"user"}, {1, 4}, 0.8, "llm")


def test_parse_llm_intent_without_time_and_with_empty_lists() -> None:
    got = parse_llm_intent('{"types": [], "layers": [], "time": null, "confidence": 0}', TODAY)
    assert got == Intent(frozenset(), frozenset(), None, 0.0, ("llm: types -; layers -",), "llm")
    got = parse_llm_intent('{"types": ["feedback"], "layers": [2], "confidence": 1}', TODAY)
    assert got is not None and got.time_range is None and got.confidence == 1.0


def test_parse_llm_intent_clips_an_end_after_today() -> None:
    reply = dict(GOOD, time={"start": "2026-11-30", "end": "2026-12-06"})
    got = parse_llm_intent(json.dumps(reply), TODAY)
    assert got is not None
    assert got.time_range == TimeRange(D(2026, 11, 30), TODAY, "llm")


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "no idea",
        "{not json}",
        "[1, 2, 3]",
        '"just a string"',
        "{" * 100_000,
        "[" * 100_000,
        json.dumps(dict(GOOD, types=["notes"])),
        json.dumps(dict(GOOD, types="user")),
        json.dumps(dict(GOOD, types=[1])),
        json.dumps(dict(GOOD, layers=[0])),
        json.dumps(dict(GOOD, layers=[6])),
        json.dumps(dict(GOOD, layers=["1"])),
        json.dumps(dict(GOOD, layers=[True])),
        json.dumps(dict(GOOD, layers=[1.0])),
        json.dumps(dict(GOOD, confidence=1.5)),
        json.dumps(dict(GOOD, confidence=-0.1)),
        json.dumps(dict(GOOD, confidence="high")),
        json.dumps(dict(GOOD, confidence=True)),
        json.dumps(dict(GOOD, confidence=None)),
        '{"types": [], "layers": [], "time": null, "confidence": NaN}',
        '{"types": [], "layers": [], "time": null, "confidence": Infinity}',
        json.dumps({k: v for k, v in GOOD.items() if k != "confidence"}),
        json.dumps({k: v for k, v in GOOD.items() if k != "types"}),
        json.dumps(dict(GOOD, time={"start": "2026-11-31", "end": "2026-12-01"})),
        json.dumps(dict(GOOD, time={"start": "last week", "end": "2026-12-01"})),
        json.dumps(dict(GOOD, time={"start": "2026-11-29", "end": "2026-11-23"})),
        json.dumps(dict(GOOD, time={"start": "2026-12-05", "end": "2026-12-06"})),
        json.dumps(dict(GOOD, time={"start": "2026-11-23"})),
        json.dumps(dict(GOOD, time="last week")),
        json.dumps(dict(GOOD, time={"start": 20261123, "end": 20261129})),
    ],
)
def test_parse_llm_intent_rejects_malformed_and_out_of_range(reply: str) -> None:
    assert parse_llm_intent(reply, TODAY) is None


# --------------------------------------------------------------------------- properties

_FRAGMENTS = st.sampled_from([
    "last week", "上周", "yesterday", "in march", "in feb 2024", "on sunday", "since 2026-02-30",
    "since 2026-11-20", "3天前", "十五天前", "上个星期日", "这周六", "2月29日", "0000年",
    "9999年12月",
    "last 999999 days", "999999 days ago", "how do i", "prefer", "规则", "在哪", "recently",
    "最近99周", "12月31号", "去年2月29日", "the day before yesterday", "2026-13-01",
])


@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(st.one_of(st.text(max_size=30), _FRAGMENTS), max_size=6),
    today=st.dates(),
)
def test_analyze_intent_is_total_and_well_formed(parts: list[str], today: date) -> None:
    got = analyze_intent(" ".join(parts), today)
    assert 0.0 <= got.confidence <= 1.0
    assert got.types <= {"user", "feedback", "project", "reference"}
    assert got.layers <= {1, 2, 3, 4, 5}
    if got.time_range is not None:  # the future only as far as "next week" reaches
        assert got.time_range.start <= got.time_range.end
        assert got.time_range.end <= today + timedelta(days=13) or today > date.max - \
            timedelta(days=13)
        assert 4 in got.layers
    assert (got.confidence == 0.0) == (got is NO_INTENT)


@settings(max_examples=200, deadline=None)
@given(reply=st.one_of(
    st.text(max_size=200),
    st.recursive(
        st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=12),
        lambda inner: st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(["types", "layers", "time", "confidence", "start",
                                           "end"]), inner, max_size=5),
        max_leaves=12,
    ).map(json.dumps),
))
def test_parse_llm_intent_never_raises(reply: str) -> None:
    got = parse_llm_intent(reply, TODAY)
    if got is not None:
        assert got.source == "llm" and 0.0 <= got.confidence <= 1.0
        if got.time_range is not None:
            assert got.time_range.start <= got.time_range.end <= TODAY


#: Each time expression a rule reads, ahead of today as well as back (a break-it round found
#: "this weekend" and "next week" raising OverflowError in the last days of 9999).
_EXPRESSIONS = [
    "this weekend", "plans for this weekend", "what did I do this weekend", "last weekend",
    "本周末", "这周末", "上周末", "上上周末", "next week", "what is due next week",
    "on Wednesday next week", "next Monday", "next Sunday", "下周", "下周三", "下周日",
    "this week", "这周三", "last week", "上上周三", "yesterday", "昨天", "前天", "a few days ago",
    "半个月前", "三个月前", "last month", "去年", "the past year", "最近两年", "on Friday",
    "remind me on Friday", "the week before last", "2 months ago", "the past fortnight",
    "next weekend", "the weekend after next", "半年前", "近半个月",
]


@settings(max_examples=400, deadline=None)
@given(query=st.sampled_from(_EXPRESSIONS), today=st.one_of(
    st.dates(), st.dates(min_value=date.max - timedelta(days=20)),
    st.dates(max_value=date.min + timedelta(days=20))))
def test_each_time_expression_on_any_day_is_a_range_or_none(query: str, today: date) -> None:
    got = analyze_intent(query, today)
    if got.time_range is not None:
        assert date.min <= got.time_range.start <= got.time_range.end <= date.max


@pytest.mark.parametrize("query", ["this weekend", "next week", "下周日", "本周末"])
def test_a_range_past_the_last_day_of_the_calendar_is_none(query: str) -> None:
    assert analyze_intent(query, date.max).time_range is None
