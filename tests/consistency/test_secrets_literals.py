"""A short text's rules are found from the literals it holds (``consistency.secrets.
_rules_for``): the same rules, in the same order, as asking each rule whether the text holds
one of its literals (``_Rule.may_match``), and the literals found are every one the text
holds, overlapping ones too (``pass`` in ``passcode``)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from consistency import secrets

#: Odd texts: a BOM, CRLF line ends, Chinese, quoted values, overlapping and cased literals,
#: a memory's file name, full-width letters, nothing.
ODD = ["\ufeffpassword: hunter2-xyz\r\nok", "数据库密码是 s3cr3t!", 'token: "abc"', "",
       "Memory/a-real-instance-for-adyen-in-event-schemas-tests.md", "passcode PASSWORD",
       "sk-ant-api03", "ghp_ and GH", "ＡＫＩＡ", "wifi:wi-fi", "mot de passe", "a_b.c",
       "style_guide.tests.adyen.double", "用户对花生过敏", "Use pnpm.\r\n", "otpauth://x"]

PIECES = [*sorted({t for r in secrets._RULES for t in (*r.triggers, *r.cased)}),
          " ", "\r\n", "=", "x", "Z", "9", "-", "_", ".", "密", "码"]


def _asked_one_by_one(text: str) -> list[str]:
    folded = text.casefold()
    return [r.kind for r in secrets._RULES if r.may_match(text, folded)]


def _asked_from_literals(text: str) -> list[str]:
    folded = text.casefold()
    return [r.kind for r in secrets._rules_for(text, folded) if r.may_match(text, folded)]


def _held(literals: secrets._Literals, text: str) -> set[str]:
    every = set()
    stack = [literals.tree]
    while stack:
        node = stack.pop()
        for key, child in node.items():
            if key == "":
                every.add(child)
            else:
                stack.append(child)
    return {t for t in every if t in text}


@pytest.mark.parametrize("text", ODD)
def test_a_short_texts_rules_are_those_each_rule_lets_through(text: str) -> None:
    assert _asked_from_literals(text) == _asked_one_by_one(text)
    assert secrets._TRIGGERS.found(text.casefold()) == _held(secrets._TRIGGERS, text.casefold())
    assert secrets._CASED.found(text) == _held(secrets._CASED, text)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES + ODD), max_size=10))
def test_generated_text_asks_the_same_rules(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert _asked_from_literals(text) == _asked_one_by_one(text)
    assert secrets._TRIGGERS.found(text.casefold()) == _held(secrets._TRIGGERS, text.casefold())
    assert secrets._CASED.found(text) == _held(secrets._CASED, text)


def test_no_literal_asks_only_the_rules_that_wait_for_none() -> None:
    assert secrets._rules_for("zzz", "zzz") == secrets._UNTRIGGERED
