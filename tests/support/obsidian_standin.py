#!/usr/bin/env python3
"""A STAND-IN for the Obsidian desktop app's CLI (Obsidian 1.12+), for dreamd's tests only.

It is not Obsidian and talks to no app: it implements the documented command syntax of
*Obsidian CLI* in Obsidian's help (``../shared/corpora/obsidian-help/en/Extending Obsidian/
Obsidian CLI.md``) directly against the files of the vault it is run in, so that tests can run
dreamd's real CLI transport as a real subprocess. Tests install it with :func:`install` as an
executable named ``obsidian`` (shebang: the test interpreter) in a temp bin folder put first
on PATH.

Syntax, as documented: an optional ``vault=<name>`` first, then the command; ``name=value``
parameters and bare-word flags; in ``content`` ``\\n`` means newline and ``\\t`` tab. The vault
is the working directory when it is a vault folder (holds ``.obsidian/``), else the "active"
vault named by ``OBSIDIAN_STANDIN_ACTIVE_VAULT`` (a folder), else the call fails.

Commands: ``version``; ``vault [info=name|path]``; ``create path=|name= content= [overwrite]``
(writes the file in place, as Obsidian's file adapter does; without ``overwrite`` an existing
file is an error); ``read path=|file=``; ``delete path=|file= [permanent]`` (else to
``.trash/``); ``move path=|file= to=<folder or path>``; ``property:set name= value=
[type=] path=|file=`` (re-serialises the whole frontmatter through a YAML dump, as the real
one rewrites it — the reason dreamd never uses it); ``help``.

Knobs, for tests: ``OBSIDIAN_STANDIN_DIR`` names a folder where

- ``calls.jsonl`` gets one JSON line per call: ``{"argv": [...], "cwd": "...", "pid": n}``;
- ``hang``, when it exists, makes the commands it lists (whitespace-separated; empty: every
  command) sleep forever, with a child process that sleeps too (their pids go to
  ``hang.pids``);
- ``fail`` holding ``N [command ...]`` makes the first N calls of those commands (none listed:
  of every command) exit 1 with an error on stderr, counted in ``fail.count``;
- ``mangle``, when it exists, makes ``create`` write one extra newline at the end (a CLI that
  does not write what it was sent).
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

__all__ = [
    "APP_NAME",
    "COMMAND_NAME",
    "VERSION",
    "Knobs",
    "decode_content",
    "install",
    "main",
    "parse_args",
    "start_fake_app",
]

COMMAND_NAME = "obsidian"
APP_NAME = "obsidian"
VERSION = "1.12.7 (installer 1.12.7)"


class StandinError(Exception):
    """An error the real CLI would report; printed as ``Error: …`` with exit code 1."""


# ----------------------------------------------------------------------------- test helpers


def install(bin_dir: Path) -> Path:
    """Write this stand-in as ``bin_dir/obsidian`` (shebang: the running interpreter, mode
    0o755); returns its path. Put ``bin_dir`` first on PATH to make it *the* ``obsidian``."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    source = Path(__file__).read_text(encoding="utf-8")
    if source.startswith("#!"):
        source = source.split("\n", 1)[1]
    target = bin_dir / COMMAND_NAME
    target.write_text(f"#!{sys.executable}\n{source}", encoding="utf-8")
    target.chmod(0o755)
    return target


def start_fake_app(folder: Path) -> subprocess.Popen[bytes]:
    """Start a long-lived process named ``obsidian`` (a copy of ``sleep`` under that name, so
    the process list shows an Obsidian app running); the caller kills and waits for it."""
    sleep = shutil.which("sleep")
    assert sleep is not None, "needs a sleep executable"
    folder.mkdir(parents=True, exist_ok=True)
    app = folder / APP_NAME
    shutil.copy2(sleep, app)
    return subprocess.Popen([str(app), "3600"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Knobs:
    """The test side of the knobs folder (``OBSIDIAN_STANDIN_DIR``): set knobs, read calls."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def calls(self) -> list[list[str]]:
        """argv of every call so far (without the program), oldest first."""
        log = self.folder / "calls.jsonl"
        if not log.exists():
            return []
        return [json.loads(line)["argv"]
                for line in log.read_text(encoding="utf-8").splitlines() if line]

    def created(self) -> list[str]:
        """The ``path=`` of every ``create`` call, oldest first."""
        return [dict(a.partition("=")[::2] for a in argv[1:] if "=" in a).get("path", "")
                for argv in self.calls() if argv and argv[0] == "create"]

    def last_content(self, path: str) -> str | None:
        """The decoded ``content=`` of the last ``create`` of ``path``."""
        found = None
        for argv in self.calls():
            params = dict(a.partition("=")[::2] for a in argv[1:] if "=" in a)
            if argv and argv[0] == "create" and params.get("path") == path:
                found = decode_content(params.get("content", ""))
        return found

    def fail(self, count: int, *commands: str) -> None:
        """Fail the first ``count`` calls of ``commands`` (none: of every command)."""
        (self.folder / "fail").write_text(" ".join([str(count), *commands]), encoding="ascii")
        (self.folder / "fail.count").unlink(missing_ok=True)

    def hang(self, *commands: str) -> None:
        """Hang (forever) on ``commands`` (none: on every command)."""
        (self.folder / "hang").write_text(" ".join(commands), encoding="ascii")

    def mangle(self) -> None:
        """Make ``create`` write one newline more than it was sent."""
        (self.folder / "mangle").touch()

    def hang_pids(self) -> list[int]:
        """Pids of hanging calls and of the children they started."""
        pids = self.folder / "hang.pids"
        return [int(p) for p in pids.read_text(encoding="ascii").split()] if pids.exists() \
            else []


# ----------------------------------------------------------------------------- parsing


def parse_args(argv: list[str]) -> tuple[str | None, str, dict[str, str], set[str]]:
    """``argv`` (without the program) → ``(vault, command, params, flags)``: an optional
    leading ``vault=<name>``, the command, then ``name=value`` parameters (split at the first
    ``=``) and bare-word flags. A missing command is ``help``."""
    args = list(argv)
    vault = None
    if args and args[0].startswith("vault="):
        vault = args.pop(0).partition("=")[2]
    command = args.pop(0) if args else "help"
    params: dict[str, str] = {}
    flags: set[str] = set()
    for arg in args:
        key, eq, value = arg.partition("=")
        if eq and key:
            params[key] = value
        else:
            flags.add(arg)
    return vault, command, params, flags


def decode_content(value: str) -> str:
    """``\\n`` → newline, ``\\t`` → tab (the only escapes the help page documents)."""
    return re.sub(r"\\([nt])", lambda m: "\n" if m.group(1) == "n" else "\t", value)


# ----------------------------------------------------------------------------- the vault


def _is_vault(folder: Path) -> bool:
    return (folder / ".obsidian").is_dir()


def find_vault(cwd: Path, name: str | None) -> Path:
    """The vault a call acts on (module docstring)."""
    candidates = [cwd] if _is_vault(cwd) else []
    active = os.environ.get("OBSIDIAN_STANDIN_ACTIVE_VAULT")
    if active and _is_vault(Path(active)):
        candidates.append(Path(active))
    if name is not None:
        for candidate in candidates:
            if candidate.name == name:
                return candidate.resolve()
        raise StandinError(f'Vault "{name}" not found.')
    if not candidates:
        raise StandinError("No vault is open.")
    return candidates[0].resolve()


def _target(vault: Path, params: dict[str, str], *, must_exist: bool) -> Path:
    """The file named by ``path=`` (exact, from the vault root) or ``file=`` (by name, as a
    wikilink resolves: case-insensitive, shortest path)."""
    if "path" in params:
        rel = params["path"].strip("/")
        target = (vault / rel).resolve()
        if not target.is_relative_to(vault):
            raise StandinError(f'Invalid path "{params["path"]}".')
    elif "file" in params:
        wanted = params["file"].lower()
        if not wanted.endswith(".md"):
            wanted += ".md"
        found = sorted((p for p in vault.rglob("*.md")
                        if p.name.lower() == wanted and ".obsidian" not in p.parts),
                       key=lambda p: (len(p.parts), str(p)))
        if not found:
            raise StandinError(f'File "{params["file"]}" not found.')
        target = found[0]
    else:
        raise StandinError("No active file.")
    if must_exist and not target.is_file():
        raise StandinError(f'File "{target.relative_to(vault).as_posix()}" not found.')
    return target


# ----------------------------------------------------------------------------- commands


def _create(vault: Path, params: dict[str, str], flags: set[str], knobs: Path | None) -> str:
    if "path" in params:
        target = _target(vault, params, must_exist=False)
    else:
        name = params.get("name", "Untitled")
        target = vault / (name if name.endswith(".md") else f"{name}.md")
    rel = target.relative_to(vault).as_posix()
    existed = target.exists()
    if existed and "overwrite" not in flags:
        raise StandinError(f'File "{rel}" already exists.')
    text = decode_content(params.get("content", ""))
    if knobs is not None and (knobs / "mangle").exists():
        text += "\n"
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", encoding="utf-8", newline="") as handle:  # in place, as Obsidian
        handle.write(text)
    return f"{'Overwrote' if existed else 'Created'}: {rel}"


def _read(vault: Path, params: dict[str, str]) -> str:
    return _target(vault, params, must_exist=True).read_text(encoding="utf-8")


def _delete(vault: Path, params: dict[str, str], flags: set[str]) -> str:
    target = _target(vault, params, must_exist=True)
    rel = target.relative_to(vault).as_posix()
    if "permanent" in flags:
        target.unlink()
    else:
        trash = vault / ".trash"
        trash.mkdir(exist_ok=True)
        target.replace(trash / target.name)
    return f"Deleted: {rel}"


def _move(vault: Path, params: dict[str, str]) -> str:
    source = _target(vault, params, must_exist=True)
    if "to" not in params:
        raise StandinError("Missing required parameter: to")
    to = params["to"].strip("/")
    destination = vault / to if to.endswith(".md") else vault / to / source.name
    if destination.exists():
        raise StandinError(f'"{destination.relative_to(vault).as_posix()}" already exists.')
    destination.parent.mkdir(parents=True, exist_ok=True)
    source.replace(destination)
    return f"Moved: {source.relative_to(vault).as_posix()} -> " \
           f"{destination.relative_to(vault).as_posix()}"


def _typed(value: str, kind: str | None) -> object:
    if kind == "number":
        return float(value) if "." in value else int(value)
    if kind == "checkbox":
        return value.lower() == "true"
    if kind == "list":
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


def _property_set(vault: Path, params: dict[str, str]) -> str:
    import yaml  # the test environment's PyYAML: a dump, like the app's own serialiser

    for key in ("name", "value"):
        if key not in params:
            raise StandinError(f"Missing required parameter: {key}")
    target = _target(vault, params, must_exist=True)
    text = target.read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?\n)?---\n", text, re.DOTALL)
    properties = (yaml.safe_load(match.group(1) or "") or {}) if match else {}
    body = text[match.end():] if match else text
    properties[params["name"]] = _typed(params["value"], params.get("type"))
    block = yaml.safe_dump(properties, sort_keys=False, allow_unicode=True)
    with target.open("w", encoding="utf-8", newline="") as handle:
        handle.write(f"---\n{block}---\n{body}")
    return f"Set {params['name']} on {target.relative_to(vault).as_posix()}"


def _vault_info(vault: Path, params: dict[str, str]) -> str:
    info = {"name": vault.name, "path": str(vault),
            "files": str(sum(1 for _ in vault.rglob("*.md")))}
    if "info" in params:
        if params["info"] not in info:
            raise StandinError(f'Unknown info "{params["info"]}".')
        return info[params["info"]]
    return "\n".join(f"{key}\t{value}" for key, value in info.items())


HELP = """Commands (stand-in): version, vault, create, read, delete, move, property:set, help"""


def run(argv: list[str], cwd: Path, knobs: Path | None) -> str:
    """Run one call; returns what it prints. Raises :class:`StandinError`."""
    vault_name, command, params, flags = parse_args(argv)
    if command == "help":
        return HELP
    if command == "version":
        return VERSION
    vault = find_vault(cwd, vault_name)
    if command == "vault":
        return _vault_info(vault, params)
    if command == "create":
        return _create(vault, params, flags, knobs)
    if command == "read":
        return _read(vault, params)
    if command == "delete":
        return _delete(vault, params, flags)
    if command == "move":
        return _move(vault, params)
    if command == "property:set":
        return _property_set(vault, params)
    raise StandinError(f'Command "{command}" not found.')


# ----------------------------------------------------------------------------- knobs


def _listed(knob: Path, command: str) -> bool:
    words = knob.read_text(encoding="utf-8").split()
    return not words or command in words


def _should_fail(knobs: Path, command: str) -> bool:
    knob = knobs / "fail"
    if not knob.exists():
        return False
    words = knob.read_text(encoding="utf-8").split()
    count, commands = int(words[0]) if words else 0, words[1:]
    if commands and command not in commands:
        return False
    counter = knobs / "fail.count"
    done = int(counter.read_text(encoding="ascii")) if counter.exists() else 0
    if done >= count:
        return False
    counter.write_text(str(done + 1), encoding="ascii")
    return True


def _hang(knobs: Path) -> None:
    """Sleep forever, with a child that sleeps too (as an app the CLI started might): both
    pids go to ``hang.pids``, so a test can tell that a timeout killed the whole group."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"],
                             stdin=subprocess.DEVNULL)
    with (knobs / "hang.pids").open("a", encoding="ascii") as pids:
        pids.write(f"{os.getpid()} {child.pid}\n")
    while True:
        time.sleep(3600)


def main(argv: list[str]) -> int:
    """The executable: log the call, apply the knobs, run it; exit 0, or 1 with ``Error: …``
    on stderr."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(encoding="utf-8")
    cwd = Path.cwd()
    folder = os.environ.get("OBSIDIAN_STANDIN_DIR")
    knobs = Path(folder) if folder else None
    command = parse_args(argv)[1]
    if knobs is not None:
        with (knobs / "calls.jsonl").open("a", encoding="utf-8") as log:
            log.write(json.dumps({"argv": argv, "cwd": str(cwd), "pid": os.getpid()},
                                 ensure_ascii=False) + "\n")
        if (knobs / "hang").exists() and _listed(knobs / "hang", command):
            _hang(knobs)
        if _should_fail(knobs, command):
            print("Error: Unable to connect to Obsidian (stand-in: told to fail).",
                  file=sys.stderr)
            return 1
    try:
        output = run(argv, cwd, knobs)
    except StandinError as error:
        print(f"Error: {error}", file=sys.stderr)
        return 1
    if command == "read":
        sys.stdout.write(output)
    else:
        print(output)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
