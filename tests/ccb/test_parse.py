"""parse_note: decoding, line endings, memory metadata, conflict copies (cases 04, 05, 06, 15)."""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccb.model import Link
from ccb.parse import _posix_stem, detect_conflict_copy, memory_meta, parse_note

# --------------------------------------------------------------------------- basics


@pytest.mark.parametrize("path", [
    "Memory/a-real-instance.md", "a.md", "Memory/sub/日本語 ノート.md", "Memory/.hidden.md",
    "Memory/x.", "Memory/x.tar.gz", "Memory/./a.md", "Memory/a.md/", "Memory//a.md", "/a.md",
    "//a.md", "", ".", "..", "Memory/..", "Memory/.", "/", "a/.md", "a/b..md", " .md",
])
def test_a_title_is_the_stem_pathlib_gives(path: str) -> None:
    """The title's stem is read off the string, as ``PurePosixPath(path).stem`` reads it."""
    assert _posix_stem(path) == PurePosixPath(path).stem


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["a", "b.md", ".", "..", "", ".md", "x.", " ", "日本", "é.txt"]),
                max_size=6).map("/".join))
def test_every_path_has_the_stem_pathlib_gives(path: str) -> None:
    assert _posix_stem(path) == PurePosixPath(path).stem
    assert _posix_stem("/" + path) == PurePosixPath("/" + path).stem



def test_title_hash_and_body() -> None:
    data = b"---\ntags: [a]\nrelated: '[[X]]'\n---\n# Head\ntext #b [[Y]]\n"
    note = parse_note("Folder/My note.md", data)
    assert note.path == "Folder/My note.md"
    assert note.title == "My note"
    assert note.content_hash == hashlib.sha256(data).hexdigest()
    assert note.body == "# Head\ntext #b [[Y]]\n"
    assert note.frontmatter_raw == "tags: [a]\nrelated: '[[X]]'\n"
    assert note.tags == ("a", "b")
    assert note.links == (Link("X", "wikilink", line=-1), Link("Y", "wikilink", line=1))
    assert [h.text for h in note.headings] == ["Head"]
    assert note.memory is None
    assert note.problems == ()
    assert (note.has_bom, note.line_ending, note.encoding) == (False, "\n", "utf-8")


def test_note_without_frontmatter() -> None:
    note = parse_note("x.md", b"just text\n")
    assert note.frontmatter_raw is None
    assert note.properties == {}
    assert note.body == "just text\n"


def test_invalid_utf8_is_decoded_with_replacement_and_reported() -> None:
    note = parse_note("latin1.md", "caf\xe9 #tag\n".encode("latin-1"))
    assert note.body == "caf\ufffd #tag\n"
    assert [p.kind for p in note.problems] == ["decode"]
    assert "byte 3" in note.problems[0].reason
    assert note.tags == ("tag",)


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_with_bom_is_decoded(codec: str) -> None:
    bom = b"\xff\xfe" if codec == "utf-16-le" else b"\xfe\xff"
    data = bom + "---\r\ntitle: 日本\r\n---\r\nbody\r\n".encode(codec)
    note = parse_note("w.md", data)
    assert note.problems == ()
    assert note.properties == {"title": "日本"}
    assert note.body == "body\n"
    assert (note.has_bom, note.encoding, note.line_ending) == (True, codec, "\r\n")


def test_yaml_error_keeps_body_indexed() -> None:
    data = b"---\ncreated: [x\ntags: [x]\n---\nBody with [[Link]] and #tag\n"
    note = parse_note("Notes/T.md", data)
    assert [p.kind for p in note.problems] == ["yaml"]
    assert note.properties == {}
    assert note.frontmatter_raw == "created: [x\ntags: [x]\n"
    assert note.body == "Body with [[Link]] and #tag\n"
    assert note.tags == ("tag",)
    assert [link.target for link in note.links] == ["Link"]


@settings(max_examples=300)
@given(st.binary(max_size=400))
def test_parse_never_raises_on_arbitrary_bytes(data: bytes) -> None:
    note = parse_note("any.md", data)
    assert note.content_hash == hashlib.sha256(data).hexdigest()
    assert "\r" not in note.body
    assert all(p.reason for p in note.problems)


@settings(max_examples=300)
@given(
    st.text(max_size=120),
    st.text(max_size=120),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),
)
def test_parse_never_raises_on_frontmatter_shaped_text(
    block: str, body: str, newline: str, bom: bool
) -> None:
    text = f"---{newline}{block}{newline}---{newline}{body}"
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8", errors="replace")
    note = parse_note("n.md", data)
    assert note.has_bom == bom
    assert "\r" not in note.body
    for link in note.links:
        assert "]]" not in link.target and "|" not in link.target


# --------------------------------------------------------------------------- shared cases


def test_case_04_bom_does_not_hide_frontmatter(cases_dir: Path) -> None:
    data = (cases_dir / "04-utf8-bom/vault/Saved in Notepad.md").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    note = parse_note("Saved in Notepad.md", data)
    assert note.has_bom
    assert note.problems == ()
    assert note.properties["title"] == "Saved in Notepad"
    assert note.tags == ("windows",)
    assert note.aliases == ("Notepad note",)
    assert not note.body.startswith("\ufeff")
    assert note.body == "This file starts with a UTF-8 byte order mark.\n"


@pytest.mark.parametrize(
    ("name", "ending", "title", "body"),
    [
        ("Windows note.md", "\r\n", "Windows note", "Line one.\n\nLine two.\n"),
        ("Properties only.md", "\n", "Properties only", ""),
        ("Mixed endings.md", "\n", "Mixed endings", "Body with LF only.\n"),
    ],
)
def test_case_05_crlf_and_eof_fence(
    cases_dir: Path, name: str, ending: str, title: str, body: str
) -> None:
    note = parse_note(name, (cases_dir / "05-crlf-and-eof-fence/vault" / name).read_bytes())
    assert note.problems == ()
    assert note.properties["title"] == title
    assert note.line_ending == ending
    assert note.body == body
    for value in note.properties.values():
        assert not (isinstance(value, str) and value.endswith("\r"))


def test_case_05_windows_note_values(cases_dir: Path) -> None:
    note = parse_note(
        "Windows note.md", (cases_dir / "05-crlf-and-eof-fence/vault/Windows note.md").read_bytes()
    )
    assert note.properties == {"title": "Windows note", "tags": ["crlf"], "status": "draft"}
    assert note.tags == ("crlf",)
    assert note.frontmatter_raw == "title: Windows note\r\ntags: [crlf]\r\nstatus: draft\r\n"


def test_case_06_dashes(cases_dir: Path) -> None:
    folder = cases_dir / "06-dashes-inside-frontmatter-and-body/vault"
    note = parse_note("Dashes.md", (folder / "Dashes.md").read_bytes())
    assert note.properties == {
        "title": "Before --- after",
        "summary": "Notes --- with an em-dash substitute",
    }
    assert note.body.count("---\n") == 4  # thematic break, setext underline, 2 in the fence
    assert "```yaml\n---\nkey: value\n---\n```" in note.body
    assert [(h.level, h.text) for h in note.headings] == [(2, "Setext heading")]

    memory = parse_note(
        "memory/feedback_split.md", (folder / "memory/feedback_split.md").read_bytes()
    )
    assert memory.memory is not None
    assert memory.memory.type == "feedback"
    assert memory.memory.name == "split-on-fence-lines-only"
    assert memory.memory.description == "Values may contain --- and the body may too"
    assert "\n---\n" in memory.body


def test_case_15_conflict_copies_by_name(cases_dir: Path) -> None:
    folder = cases_dir / "15-sync-conflict-copies/vault"
    copies = {p.name: detect_conflict_copy(p.name) for p in folder.iterdir() if p.is_file()}
    assert copies == {
        "Links here.md": None,
        "Meeting notes.md": None,
        "Reading list.md": None,
        "Meeting notes (Conflicted copy Laptop2 202403051845).md": "Meeting notes.md",
        "Reading list.sync-conflict-20240305-184500-ABCDEF1.md": "Reading list.md",
        ".stignore": None,
        ".syncthing.Reading list.md.tmp": None,
    }


@pytest.mark.parametrize(
    ("path", "original"),
    [
        ("a/b/Note.sync-conflict-20240305-184500-ABCDEF1.md", "a/b/Note.md"),
        ("Note.v2.sync-conflict-20240305-184500-ABCDEF1.md", "Note.v2.md"),
        ("image.sync-conflict-20240101-000000-ZZZZZZZ.png", "image.png"),
        ("Makefile.sync-conflict-20240101-000000-ZZZZZZZ", "Makefile"),
        ("x/Name (Conflicted copy My Phone 202403051845).md", "x/Name.md"),
        ("Name (conflicted copy Laptop 202403051845).md", "Name.md"),
        ("Plan (Alice's conflicted copy 2024-03-05).md", "Plan.md"),
        ("Note.md", None),
        ("sync-conflict.md", None),
        ("Note (copy).md", None),
        ("Note (Conflicted copy Laptop 2024).md", None),
        ("Note.sync-conflict-2024-184500-A.md", None),
    ],
)
def test_detect_conflict_copy(path: str, original: str | None) -> None:
    assert detect_conflict_copy(path) == original


# --------------------------------------------------------------------------- memory


def test_full_memory_format() -> None:
    data = b"""---
name: Tests hit a real database
description: Integration tests must use a real database, never mocks
type: feedback
id: 01JCW3ABCDEFGHJKMNPQRSTVWX
created: 2026-06-15T03:01:00Z
updated: 2026-06-20T09:12:44Z
version: 3
subject: testing.database
valid_from: 2026-06-15
valid_to:
supersedes: "[[Tests may use mocks]]"
pinned: false
expires:
source: user
owner: alice
status: active
custom: kept
---
What / Why / How.
"""
    note = parse_note("Memory/tests-hit-a-real-database.md", data)
    assert note.problems == ()
    meta = note.memory
    assert meta is not None
    assert meta.type == "feedback"
    assert meta.name == "Tests hit a real database"
    assert meta.id == "01JCW3ABCDEFGHJKMNPQRSTVWX"
    assert meta.created == dt.datetime(2026, 6, 15, 3, 1, tzinfo=dt.UTC)
    assert meta.version == 3
    assert meta.valid_from == dt.date(2026, 6, 15)
    assert meta.valid_to is None
    assert meta.supersedes == ("Tests may use mocks",)
    assert meta.pinned is False
    assert meta.expires is None
    assert (meta.source, meta.owner, meta.status) == ("user", "alice", "active")
    assert note.properties["custom"] == "kept"
    assert Link("Tests may use mocks", "wikilink", line=-1) in note.links


def test_nested_metadata_type_newer_claude_code_shape() -> None:
    data = (
        b"---\nname: x\ndescription: d\n"
        b"metadata: \n  node_type: memory\n  type: reference\n---\nb\n"
    )
    note = parse_note("m.md", data)
    assert note.memory is not None
    assert note.memory.type == "reference"


@pytest.mark.parametrize(
    ("properties", "expected"),
    [
        ({"type": "user"}, "user"),
        ({"type": "Feedback "}, "feedback"),
        ({"type": "guide"}, None),
        ({"type": "stub"}, None),
        ({"type": ["user"]}, None),
        ({}, None),
        ({"metadata": {"type": "project"}}, "project"),
        ({"metadata": "type: user"}, None),
    ],
)
def test_memory_type_detection(properties: dict[str, object], expected: str | None) -> None:
    meta, _ = memory_meta(properties, "T", "t.md")  # type: ignore[arg-type]
    assert (meta.type if meta else None) == expected


def test_name_defaults_to_title() -> None:
    meta, problems = memory_meta({"type": "user"}, "My title", "My title.md")
    assert meta is not None and meta.name == "My title"
    assert problems == ()


@pytest.mark.parametrize(
    ("key", "value", "field", "expected"),
    [
        ("created", "2026-06-15", "created", dt.date(2026, 6, 15)),
        ("created", "2026-06-15 10:30", "created", dt.datetime(2026, 6, 15, 10, 30)),
        (
            "created",
            "2026-06-15T10:30:00Z",
            "created",
            dt.datetime(2026, 6, 15, 10, 30, tzinfo=dt.UTC),
        ),
        ("expires", dt.date(2027, 1, 1), "expires", dt.date(2027, 1, 1)),
        ("version", "4", "version", 4),
        ("version", 2.0, "version", 2),
        ("pinned", "yes", "pinned", True),
        ("pinned", True, "pinned", True),
        ("pinned", "no", "pinned", False),
        ("supersedes", ["[[A]]", "[[B|b]]", "C", "[[D#h]]"], "supersedes", ("A", "B", "C", "D")),
        ("supersedes", "", "supersedes", ()),
        ("supersedes", None, "supersedes", ()),
        ("description", None, "description", ""),
        ("id", 12345, "id", "12345"),
    ],
)
def test_lenient_memory_values(key: str, value: object, field: str, expected: object) -> None:
    meta, problems = memory_meta({"type": "project", key: value}, "t", "t.md")  # type: ignore[dict-item]
    assert problems == ()
    assert meta is not None
    assert getattr(meta, field) == expected


@pytest.mark.parametrize(
    ("key", "value", "field", "default"),
    [
        ("created", "last tuesday", "created", None),
        ("created", 20240101, "created", None),
        ("version", "three", "version", None),
        ("version", True, "version", None),
        ("pinned", "maybe", "pinned", False),
        ("name", ["a", "b"], "name", "t"),
        ("valid_to", "2026-13-45", "valid_to", None),
    ],
)
def test_bad_memory_values_are_problems(
    key: str, value: object, field: str, default: object
) -> None:
    meta, problems = memory_meta({"type": "user", key: value}, "t", "t.md")  # type: ignore[dict-item]
    assert meta is not None
    assert getattr(meta, field) == default
    assert [p.kind for p in problems] == ["memory"]
    assert key in problems[0].reason


def test_bad_memory_value_still_parses_the_note() -> None:
    note = parse_note("m.md", b"---\ntype: user\nversion: many\n---\nbody\n")
    assert note.memory is not None and note.memory.version is None
    assert [p.kind for p in note.problems] == ["memory"]
    assert note.body == "body\n"
