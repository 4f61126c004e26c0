"""Soak trials: a dreamd command is SIGKILLed at a random moment while the user writes by
hand. Is anything the user wrote ever lost?

Used by ``bench/soak.py`` (by the hundred) and ``tests/scenarios/test_soak.py`` (a handful).
Built on ``daemon_harness``: its CLI worker (pre-started interpreters, the token-hash FAKE
embedder injected at the composition-root seam: these trials are about files, not meaning),
its daemon launcher, its random file operations and its index checks.

One trial (:func:`run_soak_trial`), every choice drawn from its seed:

1. copy ``vault_example`` into the trial's folder, with its own data dir and config
   (``DREAMD_STORAGE__DATA_DIR``, ``DREAMD_CONFIG``), and sync it once in this process;
2. pick an operation (:data:`OPERATIONS`) and prepare what it needs, in this process: the
   memory a duplicate or superseding ``remember`` meets, a second version to roll back from,
   a memory of the trial's own to forget, near-duplicate memories for a dream;
3. the user writes marker lines by hand — appended in place, the file rewritten in place,
   or saved atomically (temp file + rename, as Obsidian does) — into memories, notes,
   ``MEMORY.md`` and new notes: before the operation, during it and after the kill;
4. run the operation as a real ``dreamd`` command line in a pre-started worker process (for
   ``run``: ``dreamd run``, with the harness's random file operations and now and then a
   ``dreamd remember`` the daemon serves) and SIGKILL it ``kill_at_ms`` after it got its
   command line, drawn from ``[0, KILL_WINDOW_MS[operation]]`` (a little over what the
   operation takes, so that most kills land mid-operation and some after it finished);
5. restart: another process (the run's restart worker, which never runs a command that
   is killed) runs ``dreamd sync``, ``dreamd check`` and, when the check found drift (not
   :data:`QUESTIONS`), ``dreamd check --fix`` and ``dreamd check`` once more;
6. verify: every marker is in its file, or in a conflict copy of it (anywhere else in the
   vault is reported; for the memory a rollback restored, its version history counts too:
   the user asked to replace that content); every ``remember`` that reported success before
   the kill is in a memory file; no ``.md`` file is half-written (each parses with no
   problem it did not have, and each memory file is still a memory); ``sync`` exits 0;
   ``check`` is clean or only lists drift that one ``check --fix`` repairs; the index
   equals the disk; and once ``forget`` reported success, no byte of the forgotten memory's
   text is left in the vault or the state folder.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import shutil
import sys
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import daemon_harness as h

__all__ = [
    "KILL_WINDOW_MS",
    "OPERATIONS",
    "QUESTIONS",
    "Marker",
    "SessionPool",
    "SoakResult",
    "run_soak_trial",
    "session_worker",
]

#: The operations a trial picks from (the ``remember-*`` three: a new memory, the same text
#: again, a changed value that supersedes the memory it meets).
OPERATIONS = ("sync", "remember-new", "remember-duplicate", "remember-supersede", "dream",
              "rollback", "check-fix", "forget", "run")

#: Upper end of the kill moment, ms after the worker got its command line, by operation: about
#: 1.3 times the median each takes on the demo vault with a warm worker on a quiet 2-core
#: machine (``bench/soak.py --no-kill``, 4 trials each: sync 387 ms, remember new 319,
#: duplicate 145, superseding 370, dream 399, rollback 507, check --fix 356, forget 368), so
#: that most kills land mid-operation and some after it finished (more of them land
#: mid-operation on a busy machine). ``run`` lives as long as the trial's file operations
#: (up to 2.4 s) and is killed during its start-up or while it applies them.
KILL_WINDOW_MS = {"sync": 500, "remember-new": 450, "remember-duplicate": 220,
                  "remember-supersede": 480, "dream": 700, "rollback": 650, "check-fix": 480,
                  "forget": 500, "run": 3000}

#: Words of the trial's own texts (none of them is in ``vault_example``).
_WORDS = ("amber", "basil", "cedar", "ember", "fjord", "granite", "indigo", "juniper", "kelp",
          "lantern", "meadow", "nectar", "orchid", "pumice", "quartz", "raven", "saffron",
          "tundra", "umber", "violet", "willow", "yarrow", "zephyr")

_END = "@@soak-exit"

_SESSION_BOOT = h._WORKER_BOOT.replace("import daemon_harness as module",
                                       "import soak_trial as module").replace(
    "module.cli_worker()", "module.session_worker()")


# ----------------------------------------------------------------------------- workers


def session_worker() -> int:
    """A pre-started ``dreamd`` process for any trial (fake embedder, as
    ``daemon_harness.cli_worker``): it imports what a command needs, prints ``ready``, then
    runs one request per line of stdin: ``{"env": {...}, "argv": [...]}`` runs ``dreamd ARGV``
    through the console-script entry (same code, output and exit codes) and prints
    ``@@soak-exit <code>`` on a line of its own after its output; ``{"env": {...}, "daemon":
    VAULT}`` becomes ``dreamd run VAULT`` (``daemon_harness.main``) for good. A request with
    ``"kill_at": ["module:Qual.name", "before" | "after"]`` SIGKILLs the worker when the
    command first calls that function (before it runs, or once it returned): a kill at one
    step of a command, not at a moment (:func:`_kill_at`)."""
    import daemon.app as app_module
    import daemon.check
    import daemon.dream
    import daemon.history
    import daemon.memories
    import daemon.runner
    import daemon.sync  # noqa: F401 - the imports are the point: the kill hits the command
    from daemon import cli

    app_module.make_embedder = lambda loaded: h.load_fake_embedder()  # FAKE: module docstring
    h.load_fake_embedder()
    assert isinstance(sys.stdout, io.TextIOWrapper)
    sys.stdout.reconfigure(line_buffering=True)  # what the command printed is on disk
    print("ready", flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        os.environ.update(request["env"])
        if "kill_at" in request:
            _kill_at(*request["kill_at"])
        if "daemon" in request:
            return h.main([request["daemon"]])
        sys.argv = ["dreamd", *request["argv"]]
        try:
            cli.main()
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        print(f"\n{_END} {code}", flush=True)
    return 0


def _kill_at(target: str, when: str) -> None:
    """Replace the function ``module:Qual.name`` (a module's function, or a class's method,
    in the namespace the caller looks it up in) with one that SIGKILLs this process ``when``
    (``"before"`` it runs, or ``"after"`` it returned)."""
    import importlib
    import signal

    module, _, qualname = target.partition(":")
    holder: Any = importlib.import_module(module)
    *outer, name = qualname.split(".")
    for part in outer:
        holder = getattr(holder, part)
    original = getattr(holder, name)

    def killing(*args: Any, **kwargs: Any) -> Any:
        if when == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        result = original(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)
        return result

    setattr(holder, name, killing)


class SessionWorker(h._CliWorker):
    """One pre-started :func:`session_worker`; its stdout and stderr go to files."""

    def __init__(self, folder: Path, number: int) -> None:
        super().__init__(folder, number, boot=_SESSION_BOOT)
        self.sent = 0

    def send(self, request: dict[str, Any]) -> None:
        """Write one request line (see :func:`session_worker`)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()
        self.sent += 1

    def answers(self) -> tuple[list[tuple[str, int]], str]:
        """The finished commands' ``(output, exit code)`` and what the running one printed
        so far."""
        text = self.out_path.read_text(encoding="utf-8", errors="replace").removeprefix("ready\n")
        done: list[tuple[str, int]] = []
        while True:
            at = text.find(f"\n{_END} ")
            if at < 0:
                return done, text
            end = text.find("\n", at + 1 + len(_END) + 1)
            if end < 0:
                return done, text
            done.append((text[:at], int(text[at + len(_END) + 2:end])))
            text = text[end + 1:]

    def run(self, argv: list[str], env: dict[str, str], timeout_s: float = 120.0) -> (
        tuple[int, str]
    ):
        """Run ``dreamd ARGV`` and wait (bounded) for its exit code and output."""
        self.send({"env": env, "argv": argv})
        want = self.sent

        def probe() -> list[tuple[str, int]]:
            if self.proc.poll() is not None:
                raise AssertionError(f"dreamd worker exited {self.proc.returncode} during "
                                     f"dreamd {' '.join(argv)}: {self.log_tail()}")
            return self.answers()[0]

        done = h.wait_until(probe, lambda d: len(d) >= want, timeout_s=timeout_s,
                            what=f"dreamd {' '.join(argv)}", every_s=0.01)
        output, code = done[want - 1]
        return code, output

    def log_tail(self, chars: int = 1500) -> str:
        return self.err_path.read_text(encoding="utf-8", errors="replace")[-chars:]

    def close(self) -> None:
        """End the worker: stdin closed (it exits), killed after 30 s."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except Exception:
            self.kill()

    def keep_logs(self, folder: Path, name: str) -> None:
        """Move the worker's output and log into ``folder`` as ``name.out`` / ``name.log``."""
        folder.mkdir(parents=True, exist_ok=True)
        for path, suffix in ((self.out_path, "out"), (self.err_path, "log")):
            with contextlib.suppress(OSError):
                path.replace(folder / f"{name}.{suffix}")
        self.out_path, self.err_path = folder / f"{name}.out", folder / f"{name}.log"


class SessionPool:
    """Session workers started ahead (``spare`` of them import while a trial runs), shared
    by the trials of a run: each request carries its trial's environment."""

    def __init__(self, folder: Path, spare: int = 2) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.spare = spare
        self.started = 0
        self.waiting: deque[SessionWorker] = deque()
        self.restart: SessionWorker | None = None
        self._fill()

    def _fill(self) -> None:
        while len(self.waiting) < self.spare:
            self.started += 1
            self.waiting.append(SessionWorker(self.folder, self.started))

    def take(self) -> SessionWorker:
        """A ready worker (a new one starts importing in its place)."""
        worker = self.waiting.popleft()
        self._fill()
        worker.wait_ready()
        return worker

    def restarter(self) -> SessionWorker:
        """The worker that runs every trial's restart commands, one after the other (each
        request carries its trial's environment; nothing of a command outlives it but the
        imports). It never ran the killed command; a new one replaces it if it died."""
        if self.restart is None or self.restart.proc.poll() is not None:
            self.restart = self.take()
        return self.restart

    def close(self) -> None:
        while self.waiting:
            self.waiting.popleft().kill()
        if self.restart is not None:
            self.restart.close()
            self.restart = None


# ----------------------------------------------------------------------------- the user


@dataclass
class Marker:
    """One line the user wrote by hand: its text, file, how and when, and where it was
    found in the end (``in its file``, ``in a conflict copy``, ``elsewhere: PATH``,
    ``in the rolled-back memory's history``, ``LOST``)."""

    text: str
    path: str
    how: str
    when: str
    found: str = ""


class _Hand:
    """The user's own writes: one marker line per call, on real files."""

    def __init__(self, vault: Path, rng: random.Random, tag: str, avoid: set[str]) -> None:
        self.vault = vault
        self.rng = rng
        self.tag = tag
        self.avoid = avoid
        self.markers: list[Marker] = []
        from ccb.scan import VaultFilter, scan_vault

        scan = scan_vault(vault, VaultFilter.for_vault(vault))
        notes = sorted(e.path for e in scan.entries if e.kind == "note"
                       and not e.path.startswith(("edge-cases/", "Memory/")))
        self.notes = rng.sample(notes, 4)  # the harness's file operations keep off these

    def _target(self) -> tuple[str, bool]:
        roll = self.rng.random()
        if roll < 0.15:
            return f"Inbox/soak {self.tag} {len(self.markers)}.md", True
        if roll < 0.2:
            return "Memory/MEMORY.md", False
        if roll < 0.5:
            return self.rng.choice(self.notes), False
        memories = [p for p in h._memory_files(self.vault) if p not in self.avoid]
        return (self.rng.choice(memories) if memories else self.rng.choice(self.notes)), False

    def write(self, when: str) -> Marker:
        """Write one marker line; returns it (also kept in ``markers``)."""
        path, new = self._target()
        target = self.vault / path
        text = f"{self.tag}m{len(self.markers)} {self.rng.choice(_WORDS)}"
        line = f"- {text}\n".encode()
        how = "new note" if new else self.rng.choice(("append", "rewrite", "atomic"))
        try:
            current = b"" if new else target.read_bytes()
        except FileNotFoundError:  # gone since it was listed (a rename, a dream's archive)
            path, how, current = f"Inbox/soak {self.tag} {len(self.markers)}.md", "new note", b""
            target = self.vault / path
        if current and not current.endswith(b"\n"):
            line = b"\n" + line
        if how == "new note":
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(f"# Soak {self.tag}\n\n".encode() + line)
        elif how == "append":
            with target.open("ab") as handle:  # echo >> file
                handle.write(line)
        elif how == "rewrite":
            target.write_bytes(current + line)  # an editor that truncates and writes
        else:
            temp = target.with_name(f".{target.name}.soak-save")
            temp.write_bytes(current + line)
            os.replace(temp, target)  # noqa: PTH105 - an editor's atomic save
        marker = Marker(text, path, how, when)
        self.markers.append(marker)
        return marker


# ----------------------------------------------------------------------------- the trial


@dataclass
class SoakResult:
    """One soak trial: what was done, what the checks found, and every failed expectation
    (``failures``; empty: ok). ``workdir`` keeps the vault, the state and every log."""

    seed: int
    operation: str = ""
    workdir: str = ""
    argv: list[str] = field(default_factory=list)
    kill_at_ms: float = 0.0
    killed: bool = False  # the operation was still running when the kill came
    wrote_before_kill: bool = False  # killed after it wrote into the state folder
    kill_state: str = ""  # for ``run``: the daemon's state then (daemon.json)
    op_exit: int | None = None
    op_ms: float | None = None  # how long it ran when it finished before the kill
    acknowledged: bool = False  # it reported success (exit 0, or printed it before the kill)
    prepared: list[str] = field(default_factory=list)
    file_ops: list[str] = field(default_factory=list)
    served_remember: str = ""
    markers: list[Marker] = field(default_factory=list)
    restart_codes: list[int] = field(default_factory=list)
    drift: dict[str, int] = field(default_factory=dict)
    unclean: bool = False  # check found drift after the restart's sync
    questions: dict[str, int] = field(default_factory=dict)  # QUESTIONS check listed
    forget_unfinished: bool = False  # a killed forget left text that forget again cannot take
    phases_ms: dict[str, float] = field(default_factory=dict)
    lost: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failures

    def summary(self) -> str:
        state = ("killed" if self.killed else f"done (exit {self.op_exit})") + \
            (", acknowledged" if self.acknowledged else "")
        head = (f"seed {self.seed}: {self.operation} killed at {self.kill_at_ms:.0f} ms: "
                f"{state}; {len(self.markers)} markers")
        drift = f"; drift {self.drift}" if self.drift else ""
        if self.ok:
            return head + drift + ": ok"
        return head + drift + ": " + "; ".join(self.failures[:6]) + f" | {self.workdir}"

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Prepared:
    argv: list[str] | None = None  # None: the daemon
    avoid: set[str] = field(default_factory=set)  # files the user keeps off
    remembered: str | None = None
    forgotten_token: str | None = None
    rollback_path: str | None = None
    done: list[str] = field(default_factory=list)


def _words(rng: random.Random, k: int) -> str:
    return " ".join(rng.sample(_WORDS, k))


def _prepare(operation: str, vault: Path, rng: random.Random, tag: str) -> _Prepared:
    """What ``operation`` needs, made in this process, and its command line."""
    at = ["--vault", str(vault)]
    prep = _Prepared()
    if operation == "sync":
        prep.argv = ["sync", str(vault), "--json"]
    elif operation == "check-fix":
        prep.argv = ["check", "--fix", "--json", *at]
    elif operation == "dream":
        for stem, body, days in (
                (f"{tag}-kiln-shelf", f"The {tag} kiln shelf holds {_words(rng, 2)} glazes.", 9),
                (f"{tag}-kiln-shelf-again", f"the {tag} kiln shelf holds "
                 f"{_words(rng, 2)} glazes", 2),
                (f"{tag}-timeout", f"The {tag} upload timeout is 30s.", 8),
                (f"{tag}-timeout-now", f"The {tag} upload timeout is 60s.", 1)):
            h.write_memory(vault, stem, body, type="project", subject=f"{tag}.{stem[:12]}",
                           days_old=days)
        h.fresh_app(vault).sync()
        prep.done.append("four memories for the dream to merge and supersede")
        prep.argv = ["dream", "--force", "--json", *at]
    elif operation == "rollback":
        path = rng.choice(h._memory_files(vault))
        with (vault / path).open("a", encoding="utf-8") as handle:
            handle.write(f"\n{_words(rng, 5).capitalize()}.\n")
        h.fresh_app(vault).sync()  # the edit is its version 2
        key = h._memory_keys(vault)[path][0]
        prep.done.append(f"edited {path} and synced: version 2 of {key}")
        prep.rollback_path = path
        prep.argv = ["rollback", key, "--to", "1", *at]
    elif operation == "run":
        prep.argv = None
    else:
        prep.argv = [*_prepare_memory(operation, vault, rng, tag, prep), "--vault", str(vault)]
    return prep


def _prepare_memory(operation: str, vault: Path, rng: random.Random, tag: str,
                    prep: _Prepared) -> list[str]:
    app = h.fresh_app(vault)
    if operation == "forget":
        token = f"fg{tag}q"
        made = app.memories().remember(f"The soak locker hint is {token} {_words(rng, 3)}.",
                                       type="reference", source="user")
        prep.done.append(f"remembered {made.path} ({made.action})")
        prep.avoid.add(made.path)
        prep.forgotten_token = token
        return ["forget", made.path, "--yes"]
    if operation == "remember-new":
        text = f"Soak {tag} keeps the {_words(rng, 2)} near the {_words(rng, 2)}."
    elif operation == "remember-duplicate":
        text = f"Soak {tag} stores the {_words(rng, 2)} beside the {_words(rng, 2)}."
        made = app.memories().remember(text, type="project", source="user")
        prep.done.append(f"remembered {made.path} ({made.action})")
    else:  # remember-supersede: the same fact with a changed value
        port = rng.randrange(1000, 9000)
        made = app.memories().remember(f"The soak {tag} port is {port}.", type="project",
                                       source="user")
        prep.done.append(f"remembered {made.path} ({made.action})")
        text = f"The soak {tag} port is {port + 1}."
    prep.remembered = text
    return ["remember", text, "--type", "project", "--json"]


def _acknowledged(operation: str, code: int | None, output: str) -> bool:
    """Whether the operation told the user it succeeded (its exit code, or what it printed
    before the kill: a whole JSON answer, a ``forgot`` line)."""
    if code is not None:
        return code == 0
    if operation.startswith("remember"):
        with contextlib.suppress(ValueError):
            return "path" in json.loads(output)
        return False
    if operation == "forget":
        return output.startswith("forgot ")
    return False


def run_soak_trial(
    seed: int, workdir: Path, pool: SessionPool, *, operation: str | None = None,
    kill: bool = True,
) -> SoakResult:
    """One soak trial in ``workdir`` (see the module docstring). ``operation``: one of
    :data:`OPERATIONS`, else drawn from the seed; ``kill=False`` lets the operation finish
    (to measure how long each takes). Sets ``DREAMD_STORAGE__DATA_DIR`` and ``DREAMD_CONFIG``
    of this process to the trial's folder. Never raises for what the product does: a
    timeout or a product error is a failure in the result."""
    started = time.monotonic()
    rng = random.Random(seed)
    chosen = rng.choice(OPERATIONS)
    result = SoakResult(seed, operation or chosen, workdir=str(workdir))
    try:
        _Trial(result, workdir, pool, rng).run(kill)
    except Exception as error:  # a timeout (AssertionError) or a product error: a failure
        result.failures.append(str(error)[:2000] if isinstance(error, AssertionError)
                               else f"{type(error).__name__}: {error}")
    result.duration_s = time.monotonic() - started
    return result


class _Trial:
    """The steps of one trial (:func:`run_soak_trial`)."""

    def __init__(self, result: SoakResult, workdir: Path, pool: SessionPool,
                 rng: random.Random) -> None:
        self.result = result
        self.workdir = workdir
        self.pool = pool
        self.rng = rng
        self.tag = f"sk{result.seed}"
        self.clock = time.monotonic()
        self.vault = workdir / "vault"
        self.env = {"DREAMD_STORAGE__DATA_DIR": str(workdir / "data"),
                    "DREAMD_CONFIG": str(workdir / "config.toml")}
        os.environ.update(self.env)
        shutil.copytree(h.VAULT_EXAMPLE, self.vault, symlinks=True)
        app = h.fresh_app(self.vault)
        app.sync()
        self.phase("copy and sync")
        self.state_dir: Path = app.state_dir
        self.baseline = _parse_all(self.vault)
        self.prep = _prepare(result.operation, self.vault, rng, self.tag)
        result.prepared = self.prep.done
        self.hand = _Hand(self.vault, rng, self.tag, self.prep.avoid)

    def run(self, kill: bool) -> None:
        result, rng = self.result, self.rng
        for _ in range(rng.randint(1 if result.operation in {"sync", "check-fix"} else 0, 3)):
            self.hand.write("before")
        window = KILL_WINDOW_MS[result.operation]
        result.kill_at_ms = rng.uniform(0, window) if kill else (
            window if self.prep.argv is None else float("inf"))  # a daemon runs until killed
        self.phase("prepare")
        self.operate(window)
        for _ in range(rng.randint(0, 2)):
            self.hand.write("after the kill")
        result.markers = self.hand.markers
        self.phase("operation")
        self.restart_and_check()
        self.phase("restart")
        _verify(result, self.vault, self.state_dir, self.baseline, self.prep)
        if self.prep.forgotten_token and not result.acknowledged:
            self.finish_forget()
        problems = h.index_vs_disk(h.fresh_app(self.vault))
        if problems:
            result.failures.append(f"index differs from the disk after check --fix: {problems}")
        self.phase("verify")

    def phase(self, name: str) -> None:
        now = time.monotonic()
        self.result.phases_ms[name] = round((now - self.clock) * 1000)
        self.clock = now

    def operate(self, window: float) -> None:
        """Send the operation to a worker, write markers (for ``run`` also apply file
        operations and maybe a served remember) at their moments, SIGKILL it at
        ``kill_at_ms`` (``inf``: let it finish)."""
        rng, prep, result = self.rng, self.prep, self.result
        events = [(rng.uniform(0, window), "write") for _ in range(rng.randint(0, 4))]
        files = None
        if prep.argv is None:
            files = h._Vault(self.vault, rng, max_deletes=3)
            files.notes = [p for p in files.notes if not p.startswith(("Memory/", "Inbox/"))
                           and p not in self.hand.notes]  # the user's marker files
            events += [(rng.uniform(0, window * 0.8), "file op")
                       for _ in range(rng.randint(2, 8))]
            if rng.random() < 0.5:
                events.append((rng.uniform(0, window * 0.7), "remember"))
        events.append((result.kill_at_ms, "kill"))
        events.sort()
        worker = self.pool.take()
        client: SessionWorker | None = None
        result.argv = ["run", str(self.vault)] if prep.argv is None else prep.argv
        worker.send({"env": self.env, "daemon": str(self.vault)} if prep.argv is None
                    else {"env": self.env, "argv": prep.argv})
        sent = time.monotonic()
        since_ns = time.time_ns()
        when = "during"
        try:
            for at_ms, what in events:
                self._wait(worker, sent, at_ms)
                if what == "write":
                    self.hand.write(when)
                elif what == "file op" and files is not None:
                    result.file_ops.append(files.step())
                elif what == "remember":
                    client = self._served_remember()
                elif what == "kill":
                    self._kill(worker)
                    result.wrote_before_kill = result.killed and _written_since(
                        self.state_dir, since_ns)
                    when = "after the kill"
            if client is not None:  # it goes on after the daemon died: let it answer
                served = client
                h.wait_until(lambda: served.answers()[0] if served.proc.poll() is None
                             else [("", -1)], bool, timeout_s=120,
                             what="the served remember's answer", every_s=0.02)
        finally:
            worker.kill()
            worker.keep_logs(self.workdir, "operation")
            if client is not None:
                client.close()
                client.keep_logs(self.workdir, "served-remember")

    def _wait(self, worker: SessionWorker, sent: float, at_ms: float) -> None:
        """Until ``at_ms`` after ``sent``, noting when the command finishes (and returning
        then when ``at_ms`` is ``inf``)."""
        while (time.monotonic() - sent) * 1000 < at_ms:
            if self.result.op_ms is None and self.prep.argv is not None \
                    and worker.answers()[0]:
                self.result.op_ms = (time.monotonic() - sent) * 1000
            if at_ms == float("inf") and (self.result.op_ms is not None
                                          or worker.proc.poll() is not None):
                return
            time.sleep(0.002)

    def _served_remember(self) -> SessionWorker:
        client = self.pool.take()
        text = f"Soak {self.tag} served {_words(self.rng, 3)}."
        client.send({"env": self.env, "argv": ["remember", text, "--type", "project",
                                               "--json", "--vault", str(self.vault)]})
        self.result.served_remember = text
        return client

    def _kill(self, worker: SessionWorker) -> None:
        """SIGKILL the operation's worker (nothing happens to a command that finished: the
        worker waits for its next line) and read what the command said."""
        result = self.result
        if self.prep.argv is None:  # the daemon never finishes by itself
            daemon = h.DaemonProcess(worker.proc, self.state_dir, worker.err_path)
            result.kill_state = daemon.status().get("state", "starting")
            result.killed = worker.proc.poll() is None
            worker.kill()
            return
        worker.kill()
        done, partial = worker.answers()
        result.killed = not done
        output, code = done[0] if done else (partial, None)
        result.op_exit = code
        result.acknowledged = _acknowledged(result.operation, code, output)
        if code is not None and not result.acknowledged and not (
                result.operation == "check-fix" and code == 1):
            result.failures.append(f"dreamd {' '.join(self.prep.argv)} exited {code}: "
                                   f"{output[-500:]} {worker.log_tail(500)}")

    def restart_and_check(self) -> None:
        """After the kill, in another process: ``dreamd sync``, ``dreamd check``; on drift
        ``check --fix`` and ``check`` again. Findings about what the files say
        (:data:`QUESTIONS`) are counted in ``questions``, not as drift."""
        result, vault = self.result, str(self.vault)
        worker = self.pool.restarter()
        code, output = worker.run(["sync", vault, "--json"], self.env)
        result.restart_codes.append(code)
        if code != 0:
            result.failures.append(f"dreamd sync after the kill exited {code}: "
                                   f"{output[-500:]} {worker.log_tail(500)}")
        check = ["check", "--json", "--vault", vault]
        code, output = worker.run(check, self.env)
        result.restart_codes.append(code)
        if code not in (0, 1):
            result.failures.append(f"dreamd check exited {code}: {output[-500:]}")
            return
        drift = _drift(output)
        result.questions = {k: drift.pop(k) for k in sorted(QUESTIONS & drift.keys())}
        if not drift:
            return
        result.unclean = True
        result.drift = drift
        code, output = worker.run(["check", "--fix", "--json", "--vault", vault], self.env)
        result.restart_codes.append(code)
        code, output = worker.run(check, self.env)
        result.restart_codes.append(code)
        left = _drift(output) if code in (0, 1) else {"(no report)": 1}
        if left.keys() - QUESTIONS:
            result.failures.append(f"drift left after one check --fix: {output[-800:]}")

    def finish_forget(self) -> None:
        """A forget that was killed before it said so: where its text still is, and whether
        ``dreamd forget`` run again finishes the job (it must leave nothing when it says it
        did)."""
        token = (self.prep.forgotten_token or "").encode()
        left = _traces(token, self.vault, self.state_dir)
        if not left:
            return
        path = self.prep.argv[1] if self.prep.argv else ""
        code, output = self.pool.restarter().run(
            ["forget", path, "--yes", "--vault", str(self.vault)], self.env)
        after = _traces(token, self.vault, self.state_dir)
        self.result.notes.append(
            f"killed forget left its text in {len(left)} files ({left[:3]}); forget again "
            f"exited {code}: {output.strip()[:200]!r}; left after it: {after[:3]}")
        if code == 0 and after:
            self.result.failures.append(f"forget run again reported success but its text is "
                                        f"still in {after}")
        self.result.forget_unfinished = code != 0 and bool(after)


def _written_since(folder: Path, since_ns: int) -> bool:
    """Did anything in ``folder`` (the state folder: only dreamd writes there) change after
    ``since_ns`` (``time.time_ns()``)?"""
    for path in folder.rglob("*"):
        with contextlib.suppress(OSError):
            if path.stat().st_mtime_ns >= since_ns:
                return True
    return False


#: ``dreamd check`` findings about what the files say, which the user (or the next dream)
#: settles and ``check --fix`` leaves to them (``automatic: false``): two memories that may
#: disagree, a link to a note the user renamed or deleted, a conflict copy to settle, a
#: credential typed by hand. The trial's own writes, renames and remembers raise them with or
#: without a kill (a kill between a superseding remember's two writes leaves a contradiction:
#: nothing lost, the next dream supersedes). Counted in ``questions``; every other finding
#: is drift, which one ``check --fix`` must repair.
QUESTIONS = frozenset({"possible_pair", "contradiction", "broken_link", "open_conflict",
                       "credential"})


def _drift(check_json: str) -> dict[str, int]:
    """``{finding kind: count}`` of a ``dreamd check --json`` report."""
    try:
        counts = json.loads(check_json).get("counts", {})
    except ValueError:
        return {"(unreadable report)": 1}
    return dict(counts) if isinstance(counts, dict) else {"(unreadable report)": 1}


def _traces(token: bytes, *roots: Path) -> list[str]:
    """Files under ``roots`` whose name or bytes hold ``token``."""
    return [str(p) for root in roots for p in root.rglob("*")
            if token in p.name.encode() or (p.is_file() and token in p.read_bytes())]


# ----------------------------------------------------------------------------- checks


def _markdown(vault: Path) -> dict[str, bytes]:
    return {p.relative_to(vault).as_posix(): p.read_bytes() for p in sorted(vault.rglob("*.md"))
            if p.is_file() and ".obsidian" not in p.parts}


def _parse_all(vault: Path) -> dict[str, set[str]]:
    """``{path: {problem kinds}}`` of every ``.md`` file, and ``"memory"`` for memories."""
    from ccb.parse import parse_note

    found = {}
    for path, data in _markdown(vault).items():
        note = parse_note(path, data)
        found[path] = {p.kind for p in note.problems} | ({"is a memory"} if note.memory else set())
    return found


def _verify(result: SoakResult, vault: Path, state_dir: Path, baseline: dict[str, set[str]],
            prep: _Prepared) -> None:
    from ccb.parse import detect_conflict_copy

    files = _markdown(vault)
    history = b"".join(p.read_bytes() for p in (state_dir / "versions").rglob("*.md")) \
        if prep.rollback_path else b""
    for marker in result.markers:
        needle = marker.text.encode()
        where = [p for p, data in files.items() if needle in data]
        if marker.path in where:
            marker.found = "in its file"
        elif any(detect_conflict_copy(p) == marker.path for p in where):
            marker.found = "in a conflict copy"
        elif where:
            marker.found = f"elsewhere: {where[0]}"
            result.notes.append(f"marker {marker.text} of {marker.path} is in {where[0]}")
        elif marker.path == prep.rollback_path and needle in history:
            marker.found = "in the rolled-back memory's history"
        else:
            marker.found = "LOST"
            result.lost.append(f"{marker.text} ({marker.how} {marker.when} into {marker.path})")
    if result.lost:
        result.failures.append(f"lost markers: {result.lost}")
    remembered = [(prep.remembered, result.acknowledged)] if prep.remembered else []
    if result.served_remember:
        remembered.append((result.served_remember, _served_ok(Path(result.workdir))))
    for text, acknowledged in remembered:
        if acknowledged and not any(text.encode() in data for p, data in files.items()
                                    if _is_memory_file(p)):
            result.failures.append(f"remember reported success but {text!r} is in no memory "
                                   "file")
    _verify_parses(result, vault, baseline)
    if prep.forgotten_token and result.acknowledged:
        left = _traces(prep.forgotten_token.encode(), vault, state_dir)
        if left:
            result.failures.append(f"forget reported success but its text is still in {left}")


def _is_memory_file(path: str) -> bool:
    """A file under ``Memory/`` other than ``MEMORY.md``, ``DREAMS.md`` and their conflict
    copies."""
    from ccb.parse import detect_conflict_copy

    name = (detect_conflict_copy(path) or path).rpartition("/")[2]
    return path.startswith("Memory/") and name not in {"MEMORY.md", "DREAMS.md"}


def _served_ok(workdir: Path) -> bool:
    out = workdir / "served-remember.out"
    text = out.read_text(encoding="utf-8", errors="replace") if out.exists() else ""
    return f"\n{_END} 0\n" in text


def _verify_parses(result: SoakResult, vault: Path, baseline: dict[str, set[str]]) -> None:
    """No ``.md`` file half-written: no problem it did not have before the trial, and every
    memory file (one before, or one under ``Memory/``) still a memory."""
    for path, kinds in _parse_all(vault).items():
        before = baseline.get(path, set())
        new = kinds - before - {"is a memory"}
        if new:
            result.failures.append(f"{path}: new parse problems {sorted(new)} (half-written?)")
        if ("is a memory" in before or _is_memory_file(path)) and "is a memory" not in kinds:
            result.failures.append(f"{path}: no longer a memory (half-written?)")
