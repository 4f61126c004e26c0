"""Where the index found credentials a user wrote by hand: ``credentials.json`` in the state
folder, so ``dreamd check`` and ``dreamd doctor`` report them without reading the vault again.

The indexer (:class:`daemon.sync.Syncer`) withholds each credential from the index
(:func:`consistency.withheld.withhold_credentials`) and records here, per file, the content hash
it indexed and where the credentials are (line, kind, redacted preview — never the secret). A
file indexed again replaces its record (none when it holds no credential any more), a file gone
from the index loses it, and a full reconcile drops the records of files it did not find. A
reader keeps a record only while it describes what the index holds (``content_hash`` equal to
the file's row), so a record a crash left behind is never reported.

The file exists only while some file has a credential; a vault without any never gets one. It
is small (one entry per such file) and replaced atomically under the store's one-writer rule
(the indexer's lock), so it is read and rewritten whole.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from ccb.atomic import read_json_object, write_json_atomic
from consistency.secrets import SecretKind
from consistency.withheld import FoundCredential

__all__ = ["CREDENTIALS_FILE", "CredentialLedger", "CredentialRecord", "read_credentials"]

#: The ledger's file name in the state folder.
CREDENTIALS_FILE = "credentials.json"


@dataclass(frozen=True, slots=True)
class CredentialRecord:
    """The credentials withheld from one indexed file: its index ``path``, the
    ``content_hash`` of the file as indexed (SHA-256 hex of its bytes, as
    :attr:`ccb.model.Note.content_hash`) and ``found`` in file order."""

    path: str
    content_hash: str
    found: tuple[FoundCredential, ...]

    def describe(self) -> str:
        """``"line 7 (password=…), line 9 (密码 …)"``."""
        return ", ".join(f.describe() for f in self.found)


def _record(path: str, data: Any) -> CredentialRecord | None:
    if not isinstance(data, dict) or not isinstance(data.get("content_hash"), str):
        return None
    found = []
    for item in data.get("found") or ():
        if isinstance(item, dict) and isinstance(item.get("line"), int):
            found.append(FoundCredential(item["line"], cast(SecretKind, str(item.get("kind"))),
                                         str(item.get("preview"))))
    return CredentialRecord(path, data["content_hash"], tuple(found)) if found else None


def read_credentials(state_dir: Path) -> dict[str, CredentialRecord]:
    """``{index path: CredentialRecord}`` from the state folder ``state_dir`` (empty when
    there is no ledger, or it does not read: a state file is advisory). Never raises."""
    files = read_json_object(state_dir / CREDENTIALS_FILE).get("files")
    if not isinstance(files, dict):
        return {}
    records = {path: _record(path, data) for path, data in files.items()}
    return {path: record for path, record in records.items() if record is not None}


def _entry(record: CredentialRecord) -> dict[str, Any]:
    return {"content_hash": record.content_hash,
            "found": [{"line": f.line, "kind": f.kind, "preview": f.preview}
                      for f in record.found]}


class CredentialLedger:
    """The ledger of one vault's state folder (module docstring); written by the indexer."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / CREDENTIALS_FILE

    def update(
        self, indexed: Mapping[str, CredentialRecord | None], gone: Collection[str] = (),
        *, keep: Callable[[str], bool] | None = None,
    ) -> None:
        """Record the files just ``indexed`` (``{path: record}``, ``None`` for a file without
        credentials), forget the paths ``gone`` from the index and, after a full reconcile,
        every path ``keep`` refuses. Writes only when something changed. Raises ``OSError``
        when the state folder cannot be written."""
        records = read_credentials(self.path.parent)
        before = dict(records)
        for path, record in indexed.items():
            if record is None:
                records.pop(path, None)
            else:
                records[path] = record
        for path in gone:
            records.pop(path, None)
        if keep is not None:
            records = {path: r for path, r in records.items() if keep(path)}
        if records == before:
            return
        if not records:
            self.path.unlink(missing_ok=True)
            return
        write_json_atomic(self.path, {"files": {path: _entry(records[path])
                                                for path in sorted(records)}})
