"""The user ending a thing the older memory names, told by its name, through the product's
real model: the older no longer holds.

"Works as a barista at Blue Bottle" / "Quit Blue Bottle; now a junior developer at
Shopify", "Expense reports go through Expensify" / "We stopped using Expensify", "在华为做
测试工程师" / "离开华为了" were read as unrelated (cosines 0.3–0.5, few shared words)
(``bench/write_pairs/family57.jsonl`` holds the family, written before the rule changed).
The look-alikes stay apart: the thing itself ending something ("Stripe closed its Dublin
office", "钉钉取消了免费版"), someone else ending it, and an older memory of several things,
which is listed.
"""

from __future__ import annotations

import pytest
from judged_pairs import judged_as

from magma.embedder import UniversalSentenceEncoder


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    ("I work at Stripe.", "Left Stripe last month, joining Figma in June.", None,
     "contradiction"),
    ("I work at Stripe.", "Left Stripe last month, joining Figma in June.", "work.employer",
     "contradiction"),
    ("Expense reports go through Concur.", "We stopped using Concur; expenses are in Brex now.",
     None, "contradiction"),
    ("我在腾讯上班。", "从腾讯离职了，下个月去字节。", None, "contradiction"),
    ("我们用钉钉沟通。", "钉钉我们不再用了，全部换成飞书。", None, "contradiction"),
    # the thing itself ends something, someone else ends it: the user's fact holds
    ("I work at Stripe.", "Stripe closed its Dublin office.", None, "kept apart"),
    ("Expense reports go through Concur.", "Concur stopped supporting CSV export.", None,
     "kept apart"),
    ("I drive a Honda Civic.", "My brother sold his Civic.", None, "kept apart"),
    ("我在腾讯上班。", "我同事从腾讯离职了。", None, "kept apart"),
    ("我们用钉钉沟通。", "钉钉取消了免费版的视频会议。", None, "kept apart"),
    # the older names more than the thing ended: listed, never superseded
    ("We use Notion for the wiki and Linear for tickets.", "We stopped using Notion.", None,
     "possible_contradiction"),
    ("我们用钉钉沟通，用 Jira 管任务。", "钉钉我们不再用了。", None, "possible_contradiction"),
])
def test_the_user_ends_what_the_older_names(real_embedder: UniversalSentenceEncoder, old: str,
                                            new: str, subject: str | None,
                                            verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)
