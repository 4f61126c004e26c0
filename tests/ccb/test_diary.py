"""A diary line is an insertion: every byte of the note before and after it stays the note's."""

from __future__ import annotations

from datetime import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccb.diary import (
    DiaryEntry,
    append_entry,
    one_line,
    parse_entry,
    render_entry,
)

LINE = "- 10:00 hello"


def _only_inserted(before: bytes, after: bytes) -> bytes:
    """The bytes ``after`` adds to ``before`` at a single place (fails when it does more)."""
    prefix = 0
    while prefix < len(before) and before[prefix] == after[prefix]:
        prefix += 1
    added = len(after) - len(before)
    assert added > 0
    assert after[:prefix] == before[:prefix]
    assert after[prefix + added:] == before[prefix:], "bytes after the insertion changed"
    return after[prefix:prefix + added]


def test_the_line_ends_the_named_section() -> None:
    note = b"---\ntags: [daily]\n---\n# Wed\n\n- a\n\n## Notes\n- x\n\n## Other\ntext\n"
    done = append_entry(note, "notes", LINE)
    assert done.data == (b"---\ntags: [daily]\n---\n# Wed\n\n- a\n\n## Notes\n- x\n"
                         b"- 10:00 hello\n\n## Other\ntext\n")
    assert done.data.split(b"\n")[done.line - 1] == LINE.encode()


def test_a_missing_section_is_made_at_the_end() -> None:
    done = append_entry(b"# Wed\n\n- a\n", "Decisions", LINE)
    assert done.data == b"# Wed\n\n- a\n\n## Decisions\n- 10:00 hello\n"
    assert done.line == 6
    assert append_entry(b"", "Notes", LINE).data == b"## Notes\n- 10:00 hello\n"
    assert append_entry(b"no end", "Notes", LINE).data == b"no end\n\n## Notes\n- 10:00 hello\n"


def test_headings_in_code_and_other_levels_are_not_the_section() -> None:
    note = b"```\n## Notes\n```\n# Notes\n### Notes\n"
    done = append_entry(note, "Notes", LINE)
    assert done.data == note + b"\n## Notes\n- 10:00 hello\n"


def test_an_empty_section_and_a_section_after_a_paragraph() -> None:
    assert append_entry(b"## Notes\n\n\n## B\n", "Notes", LINE).data == \
        b"## Notes\n- 10:00 hello\n\n\n## B\n"
    # a list right after a paragraph would join it: a blank line first
    assert append_entry(b"## Notes\nSome prose.\n## B\n", "Notes", LINE).data == \
        b"## Notes\nSome prose.\n\n- 10:00 hello\n## B\n"


def test_crlf_bom_and_bytes_that_are_not_utf8_are_kept() -> None:
    note = b"\xef\xbb\xbf## Notes\r\n- caf\xe9\r\n\r\n## B\r\nx"
    done = append_entry(note, "Notes", LINE)
    assert done.data == b"\xef\xbb\xbf## Notes\r\n- caf\xe9\r\n- 10:00 hello\r\n\r\n## B\r\nx"
    assert done.line == 3
    assert append_entry(b"## Notes\r\n- a", "Notes", LINE).data == \
        b"## Notes\r\n- a\r\n- 10:00 hello\r\n"  # our line ends, so one added by hand does


def test_kepanos_daily_template_takes_a_line_under_its_notes(corpora_dir: Path) -> None:
    template = (corpora_dir / "kepano-obsidian" / "Templates" / "Daily Note Template.md") \
        .read_bytes()
    done = append_entry(template, "Notes", LINE)
    assert _only_inserted(template, done.data) == b"\n\n- 10:00 hello\n"
    assert done.data.endswith(b"![[Daily.base]]\n\n- 10:00 hello\n")


_NOTES = st.lists(st.sampled_from(["## Notes", "## notes", "# Title", "- item", "text", "",
                                   "```", "---", "## B", "  ## Notes", "中文", "x\r",
                                   "### Notes"]), max_size=14)


@settings(max_examples=300, deadline=None)
@given(lines=_NOTES, end=st.sampled_from(["", "\n", "\r\n"]),
       heading=st.sampled_from(["Notes", "B", "New"]))
def test_only_an_insertion_whatever_the_note(lines: list[str], end: str, heading: str) -> None:
    note = ("\n".join(lines) + end).encode()
    done = append_entry(note, heading, LINE)
    added = _only_inserted(note, done.data)
    assert LINE.encode() in added
    assert done.data.replace(b"\r\n", b"\n").split(b"\n")[done.line - 1] == LINE.encode()


def test_entries_round_trip() -> None:
    entry = DiaryEntry("Tests must use a real database.", time(16, 40), "session 3f2a1c9b")
    line = render_entry(entry)
    assert line == "- 16:40 Tests must use a real database. (source: session 3f2a1c9b)"
    assert parse_entry(line) == entry
    assert parse_entry("- 我更喜欢用 pnpm。") == DiaryEntry("我更喜欢用 pnpm。")
    assert parse_entry("* 25:99 odd") == DiaryEntry("25:99 odd")
    assert parse_entry("not a list item") is None
    assert render_entry(DiaryEntry("two\nlines\there", time(9, 5))) == "- 09:05 two lines here"


@pytest.mark.parametrize(("text", "expected"), [
    ("  a \n b\u3000c\x07 ", "a b c"), ("", ""), ("中文\n句子", "中文 句子"),
])
def test_one_line(text: str, expected: str) -> None:
    assert one_line(text) == expected
