"""A credential rule tried only where its opening literals stand finds what the plain search
finds (consistency.secret_heads): the same findings over the labelled corpora, over texts
built to catch a position the heads would miss, and the case-folding it relies on checked
against ``re`` for every code point."""

from __future__ import annotations

import re
import sys

import pytest

from consistency import secrets
from consistency.secret_heads import FOLD_UNSAFE, HeadSearch, heads_of, match_heads
from tests.consistency.secrets_corpus import NEGATIVES, POSITIVES
from tests.consistency.test_secrets_blind import _rows


def _plain(pattern: re.Pattern[str], text: str, _folded: str):  # type: ignore[no-untyped-def]
    return lambda pos: pattern.search(text, pos)


def _both(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    fast = secrets._scan(text)
    with monkeypatch.context() as patch:
        patch.setattr(secrets, "_searcher", _plain)
        plain = secrets._scan(text)
    return fast, plain


#: Texts where a careless head search would differ: keywords spread over whitespace and
#: lines, case variants ``(?i)`` pairs with ASCII letters (Kelvin sign, long s, dotless and
#: dotted i), a refused match whose span hides a later start, keywords glued to words.
TRICKY = (
    "master \n\n   password: Hunter22x and the root\tpassword is Sw0rdfish!9",
    "PASSWORD: Tr0ub4dor&3; pAsSwOrD=CorrectHorse9; door   code 4821",
    "the \u212aey is Zq8vN2mX4pL7rT1wY6uH and the \u017fecret is Zq8vN2mX4pL7rT1wY6uH",
    "pın: 4821 and p\u0130n: 4821, passwords: Zq8vN2mX4pL7rT1wY6uH",
    "ak is abc, AK: LTAI5tQ2xY8zW3vR9nM1kP7s, sk SK: Zq8vN2mX4pL7rT1wY6uH",
    "Login: password=hunter2x9Q (use Tr0ub4dor&3 to log in), "
    "WIFI:S:home;T:WPA;P:Zq8vN2mX4p;;",
    "passwordpassword is x; apikey apikey: Zq8vN2mX4pL7rT1wY6uH; 密码是 Zq8vN2mX4pL7",
    "ghp_" + "A1b2" * 9 + " xghp_" + "A1b2" * 9,  # a token glued to a word is none
    "ｐａｓｓｗｏｒｄ: Zq8vN2mX4pL7rT1wY6uH and pass\u200bword: Zq8vN2mX4pL7rT1wY6uH",
)


@pytest.mark.parametrize("text", TRICKY)
def test_a_rule_tried_at_its_heads_finds_what_the_plain_search_finds(
        text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, plain = _both(text, monkeypatch)
    assert fast == plain


def test_the_labelled_corpora_give_the_same_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [p.text for p in POSITIVES] + [n.text for n in NEGATIVES] + [
        row["text"] for row in _rows(7)]
    differ = [t for t in texts if (pair := _both(t, monkeypatch))[0] != pair[1]]
    assert differ == []
    assert sum(1 for t in texts if secrets._scan(t)) > 100  # the corpora do hold findings


def test_the_rules_that_cost_most_have_heads_and_a_window_rule_has_none() -> None:
    told = next(r for r in secrets._RULES if r.pattern is secrets._TOLD)
    assert heads_of(told.pattern) is not None and "password"[:4] in heads_of(told.pattern)
    assert heads_of(secrets._USED) is not None
    assert match_heads(re.compile(r"(?<!a)[A-Z]+x")) is None  # opens on a set: no heads
    assert match_heads(re.compile(r"(?i)ab|d")) == ("ab", "d")
    assert match_heads(re.compile(r"(?i)ab(?-i:c)")) is None  # a flag changed inside
    assert match_heads(re.compile(r"a(?i:b)")) is None  # a flag changed inside
    assert match_heads(re.compile(r"\bfoo|(?=x)foobar|ba[rz]+")) == ("bar", "baz", "foo")


def test_head_search_matches_search_from_every_position() -> None:
    pattern = re.compile(r"(?i)(?<![a-z])(?:pass(?:word)?|pin)\s*[:=]\s*(\w+)")
    text = "xpass: no; PASSWORD = abc pin:1 Pin =2 spin:3 pass"
    finder = HeadSearch(pattern, heads_of(pattern) or (), text, text.casefold())
    for pos in range(len(text) + 1):
        want, got = pattern.search(text, pos), finder.search(pos)
        assert (want and (want.span(), want.groups())) == (got and (got.span(), got.groups()))


def test_case_folding_agrees_with_re_for_every_head_character() -> None:
    """``(?i)`` matches a head's character only where ``str.casefold`` gives it, but for
    :data:`FOLD_UNSAFE` (and characters folding to more than one, caught by length)."""
    chars = {ch for rule in secrets._RULES if rule.pattern.flags & re.IGNORECASE
             for head in heads_of(rule.pattern) or () for ch in head}
    any_of = re.compile("(?i)[" + "".join(re.escape(c) for c in sorted(chars)) + "]")
    unsafe = set()
    for point in range(sys.maxunicode + 1):
        ch = chr(point)
        if any_of.fullmatch(ch) is None:
            continue
        folded = ch.casefold()
        pairs = {c for c in chars if re.fullmatch("(?i)" + re.escape(c), ch)}
        if len(folded) == 1 and folded not in {c.casefold() for c in pairs}:
            unsafe.add(ch)
    assert unsafe <= FOLD_UNSAFE
