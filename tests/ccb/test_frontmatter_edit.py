"""Minimal frontmatter edits: only the changed keys' lines differ (DESIGN.md, shared cases)."""

from __future__ import annotations

import datetime as dt
import difflib
import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccb import frontmatter_edit as fe
from ccb.frontmatter import load_properties, split_frontmatter
from ccb.frontmatter_edit import render_scalar, set_properties
from ccb.parse import decode_note_bytes, parse_note
from config.errors import FrontmatterEditError, exit_code_for


def _changed(old: bytes, new: bytes) -> list[tuple[str, list[str], list[str]]]:
    """Differing line groups (line ends kept): ``[(tag, old_lines, new_lines)]``."""
    a = old.decode("utf-8-sig").splitlines(keepends=True)
    b = new.decode("utf-8-sig").splitlines(keepends=True)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [
        (tag, a[i1:i2], b[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    ]


def test_case_03_adds_one_line_byte_for_byte(cases_dir: Path) -> None:
    case = cases_dir / "03-dump-reorders-keys-drops-comments"
    data = (case / "vault" / "Project kiln.md").read_bytes()
    expected = (case / "expected_after_adding_memory_id.md").read_bytes()
    assert set_properties(data, {"memory_id": "7f3c2a10"}) == expected


def test_case_03_rewrites_one_key_in_place(cases_dir: Path) -> None:
    data = (cases_dir / "03-dump-reorders-keys-drops-comments/vault/Project kiln.md").read_bytes()
    out = set_properties(data, {"status": "done"})
    assert _changed(data, out) == [("replace", ["status: active\n"], ["status: done\n"])]


def test_case_04_keeps_the_bom(cases_dir: Path) -> None:
    data = (cases_dir / "04-utf8-bom/vault/Saved in Notepad.md").read_bytes()
    out = set_properties(data, {"dreamd_test": 1})
    assert out.startswith(b"\xef\xbb\xbf---\n") and out.count(b"\xef\xbb\xbf") == 1
    assert _changed(data, out) == [("insert", [], ["dreamd_test: 1\n"])]
    assert parse_note("n.md", out).properties["aliases"] == ["Notepad note"]


def test_case_05_keeps_crlf_and_eof_fence(cases_dir: Path) -> None:
    vault = cases_dir / "05-crlf-and-eof-fence/vault"
    windows = (vault / "Windows note.md").read_bytes()
    out = set_properties(windows, {"status": "final", "new": "x"})
    assert out == windows.replace(b"status: draft\r\n", b"status: final\r\nnew: x\r\n")
    only = (vault / "Properties only.md").read_bytes()
    assert set_properties(only, {"a": 1}) == only[:-3] + b"a: 1\n---"
    mixed = (vault / "Mixed endings.md").read_bytes()
    out = set_properties(mixed, {"title": "Renamed"})
    assert out == mixed.replace(b"title: Mixed endings\n", b"title: Renamed\n")
    assert b"---\r\n" in out and b"status: ok\r\n" in out


@pytest.mark.parametrize("name", ["Empty block.md", "Blank line block.md", "Comment only.md"])
def test_case_10_empty_blocks_get_the_key_inside(cases_dir: Path, name: str) -> None:
    data = (cases_dir / "10-empty-frontmatter-and-values/vault" / name).read_bytes()
    out = set_properties(data, {"dreamd_test": 1})
    assert b"{}" not in out
    assert _changed(data, out) == [("insert", [], ["dreamd_test: 1\n"])]
    assert parse_note(name, out).properties == {"dreamd_test": 1}


def test_case_10_empty_values_stay(cases_dir: Path) -> None:
    data = (cases_dir / "10-empty-frontmatter-and-values/vault/Empty values.md").read_bytes()
    out = set_properties(data, {"tags": ["a"], "related": None})
    assert _changed(data, out) == [
        ("insert", [], ["  - a\n"]),
        ("replace", ['related: ""\n'], ["related:\n"]),
    ]


@pytest.mark.parametrize("name", ["List block.md", "Scalar block.md"])
def test_case_10_non_mapping_blocks_are_refused(cases_dir: Path, name: str) -> None:
    data = (cases_dir / "10-empty-frontmatter-and-values/vault" / name).read_bytes()
    with pytest.raises(FrontmatterEditError, match=r"not a mapping|a list|single value") as info:
        set_properties(data, {"x": 1}, path=name)
    assert name in str(info.value) and exit_code_for(info.value) == 8


@pytest.mark.parametrize(
    "data",
    [
        b"---\ntitle: [unclosed\n---\nbody\n",
        b"---\n{a: 1, b: 2}\n---\nbody\n",
        b"---\ncreated: {{date}}\n---\n",
        b"\xff\xfe\xfd not utf-8",
    ],
)
def test_unreadable_or_unsafe_blocks_are_refused(data: bytes) -> None:
    with pytest.raises(FrontmatterEditError):
        set_properties(data, {"x": 1})


def test_file_without_frontmatter_gets_a_block() -> None:
    assert (
        set_properties(b"# Title\r\nbody\r\n", {"a": 1})
        == b"---\r\na: 1\r\n---\r\n# Title\r\nbody\r\n"
    )
    assert set_properties(b"", {"a": "b"}) == b"---\na: b\n---\n"
    bom = b"\xef\xbb\xbfbody"
    assert set_properties(bom, {"a": 1}) == b"\xef\xbb\xbf---\na: 1\n---\nbody"
    unclosed = b"---\nnot a block\n"
    out = set_properties(unclosed, {"a": 1})
    assert out == b"---\na: 1\n---\n" + unclosed


def test_block_values_are_replaced_whole_and_comments_kept() -> None:
    data = (
        b"---\n"
        b"aliases:\n  - One\n  - Two\n"
        b"# about note\n\n"
        b"note: |\n  line\n  two\n"
        b'"quoted key" : old  # keep me\n'
        b"last: 1\n"
        b"---\nbody\n"
    )
    out = set_properties(data, {"aliases": "single", "note": "short", "quoted key": "new"})
    assert out == (
        b"---\n"
        b"aliases: single\n"
        b"# about note\n\n"
        b"note: short\n"
        b'"quoted key" : new  # keep me\n'
        b"last: 1\n"
        b"---\nbody\n"
    )


def test_remove_deletes_every_occurrence_and_unchanged_is_identity() -> None:
    data = b"---\na: 1\nb:\n  - x\nc: 3\na: 2\n---\n"
    assert set_properties(data, {}, remove=["b", "a"]) == b"---\nc: 3\n---\n"
    assert set_properties(data, {"c": 3}, remove=["missing"]) is data
    with pytest.raises(ValueError, match="both set and removed"):
        set_properties(data, {"a": 1}, remove=["a"])


def test_duplicate_key_edits_the_one_that_counts() -> None:
    data = b"---\na: 1\nb: 2\na: 3\n---\n"
    assert set_properties(data, {"a": 4}) == b"---\na: 1\nb: 2\na: 4\n---\n"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("[[Tests may use mocks]]", '"[[Tests may use mocks]]"'),
        ("yes", '"yes"'),
        ("007", '"007"'),
        ("12:30", '"12:30"'),
        ("2024-01-15", '"2024-01-15"'),
        ("true", '"true"'),
        ("1.5", '"1.5"'),
        ("a: b", '"a: b"'),
        ("#tag", '"#tag"'),
        ("", '""'),
        (" padded", '" padded"'),
        ("two\nlines", '"two\\nlines"'),
        ("Tests hit a real database", "Tests hit a real database"),
        ("测试用真实数据库", "测试用真实数据库"),
        (True, "true"),
        (3, "3"),
        (0.25, "0.25"),
        (dt.date(2026, 6, 15), "2026-06-15"),
        (dt.datetime(2026, 6, 15, 3, 1, tzinfo=dt.UTC), "2026-06-15T03:01:00Z"),
        (
            dt.datetime(2026, 6, 15, 3, 1, tzinfo=dt.timezone(dt.timedelta(hours=2))),
            "2026-06-15T03:01:00+02:00",
        ),
    ],
)
def test_scalars_are_quoted_only_when_needed(value: object, text: str) -> None:
    assert render_scalar(value) == text  # type: ignore[arg-type]
    out = set_properties(b"---\n---\n", {"k": value})  # type: ignore[dict-item]
    assert parse_note("n.md", out).properties == {"k": value}


def test_non_finite_float_is_refused() -> None:
    with pytest.raises(ValueError, match="nan"):
        set_properties(b"", {"k": float("nan")})


def test_nested_values_render_and_read_back() -> None:
    value = {"a": [1, [2, "x"], {"b": None}], "empty": [], "map": {}, "d": dt.date(2020, 1, 2)}
    out = set_properties(b"---\nz: 0\n---\n", {"nested": value})  # type: ignore[dict-item]
    assert parse_note("n.md", out).properties == {"z": 0, "nested": value}


def test_utf16_note_stays_utf16() -> None:
    data = b"\xff\xfe" + "---\r\ntitle: x\r\n---\r\nbody\r\n".encode("utf-16-le")
    out = set_properties(data, {"a": 1})
    text, has_bom, encoding, problems = decode_note_bytes(out, "n.md")
    assert (has_bom, encoding, problems) == (True, "utf-16-le", ())
    assert text == "---\r\ntitle: x\r\na: 1\r\n---\r\nbody\r\n"


# --------------------------------------------------------------------------- property test

_keys = st.from_regex(r"[a-z][a-z0-9_]{0,11}", fullmatch=True)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.text(max_size=30),
    st.dates(),
    st.datetimes(timezones=st.just(dt.UTC)).map(lambda d: d.replace(microsecond=0)),
)
_values = st.one_of(_scalars, st.lists(_scalars.filter(lambda v: v is not None), max_size=4))
_EXISTING = (
    b"---\n# keep this comment\ntitle: Kiln\ntags: [a, b]\naliases:\n  - K\n"
    b'priority: "2"\ncreated: 2024-01-15\n---\nBody text.\n'
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(updates=st.dictionaries(_keys, _values, max_size=6))
def test_set_then_parse_gives_values_back_and_keeps_other_lines(updates: dict) -> None:
    out = set_properties(_EXISTING, updates)
    props, problems = load_properties(split_frontmatter(out.decode()).raw, "n.md")
    assert problems == ()
    old, _ = load_properties(split_frontmatter(_EXISTING.decode()).raw, "n.md")
    assert props == {**old, **updates}
    for _tag, old_lines, _new_lines in _changed(_EXISTING, out):
        for line in old_lines:
            key = line.split(":", 1)[0].strip()
            assert key in updates or line.startswith("  - "), line
    untouched = [
        line for line in _EXISTING.decode().splitlines() if line.split(":")[0] not in updates
    ]
    new_lines = out.decode().splitlines()
    assert all(line in new_lines for line in untouched if not line.startswith("  - "))


# --------------------------------------------------------------------------- the whole corpus


@pytest.mark.slow
def test_every_obsidian_help_note_changes_by_one_line(corpora_dir: Path, tmp_path: Path) -> None:
    root = tmp_path / "obsidian-help"
    shutil.copytree(corpora_dir / "obsidian-help", root)
    notes = sorted(root.rglob("*.md"))
    assert len(notes) > 5000
    with_block = 0
    for note in notes:
        old = note.read_bytes()
        new = set_properties(old, {"dreamd_test": 1}, path=str(note))
        note.write_bytes(new)
        had_block = split_frontmatter(decode_note_bytes(old, "n")[0]).raw is not None
        eol = "\r\n" if old.count(b"\r\n") * 2 > old.count(b"\n") else "\n"
        expected_new = (
            ["dreamd_test: 1" + eol]
            if had_block
            else ["---" + eol, "dreamd_test: 1" + eol, "---" + eol]
        )
        changes = _changed(old, note.read_bytes())
        assert changes == [("insert", [], expected_new)], note
        if had_block:
            with_block += 1
            after = new.decode("utf-8-sig")
            assert after.index("dreamd_test: 1") < after.index("\n---", 3) + 1
        else:
            assert new.endswith(old) and new.startswith(b"---")
        assert parse_note("n.md", new).properties["dreamd_test"] == 1
    assert with_block > 5000


def _spans(compose: object, block: list[str]) -> list[tuple[str, int, int, object, str]]:
    original = fe._compose
    fe._compose = compose  # type: ignore[assignment]
    try:
        spans, _ = fe._composed_keys("x", block)
    finally:
        fe._compose = original
    return [(s.key, s.start, s.end, s.prefix, s.tail) for s in spans]


def test_libyaml_and_ruamel_locate_the_same_keys(corpora_dir: Path, cases_dir: Path) -> None:
    """The fast composer (libyaml) and ruamel.yaml give the same key spans on every
    frontmatter block of the corpora and the cases that both can read."""
    compared = 0
    for path in sorted([*corpora_dir.rglob("*.md"), *cases_dir.rglob("*.md")]):
        text, _, _, problems = decode_note_bytes(path.read_bytes(), path.name)
        split = split_frontmatter(text) if not problems else None
        if split is None or not split.raw:
            continue
        block = split.raw.splitlines(keepends=True)
        try:
            fast = _spans(lambda raw: yaml.compose(raw, Loader=yaml.CSafeLoader), block)
        except Exception:
            continue  # libyaml refuses it: ruamel.yaml is used, nothing to compare
        try:
            slow = _spans(fe._RUAMEL.compose, block)
        except Exception:
            continue
        assert fast == slow, path
        compared += 1
    assert compared > 1000


def test_a_plain_block_has_the_key_spans_its_node_tree_gives(corpora_dir: Path,
                                                           cases_dir: Path) -> None:
    """The key spans of a block of ``key: value`` lines, found without composing it, are
    those its YAML node tree gives, on the corpora, the cases and blocks of every line
    ending, blank lines and quoted values."""
    made = ["a: 1\n\nb: x y\n", "a: 1\r\nb: 'q # r'\r\n\r\n", "a:\rb: \"x: y\"\rc: C#",
            "name: 过敏\ntype: user\nvalid_to:\n\n\n"]
    blocks = [raw.splitlines(keepends=True) for raw in made]
    for path in sorted([*corpora_dir.rglob("*.md"), *cases_dir.rglob("*.md")]):
        text, _, _, problems = decode_note_bytes(path.read_bytes(), path.name)
        split = split_frontmatter(text) if not problems else None
        if split is not None and split.raw:
            blocks.append(split.raw.splitlines(keepends=True))
    compared = 0
    for block in blocks:
        plain = fe._plain_keys(block)
        if plain is None:
            continue
        composed = _spans(lambda raw: yaml.compose(raw, Loader=yaml.CSafeLoader), block)
        assert [(s.key, s.start, s.end, s.prefix, s.tail) for s in plain] == composed, block
        compared += 1
    assert compared > 100
