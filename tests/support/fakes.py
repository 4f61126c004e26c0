"""FAKES for tests that are not about meaning (each says so where it is used).

Test support, importable by name: ``tests/support`` is on pytest's ``pythonpath``
(``pyproject.toml``), and the daemon harness puts it on the path of the processes it starts.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

__all__ = ["TokenHashEmbedder"]


class TokenHashEmbedder:
    """A deterministic FAKE embedder (token hashing), for tests that are not about meaning.

    It keeps the sync tests fast and exact (which chunks were embedded, which reused); every
    test about what a search *means* uses the real model instead.
    """

    model_id = "test-token-hash"
    dims = 64

    def __init__(self) -> None:
        self.calls: list[int] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in re.findall(r"\w+", text.lower()):
                digest = hashlib.blake2b(token.encode(), digest_size=4).digest()
                out[row, int.from_bytes(digest, "little") % self.dims] += 1.0
            norm = float(np.linalg.norm(out[row]))
            out[row] = out[row] / norm if norm else out[row]
            if not norm:
                out[row, 0] = 1.0
        return out

    @property
    def embedded(self) -> int:
        return sum(self.calls)
