"""Defers the LanceDB namespace REST client's own package code until something asks for it.

``import lancedb`` (0.40) imports ``lance_namespace``, which re-exports the request and
response models of the generated REST client ``lance_namespace_urllib3_client``. Importing
any module of that client first runs its package ``__init__``, which also imports its nine API
modules, whose pydantic ``validate_call`` decorators build their schemas at import time:
measured here, about half of the CPU time of ``import lancedb`` (1.8 s → 0.9 s of CPU
on a loaded 2-core machine, ``/usr/bin/time python -c "import lancedb"``, three runs each),
paid by every ``dreamd`` command before it does anything. dreamd reads local and ``s3://``
stores through LanceDB's own connection and never talks to a REST namespace; LanceDB and
``lance_namespace`` use only the client's ``models`` subpackage, which still imports as
before. Lance itself made the same change in its own package (lance-format/lance#9273).

:func:`install` puts a finder first on ``sys.meta_path`` for that one package name. The
package is created as usual (same spec, ``__path__`` and file), but its ``__init__`` runs on
the first access of an attribute the package does not have yet (say ``ApiClient``), through
a module ``__getattr__`` (PEP 562); its submodules import as they always did. Nothing is
replaced or patched: the package's own code runs, only later.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

__all__ = ["DEFERRED_PACKAGE", "install"]

#: The generated REST client of the Lance namespace API (package of lance-namespace 0.13).
DEFERRED_PACKAGE = "lance_namespace_urllib3_client"


class _DeferredInit(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds :data:`DEFERRED_PACKAGE` as the path finder does; runs its ``__init__`` late."""

    def __init__(self) -> None:
        self._real: dict[str, importlib.abc.Loader] = {}

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname != DEFERRED_PACKAGE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or not spec.submodule_search_locations:
            return None  # not installed, or not a package: the import goes on as usual
        self._real[fullname] = spec.loader
        spec.loader = self
        return spec

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return None  # the default module, with the spec's __path__ and __file__

    def exec_module(self, module: ModuleType) -> None:
        real = self._real[module.__name__]
        ran = False

        def __getattr__(name: str) -> Any:  # PEP 562: asked for a name the module lacks
            nonlocal ran
            dunder = name.startswith("__") and name.endswith("__") and name != "__all__"
            if ran or dunder:
                raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")
            ran = True
            del module.__dict__["__getattr__"]
            real.exec_module(module)
            return getattr(module, name)

        module.__dict__["__getattr__"] = __getattr__


def install() -> None:
    """Defer :data:`DEFERRED_PACKAGE`'s ``__init__`` in this process (idempotent; no effect
    once the package was imported)."""
    if DEFERRED_PACKAGE in sys.modules:
        return
    if not any(isinstance(finder, _DeferredInit) for finder in sys.meta_path):
        sys.meta_path.insert(0, _DeferredInit())
