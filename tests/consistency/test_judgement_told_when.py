"""A change told with when it happened, the state a change leads to said as it stands, and a
change of a fact a merge told twice, through the product's real model and a real store.

Three families a user met (``bench/write_pairs/family56.jsonl`` holds them as pairs):
"I moved to Lisbon last month" after "I live in Berlin" was read as another fact (the time
told beside the change weighs on the embedding and the words, not on what holds); "I live in
Lisbon now" after "I moved to Lisbon" was listed as a possible change (it is the state the
move led to); and after "I live in Berlin." and its duplicate "I'm based in Berlin." were
merged into one memory, "I moved to Lisbon." was only listed (the merged memory read whole
counts its words twice, so the changed value read as half a change). Each family is a table
in English and Chinese, with and without a subject, with the look-alikes that must stay
apart: another person, a visit, a plan, another activity, another value.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from judged_pairs import judged_as, remembered, remembered_pair

from ccb.parse import parse_note
from magma.embedder import UniversalSentenceEncoder


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # a move or a new job told with when it happened: the state it replaces changed
    ("I live in Berlin", "I moved to Lisbon last month", None, "contradiction"),
    ("I live in Berlin", "I moved to Lisbon last month", "home.city", "contradiction"),
    ("I live in Berlin.", "Last week I relocated to Lisbon.", None, "contradiction"),
    ("I live in Shanghai.", "I moved to Shenzhen two weeks ago.", None, "contradiction"),
    ("I work at Google.", "I started a new job at Stripe two weeks ago.", None,
     "contradiction"),
    ("我住在上海", "我上个月搬到了深圳", None, "contradiction"),
    ("我住在柏林", "上周我搬去里斯本了", None, "contradiction"),
    ("用户住在杭州", "用户去年搬到了成都", "home.city", "contradiction"),
    ("I live in Berlin", "我上个月搬到了里斯本", None, "listed or changed"),
    # a visit, someone else's move, a plan, a trip: the home still holds
    ("I live in Berlin", "I visited Lisbon last month", None, "kept apart"),
    ("I live in Berlin", "My sister moved to Lisbon last month", None, "kept apart"),
    ("I live in Berlin", "I'm planning to move to Lisbon next month", None, "kept apart"),
    ("I work at Google.", "My wife started a new job at Stripe two weeks ago.", None,
     "kept apart"),
    ("我住在上海", "我妹妹上个月搬到了深圳", None, "kept apart"),
    ("我住在上海", "我打算下个月搬到深圳", None, "kept apart"),
    ("我住在上海", "我上周去深圳出差了", None, "kept apart"),
])
def test_a_change_told_with_when_it_happened(real_embedder: UniversalSentenceEncoder,
                                             old: str, new: str, subject: str | None,
                                             verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    # the state a change told leads to, said as it stands: one fact
    ("I moved to Lisbon", "I live in Lisbon now", None, "duplicate"),
    ("I moved to Lisbon", "I live in Lisbon now", "home.city", "duplicate"),
    ("I moved to Lisbon last month", "I live in Lisbon now", None, "duplicate"),
    ("I switched to Neovim.", "I use Neovim now.", None, "duplicate"),
    ("I live in Berlin.", "I live in Berlin now.", None, "duplicate"),
    ("我搬到了深圳", "我现在住在深圳", None, "duplicate"),
    ("我搬到了里斯本", "我现在住在里斯本", None, "duplicate"),
    ("我换成了安卓手机", "我现在用安卓手机", None, "duplicate"),
    ("我上个月搬到了杭州", "我现在住在杭州", "home.city", "duplicate"),
    # another place, a denial, another person, another activity: not the same fact
    ("I moved to Lisbon", "I live in Porto now", None, "contradiction"),
    ("I moved to Lisbon", "I no longer live in Lisbon", None, "contradiction"),
    ("I moved to Lisbon", "My sister lives in Lisbon now", None, "kept apart"),
    ("I moved to Lisbon", "I work in Lisbon now", None, "kept apart"),
    ("我搬到了深圳", "我现在住在广州", None, "contradiction"),
    ("我搬到了深圳", "我妹妹现在住在深圳", None, "kept apart"),
    ("我搬到了深圳", "我现在在深圳上班", None, "kept apart"),
    # only "now" told and the same value, beside another verb: never superseded on it
    ("I'm based in Berlin.", "I live in Berlin now.", None, "kept apart"),
])
def test_the_state_a_change_leads_to(real_embedder: UniversalSentenceEncoder, old: str,
                                     new: str, subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)


@pytest.mark.parametrize(("old", "new", "verdict"), [
    # a memory that says one fact twice (a duplicate merged into it), then a change
    ("I live in Berlin.\n\nI'm based in Berlin.", "I moved to Lisbon.", "contradiction"),
    ("I work at Google.\n\nI'm employed at Google.", "I now work at Stripe.",
     "contradiction"),
    ("我住在上海。\n\n我家在上海。", "我搬到深圳了。", "contradiction"),
    ("I live in Berlin.\n\n我住在柏林。", "I moved to Lisbon.", "contradiction"),
    # someone else's move; the fact said again; two facts of which one changed
    ("I live in Berlin.\n\nI'm based in Berlin.", "My sister moved to Lisbon.", "kept apart"),
    ("I live in Berlin.\n\nI'm based in Berlin.", "I live in Berlin now.", "duplicate"),
    ("I live in Berlin.\n\nI work in Munich.", "I moved to Lisbon.", "kept apart"),
    ("我住在上海。\n\n我在杭州上班。", "我搬到深圳了。", "kept apart"),
])
def test_a_fact_told_twice_then_changed(real_embedder: UniversalSentenceEncoder, old: str,
                                        new: str, verdict: str) -> None:
    judged_as(real_embedder, old, new, None, verdict)


@pytest.mark.parametrize(("first", "again", "change"), [
    ("I live in Berlin.", "I'm based in Berlin.", "I moved to Lisbon."),
    ("我住在上海。", "我家在上海。", "我搬到深圳了。"),
    ("I work at Google.", "I'm employed at Google.", "I now work at Stripe."),
])
def test_remember_supersedes_a_merged_fact(real_embedder: UniversalSentenceEncoder,
                                           tmp_path: Path, first: str, again: str,
                                           change: str) -> None:
    folder, results = remembered(real_embedder, tmp_path, [first, again, change])
    assert [r.action for r in results] == ["created", "updated", "superseded"]
    merged = parse_note(results[0].path, (folder.parent / results[0].path).read_bytes())
    assert merged.memory is not None and merged.memory.valid_to is not None
    assert again in merged.body  # the merge kept both tellings; the change closed both


def test_remember_restates_a_move_as_it_stands(real_embedder: UniversalSentenceEncoder,
                                               tmp_path: Path) -> None:
    _folder, first, second = remembered_pair(real_embedder, tmp_path, "I moved to Lisbon.",
                                             "I live in Lisbon now.")
    assert (first.action, second.action) == ("created", "updated")
