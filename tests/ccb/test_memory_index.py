"""MEMORY.md: grouping, priority order, built to fit the limits, links that parse back."""

from __future__ import annotations

import datetime as dt
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccb.memory_index import INDEX_HEADER, IndexEntry, build_memory_index
from ccb.parse import parse_note

_T0 = dt.datetime(2026, 6, 15, tzinfo=dt.UTC)


def _entry(n: int, type_: str = "project", **kw: object) -> IndexEntry:
    return IndexEntry(
        name=kw.pop("name", f"Memory {n:03d}"),  # type: ignore[arg-type]
        file=kw.pop("file", f"memory-{n:03d}.md"),  # type: ignore[arg-type]
        type=type_,  # type: ignore[arg-type]
        description=kw.pop("description", f"what memory {n} says"),  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


def test_grouped_by_type_in_order_with_header() -> None:
    entries = [
        _entry(1, "reference"),
        _entry(2, "project"),
        _entry(3, "user"),
        _entry(4, "feedback"),
    ]
    text = build_memory_index(entries)
    assert text.startswith(INDEX_HEADER)
    assert text == INDEX_HEADER + (
        "\n## User\n\n- [Memory 003](memory-003.md) — what memory 3 says\n"
        "\n## Feedback\n\n- [Memory 004](memory-004.md) — what memory 4 says\n"
        "\n## Project\n\n- [Memory 002](memory-002.md) — what memory 2 says\n"
        "\n## Reference\n\n- [Memory 001](memory-001.md) — what memory 1 says\n"
    )


def test_priority_order_within_a_group() -> None:
    entries = [
        _entry(1, importance=0.1, updated=_T0),
        _entry(2, importance=0.9),
        _entry(3, pinned=True),
        _entry(4, resident=True),
        _entry(5, importance=0.1, updated=_T0 + dt.timedelta(days=1)),
    ]
    text = build_memory_index(entries)
    order = [int(line[10:13]) for line in text.splitlines() if line.startswith("- [Memory")]
    assert order == [3, 4, 2, 5, 1]


def test_lowest_priority_left_out_with_a_line_saying_so() -> None:
    entries = [_entry(n, importance=-n) for n in range(300)]
    text = build_memory_index(entries)
    assert text.count("\n") <= 200
    listed = [line for line in text.splitlines() if line.startswith("- [")]
    assert listed[0].startswith("- [Memory 000]")
    left_out = 300 - len(listed)
    assert text.endswith(f"- … {left_out} more memories not listed (see the Memory/ folder)\n")
    kept = {int(line[10:13]) for line in listed}
    assert kept == set(range(len(listed)))  # exactly the highest-priority ones
    assert text.count("\n") == 200  # full: one more entry would not fit


def test_bytes_limit_and_singular_line() -> None:
    entries = [_entry(n, importance=-n, description="长" * 100) for n in range(3)]
    full = build_memory_index(entries)
    limit = len(full.encode()) - 1
    text = build_memory_index(entries, max_bytes=limit, memory_folder="Notes/Memory")
    assert len(text.encode()) <= limit
    assert text.endswith("- … 1 more memory not listed (see the Notes/Memory/ folder)\n")


def test_limits_too_small_raise() -> None:
    with pytest.raises(ValueError, match="too small"):
        build_memory_index([_entry(1)], max_lines=2)


def test_escaping_links_and_one_line_descriptions() -> None:
    entry = _entry(
        1,
        name="A [tricky]\nname",
        file="My notes (v2) 100%.md",
        description="first line\n\nsecond ] line [x](evil.md)",
    )
    text = build_memory_index([entry])
    line = text.splitlines()[-1]
    assert line == (
        r"- [A \[tricky\] name](My%20notes%20%28v2%29%20100%25.md)"
        r" — first line second \] line \[x\]\(evil.md\)"
    )
    note = parse_note("Memory/MEMORY.md", text.encode())
    assert note.problems == ()
    assert [link.target for link in note.links] == []  # no link injected by the description
    plain = build_memory_index([_entry(1, name="Plain", file="My notes (v2) 100%.md")])
    links = parse_note("Memory/MEMORY.md", plain.encode()).links
    assert [link.target for link in links] == ["My notes (v2) 100%.md"]


def test_long_descriptions_are_shortened() -> None:
    text = build_memory_index([_entry(1, description="word " * 100)])
    line = text.splitlines()[-1]
    assert line.endswith("…") and len(line) < 200


def test_deterministic_whatever_the_input_order() -> None:
    entries = [
        _entry(n, random.Random(n).choice(["user", "project"]), importance=n % 3) for n in range(50)
    ]
    shuffled = entries[:]
    random.Random(7).shuffle(shuffled)
    assert build_memory_index(entries, max_lines=40) == build_memory_index(shuffled, max_lines=40)


_types = st.sampled_from(["user", "feedback", "project", "reference"])


@settings(max_examples=80, deadline=None)
@given(
    specs=st.lists(
        st.tuples(_types, st.text(max_size=300), st.text(min_size=1, max_size=60), st.booleans()),
        max_size=120,
    ),
    max_lines=st.integers(min_value=5, max_value=250),
    max_bytes=st.integers(min_value=400, max_value=30_000),
)
def test_limits_always_hold(specs: list, max_lines: int, max_bytes: int) -> None:
    entries = [
        IndexEntry(name=name, file=f"m-{i}.md", type=t, description=d, pinned=p)
        for i, (t, d, name, p) in enumerate(specs)
    ]
    text = build_memory_index(entries, max_lines=max_lines, max_bytes=max_bytes)
    assert text.count("\n") <= max_lines
    assert len(text.encode("utf-8")) <= max_bytes
    listed = [line for line in text.splitlines() if line.startswith("- [")]
    if len(listed) < len(entries):
        assert text.endswith(
            f"{len(entries) - len(listed)} more "
            f"{'memory' if len(entries) - len(listed) == 1 else 'memories'}"
            " not listed (see the Memory/ folder)\n"
        )
    note = parse_note("Memory/MEMORY.md", text.encode())
    assert note.problems == ()
    # Pinned entries come first. ccb.markdown reads a link whose text has no brackets (it
    # ignores backslash escapes) and no code-span/comment markers (` %% <!--).
    if len(listed) >= sum(1 for e in entries if e.pinned):
        targets = {link.target for link in note.links}
        readable = {
            f"m-{i}.md" for i, s in enumerate(specs) if s[3] and re.fullmatch(r"[\w ]+", s[2])
        }
        assert readable <= targets
