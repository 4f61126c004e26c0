"""Shared fixtures of the ccb tests: where the read-only shared cases and corpora live."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def cases_dir() -> Path:
    """``../shared/cases`` (read-only); skips when this checkout has no shared folder."""
    path = SHARED / "cases"
    if not path.is_dir():
        pytest.skip(f"shared cases not found at {path}")
    return path


@pytest.fixture(scope="session")
def corpora_dir() -> Path:
    """``../shared/corpora`` (read-only); skips when this checkout has no shared folder."""
    path = SHARED / "corpora"
    if not path.is_dir():
        pytest.skip(f"shared corpora not found at {path}")
    return path


@pytest.fixture(scope="session")
def vault_example() -> Path:
    """The demo vault shipped with the repository."""
    return REPO / "vault_example"
