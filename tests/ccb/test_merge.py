"""Three-way merge of one note: both sides adding lines to the same section."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccb.merge import merge_note

BASE = b"---\nname: Log\ntype: project\n---\n# Log\n\n- one\n- two\n\n## Later\n\ntext\n"


def test_both_append_to_one_list_keeps_both_theirs_first() -> None:
    ours = BASE.replace(b"- two\n", b"- two\n- ours\n")
    theirs = BASE.replace(b"- two\n", b"- two\n- theirs\n")
    merged = merge_note(BASE, ours, theirs)
    assert merged == BASE.replace(b"- two\n", b"- two\n- theirs\n- ours\n")


def test_both_append_at_the_end_of_the_file() -> None:
    ours, theirs = BASE + b"- a\n", BASE + b"- b\n"
    assert merge_note(BASE, ours, theirs) == BASE + b"- b\n- a\n"
    assert merge_note(BASE, ours, BASE + b"- a\n") == BASE + b"- a\n"


def test_a_rewritten_line_on_both_sides_is_a_conflict() -> None:
    ours = BASE.replace(b"- one\n", b"- one!\n")
    theirs = BASE.replace(b"- one\n", b"- ONE\n")
    assert merge_note(BASE, ours, theirs) is None
    removed = BASE.replace(b"- one\n", b"")
    assert merge_note(BASE, removed, ours) is None  # one removed the line the other rewrote


def test_changes_to_different_lines_of_one_section_merge() -> None:
    removed = BASE.replace(b"- one\n", b"")
    added = BASE.replace(b"- two\n", b"- two\n- x\n")
    assert merge_note(BASE, added, removed) == BASE.replace(b"- one\n- two\n", b"- two\n- x\n")
    fixed = BASE.replace(b"- one\n", b"- one, fixed\n")
    assert merge_note(BASE, added, fixed) == BASE.replace(
        b"- one\n- two\n", b"- one, fixed\n- two\n- x\n")


def test_crlf_file_keeps_crlf() -> None:
    base = BASE.replace(b"\n", b"\r\n")
    ours = base.replace(b"- two\r\n", b"- two\r\n- ours\r\n")
    theirs = base.replace(b"- two\r\n", b"- two\r\n- theirs\r\n")
    merged = merge_note(base, ours, theirs)
    assert merged is not None and b"- theirs\r\n- ours\r\n" in merged
    assert b"\n" not in merged.replace(b"\r\n", b"")


lines = st.lists(st.from_regex(r"- [a-z]{1,6}", fullmatch=True), min_size=1, max_size=4)


@settings(max_examples=200, deadline=None)
@given(ours_add=lines, theirs_add=lines, ours_at=st.integers(0, 2), theirs_at=st.integers(0, 2))
def test_insertions_from_both_sides_all_survive(
    ours_add: list[str], theirs_add: list[str], ours_at: int, theirs_at: int
) -> None:
    base_lines = ["# Log\n", "- one\n", "- two\n"]

    def with_lines(extra: list[str], at: int) -> bytes:
        body = base_lines[: at + 1] + [x + "\n" for x in extra] + base_lines[at + 1:]
        return b"---\nname: Log\n---\n" + "".join(body).encode()

    base = b"---\nname: Log\n---\n" + "".join(base_lines).encode()
    merged = merge_note(base, with_lines(ours_add, ours_at), with_lines(theirs_add, theirs_at))
    assert merged is not None
    text = merged.decode()
    for line in [*ours_add, *theirs_add, "- one", "- two"]:
        assert line + "\n" in text


def test_both_bumping_updated_and_version_is_not_a_conflict() -> None:
    base = b"---\nname: Log\nupdated: 2026-11-30T10:00:00Z\nversion: 3\n---\n# Log\n\n- one\n"
    ours = base.replace(b"10:00:00Z", b"10:00:05Z").replace(b"version: 3", b"version: 4") \
        + b"- ours\n"
    theirs = base.replace(b"10:00:00Z", b"10:00:09Z").replace(b"version: 3", b"version: 4") \
        + b"- theirs\n"
    merged = merge_note(base, ours, theirs)
    assert merged is not None
    assert b"updated: 2026-11-30T10:00:09Z\n" in merged and b"version: 5\n" in merged
    assert merged.endswith(b"- one\n- theirs\n- ours\n")
    other = ours.replace(b"name: Log", b"name: Mine")
    assert merge_note(base, other, theirs.replace(b"name: Log", b"name: Theirs")) is None


@pytest.mark.parametrize("swap", [False, True])
def test_a_line_one_side_replaced_in_and_the_other_appended_is_there_once(swap: bool) -> None:
    """One side replaced the last line by M (a user's deletion repaired with our M), the
    other appended M after it: M is one change made twice, not two lines."""
    base = b"---\nname: Log\n---\n# Log\n\n- start\n- L\n"
    appended = base + b"- M\n"
    replaced = base.replace(b"- L\n", b"- M\n")
    ours, theirs = (replaced, appended) if swap else (appended, replaced)
    merged = merge_note(base, ours, theirs)
    assert merged is not None and merged.count(b"- M\n") == 1 and b"- L\n" not in merged
