"""Writing dreamd's own memory files through the Obsidian CLI (Obsidian 1.12+), and deciding
when to.

The Obsidian CLI (``obsidian``, registered from Settings › General › Command line interface)
drives the *running* desktop app: a file written through it is written by Obsidian itself, so
an open editor of that file reloads instead of going through its "merging changes" path. It
has two properties that shape how dreamd uses it:

- It re-serialises frontmatter when it sets properties (``property:set``). dreamd therefore
  sends whole file contents with ``create path=… content=… overwrite`` and uses the CLI only
  for its own files — memory files, ``MEMORY.md`` and ``DREAMS.md`` in the memory folder
  (:meth:`WriteRouter.is_memory_path`). A user's notes and every conflict copy are written
  directly, byte for byte.
- "If Obsidian is not running, the first command you run launches Obsidian" (Obsidian help,
  *Obsidian CLI*). ``obsidian.mode = auto`` therefore uses the CLI only while the app is
  already running (:func:`obsidian_app_running` reads the process list; it launches nothing).

Content travels as one command-line argument in which ``\\n`` means newline and ``\\t`` tab
(same page, *Use parameters and flags*). Content that cannot be carried that way byte for
byte (:func:`content_problem`) is written directly instead, never altered.

:class:`ObsidianCli` is the transport (one subprocess per call, in the vault folder, bounded by
a timeout after which the whole process group is killed); :class:`WriteRouter` holds the
decision (:class:`WriteMode`) and the retry/fallback policy that :class:`ccb.writer.NoteWriter`
applies.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Literal

import psutil  # type: ignore[import-untyped]
import structlog

from ccb.parse import detect_conflict_copy
from config.errors import VaultError

__all__ = [
    "APP_PROCESS_NAMES",
    "AUTO_RECHECK_S",
    "CLI_COOLDOWN_S",
    "MAX_CONTENT_ARG_BYTES",
    "CliErrorKind",
    "ConfiguredMode",
    "ObsidianCli",
    "ObsidianCliError",
    "WriteMode",
    "WriteRouter",
    "content_problem",
    "encode_content",
    "obsidian_app_running",
]

log = structlog.get_logger("dreamd.obsidian")

ConfiguredMode = Literal["auto", "cli", "direct"]

#: Longest ``content=…`` argument sent, in UTF-8 bytes. Linux caps one argument at
#: MAX_ARG_STRLEN = 32 pages = 128 KiB (execve(2)); Windows caps the whole command line at
#: 32,767 characters (CreateProcess). What is longer is written directly.
MAX_CONTENT_ARG_BYTES = 30_000 if sys.platform == "win32" else 100_000

#: How long ``auto`` keeps its answer (app running and CLI answering, or not), in seconds:
#: writes do not probe each time, and an Obsidian opened or closed is noticed within this.
AUTO_RECHECK_S = 30.0

#: After a CLI call timed out, ``auto`` writes directly for this long, in seconds, instead of
#: waiting out the timeout again on every write.
CLI_COOLDOWN_S = 120.0

#: Process names of the Obsidian desktop app (Linux packages and AppImage, macOS, Windows),
#: compared case-insensitively.
APP_PROCESS_NAMES = frozenset({"obsidian", "obsidian.exe"})

#: C0 control characters the CLI's argument syntax has no escape for (newline and tab do).
_UNCARRIED_CONTROLS = frozenset(chr(c) for c in range(32)) - {"\n", "\t"}

#: How long to wait for a killed process group's pipes to close, in seconds.
_REAP_S = 2.0


CliErrorKind = Literal["missing", "timeout", "failed", "refused", "vault"]


class ObsidianCliError(VaultError):
    """A call of the Obsidian CLI failed, or a write through it did. The message names the
    command (never the content) and what happened; ``kind`` says which: ``missing`` (not
    found on PATH), ``timeout`` (ran past the timeout; its process group was killed),
    ``failed`` (could not start, exited non-zero, answered nonsense, or the file read back
    differs from what was sent), ``refused`` (content it cannot carry; nothing was run),
    ``vault`` (it acts on another vault)."""

    def __init__(self, message: str, *, kind: CliErrorKind = "failed") -> None:
        super().__init__(message)
        self.kind: CliErrorKind = kind


def content_problem(data: bytes) -> str | None:
    """Why ``data`` cannot go through ``create content=…`` byte for byte, or ``None`` when it
    can: not UTF-8; a byte order mark (U+FEFF); a backslash (the CLI reads ``\\n`` and ``\\t``
    in content as escapes, and documents no escape for the backslash itself); ``\\r``, NUL or
    another control character (no escape either; NUL cannot be in an argument at all); or an
    argument longer than :data:`MAX_CONTENT_ARG_BYTES`."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "it is not valid UTF-8"
    if "\ufeff" in text:
        return "it has a byte order mark (U+FEFF)"
    if "\\" in text:
        return "it contains a backslash, which the CLI would read as an escape"
    if "\r" in text:
        return "it has carriage returns (CRLF line endings)"
    if "\x00" in text:
        return "it contains a NUL byte"
    control = next((ch for ch in text if ch in _UNCARRIED_CONTROLS), None)
    if control is not None:
        return f"it contains the control character U+{ord(control):04X}"
    size = len(encode_content(text).encode("utf-8")) + len("content=")
    if size > MAX_CONTENT_ARG_BYTES:
        return (f"the content argument would be {size} bytes, more than the "
                f"{MAX_CONTENT_ARG_BYTES} one argument may carry here")
    return None


def encode_content(text: str) -> str:
    """``text`` as the value of ``content=``: newline → ``\\n``, tab → ``\\t`` (Obsidian help,
    *Obsidian CLI › Use parameters and flags*). Only for text :func:`content_problem` accepts
    (no backslash of its own), so the result decodes back to exactly ``text``."""
    return text.replace("\n", "\\n").replace("\t", "\\t")


class ObsidianCli:
    """The Obsidian CLI, run as ``<command> <args…>`` in ``vault_root`` (the CLI targets the
    vault of its working directory), stdin closed, each call bounded by ``timeout_ms``
    milliseconds. ``command`` is a name looked up on PATH or a full path
    (``obsidian.cli.command``)."""

    def __init__(self, vault_root: Path, *, command: str = "obsidian",
                 timeout_ms: int = 5000) -> None:
        self.vault_root = vault_root.resolve()
        self.command = command
        self.timeout_ms = timeout_ms

    def executable(self) -> str:
        """Full path of the CLI executable. Raises :class:`ObsidianCliError` when ``command``
        is not found on PATH (or the path given is not an executable file)."""
        found = shutil.which(self.command)
        if found is None:
            where = "is not an executable file" if os.sep in self.command or (
                os.altsep and os.altsep in self.command) else "was not found on PATH"
            raise ObsidianCliError(
                f"obsidian CLI: {self.command!r} {where} (obsidian.cli.command); enable "
                "Settings › General › Command line interface in Obsidian 1.12.7+",
                kind="missing")
        return found

    def run(self, *args: str) -> str:
        """Run the CLI with ``args``; returns its standard output (UTF-8, stripped of the
        trailing newline). Raises :class:`ObsidianCliError` when it cannot be started, runs
        longer than ``timeout_ms`` (its whole process group is killed first, so nothing it
        started writes later), or exits non-zero (the message carries the exit code and the
        first line of stderr, else of stdout)."""
        shown = self._describe(args)
        argv = [self.executable(), *args]
        windows = sys.platform == "win32"
        try:
            proc = subprocess.Popen(
                argv, cwd=self.vault_root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=not windows,  # its own process group, killed as one
                creationflags=getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0) if windows
                else 0)
        except OSError as error:
            raise ObsidianCliError(f"obsidian CLI: `{shown}` could not be started: "
                                   f"{error.strerror or error}") from None
        try:
            out, errout = proc.communicate(timeout=self.timeout_ms / 1000)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            raise ObsidianCliError(f"obsidian CLI: `{shown}` timed out after "
                                   f"{self.timeout_ms} ms (stopped)", kind="timeout") from None
        except BaseException:
            _kill_group(proc)
            raise
        stdout = out.decode("utf-8", errors="replace")
        if proc.returncode != 0:
            first = _first_line(errout.decode("utf-8", errors="replace")) or _first_line(stdout)
            raise ObsidianCliError(f"obsidian CLI: `{shown}` exited with {proc.returncode}"
                                   + (f": {first}" if first else ""))
        return stdout.rstrip("\r\n")

    def create(self, rel_path: str, text: str) -> None:
        """``create path=<rel_path> content=<text> overwrite``: write the whole file through
        Obsidian. Raises :class:`ObsidianCliError` as :meth:`run`, and at once (running
        nothing) when the path or text cannot be carried (:func:`content_problem`)."""
        if any(ch in rel_path for ch in "\\\n\r\t\x00") or rel_path.startswith("/"):
            raise ObsidianCliError(f"obsidian CLI: create path={rel_path!r}: not a plain "
                                   "vault-relative path", kind="refused")
        problem = content_problem(text.encode("utf-8"))
        if problem is not None:
            raise ObsidianCliError(f"obsidian CLI: create path={rel_path}: content not sent: "
                                   f"{problem}", kind="refused")
        self.run("create", f"path={rel_path}", f"content={encode_content(text)}", "overwrite")

    def version(self) -> str:
        """``version``: the Obsidian version the CLI reports. Raises as :meth:`run`, and
        :class:`ObsidianCliError` for an empty answer or one starting with ``Error``."""
        answer = self.run("version").strip()
        if not answer or answer.lower().startswith("error"):
            raise ObsidianCliError(f"obsidian CLI: `{self.command} version` answered "
                                   f"{_first_line(answer)!r}")
        return answer

    def vault_path(self) -> Path:
        """``vault info=path``: the folder of the vault the CLI acts on from ``vault_root``.
        Raises as :meth:`run`, and :class:`ObsidianCliError` for an answer that is not a
        path."""
        answer = _first_line(self.run("vault", "info=path"))
        value = answer.rsplit("\t", 1)[-1].strip()
        if not value or value.lower().startswith("error") or not Path(value).is_absolute():
            raise ObsidianCliError(f"obsidian CLI: `{self.command} vault info=path` answered "
                                   f"{answer!r}, not a vault folder")
        return Path(value)

    def _describe(self, args: tuple[str, ...]) -> str:
        """The command as shown in messages: never the content, which may be long or private."""
        shown = [self.command]
        for arg in args:
            key, eq, _value = arg.partition("=")
            shown.append(f"{key}=…" if eq and key == "content" else arg)
        return " ".join(shown)


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill ``proc`` and every process in its group (POSIX; a tree kill on Windows), then
    reap it. A child that left the group and still holds the pipes is not waited for."""
    if sys.platform != "win32":
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    else:  # pragma: no cover - Windows
        subprocess.run(["taskkill", "/F", "/T", "/PID", str(proc.pid)],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False)
    proc.kill()
    try:
        proc.communicate(timeout=_REAP_S)
    except subprocess.TimeoutExpired:
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        proc.wait()


def obsidian_app_running(cli_executable: str | None = None) -> bool:
    """Whether the Obsidian desktop app runs for this user: a process named ``obsidian`` /
    ``Obsidian`` / ``Obsidian.exe`` (:data:`APP_PROCESS_NAMES`) of the current user that is
    not a zombie and not a call of the CLI itself (its executable, or the script its
    interpreter runs, is ``cli_executable`` — on Linux the CLI is also named ``obsidian``).
    Reads the process list only: launches nothing."""
    cli_real = os.path.realpath(cli_executable) if cli_executable else None
    me = psutil.Process()
    my_uid = me.uids().real if hasattr(me, "uids") else None
    my_user = None if my_uid is not None else _username(me)
    for proc in psutil.process_iter(["name", "pid"]):
        name = (proc.info.get("name") or "").lower()
        if name not in APP_PROCESS_NAMES or proc.pid == me.pid:
            continue
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                continue
            if my_uid is not None and proc.uids().real != my_uid:
                continue
            if my_user is not None and _username(proc) != my_user:
                continue
            if cli_real is not None and _runs(proc, cli_real):
                continue
        except psutil.NoSuchProcess:
            continue
        except psutil.AccessDenied:
            continue  # another user's or a protected process: not this user's app
        return True
    return False


def _username(proc: psutil.Process) -> str | None:
    try:
        return str(proc.username())
    except psutil.Error:
        return None


def _runs(proc: psutil.Process, real: str) -> bool:
    """``proc``'s executable, or the script its interpreter runs, is the file ``real``."""
    try:
        exe = proc.exe()
    except psutil.Error:
        exe = ""
    try:
        cmdline = proc.cmdline()[:2]
    except psutil.Error:
        cmdline = []
    for candidate in (exe, *cmdline):
        if candidate and Path(candidate).is_absolute() and os.path.realpath(candidate) == real:
            return True
    return False


@dataclass(frozen=True, slots=True)
class WriteMode:
    """The write path in effect for dreamd's memory files: ``mode`` (``cli`` or ``direct``),
    ``reason`` (one line, for ``dreamd doctor`` and logs) and ``hint`` (what the user may do,
    when the configured wish cannot be met; ``None`` otherwise). ``str()`` gives
    ``"<mode>: <reason>"``."""

    mode: Literal["cli", "direct"]
    reason: str
    hint: str | None = None

    @property
    def uses_cli(self) -> bool:
        return self.mode == "cli"

    def __str__(self) -> str:
        return f"{self.mode}: {self.reason}"


_CLI_HINT = ("turn on Settings › General › Command line interface in Obsidian (installer "
             "1.12.7+), or set obsidian.cli.command to the CLI's full path")


def _hint_for(error: ObsidianCliError) -> str:
    """What the user can do about a CLI that cannot be used."""
    if error.kind == "vault":
        return "open this vault in Obsidian (the CLI acts on the vault of its working folder " \
               "only when Obsidian knows that folder as a vault)"
    if error.kind == "timeout":
        return "check that Obsidian responds, or raise obsidian.cli.timeout_ms"
    return _CLI_HINT


@functools.lru_cache(maxsize=16384)
def _is_memory_path(rel_path: str, memory_folder: str) -> bool:
    """:meth:`WriteRouter.is_memory_path` (a function of the two texts alone), kept for the
    last 16,384 paths: a dream's batch asks it twice of each of the 3,300 files it writes
    over the planted 10,000 memories of ``bench/dream_bench.py`` (staged, then written):
    0.052 s of CPU with path objects made each time, 0.035 s so (best of 7,
    ``time.process_time``)."""
    path = PurePosixPath(rel_path)
    folder = PurePosixPath(memory_folder)
    return (path.suffix.lower() == ".md" and path.is_relative_to(folder) and path != folder
            and not any(part.startswith(".") for part in path.parts)
            and detect_conflict_copy(rel_path) is None)


class WriteRouter:
    """Which way :class:`ccb.writer.NoteWriter` writes a vault file, and how it retries.

    ``mode`` is ``obsidian.mode``: ``direct``; ``cli`` (always the CLI for memory files, even
    when that launches Obsidian); ``auto`` (the CLI while the app runs — ``app_running``,
    default :func:`obsidian_app_running` — and ``obsidian version`` answers within the timeout
    for this vault; else direct). The ``auto`` answer is kept :data:`AUTO_RECHECK_S` seconds;
    after a CLI timeout ``auto`` writes directly for :data:`CLI_COOLDOWN_S` seconds.
    ``cli_enabled=False`` (``obsidian.cli.enabled``) means never the CLI.
    ``max_retries`` (``obsidian.fallback.max_retries``) is how many times a failed CLI write
    is tried again; then, if ``fallback`` (``obsidian.fallback.enabled``), the file is written
    directly, else the write fails with :class:`ObsidianCliError`. ``clock`` is a monotonic
    clock in seconds.
    """

    def __init__(
        self, cli: ObsidianCli, *, mode: ConfiguredMode, memory_folder: str,
        cli_enabled: bool = True, max_retries: int = 2, fallback: bool = True,
        app_running: Callable[[str | None], bool] = obsidian_app_running,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.cli = cli
        self.configured = mode
        self.memory_folder = memory_folder.strip("/")
        self.cli_enabled = cli_enabled
        self.max_retries = max_retries
        self.fallback = fallback
        self._app_running = app_running
        self._clock = clock
        self._lock = threading.Lock()
        self._cached: tuple[WriteMode, float] | None = None  # (mode, valid until)
        self._cooldown_until: float | None = None
        self._cooldown_since: datetime | None = None
        self._vault_checked_until = 0.0
        self._last_logged: WriteMode | None = None

    # ------------------------------------------------------------------ which files

    def is_memory_path(self, rel_path: str) -> bool:
        """True for dreamd's own files: a ``.md`` file inside the memory folder (memories,
        ``MEMORY.md``, ``DREAMS.md``) that is not hidden and not a conflict copy."""
        return _is_memory_path(rel_path, self.memory_folder)

    # ------------------------------------------------------------------ the mode

    def write_mode(self) -> WriteMode:
        """The mode in effect now, for writes: ``direct`` and ``cli`` answer at once (``cli``
        probes nothing — writes go through the CLI and fall back when it fails); ``auto``
        probes (app running, ``obsidian version``, the CLI's vault) at most once per
        :data:`AUTO_RECHECK_S` seconds, and not at all during a cool-down."""
        with self._lock:
            now = self._clock()
            if self._cached is not None and now < self._cached[1]:
                return self._cached[0]
            decided = self._decide(now, thorough=False)
            until = now + AUTO_RECHECK_S
            if self._cooldown_until is not None and self._cooldown_until > now:
                until = min(until, self._cooldown_until)  # ask again when it ends
            self._cached = (decided, until)
            changed, self._last_logged = decided != self._last_logged, decided
        if changed:
            log.info("obsidian.write_mode", mode=decided.mode, reason=decided.reason)
        return decided

    def probe(self) -> WriteMode:
        """The mode with every fact looked up afresh (``dreamd doctor``). Never launches
        Obsidian: in ``cli`` mode the CLI is asked only when the app is already running."""
        with self._lock:
            return self._decide(self._clock(), thorough=True)

    def _decide(self, now: float, *, thorough: bool) -> WriteMode:
        """The decision (call with ``_lock`` held). ``thorough``: in ``cli`` mode, also tell
        whether the CLI is installed, the app running and the CLI answering."""
        if not self.cli_enabled:
            return WriteMode("direct", "obsidian.cli.enabled = false")
        if self.configured == "direct":
            return WriteMode("direct", "obsidian.mode = direct")
        if self.configured == "cli":
            return self._decide_cli() if thorough else WriteMode("cli", "obsidian.mode = cli")
        if self._cooldown_until is not None and now < self._cooldown_until:
            since = self._cooldown_since.strftime("%H:%M:%S") if self._cooldown_since else "?"
            return WriteMode("direct", f"obsidian.mode = auto and an Obsidian CLI call timed "
                             f"out at {since} UTC; writing directly for "
                             f"{CLI_COOLDOWN_S:.0f} s after it")
        try:
            executable = self.cli.executable()
        except ObsidianCliError:
            return WriteMode("direct", f"obsidian.mode = auto and the Obsidian CLI "
                             f"({self.cli.command!r}) is not installed (not found)")
        if not self._app_running(executable):
            return WriteMode("direct", "obsidian.mode = auto and Obsidian is not running")
        answered = self._answers()
        if isinstance(answered, ObsidianCliError):
            if answered.kind == "timeout":
                self._start_cooldown()
            return WriteMode("direct", "obsidian.mode = auto; Obsidian is running but its CLI "
                             f"cannot be used: {answered}", _hint_for(answered))
        return WriteMode("cli", "Obsidian is running and obsidian version answered in "
                         f"{answered:.0f} ms")

    def _decide_cli(self) -> WriteMode:
        """``cli`` mode, with what ``doctor`` can find out without launching Obsidian."""
        prefix = "obsidian.mode = cli"
        then = "fall back to direct" if self.fallback else \
            "fail (obsidian.fallback.enabled = false)"
        try:
            executable = self.cli.executable()
        except ObsidianCliError:
            return WriteMode("cli", f"{prefix}, but the Obsidian CLI ({self.cli.command!r}) is "
                             f"not installed (not found): memory writes will {then}", _CLI_HINT)
        if not self._app_running(executable):
            return WriteMode("cli", f"{prefix}; Obsidian is not running, so the first memory "
                             "write will launch it")
        answered = self._answers()
        if isinstance(answered, ObsidianCliError):
            return WriteMode("cli", f"{prefix}, but Obsidian's CLI cannot be used now: "
                             f"{answered}; memory writes will {then}", _hint_for(answered))
        return WriteMode("cli", f"{prefix}; Obsidian is running and obsidian version "
                         f"answered in {answered:.0f} ms")

    def _answers(self) -> float | ObsidianCliError:
        """Ask ``obsidian version`` (the app runs, so this launches nothing) and check that
        the CLI acts on this vault: the time ``version`` took in ms, or the error."""
        started = time.monotonic()
        try:
            self.cli.version()
            elapsed_ms = (time.monotonic() - started) * 1000
            self._check_vault()
        except ObsidianCliError as error:
            return error
        self._vault_checked_until = self._clock() + AUTO_RECHECK_S
        return elapsed_ms

    def _check_vault(self) -> None:
        """Raise :class:`ObsidianCliError` unless the CLI acts on this vault (the CLI falls
        back to the *active* vault when its folder is not a vault Obsidian knows; writing
        there would put our file into another vault)."""
        found = self.cli.vault_path()
        if os.path.normcase(str(found.resolve())) != os.path.normcase(str(self.cli.vault_root)):
            raise ObsidianCliError(
                f"obsidian CLI: it acts on the vault {found}, not on {self.cli.vault_root} "
                "(open this folder as a vault in Obsidian)", kind="vault")

    def ensure_vault(self) -> None:
        """Before a CLI write: the CLI acts on this vault (checked once per
        :data:`AUTO_RECHECK_S`). Raises :class:`ObsidianCliError` otherwise, or as the CLI
        call does."""
        with self._lock:
            if self._clock() < self._vault_checked_until:
                return
        self._check_vault()
        with self._lock:
            self._vault_checked_until = self._clock() + AUTO_RECHECK_S

    # ------------------------------------------------------------------ outcomes

    def note_timeout(self) -> None:
        """A CLI call timed out: in ``auto``, write directly for :data:`CLI_COOLDOWN_S`."""
        with self._lock:
            self._vault_checked_until = 0.0
            if self.configured == "auto":
                self._start_cooldown()
                self._cached = None

    def note_failure(self) -> None:
        """A CLI call failed otherwise: ``auto`` asks again before the next write."""
        with self._lock:
            self._vault_checked_until = 0.0
            if self.configured == "auto":
                self._cached = None

    def _start_cooldown(self) -> None:
        self._cooldown_until = self._clock() + CLI_COOLDOWN_S
        self._cooldown_since = datetime.now(UTC)
        log.warning("obsidian.cli_cooldown", seconds=CLI_COOLDOWN_S,
                    reason="an Obsidian CLI call timed out; writing directly meanwhile")
