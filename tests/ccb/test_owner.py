"""Owners of memories: parsing and who sees what (pure)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ccb.owner import Owner, parse_owner
from config.errors import InvalidOwnerError


def test_parse_user_and_agent_casefolded() -> None:
    assert parse_owner(" Alice/Claude-Code ") == Owner("alice", "claude-code")
    assert parse_owner("bob@example.com") == Owner("bob@example.com")
    assert str(parse_owner("Alice/CC")) == "alice/cc"


@pytest.mark.parametrize("bad", ["", "/", "a/b/c", "alice/", "../etc", "a b", "x" * 65])
def test_bad_owner_is_a_clear_error(bad: str) -> None:
    with pytest.raises(InvalidOwnerError, match="user or user/agent"):
        parse_owner(bad)


def test_visibility_table() -> None:
    alice_cc = Owner("alice", "cc")
    assert alice_cc.sees(None) and alice_cc.sees("") and alice_cc.sees("Alice")
    assert alice_cc.sees("alice/CC")
    assert not alice_cc.sees("alice/other") and not alice_cc.sees("bob/cc")
    assert not alice_cc.sees("bob") and not alice_cc.sees("not/an/owner")
    alice = Owner("alice")
    assert alice.sees("alice/other") and alice.sees("alice") and not alice.sees("bob/cc")


parts = st.text("abcxyz-._", min_size=1, max_size=6)


@given(reader_user=parts, reader_agent=st.none() | parts, user=parts, agent=st.none() | parts)
def test_another_users_memory_is_never_visible(
    reader_user: str, reader_agent: str | None, user: str, agent: str | None
) -> None:
    reader = Owner(reader_user, reader_agent)
    written = f"{user}/{agent}" if agent else user
    if user != reader_user:
        assert not reader.sees(written)
    if agent and reader_agent and agent != reader_agent:
        assert not reader.sees(written)


def test_an_owner_that_is_a_list_hides_the_memory_from_every_reader() -> None:
    from ccb.parse import parse_note

    note = parse_note("Memory/m.md", b"---\nname: M\ntype: user\nowner:\n  - alice\n---\nx\n")
    assert note.memory is not None and note.memory.owner is not None
    assert not Owner("alice").sees(note.memory.owner)
    assert not Owner("bob", "cc").sees(note.memory.owner)
    with pytest.raises(InvalidOwnerError):
        parse_owner("alice\n/cc")
