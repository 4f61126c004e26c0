"""Memory files: slugs, free paths, new files that parse back, the normalised content hash."""

from __future__ import annotations

import datetime as dt
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccb.memory_file import (
    MAX_SLUG_BYTES,
    NewMemory,
    content_hash_normalised,
    memory_path,
    render_memory,
    slugify,
)
from ccb.model import MemoryMeta
from ccb.parse import parse_note

_T0 = dt.datetime(2026, 6, 15, 3, 1, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("Tests hit a real database", "tests-hit-a-real-database"),
        ("Don't mock the DB!", "dont-mock-the-db"),
        ("测试 用 真实数据库", "测试-用-真实数据库"),
        ("Café au lait", "café-au-lait"),
        ('a\\b/c:d*e?f"g<h>i|j#k^l[m]n', "a-b-c-d-e-f-g-h-i-j-k-l-m-n"),
        ("..hidden.", "hidden"),
        ("  spaced  out  ", "spaced-out"),
        ("snake_case name", "snake_case-name"),
        ("CON", "con-memory"),
        ("com1", "com1-memory"),
        ("???", "memory"),
        ("", "memory"),
        ("tab\tand\x00control", "tab-and-control"),
        ("Ｆｕｌｌ　width", "full-width"),
    ],
)
def test_slugify(name: str, slug: str) -> None:
    assert slugify(name) == slug


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_slugify_is_always_a_safe_file_stem(name: str) -> None:
    slug = slugify(name)
    assert slug and len(slug.encode("utf-8")) <= MAX_SLUG_BYTES
    assert not set(slug) & set('\\/:*?"<>|#^[] .') and slug.isprintable()
    assert not slug.startswith(("-", "_")) and not slug.endswith(("-", "_"))
    assert slug == slug.lower() and slugify(slug) == slug


def test_long_names_are_cut_at_a_character_boundary() -> None:
    slug = slugify("记忆" * 100)
    assert slug == "记忆" * 16 + "记" and len(slug.encode()) <= MAX_SLUG_BYTES


def test_memory_path_avoids_case_insensitive_collisions() -> None:
    files = ["Memory/Tests-Hit-A-Real-Database.md", "tests-hit-a-real-database-2.md", "Notes/x.md"]
    assert memory_path(files, "Memory", "Tests hit a real database") == (
        "Memory/tests-hit-a-real-database-3.md"
    )
    assert memory_path([], "Memory/", "New one") == "Memory/new-one.md"
    assert memory_path([], "", "New one") == "new-one.md"
    # dreamd's own files are never taken by a memory.
    assert memory_path([], "Memory", "Memory") == "Memory/memory-2.md"
    assert memory_path([], "Memory", "dreams") == "Memory/dreams-2.md"
    long_name = "x" * 300
    taken = [f"Memory/{'x' * MAX_SLUG_BYTES}.md"]
    path = memory_path(taken, "Memory", long_name)
    assert path == f"Memory/{'x' * (MAX_SLUG_BYTES - 2)}-2.md"


def test_memory_path_avoids_a_name_stored_decomposed() -> None:
    """A vault synced from a Mac holds ``crème-brûlée.md`` in NFD; the slug is NFC. On Linux
    the two are two files, which a Mac cannot hold side by side: the slug takes ``-2``."""
    stored = unicodedata.normalize("NFD", "Memory/crème-brûlée.md")
    assert memory_path([stored], "Memory", "Crème brûlée") == "Memory/crème-brûlée-2.md"


def _meta(**changes: object) -> NewMemory:
    base = NewMemory(
        name="Tests hit a real database",
        description="Integration tests must use a real database, never mocks",
        type="feedback",
        id="01JCW3Z8K4V5M6N7P8Q9R0S1T2",
        created=_T0,
        updated=_T0 + dt.timedelta(days=5, seconds=7),
        body="**What:** no mocks.\n\n**Why:** a mock hid a broken migration.",
    )
    return base if not changes else NewMemory(**{**_fields(base), **changes})  # type: ignore[arg-type]


def _fields(meta: NewMemory) -> dict[str, object]:
    return {name: getattr(meta, name) for name in NewMemory.__dataclass_fields__}


def _expected(meta: NewMemory) -> MemoryMeta:
    return MemoryMeta(
        type=meta.type,
        name=meta.name,
        description=meta.description,
        id=meta.id,
        subject=meta.subject,
        created=meta.created,
        updated=meta.updated,
        version=meta.version,
        valid_from=meta.valid_from,
        valid_to=meta.valid_to,
        supersedes=meta.supersedes,
        pinned=meta.pinned,
        expires=meta.expires,
        source=meta.source,
        owner=meta.owner,
    )


def test_render_memory_layout_and_parse_back() -> None:
    meta = _meta()
    data = render_memory(meta)
    text = data.decode()
    keys = [line.split(":")[0] for line in text.split("---\n")[1].splitlines()]
    assert keys == [
        "name", "description", "type", "id", "created", "updated", "version", "subject",
        "valid_from", "valid_to", "supersedes", "pinned", "expires", "source", "owner",
    ]  # fmt: skip
    assert "created: 2026-06-15T03:01:00Z\n" in text and "valid_to:\n" in text
    assert text.endswith("---\n**What:** no mocks.\n\n**Why:** a mock hid a broken migration.\n")
    note = parse_note("Memory/tests-hit-a-real-database.md", data)
    assert note.problems == ()
    assert note.memory == _expected(meta)


def test_render_memory_with_every_field_parses_back() -> None:
    meta = _meta(
        name="Deploys: only on Fridays? no",
        description="yes",
        type="project",
        version=3,
        subject="release.schedule",
        valid_from=dt.date(2026, 6, 15),
        valid_to=dt.datetime(2026, 7, 1, 12, tzinfo=dt.UTC),
        supersedes=("deploys-any-day", "Archive/old rule"),
        pinned=True,
        expires=dt.date(2027, 1, 1),
        source="assistant",
        owner="alice/claude-code",
        body="---\nlooks like a fence\n---\n",
    )
    data = render_memory(meta)
    note = parse_note("Memory/x.md", data)
    assert note.problems == ()
    assert note.memory == _expected(meta)
    assert note.body == "---\nlooks like a fence\n---\n"
    assert '  - "[[deploys-any-day]]"\n' in data.decode()
    with pytest.raises(ValueError, match="link target"):
        render_memory(_meta(supersedes=("Old [rule]",)))


def test_render_memory_writes_derived_from_only_when_there_are_sources() -> None:
    assert b"derived_from" not in render_memory(_meta())
    data = render_memory(_meta(supersedes=("a", "b"), derived_from=("a", "咖啡偏好")))
    text = data.decode()
    assert text.index("supersedes:") < text.index("derived_from:") < text.index("pinned:")
    note = parse_note("Memory/x.md", data)
    assert note.problems == ()
    assert note.properties["derived_from"] == ["[[a]]", "[[咖啡偏好]]"]
    with pytest.raises(ValueError, match="derived_from"):
        render_memory(_meta(derived_from=("Old [rule]",)))


def test_render_memory_converts_times_to_utc_and_refuses_bad_values() -> None:
    paris = dt.timezone(dt.timedelta(hours=2))
    data = render_memory(_meta(created=dt.datetime(2026, 6, 15, 5, 1, tzinfo=paris)))
    assert b"created: 2026-06-15T03:01:00Z\n" in data
    with pytest.raises(ValueError, match="timezone-aware"):
        render_memory(_meta(created=dt.datetime(2026, 6, 15)))
    with pytest.raises(ValueError, match="type"):
        render_memory(_meta(type="fact"))
    with pytest.raises(ValueError, match="name"):
        render_memory(_meta(name="  "))


@settings(max_examples=100, deadline=None)
@given(
    name=st.text(min_size=1, max_size=40).filter(lambda s: s.split()),
    description=st.text(max_size=60),
    subject=st.none() | st.text(min_size=1, max_size=20).filter(lambda s: s.strip() == s),
)
def test_render_memory_round_trips_any_text(
    name: str, description: str, subject: str | None
) -> None:
    meta = _meta(name=name, description=description, subject=subject)
    note = parse_note("Memory/x.md", render_memory(meta))
    assert note.problems == ()
    assert note.memory is not None
    assert note.memory.name == " ".join(name.split())
    assert note.memory.description == " ".join(description.split())
    assert note.memory.subject == (subject or None)


def test_content_hash_normalised() -> None:
    base = content_hash_normalised("Use a **real** database.")
    assert content_hash_normalised("use a real   database") == base
    assert content_hash_normalised("USE A _real_ DATABASE!\n") == base
    assert content_hash_normalised("Ｕｓｅ a `real` database。") == base
    assert content_hash_normalised("Use a mock database.") != base
    assert content_hash_normalised("snake_case") != content_hash_normalised("snakecase")
    assert len(base) == 64 and int(base, 16) >= 0


def test_a_long_name_is_cut_between_words_never_inside_a_number() -> None:
    name = "The staging server for the Atlas project and its nightly jobs listens on port 8080"
    slug = slugify(name, max_bytes=80)
    assert len(slug.encode()) <= 80 and not slug.endswith("-80")
    assert slug.endswith(("-port", "-on", "-listens")), slug
    assert slugify("x" * 150) == "x" * MAX_SLUG_BYTES  # one word: cut where it must be
