"""MAGMA: the vector/graph engine of dreamd.

Chunking (:mod:`magma.chunking`), embedding (:mod:`magma.embedder`), the LanceDB store
(:mod:`magma.store`), the link graph (:mod:`magma.graph`) and hybrid search
(:mod:`magma.search`), and the raw layer of the diary: its snippets (:mod:`magma.snippets`)
and their table and recalls (:mod:`magma.snippet_store`). Import from those modules; this
package re-exports nothing, so that ``import magma`` stays cheap (LanceDB and the model load
only when used).

Importing this package defers the package code of LanceDB's namespace REST client, which
dreamd never uses, until something asks for it (:mod:`magma.lance_import`: half the CPU time
of ``import lancedb``, paid by every command). It also sets ``LANCEDB_LOG=error`` unless the
caller set it already:
LanceDB 0.40 logs a warning on every query otherwise (DESIGN.md, measured facts). LanceDB runs
a background thread once used: never ``fork`` a process after that (use ``spawn``).
"""

from __future__ import annotations

import os

from magma import lance_import

__all__: list[str] = []

os.environ.setdefault("LANCEDB_LOG", "error")
lance_import.install()
