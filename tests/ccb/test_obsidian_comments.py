"""Which links, embeds and tags of a note Obsidian counts, by where they are written: a table
of realistic notes (English and Chinese) parsed by :func:`ccb.parse.parse_note`.

Obsidian's metadata cache — what its backlinks, outgoing links, graph view and unresolved
links read — holds a link or a tag written inside an Obsidian comment, inline
(``%% … %%``) or as a block (``%%`` on its own lines), and none written inside an HTML
comment (``<!-- … -->``), a fenced code block or inline code. Source: the cached metadata
Obsidian gave for two notes, kept by Obsidian Tasks as test data
(obsidian-tasks-group/obsidian-tasks, ``tests/Obsidian/__test_data__/comments_markdown_style``
and ``comments_html_style``: "commented-out link: %% [[comments_html_style]] %% - is
recognised by Obsidian's cachedMetadata"; the ``<!-- -->`` one "is ignored"); and, for a
block comment, its ``#task`` inside ``%%`` lines, which the cache lists too. A heading inside
a block comment is no heading (the cache's section is a ``comment``).
"""

from __future__ import annotations

import pytest

from ccb.model import EMBED_KINDS
from ccb.parse import parse_note

#: (note text, expected link targets in order (``!`` marks an embed), expected tags)
CASES = {
    "inline comment": (
        "Met Ana about the kiln. %% follow up: [[Kiln schedule]] %% Next week.\n",
        ["Kiln schedule"], []),
    "block comment with a link, an embed and a tag": (
        "# Weekly review\n\n%%\nTo sort later: [[Reading list]], ![[cover.png]] #later\n"
        "\nStill inside the comment: [[Garden plan]]\n%%\n\nDone for the week.\n",
        ["Reading list", "!cover.png", "Garden plan"], ["later"]),
    "HTML comment": (
        "Notes from the call. <!-- old: [[Budget 2025]] #draft -->\nNew budget agreed.\n",
        [], []),
    "fenced code": (
        "How I link notes:\n\n```md\nSee [[Budget 2025]] and ![[chart.png]] #example\n```\n",
        [], []),
    "tilde fence inside a list": (
        "- setup:\n  ~~~\n  [[Not a link]]\n  ~~~\n- then [[Setup log]]\n",
        ["Setup log"], []),
    "inline code": (
        "Type `[[Budget 2025]]` to link; `#tag` makes a tag. Real one: [[Budget 2024]]\n",
        ["Budget 2024"], []),
    "a comment opener in inline code": (
        "The marker is `%%`, as in [[Obsidian comments]] — and `%%` again.\n",
        ["Obsidian comments"], []),
    "中文行内注释": (
        "今天读完了村上春树的书。%% 参见 [[读书清单]] 和 ![[封面.jpg]] %% 下周写读后感。\n",
        ["读书清单", "!封面.jpg"], []),
    "中文块注释与代码": (
        "# 周计划\n\n%%\n待整理:[[花园计划]] #稍后\n%%\n\n```\n[[不是链接]]\n```\n"
        "行内代码 `[[也不是]]`,真正的链接:[[周末计划]]\n",
        ["花园计划", "周末计划"], ["稍后"]),
    "中文 HTML 注释": (
        "会议纪要 <!-- 旧的:[[二〇二五预算]] #草稿 --> 新预算已通过。\n", [], []),
}


@pytest.mark.parametrize("name", list(CASES))
def test_links_and_tags_are_counted_where_obsidian_counts_them(name: str) -> None:
    text, links, tags = CASES[name]
    note = parse_note("Notes/note.md", text.encode("utf-8"))
    assert [("!" if link.kind in EMBED_KINDS else "") + link.target
            for link in note.links] == links
    assert list(note.tags) == tags


def test_a_heading_inside_a_block_comment_is_no_heading() -> None:
    note = parse_note("Notes/n.md", b"%%\n# Draft heading [[Kept link]]\n%%\n# Real\n")
    assert [h.text for h in note.headings] == ["Real"]
    assert [link.target for link in note.links] == ["Kept link"]
