"""A new value told with the old one denied, through the product's real model and a real
store.

"I write my daily notes in the evening, after dinner" then "I write my daily notes first
thing in the morning, never in the evening": the word the two share is the old value, which
the newer denies ("X, not Y", "X, never Y", "X instead of Y", "no longer Y", "不再 Y",
"而不是 Y", "不是 Y 而是 X", "改成 X，不再 Y"). Against an older that states Y it is the
change (the newer supersedes); against an older that already says "X, not Y" it is the same
fact. The look-alikes: the same fact said from the other side ("Evenings are when I write my
notes"), and a changed value of one thing counted in Chinese ("服务器有 32 GB 内存" / "64 GB
内存"), which must supersede as its English twin does.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from judged_pairs import judged_as, remembered_pair

from consistency.claims import read_claim
from magma.embedder import UniversalSentenceEncoder


@pytest.mark.parametrize(("text", "denied", "stated"), [
    ("I write my daily notes first thing in the morning, never in the evening",
     "evening", "morning"),
    ("I go running in the morning, not in the evening", "evening", "morning"),
    ("I go running in the morning rather than in the evening", "evening", "morning"),
    ("I work from home on Fridays, never from the office", "office", "home"),
])
def test_a_negation_denies_the_adjunct_right_after_it(text: str, denied: str,
                                                      stated: str) -> None:
    """"never *in the evening*": the preposition right after the negation opens what it
    denies; one further on does not ("never mock the DB *in tests*")."""
    claim = read_claim(text)
    assert denied in claim.negated and stated in claim.asserted


def test_an_adjunct_after_the_denied_word_is_not_denied() -> None:
    claim = read_claim("Never mock the database in tests.")
    assert "test" in claim.asserted and "database" in claim.negated


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # the newer states a new value and denies the old one: the change
    ("I write my daily notes in the evening, after dinner",
     "I write my daily notes first thing in the morning, never in the evening",
     "contradiction"),
    ("I go running in the evening", "I go running in the morning, never in the evening",
     "contradiction"),
    ("I go running in the evening", "I go running in the morning, not in the evening",
     "contradiction"),
    ("I go running in the evening", "I go running in the morning rather than in the evening",
     "contradiction"),
    ("I work from the office on Fridays", "I work from home on Fridays, never from the office",
     "contradiction"),
    ("Deploys happen on Tuesdays", "Deploys happen on Thursdays, never on Tuesdays",
     "contradiction"),
    ("The standup is at 9:30", "The standup is at 10:00, never at 9:30", "contradiction"),
    ("我晚上写日记", "我早上写日记，从不在晚上写", "contradiction"),
    ("我晚上写日记", "我早上写日记，不在晚上写", "contradiction"),
    ("我晚上跑步", "改成早上跑步，不再晚上跑", "contradiction"),
    ("我晚上跑步", "我早上跑步，而不是晚上", "contradiction"),
    ("我晚上跑步", "不是晚上跑步，而是早上跑步", "contradiction"),
    ("我早上喝咖啡", "早上改成喝茶，不再喝咖啡", "contradiction"),
    ("每周二发版", "改成每周四发版，不再周二发", "contradiction"),
    # against an older that already says "X, not Y": the other one's value, the change
    ("I write notes in the evening, not in the morning",
     "I write notes in the morning, never in the evening", "contradiction"),
    ("我晚上写日记，不在早上写", "我早上写日记", "contradiction"),
    ("Use pnpm, not npm, for this repo.", "Use npm, not pnpm, for this repo.",
     "contradiction"),
    # ... and its own value said again, with or without the denial: the same fact
    ("I write notes in the evening, not in the morning",
     "Evenings are when I write my notes", "duplicate"),
    ("我晚上写日记，不在早上写", "晚上是我写日记的时间", "duplicate"),
    ("我晚上写日记，不在早上写", "我都是晚上写日记", "duplicate"),
    ("I go running in the morning, not in the evening",
     "I go running in the morning, never in the evening", "duplicate"),
    ("我早上跑步，不在晚上跑", "我早上跑步，从不晚上跑", "duplicate"),
    ("Deploys happen on Thursdays, never on Tuesdays", "We deploy on Thursdays", "duplicate"),
    ("Use pnpm, not npm, for this repo.", "Use pnpm for this repo; never npm.", "duplicate"),
    ("Hates long phone calls; prefers text.",
     "Would rather text than be on the phone for a long time.", "duplicate"),
])
def test_a_new_value_with_the_old_one_denied(real_embedder, old: str, new: str,
                                             verdict: str) -> None:
    judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # one thing's amount changed, in Chinese as in English: the change
    ("服务器有 32 GB 内存", "服务器有 64 GB 内存", "contradiction"),
    ("服务器有 32 GB 内存。", "服务器有 64 GB 内存。", "contradiction"),
    ("The server has 32 GB of memory", "The server has 64 GB of memory", "contradiction"),
    ("The server has 32 GB of RAM.", "The server has 64 GB of RAM.", "contradiction"),
    ("服务器有 1 TB 硬盘", "服务器有 2 TB 硬盘", "contradiction"),
    # another thing of the server: never superseded
    ("服务器有 32 核。", "服务器有 32 GB 内存。", "kept apart"),
    ("服务器有 32 GB 内存", "服务器有 1 TB 硬盘", "kept apart"),
    ("The server has 32 GB of RAM.", "The server has a 1 TB disk.", "kept apart"),
])
def test_a_changed_amount_of_memory_is_the_change(real_embedder, old: str, new: str,
                                                  verdict: str) -> None:
    judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "superseded"), [
    ("I write my daily notes in the evening, after dinner",
     "I write my daily notes first thing in the morning, never in the evening", None, True),
    ("I write my daily notes in the evening, after dinner",
     "I write my daily notes first thing in the morning, never in the evening",
     "journaling.time", True),
    ("I go running in the evening", "I go running in the morning, never in the evening",
     None, True),
    ("我晚上跑步", "改成早上跑步，不再晚上跑", None, True),
    ("服务器有 32 GB 内存", "服务器有 64 GB 内存", None, True),
    ("I write notes in the evening, not in the morning", "Evenings are when I write my notes",
     None, False),
])
def test_remember_supersedes_a_value_the_newer_denies(
        real_embedder: UniversalSentenceEncoder, tmp_path: Path, old: str, new: str,
        subject: str | None, superseded: bool) -> None:
    """Through ``remember``, the real model and a real store: the change supersedes and
    both files stay; the same fact said again is merged into the older, never a memory
    stating two values of one slot."""
    memory, first, second = remembered_pair(real_embedder, tmp_path, old, new, subject)
    assert first.action == "created"
    files = [f for f in memory.glob("*.md") if f.name != "MEMORY.md"]
    if superseded:
        assert second.action == "superseded" and second.superseded == first.path, second
        assert len(files) == 2
    else:
        assert second.action in {"duplicate", "updated"} and second.path == first.path, second
        assert len(files) == 1
