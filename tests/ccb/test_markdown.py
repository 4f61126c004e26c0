"""Link, tag, heading and alias extraction tables, plus property tests."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccb.markdown import (
    extract_aliases,
    extract_headings,
    extract_links,
    extract_property_links,
    extract_tags,
    frontmatter_tags,
    inline_tags,
    mask_code,
    mask_code_and_comments,
)
from ccb.model import Heading, Link

# --------------------------------------------------------------------------- links

W, E, M, ME = "wikilink", "embed", "markdown", "markdown-embed"

LINKS: list[tuple[str, list[tuple[str, str, str | None, str | None]]]] = [
    # body, [(target, kind, subpath, display)]
    ("[[Note]]", [("Note", W, None, None)]),
    ("[[Note|alias]]", [("Note", W, None, "alias")]),
    ("[[Note#Heading]]", [("Note", W, "Heading", None)]),
    ("[[Note#Heading|shown]]", [("Note", W, "Heading", "shown")]),
    ("[[Note#^block1]]", [("Note", W, "^block1", None)]),
    ("[[#Heading]]", [("", W, "Heading", None)]),
    ("[[#^abc]]", [("", W, "^abc", None)]),
    ("[[folder/Note.md]]", [("folder/Note.md", W, None, None)]),
    ("[[ Spaced  ]]", [("Spaced", W, None, None)]),
    ("[[Note#H1#H2]]", [("Note", W, "H1#H2", None)]),
    ("| [[Note\\|alias]] |", [("Note", W, None, "alias")]),
    ("![[image.png]]", [("image.png", E, None, None)]),
    ("![[image.png|100]]", [("image.png", E, None, "100")]),
    ("![[Note#Heading]]", [("Note", E, "Heading", None)]),
    ("[[关于睡眠的笔记]]", [("关于睡眠的笔记", W, None, None)]),
    ("[[]]", []),
    ("[[|x]]", []),
    ("[[a]] and [[b]]", [("a", W, None, None), ("b", W, None, None)]),
    ("[[a [[b]]", [("b", W, None, None)]),
    ("[[broken\nline]]", []),
    ("[text](path.md)", [("path.md", M, None, "text")]),
    ("[text](folder/My%20Note.md)", [("folder/My Note.md", M, None, "text")]),
    ("[t](<My Note.md>)", [("My Note.md", M, None, "t")]),
    ("[t](Note.md#Some%20Heading)", [("Note.md", M, "Some Heading", "t")]),
    ("[t](#Local)", [("", M, "Local", "t")]),
    ('[t](note.md "Title")', [("note.md", M, None, "t")]),
    ("![](img.png)", [("img.png", ME, None, None)]),
    ("![alt text](pics/a%20b.png)", [("pics/a b.png", ME, None, "alt text")]),
    ("[t](https://example.org/a.md)", []),
    ("[t](http://example.org)", []),
    ("[t](mailto:a@example.org)", []),
    ("[t](obsidian://open?vault=x)", []),
    ("[t](file:///etc/passwd)", []),
    ("[t](//cdn.example.org/x.png)", []),
    ("<https://example.org>", []),
    ("https://example.org/page#frag", []),
    ("[t]()", []),
    ("[t](a|b.md)", []),
    ("[t](a]]b.md)", []),
    ("[t](a%7Cb.md)", []),
    ("`[[InCode]]` and [[Out]]", [("Out", W, None, None)]),
    ("``[[a]] ` [[b]]`` [[c]]", [("c", W, None, None)]),
    ("<!-- [[Hidden]] --> [[Shown]]", [("Shown", W, None, None)]),
    # Obsidian's metadata cache lists links inside %% comments (tests/ccb/test_obsidian_comments)
    ("%%[[Commented]]%% [[Shown]]", [("Commented", W, None, None), ("Shown", W, None, None)]),
    ("%%\n[[Commented]]\n%%\n[[Shown]]",
     [("Commented", W, None, None), ("Shown", W, None, None)]),
    ("[[Shown]] %% unclosed [[Commented]]",
     [("Shown", W, None, None), ("Commented", W, None, None)]),
    ("```\n[[InFence]]\n```\n[[After]]", [("After", W, None, None)]),
    ("~~~md\n[[InFence]]\n~~~\n[[After]]", [("After", W, None, None)]),
    ("````\n```\n[[StillFence]]\n````\n[[After]]", [("After", W, None, None)]),
    ("```\n[[Unclosed]]\n", []),
    ("   ```\n[[Indented fence]]\n   ```\n", []),
    ("`unclosed [[Link]]", [("Link", W, None, None)]),
]


@pytest.mark.parametrize(("body", "expected"), LINKS)
def test_extract_links(body: str, expected: list[tuple[str, str, str | None, str | None]]) -> None:
    found = [(link.target, link.kind, link.subpath, link.display) for link in extract_links(body)]
    assert found == expected


def test_link_lines_are_body_lines() -> None:
    body = "first [[A]]\n\n```\n[[X]]\n```\nlast ![[B]] [c](C.md)\n"
    links = extract_links(body)
    assert [(link.target, link.line) for link in links] == [("A", 0), ("B", 5), ("C.md", 5)]


def test_block_ref_property() -> None:
    (link,) = extract_links("[[Note#^abc]]")
    assert link.is_block_ref


def test_property_links() -> None:
    props = {
        "related": "[[X]]",
        "up": ["[[Y|why]]", "plain", "[[Z#Part]]"],
        "nested": {"deep": ["[[W]]"]},
        "count": 3,
        "url": "https://example.org",
    }
    assert extract_property_links(props) == (
        Link("X", "wikilink", line=-1),
        Link("Y", "wikilink", display="why", line=-1),
        Link("Z", "wikilink", subpath="Part", line=-1),
        Link("W", "wikilink", line=-1),
    )


def test_masking_keeps_length_and_newlines() -> None:
    body = "a `code` b\n```\nx\n```\n<!-- c\nd --> %%e%% f"
    masked = mask_code_and_comments(body)
    assert len(masked) == len(body)
    assert [i for i, c in enumerate(masked) if c == "\n"] == [
        i for i, c in enumerate(body) if c == "\n"
    ]
    assert masked.split() == ["a", "b", "f"]


@settings(max_examples=500)
@given(st.text(alphabet=st.sampled_from(list("[]|#^!()<>%7C`~ \naZ.é中-")), max_size=200))
def test_link_targets_never_contain_brackets_or_pipes(body: str) -> None:
    for link in extract_links(body):
        assert "]]" not in link.target
        assert "|" not in link.target
        assert "\n" not in link.target
        assert link.line >= 0
        assert link.kind in ("wikilink", "embed", "markdown", "markdown-embed")


@given(st.text(max_size=300))
def test_extraction_never_raises(body: str) -> None:
    extract_links(body)
    inline_tags(body)
    extract_headings(body)
    assert len(mask_code_and_comments(body)) == len(body)


# --------------------------------------------------------------------------- tags

TAGS: list[tuple[str, list[str]]] = [
    ("#tag", ["tag"]),
    ("a #tag b", ["tag"]),
    ("#tag/nested", ["tag/nested"]),
    ("#tag-with-dash and #under_score", ["tag-with-dash", "under_score"]),
    ("#日本語 #睡眠/记录", ["日本語", "睡眠/记录"]),
    ("#Ünïcödé", ["Ünïcödé"]),
    ("#123", []),
    ("#2024/11", []),
    ("#y2024", ["y2024"]),
    ("#1a", ["1a"]),
    ("# Heading", []),
    ("## Heading ##", []),
    ("##notatag", []),
    ("page#frag", []),
    ("https://example.org/#frag", []),
    ("[[Note#Heading]]", []),
    ("[[#Heading]]", []),
    ("[t](#anchor)", []),
    ("`#code`", []),
    ("```\n#fenced\n```", []),
    ("%% #commented %% <!-- #gone -->", ["commented"]),  # as Obsidian's cache reads them
    ("#tag.", ["tag"]),
    ("#tag, #other;", ["tag", "other"]),
    ("#trailing/", ["trailing"]),
    ("(#paren)", []),
    ("line\n#start", ["start"]),
    ("\t#tab", ["tab"]),
]


@pytest.mark.parametrize(("body", "expected"), TAGS)
def test_inline_tags(body: str, expected: list[str]) -> None:
    assert list(inline_tags(body)) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (["a", "b"], ["a", "b"]),
        (["#a", "b/c"], ["a", "b/c"]),
        ("a, b c", ["a", "b", "c"]),
        ("#a #b", ["a", "b"]),
        (None, []),
        ("", []),
        ([], []),
        ([None, "x"], ["x"]),
        ([2024, True], ["2024", "true"]),
        ({"k": "v"}, []),
    ],
)
def test_frontmatter_tags(value: object, expected: list[str]) -> None:
    assert list(frontmatter_tags({"tags": value})) == expected  # type: ignore[dict-item]


def test_tags_are_deduplicated_case_insensitively_keeping_first_spelling() -> None:
    tags = extract_tags({"tags": ["Baking", "bread"]}, "#baking #Bread #new #NEW")
    assert tags == ("Baking", "bread", "new")


@given(st.text(max_size=200))
def test_tags_never_start_with_hash_or_are_numeric(body: str) -> None:
    for tag in inline_tags(body):
        assert tag and not tag.startswith("#")
        assert not tag.replace("/", "").isdigit()
        assert not any(ch.isspace() for ch in tag)


# --------------------------------------------------------------------------- aliases


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (["A", "B"], ("A", "B")),
        ("Only one, with comma", ("Only one, with comma",)),
        (None, ()),
        ([], ()),
        (["A", "a", " ", None], ("A",)),
        ([42], ("42",)),
    ],
)
def test_aliases(value: object, expected: tuple[str, ...]) -> None:
    assert extract_aliases({"aliases": value}) == expected  # type: ignore[dict-item]


# --------------------------------------------------------------------------- headings

HEADINGS: list[tuple[str, list[tuple[int, str, int]]]] = [
    ("# Title", [(1, "Title", 0)]),
    ("###### Six", [(6, "Six", 0)]),
    ("####### Seven", []),
    ("## Closed ##", [(2, "Closed", 0)]),
    ("## Keeps#hash", [(2, "Keeps#hash", 0)]),
    ("#", [(1, "", 0)]),
    ("#NoSpace", []),
    ("   # Three spaces", [(1, "Three spaces", 0)]),
    ("    # Four spaces", []),
    ("## The `code` span", [(2, "The `code` span", 0)]),
    ("Title\n=====", [(1, "Title", 0)]),
    ("Sub\n---", [(2, "Sub", 0)]),
    ("Two\nlines\n---", [(2, "Two lines", 0)]),
    ("para\n\n---", []),
    ("---\n", []),
    ("- item\n---", []),
    ("- item\n  more\n---", []),
    ("> quote\n---", []),
    ("# A\ntext\n## B", [(1, "A", 0), (2, "B", 2)]),
    ("```\n# not heading\n```\n# heading", [(1, "heading", 3)]),
    ("```yaml\n---\nkey: value\n---\n```", []),
    ("<!--\n# hidden\n-->\n# shown", [(1, "shown", 3)]),
    ("%%\n# hidden\n%%", []),
    ("text\n\n===", []),
]


@pytest.mark.parametrize(("body", "expected"), HEADINGS)
def test_extract_headings(body: str, expected: list[tuple[int, str, int]]) -> None:
    assert [(h.level, h.text, h.line) for h in extract_headings(body)] == expected


def test_case_06_body_headings() -> None:
    body = (
        "Intro paragraph.\n\n---\n\nA thematic break above and a setext heading below.\n\n"
        "Setext heading\n---\n\n```yaml\n---\nkey: value\n---\n```\n\nClosing paragraph.\n"
    )
    assert extract_headings(body) == (Heading(level=2, text="Setext heading", line=6),)


def test_a_code_span_never_crosses_into_the_next_list_item() -> None:
    """CommonMark: a code span stays within its block. A lone backtick in one list item (a
    MEMORY.md description) must not hide the links of the items after it."""
    body = "- [a](m-0.md) — `\n- [b](m-1.md)\n- [`](m-2.md)\n"
    assert [link.target for link in extract_links(body)] == ["m-0.md", "m-1.md", "m-2.md"]
    assert [link.target for link in extract_links("a `span\nsame span` [[x]]\n")] == ["x"]


def test_a_long_paragraph_of_code_spans_is_masked_in_one_pass() -> None:
    """A pasted log (one ``\\`command\\``` a line, no blank line) is one paragraph: each code
    span's closing run is looked for up to the paragraph's end, found once for the pass, not
    once per span (10,000 lines: about a minute of CPU each parse, then hours at 50 MB)."""
    import time

    line = "2026-01-03 12:00:01 INFO ran `make test` in `src/app`, see [[Kiln]]\n"
    body = line * 10_000
    started = time.process_time()
    links = extract_links(body)
    spent = time.process_time() - started
    assert [link.target for link in links] == ["Kiln"] * 10_000
    assert "make test" not in mask_code(body)
    assert spent < 5.0, f"{spent:.1f} s of CPU to read the links of one 700 KB note"


def _spans_masked_one_by_one(text: str) -> str:
    """Code spans masked as before the pass kept its stops: each closing run looked for up
    to its paragraph's end or next block, searched again for each span (the reference)."""
    import re

    stop = re.compile(r"\n[ \t]{0,3}(?:[-*+]|\d{1,9}[.)])[ \t]|\n[ \t]{0,3}#{1,6}[ \t]"
                      r"|\n[ \t]{0,3}>")
    out, pos = list(text), 0
    while (match := re.compile(r"`+").search(text, pos)) is not None:
        end = text.find("\n\n", match.end())
        limit = len(text) if end < 0 else end
        block = stop.search(text, match.end(), limit)
        limit = block.start() if block is not None else limit
        close = next((m.start() for m in re.finditer(r"`+", text[:limit])
                      if m.start() >= match.end() and len(m.group()) == len(match.group())),
                     None)
        if close is None:
            pos = match.end()
            continue
        for i in range(match.start(), close + len(match.group())):
            out[i] = " " if text[i] != "\n" else "\n"
        pos = close + len(match.group())
    return "".join(out)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["`", "``", "a", " ", "\n", "\n\n", "- ", "# ", "> ", "1. ",
                                  "\t", "x`y"]), max_size=40))
def test_code_spans_are_masked_as_span_by_span(pieces: list[str]) -> None:
    from ccb.markdown import _mask_fences

    body = "".join(pieces)
    assert mask_code(body) == _spans_masked_one_by_one(_mask_fences(body))
