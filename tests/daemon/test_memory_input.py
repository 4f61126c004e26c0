"""What a memory's text may be, on every path that writes one: ``dreamd remember`` (an
argument, or stdin with ``-``), MCP ``memory_write`` and the service under both.

The CLI cases run ``python -m daemon`` as a user does (a vault never synced: nothing loads the
model). The service and MCP cases use the token-hash FAKE embedder (conftest), which also
counts what was embedded: they are about what is refused and when, not about meaning.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
import typer
from mcp import Client

from ccb.parse import parse_note
from config.errors import MemoryTooLargeError
from daemon import client
from daemon.app import App
from daemon.cli import app as cli_app
from daemon.mcp_server import build_server

REPO = Path(__file__).resolve().parents[2]
Builder = Callable[..., tuple[App, Any]]
#: How long the MCP test keeps the tool lock, in seconds, as a long call would.
BUSY_S = 10.0


def dreamd(*args: str | bytes, stdin: bytes | None = None,
           cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "daemon", *args], cwd=cwd, input=stdin,
                          capture_output=True, timeout=300, check=False)
    return subprocess.CompletedProcess(done.args, done.returncode,
                                       done.stdout.decode("utf-8", "replace"),
                                       done.stderr.decode("utf-8", "replace"))


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    """stderr, asserted to be one line from dreamd and no traceback."""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dreamd: "), done.stderr
    return lines[0]


@pytest.fixture
def small_vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    (vault / "Memory").mkdir(parents=True)
    (vault / "Welcome.md").write_text("# Welcome\n", encoding="utf-8")
    return vault


def memory_bodies(vault: Path) -> list[str]:
    return sorted(parse_note(p.name, p.read_bytes()).body for p in (vault / "Memory").glob("*.md")
                  if p.name != "MEMORY.md")


def test_remember_dash_reads_the_text_from_stdin(small_vault: Path) -> None:
    text = "The kiln shelf paper is in drawer three.\nReplace it after ten firings.\n"
    done = dreamd("remember", "-", "--vault", str(small_vault), stdin=text.encode())
    assert done.returncode == 0, done.stderr
    assert memory_bodies(small_vault) == [text]  # the text, never "-"
    # the text may be given as an option's value "-" too: only the argument reads stdin
    named = dreamd("remember", "--subject", "-", "The studio closes at six.", "--vault",
                   str(small_vault), stdin=b"not this")
    assert named.returncode == 0, named.stderr
    assert "The studio closes at six.\n" in memory_bodies(small_vault)
    assert not any("not this" in body for body in memory_bodies(small_vault))


@pytest.mark.parametrize("stdin", [b"", b"  \n\t\n"])
def test_remember_dash_with_nothing_on_stdin_is_refused(small_vault: Path, stdin: bytes) -> None:
    done = dreamd("remember", "-", "--vault", str(small_vault), stdin=stdin)
    assert done.returncode == 2
    assert "nothing on stdin" in one_line(done)
    assert memory_bodies(small_vault) == []


def test_the_help_says_how_to_give_the_text_on_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # one line per option
    done = dreamd("remember", "--help")
    assert done.returncode == 0
    assert "- reads it from stdin" in " ".join(done.stdout.split())


@pytest.mark.parametrize(("args", "stdin", "said"), [
    (("🎉🎉",), None, "has no words"),
    (("  !!! → …  ",), None, "has no words"),
    (("a" * 126_000,), None, "126,000 characters, more than memory.max_chars (65,536)"),
    (("--set", "memory.max_chars=40", "remember", "The glaze for the blue bowls is celadon."
      " Fire it to cone ten."), None, "more than memory.max_chars (40)"),
    ((os.fsencode(os.fsdecode(b"caf\xe9 opens at nine")),), None, "byte 0xe9 at character 4"),
    (("-",), "🎉\n".encode(), "has no words"),
    (("-",), b"x" * 300_000, "300,000 characters"),
    (("-",), b"caf\xe9 opens at nine", "not UTF-8 text (byte 0xe9 at character 4)"),
])
def test_bad_memory_text_is_one_line_exit_2_and_nothing_written(
    small_vault: Path, args: tuple[str | bytes, ...], stdin: bytes | None, said: str,
) -> None:
    argv: list[str | bytes] = list(args)
    if argv[0] == "--set":
        argv += ["--vault", str(small_vault)]
    else:
        argv = ["remember", *argv, "--vault", str(small_vault)]
    done = dreamd(*argv, stdin=stdin)
    assert done.returncode == 2, done.stderr
    line = one_line(done)
    assert said in line and "nothing was written" in line
    assert memory_bodies(small_vault) == []
    assert not (small_vault / "Memory" / "MEMORY.md").exists()


@pytest.mark.parametrize("text", ["The glaze log. " * 100, "釉料记录。" * 300, "🎉 🎉\n"])
def test_a_memory_text_refused_is_refused_before_the_index_is_opened(
        small_vault: Path, text: str) -> None:
    """Refused before LanceDB or numpy is imported, let alone the model loaded (it took 9 s
    on a busy machine, where "before it is embedded" reads as at once)."""
    script = ("import sys\nfrom daemon.cli import main\ntry:\n    main()\n"
              "except SystemExit as stop:\n    code = stop.code\n"
              "print(code, 'lancedb' in sys.modules, 'numpy' in sys.modules)\n")
    done = subprocess.run(
        [sys.executable, "-c", script, "--set", "memory.max_chars=1000", "remember", "-",
         "--vault", str(small_vault)], input=text,
        capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[2])
    assert done.stdout.split() == ["2", "False", "False"], (done.stdout, done.stderr)
    assert "nothing was written" in done.stderr and memory_bodies(small_vault) == []


def test_chinese_and_japanese_memories_have_words(small_vault: Path) -> None:
    for text in ("用户住在杭州。", "東京に住んでいる。"):
        done = dreamd("remember", text, "--vault", str(small_vault))
        assert done.returncode == 0, done.stderr
    assert memory_bodies(small_vault) == sorted(["用户住在杭州。\n", "東京に住んでいる。\n"])


# --------------------------------------------------------------------------- service, MCP


@pytest.fixture
def synced(vault: Path, make_app: Builder) -> tuple[App, Any, Path]:
    application, fake = make_app(vault)
    application.sync()
    return application, fake, vault


def test_a_huge_memory_is_refused_before_anything_is_embedded(
    synced: tuple[App, Any, Path],
) -> None:
    application, fake, vault = synced
    before = {p.name: p.read_bytes() for p in (vault / "Memory").iterdir()}
    embedded = fake.embedded
    with pytest.raises(MemoryTooLargeError, match=r"memory\.max_chars"):
        application.memories().remember("The glaze log. " * 70_000, type="project")
    assert fake.embedded == embedded  # refused before the draft was embedded or judged
    assert {p.name: p.read_bytes() for p in (vault / "Memory").iterdir()} == before


def test_a_fact_merged_into_a_memory_may_not_grow_it_past_the_limit(
    synced: tuple[App, Any, Path], make_app: Builder,
) -> None:
    application, _fake, vault = synced
    first = application.memories().remember(
        "Always add a 30 s timeout to the billing API client. Retry twice on a 503 from it.",
        type="feedback", subject="billing.timeout")
    kept = (vault / first.path).read_bytes()
    strict, _ = make_app(vault, **{"memory.max_chars": 110})
    with pytest.raises(MemoryTooLargeError) as refused:
        strict.memories().remember("Always add a 30 s timeout to the billing API client. "
                                   "Log every retry with the request id.",
                                   type="feedback", subject="billing.timeout")
    assert f"{first.path} with this fact merged in" in str(refused.value)
    assert "more than memory.max_chars (110)" in str(refused.value)
    assert (vault / first.path).read_bytes() == kept


def test_mcp_memory_write_refuses_at_once_even_while_another_call_runs(
    synced: tuple[App, Any, Path],
) -> None:
    """A 210 KB write is refused without waiting for the tool lock (held here, as by a long
    call) and without embedding anything; a memory without words likewise."""
    application, fake, vault = synced
    before = sorted(p.name for p in (vault / "Memory").iterdir())
    busy = threading.Lock()
    embedded = fake.embedded

    async def calls() -> list[Any]:
        async with Client(build_server(application, lock=busy)) as session:
            return [await session.call_tool("memory_write", {"text": text})
                    for text in ("x" * 210_000, "🎉🎉")]

    busy.acquire()
    released = threading.Timer(BUSY_S, busy.release)  # a call waiting for it ends, late
    released.start()
    started = time.monotonic()
    big, wordless = anyio.run(calls)
    elapsed = time.monotonic() - started
    released.join()
    assert elapsed < BUSY_S / 2, f"the refusal waited {elapsed:.1f} s for the tool lock"
    assert big.is_error and "210,000 characters, more than memory.max_chars (65,536)" in \
        big.content[0].text
    assert wordless.is_error and "has no words" in wordless.content[0].text
    assert fake.embedded == embedded
    assert sorted(p.name for p in (vault / "Memory").iterdir()) == before


# --------------------------------------------------------------------------- client


def test_the_client_knows_which_remember_reads_stdin() -> None:
    def reads(*argv: str) -> bool:
        invocation = client.parse_invocation(argv)
        assert invocation is not None
        return invocation.reads_stdin

    assert reads("remember", "-")
    assert reads("remember", "--type", "user", "-", "--vault", "/v")
    assert reads("remember", "--pin", "-t", "user", "--", "-")
    assert not reads("remember", "--name", "-", "text")
    assert not reads("remember", "--name=-", "text")
    assert not reads("remember", "text", "--subject", "-")
    assert not reads("search", "-")
    assert reads("context", "--hook")


def test_the_client_knows_every_option_of_remember_that_takes_a_value() -> None:
    command = typer.main.get_command(cli_app).commands["remember"]  # type: ignore[attr-defined]
    valued = {name for param in command.params if not getattr(param, "is_flag", False)
              and param.param_type_name == "option" for name in param.opts}
    assert valued == client.REMEMBER_VALUE_OPTIONS
