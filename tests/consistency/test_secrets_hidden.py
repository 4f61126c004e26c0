"""A credential with a character in it a reader never sees (a control character, a zero-width
space or joiner) or written in full-width letters is found as the key it is once stored and
read: the detector also searches the text's normalised view, and the finding covers the raw
characters, the hidden ones included."""

from __future__ import annotations

import pytest

from consistency.secrets import REDACTED, find_secrets, normalised_view, redact_secrets

GITHUB = "ghp_1234567890abcdefghij" + "klmnopqrstuvwxyzAB"


@pytest.mark.parametrize(("text", "kind", "hidden"), [
    (f"my token {GITHUB[:24]}\x01{GITHUB[24:]} works", "github_token", "\x01"),
    ("AKIA" + "Z7QXW3RT\x7f5YUPLK2M", "aws_access_key_id", "\x7f"),
    (f"tok {GITHUB[:10]}\u200b{GITHUB[10:]} x", "github_token", "\u200b"),
    (f"tok {GITHUB[:10]}\u200d{GITHUB[10:]} x", "github_token", "\u200d"),
    ("密\u200b码是 Hunter2Zeta9", "password", "\u200b"),
    ("key ＡＫＩＡＺ７ＱＸＷ３ＲＴ５ＹＵＰＬＫ２Ｍ ok", "aws_access_key_id", "Ｍ"),
])
def test_a_hidden_or_full_width_character_hides_no_credential(
        text: str, kind: str, hidden: str) -> None:
    findings = find_secrets(text)
    assert [f.kind for f in findings] == [kind]
    redacted = redact_secrets(text)
    assert REDACTED in redacted and hidden not in redacted
    assert find_secrets(normalised_view(redacted)[0]) == []
    for piece in ("1234567890", "5YUPLK2M", "Hunter2Zeta9", "５ＹＵＰ"):
        assert piece not in redacted


def test_the_normalised_view_maps_back_to_the_raw_text() -> None:
    view, origin = normalised_view("a\x01b\u200bc\nＤ\te")
    assert view == "abc\nD\te"
    assert origin == [0, 2, 4, 5, 6, 7, 8]


def test_text_without_hidden_characters_reads_as_before() -> None:
    text = "Deploy on Fridays — 周五部署。No key here: ghp_... is a placeholder."
    assert normalised_view(text)[0] == text
    assert find_secrets(text) == []
