"""The README's Development section: how to build the 100,000-note vault and run the scale
bench, and how to run the S3 test. The commands are run as written, each stopped before its
work (hours of embedding, 100,000 files) by an input it refuses only after reading its
options: a folder that is not empty, a row that does not exist."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _development() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    return readme.split("\n## Development\n", 1)[1].split("\n## ", 1)[0]


def _bench_commands() -> dict[str, list[str]]:
    """The scale block's commands by script name, their arguments after the script."""
    section = _development().split("**A 100,000-note vault and the scale bench.**", 1)[1]
    block = section.split("```console\n", 1)[1].split("\n```", 1)[0]
    commands = {}
    for line in block.splitlines():
        words = shlex.split(line.removeprefix("$ "))
        assert words[0] == ".venv/bin/python" and words[1].startswith("bench/"), line
        commands[Path(words[1]).stem] = words[1:]
    return commands


def _run(words: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *words], cwd=REPO, capture_output=True, text=True,
                          timeout=120, check=False)


def test_the_readme_builds_the_big_vault_and_runs_the_scale_bench(tmp_path: Path) -> None:
    commands = _bench_commands()
    assert set(commands) == {"big_vault", "scale_bench"}
    big = commands["big_vault"]
    assert big[big.index("--notes") + 1] == "100000"
    folder = Path(big[1])
    assert folder.is_absolute()
    taken = tmp_path / "big"
    taken.mkdir()
    (taken / "mine.md").write_text("mine", encoding="utf-8")
    refused = _run([big[0], str(taken), *big[2:]])
    assert refused.returncode != 0 and "is not empty" in refused.stderr, refused.stderr
    assert (taken / "mine.md").read_text(encoding="utf-8") == "mine"
    scale = commands["scale_bench"]
    assert scale[scale.index("--vault") + 1] == str(folder)  # the vault the first one wrote
    stopped = _run([*scale, "--rows", "no-such-row"])
    assert stopped.returncode == 2, stopped.stderr
    assert "--rows: no row no-such-row" in stopped.stderr, stopped.stderr


def test_the_readme_runs_the_s3_test_against_moto_on_loopback() -> None:
    section = _development()
    command = re.search(r"`(\.venv/bin/python -m pytest [^`]*test_s3_store\.py)`", section)
    assert command is not None, section
    words = shlex.split(command.group(1))
    test_file = REPO / words[-1]
    assert test_file.is_file()
    assert "s3_server" in test_file.read_text(encoding="utf-8")
    server = (REPO / "tests/support/s3_server.py").read_text(encoding="utf-8")
    assert "ThreadedMotoServer" in server and "127.0.0.1" in server
    collected = _run([*words[1:], "--collect-only", "-q", "-p", "no:cacheprovider"])
    assert collected.returncode == 0, collected.stdout + collected.stderr
    assert re.search(r"\b\d+ tests? collected", collected.stdout), collected.stdout
