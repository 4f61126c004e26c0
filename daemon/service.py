"""Run dreamd as a per-vault background service: a systemd user unit or a launchd agent.

Pure renderers (:func:`render_systemd_unit`, :func:`render_launchd_plist`), one pure planner
(:func:`plan_service`: which file goes where, with which content) and three small effectful
functions (:func:`install`, :func:`uninstall`, :func:`service_status`) that write or remove the
file and run ``systemctl --user`` / ``launchctl``, reporting every command and its output. When
the tool is missing or the user's service manager is unreachable (containers, ``su`` sessions),
the file is still written or removed and the result lists the commands left for the user to
run; nothing here raises for that.

The service runs ``<python> -P -m daemon run <vault>``: the console script may not be on the
service manager's PATH, ``python`` is the interpreter of the environment dreamd is installed in
(``sys.executable`` *unresolved*, so a venv stays a venv), and ``-P`` (Python ≥ 3.11) keeps the
working folder off ``sys.path`` so a ``daemon/`` or ``config/`` folder in ``$HOME`` cannot
shadow ours.

Why ``Type=notify`` + ``ExecReload=kill -HUP``: ``Type=notify-reload`` needs systemd ≥ 253,
which Ubuntu 22.04 and RHEL 9 do not ship (DESIGN.md, "Services"). The daemon must therefore
send ``READY=1`` once it serves and ``WATCHDOG=1`` at least every ``WatchdogSec`` seconds.
"""

from __future__ import annotations

import os
import plistlib
import re
import shlex
import shutil
import subprocess
import sys
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ccb.atomic import write_bytes_atomic
from config.errors import ConfigError, DreamdError, LockError, exit_code_for
from config.settings import vault_id

__all__ = [
    "COMMAND_TIMEOUT_S",
    "RESTART_SEC",
    "WATCHDOG_SEC",
    "CommandOutcome",
    "CommandRan",
    "CommandSkipped",
    "ServiceKind",
    "ServicePlan",
    "ServiceResult",
    "ServiceStatus",
    "install",
    "launchd_label",
    "macos_privacy_note",
    "plan_service",
    "render_launchd_plist",
    "render_systemd_unit",
    "service_id",
    "service_status",
    "systemd_unit_name",
    "uninstall",
]

ServiceKind = Literal["systemd", "launchd"]

#: Seconds systemd waits before restarting a failed daemon (the brief's value).
RESTART_SEC = 5
#: Seconds without ``WATCHDOG=1`` before systemd kills and restarts the daemon (the brief's
#: value); the daemon should ping every ``WATCHDOG_SEC / 2``.
WATCHDOG_SEC = 60
#: Seconds one ``systemctl``/``launchctl`` call may take before it is reported as timed out.
COMMAND_TIMEOUT_S = 60
#: Exit code reported for a command that timed out (the convention of coreutils ``timeout``).
_TIMEOUT_EXIT = 124
#: A failed start of the same unit this many times within the interval stops the retries.
_START_LIMIT_BURST = 5
_START_LIMIT_INTERVAL_S = 300
#: PATH under launchd, after the interpreter's own folder (launchd's default PATH is minimal).
_LAUNCHD_SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"


# --------------------------------------------------------------------------- names


def service_id(vault: Path) -> str:
    """:func:`config.settings.vault_id` folded to ``[a-z0-9-]``: ``notes-é`` → ``notes-e``.

    systemd refuses unit names outside ``[A-Za-z0-9:_.\\-@]`` ("Invalid unit name", measured
    with systemd 252), while vault ids keep letters of any script. Accents are dropped (NFKD),
    other non-ASCII letters removed; the 8-hex path digest at the end keeps ids distinct, and
    stands alone when nothing of the name is left (a vault named ``笔记``).
    """
    slug, _, digest = vault_id(vault).rpartition("-")
    folded = unicodedata.normalize("NFKD", slug).encode("ascii", "ignore").decode("ascii")
    folded = re.sub(r"[^a-z0-9]+", "-", folded.lower()).strip("-")
    return f"{folded}-{digest}" if folded else digest


def systemd_unit_name(vault: Path) -> str:
    """``dreamd-<service-id>.service`` (see :func:`service_id`)."""
    return f"dreamd-{service_id(vault)}.service"


def launchd_label(vault: Path) -> str:
    """``io.dreamd.<service-id>``, the launchd job label and plist file stem."""
    return f"io.dreamd.{service_id(vault)}"


def _daemon_argv(python: Path, vault: Path) -> list[str]:
    return [str(python), "-P", "-m", "daemon", "run", str(vault)]


def _dreamd_environment(config_path: Path | None, env_name: str | None) -> dict[str, str]:
    env: dict[str, str] = {}
    if config_path is not None:
        env["DREAMD_CONFIG"] = str(config_path)
    if env_name:
        env["DREAMD_ENV"] = env_name
    # journald and launchd log files want one JSON object per line (daemon/logs.py).
    env["DREAMD_LOGGING__FORMAT"] = "json"
    return env


# --------------------------------------------------------------------------- systemd


def _systemd_escape(text: str, *, dollar: bool) -> str:
    """Escape ``text`` for use inside a double-quoted systemd word.

    systemd unquotes and C-unescapes words of ``ExecStart=``/``Environment=``, expands
    ``%`` specifiers everywhere (``%%`` is a literal ``%``) and ``$VAR`` in command
    arguments (``$$`` is a literal ``$``) but not in the executable or ``Environment=``.
    Control characters become ``\\xNN``; other non-ASCII text is kept as UTF-8.
    """
    out: list[str] = []
    for char in text:
        code = ord(char)
        if char in '\\"':
            out.append("\\" + char)
        elif char == "%":
            out.append("%%")
        elif char == "$" and dollar:
            out.append("$$")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        else:
            out.append(char)
    return "".join(out)


def _systemd_exec_line(argv: Sequence[str]) -> str:
    executable, *args = argv
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in executable):
        raise DreamdError(f"service: interpreter path {executable!r} has control characters")
    words = [f'"{_systemd_escape(executable, dollar=False)}"']
    words += [f'"{_systemd_escape(arg, dollar=True)}"' for arg in args]
    return " ".join(words)


def _systemd_plain(text: str) -> str:
    """A value for keys that are neither unquoted nor unescaped (``Description=``)."""
    return "".join("?" if ord(c) < 0x20 or ord(c) == 0x7F else c for c in text).replace("%", "%%")


def render_systemd_unit(
    *, python: Path, config_path: Path | None, vault: Path, env_name: str | None
) -> str:
    """The text of a per-vault systemd user unit (``Type=notify``, watchdog, journald JSON).

    ``python`` and ``vault`` must be absolute; paths with spaces, quotes, ``%``, ``$`` or
    non-ASCII characters are quoted by systemd's own rules. ``Restart=on-failure`` skips the
    exit codes of config and lock errors (``config.errors.EXIT_CODES``): retrying cannot fix
    them. Raises DreamdError when the interpreter path holds control characters.
    """
    no_retry = sorted({exit_code_for(ConfigError("")), exit_code_for(LockError(""))})
    env_lines = [
        f'Environment="{key}={_systemd_escape(value, dollar=False)}"'
        for key, value in _dreamd_environment(config_path, env_name).items()
    ]
    lines = [
        "# Written by `dreamd service install`; remove with `dreamd service uninstall`.",
        "[Unit]",
        f"Description=dreamd memory daemon for vault {_systemd_plain(vault.name)} "
        f"({_systemd_plain(str(vault))})",
        f"StartLimitIntervalSec={_START_LIMIT_INTERVAL_S}",
        f"StartLimitBurst={_START_LIMIT_BURST}",
        "",
        "[Service]",
        "Type=notify",
        "NotifyAccess=main",
        f"ExecStart={_systemd_exec_line(_daemon_argv(python, vault))}",
        "ExecReload=/bin/kill -HUP $MAINPID",
        "Restart=on-failure",
        f"RestartSec={RESTART_SEC}",
        f"RestartPreventExitStatus={' '.join(str(code) for code in no_retry)}",
        f"WatchdogSec={WATCHDOG_SEC}",
        *env_lines,
        "Nice=10",
        "",
        "[Install]",
        "WantedBy=default.target",
        "",
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------- launchd


def render_launchd_plist(
    *,
    python: Path,
    config_path: Path | None,
    vault: Path,
    env_name: str | None,
    log_dir: Path,
) -> bytes:
    """An XML launchd agent plist for one vault (label ``io.dreamd.<service-id>``).

    Restarts only after a failed exit (``KeepAlive.SuccessfulExit = false``), runs as a
    background process, logs to ``<log_dir>/<service-id>.out.log`` / ``.err.log``, and gets an
    explicit PATH (the interpreter's folder, then the system folders), since launchd's is bare.
    """
    ident = service_id(vault)
    env = {"PATH": f"{python.parent}:{_LAUNCHD_SYSTEM_PATH}",
           **_dreamd_environment(config_path, env_name)}
    plist = {
        "Label": launchd_label(vault),
        "ProgramArguments": _daemon_argv(python, vault),
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ProcessType": "Background",
        "EnvironmentVariables": env,
        "StandardOutPath": str(log_dir / f"{ident}.out.log"),
        "StandardErrorPath": str(log_dir / f"{ident}.err.log"),
    }
    return plistlib.dumps(plist, fmt=plistlib.FMT_XML, sort_keys=True)


def macos_privacy_note(vault: Path, *, home: Path, python: Path) -> str | None:
    """A Full Disk Access hint when ``vault`` lies where macOS privacy rules (TCC) keep a
    launchd background interpreter out (Desktop, Documents, Downloads, iCloud Drive, cloud
    storage, other volumes); ``None`` elsewhere. Source: DESIGN.md, "Services".
    """
    protected = {
        home / "Desktop": "~/Desktop",
        home / "Documents": "~/Documents",
        home / "Downloads": "~/Downloads",
        home / "Library" / "Mobile Documents": "iCloud Drive",
        home / "Library" / "CloudStorage": "cloud storage (~/Library/CloudStorage)",
        Path("/Volumes"): "an external or network volume (/Volumes)",
    }
    spellings = {vault.expanduser().absolute(), vault.expanduser().resolve()}
    for folder, label in protected.items():
        if any(path.is_relative_to(folder) for path in spellings):
            real = python.resolve()
            return (
                f"macOS: the vault is in {label}; a launchd background process cannot read it "
                f"until the interpreter has Full Disk Access: System Settings › Privacy & "
                f"Security › Full Disk Access › + {real} (the real binary, not a venv link). "
                f"Until then dreamd sees the vault as unreadable."
            )
    return None


# --------------------------------------------------------------------------- plan


@dataclass(frozen=True)
class ServicePlan:
    """What ``dreamd service`` installs for one vault on one platform.

    ``name`` is the systemd unit name or the launchd label; ``path`` the unit/plist file;
    ``content`` its bytes (UTF-8 text for systemd, XML plist for launchd); ``log_dir`` the
    launchd log folder (``None`` for systemd: logs go to the journal); ``uid`` the user id for
    ``launchctl``'s ``gui/<uid>`` domain.
    """

    kind: ServiceKind
    vault: Path
    python: Path
    config_path: Path | None
    env_name: str | None
    name: str
    path: Path
    content: bytes
    log_dir: Path | None
    uid: int
    home: Path

    @property
    def launchd_domain(self) -> str:
        """``gui/<uid>``: the per-user launchd domain of a logged-in user."""
        return f"gui/{self.uid}"

    @property
    def launchd_target(self) -> str:
        """``gui/<uid>/<label>``: this job inside the user's launchd domain."""
        return f"{self.launchd_domain}/{self.name}"


def _systemd_user_dir(home: Path, environ: Mapping[str, str]) -> Path:
    xdg = environ.get("XDG_CONFIG_HOME", "")
    # The XDG spec says relative values are invalid and must be ignored.
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else home / ".config"
    return base / "systemd" / "user"


def plan_service(
    vault: Path,
    *,
    python: Path | None = None,
    config_path: Path | None = None,
    env_name: str | None = None,
    platform: str | None = None,
    home: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> ServicePlan:
    """Decide the unit/plist for ``vault`` (made absolute, symlinks resolved).

    ``python`` defaults to ``sys.executable`` made absolute but *not* resolved (a venv's
    ``bin/python`` link must stay the venv); ``platform`` to ``sys.platform`` (``linux*`` →
    systemd, ``darwin`` → launchd); ``home`` to ``Path.home()``; ``environ`` (for
    ``XDG_CONFIG_HOME``) to ``os.environ``. Reads nothing else. Raises DreamdError on other
    platforms or without a usable interpreter path.
    """
    platform = platform or sys.platform
    home = home if home is not None else Path.home()
    environ = environ if environ is not None else os.environ
    exe = python if python is not None else Path(sys.executable) if sys.executable else None
    if exe is None:
        raise DreamdError("service: cannot tell which Python runs dreamd (sys.executable empty)")
    exe = exe.expanduser().absolute()
    root = vault.expanduser().resolve()
    config = config_path.expanduser().resolve() if config_path is not None else None
    uid = os.getuid() if hasattr(os, "getuid") else 0
    if platform.startswith("linux"):
        name = systemd_unit_name(root)
        text = render_systemd_unit(python=exe, config_path=config, vault=root, env_name=env_name)
        return ServicePlan("systemd", root, exe, config, env_name, name,
                           _systemd_user_dir(home, environ) / name, text.encode("utf-8"),
                           None, uid, home)
    if platform == "darwin":
        name = launchd_label(root)
        log_dir = home / "Library" / "Logs" / "dreamd"
        data = render_launchd_plist(python=exe, config_path=config, vault=root,
                                    env_name=env_name, log_dir=log_dir)
        return ServicePlan("launchd", root, exe, config, env_name, name,
                           home / "Library" / "LaunchAgents" / f"{name}.plist", data,
                           log_dir, uid, home)
    raise DreamdError(
        f"service: no service manager support on {platform}; run `dreamd run` in a terminal "
        f"or start it from your system's scheduler"
    )


# --------------------------------------------------------------------------- commands


@dataclass(frozen=True)
class CommandRan:
    """A command that was run: its exit code (124 on timeout) and its stdout+stderr."""

    argv: tuple[str, ...]
    returncode: int
    output: str

    @property
    def ok(self) -> bool:
        """True when the command exited 0."""
        return self.returncode == 0


@dataclass(frozen=True)
class CommandSkipped:
    """A command that was not run, and why (dry run, tool missing, an earlier step failed)."""

    argv: tuple[str, ...]
    reason: str


CommandOutcome = CommandRan | CommandSkipped


def _shell(argv: Sequence[str]) -> str:
    return shlex.join(argv)


def _run(argv: Sequence[str]) -> CommandOutcome:
    """Run ``argv`` (``argv[0]`` looked up on PATH) with a timeout; never raises for failures."""
    args = tuple(argv)
    if shutil.which(args[0]) is None:
        return CommandSkipped(args, f"{args[0]} not found on PATH")
    try:
        done = subprocess.run(args, capture_output=True, text=True, errors="replace",
                              timeout=COMMAND_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return CommandRan(args, _TIMEOUT_EXIT, f"timed out after {COMMAND_TIMEOUT_S} s")
    except OSError as error:
        return CommandSkipped(args, f"could not start {args[0]}: {error}")
    return CommandRan(args, done.returncode, (done.stdout + done.stderr).strip())


@dataclass(frozen=True)
class _Step:
    argv: tuple[str, ...]
    may_fail: bool = False  # e.g. bootout of a job that is not loaded


def _run_steps(steps: Sequence[_Step], *, dry_run: bool) -> tuple[list[CommandOutcome], list[str]]:
    """Run steps in order; after the first failure the rest are skipped and left as to-dos."""
    outcomes: list[CommandOutcome] = []
    todo: list[str] = []
    for step in steps:
        if dry_run:
            outcomes.append(CommandSkipped(step.argv, "dry run"))
            continue
        if todo:
            outcomes.append(CommandSkipped(step.argv, "an earlier command failed"))
            todo.append(_shell(step.argv))
            continue
        outcome = _run(step.argv)
        outcomes.append(outcome)
        if isinstance(outcome, CommandRan) and (outcome.ok or step.may_fail):
            continue
        if step.may_fail:
            continue
        todo.append(_shell(step.argv))
    return outcomes, todo


def _describe(outcome: CommandOutcome) -> list[str]:
    if isinstance(outcome, CommandSkipped):
        return [f"not run ({outcome.reason}): {_shell(outcome.argv)}"]
    head = "ran" if outcome.ok else f"failed (exit {outcome.returncode})"
    lines = [f"{head}: {_shell(outcome.argv)}"]
    lines += [f"  {line}" for line in outcome.output.splitlines()]
    return lines


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class ServiceResult:
    """What ``install``/``uninstall`` did (or, with ``dry_run``, would do).

    ``changed_files``: files written or removed (empty in a dry run); ``commands``: every
    command with its outcome, in order; ``todo``: shell lines the user still has to run
    (the service manager was missing or unreachable); ``notes``: advice for humans.
    """

    action: Literal["install", "uninstall"]
    plan: ServicePlan
    dry_run: bool
    changed_files: tuple[Path, ...]
    commands: tuple[CommandOutcome, ...]
    todo: tuple[str, ...]
    notes: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """True when nothing is left for the user to run."""
        return not self.todo

    def lines(self) -> list[str]:
        """Human-readable report, one line per item (a dry run includes the file itself)."""
        plan = self.plan
        if self.action == "uninstall" and not self.commands and not self.changed_files:
            return [f"not installed: {plan.path} absent"]
        out: list[str] = []
        if self.dry_run:
            verb = "would write" if self.action == "install" else "would remove"
            out.append(f"{verb} {plan.path}")
            if self.action == "install":
                text = plan.content.decode("utf-8")
                out += [f"  {line}" for line in text.splitlines()]
            out.append("would run:")
            out += [f"  {_shell(c.argv)}" for c in self.commands]
        else:
            past = "wrote" if self.action == "install" else "removed"
            out += [f"{past} {path}" for path in self.changed_files]
            if not self.changed_files:
                out.append(f"{plan.path}: "
                           + ("unchanged" if self.action == "install" else "not installed"))
            for outcome in self.commands:
                out += _describe(outcome)
        if self.todo:
            out.append("still to do — run these in your login session:")
            out += [f"  {line}" for line in self.todo]
        out += self.notes
        return out


@dataclass(frozen=True)
class ServiceStatus:
    """Whether the unit/plist is installed, whether it matches what ``install`` would write
    now (``up_to_date``), and the service manager's answers (``commands``)."""

    plan: ServicePlan
    installed: bool
    up_to_date: bool
    commands: tuple[CommandOutcome, ...]

    def lines(self) -> list[str]:
        """Human-readable report."""
        if not self.installed:
            head = f"not installed ({self.plan.path} absent); install: dreamd service install"
        elif self.up_to_date:
            head = f"installed: {self.plan.path}"
        else:
            head = (f"installed but outdated: {self.plan.path} differs from what "
                    f"`dreamd service install` would write now; run it again")
        out = [head]
        for outcome in self.commands:
            out += _describe(outcome)
        return out


# --------------------------------------------------------------------------- effects


def _read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _systemctl(*args: str) -> tuple[str, ...]:
    return ("systemctl", "--user", *args)


def _install_notes(plan: ServicePlan) -> list[str]:
    notes: list[str] = []
    if plan.kind == "systemd":
        notes.append(f"logs: journalctl --user -u {plan.name} -f")
        notes.append("to keep dreamd running while you are logged out: "
                     "loginctl enable-linger $USER")
    else:
        assert plan.log_dir is not None
        notes.append(f"logs: {plan.log_dir}")
        privacy = macos_privacy_note(plan.vault, home=plan.home, python=plan.python)
        if privacy:
            notes.append(privacy)
    return notes


def install(plan: ServicePlan, *, dry_run: bool) -> ServiceResult:
    """Write ``plan.path`` (atomically) and enable + start the service.

    systemd: ``systemctl --user daemon-reload`` then ``enable --now <unit>`` (plus ``restart``
    when an existing, different unit was replaced). launchd: ``launchctl bootout`` (only when
    replacing; allowed to fail), ``enable`` and ``bootstrap gui/<uid> <plist>``; the log folder
    is created. ``dry_run`` touches nothing and runs nothing. Never raises for a missing or
    unreachable service manager (see :attr:`ServiceResult.todo`); OSError from writing the
    file propagates.
    """
    before = None if dry_run else _read_or_none(plan.path)
    replacing = before is not None and before != plan.content
    if plan.kind == "systemd":
        steps = [_Step(_systemctl("daemon-reload")),
                 _Step(_systemctl("enable", "--now", plan.name))]
        if replacing:
            steps.append(_Step(_systemctl("restart", plan.name)))
    else:
        steps = [
            _Step(("launchctl", "enable", plan.launchd_target)),
            _Step(("launchctl", "bootstrap", plan.launchd_domain, str(plan.path))),
        ]
        if replacing or (dry_run and plan.path.exists()):
            steps.insert(0, _Step(("launchctl", "bootout", plan.launchd_target), may_fail=True))
    changed: list[Path] = []
    if not dry_run:
        if before != plan.content:
            write_bytes_atomic(plan.path, plan.content, mode=0o644)
            changed.append(plan.path)
        if plan.log_dir is not None:
            plan.log_dir.mkdir(parents=True, exist_ok=True)
    outcomes, todo = _run_steps(steps, dry_run=dry_run)
    notes = _install_notes(plan)
    if todo:
        notes.insert(0, f"the {'unit' if plan.kind == 'systemd' else 'agent'} file is in "
                        f"place, but a service manager command failed or could not reach "
                        f"the manager (common in containers, su/sudo and some SSH sessions)")
    return ServiceResult("install", plan, dry_run, tuple(changed), tuple(outcomes),
                         tuple(todo), tuple(notes))


def _remove_systemd_links(plan: ServicePlan) -> list[Path]:
    """Remove ``*.wants/<unit>`` symlinks next to the unit (what ``disable`` would remove)."""
    removed: list[Path] = []
    for wants in plan.path.parent.glob("*.wants"):
        link = wants / plan.name  # dangling once the unit is gone: glob would not list it
        if link.is_symlink():
            link.unlink()
            removed.append(link)
    return removed


def uninstall(plan: ServicePlan, *, dry_run: bool) -> ServiceResult:
    """Stop and disable the service, then remove ``plan.path``.

    systemd: ``systemctl --user disable --now <unit>``, remove the file (and, when systemctl
    could not do it, the ``default.target.wants`` link), ``daemon-reload``. launchd:
    ``launchctl bootout gui/<uid>/<label>`` (allowed to fail: not loaded), remove the plist.
    Nothing is run when the file is absent. Never raises for a missing or unreachable service
    manager; OSError from removing the file propagates.
    """
    if not plan.path.exists():
        return ServiceResult("uninstall", plan, dry_run, (), (), (), ())
    changed: list[Path] = []
    if plan.kind == "systemd":
        disable = _Step(_systemctl("disable", "--now", plan.name))
        reload = _Step(_systemctl("daemon-reload"))
        if dry_run:
            outcomes, todo = _run_steps([disable, reload], dry_run=True)
        else:
            outcomes, todo = _run_steps([disable], dry_run=False)
            plan.path.unlink(missing_ok=True)
            changed.append(plan.path)
            if todo:  # systemctl could not disable: undo what `enable` did by hand
                changed += _remove_systemd_links(plan)
                outcomes.append(CommandSkipped(reload.argv, "an earlier command failed"))
                todo = [_shell(_systemctl("stop", plan.name)), _shell(reload.argv)]
            else:
                more, todo = _run_steps([reload], dry_run=False)
                outcomes += more
    else:
        bootout = _Step(("launchctl", "bootout", plan.launchd_target), may_fail=True)
        outcomes, todo = _run_steps([bootout], dry_run=dry_run)
        if not dry_run:
            if isinstance(outcomes[0], CommandSkipped):
                todo.append(_shell(bootout.argv))
            plan.path.unlink(missing_ok=True)
            changed.append(plan.path)
    return ServiceResult("uninstall", plan, dry_run, tuple(changed), tuple(outcomes),
                         tuple(todo), ())


def service_status(plan: ServicePlan) -> ServiceStatus:
    """Read ``plan.path`` and ask the service manager (``systemctl --user is-enabled`` and
    ``is-active``; ``launchctl print gui/<uid>/<label>``). Non-zero answers (``inactive``,
    not loaded) are reported, not raised."""
    on_disk = _read_or_none(plan.path)
    if plan.kind == "systemd":
        argvs = [_systemctl("is-enabled", plan.name), _systemctl("is-active", plan.name)]
    else:
        argvs = [("launchctl", "print", plan.launchd_target)]
    commands = tuple(_run(argv) for argv in argvs) if on_disk is not None else ()
    return ServiceStatus(plan, on_disk is not None, on_disk == plan.content, commands)
