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
import importlib.util
import json
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
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
REPO = HARNESS.parents[2]
VAULT_EXAMPLE = REPO / "vault_example"

T = TypeVar("T")


# ----------------------------------------------------------------------------- launcher


def load_fake_embedder() -> Any:
    """A new ``TokenHashEmbedder`` from ``tests/daemon/conftest.py`` (loaded by path)."""
    name = "dreamd_daemon_tests_conftest"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, HARNESS.with_name("conftest.py"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return module.TokenHashEmbedder()


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
        app = App.create(loaded)
        app.__dict__["embedder"] = load_fake_embedder()  # FAKE: see the module docstring
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

    app = App.create(load(None, None, {"vault.path": str(vault)}))
    if fake:
        app.__dict__["embedder"] = load_fake_embedder()
    return app


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
    ``chunk_note`` gives for the file on disk now. ``links``: no duplicate ``link_id``.
    """
    import lancedb

    from ccb.scan import read_note
    from magma.chunking import chunk_note

    db = lancedb.connect(app.store_uri)
    files = db.open_table("files").to_arrow().select(["path", "kind"]).to_pydict()
    chunks = db.open_table("chunks").to_arrow().select(
        ["chunk_id", "path", "content_hash"]).to_pydict()
    links = db.open_table("links").to_arrow().select(["link_id"]).to_pydict()
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
