"""Inline binary data (a clipped page's base64 images) is dropped before chunking."""

from __future__ import annotations

import base64
import random
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ccb.parse import parse_note
from magma.chunking import chunk_note
from magma.inline_data import MIN_BLOB_CHARS, drop_inline_data, without_inline_data


def _b64(n_bytes: int, seed: int = 7) -> str:
    return base64.b64encode(random.Random(seed).randbytes(n_bytes)).decode()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"![photo](data:image/png;base64,{_b64(3000)}) after", "![photo]([image data]) after"),
        (f'<img src="data:image/jpeg;base64,{_b64(900)}" alt="x">',
         '<img src="[image data]" alt="x">'),
        (f"[doc](data:application/pdf;name=a.pdf;base64,{_b64(500)})", "[doc]([data])"),
        (f"data:audio/ogg;base64,{_b64(500)}", "[audio data]"),
        (f"key: {_b64(400)}\nnext line", "key: [binary data]\nnext line"),
        # kept as written: short examples, URLs, digests, DNA, rules, words
        ("use data:image/png;base64,iVBORw0KGgo= in CSS", "use data:image/png;base64,"
         "iVBORw0KGgo= in CSS"),
        ("metadata:image/png;base64," + _b64(100), "metadata:image/png;base64," + _b64(100)),
        ("see https://example.org/" + _b64(300), "see https://example.org/" + _b64(300)),
        ("sha512 " + "ab12" * 64, "sha512 " + "ab12" * 64),
        ("ACGT" * 100, "ACGT" * 100),
        ("-" * 300, "-" * 300),
        ("plain words, nothing else", "plain words, nothing else"),
    ],
)
def test_inline_data_and_what_is_not(text: str, expected: str) -> None:
    assert drop_inline_data(text) == expected


def test_a_wrapped_blob_keeps_its_line_count() -> None:
    payload = _b64(600)
    wrapped = "\n".join(payload[i:i + 76] for i in range(0, len(payload), 76))
    text = f"# Attachment\n\n{wrapped}\n\n## After\n\nthe real text\n"
    dropped = drop_inline_data(text)
    assert dropped.count("\n") == text.count("\n")
    assert "[binary data]" in dropped and payload[:76] not in dropped
    assert dropped.endswith("## After\n\nthe real text\n")
    assert drop_inline_data("\n".join(["0123456789abcdef" * 5] * 6)) == "\n".join(
        ["0123456789abcdef" * 5] * 6)  # a hex dump is not base64 data


def test_a_clipped_page_is_a_few_chunks_and_its_text_after_the_image_is_kept() -> None:
    body = (f"# Sourdough\n\nClipped.\n\n![photo](data:image/png;base64,{_b64(1_500_000)})\n\n"
            "## Method\n\nFeed the starter at 1:5:5 and shorten the bulk ferment.\n")
    note = parse_note("Clipped.md", body.encode())
    started = time.perf_counter()
    cleaned = without_inline_data(note)
    took_s = time.perf_counter() - started
    chunks = chunk_note(cleaned)
    assert len(note.body) > 2_000_000 and len(cleaned.body) < 200
    assert len(chunks) == 1 and "shorten the bulk ferment" in chunks[0].text
    assert "![photo]([image data])" in chunks[0].text and "## Method" in chunks[0].text
    assert took_s < 0.5  # linear: ≈ 10 ms on a laptop
    plain = parse_note("a.md", b"no data here")
    assert without_inline_data(plain) is plain


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400))
def test_text_without_long_runs_is_never_changed(text: str) -> None:
    # no run of base64 characters as long as a blob, no data URI: nothing to drop
    if "base64," not in text and not any(len(run) >= MIN_BLOB_CHARS // 4
                                         for run in text.split()):
        assert drop_inline_data(text) == text
