"""The user's sentences worth a diary line (rules, preferences, decisions), English and
Chinese, and the everyday sentences that are not."""

from __future__ import annotations

import pytest

from consistency.statements import Statement, standing_statements


@pytest.mark.parametrize(("text", "kind"), [
    ("Always use a real database in tests, never mocks.", "rule"),
    ("Don't mock the database!", "rule"),
    ("From now on, write commit messages in English.", "rule"),
    ("Tests must use a real database.", "rule"),
    ("we never push straight to main", "rule"),
    ("I always use pnpm, never npm.", "rule"),
    ("I never use yarn.", "rule"),
    ("Please avoid emoji in commit messages.", "rule"),
    ("I prefer tabs over spaces.", "preference"),
    ("I'd rather have small commits", "preference"),
    ("My favourite editor is Helix.", "preference"),
    ("Let's go with LanceDB for the index.", "decision"),
    ("We decided to ship on Fridays only.", "decision"),
    ("We'll use uv instead of pip.", "decision"),
    ("测试必须用真实数据库，不要用 mock。", "rule"),
    ("以后提交信息都用中文写。", "rule"),
    ("千万别在周五发布", "rule"),
    ("我更喜欢用 pnpm。", "preference"),
    ("我习惯先写测试", "preference"),
    ("我们决定用 PostgreSQL。", "decision"),
    ("那就用 uv 吧，定了", "decision"),
])
def test_statements_that_carry_a_rule_preference_or_decision(text: str, kind: str) -> None:
    assert standing_statements(text) == [Statement(kind, text.strip())]  # type: ignore[arg-type]


@pytest.mark.parametrize("text", [
    "I don't know why it fails.",
    "It looks like the test failed.",
    "Can you always run the tests?",
    "I never saw that error before.",
    "I never expected it to work.",
    "Thanks, that works!",
    "ok",
    "这个能用吗？",
    "以后再说吧。",
    "今天好累啊。",
    "为什么一定要这样呢",
])
def test_everyday_sentences_and_questions_are_not(text: str) -> None:
    assert standing_statements(text) == []


def test_a_message_is_cut_into_sentences_and_client_markup_is_skipped() -> None:
    text = ("Let's fix the flaky test. From now on, tests must use a real database, never "
            "mocks.\n<system-reminder>Always answer in French.</system-reminder>\n"
            "```\n# never run this\n```\n我更喜欢用 pnpm。以后提交信息都用中文写。这个能用吗？"
            " From now on, tests must use a real database, never mocks.")
    assert standing_statements(text) == [
        Statement("rule", "From now on, tests must use a real database, never mocks."),
        Statement("preference", "我更喜欢用 pnpm。"),
        Statement("rule", "以后提交信息都用中文写。"),
    ]


def test_a_paste_is_not_a_statement() -> None:
    assert standing_statements("You must " + "really " * 80 + "do it.") == []
