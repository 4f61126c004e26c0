"""CJK phrases of a query (``magma.text``): what the full-text side keeps together; and a
note's own day, left out when two notes are compared as copies."""

from __future__ import annotations

from datetime import date

import pytest

from magma.text import cjk_phrases, copy_form, holds_phrases, same_copy


def test_cjk_phrases_are_the_runs_the_user_wrote() -> None:
    assert cjk_phrases("git 提交信息 怎么写") == ["提交信息", "怎么写"]
    assert cjk_phrases("how do I commit") == []
    assert cjk_phrases("用 pnpm") == []  # one character is no phrase
    assert cjk_phrases("ｶﾀｶﾅ") == ["カタカナ"]  # NFKC: half-width kana as typed elsewhere


def test_a_text_holds_a_phrase_only_as_written() -> None:
    assert holds_phrases('git commit -m "你的提交信息"', ["提交信息"])
    assert not holds_phrases("提交代码前先看信息", ["提交信息"])
    assert not holds_phrases("提交信息", ["提交信息", "怎么写"])
    assert not holds_phrases("anything", [])


# ------------------------------------------------------------------ a note's own day

_SESSION = ("# Chat session {day}\n\n**User:** I just started as Senior Software Engineer at "
            "Acme and I lead {n} engineers. Any tips for a first team outing?\n\n"
            "**Assistant:** Congratulations! An escape room or a cooking class works well.")
_DAILY_ZH = "# {day}\n\n今天在西湖跑了{km}公里，配速 5'30\"。晚上和小王吃火锅。"


def _zh(day: date) -> str:
    return f"{day.year}年{day.month}月{day.day}日"


_MAY_11, _MAY_23 = date(2023, 5, 11), date(2023, 5, 23)
_MAR_5, _MAR_6 = date(2024, 3, 5), date(2024, 3, 6)


@pytest.mark.parametrize(("a", "a_day", "b", "b_day", "copy"), [
    # filed again under another day: the heading names that day, nothing else changed
    (_SESSION.format(day="2023-05-11", n=5), _MAY_11,
     _SESSION.format(day="2023-05-23", n=5), _MAY_23, True),
    (_SESSION.format(day="2023/5/11", n=5), _MAY_11,
     _SESSION.format(day="2023.05.23", n=5), _MAY_23, True),
    (_SESSION.format(day="May 11, 2023", n=5), _MAY_11,
     _SESSION.format(day="Tuesday, 23rd May 2023", n=5), _MAY_23, True),
    (_DAILY_ZH.format(day=_zh(_MAR_5), km=10), _MAR_5,
     _DAILY_ZH.format(day=_zh(_MAR_6), km=10), _MAR_6, True),
    (_DAILY_ZH.format(day="2024 年 03 月 05 号 星期二", km=10), _MAR_5,
     _DAILY_ZH.format(day="2024年3月6日（周三）", km=10), _MAR_6, True),
    # one value changed under the new day is another session
    (_SESSION.format(day="2023-05-11", n=5), _MAY_11,
     _SESSION.format(day="2023-05-23", n=4), _MAY_23, False),
    (_DAILY_ZH.format(day=_zh(_MAR_5), km=10), _MAR_5,
     _DAILY_ZH.format(day=_zh(_MAR_6), km=12), _MAR_6, False),
    # a day the note does not name as its own is what it states
    (_SESSION.format(day="2023-05-11", n=5), None,
     _SESSION.format(day="2023-05-23", n=5), None, False),
    (_SESSION.format(day="2023-05-11", n=5), _MAY_11,
     _SESSION.format(day="2023-05-23", n=5), _MAY_11, False),
    (_DAILY_ZH.format(day=_zh(_MAR_5), km=10), _MAR_5,
     _DAILY_ZH.format(day=_zh(_MAR_6), km=10), None, False),
    # another date inside the text, a day without its year, a longer number: values
    ("# 2023-05-11\n\nThe review moved to 2023-05-18.", _MAY_11,
     "# 2023-05-23\n\nThe review moved to 2023-05-30.", _MAY_23, False),
    ("# 2023年5月11日\n\n评审改到2023年5月18日。", _MAY_11,
     "# 2023年5月23日\n\n评审改到2023年5月30日。", _MAY_23, False),
    ("# Standup May 11\n\nShipped the login page.", _MAY_11,
     "# Standup May 23\n\nShipped the login page.", _MAY_23, False),
    ("# 5月11日 站会\n\n登录页上线。", _MAY_11, "# 5月23日 站会\n\n登录页上线。", _MAY_23, False),
    ("Ticket 2023-05-111 closed.", _MAY_11, "Ticket 2023-05-231 closed.", _MAY_23, False),
    ("Ticket 12023-05-11 closed.", _MAY_11, "Ticket 12023-05-23 closed.", _MAY_23, False),
])
def test_a_note_filed_again_under_another_day_is_a_copy(
        a: str, a_day: date | None, b: str, b_day: date | None, copy: bool) -> None:
    first, second = copy_form(a, own_day=a_day), copy_form(b, own_day=b_day)
    assert same_copy(first, second) is copy and same_copy(second, first) is copy


@pytest.mark.parametrize("spelled", [
    "2023-05-11", "2023/5/11", "2023.05.11", "Thu 2023-05-11", "２０２３－０５－１１",
    "2023年5月11日", "2023 年 05 月 11 号", "2023年5月11日 星期四", "2023년 5월 11일",
    "May 11, 2023", "may 11th 2023", "Thursday, May 11, 2023", "11 May 2023",
    "11th of May, 2023", "Thursday, 11 May 2023", "11 May. 2023",
])
def test_each_spelling_of_the_own_day_is_left_out(spelled: str) -> None:
    assert copy_form(f"Filed {spelled}.", own_day=_MAY_11).values == ()
    assert copy_form(f"Filed {spelled}.").values != ()  # (no own day: a value as any other)


@pytest.mark.parametrize("kept", [
    "2023-05-12", "2024-05-11", "2023-5/11", "May 11", "11 May", "5月11日", "5/11/2023",
    "11.05.2023", "2023-05-111", "12023-05-11", "2023年5月11", "Friday, May 12, 2023",
])
def test_what_is_not_the_own_day_stays_a_value(kept: str) -> None:
    assert copy_form(f"Moved to {kept}.", own_day=_MAY_11).values \
        == copy_form(f"Moved to {kept}.").values != ()
