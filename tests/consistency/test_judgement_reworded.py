"""A fact told again with its words moved around, through the product's real model.

Two families of duplicates that were kept as two facts (``bench/write_pairs/family57.jsonl``
holds the second as pairs, written before the rule changed): a relation that holds several
values (speaks, eats, knows, plays) told again where a word was replaced *and* the words
beside it moved ("Fluent in Python; doesn't know Rust" / "Knows Python well, Rust not at
all") was read as one value in place of another; and "also" said of a thing the memory
names itself ("Owns a cat and a dog" / "Has a dog and also a cat at home") was read as one
more thing beside the other memory. Each table is in English and Chinese, with the
look-alikes that must stay apart: one thing in place of another in the same words, and
"also" said of a thing the other memory does not name.
"""

from __future__ import annotations

import pytest
from judged_pairs import judged_as

from magma.embedder import UniversalSentenceEncoder


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # the same values, the words around them moved: one fact
    ("Fluent in Python; doesn't know Rust.", "Knows Python well, Rust not at all.", None,
     "duplicate"),
    ("不吃牛肉和羊肉。", "牛羊肉都不吃。", None, "duplicate"),
    ("会弹吉他，业余时间经常练。", "业余爱好是弹吉他，经常练习。", None, "duplicate"),
    # one thing in place of another, in the same words: two facts of one relation
    ("Has a cat.", "Has a dog.", None, "kept apart"),
    ("Allergic to penicillin.", "Allergic to latex.", None, "kept apart"),
    ("我会说粤语。", "我会说上海话。", None, "kept apart"),
    ("Plays tennis on weekends.", "Goes bouldering on weekends.", None, "kept apart"),
    ("Maya owns the billing service.", "Maya owns the notifications service.", None,
     "kept apart"),
])
def test_a_relation_of_several_values_reworded(real_embedder: UniversalSentenceEncoder,
                                               old: str, new: str, subject: str | None,
                                               verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # "also" said of a thing the memory names itself, both named by the other: one fact
    ("Owns a cat and a dog.", "Has a dog and also a cat at home.", None, "duplicate"),
    ("会说粤语，也会一点日语。", "粤语很流利，日语会一点。", None, "duplicate"),
    ("家里养了一只猫和一只狗。", "家里有狗也有猫，各一只。", None, "duplicate"),
    # "also" of a thing the other memory does not name: one more fact beside it
    ("Owns a cat.", "Also has a dog at home.", None, "kept apart"),
    ("I'm allergic to peanuts.", "I'm also allergic to shellfish.", None, "kept apart"),
    ("Never deploy on Fridays.", "Never deploy on Mondays either.", None, "kept apart"),
    ("我周二有空。", "我周四也有空。", None, "kept apart"),
    ("用户中心的负责人是老周。", "消息中心的负责人也是老周。", None, "kept apart"),
    ("The iOS app's crash reports go to Sentry.", "安卓 App 的崩溃报告也接到了 Sentry。", None,
     "kept apart"),
    ("家里养了一只猫。", "家里也有一只狗。", None, "kept apart"),
])
def test_also_said_within_one_memory(real_embedder: UniversalSentenceEncoder, old: str,
                                     new: str, subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)
