"""Drive ``dreamd run`` as a real subprocess and check its store against the disk.

Used by ``tests/daemon/test_runner.py``, ``tests/daemon/test_kill9.py`` and
``bench/daemon_reliability.py`` (they load this file by path: pytest runs with
``--import-mode=importlib``, so ``tests/daemon`` is not importable as a package).

As a script it is a launcher: ``python daemon_harness.py VAULT`` runs the same
:class:`daemon.runner.Daemon` as ``dreamd run VAULT`` (same settings, same JSON logs on
stderr, same exit codes), except that the embedder is the token-hash FAKE of
``tests/daemon/conftest.py``, injected at the composition-root seam (``App.__dict__``). The
fake is used because these tests are about the files and rows the daemon keeps, not about
meaning, and it makes a start-up take well under a second; the tests that are about meaning
run the real ``dreamd`` console script with the real model.

Every wait here is bounded: :func:`wait_until` polls a condition until a deadline and then
raises ``AssertionError`` with what it last saw. Nothing asserts on timings.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

__all__ = [
    "HARNESS",
    "REPO",
    "DaemonProcess",
    "TrialResult",
    "chunk_bodies",
    "fresh_app",
    "index_vs_disk",
    "load_fake_embedder",
    "main",
    "run_trial",
    "run_writers_trial",
    "store_integrity",
    "wait_until",
]

HARNESS = Path(__file__).resolve()
#: ``tests/support``: test support, importable by name (pytest's ``pythonpath``).
SUPPORT = HARNESS.parent
REPO = HARNESS.parents[2]
VAULT_EXAMPLE = REPO / "vault_example"

T = TypeVar("T")


# ----------------------------------------------------------------------------- launcher


#: Environment variable: seconds the fake embedder of a launched daemon spends on each text,
#: so that a test can watch a large batch while it is under way.
EMBED_DELAY_VAR = "HARNESS_EMBED_DELAY_S"


def load_fake_embedder() -> Any:
    """A new FAKE ``TokenHashEmbedder`` (``tests/support/fakes.py``), slowed down by
    :data:`EMBED_DELAY_VAR` seconds a text when that is set."""
    from fakes import TokenHashEmbedder

    delay_s = float(os.environ.get(EMBED_DELAY_VAR) or 0)
    if not delay_s:
        return TokenHashEmbedder()

    class Slowed(TokenHashEmbedder):
        def embed(self, texts: Sequence[str]) -> Any:
            time.sleep(delay_s * len(texts))
            return super().embed(texts)

    return Slowed()


def main(argv: Sequence[str]) -> int:
    """``daemon_harness.py VAULT``: ``dreamd run VAULT`` with the fake embedder. Exit code as
    the CLI's (0 on SIGTERM, 7 when another daemon holds the vault).

    ``daemon_harness.py writer|obsidian VAULT MARKER EDITS SEED GAP GO PATH...`` runs one process
    of the writers trial (:func:`writer_process`, :func:`obsidian_process`)."""
    if argv and argv[0] in {"writer", "obsidian"}:
        kind, vault_arg, marker, edits, seed, gap, go, *paths = argv
        _start_together(Path(go), marker)
        if kind == "writer":
            writer_process(vault_arg, paths, marker, int(edits), int(seed))
        else:
            obsidian_process(vault_arg, paths, marker, int(edits), int(seed), float(gap))
        return 0
    from config.errors import DreamdError, exit_code_for
    from daemon.app import App, load
    from daemon.logs import configure_logging
    from daemon.runner import Daemon

    (vault,) = argv
    overrides = {"vault.path": vault}
    try:
        loaded = load(None, None, overrides)
        configure_logging(level=loaded.settings.logging.level, fmt=loaded.settings.logging.format)
        app = App.create(loaded, embedder=load_fake_embedder())  # FAKE: the module docstring
        return Daemon(app, reload=lambda: load(None, None, overrides)).run()
    except DreamdError as error:
        print(f"dreamd: {error}", file=sys.stderr)
        return exit_code_for(error)


# ----------------------------------------------------------------------------- waiting


def wait_until(
    probe: Callable[[], T], ok: Callable[[T], bool], *, timeout_s: float, what: str,
    every_s: float = 0.1,
) -> T:
    """Call ``probe`` until ``ok(value)`` or ``timeout_s`` passes; returns the good value.

    Raises ``AssertionError`` naming ``what`` and the last value seen.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        value = probe()
        if ok(value):
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}; "
                                 f"last seen: {value!r}"[:4000])
        time.sleep(every_s)


# ----------------------------------------------------------------------------- process


@dataclass
class DaemonProcess:
    """One daemon subprocess; its stderr (JSON log lines) goes to ``log_path``."""

    proc: subprocess.Popen[bytes]
    state_dir: Path
    log_path: Path

    @classmethod
    def start(cls, vault: Path, log_path: Path, *, fake: bool = True) -> DaemonProcess:
        """Start the fake-embedder launcher (``fake``) or the real ``dreamd run`` on ``vault``."""
        from daemon.app import App, load

        state_dir = App(load(None, None, {}), vault.resolve()).state_dir
        if fake:
            cmd = [sys.executable, str(HARNESS), str(vault)]
        else:
            cmd = [str(Path(sys.executable).with_name("dreamd")), "run", str(vault)]
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("ab") as err:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=err, cwd=REPO)
        return cls(proc, state_dir, log_path)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def status(self) -> dict[str, Any]:
        """``daemon.json`` as written by *this* process, else ``{}`` (absent or stale)."""
        try:
            data = json.loads((self.state_dir / "daemon.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) and data.get("pid") == self.pid else {}

    def wait_state(self, *states: str, timeout_s: float = 60.0) -> dict[str, Any]:
        """Wait until this process's ``daemon.json`` has one of ``states``; fail if it exits."""

        def probe() -> dict[str, Any]:
            if self.proc.poll() is not None:
                raise AssertionError(f"daemon exited with {self.proc.returncode} while waiting "
                                     f"for {states}; log tail:\n{self.log_tail()}")
            return self.status()

        return wait_until(probe, lambda s: s.get("state") in states, timeout_s=timeout_s,
                          what=f"daemon.json state in {states}")

    def events(self) -> list[dict[str, Any]]:
        """The JSON log records written so far (non-JSON lines are skipped)."""
        found: list[dict[str, Any]] = []
        for line in self.log_path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                found.append(record)
        return found

    def log_tail(self, lines: int = 15) -> str:
        text = self.log_path.read_text(encoding="utf-8", errors="replace") \
            if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout_s: float = 60.0) -> int:
        """SIGTERM, then wait (bounded) for the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.kill9()
            raise AssertionError(f"daemon did not stop within {timeout_s} s of SIGTERM; "
                                 f"log tail:\n{self.log_tail()}") from None

    def kill9(self) -> None:
        """SIGKILL and reap (no clean-up runs in the daemon)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)


# ----------------------------------------------------------------------------- checks


def fresh_app(vault: Path, *, fake: bool = True) -> Any:
    """A new ``App`` on ``vault`` whose store is opened anew (sees the latest commits)."""
    from daemon.app import App, load

    return App.create(load(None, None, {"vault.path": str(vault)}),
                      embedder=load_fake_embedder() if fake else None)


def _expected_notes(app: Any) -> tuple[dict[str, str], set[str]]:
    """From disk: ``{note path: sha256 of bytes}`` of readable notes, and attachment paths."""
    from ccb.scan import scan_vault

    notes: dict[str, str] = {}
    attachments: set[str] = set()
    for entry in scan_vault(app.vault_root, app.vault_filter).entries:
        if entry.kind == "attachment":
            attachments.add(entry.path)
            continue
        try:
            data = (app.vault_root / entry.path).read_bytes()
        except OSError:
            continue
        notes[entry.path] = hashlib.sha256(data).hexdigest()
    return notes, attachments


def index_vs_disk(app: Any) -> list[str]:
    """Differences between ``app.store.file_index()`` and a scan of the vault (empty: equal).

    Paths must match exactly; each note's stored content hash must be the SHA-256 of the
    file's bytes now.
    """
    index = app.store.file_index()
    notes, attachments = _expected_notes(app)
    problems: list[str] = []
    on_disk = set(notes) | attachments
    for path in sorted(set(index) - on_disk):
        problems.append(f"orphan (indexed, not on disk): {path}")
    for path in sorted(on_disk - set(index)):
        problems.append(f"missing (on disk, not indexed): {path}")
    for path, digest in sorted(notes.items()):
        known = index.get(path)
        if known is not None and known.content_hash != digest:
            problems.append(f"stale hash: {path}")
    return problems


def store_integrity(app: Any) -> list[str]:
    """Row-level checks of the raw tables (empty: all good).

    ``files``: no duplicate ``path``. ``chunks``: no duplicate ``chunk_id``, no chunk whose
    path has no note row, and each note's ``{chunk_id: content_hash}`` equal to what
    ``chunk_note`` gives for the file on disk now. ``links``: no duplicate ``link_id``, and
    each note's ``{link_id: (target, line)}`` equal to the links of the file on disk now.
    """
    import lancedb

    from ccb.scan import read_note
    from magma.chunking import chunk_note

    db = lancedb.connect(app.store_uri)
    files = db.open_table("files").to_arrow().select(["path", "kind"]).to_pydict()
    chunks = db.open_table("chunks").to_arrow().select(
        ["chunk_id", "path", "content_hash"]).to_pydict()
    links = db.open_table("links").to_arrow().select(
        ["link_id", "src", "target", "line"]).to_pydict()
    problems: list[str] = []
    for name, column in (("files.path", files["path"]), ("chunks.chunk_id", chunks["chunk_id"]),
                         ("links.link_id", links["link_id"])):
        dupes = sorted(key for key, n in Counter(column).items() if n > 1)
        if dupes:
            problems.append(f"duplicate {name}: {dupes[:10]}")
    note_paths = {p for p, k in zip(files["path"], files["kind"], strict=True) if k == "note"}
    stored: dict[str, dict[str, str]] = {}
    for chunk_id, path, chash in zip(chunks["chunk_id"], chunks["path"], chunks["content_hash"],
                                     strict=True):
        stored.setdefault(path, {})[chunk_id] = chash
    for path in sorted(set(stored) - note_paths):
        problems.append(f"orphan chunks (no note row): {path} ({len(stored[path])} chunks)")
    stored_links: dict[str, dict[str, tuple[str, int]]] = {}
    for link_id, src, target, line in zip(links["link_id"], links["src"], links["target"],
                                          links["line"], strict=True):
        stored_links.setdefault(src, {})[link_id] = (target, line)
    max_chars = app.settings.sync.chunk_max_chars
    for path in sorted(note_paths):
        if not (app.vault_root / path).is_file():
            continue  # reported by index_vs_disk
        try:
            note = read_note(app.vault_root, path)
        except Exception as error:  # the file changed under us: say so, do not crash
            problems.append(f"unreadable now: {path}: {error}")
            continue
        expected = {f"{path}#{c.ordinal}": c.content_hash
                    for c in chunk_note(note, max_chars=max_chars)}
        if stored.get(path, {}) != expected:
            problems.append(f"chunks differ from disk: {path}")
        if stored_links.get(path, {}) != {f"{path}#{n}": (link.target, link.line)
                                          for n, link in enumerate(note.links)}:
            problems.append(f"links differ from disk: {path}")
    return problems


def chunk_bodies(app: Any, path: str) -> list[str]:
    """The stored chunk bodies of the note at ``path``, by ordinal (raw ``chunks`` table)."""
    import lancedb

    from magma.store import sql_str

    table = lancedb.connect(app.store_uri).open_table("chunks")
    rows = table.search().where(f"path = {sql_str(path)}").select(["ordinal", "body"]) \
        .limit(None).to_arrow().to_pylist()
    return [row["body"] for row in sorted(rows, key=lambda r: r["ordinal"])]


# ----------------------------------------------------------------------------- kill -9 trials

WORDS = ("amber", "basil", "cedar", "delta", "ember", "fjord", "granite", "harbor", "indigo",
         "juniper", "kelp", "lantern", "meadow", "nectar", "orchid", "pumice", "quartz", "raven",
         "saffron", "tundra", "umber", "violet", "willow", "xenon", "yarrow", "zephyr")


@dataclass
class TrialResult:
    """One kill -9 trial: its seed, what was done, and every check that failed (empty: ok)."""

    seed: int
    ops: list[str] = field(default_factory=list)
    kill_after_op: int = -1
    failures: list[str] = field(default_factory=list)
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failures

    def summary(self) -> str:
        head = f"seed {self.seed}: killed after op {self.kill_after_op} of {len(self.ops)}"
        if self.ok:
            return head + ": ok"
        return head + ": " + "; ".join(self.failures[:8]) + f" | ops: {self.ops}"


class _Vault:
    """The random file operations of one trial, on real files (no daemon knowledge)."""

    def __init__(self, root: Path, rng: random.Random, max_deletes: int) -> None:
        from ccb.scan import VaultFilter, scan_vault

        self.root = root
        self.rng = rng
        scan = scan_vault(root, VaultFilter.for_vault(root))
        self.notes = sorted(e.path for e in scan.entries
                            if e.kind == "note" and not e.path.startswith("edge-cases/"))
        self.folders: list[str] = []  # folders this trial created (may be renamed)
        self.max_deletes = max_deletes
        self.deletes = 0
        self.counter = 0

    def _text(self) -> str:
        rng = self.rng
        lines = [f"# {rng.choice(WORDS).title()} {self.counter}", ""]
        for _ in range(rng.choice((1, 2, 3, 12))):  # 12 paragraphs: several chunks
            lines.append(" ".join(rng.choices(WORDS, k=rng.randint(5, 40))) + ".")
            lines.append("")
            if rng.random() < 0.2:
                lines += [f"## {rng.choice(WORDS)}", ""]
        front = f"---\ntags: [{rng.choice(WORDS)}]\n---\n" if rng.random() < 0.3 else ""
        return front + "\n".join(lines)

    def _new_name(self, folder: str) -> str:
        self.counter += 1
        name = f"note {self.counter} {self.rng.choice(WORDS)}.md"
        return f"{folder}/{name}" if folder else name

    def step(self) -> str:
        """Apply one random operation; returns a description."""
        self.counter += 1
        rng = self.rng
        kinds = ["create"] * 3 + ["modify"] * 3 + ["atomic"] * 2 + ["rename", "move"]
        if self.deletes < self.max_deletes:
            kinds.append("delete")
        if self.folders:
            kinds.append("rename_folder")
        kind = rng.choice(kinds) if self.notes else "create"
        if kind == "create":
            parents = sorted({p.rpartition("/")[0] for p in self.notes} | set(self.folders))
            path = self._new_name(rng.choice(parents) if parents else "")
            self._write(path, self._text())
            self.notes.append(path)
            return f"create {path}"
        path = rng.choice(self.notes)
        target = self.root / path
        if kind == "modify":
            if rng.random() < 0.5:
                with target.open("a", encoding="utf-8") as handle:
                    handle.write("\n" + " ".join(rng.choices(WORDS, k=8)) + "\n")
            else:
                target.write_text(self._text(), encoding="utf-8")
            return f"modify {path}"
        if kind == "atomic":
            tmp = target.with_name(f".{target.name}.tmp-{rng.randint(1000, 9999)}")
            tmp.write_text(self._text(), encoding="utf-8")
            tmp.replace(target)  # atomic: rename(2) over the note
            return f"atomic {path}"
        if kind == "delete":
            target.unlink()
            self.notes.remove(path)
            self.deletes += 1
            return f"delete {path}"
        if kind == "rename":
            new = self._new_name(path.rpartition("/")[0])
            target.rename(self.root / new)
            self.notes[self.notes.index(path)] = new
            self.deletes += 1  # the guard counts the old path as deleted until renames pair up
            return f"rename {path} -> {new}"
        if kind == "move":
            folder = f"dir {self.counter}"
            if self.folders and rng.random() < 0.5:
                folder = f"{rng.choice(self.folders)}/{folder}"
            (self.root / folder).mkdir(parents=True)
            self.folders.append(folder)
            new = f"{folder}/{Path(path).name}"
            target.rename(self.root / new)
            self.notes[self.notes.index(path)] = new
            self.deletes += 1
            return f"move {path} -> {new}"
        # rename_folder: children arrive without events of their own
        old = rng.choice(self.folders)
        new = f"{old.rpartition('/')[0]}/renamed {self.counter}".lstrip("/")
        (self.root / old).rename(self.root / new)
        moved = sum(1 for p in self.notes if p.startswith(old + "/"))
        self.notes = [new + p[len(old):] if p.startswith(old + "/") else p for p in self.notes]
        self.folders = [new + f[len(old):] if f == old or f.startswith(old + "/") else f
                        for f in self.folders]
        self.deletes += moved
        return f"rename_folder {old} -> {new} ({moved} notes)"

    def _write(self, path: str, text: str) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def run_trial(seed: int, workdir: Path, *, ops: int = 30, settle_timeout_s: float = 60.0) -> (
    TrialResult
):
    """One reliability trial in ``workdir`` (needs the DREAMD_* env pointing into temp dirs).

    Copy ``vault_example``, start the fake-embedder daemon, apply ``ops`` seeded random file
    operations with short random pauses, ``kill -9`` the daemon at a random point (a random
    pause after some operation, so usually while it applies a batch), apply the remaining
    operations while it is down, restart it, wait until the index equals the disk (bounded),
    stop it with SIGTERM and check the store row by row.
    """
    started = time.monotonic()
    rng = random.Random(seed)
    result = TrialResult(seed)
    vault = workdir / "vault"
    shutil.copytree(VAULT_EXAMPLE, vault, symlinks=True)
    files = _Vault(vault, rng, max_deletes=8)
    kill_after = rng.randrange(ops // 4, ops)
    result.kill_after_op = kill_after
    first = DaemonProcess.start(vault, workdir / "daemon-1.log")
    second: DaemonProcess | None = None
    try:
        first.wait_state("watching")
        for number in range(ops):
            result.ops.append(files.step())
            time.sleep(rng.choice((0.0, 0.01, 0.03, 0.08, 0.15)))
            if number == kill_after:
                time.sleep(rng.uniform(0.0, 0.15))
                first.kill9()
        second = DaemonProcess.start(vault, workdir / "daemon-2.log")
        second.wait_state("watching")
        try:
            wait_until(lambda: index_vs_disk(fresh_app(vault)), lambda p: not p,
                       timeout_s=settle_timeout_s, what="index == disk after restart",
                       every_s=0.3)
        except AssertionError as error:
            result.failures.append(str(error))
        code = second.stop()
        if code != 0:
            result.failures.append(f"exit code {code} after SIGTERM")
        if second.status().get("state") != "stopped":
            result.failures.append(f"daemon.json after stop: {second.status().get('state')}")
        app = fresh_app(vault)
        result.failures += index_vs_disk(app)
        result.failures += store_integrity(app)
    except AssertionError as error:
        result.failures.append(str(error))
    finally:
        for process in (first, second):
            if process is not None:
                process.kill9()
    result.duration_s = time.monotonic() - started
    return result




# ----------------------------------------------------------------------------- writers trial
#
# Several dreamd writer processes and a simulated Obsidian edit the same memories while the
# daemon runs. The simulated Obsidian is a STAND-IN for the desktop app (which cannot run
# here): it loads a file into its buffer, the user types for a few milliseconds, and on save
# it re-reads the disk and, if the file changed meanwhile, re-applies its edit to what is
# there (Obsidian merges external changes into an open editor), then replaces the file
# atomically (temp file + rename). Its check and its write are two steps and it takes no lock,
# like the real app: the window in between is where a writer's edit can be saved over.


def _start_together(go: Path, name: str) -> None:
    """Say ready (``<go>.<name>.ready``), then wait for ``go`` to exist: the trial's processes
    start editing at the same moment, whatever their import times (bounded: 120 s)."""
    from ccb.writer import NoteWriter  # noqa: F401 - import before the start line
    from daemon.app import App  # noqa: F401

    go.with_name(f"{go.name}.{name}.ready").touch()
    deadline = time.monotonic() + 120
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.002)


def _stamp() -> Any:
    from datetime import UTC, datetime

    return datetime.now(UTC)


def writer_process(vault: str, paths: list[str], marker: str, edits: int, seed: int) -> None:
    """One dreamd writer: ``edits`` appends of ``- <marker>x<i>`` to random memories, each a
    minimal edit (``updated`` and ``version`` bumped) based on the bytes it read."""
    from ccb.frontmatter_edit import replace_body, set_properties
    from ccb.parse import parse_note
    from daemon.app import App, load

    rng = random.Random(seed)
    writer = App.create(load(None, None, {"vault.path": vault})).writer
    for i in range(edits):
        path = rng.choice(paths)
        current = writer.read(path)
        assert current is not None
        note = parse_note(path, current)
        version = (note.memory.version or 1) if note.memory else 1
        new = set_properties(current, {"updated": _stamp(), "version": version + 1}, path=path)
        new = replace_body(new, note.body.rstrip("\n") + f"\n- {marker}x{i}\n")
        outcome = writer.write(path, new, base=current)
        print(f"{marker}x{i} {path} {outcome.status} {outcome.content_hash[:8]} "
              f"{outcome.conflict_path}", flush=True)
        time.sleep(rng.uniform(0, 0.01))


def obsidian_process(
    vault: str, paths: list[str], marker: str, edits: int, seed: int, save_gap_s: float = 0.0
) -> None:
    """The simulated Obsidian (see above): ``edits`` saves of ``- <marker>x<i>``.
    ``save_gap_s`` widens the gap between its check of the disk and its write (a slow disk,
    a busy machine) so that saves over a writer's edit happen in a short run."""
    import os

    rng = random.Random(seed)
    root = Path(vault)
    for i in range(edits):
        target = root / rng.choice(paths)
        loaded = target.read_bytes()
        time.sleep(rng.uniform(0.002, 0.03))  # the user types
        line = f"- {marker}x{i}\n".encode()
        disk = target.read_bytes()
        buffer = (disk if disk != loaded else loaded).rstrip(b"\n") + b"\n" + line
        time.sleep(rng.uniform(0, save_gap_s))
        temp = target.with_name(f".{target.name}.obsidian-save")
        temp.write_bytes(buffer)
        os.replace(temp, target)  # noqa: PTH105 - the app's own save, as a stand-in
        time.sleep(rng.uniform(0, 0.01))


@dataclass
class WritersResult:
    """One writers trial: markers written, markers found nowhere, torn reads, copies."""

    seed: int
    markers: int = 0
    lost: list[str] = field(default_factory=list)
    torn_reads: int = 0
    reads: int = 0
    conflict_copies: int = 0
    healed: int = 0
    index_problems: list[str] = field(default_factory=list)
    duration_s: float = 0.0
    process_output: list[str] = field(default_factory=list, repr=False)

    @property
    def ok(self) -> bool:
        return not self.lost and not self.torn_reads and not self.index_problems


def run_writers_trial(
    seed: int, workdir: Path, *, writers: int = 3, edits: int = 15, obsidian_edits: int = 15,
    memories: int = 3, settle_timeout_s: float = 60.0, save_gap_s: float = 0.0,
) -> WritersResult:
    """Start the fake-embedder daemon on a fresh vault with ``memories`` memory files, run
    ``writers`` writer processes and one simulated Obsidian at once (new interpreters, never
    ``fork``: LanceDB), read the files all the while, then wait (bounded) for every marker
    to be in a memory or a conflict copy and for the index to equal the disk."""
    import threading
    from datetime import UTC, datetime

    from ulid import ULID

    from ccb.memory_file import NewMemory, render_memory
    from ccb.parse import parse_note

    started = time.monotonic()
    result = WritersResult(seed=seed)
    vault = workdir / f"vault-{seed}"
    (vault / "Memory").mkdir(parents=True)
    (vault / ".obsidian").mkdir()
    paths = []
    now = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
    for n in range(memories):
        path = f"Memory/shared-log-{n}.md"
        (vault / path).write_bytes(render_memory(NewMemory(
            name=f"Shared log {n}", description="written by everyone at once",
            type="project", id=str(ULID()), created=now, updated=now,
            body=f"# Shared log {n}\n\n- start\n")))
        paths.append(path)
    daemon = DaemonProcess.start(vault, workdir / f"daemon-{seed}.log")
    try:
        daemon.wait_state("watching", timeout_s=60)
        stop = threading.Event()

        def read_all() -> None:
            while not stop.is_set():
                for path in paths:
                    data = (vault / path).read_bytes()
                    result.reads += 1
                    note = parse_note(path, data)
                    whole = (data.startswith(b"---\n") and data.endswith(b"\n")
                             and note.memory is not None and b"- start\n" in data)
                    if not whole:
                        result.torn_reads += 1
                time.sleep(0.001)

        reader = threading.Thread(target=read_all, daemon=True)
        reader.start()
        go = workdir / f"go-{seed}"
        procs = [subprocess.Popen(  # real processes, each with its own writer
            [sys.executable, str(HARNESS), kind, str(vault), marker, str(count), str(pseed),
             str(save_gap_s), str(go), *paths], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for kind, marker, count, pseed in [
                *(("writer", f"w{seed}p{p}", edits, seed * 31 + p) for p in range(writers)),
                ("obsidian", f"obs{seed}", obsidian_edits, seed)]]
        wait_until(lambda: len(list(workdir.glob(f"{go.name}.*.ready"))),
                   lambda n: n == len(procs) or any(p.poll() is not None for p in procs),
                   timeout_s=120, what="every writer process ready")
        go.touch()
        for proc in procs:
            out, err = proc.communicate(timeout=300)
            result.healed += (out + err).count(b"write.healed")
            result.process_output.append((out + err).decode(errors="replace"))
            if proc.returncode != 0:
                result.lost.append(f"process {proc.args[2]} exited {proc.returncode}: "
                                   f"{err.decode(errors='replace')[-500:]}")
        stop.set()
        reader.join(10)
        expected = [f"- w{seed}p{p}x{i}\n" for p in range(writers) for i in range(edits)]
        expected += [f"- obs{seed}x{i}\n" for i in range(obsidian_edits)]
        result.markers = len(expected)

        def missing() -> list[str]:
            text = "".join(p.read_text(encoding="utf-8") for p in (vault / "Memory").glob("*.md"))
            return [m.strip() for m in expected if m not in text]

        try:
            wait_until(missing, lambda m: not m, timeout_s=settle_timeout_s,
                       what="every marker in a memory or a conflict copy", every_s=0.2)
        except AssertionError:
            result.lost.extend(missing())
        result.conflict_copies = sum(1 for p in (vault / "Memory").iterdir()
                                     if ".conflict" in p.name)
        result.healed += sum(1 for e in daemon.events() if e.get("event") == "write.healed")

        def differences() -> list[str]:
            return index_vs_disk(fresh_app(vault))

        try:
            wait_until(differences, lambda d: not d, timeout_s=settle_timeout_s,
                       what="index equals disk", every_s=0.3)
        except AssertionError:
            result.index_problems = differences()
    finally:
        daemon.stop()
    result.duration_s = time.monotonic() - started
    return result


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


# ----------------------------------------------------------------------------- versions trial
#
# Fault injection for the version history (``tests/daemon/test_check_faults.py``,
# ``bench/check_faults.py``). The functions below come after the ``__main__`` block on
# purpose: the launcher above never needs them, and they are added without touching it.
#
# One trial: copy the demo vault, index it once, start the fake-embedder daemon (its periodic
# check every ``VERSIONS_CHECK_INTERVAL_MIN`` minutes, so a kill can land in a repair), then
# apply seeded operations on the memories — user edits (append or replace a body line, saved
# atomically or written in place), ``remember``, ``rollback`` to a version that exists and
# ``check --fix`` — each API operation either through the real ``dreamd`` CLI in a child
# process (fake embedder; see :func:`cli_worker`) that may itself be SIGKILLed, or in this
# process. The daemon is SIGKILLed at a random moment (during a CLI operation or just after
# any operation), a few operations run while it is down (the CLI indexes by itself then),
# and it is restarted — sometimes killed again during its start-up reconcile and check.
# Whenever the daemon has settled (watching, queue empty, index == disk) the trial records
# the content hash of every memory file and every version in the history. At the end the
# daemon is stopped and the vault is checked (module functions below).

#: The daemon's ``check.interval_minutes`` in a versions trial (1.2 s).
VERSIONS_CHECK_INTERVAL_MIN = 0.02

_WORKER_BOOT = (
    "import sys\n"
    "sys.path.insert(0, sys.argv[1])\n"  # tests/support, as on pytest's pythonpath
    "import daemon_harness as module\n"
    "sys.exit(module.cli_worker())\n"
)


def cli_worker() -> int:
    """A ``dreamd`` CLI process with the fake embedder, started before its command is known
    (the imports take seconds; the trial wants to kill the command, not the imports): it
    imports the CLI, prints ``ready`` on stdout, reads one JSON list of arguments from stdin
    and runs ``dreamd ARGS`` (same code, output and exit codes as the console script)."""
    import daemon.app as app_module
    from daemon import cli

    app_module.make_embedder = lambda loaded: load_fake_embedder()  # FAKE: module docstring
    print("ready", flush=True)
    line = sys.stdin.readline()
    if not line.strip():
        return 0
    sys.argv = ["dreamd", *json.loads(line)]
    cli.main()
    return 0


@dataclass
class CliRun:
    """One CLI command of a trial: exit code (``None`` when this trial killed it)."""

    argv: list[str]
    code: int | None
    out: str
    err: str
    duration_s: float
    daemon_killed_at: float | None = None


class _CliWorker:
    """One pre-started :func:`cli_worker` process; its output goes to files in ``workdir``.
    ``boot`` is the script the interpreter runs (``sys.argv[1]`` is ``tests/support``; another
    support module may bring its own worker, see ``soak_trial``)."""

    def __init__(self, workdir: Path, number: int, boot: str = _WORKER_BOOT) -> None:
        self.out_path = workdir / f"cli-{number}.out"
        self.err_path = workdir / f"cli-{number}.log"
        with self.out_path.open("wb") as out, self.err_path.open("wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", boot, str(SUPPORT)], stdin=subprocess.PIPE,
                stdout=out, stderr=err, cwd=REPO)

    def wait_ready(self, timeout_s: float = 180.0) -> None:
        def probe() -> bytes:
            if self.proc.poll() is not None:
                raise AssertionError(f"CLI worker exited {self.proc.returncode} before its "
                                     f"command: {self.err_path.read_text(errors='replace')[-800:]}")
            return self.out_path.read_bytes()

        wait_until(probe, lambda out: out.startswith(b"ready\n"), timeout_s=timeout_s,
                   what="CLI worker ready", every_s=0.02)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        if self.proc.stdin is not None:
            self.proc.stdin.close()


class _CliPool:
    """Runs CLI commands in pre-started workers: the next worker imports while the current
    one works. ``planned`` bounds how many are started."""

    def __init__(self, workdir: Path, planned: int) -> None:
        self.workdir = workdir
        self.left = planned
        self.started = 0
        self.spare: _CliWorker | None = None
        self._spawn()

    def _spawn(self) -> None:
        if self.left > 0 and self.spare is None:
            self.started += 1
            self.left -= 1
            self.spare = _CliWorker(self.workdir, self.started)

    def skip(self) -> None:
        """A planned command that will not run after all."""
        if self.left > 0:
            self.left -= 1
        elif self.spare is not None:
            self.spare.kill()
            self.spare = None

    def run(
        self, argv: list[str], *, kill_cli_at: float | None = None,
        daemon: DaemonProcess | None = None, kill_daemon_at: float | None = None,
        timeout_s: float = 120.0,
    ) -> CliRun:
        """Run ``dreamd ARGV``; SIGKILL it ``kill_cli_at`` s after the command was sent, and
        the ``daemon`` ``kill_daemon_at`` s after (even when the command is done by then)."""
        if self.spare is None:
            self.left += 1
            self._spawn()
        worker = self.spare
        assert worker is not None
        self.spare = None
        worker.wait_ready()
        self._spawn()
        assert worker.proc.stdin is not None
        started = time.monotonic()
        worker.proc.stdin.write((json.dumps(argv) + "\n").encode())
        worker.proc.stdin.close()
        killed_daemon: float | None = None
        code: int | None = None
        while True:
            elapsed = time.monotonic() - started
            if daemon is not None and kill_daemon_at is not None and killed_daemon is None \
                    and elapsed >= kill_daemon_at:
                daemon.kill9()
                killed_daemon = elapsed
            if kill_cli_at is not None and elapsed >= kill_cli_at and worker.proc.poll() is None:
                worker.kill()
                break
            status = worker.proc.poll()
            if status is not None and (killed_daemon is not None or kill_daemon_at is None
                                       or daemon is None):
                code = status
                break
            if elapsed > timeout_s:
                worker.kill()
                raise AssertionError(f"dreamd {' '.join(argv)} still running after {timeout_s} s")
            time.sleep(0.005)
        if code is None and daemon is not None and kill_daemon_at is not None \
                and killed_daemon is None:  # the CLI was killed first: the daemon goes later
            time.sleep(max(0.0, kill_daemon_at - (time.monotonic() - started)))
            daemon.kill9()
            killed_daemon = time.monotonic() - started
        out = worker.out_path.read_text(encoding="utf-8", errors="replace")
        return CliRun(argv, code, out.removeprefix("ready\n"),
                      worker.err_path.read_text(encoding="utf-8", errors="replace"),
                      time.monotonic() - started, killed_daemon)

    def close(self) -> None:
        if self.spare is not None:
            self.spare.kill()
            self.spare = None


@dataclass
class VersionsTrialResult:
    """One versions fault-injection trial: its seed, what was done, where the daemon was
    killed, what the check found after the restart, and every failed expectation (empty:
    ok). ``workdir`` holds the vault, the data dir and every log."""

    seed: int
    workdir: str = ""
    ops: list[str] = field(default_factory=list)
    kill_after_op: int = -1
    kill_point: str = ""
    restart_kill: str = ""
    failures: list[str] = field(default_factory=list)
    drift_after_restart: dict[str, int] = field(default_factory=dict)
    fixed: list[str] = field(default_factory=list)
    versions_seen: int = 0
    versions_final: int = 0
    settled_contents: int = 0
    cli_runs: int = 0
    cli_killed: int = 0
    log_events: dict[str, int] = field(default_factory=dict)
    notable: list[str] = field(default_factory=list)
    conflict_copies: list[str] = field(default_factory=list)
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failures

    def summary(self) -> str:
        head = (f"seed {self.seed}: killed after op {self.kill_after_op} of {len(self.ops)} "
                f"({self.kill_point})" + (f", restart: {self.restart_kill}"
                                          if self.restart_kill else ""))
        drift = (f"; drift after restart {self.drift_after_restart}"
                 if self.drift_after_restart else "")
        if self.ok:
            return head + drift + ": ok"
        return (head + drift + ": " + "; ".join(self.failures[:8])
                + f" | ops: {self.ops} | workdir: {self.workdir}")

    def as_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in (
            "seed", "workdir", "ops", "kill_after_op", "kill_point", "restart_kill", "failures",
            "drift_after_restart", "fixed", "versions_seen", "versions_final",
            "settled_contents", "cli_runs", "cli_killed", "log_events", "notable",
            "conflict_copies", "duration_s")}


@dataclass
class _PlannedOp:
    kind: str  # edit | remember | rollback | fix
    via: str  # user | cli | api
    kill_cli_at: float | None = None  # s after the CLI got its command


@dataclass
class _Plan:
    """Everything a seed decides before the trial starts (the details of each operation —
    which file, which version — come from a second generator, as the vault is then)."""

    ops: list[_PlannedOp]
    kill_after: int  # the daemon dies during or just after this operation
    kill_daemon_at: float  # s into that operation when it is a CLI one
    kill_pause: float  # else s after it
    down: int  # operations while it is down
    restart_kill: float | None  # kill the restarted daemon this long into its start-up
    settle: list[bool]  # wait for the daemon to settle after this operation


def _plan(rng: random.Random, ops: int, cli_share: float) -> _Plan:
    kinds = rng.choices(("edit", "remember", "rollback", "fix"), weights=(4, 1.5, 2.5, 1.5),
                        k=ops)
    kill_after = rng.randrange(max(1, ops // 3), ops - 2)
    kinds[kill_after] = rng.choices(("edit", "remember", "rollback", "fix"),
                                    weights=(1, 1, 2, 2))[0]
    planned = []
    for number, kind in enumerate(kinds):
        if kind == "edit":
            planned.append(_PlannedOp(kind, "user"))
            continue
        cli = rng.random() < (max(0.7, cli_share) if number == kill_after else cli_share)
        kill_cli = cli and rng.random() < 0.3
        planned.append(_PlannedOp(kind, "cli" if cli else "api",
                                  rng.uniform(0.02, 1.2) if kill_cli else None))
    return _Plan(
        ops=planned, kill_after=kill_after, kill_daemon_at=rng.uniform(0.0, 1.0),
        kill_pause=rng.choice((0.0, 0.02, 0.05, 0.1, 0.2, 0.4)),
        down=rng.randint(1, min(3, ops - kill_after - 1)),
        restart_kill=rng.uniform(0.0, 0.6) if rng.random() < 0.3 else None,
        settle=[rng.random() < 0.5 for _ in range(ops)],
    )


def describe_plan(seed: int, *, ops: int = 12, cli_share: float = 0.5) -> str:
    """What ``run_versions_trial(seed, ops=ops, cli_share=cli_share)`` will do, in one line
    (to pick seeds)."""
    plan = _plan(random.Random(seed), max(ops, 5), cli_share)
    steps = [f"{op.kind}/{op.via}" + ("!" if op.kill_cli_at is not None else "")
             for op in plan.ops]
    steps[plan.kill_after] += " KILL"
    steps[plan.kill_after + plan.down] += " RESTART" + (
        f"(killed at {plan.restart_kill:.2f} s)" if plan.restart_kill is not None else "")
    return f"seed {seed}: " + ", ".join(steps)


def _memory_files(vault: Path) -> list[str]:
    """Vault paths of the memory files (not ``MEMORY.md``, hidden files or conflict copies)."""
    from ccb.parse import detect_conflict_copy

    folder = vault / "Memory"
    return sorted(f"Memory/{p.name}" for p in folder.glob("*.md")
                  if not p.name.startswith(".") and p.name not in {"MEMORY.md", "DREAMS.md"}
                  and detect_conflict_copy(f"Memory/{p.name}") is None)


def _memory_keys(vault: Path) -> dict[str, tuple[str, str]]:
    """``{path: (history key, sha256 of the bytes)}`` of the memory files now."""
    from ccb.parse import parse_note
    from daemon.history import note_memory_key

    found = {}
    for path in _memory_files(vault):
        try:
            data = (vault / path).read_bytes()
        except OSError:
            continue
        note = parse_note(path, data)
        if note.memory is not None:
            found[path] = (note_memory_key(note), hashlib.sha256(data).hexdigest())
    return found


def _user_edit(vault: Path, rng: random.Random) -> str:
    """Append a line to, or replace a body line of, a random memory; saved atomically
    (temp file + rename, like Obsidian) or written in place."""
    import os

    path = rng.choice(_memory_files(vault))
    target = vault / path
    lines = target.read_text(encoding="utf-8").splitlines(keepends=True)
    fences = [i for i, line in enumerate(lines) if line.rstrip("\n") == "---"]
    start = fences[1] + 1 if len(fences) > 1 and fences[0] == 0 else 0
    body = [i for i in range(start, len(lines)) if lines[i].strip()
            and not lines[i].startswith("#") and "[[" not in lines[i]]
    words = " ".join(rng.choices(WORDS, k=rng.randint(3, 12)))
    if body and rng.random() < 0.5:
        at = rng.choice(body)
        lines[at] = words + ".\n"
        how = f"replace line {at}"
    else:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        lines.append(f"- {words}\n")
        how = "append"
    data = "".join(lines).encode("utf-8")
    if rng.random() < 0.5:
        temp = target.with_name(f".{target.name}.tmp-{rng.randint(1000, 9999)}")
        temp.write_bytes(data)
        os.replace(temp, target)  # noqa: PTH105 - an editor's atomic save
        return f"edit {path} {how} (atomic)"
    target.write_bytes(data)
    return f"edit {path} {how} (in place)"


def _rollback_target(vault: Path, rng: random.Random) -> tuple[str, int] | None:
    """A memory (its key) and a version of it that exists and is not a tombstone; one whose
    content differs from the file now when there is such a version."""
    now = {key: digest for key, digest in _memory_keys(vault).values()}
    history = fresh_app(vault).versions.all_versions(now.keys())
    any_version = [(key, v.n, v.content_hash != now[key]) for key in sorted(history)
                   for v in history[key] if v.kind != "tombstone"]
    changing = [(key, n) for key, n, differs in any_version if differs]
    if changing:
        return rng.choice(changing)
    return rng.choice([(key, n) for key, n, _ in any_version]) if any_version else None


def _remember_text(rng: random.Random) -> tuple[str, str]:
    kind = rng.choice(("user", "feedback", "project", "reference"))
    words = rng.choices(WORDS, k=rng.randint(6, 16))
    return " ".join(words).capitalize() + ".", kind


class _Observed:
    """What a trial saw: versions by ``(key, n)`` and settled file contents by key."""

    def __init__(self) -> None:
        self.versions: dict[tuple[str, int], tuple[str, str, str]] = {}  # hash, kind, when
        self.settled: dict[str, dict[str, str]] = {}  # key -> {hash: when}
        self.failures: list[str] = []

    def snapshot_versions(self, vault: Path, when: str) -> None:
        rows = [v for vs in fresh_app(vault).versions.all_versions().values() for v in vs]
        counts = Counter((v.memory_id, v.n) for v in rows)
        for (key, n), count in counts.items():
            if count > 1:
                self.failures.append(f"{when}: version {key}/{n} is in the table {count} times")
        for version in rows:
            item = (version.memory_id, version.n)
            known = self.versions.get(item)
            if known is None:
                self.versions[item] = (version.content_hash, version.kind, when)
            elif known[0] != version.content_hash:
                self.failures.append(
                    f"{when}: version {item[0]}/{item[1]} was {known[0][:8]} ({known[2]}), "
                    f"now {version.content_hash[:8]}")

    def record_settled(self, vault: Path, when: str) -> None:
        history = fresh_app(vault).versions.all_versions()
        for path, (key, digest) in sorted(_memory_keys(vault).items()):
            self.settled.setdefault(key, {}).setdefault(digest, when)
            hashes = {v.content_hash for v in history.get(key, [])}
            if digest not in hashes:
                self.failures.append(f"{when}: settled content {digest[:8]} of {path} ({key}) "
                                     "is not in its history")


def _wait_settled(daemon: DaemonProcess, vault: Path, timeout_s: float) -> None:
    """Wait until the daemon watches with an empty queue and the index equals the disk."""

    def probe() -> list[str]:
        if daemon.proc.poll() is not None:
            raise AssertionError(f"daemon exited with {daemon.proc.returncode} while settling; "
                                 f"log tail:\n{daemon.log_tail()}")
        status = daemon.status()
        if status.get("state") != "watching" or status.get("queue_depth"):
            return [f"daemon state {status.get('state')}, queue {status.get('queue_depth')}"]
        return index_vs_disk(fresh_app(vault))

    wait_until(probe, lambda problems: not problems, timeout_s=timeout_s,
               what="daemon settled (watching, queue empty, index == disk)", every_s=0.15)


_DAEMON_BOOT = _WORKER_BOOT.replace("module.cli_worker()",
                                    "module.warm_daemon(sys.argv[2], sys.argv[3])")


def warm_daemon(vault: str, go: str) -> int:
    """The launcher's daemon (:func:`main` with the fake embedder), started ahead: it
    imports, then waits for the file ``go`` and runs ``main([vault])``. A restart then costs
    what the daemon does, not what Python imports. Gives up (exit 0) after 10 minutes or
    when the trial that started it is gone."""
    import os

    import daemon.runner  # noqa: F401 - the imports are the point
    from daemon.app import App  # noqa: F401

    parent = os.getppid()
    load_fake_embedder()
    deadline = time.monotonic() + 600
    while not Path(go).exists():
        if time.monotonic() > deadline or os.getppid() != parent:
            return 0
        time.sleep(0.005)
    return main([vault])


class _WarmDaemons:
    """Pre-started daemon processes for one vault (:func:`warm_daemon`), with the short
    periodic check of a versions trial (``VERSIONS_CHECK_INTERVAL_MIN``)."""

    def __init__(self, vault: Path, workdir: Path) -> None:
        from daemon.app import App, load

        self.vault = vault
        self.workdir = workdir
        self.state_dir = App(load(None, None, {}), vault.resolve()).state_dir
        self.started: list[DaemonProcess] = []
        self.spare: tuple[subprocess.Popen[bytes], Path, Path] | None = None
        self.warm()

    def warm(self) -> None:
        """Start the next daemon process (it imports, then waits for its go file)."""
        import os

        if self.spare is not None:
            return
        number = len(self.started) + 1
        log_path = self.workdir / f"daemon-{number}.log"
        go = self.workdir / f"daemon-{number}.go"
        env = {**os.environ, "DREAMD_CHECK__INTERVAL_MINUTES": str(VERSIONS_CHECK_INTERVAL_MIN)}
        with log_path.open("ab") as err:
            proc = subprocess.Popen(
                [sys.executable, "-c", _DAEMON_BOOT, str(SUPPORT), str(self.vault), str(go)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, cwd=REPO,
                env=env)
        self.spare = (proc, log_path, go)

    def start(self) -> DaemonProcess:
        """Let the warm daemon run (``dreamd run``); warms none in its place."""
        self.warm()
        assert self.spare is not None
        proc, log_path, go = self.spare
        self.spare = None
        go.touch()
        daemon = DaemonProcess(proc, self.state_dir, log_path)
        self.started.append(daemon)
        return daemon

    def close(self) -> None:
        for daemon in self.started:
            daemon.kill9()
        if self.spare is not None:
            self.spare[0].kill()
            self.spare[0].wait(timeout=30)
            self.spare = None


def _api_op(op: _PlannedOp, vault: Path, rng: random.Random, pool: _CliPool,
            daemon: DaemonProcess | None, kill_daemon_at: float | None,
            result: VersionsTrialResult) -> str:
    """Run one remember / rollback / fix, through the CLI or in this process."""
    argv: list[str]
    if op.kind == "remember":
        text, kind = _remember_text(rng)
        argv = ["remember", text, "--type", kind, "--json"]
        what = f"remember {kind} {text[:24]!r}"
    elif op.kind == "rollback":
        target = _rollback_target(vault, rng)
        if target is None:
            if op.via == "cli":
                pool.skip()
            return "rollback skipped (no version yet)"
        key, n = target
        argv = ["rollback", key, "--to", str(n)]
        what = f"rollback {key} --to {n}"
    else:
        argv = ["check", "--fix", "--json"]
        what = "check --fix"
    if op.via == "cli":
        run = pool.run(["-v", *argv, "--vault", str(vault)], kill_cli_at=op.kill_cli_at,
                       daemon=daemon, kill_daemon_at=kill_daemon_at)
        result.cli_runs += 1
        if run.code is None:
            result.cli_killed += 1
            outcome = f"CLI killed at {run.duration_s:.2f} s"
        else:
            outcome = f"exit {run.code}"
            allowed = {0, 1} if op.kind == "fix" else {0}
            if run.code not in allowed:
                result.failures.append(f"dreamd {what} exited {run.code}: "
                                       f"{(run.out + run.err)[-600:]}")
        if run.daemon_killed_at is not None:
            result.kill_point = f"daemon killed {run.daemon_killed_at:.2f} s into {what} (cli)"
        return f"{what} (cli, {outcome})"
    app = fresh_app(vault)
    try:
        if op.kind == "remember":
            done = app.memories().remember(argv[1], type=argv[3], source="user")
            outcome = f"{done.action} {done.path}"
        elif op.kind == "rollback":
            rolled = app.history().rollback(argv[1], int(argv[3]))
            outcome = rolled.status
        else:
            fixed = app.consistency().fix(automatic_only=False)
            outcome = f"{len(fixed.applied)} applied, {len(fixed.left)} left"
    except Exception as error:  # a product error: say so, keep going
        result.failures.append(f"{what} (api) raised {type(error).__name__}: {error}")
        outcome = f"raised {type(error).__name__}"
    return f"{what} (api, {outcome})"


def _finding_text(finding: Any) -> str:
    from dataclasses import asdict

    return f"{finding.kind} {type(finding.decision).__name__} {asdict(finding.drift)}"[:300]


def _verify_versions(vault: Path, observed: _Observed, result: VersionsTrialResult) -> None:
    """With the daemon stopped: check, fix what ``--fix`` fixes, check again; then the history
    against everything the trial saw, and the plain-text archive against the table."""
    from consistency.arbiter import Report

    app = fresh_app(vault)
    service = app.consistency()
    report = service.check()
    result.drift_after_restart = report.counts()
    if not report.clean:
        for finding in report.findings:
            if isinstance(finding.decision, Report):
                result.failures.append(f"drift --fix cannot repair: {_finding_text(finding)}")
        fixed = service.fix(report, automatic_only=False)
        result.fixed = [f"{finding.kind}: {outcome}"[:200] for finding, outcome in fixed.applied]
        if fixed.deferred:
            result.failures.append("check --fix deferred indexing with no daemon running")
        after = fresh_app(vault).consistency().check()
        if not after.clean:
            result.failures.append("drift after check --fix: " + "; ".join(
                _finding_text(f) for f in after.findings))
    archive = fresh_app(vault).versions
    if archive.needs_repair():
        result.failures.append("version archive needs repair after the fix (files and table "
                               "disagree)")
    rows = archive._rows(content=True)
    counts = Counter((r["memory_id"], r["n"]) for r in rows)
    result.versions_final = len(rows)
    dupes = sorted(f"{k}/{n} x{c}" for (k, n), c in counts.items() if c > 1)
    if dupes:
        result.failures.append(f"duplicate (key, n) version rows: {dupes[:10]}")
    final = {(r["memory_id"], r["n"]): r["content_hash"] for r in rows}
    hashes_by_key: dict[str, set[str]] = {}
    for row in rows:
        hashes_by_key.setdefault(row["memory_id"], set()).add(row["content_hash"])
        if hashlib.sha256(bytes(row["content"])).hexdigest() != row["content_hash"]:
            result.failures.append(f"version {row['memory_id']}/{row['n']}: table content does "
                                   "not match its hash")
        local = archive._files.folder(row["memory_id"]) / f"{row['n']}.md"
        try:
            data = local.read_bytes()
        except OSError:
            result.failures.append(f"version {row['memory_id']}/{row['n']}: no plain file")
            continue
        if hashlib.sha256(data).hexdigest() != row["content_hash"]:
            result.failures.append(f"version {row['memory_id']}/{row['n']}: plain file does "
                                   "not match its hash")
    result.versions_seen = len(observed.versions)
    for (key, n), (digest, kind, when) in sorted(observed.versions.items()):
        now = final.get((key, n))
        if now is None:
            result.failures.append(f"version lost: {key}/{n} ({kind} {digest[:8]}, seen {when})")
        elif now != digest:
            result.failures.append(f"version changed: {key}/{n} was {digest[:8]} (seen {when}), "
                                   f"now {now[:8]}")
    result.settled_contents = sum(len(v) for v in observed.settled.values())
    for key, contents in sorted(observed.settled.items()):
        for digest, when in contents.items():
            if digest not in hashes_by_key.get(key, set()):
                result.failures.append(f"settled content lost: {key} {digest[:8]} "
                                       f"(settled {when}) is in no version")
    app = fresh_app(vault)
    result.conflict_copies = sorted(copy for copy, _ in app.conflict_copies()
                                    if copy.startswith("Memory/"))
    result.failures += [f"after the fix: {p}" for p in index_vs_disk(app)]
    result.failures += [f"after the fix: {p}" for p in store_integrity(app)]


_REPAIR_EVENTS = frozenset({"check.fixed", "versions.repaired"})


def _log_events(logs: Sequence[Path]) -> tuple[dict[str, int], list[str]]:
    """``{event: count}`` of the warning and error log records in ``logs`` (JSON lines; the
    drift a daemon left is counted by kind) and of the repairs made (``check.fixed[kind]``,
    ``versions.repaired``), and the first 20 warnings and errors in short."""
    found: Counter[str] = Counter()
    notable: list[str] = []
    for path in logs:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and record.get("event") in _REPAIR_EVENTS:
                found[f"{record['event']}[{record.get('kind', '')}]"] += 1
            if not isinstance(record, dict) or record.get("level") not in {
                    "warning", "error", "critical"}:
                continue
            event = str(record.get("event"))
            kinds = record.get("kinds")
            found[event + (f"[{','.join(map(str, kinds))}]" if isinstance(kinds, list)
                           else "")] += 1
            if len(notable) < 20:
                fields = {k: v for k, v in record.items()
                          if k not in {"event", "level", "timestamp", "logger", "hint"}}
                notable.append(f"{path.name}: {event} {json.dumps(fields, default=str)}"[:300])
    return dict(sorted(found.items())), notable


def run_versions_trial(
    seed: int, workdir: Path, *, ops: int = 12, cli_share: float = 0.5,
    settle_timeout_s: float = 60.0,
) -> VersionsTrialResult:
    """One fault-injection trial of the version history in ``workdir`` (needs the DREAMD_*
    env pointing into temp dirs; see the section comment above). ``ops`` operations, each
    remember / rollback / fix through the CLI with probability ``cli_share`` (else in this
    process). Returns the result; every expectation that failed is in ``failures``:

    after the restart, ``check`` is clean or every finding is one ``check --fix`` repairs,
    and after the fix it is clean; every version seen during the trial is still there with
    its content (nothing lost or renumbered), every content a memory file had while the
    daemon was settled is in that memory's history, no ``(key, n)`` is in the table twice,
    the plain files match the table (each ``<n>.md`` has its row's hash; no repair needed),
    and the index equals the disk."""
    started = time.monotonic()
    result = VersionsTrialResult(seed, workdir=str(workdir))
    ops = max(ops, 5)
    plan = _plan(random.Random(seed), ops, cli_share)
    rng = random.Random(seed * 7919 + 1)  # the details: which file, which version, what text
    result.kill_after_op = plan.kill_after
    vault = workdir / "vault"
    shutil.copytree(VAULT_EXAMPLE, vault, symlinks=True)
    observed = _Observed()
    daemons = _WarmDaemons(vault, workdir)
    pool = _CliPool(workdir, sum(1 for op in plan.ops if op.via == "cli"))
    try:
        fresh_app(vault).sync()
        daemon: DaemonProcess | None = daemons.start()
        daemon.wait_state("watching", timeout_s=settle_timeout_s)
        _wait_settled(daemon, vault, settle_timeout_s)
        observed.snapshot_versions(vault, "start")
        observed.record_settled(vault, "start")
        for number, op in enumerate(plan.ops):
            kill_now = number == plan.kill_after
            kill_daemon_at = plan.kill_daemon_at if kill_now and op.via == "cli" else None
            if kill_now:
                observed.snapshot_versions(vault, f"before the kill (op {number})")
            op_started = time.monotonic()
            if op.kind == "edit":
                text = _user_edit(vault, rng)
            else:
                text = _api_op(op, vault, rng, pool, daemon if kill_daemon_at is not None
                               else None, kill_daemon_at, result)
            result.ops.append(f"{text} [{time.monotonic() - op_started:.1f} s]")
            if kill_now and daemon is not None and daemon.proc.poll() is None:
                time.sleep(plan.kill_pause)
                daemon.kill9()
                result.kill_point = f"daemon killed {plan.kill_pause:.2f} s after {text}"
            if kill_now:
                daemon = None
                daemons.warm()  # imports while the operations go on without a daemon
            elif number == plan.kill_after + plan.down:  # the last op while it was down
                daemon = _restart_versions_daemon(daemons, plan.restart_kill, result,
                                                  settle_timeout_s)
                _wait_settled(daemon, vault, settle_timeout_s)
                observed.snapshot_versions(vault, f"after the restart (op {number})")
                observed.record_settled(vault, f"after the restart (op {number})")
            elif daemon is not None and plan.settle[number]:
                _wait_settled(daemon, vault, settle_timeout_s)
                observed.snapshot_versions(vault, f"settled after op {number}")
                observed.record_settled(vault, f"settled after op {number}")
            else:
                time.sleep(rng.choice((0.0, 0.01, 0.05, 0.15)))
        assert daemon is not None
        _wait_settled(daemon, vault, settle_timeout_s)
        observed.snapshot_versions(vault, "end")
        observed.record_settled(vault, "end")
        code = daemon.stop()
        if code != 0:
            result.failures.append(f"exit code {code} after SIGTERM")
        result.failures += observed.failures
        _verify_versions(vault, observed, result)
    except Exception as error:  # a timeout (AssertionError) or a product error: a failure
        result.failures += observed.failures
        result.failures.append(str(error) if isinstance(error, AssertionError)
                               else f"{type(error).__name__}: {error}")
    finally:
        pool.close()
        daemons.close()
    result.log_events, result.notable = _log_events(sorted(workdir.glob("*.log")))
    result.duration_s = time.monotonic() - started
    return result


def _restart_versions_daemon(
    daemons: _WarmDaemons, kill_at: float | None, result: VersionsTrialResult,
    settle_timeout_s: float,
) -> DaemonProcess:
    """Start the daemon again; with ``kill_at``, SIGKILL it that long after it starts its
    start-up (reconcile, check, automatic repairs) and start it once more. Returns the one
    left running (watching)."""
    daemon = daemons.start()
    if kill_at is not None:
        daemons.warm()
        daemon.wait_state("reconciling", "watching", timeout_s=settle_timeout_s)
        time.sleep(kill_at)
        state = daemon.status().get("state")
        daemon.kill9()
        result.restart_kill = f"killed {kill_at:.2f} s into start-up (state {state})"
        daemon = daemons.start()
    daemon.wait_state("watching", timeout_s=settle_timeout_s)
    return daemon


# --------------------------------------------------------------------------- dream helpers


def write_memory(vault: Path, stem: str, body: str, *, type: str = "user",
                 subject: str | None = None, days_old: float = 1, **extra: object) -> str:
    """Write ``Memory/<stem>.md`` as dreamd would (every key), created ``days_old`` days ago,
    with an id derived from ``stem``; returns the vault path."""
    from ccb.memory_file import NewMemory, render_memory

    created = datetime.now(UTC) - timedelta(days=days_old)
    data = render_memory(NewMemory(
        name=stem.replace("-", " "), description=body[:60], type=type,  # type: ignore[arg-type]
        id=hashlib.sha1(stem.encode()).hexdigest()[:26].upper(), created=created,
        updated=created, body=body + "\n", subject=subject, valid_from=created.date(),
        source="user", **extra))  # type: ignore[arg-type]
    (vault / "Memory").mkdir(exist_ok=True)
    (vault / "Memory" / f"{stem}.md").write_bytes(data)
    return f"Memory/{stem}.md"


def snapshot(vault: Path) -> dict[str, bytes]:
    """``{vault path: bytes}`` of every file under ``vault``."""
    return {p.relative_to(vault).as_posix(): p.read_bytes()
            for p in sorted(vault.rglob("*")) if p.is_file()}


# --------------------------------------------------------------------------- fake LLM


class _ManyCallsServer(ThreadingHTTPServer):
    """A loopback server that queues many connections at once (the verifier opens one per
    hit; the default backlog of 5 makes the rest wait for a TCP retry)."""

    request_queue_size = 64


class ChatEndpoint:
    """A FAKE LLM endpoint on loopback that speaks the OpenAI chat protocol (the one part of
    the pipeline that is external and non-deterministic): it answers ``reply`` with HTTP
    ``status``."""

    def __init__(self) -> None:
        self.reply = ""
        self.status = 200
        self.calls = 0
        self.in_flight = 0
        self.most_in_flight = 0
        self.delay_s = 0.0
        #: optional per-request answer: the request's JSON -> (status, reply text)
        self.respond: Callable[[dict[str, Any]], tuple[int, str]] | None = None
        state = self
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    state.calls += 1
                    state.in_flight += 1
                    state.most_in_flight = max(state.most_in_flight, state.in_flight)
                self._counted = True
                try:
                    self._answer(request)
                except OSError:
                    pass  # the client gave up (its timeout)
                finally:
                    self._uncount()

            def _uncount(self) -> None:
                """A call stops counting as in flight before its first byte of answer goes:
                the client may send its next call as soon as it reads the answer."""
                if self._counted:
                    self._counted = False
                    with lock:
                        state.in_flight -= 1

            def _answer(self, request: dict[str, Any]) -> None:
                if state.delay_s:
                    time.sleep(state.delay_s)
                self._uncount()
                status, reply = (state.respond(request) if state.respond is not None
                                 else (state.status, state.reply))
                if status == -1:  # a reply that is not HTTP at all
                    self.wfile.write(b"garbage\r\n\r\n")
                    return
                if status != 200:
                    self.send_response(status)
                    self.end_headers()
                    return
                payload = json.dumps({"choices": [{"index": 0, "message": {
                    "role": "assistant", "content": reply}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass

        self.server = _ManyCallsServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()
