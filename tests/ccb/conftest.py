"""Fixtures of the ccb tests (cases_dir and corpora_dir come from tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def vault_example() -> Path:
    """The demo vault shipped with the repository."""
    return REPO / "vault_example"
