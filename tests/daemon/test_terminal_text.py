"""What the CLI prints of a note or a file name: never acted on by the terminal."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from daemon.terminal_text import shown


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
