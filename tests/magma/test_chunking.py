"""Chunking: coverage, size bounds, determinism and heading paths (hypothesis + tables)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ccb.model import MemoryMeta, Note
from ccb.parse import parse_note
from magma.chunking import (
    HEADING_MAX_CHARS,
    HEADING_SEPARATOR,
    asking_turns,
    chunk_hash,
    chunk_note,
)

_WS = re.compile(r"\s+")


def squash(text: str) -> str:
    return _WS.sub("", text)


words = st.text(
    alphabet=st.sampled_from(list("abcdefgh xyz.!?。睡眠质量🙂'\"")), min_size=1, max_size=300
)
lines = st.one_of(
    words,
    st.builds(
        lambda lvl, t: "#" * lvl + " " + t.strip().replace("#", "") + "H", st.integers(1, 4), words
    ),
    st.just(""),
    st.just("```"),
    st.builds(lambda n: "word " * n, st.integers(50, 700)),
    st.builds(lambda n: "长" * n, st.integers(50, 2000)),
    st.builds(lambda who, t: who + t,  # turns of a conversation
              st.sampled_from(["**User:** ", "**Assistant:** ", "用户：", "> Bob: ", "Q: "]),
              words),
)
bodies = st.lists(lines, max_size=40).map("\n".join)


@settings(max_examples=200, deadline=None)
@given(body=bodies, max_chars=st.integers(min_value=40, max_value=2000))
def test_chunks_cover_body_in_order_and_respect_max_chars(
    body: str, max_chars: int, note_of: Callable[..., Note]
) -> None:
    note = note_of("Folder/Note.md", body)
    chunks = chunk_note(note, max_chars=max_chars)
    assert chunks, "every note gets at least one chunk"
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    if body.strip():
        # nothing lost, nothing repeated: whitespace aside, the chunks are the body
        assert squash("".join(c.text for c in chunks)) == squash(body)
        for line in body.split("\n"):
            if line.strip():
                assert any(line.strip() in c.text for c in chunks) or len(line) > max_chars
    for chunk in chunks:
        assert len(chunk.text) <= max_chars
        assert chunk.embed_text.endswith(chunk.text)
        assert chunk.embed_text.startswith(note.title)
        assert chunk.content_hash == chunk_hash(chunk.embed_text)
        assert chunk.path == note.path
    assert chunk_note(note, max_chars=max_chars) == chunks  # deterministic


def test_heading_path_and_prefix(note_of: Callable[..., Note]) -> None:
    body = "\n".join(
        [
            "# Feeding",
            "Feed the starter every day. " * 10,
            "## Ratio",
            "Use 1:5:5 starter, flour, water. " * 10,
            "# Baking",
            "Bake at 250 °C. " * 20,
        ]
    )
    chunks = chunk_note(note_of("Sourdough.md", body), max_chars=1500, min_chars=50)
    assert [c.heading_path for c in chunks] == [
        ("Feeding",),
        ("Feeding", "Ratio"),
        ("Baking",),
    ]
    assert chunks[1].embed_text.startswith("Sourdough > Feeding > Ratio\n## Ratio\n")


def test_tiny_sections_merge_under_parent(note_of: Callable[..., Note]) -> None:
    body = "# Feeding\n## Ratio\n1:5:5\n## Time\nmorning\n# Baking\n" + "Bake long. " * 40
    chunks = chunk_note(note_of("Sourdough.md", body))
    assert chunks[0].heading_path == ("Feeding",)
    assert "1:5:5" in chunks[0].text and "morning" in chunks[0].text


def test_code_fence_is_not_cut_when_it_fits(note_of: Callable[..., Note]) -> None:
    fence = "```python\n" + "\n\n".join(f"x{i} = {i}" for i in range(30)) + "\n```"
    body = "Intro. " * 30 + "\n\n" + fence + "\n\n" + "Outro. " * 30
    chunks = chunk_note(note_of("Code.md", body), max_chars=400)
    assert any(fence in c.text for c in chunks)


def test_long_chinese_line_is_split_at_sentence_ends(note_of: Callable[..., Note]) -> None:
    body = "睡眠质量很重要。" * 100
    chunks = chunk_note(note_of("睡眠.md", body), max_chars=100)
    assert len(chunks) > 1
    assert all(c.text.endswith("。") for c in chunks)


def test_empty_body_gets_a_findable_chunk(note_of: Callable[..., Note]) -> None:
    note = note_of("Empty.md", "  \n", tags=("project/kiln",), aliases=("Kiln log",))
    [chunk] = chunk_note(note)
    assert chunk.text == ""
    assert "Kiln log" in chunk.embed_text and "#project/kiln" in chunk.embed_text


def test_memory_chunks_carry_name_and_description(note_of: Callable[..., Note]) -> None:
    memory = MemoryMeta(
        type="feedback", name="Tests hit a real database", description="Never mock the DB"
    )
    note = note_of("Memory/tests-hit-a-real-database.md", "Why: mocks hid a bug.", memory=memory)
    [chunk] = chunk_note(note)
    assert "Tests hit a real database" in chunk.embed_text
    assert "Never mock the DB" in chunk.embed_text


def test_hash_changes_only_with_chunk_content(note_of: Callable[..., Note]) -> None:
    a = chunk_note(note_of("N.md", "# A\n" + "one " * 100 + "\n# B\n" + "two " * 100))
    b = chunk_note(note_of("N.md", "# A\n" + "one " * 100 + "\n# B\n" + "three " * 100))
    assert a[0].content_hash == b[0].content_hash
    assert a[1].content_hash != b[1].content_hash


def _session(turns: list[tuple[str, str]], title: str = "# Chat session 2026-05-02") -> str:
    return "\n\n".join([title, *(f"**{who}:** {text}" for who, text in turns)]) + "\n"


_REPLY = "Here is a long and careful answer with several steps. " * 20  # ≈1,100 chars


def test_a_long_conversation_is_cut_where_each_round_begins(
    note_of: Callable[..., Note],
) -> None:
    asks = ["I bought a used road bike last week, a 2019 Trek Domane.",
            "The rear derailleur skips when I shift under load. What should I check?",
            "I also need lights: my commute home is after dark from November."]
    turns = [t for ask in asks for t in (("User", ask), ("Assistant", _REPLY))]
    chunks = chunk_note(note_of("Sessions/2026-05-02-a.md", _session(turns)))
    starts = [c.text for c in chunks if "**User:**" in c.text]
    assert len(starts) == 3
    for n, ask in enumerate(asks):  # each question opens its chunk, with its answer's start
        chunk = next(c.text for c in chunks if ask in c.text)
        opening = "# Chat session 2026-05-02\n\n" if n == 0 else ""
        assert chunk.startswith(f"{opening}**User:** {ask}")
        assert "careful answer" in chunk
    assert squash("".join(c.text for c in chunks)) == squash(_session(turns))


def test_chinese_and_quoted_speakers_are_conversations_too(
    note_of: Callable[..., Note],
) -> None:
    reply = "这是一个很长的回答，包含很多步骤和细节。" * 40
    body = "\n\n".join(f"{who}{text}" for who, text in [
        ("用户：", "我下个月要去东京出差，护照快过期了。"), ("助手：", reply),
        ("用户：", "续签护照需要多长时间？"), ("助手：", reply)])
    chunks = chunk_note(note_of("对话.md", body))
    assert sum(c.text.startswith("用户：") for c in chunks) == 2
    quoted = "\n\n".join(f"> {who}: {text}" for who, text in [
        ("Alice", "Can we move the kiln firing to Saturday?"), ("Bob", _REPLY),
        ("Alice", "Then Sunday for the glaze tests."), ("Bob", _REPLY)])
    chunks = chunk_note(note_of("Call.md", quoted))
    assert sum(c.text.startswith("> Alice:") for c in chunks) == 2


def test_notes_that_are_not_conversations_are_cut_as_before(
    note_of: Callable[..., Note],
) -> None:
    # labelled paragraphs of one speaker, or too few of them, are no conversation: they are
    # cut where the same paragraphs without labels are
    para = "a paragraph of plain prose about the kiln and its firing schedule " * 4

    def cuts(body: str) -> list[int]:
        return [len(c.text) for c in chunk_note(note_of("Memo.md", body))]

    one_speaker = "\n\n".join(f"Note: {para}" for _ in range(8))
    assert cuts(one_speaker) == cuts(one_speaker.replace("Note: ", "Noted "))
    few = "\n\n".join([f"Why: {para}", para, f"How: {para}", para, f"Why: {para}", *[para] * 3])
    assert cuts(few) == cuts(few.replace("Why: ", "Why? ").replace("How: ", "How? "))
    assert len(cuts(few)) == 2
    # a short conversation stays one chunk
    short = _session([("User", "Hi"), ("Assistant", "Hello"), ("User", "Thanks"),
                      ("Assistant", "Any time")])
    assert len(chunk_note(note_of("Sessions/short.md", short))) == 1


def test_a_round_opens_where_the_asking_side_speaks_even_after_a_greeting(
    note_of: Callable[..., Note],
) -> None:
    asks = ["I bought a used road bike last week.", "The rear derailleur skips. What now?"]
    turns = [("Assistant", "Hello! How can I help you today?"),
             *[t for ask in asks for t in (("User", ask), ("Assistant", _REPLY))]]
    chunks = chunk_note(note_of("Sessions/greeted.md", _session(turns)))
    second = next(c.text for c in chunks if asks[1] in c.text)
    assert second.startswith(f"**User:** {asks[1]}")  # with its answer, not the one before
    assert "careful answer" in second


def test_section_labels_are_no_speakers(note_of: Callable[..., Note]) -> None:
    para = "a paragraph of plain prose about the kiln and its firing schedule " * 4
    pros = "\n\n".join(f"{label}: {para}" for label in ["Pros", "Cons"] * 3)
    zh = "\n\n".join(f"{label}：{para}" for label in ["优点", "缺点"] * 3)
    long_han = "\n\n".join(f"会议讨论了以下几个重要的问题：{para}" if i % 2 else f"Bob: {para}"
                           for i in range(6))
    for body in (pros, zh, long_han):
        cut = [len(c.text) for c in chunk_note(note_of("Notes.md", body))]
        plain = body.replace(":", ";").replace("：", "；")
        assert cut == [len(c.text) for c in chunk_note(note_of("Notes.md", plain))]


def test_a_heading_line_an_agent_filled_with_escapes_names_no_other_section(
        corpora_dir: Path) -> None:
    """An agent wrote a day's log with literal ``\\n`` escapes: its H1 line holds the whole
    first section (1,000 characters). Every chunk of the note had carried that section's text
    as its heading path (in its prefix, embedded, and as the heading of its hits): the
    heading path stops at the first escape and at ``HEADING_MAX_CHARS``; the line itself
    stays in the text."""
    path = "Daily/2026-02-04.md"
    data = (corpora_dir / "memory-samples" / "openclaw" / "VhexAI__openclaw-workspace"
            / "memory" / "2026-02-04.md").read_bytes()
    note = parse_note(path, data)
    chunks = chunk_note(note)
    assert len(chunks) > 3
    for chunk in chunks:
        assert all(len(part) <= HEADING_MAX_CHARS for part in chunk.heading_path), chunk
        assert chunk.heading_path[0] == "2026-02-04 Daily Log 👁️", chunk.heading_path
        assert "Ollama-Reflect" not in HEADING_SEPARATOR.join(chunk.heading_path)
    assert "Ollama-Reflect Cron" in chunks[0].text  # the line is kept as text
    assert squash("".join(c.text for c in chunks)) == squash(note.body)


def test_a_long_heading_is_cut_at_a_word(note_of: Callable[..., Note]) -> None:
    long = "Notes " + "about the kiln firing schedule " * 10
    chunks = chunk_note(note_of("Kiln.md", "# " + long + "\n\nbody text"))
    label = chunks[0].heading_path[0]
    assert label.endswith("…") and len(label) <= HEADING_MAX_CHARS
    assert long.startswith(label[:-1])


def test_the_asking_sides_turns_are_read_apart() -> None:
    chat = ("**User:** I rented a tandem kayak.\n\nIt was red.\n\n"
            "**Assistant:** Kayaks are fun. Porto is lovely.\n\n1. The Douro\n\n"
            "用户：我坐夜车去了波尔图。\n\n助手：好的。")
    assert asking_turns(chat) == ("**User:** I rented a tandem kayak.\n\nIt was red.\n\n"
                                  "用户：我坐夜车去了波尔图。")
    # no speaker labels, or only the answering side's: nothing was asked here
    assert asking_turns("A plain note.\n\nNote: not a speaker.") == ""
    assert asking_turns("1. **The Alice Network** by Kate Quinn.") == ""


# --- a note's properties as words of its first chunk (magma.chunking.property_words) -------

# kepano's vault, byte for byte (References/Fushimi Inari.md): a reference note that is only
# its properties
FUSHIMI = (b'---\ncategories:\n  - "[[Places]]"\ntype:\n  - "[[Parks]]"\n  - "[[Shrines]]"\n'
           b'loc:\n  - "[[Kyoto]]"\n  - "[[Japan]]"\nrating: 7\ncreated: 2023-09-12\n'
           b'coordinates:\n  - "34.9689499"\n  - "135.7692576"\n---\n')


def test_a_note_of_properties_only_is_found_by_their_words() -> None:
    [chunk] = chunk_note(parse_note("References/Fushimi Inari.md", FUSHIMI))
    assert chunk.text == ""
    assert chunk.embed_text == ("Fushimi Inari\ncategories: Places\ntype: Parks, Shrines\n"
                                "loc: Kyoto, Japan")


def test_properties_head_the_first_chunk_only_and_the_body_is_kept_whole() -> None:
    data = ("---\nauthor: \"[[Ursula K. Le Guin]]\"\ngenre: [科幻, anarchism]\n"
            "status: 在读\n---\n# 一无所有\n\n" + "这本书讲的是两个星球。" * 200).encode()
    chunks = chunk_note(parse_note("Books/一无所有.md", data))
    assert len(chunks) > 1
    head = "一无所有 > 一无所有\nauthor: Ursula K. Le Guin\ngenre: 科幻, anarchism\nstatus: 在读\n"
    assert chunks[0].embed_text.startswith(head)
    assert all("Le Guin" not in c.embed_text for c in chunks[1:])
    body = parse_note("Books/一无所有.md", data).body
    assert squash("".join(c.text for c in chunks)) == squash(body)


def test_what_is_not_words_is_left_out() -> None:
    data = (b"---\naliases: [Kiln log]\ntags: [kiln]\ndescription: Firing notes\n"
            b"cssclasses: [wide]\npublish: true\npermalink: kiln\nsession: sharegpt_rHbSTOz_101\n"
            b"id: 7f3a9c2e\nsource: https://example.com/kilns?id=3\nrating: 4.5\n"
            b"time: \"12:30\"\ncoords: [\"34.96\", \"135.76\"]\ncreated: 2024-03-01\n"
            b"done: false\nday: \"{{date:YYYY-MM-DD}}\"\nnested: {a: b}\nempty:\n"
            b"kind: pottery log\n---\n")
    [chunk] = chunk_note(parse_note("Kiln.md", data))
    assert chunk.embed_text == ("Kiln\nFiring notes\naliases: Kiln log\ntags: #kiln\n"
                                "kind: pottery log")


def test_a_memory_carries_no_property_lines(note_of: Callable[..., Note]) -> None:
    memory = MemoryMeta(type="project", name="Kiln firing", description="Cone 6 on Fridays")
    note = note_of("Memory/kiln.md", "Fire on Fridays.", memory=memory,
                   properties={"subject": "kiln.firing", "owner": "mei"})
    [chunk] = chunk_note(note)
    assert "kiln.firing" not in chunk.embed_text and "mei" not in chunk.embed_text


def test_a_long_property_is_cut_and_the_lines_are_bounded() -> None:
    from magma.chunking import PROPERTIES_MAX_CHARS, PROPERTY_VALUE_MAX_CHARS

    long_value = "word " * 200
    props = "".join(f"p{i}: {long_value}\n" for i in range(20))
    [chunk] = chunk_note(parse_note("Long.md", f"---\n{props}---\n".encode()))
    lines = chunk.embed_text.split("\n")[1:]
    assert lines and all(len(line.split(": ", 1)[1]) <= PROPERTY_VALUE_MAX_CHARS
                         for line in lines)
    assert sum(len(line) + 1 for line in lines) <= PROPERTIES_MAX_CHARS + 1
