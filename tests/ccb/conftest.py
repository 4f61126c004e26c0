"""Fixtures of the ccb tests (cases_dir and corpora_dir come from tests/conftest.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from ccb.writer import NoteWriter

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def vault_example() -> Path:
    """The demo vault shipped with the repository."""
    return REPO / "vault_example"


def _fixed() -> datetime:
    return datetime(2026, 11, 30, 10, 15, 0, tzinfo=UTC)


@pytest.fixture
def writer(tmp_path: Path) -> NoteWriter:
    """A writer over ``tmp_path/vault`` (with a ``Memory`` folder) whose clock stands at
    2026-11-30 10:15 UTC."""
    (tmp_path / "vault" / "Memory").mkdir(parents=True)
    return NoteWriter(tmp_path / "vault", tmp_path / "state", clock=_fixed)
