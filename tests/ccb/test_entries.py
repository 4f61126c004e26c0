"""Entry files (ccb.entries): reading list items with inline metadata, keys, minimal edits."""

from __future__ import annotations

import difflib
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccb.entries import (
    append_entry,
    decode_field,
    encode_field,
    entry_key,
    format_entry_file,
    has_entry_comments,
    is_entry_file,
    parse_entry_file,
    remove_entry_fields,
    set_entry_fields,
    supersede_entry,
)
from config.errors import EntryEditError

DESIGN = (
    "- 我在余杭区 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2-->\n"
    "- I prefer Go for services\n"
)


def _diff(before: bytes, after: bytes) -> tuple[list[str], list[str]]:
    """``(removed, added)`` lines as ``git diff`` shows them."""
    lines = list(difflib.unified_diff(before.decode().splitlines(), after.decode().splitlines(),
                                      lineterm="", n=0))
    removed = [x[1:] for x in lines if x.startswith("-") and not x.startswith("---")]
    added = [x[1:] for x in lines if x.startswith("+") and not x.startswith("+++")]
    return removed, added


def test_the_designs_line_reads_with_typed_fields() -> None:
    parsed = parse_entry_file("Memory/facts.md", DESIGN.encode())
    first, second = parsed.entries
    assert first.text == "我在余杭区"
    assert first.fields.subj == "所在地"
    assert first.fields.vf == date(2026, 5, 2)
    assert first.fields.conf == pytest.approx(0.9)
    assert first.fields.hc == 2
    assert first.fields.vt is None and first.fields.sup is None
    assert first.has_comment and first.line == 0
    # a line without the comment is an entry with empty fields
    assert second.text == "I prefer Go for services"
    assert second.fields.pairs == () and not second.has_comment
    assert parsed.problems == ()


def test_keys_stay_when_lines_are_added_above_and_when_the_comment_changes() -> None:
    before = parse_entry_file("f.md", DESIGN.encode())
    after = parse_entry_file("f.md", ("# Facts\n\n- 新的一行\n" + DESIGN.replace(
        "hc=2", "hc=2;vt=2026-06-20")).encode())
    keys_before = [e.key for e in before.entries]
    assert [e.key for e in after.entries][1:] == keys_before
    assert after.entries[1].line == 3
    assert before.entry(keys_before[0]) is not None
    assert keys_before[0] == entry_key("我在余杭区")


def test_the_same_text_twice_gets_numbered_keys() -> None:
    parsed = parse_entry_file("f.md", b"- same fact\n- other\n-   same   fact  \n")
    first, _, third = parsed.entries
    assert third.key == f"{first.key}-2"


def test_bad_metadata_is_reported_and_the_rest_reads() -> None:
    data = "- 会议改到周五 <!--m:subj=会议;vf=tomorrow;conf=high;hc=-1;junk;vt=2026-13-40-->\n"
    parsed = parse_entry_file("Memory/x.md", data.encode())
    (entry,) = parsed.entries
    assert entry.fields.subj == "会议"
    assert entry.fields.vf is None and entry.fields.conf is None and entry.fields.hc is None
    assert entry.fields.get("vf") == "tomorrow"
    reasons = [p.reason for p in parsed.problems]
    assert len(reasons) == 5, reasons
    assert all(p.kind == "entry" and p.path == "Memory/x.md:1" for p in parsed.problems)
    assert any("'junk' is not key=value" in r for r in reasons)
    assert format_entry_file(parsed) == data.encode()


def test_frontmatter_code_and_non_items_are_not_entries() -> None:
    text = (
        "---\ntype: entries\ntags:\n  - not-an-entry\n---\n"
        "# Heading\n\nA paragraph.\n"
        "```\n- code line <!--m:subj=x-->\n```\n"
        "1. numbered fact\n"
        "  * nested fact <!--m:subj=y-->\n"
        "- \n"
    )
    parsed = parse_entry_file("f.md", text.encode())
    assert [e.text for e in parsed.entries] == ["numbered fact", "nested fact"]
    assert [e.line for e in parsed.entries] == [11, 12]


def test_which_files_are_entry_files() -> None:
    body = "- a fact <!--m:subj=x-->\n"
    assert is_entry_file("Memory/facts.md", {}, body, in_scope=True)
    assert not is_entry_file("Notes/plain.md", {}, body, in_scope=False)
    assert is_entry_file("Notes/facts.md", {"type": "entries"}, "- x\n", in_scope=False)
    assert not is_entry_file("Memory/m.md", {"type": "user"}, body, in_scope=True)
    assert not is_entry_file("Memory/MEMORY.md", {}, body, in_scope=True)
    assert not is_entry_file("Memory/plain.md", {}, "- a list\n- <!-- a comment -->\n",
                             in_scope=True)
    assert not has_entry_comments("```\n- x <!--m:subj=y-->\n```\n")


def test_crlf_bom_and_a_missing_last_newline_are_kept() -> None:
    data = b"\xef\xbb\xbf- one <!--m:subj=a-->\r\n- two"
    parsed = parse_entry_file("f.md", data)
    assert [e.text for e in parsed.entries] == ["one", "two"]
    assert format_entry_file(parsed) == data
    grown = append_entry(parsed, "three", [("subj", "b")])
    assert format_entry_file(grown) == data + b"\r\n- three <!--m:subj=b-->\r\n"


def test_undecodable_bytes_give_no_entries_and_a_problem() -> None:
    parsed = parse_entry_file("f.md", b"- caf\xe9 <!--m:subj=x-->\n")
    assert parsed.entries == ()
    assert parsed.problems[0].kind == "decode"


def test_set_fields_replaces_in_place_appends_or_adds_a_comment() -> None:
    assert set_entry_fields("- a <!--m:subj=x;vt=2026-01-01-->\n", {"vt": "2026-02-02"}) == (
        "- a <!--m:subj=x;vt=2026-02-02-->\n")
    assert set_entry_fields("- a <!--m:subj=x;-->\r\n", {"vt": "2026-02-02"}) == (
        "- a <!--m:subj=x;vt=2026-02-02-->\r\n")
    assert set_entry_fields("- a  ", {"subj": "地点;城市"}) == "- a <!--m:subj=地点%3B城市-->  "
    with pytest.raises(EntryEditError, match="not a list item"):
        set_entry_fields("plain text\n", {"vt": "2026-02-02"})
    with pytest.raises(EntryEditError, match="plain word"):
        set_entry_fields("- a\n", {"v t": "x"})


def test_superseding_changes_exactly_one_line_and_adds_one() -> None:
    text = "# 关于我\n\n" + DESIGN + "- Works late <!--m:subj=habit-->\n"
    before = parse_entry_file("Memory/facts.md", text.encode())
    old = before.entries[0]
    after, new = supersede_entry(before, old.key, "我在西湖区", on=date(2026, 6, 20))
    removed, added = _diff(format_entry_file(before), format_entry_file(after))
    assert removed == ["- 我在余杭区 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2-->"]
    assert added == [
        "- 我在余杭区 <!--m:subj=所在地;vf=2026-05-02;conf=0.90;hc=2;vt=2026-06-20-->",
        f"- 我在西湖区 <!--m:subj=所在地;vf=2026-06-20;conf=0.90;sup={old.key}-->",
    ]
    assert new.fields.sup == old.key and new.fields.hc is None  # hc is never written here
    replaced = after.entry(old.key)
    assert replaced is not None
    assert replaced.is_superseded(date(2026, 6, 20), after.superseded_keys())
    assert not new.is_superseded(date(2026, 6, 20), after.superseded_keys())
    with pytest.raises(EntryEditError, match="no entry"):
        supersede_entry(before, "00000000", "x", on=date(2026, 6, 20))
    with pytest.raises(EntryEditError, match="already an entry"):
        supersede_entry(before, old.key, "Works late", on=date(2026, 6, 20))


# ----------------------------------------------------------------------------- properties

_PIECES = st.sampled_from([
    "- ", "* ", "1. ", "  - ", "-", "# ", "---", "```", "~~~", "<!--m:", "-->", "<!-- m:", "<!--",
    "subj=", "vf=2026-05-02", "vt=", "conf=0.9", "hc=3", "sup=", ";", "=", "\r", "\t", " ",
    "我在余杭区", "Works late", "é", "e\u0301", "%3B", "\u2028", "\x0b", "\x85",
])
_WORDS = st.one_of(st.sampled_from(["我在余杭区", "Works late", "tests hit a real DB", "é"]),
                   st.text(alphabet=st.characters(blacklist_characters="\n"), min_size=1,
                           max_size=8))
_VALUES = st.sampled_from(["2026-05-02", "0.90", "2", "所在地", "bad", "<!--", "a-"])
_PAIR = st.tuples(st.sampled_from(["subj", "vf", "vt", "conf", "hc", "sup", "x", " vf "]),
                  st.one_of(_VALUES,
                            st.text(alphabet=st.characters(blacklist_characters="\n"),
                                    max_size=5)))
_COMMENT = st.lists(_PAIR, max_size=4).map(
    lambda pairs: " <!--m:" + ";".join(f"{k}={v}" for k, v in pairs) + "-->")
_ITEM = st.tuples(st.sampled_from(["- ", "* ", "1. ", "  - ", "\t+ "]), _WORDS,
                  st.one_of(st.just(""), _COMMENT),
                  st.sampled_from(["\n", "\r\n", " \n", ""])).map("".join)
_JUNK = st.lists(st.one_of(_PIECES, st.text(max_size=6)), max_size=8).map("".join)
_TEXT = st.lists(st.one_of(_ITEM, _ITEM, _JUNK, st.just("\n")), max_size=30).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=_TEXT, bom=st.sampled_from([b"", b"\xef\xbb\xbf"]))
def test_parse_then_format_is_byte_identical(text: str, bom: bytes) -> None:
    data = bom + text.encode("utf-8", errors="surrogatepass")
    parsed = parse_entry_file("Memory/f.md", data)
    if parsed.problems and parsed.problems[0].kind == "decode":
        return
    assert format_entry_file(parsed) == data
    assert len({e.key for e in parsed.entries}) == len(parsed.entries)


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=200))
def test_any_bytes_read_without_raising(data: bytes) -> None:
    parsed = parse_entry_file("f.md", data)
    if not any(p.kind == "decode" for p in parsed.problems):
        assert format_entry_file(parsed) == data


@settings(max_examples=300, deadline=None)
@given(text=_TEXT, value=st.text(max_size=12), pick=st.integers(min_value=0))
def test_an_edit_leaves_every_other_line_byte_identical(text: str, value: str, pick: int
                                                        ) -> None:
    parsed = parse_entry_file("f.md", text.encode("utf-8", errors="surrogatepass"))
    if not parsed.entries or any(p.kind == "decode" for p in parsed.problems):
        return
    value = value.strip()  # values are read without the whitespace around them
    entry = parsed.entries[pick % len(parsed.entries)]
    lines = list(parsed.lines)
    lines[entry.line] = set_entry_fields(lines[entry.line], {"vt": value, "subj": "主题"})
    assert [i for i, (a, b) in enumerate(zip(parsed.lines, lines, strict=True)) if a != b] in (
        [entry.line], [])
    again = parse_entry_file("f.md", "".join(lines).encode("utf-8", errors="surrogatepass"))
    edited = next(e for e in again.entries if e.line == entry.line)
    assert edited.text == entry.text and edited.key == entry.key
    assert edited.fields.get("vt") == value and edited.fields.get("subj") == "主题"
    untouched = [p for p in entry.fields.pairs if p[0] not in ("vt", "subj")]
    assert [p for p in edited.fields.pairs if p[0] not in ("vt", "subj")] == untouched


@given(value=st.text())
def test_field_values_survive_encoding(value: str) -> None:
    encoded = encode_field(value)
    assert not any(bad in encoded for bad in (";", "\n", "\r", "-->", "<!--"))
    assert decode_field(encoded) == value


def test_a_line_that_would_not_read_back_as_the_entry_is_refused() -> None:
    fenced = parse_entry_file("Memory/facts.md", b"- a fact <!--m:subj=x-->\n```\n")
    with pytest.raises(EntryEditError, match="would not read back"):  # ends inside a fence
        append_entry(fenced, "b fact")
    with pytest.raises(EntryEditError, match="would not read back"):
        supersede_entry(fenced, fenced.entries[0].key, "b fact", on=date(2026, 6, 20))
    plain = parse_entry_file("Memory/facts.md", b"- a fact <!--m:subj=x-->\n")
    with pytest.raises(EntryEditError, match="would not read back"):  # the text's own comment
        append_entry(plain, "hello <!--m:vt=2020-01-01-->")
    with_pairs = append_entry(plain, "hello <!--m:vt=2020-01-01-->", [("subj", "y")])
    assert with_pairs.entries[-1].text == "hello <!--m:vt=2020-01-01-->"
    assert with_pairs.entries[-1].fields.vt is None


def test_removing_a_field_changes_only_that_pair() -> None:
    line = "  - 我在西湖区 <!--m: subj=所在地 ;possible_duplicate=3f2a9c1d;vf=2026-06-20 -->\r\n"
    assert remove_entry_fields(line, ["possible_duplicate"]) == (
        "  - 我在西湖区 <!--m: subj=所在地 ;vf=2026-06-20 -->\r\n")
    assert remove_entry_fields(line, ["sup"]) == line
    assert remove_entry_fields("- no comment\n", ["vt"]) == "- no comment\n"
    with pytest.raises(EntryEditError):
        remove_entry_fields("plain text\n", ["vt"])
