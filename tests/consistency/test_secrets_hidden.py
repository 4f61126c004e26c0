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


@pytest.mark.parametrize(("text", "secret"), [
    ("伺服器密碼是 Qw3rty!!88", "Qw3rty!!88"),
    ("資料庫密碼：Abc12345xyz!", "Abc12345xyz!"),
    ("API 金鑰是 a8Kd93jfLq02mZx7Pw4T", "a8Kd93jfLq02mZx7Pw4T"),
    ("mysql -u root -pS3cretPass9 mydb", "S3cretPass9"),
    ("mysqldump -u app -pHunter2Zeta9 shop > dump.sql", "Hunter2Zeta9"),
    ("p@ssword=Hunter2Zeta9", "Hunter2Zeta9"),
    ("P@ssw0rd: Hunter2Zeta9", "Hunter2Zeta9"),
    ("maps key AIzaSyD3x9Qw7Kp2LmN8vR4tY6uI0oP1aS5dF7g", "D3x9Qw7Kp2LmN8vR4tY6"),
])
def test_traditional_chinese_a_client_password_and_a_spelt_out_password_are_found(
        text: str, secret: str) -> None:
    assert find_secrets(text)
    assert secret not in redact_secrets(text)


@pytest.mark.parametrize("text", [
    "密碼規則：至少 8 位", "密碼強度 Abc123", "密碼長度至少 12 位", "公鑰是 a8Kd93jfLq02mZx7Pw4T",
    "mysql -u root -p mydb", "mysql -u root -p$MYSQL_PWD db", "mysql -h db -P 3306 -u root -p",
    "mysql -u root -pyourpassword",
])
def test_their_look_alikes_are_not(text: str) -> None:
    assert find_secrets(text) == []


def test_the_quick_test_knows_every_control_and_format_character() -> None:
    import sys
    import unicodedata

    from consistency.secrets import _HIDDEN

    hidden = [c for c in map(chr, range(sys.maxunicode + 1))
              if unicodedata.category(c) in ("Cc", "Cf") and c not in "\n\r\t"]
    assert all(_HIDDEN.match(c) or not unicodedata.is_normalized("NFKC", c) for c in hidden)
