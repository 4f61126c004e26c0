"""Merges and supersessions of two facts the development pair sets showed, by family, through
the product's real model.

Read by cause from the wrong merges and supersessions of every ``bench/write_pairs`` set but
the held-out ``blind16`` and ``blind17``: a person whose person one memory tells and whom the
other names as who they are ("张伟是我的直属领导" / "张伟的直属领导是王总"); one version of a
thing denied beside the thing used ("Uses Python" / "不用 Python 2"); a thing free of what the
other denies ("戒酒了" / "喝无酒精啤酒"); where one lives changed, told beside where one comes
from ("Lives in Hangzhou." / "住在上海，老家杭州"). Each family is a table in English and
Chinese, with and without a subject, with the look-alikes that keep their verdict
(``bench/write_pairs/family56.jsonl`` holds them as pairs).
"""

from __future__ import annotations

import pytest
from judged_pairs import judged_as

from magma.embedder import UniversalSentenceEncoder


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    ("张伟是我的直属领导", "张伟的直属领导是王总", None, "kept apart"),
    ("My manager is Alice.", "Alice's manager is Bob.", None, "kept apart"),
    ("Alice is my manager.", "Alice's manager is Bob.", "work.manager", "kept apart"),
    ("我的导师是李明", "李明的导师是陈教授", None, "kept apart"),
    ("My mentor is Li Ming.", "Li Ming's mentor is Professor Chen.", None, "kept apart"),
    # the same person said the same way, whose thing on both sides, a brand before 的
    ("My manager is Alice.", "Alice is my manager.", None, "duplicate"),
    ("Alice's manager is Bob.", "Bob is Alice's manager.", None, "duplicate"),
    ("我的导师是李明", "李明是我的导师", None, "duplicate"),
    ("Alice's birthday is May 3.", "Alice's birthday is on May 3rd.", None, "duplicate"),
    ("家里的扫地机器人是石头 S8", "我们家用的扫地机是石头的 S8 型号", None, "duplicate"),
])
def test_whose_person_on_one_side(real_embedder: UniversalSentenceEncoder, old: str, new: str,
                                  subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    ("Uses Python.", "不用 Python 2", None, "kept apart"),
    ("Uses Python.", "Don't use Python 2.", None, "kept apart"),
    ("用 Java", "不用 Java 8", None, "kept apart"),
    ("We use Node.", "Never use Node 14.", "runtime.node", "kept apart"),
    # the thing itself denied, or the same version on both sides: a change
    ("Uses Python.", "Doesn't use Python anymore.", None, "contradiction"),
    ("Uses Python 3.", "Doesn't use Python 3.", None, "contradiction"),
    ("用 Java", "不用 Java 了", None, "contradiction"),
])
def test_one_version_denied(real_embedder: UniversalSentenceEncoder, old: str, new: str,
                            subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    ("戒酒了", "喝无酒精啤酒", None, "kept apart"),
    ("Quit drinking.", "Drinks alcohol-free beer.", None, "kept apart"),
    ("Doesn't drink coffee.", "Drinks decaf in the afternoon.", None, "kept apart"),
    ("不喝咖啡", "下午喝低因咖啡", None, "kept apart"),
    ("不吃糖", "喝无糖可乐", "diet.sugar", "kept apart"),
    # the thing itself: a change
    ("Quit drinking.", "Drinks beer on weekends.", None, "contradiction"),
    ("戒酒了", "周末喝啤酒", None, "contradiction"),
    ("Doesn't drink coffee.", "Drinks coffee every morning.", None, "contradiction"),
])
def test_a_thing_free_of_it(real_embedder: UniversalSentenceEncoder, old: str, new: str,
                            subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    ("Lives in Hangzhou.", "住在上海，老家杭州", None, "contradiction"),
    ("Lives in Austin.", "Lives in Denver; grew up in Austin.", "user.home", "contradiction"),
    ("我住在杭州", "我住在上海，老家是杭州的", None, "contradiction"),
    # where one comes from against where one lives: both hold
    ("Grew up in Austin.", "Lives in Denver.", None, "kept apart"),
    ("老家在成都", "住在深圳", None, "kept apart"),
])
def test_home_beside_origin(real_embedder: UniversalSentenceEncoder, old: str, new: str,
                            subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)
