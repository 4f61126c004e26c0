"""What the CLI prints of a note or a file name: never acted on by the terminal."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from daemon.terminal_text import counted, shown


@pytest.mark.parametrize(("text", "seen"), [
    ("clear \x1b[2J\x1b[31mred", "clear \\x1b[2J\\x1b[31mred"),
    ("invoice\u202efdp.exe", "invoice\\u202efdp.exe"),
    ("\u2066isolated\u2069 \u200fmark", "\\u2066isolated\\u2069 \\u200fmark"),
    ("one-byte CSI \x9b2J", "one-byte CSI \\x9b2J"),
    ("bell\x07 nul\x00 del\x7f", "bell\\x07 nul\\x00 del\\x7f"),
    ("[red]not markup[/red]", "[red]not markup[/red]"),
    ("中文与 emoji 🙂 stay", "中文与 emoji 🙂 stay"),
])
def test_a_terminal_prints_the_characters_and_acts_on_none(text: str, seen: str) -> None:
    out = io.StringIO()
    Console(file=out, force_terminal=True, color_system=None, width=200).print(
        shown(text), highlight=False)
    assert out.getvalue() == seen + "\n"


def test_a_name_is_one_line_and_text_keeps_its_lines() -> None:
    assert shown("two\nlines\t.md", one_line=True) == "two\\x0alines\\x09.md"
    assert shown("two\nlines\t.md") == "two\nlines\t.md"


@pytest.mark.parametrize(("number", "noun", "plural", "said"), [
    (1, "file", None, "1 file"), (0, "file", None, "0 files"), (2, "file", None, "2 files"),
    (1, "memory", None, "1 memory"), (3, "memory", None, "3 memories"),
    (2, "memory history", None, "2 memory histories"), (2, "day", None, "2 days"),
    (2, "key", None, "2 keys"), (2, "search", None, "2 searches"), (2, "box", None, "2 boxes"),
    (2, "sync-conflict copy", None, "2 sync-conflict copies"),
    (1, "problem file", None, "1 problem file"), (2, "person", "people", "2 people"),
    (1_200, "chunk", None, "1,200 chunks"), (-1, "day", None, "-1 day"),
])
def test_a_count_agrees_with_its_noun(number: int, noun: str, plural: str | None,
                                      said: str) -> None:
    assert counted(number, noun, plural) == said
