"""Light sleep's cut of a daily note into snippets (pure; issue 21, "Light sleep")."""

from __future__ import annotations

from datetime import date

from consistency.snippet_cut import cut_snippets
from magma.snippets import concept_tags, match_score

DAY = date(2026, 6, 15)
NOTE = """---
tags: [daily]
---
# 2026-06-15

## PR review
- 14:03 Tests must use a real database: a mocked database hid a migration failure.
- 15:10 Lunch with Bob.
- plain item one
- plain item two

```
- not a snippet
```
Paragraph about memory-core and recall.count.
"""


def test_a_note_is_cut_by_heading_kind_and_diary_line() -> None:
    found = cut_snippets("memory/2026-06-15.md", NOTE, DAY)
    assert [(s.evidence, s.kind, s.text) for s in found] == [
        ("memory/2026-06-15.md:7", "rule", "PR review: Tests must use a real database: a "
         "mocked database hid a migration failure."),
        ("memory/2026-06-15.md:8", None, "PR review: Lunch with Bob."),
        ("memory/2026-06-15.md:9-10", None, "PR review: plain item one plain item two"),
        ("memory/2026-06-15.md:15", None,
         "PR review: Paragraph about memory-core and recall.count."),
    ]
    assert found[0].tags[:2] == ("testing", "database") and found[0].start_score == 0.62
    assert "memory-core" in found[3].tags and "recall.count" in found[3].tags


def test_keys_stay_when_lines_are_added_above_and_groups_end_at_four_lines() -> None:
    first = cut_snippets("Daily/d.md", NOTE, DAY)
    moved = cut_snippets("Daily/d.md", NOTE.replace("## PR review\n", "## PR review\n- new\n\n"),
                         DAY)
    assert {s.key for s in first} <= {s.key for s in moved}
    long = "## L\n" + "".join(f"- item {i}\n" for i in range(9))
    assert [s.lines for s in cut_snippets("Daily/l.md", long, DAY)] == [(2, 5), (6, 9), (10, 10)]
    wide = "## W\n" + "".join(f"- {'x' * 100} {i}\n" for i in range(3))
    assert len(cut_snippets("Daily/w.md", wide, DAY)) == 2  # 280 characters at most


def test_chinese_lines_get_concepts_and_a_kind() -> None:
    found = cut_snippets("memory/2026-06-15.md", "## 部署\n- 09:00 以后发布前务必先跑测试。\n", DAY)
    assert found[0].kind == "rule" and {"testing", "deploy"} <= set(found[0].tags)
    assert len(concept_tags("x " * 3 + " ".join(f"word{i}xx" for i in range(20)))) == 8
    assert match_score("发布 测试", found[0]) == 1.0 and match_score("", found[0]) == 0.0


def test_a_line_with_no_words_of_its_own_is_no_snippet() -> None:
    """A daily note's template leaves embeds and placeholders ("![[Daily.base]]", "- [ ] ")
    in every note: they say nothing, so they are never staged."""
    text = ("## Notes\n![[Daily.base]]\n\n## Tasks\n- [ ] \n- {{date}}\n\n"
            "## Log\n- 17:10 Tests must use a real database\n")
    bodies = [s.body for s in cut_snippets("Daily/2026-12-04.md", text, date(2026, 12, 4))]
    assert bodies == ["Tests must use a real database"]
