"""A credential written by hand into a note: withheld from what the index holds, placed by the
file's line, and a note without one left exactly as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from ccb.parse import parse_note
from ccb.scan import VaultFilter, scan_vault
from consistency.secrets import REDACTED, find_secrets
from consistency.withheld import withhold_credentials
from magma.chunking import chunk_note

SECRET_EN = "S3cr3t-Passw0rd-xyz"
SECRET_ZH = "Abc12345xyz!"
KEY = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"
MEMORY = (
    "---\n"
    "name: Staging login\n"
    "description: How to log in to the staging server\n"
    "type: user\n"
    f"deploy_token: {KEY}\n"
    "---\n"
    "The staging server is staging.example.org, user deploy.\n"
    "\n"
    f"password: {SECRET_EN}\n"
    f"数据库密码：{SECRET_ZH}\n"
    "\n"
    "## After login\n"
    "\n"
    "Run the smoke tests.\n"
)


def _everything(note: object) -> str:
    """Every text the index takes from a note (its chunks, properties, links, headings)."""
    parts = [repr(note)] + [c.embed_text for c in chunk_note(note)]  # type: ignore[arg-type]
    return "\n".join(parts)


def test_english_and_chinese_credentials_are_withheld_and_placed_by_line() -> None:
    note = parse_note("Memory/staging-login.md", MEMORY.encode())
    withheld = withhold_credentials(note)
    lines = MEMORY.split("\n")
    assert [(f.line, f.kind) for f in withheld.found] == [
        (5, "github_token"), (9, "password"), (10, "password")]
    for found in withheld.found:  # the line is the file's, as an editor numbers it
        assert find_secrets(lines[found.line - 1])
        assert SECRET_EN not in found.preview and SECRET_ZH not in found.preview
    assert [f.describe() for f in withheld.found][1] == "line 9 (password=…)"
    text = _everything(withheld.note)
    for secret in (SECRET_EN, SECRET_ZH, KEY):
        assert secret not in text
    assert withheld.note.properties["deploy_token"] == REDACTED
    assert withheld.note.properties["name"] == "Staging login"
    assert REDACTED in withheld.note.body and "数据库" in withheld.note.body
    assert withheld.note.content_hash == note.content_hash  # the file's key is its bytes


def test_line_numbers_of_headings_and_links_stay_true() -> None:
    key = "-----BEGIN PRIVATE KEY-----\n" + "\n".join(["MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"] * 4) \
        + "\n-----END PRIVATE KEY-----"
    text = f"# Server\n\n{key}\n\n## Logs\n\nSee [[Runbook]].\n"
    note = parse_note("Ops.md", text.encode())
    withheld = withhold_credentials(note).note
    assert withheld.body.count("\n") == note.body.count("\n")
    assert [(h.text, h.line) for h in withheld.headings] == [("Server", 0), ("Logs", 9)]
    assert withheld.body.split("\n")[9] == "## Logs"
    assert "MIIEvQIBADANBgkq" not in _everything(withheld)
    assert [(link.target, link.line) for link in withheld.links] == [("Runbook", 11)]


def test_credentials_in_headings_links_aliases_and_descriptions() -> None:
    url = "postgres://app:Xk9#mQ2vLp@db.internal:5432/app"
    text = (
        "---\n"
        "aliases: [the password is Hunter2-Kx9]\n"
        f"description: the database at {url}\n"
        "---\n"
        "## token: Zq8kLm2pXw7R\n"
        f"\n[the database]({url})\n"
    )
    note = parse_note("DB.md", text.encode())
    withheld = withhold_credentials(note)
    assert {f.kind for f in withheld.found} == {"password", "connection_string"}
    everything = _everything(withheld.note)
    for secret in ("Hunter2-Kx9", "Xk9#mQ2vLp", "Zq8kLm2pXw7R"):
        assert secret not in everything
    assert withheld.note.properties["description"] == f"the database at {REDACTED}:5432/app"


def test_a_note_without_a_credential_is_the_same_note() -> None:
    text = "---\ntags: [ops]\n---\n# Deploy\n\nThe password policy asks for 12 characters.\n"
    note = parse_note("Deploy.md", text.encode())
    withheld = withhold_credentials(note)
    assert withheld.note is note and withheld.found == ()


@pytest.mark.slow
def test_corpus_notes_are_chunked_exactly_as_before(corpora_dir: Path) -> None:
    """No note of a real vault (kepano's, the Obsidian help in English and Chinese) holds a
    credential, and none is changed: the same chunks, byte for byte, the same hashes."""
    for folder in ("kepano-obsidian", "obsidian-help/en", "obsidian-help/zh"):
        root = corpora_dir / folder
        for entry in scan_vault(root, VaultFilter()).entries:
            if entry.kind != "note":
                continue
            note = parse_note(entry.path, (root / entry.path).read_bytes())
            withheld = withhold_credentials(note)
            assert withheld.found == (), (entry.path, withheld.found)
            assert withheld.note is note
            assert chunk_note(withheld.note) == chunk_note(note)


@pytest.mark.parametrize(("head", "secret", "line"), [
    # YAML reads a value the block's text does not show: an alias, a block list, a folded
    # or literal scalar, an escape; English and Chinese keys
    ("x: &p Hunter-Moon-22q\npassword: *p\n", "Hunter-Moon-22q", 3),
    ("password:\n  - correct horse battery staple\n", "correct horse battery staple", 2),
    ("password: >\n  Zebra-Lion-42x\n", "Zebra-Lion-42x", 2),
    ("api_key: |\n  zq9Xv2Lm8RtY4wPk7NbC3sDf\n", "zq9Xv2Lm8RtY4wPk7NbC3sDf", 2),
    ('password: "Zeb\\x72a-Lion-42q"\n', "Zebra-Lion-42q", 2),
    ("密码:\n  - Abc12345xyz!\n", "Abc12345xyz!", 2),
    ("登录: &k Abc12345xyz!\nlogin:\n  密码: *k\n", "Abc12345xyz!", 4),
])
def test_a_credential_yaml_reads_from_another_line_is_withheld(
    head: str, secret: str, line: int,
) -> None:
    """A property's value as the index holds it (its properties, its first chunk's
    ``key: value`` lines) is withheld even when the block's text shows no credential."""
    note = parse_note("Login.md", f"---\n{head}type: \"[[Servers]]\"\n---\n".encode())
    assert secret in repr(note.properties)
    withheld = withhold_credentials(note)
    assert secret not in _everything(withheld.note)
    assert secret not in (withheld.note.frontmatter_raw or "")
    assert [f.line for f in withheld.found] == [line]
    assert "type: Servers" in chunk_note(withheld.note)[0].embed_text


@pytest.mark.parametrize("head", [
    "password_policy:\n  - at least twelve characters\n",
    "token: &t bucket\nlimiter: *t\n",
    "密码规则:\n  - 至少十二个字符\n",
    "secret: >\n  the garden behind the house\n",
])
def test_look_alikes_read_through_yaml_stay_as_they_are(head: str) -> None:
    note = parse_note("Policy.md", f"---\n{head}---\nText.\n".encode())
    withheld = withhold_credentials(note)
    assert withheld.note is note and withheld.found == ()


@pytest.mark.parametrize("head", [
    f"{KEY}: github deploy\n",
    f"keys:\n  {KEY}: github deploy\n",
    f"{KEY}:\n  - deploy\n",
])
def test_a_credential_written_as_a_property_s_name_is_withheld(head: str) -> None:
    note = parse_note("Keys.md", f"---\n{head}owner: \"[[Ops]]\"\n---\nBody.\n".encode())
    withheld = withhold_credentials(note)
    assert KEY not in _everything(withheld.note)
    assert KEY not in repr(withheld.note.properties)
    assert withheld.note.properties["owner"] == "[[Ops]]"
