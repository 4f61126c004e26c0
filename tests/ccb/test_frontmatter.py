"""Frontmatter splitting and Obsidian-style YAML loading (shared cases 01, 03, 06, 08, 10)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ccb.frontmatter import (
    TEMPLATE_PROBLEM,
    ObsidianYAMLHandler,
    load_properties,
    plain_block,
    split_frontmatter,
)
from ccb.parse import parse_note

# --------------------------------------------------------------------------- split

SPLITS = [
    # text, raw, body, body_line
    ("---\na: 1\n---\nbody\n", "a: 1\n", "body\n", 3),
    ("---\r\na: 1\r\n---\r\nbody\r\n", "a: 1\r\n", "body\r\n", 3),
    ("---\na: 1\n...\nbody", "a: 1\n", "body", 3),
    ("---\na: 1\n---", "a: 1\n", "", 3),  # closing fence at EOF without newline
    ("---\n---\nbody", "", "body", 2),
    ("\ufeff---\na: 1\n---\nx", "a: 1\n", "x", 3),
    ("---\ntitle: a --- b\n---\n---\nmore\n", "title: a --- b\n", "---\nmore\n", 3),
    ("---\na: 1\n", None, "---\na: 1\n", 0),  # never closed: no block
    ("--- \na: 1\n---\n", None, "--- \na: 1\n---\n", 0),  # first line is not exactly ---
    ("----\na: 1\n---\n", None, "----\na: 1\n---\n", 0),
    ("text\n---\na: 1\n---\n", None, "text\n---\na: 1\n---\n", 0),
    ("", None, "", 0),
    ("---", None, "---", 0),
    ("---\na: 1\n ---\n---\nz", "a: 1\n ---\n", "z", 4),
]


@pytest.mark.parametrize(("text", "raw", "body", "body_line"), SPLITS)
def test_split_frontmatter(text: str, raw: str | None, body: str, body_line: int) -> None:
    split = split_frontmatter(text)
    assert (split.raw, split.body, split.body_line) == (raw, body, body_line)


# --------------------------------------------------------------------------- values

UTC_PLUS_1 = dt.timezone(dt.timedelta(hours=1))

VALUES = [
    ("true", True),
    ("True", True),
    ("FALSE", False),
    ("yes", "yes"),
    ("no", "no"),
    ("NO", "NO"),
    ("on", "on"),
    ("off", "off"),
    ("y", "y"),
    ("n", "n"),
    ("007", "007"),
    ("0", 0),
    ("-12", -12),
    ("1_000", "1_000"),
    ("0x1F", "0x1F"),
    ("12:30", "12:30"),
    ("1:02:03", "1:02:03"),
    ("1.5", 1.5),
    ("1e3", 1000.0),
    ("1.2.3", "1.2.3"),
    (".inf", ".inf"),
    ("2024-03-05", dt.date(2024, 3, 5)),
    ("2024-03-05T18:45:00+01:00", dt.datetime(2024, 3, 5, 18, 45, tzinfo=UTC_PLUS_1)),
    ("2024-03-05T18:45:00Z", dt.datetime(2024, 3, 5, 18, 45, tzinfo=dt.UTC)),
    ("2024-03-05 18:45", "2024-03-05 18:45"),
    ("2024-02-30", "2024-02-30"),
    ("=", "="),
    ("", None),
    ("~", None),
    ("null", None),
    ('"[[Note]]"', "[[Note]]"),
    ("[SE, NO, FI]", ["SE", "NO", "FI"]),
    ("{a: no, 1: x}", {"a": "no", "1": "x"}),
]


@pytest.mark.parametrize(("yaml_text", "expected"), VALUES)
def test_values_read_as_obsidian_does(yaml_text: str, expected: object) -> None:
    properties, problems = load_properties(f"key: {yaml_text}\n", "n.md")
    assert problems == ()
    assert properties["key"] == expected
    assert type(properties["key"]) is type(expected)


def test_datetime_keeps_its_utc_offset() -> None:
    properties, _ = load_properties("u: 2024-03-05T18:45:00+01:00\n", "n.md")
    value = properties["u"]
    assert isinstance(value, dt.datetime)
    assert value.utcoffset() == dt.timedelta(hours=1)


def test_handler_is_a_python_frontmatter_handler() -> None:
    import frontmatter

    post = frontmatter.loads("---\nanswer: no\n---\nbody", handler=ObsidianYAMLHandler())
    assert post.metadata == {"answer": "no"}


def test_non_string_keys_become_text() -> None:
    properties, _ = load_properties("true: a\n2024-01-01: b\n3: c\nnull: d\n", "n.md")
    assert properties == {"true": "a", "2024-01-01": "b", "3": "c", "null": "d"}


def test_alias_bomb_and_recursive_alias_do_not_hang() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(20)
    )
    properties, problems = load_properties(bomb, "n.md")  # 9 * 3**20 values once expanded
    assert properties == {}
    assert [p.kind for p in problems] == ["yaml"] and "aliases" in problems[0].reason
    recursive, _ = load_properties("x: &r [1, *r]\n", "n.md")
    assert recursive["x"] == [1, None]


# --------------------------------------------------------------------------- problems


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        ("- one\n- two\n", "properties"),
        ("just a sentence\n", "properties"),
        ("42\n", "properties"),
        ("created: {[1]: 2}\n", "yaml"),
        ('name: "quoted" then more\n', "yaml"),
        ("a: [1, 2\n", "yaml"),
        ("a:\tb\n\tc: d\n", "yaml"),
        ("a: !!python/object:os.system x\n", "yaml"),
        ("a: !custom x\n", "yaml"),
        ("<<: 3\n", "yaml"),
        ("a: [" * 5000, "yaml"),
    ],
)
def test_unusable_blocks_are_problems_not_crashes(raw: str, kind: str) -> None:
    properties, problems = load_properties(raw, "n.md")
    assert properties == {}
    assert [p.kind for p in problems] == [kind]
    assert problems[0].path == "n.md"
    assert problems[0].reason


def test_yaml_problem_names_the_file_line() -> None:
    _, problems = load_properties("title: ok\ncreated: {[1]: 2}\n", "t.md")
    # Block line 2 is file line 3 (the opening fence is line 1).
    assert problems[0].reason == (
        "frontmatter is not valid YAML (line 3, column 11): braces ({...} or {{...}}) that "
        "YAML cannot read as a value or a name: put them in quotes")


@pytest.mark.parametrize(("raw", "said"), [
    ("tags: [reading\n作者: 村上春树\n", "(line 3, column 3): a list opened with [ and not "
     "closed"),
    ("title: Note: with colon\n", "(line 2, column 12): a colon and a space inside a value: "
     "put the value in quotes"),
    ("标题: 读书: 笔记\n", "(line 2, column 7): a colon and a space inside a value"),
    ('a: "open\n', "(line 3, column 1): a quote opened and not closed"),
    ("x: {a: 1\n", "(line 3, column 1): a { opened and not closed"),
    ("a: b\nthis line\nc: d\n", "(line 4, column 1): a line that is not 'name: value'"),
    ("a:\n  - x\n  y: 2\n", "(line 4, column 3): a line inside a list that is not a '- item'"),
    ("k: v\n- item\n", "(line 3, column 1): something where no property can start"),
    ("x: *nope\n", "(line 2, column 4): a value starting with * (an alias of nothing)"),
    ("a: @x\n", "(line 2, column 4): a character YAML reserves (@, `, a tab)"),
    ("\tkey: v\n", "(line 2, column 1): a character YAML reserves (@, `, a tab)"),
    ('a: "\\q"\n', "(line 2, column 5): a backslash in double quotes: use single quotes"),
])
def test_a_yaml_problem_is_said_in_plain_words_with_its_line(raw: str, said: str) -> None:
    """The parser's words ("while parsing a flow sequence did not find expected ',' or
    ']'", "found unhashable key") mean nothing to a person who typed properties in
    Obsidian: the reason says what is wrong there, and where."""
    _, problems = load_properties(raw, "n.md")
    assert [p.kind for p in problems] == ["yaml"]
    assert problems[0].reason.startswith(f"frontmatter is not valid YAML {said}"), \
        problems[0].reason
    for parser_word in ("scalar", "token", "flow", "unhashable", "indicator", "block"):
        assert parser_word not in problems[0].reason


@pytest.mark.parametrize("raw", [None, "", "\n", "  \n\n", "# only a comment\n", "---\n"])
def test_empty_blocks_have_no_properties_and_no_problem(raw: str | None) -> None:
    assert load_properties(raw, "n.md") == ({}, ())


@given(st.text(max_size=300))
def test_load_properties_never_raises(raw: str) -> None:
    properties, problems = load_properties(raw, "n.md")
    assert isinstance(properties, dict)
    assert all(p.reason for p in problems)


@given(st.text(alphabet=st.sampled_from(list("ab:-[]{}&*!|>'\"#\n 0127.,?%@`~\t")), max_size=200))
def test_load_properties_never_raises_on_yaml_like_text(raw: str) -> None:
    properties, problems = load_properties(raw, "n.md")
    assert isinstance(properties, dict)
    assert not (properties and problems)


# --------------------------------------------------------------------------- shared cases


def _read(path: Path) -> bytes:
    return path.read_bytes()


def test_case_01_iso_dates_and_yes(cases_dir: Path) -> None:
    path = cases_dir / "01-yaml-iso-dates/vault/Garden log.md"
    note = parse_note("Garden log.md", _read(path))
    assert note.problems == ()
    props = note.properties
    assert props["created"] == dt.date(2024, 3, 5)
    assert type(props["created"]) is dt.date
    assert props["updated"] == dt.datetime(2024, 3, 5, 18, 45, tzinfo=UTC_PLUS_1)
    updated = props["updated"]
    assert isinstance(updated, dt.datetime)
    assert updated.utcoffset() == dt.timedelta(hours=1)
    assert props["reviewed"] == "2024-03-05 18:45"
    assert props["season"] == 2024
    assert props["draft"] == "yes"
    assert note.frontmatter_raw is not None
    assert "updated: 2024-03-05T18:45:00+01:00\n" in note.frontmatter_raw


def test_case_03_properties_read_right(cases_dir: Path) -> None:
    path = cases_dir / "03-dump-reorders-keys-drops-comments/vault/Project kiln.md"
    note = parse_note("Project kiln.md", _read(path))
    assert note.problems == ()
    assert list(note.properties) == ["title", "status", "tags", "aliases", "priority", "created"]
    assert note.properties["priority"] == "2"
    assert note.properties["created"] == dt.date(2024, 1, 15)
    assert note.tags == ("pottery", "studio")
    assert note.aliases == ("Kiln build",)
    assert note.frontmatter_raw is not None
    assert note.frontmatter_raw.startswith("# properties edited by hand; keep this comment\n")


def test_case_08_yaml11_booleans_stay_text(cases_dir: Path) -> None:
    note = parse_note(
        "Nordic trip.md", _read(cases_dir / "08-yaml11-booleans/vault/Nordic trip.md")
    )
    props = note.properties
    assert props["country"] == "NO"
    assert props["countries"] == ["SE", "NO", "FI", "IS"]
    assert (props["answer"], props["heating"], props["lights"]) == ("no", "on", "off")
    assert (props["confirmed"], props["visa"]) == ("y", "n")
    assert not any(isinstance(v, bool) for v in props.values())


@pytest.mark.parametrize(
    ("name", "problem_kinds"),
    [
        ("Empty block.md", []),
        ("Blank line block.md", []),
        ("Comment only.md", []),
        ("Empty values.md", []),
        ("Scalar block.md", ["properties"]),
        ("List block.md", ["properties"]),
    ],
)
def test_case_10_empty_and_non_mapping_blocks(
    cases_dir: Path, name: str, problem_kinds: list[str]
) -> None:
    note = parse_note(name, _read(cases_dir / "10-empty-frontmatter-and-values/vault" / name))
    assert [p.kind for p in note.problems] == problem_kinds
    assert note.body.strip()  # the note is still indexed
    if name != "Empty values.md":
        assert note.properties == {}
    assert note.tags == ()
    assert note.aliases == ()


def test_case_10_null_tags_and_aliases_are_empty(cases_dir: Path) -> None:
    path = cases_dir / "10-empty-frontmatter-and-values/vault/Empty values.md"
    note = parse_note("Empty values.md", _read(path))
    assert note.tags == ()
    assert note.aliases == ()
    assert note.properties["cssclasses"] == []
    assert note.properties["related"] == ""
    assert "None" not in note.tags


def test_a_billion_laughs_block_is_a_problem_not_a_hang() -> None:
    from ccb.parse import parse_note

    levels = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        levels.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    data = ("---\n" + "\n".join(levels) + "\n---\nThe body still counts.\n").encode()
    note = parse_note("bomb.md", data)
    assert note.properties == {}
    assert [p.kind for p in note.problems] == ["yaml"]
    assert "aliases" in note.problems[0].reason
    assert note.body == "The body still counts.\n"


def test_a_templates_placeholders_are_read_as_text(corpora_dir: Path) -> None:
    """kepano's vault: 28 templates write ``created: {{date}}`` (a YAML mapping whose key is a
    mapping, which does not load). The placeholders are read as the text they are, so the
    properties are indexed; the block is still no YAML, so the file carries one problem
    (kind ``template``, with the parser's reason) and is only read."""
    from ccb.parse import parse_note

    path = corpora_dir / "kepano-obsidian" / "Templates" / "Recipe Template.md"
    note = parse_note("Templates/Recipe Template.md", path.read_bytes())
    assert [(p.kind, p.reason) for p in note.problems] == [(
        TEMPLATE_PROBLEM, "a template: its properties hold placeholders ({{date}} …) (line "
        "10) that are YAML only once a note is made from it; read with the placeholders as "
        "text")]
    assert note.properties["created"] == "{{date}}"
    assert note.properties["categories"] == ["[[Recipes]]"]
    props, problems = load_properties("title: <% tp.file.title %>\ntags:\n  - {{tag}}\n", "T.md")
    assert [p.kind for p in problems] == [TEMPLATE_PROBLEM]
    assert props == {"title": "<% tp.file.title %>", "tags": ["{{tag}}"]}
    assert load_properties("title: '{{title}}'\n", "T.md") == ({"title": "{{title}}"}, ())
    _props, problems = load_properties("a: {{date}\nb: [unclosed\n", "x.md")
    assert problems and problems[0].kind == "yaml"  # not a template: still reported


# --------------------------------------------------------------------------- plain blocks


def _same(a: object, b: object) -> bool:
    """Equal, of the same types all the way down, keys in the same order, same offsets."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dt.datetime) and isinstance(b, dt.datetime):
        return a == b and a.utcoffset() == b.utcoffset()
    return a == b


def _parsed(raw: str) -> object:
    """The YAML parser's reading of ``raw`` (what the plain reader must equal)."""
    return ObsidianYAMLHandler().load(raw)


def test_plain_blocks_of_the_corpora_read_as_the_yaml_parser_reads_them(
        corpora_dir: Path) -> None:
    roots = [corpora_dir, Path(__file__).resolve().parents[2] / "vault_example"]
    plain = 0
    for file in (f for root in roots for f in sorted(root.rglob("*.md"))):
        raw = split_frontmatter(file.read_bytes().decode("utf-8", "replace")).raw
        found = plain_block(raw) if raw else None
        if found is not None:
            plain += 1
            assert _same(found, _parsed(raw)), file
    assert plain >= 100  # the quick reader is used, not left out everywhere


PLAIN_READS = [
    "name: A real instance\ntype: feedback\npinned: false\nvalid_to:\n",
    "created: 2026-10-10T18:53:29Z\nupdated: 2026-10-31 14:59:32+02:00\nday: 2026-10-19\n",
    "a: yes\nb: NO\nc: 007\nd: 12:30\ne: 2024-03-05 18:45\nf: 2024-02-30\ng: 1.5e3\n",
    "name: 过敏：花生\ndescription: 用户对花生过敏 (allergy)\nowner: 张伟\n",
    "n: C# and F#\nm: a:b\nq: \"[[Note]]\"\ns: 'its'\nt: 'x: y # z'\nu: \"a: b\"\n",
    "a: 1\r\nb: two\r\n\r\nc: true\r\n",
    "a: 1\rb: 2\r",
    "x: ~\ny: null\nz: NULL\nw: =\nv: .5\nu: +1\nt: 0x1F\ns: 1_000\n",
    "a:    spaced value   \nb: text with [brackets] and {braces}, commas\n",
    "key_with-dash: v\n_under: w\n",
]

PARSER_ONLY = [
    "a:\n  - x\n", "a: [x, y]\n", "a: {b: 1}\n", "a: &x v\nb: *x\n", "a: !!str 1\n",
    "a: b: c\n", "a: b #c\n", "a: 'it''s\n", "a: \"x\\ty\"\n", "a: x\tz\n", "a: x\u2028y\n",
    "a: x\x85y\n", "a: \ufeffx\n", "true: x\n", "null: x\n", "1: x\n", "a: 1\na: 2\n",
    "  a: 1\n", "a: 1\n  b\n", "# comment\na: 1\n", "a: 1 # one\n", "a: -1\n", "a: x:\n",
    "<<: {b: 1}\n", "a: |\n  text\n", "a: >\n  text\n", "a: %x\n", "a: @x\n", "a: `x`\n",
    "a: \"x\" y\n", "'a': 1\n", "\"a\": 1\n", "a : 1\n", "a:1\n", "a: ?x\n", "a: 1\n \nb: 2\n",
    "- a\n- b\n", "just text\n", "a: x\x00\n", "a: x\x1b\n",
]


@pytest.mark.parametrize("raw", PLAIN_READS)
def test_a_block_of_plain_lines_reads_as_the_yaml_parser_reads_it(raw: str) -> None:
    found = plain_block(raw)
    assert found is not None, raw
    assert _same(found, _parsed(raw))


@pytest.mark.parametrize("raw", PARSER_ONLY)
def test_any_other_block_is_left_to_the_yaml_parser(raw: str) -> None:
    assert plain_block(raw) is None


_LINE_PARTS = st.sampled_from(["a", "b", "key", "true", "null", "x", "中文", "2026-10-10",
                               "T18:53:29Z", " 14:59:32", "+02:00", "1", "0", "007", ".5",
                               "e3", ":", ": ", " #", "#", "'", '"', "\\", "-", "[", "]", "{",
                               "}", ",", "&", "*", "!", "|", ">", "?", "~", "=", "<<", " ",
                               "  ", "\t", "\u2028", "\ufeff", "\x85", "\xa0", "\n", "\r\n",
                               "\r", "yes", "on", "1.0", "_"])


@given(st.lists(_LINE_PARTS, max_size=40).map("".join))
def test_the_plain_reader_never_reads_a_block_otherwise_than_the_yaml_parser(raw: str
                                                                              ) -> None:
    found = plain_block(raw)
    if found is not None:
        assert _same(found, _parsed(raw)), raw


@given(st.lists(st.tuples(st.sampled_from(["a", "b", "name", "type", "null", "yes"]),
                          st.lists(_LINE_PARTS, max_size=6).map("".join)), max_size=6))
def test_the_plain_reader_agrees_on_key_value_lines(pairs: list[tuple[str, str]]) -> None:
    raw = "".join(f"{key}: {value}\n" for key, value in pairs)
    found = plain_block(raw)
    if found is not None:
        assert _same(found, _parsed(raw)), raw


def test_load_properties_reads_a_plain_block_as_before() -> None:
    raw = "name: x\ncreated: 2026-10-10T18:53:29Z\npinned: false\nvalid_to:\nversion: 2\n"
    assert plain_block(raw) is not None
    properties, problems = load_properties(raw, "n.md")
    assert problems == ()
    assert _same(properties, {"name": "x", "created": dt.datetime(2026, 10, 10, 18, 53, 29,
                                                                   tzinfo=dt.UTC),
                              "pinned": False, "valid_to": None, "version": 2})


@given(st.lists(st.sampled_from(["---", "...", "\n", "-", ".", "a: 1", " ", "--- ", "----",
                                 "中文"]), max_size=24).map(lambda parts: "---\n" + "".join(parts)))
def test_a_text_of_lf_lines_splits_as_its_crlf_twin(text: str) -> None:
    """The search for the closing fence of a text with ``\\n`` line breaks alone finds the
    block that reading it line by line finds (its ``\\r\\n`` twin is read line by line)."""
    quick = split_frontmatter(text)
    twin = split_frontmatter(text.replace("\n", "\r\n"))
    assert quick.body_line == twin.body_line
    assert quick.raw == (None if twin.raw is None else twin.raw.replace("\r\n", "\n"))
    assert quick.body == twin.body.replace("\r\n", "\n")
