"""The version history of memories: every content change kept, in MAGMA and as plain files.

DESIGN.md: every content change of a memory creates a version (id, number, content, hash,
time, origin, change log, previous version); rollback writes an old version's content as a new
one, so history is never destroyed. Each version is kept twice:

- a row of the ``versions`` LanceDB table in the store — one table for every device sharing
  the store (the index tables are per device, :func:`magma.store.table_name`);
- two plain files in this device's state dir, never inside the vault:
  ``versions/<memory>/<n>.md`` holds the exact bytes (``cat`` it) and ``<n>.json`` the rest.

Recording writes the files first (durably), then the row: a crash in between leaves a file
without a row, which :meth:`VersionArchive.repair` adds back; rows written by another device
are mirrored into the files by the same call. Nothing is recorded twice for one content: a
version whose hash equals the current one is skipped, so every path (the watcher seeing a user
edit, a CLI write indexed by the daemon, a repair re-indexing a file) may simply offer it.

Kinds (:data:`VersionKind`): ``edit`` — the memory's content at that time; ``tombstone`` —
the memory's file was deleted (no content; its history stays until ``dreamd forget``);
``kept`` — a side version the arbiter kept when another version won a conflict (in the
history, never the current version).

**Several writers.** Numbers are given under a lease: a file lock beside the table when the
store is a local path or a mounted shared drive. Object storage (``s3://``…) has no file lock;
two devices recording the same memory in the same moment can then give one number twice,
which :meth:`VersionArchive.repair` settles by renumbering the later row (DESIGN.md: LanceDB
does not stop two writers from inserting one key twice). No row is lost there: LanceDB commits
each write as a conditional put of the table's next manifest, and this archive rewrites the
table only with conflict-checked commits, tried again when another device's commits first
(:mod:`magma.shared_tables`).
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

import filelock
import lancedb
import pyarrow as pa
import structlog

from ccb.atomic import read_json_object, write_bytes_atomic
from config.errors import StoreError, VersionNotFoundError
from magma import shared_tables
from magma.remote_store import open_failure
from magma.shared_tables import rewrite_live_rows

__all__ = [
    "LEASE_TIMEOUT_S",
    "NewVersion",
    "RepairReport",
    "Version",
    "VersionArchive",
    "VersionKind",
    "current",
    "is_local_uri",
    "prunable",
]

log = structlog.get_logger("dreamd.versions")

VersionKind = Literal["edit", "tombstone", "kept"]

#: How long a writer waits for another device's lease on the shared version table, seconds.
LEASE_TIMEOUT_S = 30.0

_TABLE = "versions"
#: Versions deleted on purpose (``forget``, pruning), so a device that still holds a copy in
#: its plain-text archive drops it instead of adding it back as a crash left-over.
_ERASED_TABLE = "versions_erased"
_LEASE_FILE = "versions.lease"
_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,80}")
#: How old a folder's modification time must be before its listing is kept
#: (:meth:`VersionFiles.keys`), nanoseconds: file systems stamp times from a clock that moves
#: in ticks (~4-10 ms on ext4 and NTFS, 1 s on HFS+, 2 s on FAT32), so an entry added in the
#: tick of a listing leaves the folder's time as it was. A listing is kept only once the
#: folder's time is older than the start of the tick the listing ran in, whatever the tick up
#: to 2 s: every later entry then stamps a later time (git's "racily clean" rule).
_SETTLED_NS = 2_000_000_000
_COLUMNS = ["memory_id", "n", "kind", "path", "content_hash", "created_at", "origin",
            "change_log", "prev", "device", "memory_type", "name"]


@dataclass(frozen=True, slots=True)
class Version:
    """One recorded version (without its content: :meth:`VersionArchive.content`).

    ``n`` counts from 1 per memory; ``prev`` is the number of the version this one follows
    (``None`` for the first); ``created_at`` is UTC; ``origin`` is who made the change
    (``user-edit``, ``api``, ``dream``, ``rollback``, ``arbiter``); ``device`` which device
    recorded it (``None``: a store of one device)."""

    memory_id: str
    n: int
    kind: VersionKind
    path: str
    content_hash: str
    created_at: datetime
    origin: str
    change_log: str
    prev: int | None
    device: str | None
    memory_type: str | None
    name: str | None


@dataclass(frozen=True, slots=True)
class NewVersion:
    """A version to record: ``content`` is the file's exact bytes (empty for a tombstone)."""

    memory_id: str
    path: str
    content: bytes
    origin: str
    change_log: str = ""
    kind: VersionKind = "edit"
    memory_type: str | None = None
    name: str | None = None


@dataclass(frozen=True, slots=True)
class RepairReport:
    """What :meth:`VersionArchive.repair` did (counts of versions)."""

    rows_added: int = 0
    files_mirrored: int = 0
    duplicates_dropped: int = 0
    renumbered: int = 0
    erased_copies_dropped: int = 0

    @property
    def total(self) -> int:
        return (self.rows_added + self.files_mirrored + self.duplicates_dropped
                + self.renumbered + self.erased_copies_dropped)


def _schema() -> pa.Schema:
    return pa.schema([
        pa.field("memory_id", pa.string(), nullable=False),
        pa.field("n", pa.int64(), nullable=False),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("path", pa.string(), nullable=False),
        pa.field("content", pa.large_binary(), nullable=False),
        pa.field("content_hash", pa.string(), nullable=False),
        pa.field("created_at", pa.timestamp("us", tz="UTC"), nullable=False),
        pa.field("origin", pa.string(), nullable=False),
        pa.field("change_log", pa.string(), nullable=False),
        pa.field("prev", pa.int64()),
        pa.field("device", pa.string()),
        pa.field("memory_type", pa.string()),
        pa.field("name", pa.string()),
    ])


def is_local_uri(uri: str) -> bool:
    """True for a LanceDB URI that is a folder on this machine (a path or ``file://``),
    False for object storage (``s3://``, ``gs://``, ``az://`` …)."""
    scheme = urlparse(uri).scheme
    return scheme in {"", "file"} or len(scheme) == 1  # one letter: a Windows drive


def _sql(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _folder_name(memory_id: str) -> str:
    """A memory's folder in the archive: its id when that is a safe file name (ULIDs are),
    else ``h-`` and 24 hex of its SHA-256."""
    if _SAFE_ID.fullmatch(memory_id):
        return memory_id
    return "h-" + hashlib.sha256(memory_id.encode("utf-8")).hexdigest()[:24]


class VersionFiles:
    """This device's plain copies of versions: ``<archive_dir>/<memory folder>/<n>.md`` (the
    bytes) beside ``<n>.json`` (the row), readable without the store. A version counts once
    its ``.json`` exists."""

    def __init__(self, archive_dir: Path) -> None:
        self.archive_dir = archive_dir
        #: :meth:`keys`' version numbers of each memory folder, with the folder's
        #: ``(st_ino, st_mtime_ns)`` when it was listed.
        self._listed: dict[str, tuple[tuple[int, int], frozenset[int]]] = {}

    def folder(self, memory_id: str) -> Path:
        """The folder of one memory's versions."""
        return self.archive_dir / _folder_name(memory_id)

    def write(self, version: Version, content: bytes) -> None:
        """Write ``version`` as ``<n>.md`` (its bytes) and ``<n>.json`` (its row), atomically;
        raises :class:`StoreError` when the memory's folder is a file."""
        folder = self.folder(version.memory_id)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError) as exc:
            raise StoreError(
                f"versions: {folder} should be a folder of versions but is a file; move it "
                "away and run dreamd check --fix") from exc
        write_bytes_atomic(folder / f"{version.n}.md", content)
        meta = {**_row(version), "created_at": version.created_at.isoformat()}
        write_bytes_atomic(folder / f"{version.n}.json",
                           (json.dumps(meta, ensure_ascii=False, indent=1) + "\n").encode())

    def forget(self, memory_id: str, n: int, content_hash: str) -> None:
        """Drop this device's files of version ``n`` when they hold ``content_hash`` (a row
        renumbered away from ``n``; the mirror writes it under its new number)."""
        folder = self.folder(memory_id)
        meta = read_json_object(folder / f"{n}.json")
        if meta and meta.get("content_hash") == content_hash:
            (folder / f"{n}.json").unlink(missing_ok=True)
            (folder / f"{n}.md").unlink(missing_ok=True)

    def max_n(self, memory_id: str) -> int:
        """The highest version number this device holds for ``memory_id`` (0: none)."""
        folder = self.folder(memory_id)
        try:
            names = [p.stem for p in folder.iterdir() if p.suffix == ".json"]
        except OSError:
            return 0
        return max((int(n) for n in names if n.isdigit()), default=0)

    def keys(self) -> set[tuple[str, int]]:
        """``{(folder name, n)}`` of this device's archived versions, from names alone.

        A memory folder whose inode and modification time are those of its last listing is
        not listed again (an entry added, removed or renamed in a folder sets its time; a
        file's bytes are never looked at here): one stat a folder instead of a listing, once
        the folder's time is :data:`_SETTLED_NS` old. A check where nothing changed, 1,100
        folders: 11 → 4 ms of CPU (``time.process_time``, median of 30)."""
        found: set[tuple[str, int]] = set()
        try:
            folders = [e for e in os.scandir(self.archive_dir) if e.is_dir()]
        except OSError:
            return found
        settled = time.time_ns() - _SETTLED_NS
        kept, listed = self._listed, {}
        for folder in folders:
            try:
                st = folder.stat()
            except OSError:
                signature = None  # (listed below, which raises what fails as before)
            else:
                signature = (st.st_ino, st.st_mtime_ns)
            known = kept.get(folder.name)
            numbers = known[1] if known is not None and signature is not None \
                and known[0] == signature else _numbers(folder.path)
            if signature is not None and signature[1] < settled:
                listed[folder.name] = (signature, numbers)
            found.update((folder.name, n) for n in numbers)
        self._listed = listed
        return found

    def versions(
        self, *, quarantine: bool = False
    ) -> dict[tuple[str, int], tuple[Version, Path]]:
        """This device's archived versions (a version counts once its ``.json`` exists).
        With ``quarantine``, a ``.json`` that does not read as a version is renamed
        ``<n>.json.unreadable`` (kept for a person to look at, no longer counted)."""
        found: dict[tuple[str, int], tuple[Version, Path]] = {}
        if not self.archive_dir.is_dir():
            return found
        for folder in self.archive_dir.iterdir():
            if not folder.is_dir():
                continue
            for meta_path in folder.glob("*.json"):
                try:
                    meta = json.loads(meta_path.read_text(encoding="utf-8"))
                    version = _version({**meta, "created_at": datetime.fromisoformat(
                        meta["created_at"])})
                    if not meta_path.is_file() or meta_path.stem != str(version.n):
                        raise ValueError("not the version its name says")
                except (OSError, ValueError, KeyError, TypeError, AttributeError):
                    log.warning("versions.unreadable_file", path=str(meta_path))
                    if quarantine and meta_path.is_file():
                        meta_path.rename(meta_path.with_name(meta_path.name + ".unreadable"))
                    continue
                found[(version.memory_id, version.n)] = (version,
                                                          meta_path.with_suffix(".md"))
        return found


class VersionArchive:
    """The version history of one store's memories (module docstring). Construct with
    :meth:`open`. Every method raises :class:`StoreError` when the table cannot be read or
    written and ``OSError`` when the archive folder cannot."""

    def __init__(
        self, table: Any, *, archive_dir: Path, lease: Any, device: str | None,
        erased: Any = None,
    ) -> None:
        self._table = table
        self._erased = erased
        self.archive_dir = archive_dir
        self._files = VersionFiles(archive_dir)
        self._lease = lease
        self.device = device
        # survey(): (table version, rows, grouped), kept while the table stays there
        self._survey: tuple[int, list[dict[str, Any]], dict[str, list[Version]]] | None = None

    @classmethod
    def open(cls, uri: str, *, archive_dir: Path, device: str | None = None,
             storage_options: Mapping[str, str] | None = None) -> VersionArchive:
        """Open (or create) the ``versions`` table of the store at ``uri`` (``storage_options``:
        LanceDB's, for an object store); this device's plain-text copies live in
        ``archive_dir``."""
        try:
            db = lancedb.connect(uri, storage_options=dict(storage_options or {}) or None)
            names = set(db.list_tables().tables)
            table = (db.open_table(_TABLE) if _TABLE in names
                     else db.create_table(_TABLE, schema=_schema(), exist_ok=True))
            erased = (db.open_table(_ERASED_TABLE) if _ERASED_TABLE in names
                      else db.create_table(_ERASED_TABLE, schema=_erased_schema(),
                                           exist_ok=True))
        except Exception as exc:
            reason = open_failure(exc, uri=uri, options=storage_options or {})
            raise StoreError(f"magma: open versions in {uri}: {reason}") from exc
        lease: Any = contextlib.nullcontext()
        if is_local_uri(uri):
            folder = Path(urlparse(uri).path if uri.startswith("file:") else uri)
            lease = filelock.FileLock(folder / _LEASE_FILE, timeout=LEASE_TIMEOUT_S)
        archive = cls(table, archive_dir=archive_dir, lease=lease, device=device, erased=erased)
        if archive_dir.is_dir() and table.count_rows() == 0 and any(archive_dir.iterdir()):
            # A new store (e.g. a shared one, just configured) for a device that kept
            # versions before: its history comes along before anything is numbered.
            archive.repair()
        return archive

    # ------------------------------------------------------------------ reads

    def _rows(self, where: str | None = None, *, content: bool = False) -> list[dict[str, Any]]:
        try:
            self._table.checkout_latest()  # see what other processes committed
            query = self._table.search().select(_COLUMNS + (["content"] if content else []))
            if where:
                query = query.where(where)
            return query.limit(None).to_arrow().to_pylist()
        except Exception as exc:
            raise StoreError(f"magma: read versions: {type(exc).__name__}: {exc}") from exc

    def all_versions(self, ids: Collection[str] | None = None) -> dict[str, list[Version]]:
        """``{memory id: [Version, …] by number}`` for ``ids`` (default: every memory).
        One columnar read without the contents."""
        return _grouped(self._rows(_where_ids(ids)))

    def heads(self, ids: Collection[str] | None = None) -> dict[str, Version]:
        """``{memory id: current version}``: the highest-numbered ``edit`` or ``tombstone``
        (a ``kept`` side version is never current)."""
        return {mid: head for mid, versions in self.all_versions(ids).items()
                if (head := current(versions)) is not None}

    def history(self, memory_id: str) -> list[Version]:
        """Every version of ``memory_id``, oldest first (empty when it has none)."""
        return self.all_versions([memory_id]).get(memory_id, [])

    def get(self, memory_id: str, n: int) -> Version:
        """Version ``n`` of ``memory_id``. Raises :class:`VersionNotFoundError`."""
        versions = self.history(memory_id)
        for version in versions:
            if version.n == n:
                return version
        numbers = [v.n for v in versions]
        if not numbers:
            known = "no versions yet"
        elif numbers == list(range(numbers[0], numbers[-1] + 1)):
            known = f"versions {numbers[0]}-{numbers[-1]}"
        else:
            known = "versions " + ", ".join(str(x) for x in numbers)
        raise VersionNotFoundError(
            f"versions: {memory_id} has no version {n} ({known}; see its history)"
        )

    def content(self, memory_id: str, n: int) -> bytes:
        """The exact bytes of version ``n`` (from this device's file when it holds them, else
        the table). Raises :class:`VersionNotFoundError`."""
        version = self.get(memory_id, n)
        local = self._files.folder(memory_id) / f"{n}.md"
        try:
            data = local.read_bytes()
            if hashlib.sha256(data).hexdigest() == version.content_hash:
                return data
        except OSError:
            pass
        rows = self._rows(f"memory_id = {_sql(memory_id)} AND n = {n}", content=True)
        for row in rows:
            if row["content_hash"] == version.content_hash:
                return bytes(row["content"])
        raise VersionNotFoundError(f"versions: {memory_id} version {n}: content is missing")

    # ------------------------------------------------------------------ writes

    def record(
        self, items: Sequence[NewVersion], *, now: datetime | None = None,
        known: dict[str, list[Version]] | None = None,
    ) -> list[Version]:
        """Record ``items`` as new versions, under the lease; returns those recorded.

        An ``edit`` equal to the memory's current version (same hash), and a ``tombstone`` of
        a memory that is already deleted or has no history, are skipped. Files first, then one
        table commit for the whole batch (module docstring). ``known``: the items' versions
        as read under the :meth:`lease` the caller still holds.
        """
        if not items:
            return []
        stamp = (now or datetime.now(UTC)).astimezone(UTC)
        with self.lease():
            known = {key: list(versions) for key, versions in (
                known if known is not None else self.all_versions({i.memory_id for i in items})
            ).items()}
            made: list[Version] = []
            rows: list[dict[str, Any]] = []
            for item in items:
                versions = known.setdefault(item.memory_id, [])
                head = current(versions)
                digest = hashlib.sha256(item.content).hexdigest()
                if item.kind == "tombstone":
                    if head is None or head.kind == "tombstone":
                        continue
                elif item.kind == "edit" and head is not None and head.kind == "edit" \
                        and head.content_hash == digest:
                    continue
                elif item.kind == "kept" and digest in {v.content_hash for v in versions}:
                    continue  # already in the history
                n = max([v.n for v in versions] + [self._files.max_n(item.memory_id)]) + 1
                change = item.change_log
                if not change and item.kind == "edit" and head is not None \
                        and head.kind == "edit":
                    change = _line_changes(self._local_content(head), item.content)
                version = Version(
                    memory_id=item.memory_id, n=n, kind=item.kind, path=item.path,
                    content_hash=digest, created_at=stamp, origin=item.origin,
                    change_log=change, prev=head.n if head else None,
                    device=self.device, memory_type=item.memory_type, name=item.name,
                )
                self._files.write(version, item.content)
                versions.append(version)
                made.append(version)
                rows.append({**_row(version), "content": item.content})
            self._add(rows)
        for version in made:
            log.info("version.recorded", memory_id=version.memory_id, n=version.n,
                     kind=version.kind, origin=version.origin)
        return made

    def forget(self, memory_id: str) -> int:
        """Delete every version of ``memory_id`` (rows and files); returns how many rows went.
        The caller compacts the table so no old table version keeps the text."""
        with self.lease():
            count = len(self.history(memory_id))
            self._note_erased([(memory_id, None)])
            try:
                self._table.delete(f"memory_id = {_sql(memory_id)}")
            except Exception as exc:
                raise StoreError(f"magma: forget versions of {memory_id}: {exc}") from exc
        folder = self._files.folder(memory_id)
        if folder.is_dir():
            for child in folder.iterdir():
                child.unlink(missing_ok=True)
            folder.rmdir()
        return count

    def rewrite(self, edit: Callable[[str, bytes], bytes | None], *, needle: bytes) -> int:
        """Store ``edit(path, content)`` in place of every version whose bytes hold
        ``needle`` (ASCII case folded); ``None`` leaves a version as it is. The version keeps
        its number and place in the history; its hash follows its new bytes (``forget``
        takes a forgotten memory's name out of the others' earlier versions). Returns how
        many were rewritten; the caller compacts. Raises :class:`StoreError`."""
        needle = needle.lower()
        with self.lease():
            fresh: list[dict[str, Any]] = []
            for row in self._rows(content=True):
                content = bytes(row["content"])
                new = edit(row["path"], content) if needle in content.lower() else None
                if new is None or new == content:
                    continue
                version = replace(_version(row), content_hash=hashlib.sha256(new).hexdigest())
                if (self._files.folder(version.memory_id) / f"{version.n}.md").exists():
                    self._files.write(version, new)
                fresh.append({**_row(version), "content": new})
            if fresh:  # one commit: every version is in the table before and after
                try:
                    (self._table.merge_insert(["memory_id", "n"]).when_matched_update_all()
                     .execute(pa.Table.from_pylist(fresh, schema=_schema())))
                except Exception as exc:
                    raise StoreError(f"magma: rewrite versions: {exc}") from exc
        return len(fresh)

    def compact(self) -> None:
        """Rewrite the table's live rows and drop old table versions, so deleted rows leave
        the disk (``forget``, pruning) while versions other devices record at the same time
        stay (:func:`magma.shared_tables.rewrite_live_rows`). Raises :class:`StoreError`."""
        with self.lease():
            try:
                rewrite_live_rows(self._table, "memory_id")
            except Exception as exc:
                raise StoreError(f"magma: compact versions: {exc}") from exc

    def prune(self, *, keep_last: int, keep_days: float, now: datetime) -> int:
        """Drop old versions by policy; returns how many went. ``keep_last`` (0: all) keeps the
        newest N per memory, ``keep_days`` (0: forever) drops versions older than that. The
        current version (and so a deleted memory's tombstone and the version before it) is
        always kept. Pure selection in :func:`prunable`."""
        if not keep_last and not keep_days:
            return 0
        with self.lease():
            doomed = prunable(self.all_versions(), keep_last=keep_last, keep_days=keep_days,
                              now=now)
            self._note_erased([(m, n) for m, numbers in doomed.items() for n in numbers])
            for memory_id, numbers in doomed.items():
                listed = ", ".join(str(n) for n in sorted(numbers))
                try:
                    self._table.delete(f"memory_id = {_sql(memory_id)} AND n IN ({listed})")
                except Exception as exc:
                    raise StoreError(f"magma: prune versions of {memory_id}: {exc}") from exc
                folder = self._files.folder(memory_id)
                for n in numbers:
                    for suffix in (".md", ".json"):
                        (folder / f"{n}{suffix}").unlink(missing_ok=True)
        return sum(len(n) for n in doomed.values())

    def repair(self) -> RepairReport:
        """Bring the table and this device's files in step (module docstring): files without
        a row are added (a crash between the two writes), rows without files are mirrored,
        rows recorded twice are dropped, and one number given to two contents is split by
        renumbering the later one. Returns the counts."""
        with self.lease():
            rows = self._rows()
            dropped, renumbered = self._split_twice_numbered(rows)
            if dropped or renumbered:
                rows = self._rows()
            in_table = {(r["memory_id"], r["n"]): r for r in rows}
            local = self._files.versions(quarantine=True)
            added, gone = self._add_unrecorded(in_table, local)
            mirrored = 0
            for key, row in sorted(in_table.items()):
                if key in local:
                    continue
                content = self._rows(
                    f"memory_id = {_sql(key[0])} AND n = {key[1]}", content=True)
                if content:
                    self._files.write(_version(row), bytes(content[0]["content"]))
                    mirrored += 1
        report = RepairReport(added, mirrored, dropped, renumbered, gone)
        if report.total:
            log.info("versions.repaired", **asdict(report))
        return report

    def _split_twice_numbered(self, rows: list[dict[str, Any]]) -> tuple[int, int]:
        """Rows recorded twice under one ``(memory, n)``: the same content is dropped, another
        content renumbered after the memory's last version. Returns (dropped, renumbered)."""
        dropped = renumbered = 0
        by_key: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for row in rows:
            by_key.setdefault((row["memory_id"], row["n"]), []).append(row)
        top: dict[str, int] = {}
        for mid, n in by_key:
            top[mid] = max(top.get(mid, 0), n)
        for (mid, n), group in sorted(by_key.items()):
            if len(group) == 1:
                continue
            group.sort(key=lambda r: (r["created_at"], r["device"] or ""))
            keep, seen = group[0], {group[0]["content_hash"]}
            rest = group[1:]
            with_content = {(r["content_hash"]): r for r in
                            self._rows(f"memory_id = {_sql(mid)} AND n = {n}", content=True)}
            self._delete_key(mid, n)
            fresh = [{**keep, "content": with_content[keep["content_hash"]]["content"]}]
            for row in rest:
                if row["content_hash"] in seen:
                    dropped += 1
                    continue
                seen.add(row["content_hash"])
                top[mid] += 1
                fresh.append({**row, "n": top[mid],
                              "content": with_content[row["content_hash"]]["content"]})
                renumbered += 1
                self._files.forget(mid, n, row["content_hash"])
            self._add(fresh)
            log.warning("versions.duplicates_repaired", memory_id=mid, n=n,
                        dropped=len(rest) - (len(fresh) - 1), renumbered=len(fresh) - 1)
        return dropped, renumbered

    def _add_unrecorded(self, in_table: dict[tuple[str, int], dict[str, Any]],
                        local: dict[tuple[str, int], tuple[Version, Path]]) -> tuple[int, int]:
        """This device's version files the table lacks: added as rows (a crash between the
        two writes), unless erased on purpose (then the files go). Returns (added, gone)."""
        erased = self._erased_marks()
        missing_rows: list[dict[str, Any]] = []
        gone = 0
        for key, (version, path) in sorted(local.items()):
            if key in in_table:
                continue
            if _is_erased(version, erased):
                self._files.forget(version.memory_id, version.n, version.content_hash)
                gone += 1  # forgotten or pruned on purpose (maybe on another device)
                continue
            try:
                data = path.read_bytes()
            except OSError:
                continue
            if hashlib.sha256(data).hexdigest() != version.content_hash:
                continue  # a torn file: the row was never written either
            missing_rows.append({**_row(version), "content": data})
        self._add(missing_rows)
        return len(missing_rows), gone

    def forgotten(self, memory_ids: Collection[str]) -> set[str]:
        """Which of ``memory_ids`` were forgotten (``dreamd forget`` on any device of the
        store: the erased table marks the whole memory). Raises :class:`StoreError`."""
        if not memory_ids:
            return set()
        marks = self._erased_marks()
        return {m for m in memory_ids
                if any(n is None for n, _ in (*marks.get(erased_key(m), ()), *marks.get(m, ())))}

    def needs_repair(self) -> bool:
        """Cheap test for :meth:`repair`: is a version this device recorded missing from the
        table or from its files, or is a number recorded twice? (A column read and a folder
        listing; no contents read.) Another device's versions not yet copied here are not
        drift: :meth:`repair` copies them when it runs."""
        return self._needs_repair(self._rows())

    def survey(self) -> tuple[dict[str, list[Version]], bool]:
        """:meth:`all_versions` and :meth:`needs_repair` from one read of the table; the
        read is kept while the table stays at its version (a check where nothing changed
        reads it once; the archive folder is listed every time)."""
        rows, grouped = self._surveyed()
        return {mid: list(versions) for mid, versions in grouped.items()}, \
            self._needs_repair(rows)

    def _surveyed(self) -> tuple[list[dict[str, Any]], dict[str, list[Version]]]:
        """The table's rows (without contents) and :func:`_grouped` of them, at its latest
        version. Raises :class:`StoreError`."""
        try:
            self._table.checkout_latest()  # see what other processes committed
            version: int | None = int(self._table.version)
        except Exception:  # a table that cannot say: read it (which raises what fails)
            version = None
        kept = self._survey
        if kept is not None and version is not None and kept[0] == version:
            return kept[1], kept[2]
        rows = self._rows()
        grouped = _grouped(rows)
        self._survey = (version, rows, grouped) if version is not None else None
        return rows, grouped

    def optimize(self, cleanup_older_than: timedelta) -> None:
        """Compact the table (every record is one append) and drop table versions older than
        ``cleanup_older_than``; the daemon does this with its other maintenance. Tried again
        when another device's compaction commits first (:mod:`magma.shared_tables`).
        Raises :class:`StoreError`."""
        with self.lease():
            try:
                shared_tables.optimize(self._table, cleanup_older_than)
            except Exception as exc:
                raise StoreError(f"magma: optimize versions: {exc}") from exc

    def _needs_repair(self, rows: list[dict[str, Any]]) -> bool:
        keys = [(_folder_name(r["memory_id"]), r["n"]) for r in rows]
        ours = {(_folder_name(r["memory_id"]), r["n"]) for r in rows
                if r["device"] == self.device}
        local = self._files.keys()
        return len(keys) != len(set(keys)) or not local <= set(keys) or not ours <= local

    # ------------------------------------------------------------------ internals

    @contextlib.contextmanager
    def lease(self) -> Iterator[None]:
        """Hold the store lease (reentrant: a read and a :meth:`record` under one). Raises
        :class:`StoreError` when another device or process holds it too long."""
        try:
            with self._lease:
                yield
        except filelock.Timeout as exc:
            raise StoreError(
                f"magma: versions: another device or process held the store lease for "
                f"{LEASE_TIMEOUT_S:.0f} s ({exc.lock_file}); try again"
            ) from exc

    def _note_erased(self, keys: list[tuple[str, int | None]]) -> None:
        if not keys or self._erased is None:
            return
        stamp = datetime.now(UTC)
        try:
            self._erased.add(pa.Table.from_pylist(
                [{"memory_id": erased_key(m), "n": n, "at": stamp} for m, n in keys],
                schema=_erased_schema()))
        except Exception as exc:
            raise StoreError(f"magma: record erased versions: {exc}") from exc

    def _erased_marks(self) -> dict[str, list[tuple[int | None, datetime]]]:
        if self._erased is None:
            return {}
        try:
            self._erased.checkout_latest()
            rows = self._erased.search().limit(None).to_arrow().to_pylist()
        except Exception as exc:
            raise StoreError(f"magma: read erased versions: {exc}") from exc
        marks: dict[str, list[tuple[int | None, datetime]]] = {}
        for row in rows:
            at = row["at"] if row["at"].tzinfo else row["at"].replace(tzinfo=UTC)
            marks.setdefault(row["memory_id"], []).append((row["n"], at))
        return marks

    def _add(self, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        try:
            self._table.add(pa.Table.from_pylist(rows, schema=_schema()))
        except Exception as exc:
            raise StoreError(f"magma: record versions: {type(exc).__name__}: {exc}") from exc

    def _delete_key(self, memory_id: str, n: int) -> None:
        try:
            self._table.delete(f"memory_id = {_sql(memory_id)} AND n = {n}")
        except Exception as exc:
            raise StoreError(f"magma: repair versions of {memory_id}: {exc}") from exc

    def _local_content(self, version: Version) -> bytes | None:
        """``version``'s bytes: this device's copy, else (another device's version) the
        table's."""
        try:
            data = (self._files.folder(version.memory_id) / f"{version.n}.md").read_bytes()
            if hashlib.sha256(data).hexdigest() == version.content_hash:
                return data
        except OSError:
            pass
        rows = self._rows(f"memory_id = {_sql(version.memory_id)} AND n = {version.n}",
                          content=True)
        return next((bytes(r["content"]) for r in rows
                     if r["content_hash"] == version.content_hash), None)


def erased_key(memory_id: str) -> str:
    """How an erased memory is named in the erased table: a digest of its key, never the key
    (a memory without an ``id`` is keyed by its path, and the path is its text, slugged)."""
    return "sha256:" + hashlib.sha256(memory_id.encode("utf-8")).hexdigest()


def _erased_schema() -> pa.Schema:
    return pa.schema([
        pa.field("memory_id", pa.string(), nullable=False),
        pa.field("n", pa.int64()),  # null: every version up to ``at``
        pa.field("at", pa.timestamp("us", tz="UTC"), nullable=False),
    ])


def _is_erased(version: Version, marks: Mapping[str, list[tuple[int | None, datetime]]]) -> bool:
    """Was ``version`` deleted on purpose: its memory forgotten after it was made, or this
    very version pruned?"""
    for n, at in (*marks.get(erased_key(version.memory_id), ()),
                  *marks.get(version.memory_id, ())):  # (marks of stores before digests)
        if (n is None and version.created_at <= at) or n == version.n:
            return True
    return False


def _line_changes(old: bytes | None, new: bytes) -> str:
    """``"+2 -1 lines"`` from ``old`` to ``new`` (empty when ``old`` is unknown)."""
    if old is None:
        return ""
    added = removed = 0
    for line in difflib.unified_diff(old.decode("utf-8", "replace").splitlines(),
                                     new.decode("utf-8", "replace").splitlines(),
                                     lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return f"+{added} -{removed} lines"


def current(versions: Sequence[Version]) -> Version | None:
    """The current version among one memory's ``versions``: the highest-numbered ``edit`` or
    ``tombstone``; ``None`` when there is none."""
    heads = [v for v in versions if v.kind != "kept"]
    return max(heads, key=lambda v: v.n) if heads else None


def prunable(
    history: Mapping[str, Sequence[Version]], *, keep_last: int, keep_days: float, now: datetime
) -> dict[str, set[int]]:
    """``{memory id: version numbers to drop}`` under the policy of :meth:`VersionArchive.prune`
    (pure; ``now`` is UTC)."""
    doomed: dict[str, set[int]] = {}
    cutoff = now - timedelta(days=keep_days) if keep_days else None
    for memory_id, versions in history.items():
        ordered = sorted(versions, key=lambda v: v.n, reverse=True)
        head = current(ordered)
        protected = {head.n} if head else set()
        if head is not None and head.kind == "tombstone" and head.prev is not None:
            protected.add(head.prev)  # a deleted memory keeps what it said last
        drop = set()
        for position, version in enumerate(ordered):
            if version.n in protected or version.kind == "kept":
                continue  # a conflict's losing side is in no current file: never pruned
            if (keep_last and position >= keep_last) or (
                    cutoff is not None and version.created_at < cutoff):
                drop.add(version.n)
        if drop:
            doomed[memory_id] = drop
    return doomed



def _where_ids(ids: Collection[str] | None) -> str | None:
    if ids is None:
        return None
    return "memory_id IN (" + ", ".join(_sql(i) for i in sorted(set(ids))) + ")" \
        if ids else "false"

def _numbers(folder: str) -> frozenset[int]:
    """The version numbers of a memory folder: its ``<n>.json`` files, by name."""
    numbers: set[int] = set()
    with os.scandir(folder) as entries:
        for entry in entries:
            stem, _, suffix = entry.name.partition(".")
            if suffix == "json" and stem.isdigit() and entry.is_file():
                numbers.add(int(stem))
    return frozenset(numbers)


def _grouped(rows: list[dict[str, Any]]) -> dict[str, list[Version]]:
    """``{memory id: [Version, …] by number}`` from table rows. A content recorded twice
    under one number (two devices on object storage in the same moment, module docstring)
    reads as the earlier row only, as :meth:`VersionArchive.repair` will leave it."""
    found: dict[str, list[Version]] = {}
    for row in rows:
        found.setdefault(row["memory_id"], []).append(_version(row))
    for key, versions in found.items():
        versions.sort(key=lambda v: (v.n, v.created_at, v.device or ""))
        once: dict[tuple[int, str], Version] = {}
        for version in versions:
            once.setdefault((version.n, version.content_hash), version)
        found[key] = list(once.values())
    return found


def _row(version: Version) -> dict[str, Any]:
    return {
        "memory_id": version.memory_id, "n": version.n, "kind": version.kind,
        "path": version.path, "content_hash": version.content_hash,
        "created_at": version.created_at, "origin": version.origin,
        "change_log": version.change_log, "prev": version.prev, "device": version.device,
        "memory_type": version.memory_type, "name": version.name,
    }


def _version(row: Mapping[str, Any]) -> Version:
    created = row["created_at"]
    if created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    return Version(
        memory_id=row["memory_id"], n=int(row["n"]), kind=row["kind"], path=row["path"],
        content_hash=row["content_hash"], created_at=created, origin=row["origin"],
        change_log=row["change_log"], prev=row["prev"], device=row["device"],
        memory_type=row["memory_type"], name=row["name"],
    )
