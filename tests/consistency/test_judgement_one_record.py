"""One record of one day or period, its amount told again otherwise, through the product's
real model: the record changed, not two events of the day.

"2026年第一季度预算 50万" / "2026年第一季度预算 60万", "October: 3 releases" / "October: 4
releases" were kept as a series (two events that each hold for their day) because both name
the same day; a record has one amount, so the newer supersedes
(``bench/write_pairs/family57.jsonl`` holds the family, written before the rule changed).
The look-alikes stay a series or apart: two events of one day told by the number that
names which one ("PR #311" / "PR #318", 第 311 号), two periods, two times of one day, and
another thing done (跑 / 骑).
"""

from __future__ import annotations

import pytest
from judged_pairs import judged_as

from magma.embedder import UniversalSentenceEncoder


@pytest.mark.parametrize(("old", "new", "subject", "verdict"), [
    ("2026 Q2 marketing budget: 40k", "2026 Q2 marketing budget: 55k", None, "contradiction"),
    ("2026 Q2 marketing budget: 40k", "2026 Q2 marketing budget: 55k", "budget.marketing",
     "contradiction"),
    ("October: 3 releases", "October: 4 releases", None, "contradiction"),
    ("2026年3月云服务器账单 4800 元", "2026年3月云服务器账单 5200 元", None, "contradiction"),
    ("2023 年读了 24 本书", "2023 年读了 30 本书", None, "contradiction"),
    # two events of one day, two periods, two times, another thing done: both hold
    ("2026-04-02: merged PR #311 into main.", "2026-04-02: merged PR #318 into main.", None,
     "kept apart"),
    ("2026-03-05: Fixed bug #123 in the parser.", "2026-03-05: Fixed bug #456 in the parser.",
     None, "kept apart"),
    ("2026-04-02 修复了第 311 号缺陷", "2026-04-02 修复了第 318 号缺陷", None, "kept apart"),
    ("March 2026: 12 support tickets escalated.", "April 2026: 15 support tickets escalated.",
     None, "series"),
    ("2026-05-10 8am blood pressure: 120/80", "2026-05-10 8pm blood pressure: 131/85", None,
     "kept apart"),
    ("2024 年一共跑了 800 公里", "2024 年一共骑了 950 公里", None, "kept apart"),
    ("2023 年读了 24 本书", "2023 年写了 24 篇博客", None, "kept apart"),
])
def test_one_record_told_again(real_embedder: UniversalSentenceEncoder, old: str, new: str,
                               subject: str | None, verdict: str) -> None:
    judged_as(real_embedder, old, new, subject, verdict)
