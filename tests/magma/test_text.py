"""CJK phrases of a query (``magma.text``): what the full-text side keeps together."""

from __future__ import annotations

from magma.text import cjk_phrases, holds_phrases


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
