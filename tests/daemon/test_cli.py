"""The `dreamd` command as a user runs it: real subprocesses, the real embedding model."""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from datetime import UTC
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
DREAMD = Path(sys.executable).with_name("dreamd")


def run(*args: str, cwd: Path = REPO, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(DREAMD), *args], cwd=cwd, capture_output=True, text=True, check=False,
        env=os.environ.copy(), timeout=300,
    )
    if check and done.returncode != 0:
        pytest.fail(f"dreamd {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return done


def readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```sh\n(.+?)\n```", text)


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    target = tmp_path / "vault_example"
    shutil.copytree(REPO / "vault_example", target, symlinks=True)
    return target


@pytest.mark.slow
def test_sync_then_search_finds_english_and_chinese_notes(demo: Path) -> None:
    report = json.loads(run("sync", str(demo), "--json").stdout)
    assert report["added"] == report["files_total"] > 10
    assert report["chunks_embedded"] > 0

    hits = json.loads(run("search", "sourdough starter hydration", "--json",
                          "--vault", str(demo)).stdout)
    assert hits[0]["path"] == "Baking/Sourdough starter.md"
    assert hits[0]["why"] and hits[0]["snippet"]

    hits = json.loads(run("search", "睡眠", "--json", "--vault", str(demo)).stdout)
    assert hits[0]["path"] == "关于睡眠的笔记.md"

    hits = json.loads(run("search", "how should I sleep better", "--json", "-n", "5",
                          "--vault", str(demo)).stdout)
    # cross-lingual: only the vector side can find it; it must be the vector's first pick
    chinese = next(h for h in hits if h["path"] == "关于睡眠的笔记.md")
    assert any(why.startswith("#1 by meaning") for why in chinese["why"])

    # the only indexed vault is found without naming it
    hits = json.loads(run("search", "feedback", "--type", "feedback", "--json").stdout)
    assert hits and {h["memory_type"] for h in hits} == {"feedback"}

    status = json.loads(run("status", "--json", "--vault", str(demo)).stdout)
    assert status["counts"]["notes"] > 10 and status["last_sync"]

    again = json.loads(run("sync", str(demo), "--json").stdout)
    assert again["chunks_embedded"] == 0 and again["unchanged"] == report["files_total"]


@pytest.mark.slow
def test_readme_first_command_indexes_the_demo_and_answers(tmp_path: Path) -> None:
    """Run the README's setup command, with the venv part replaced by this environment."""
    first = readme_commands()[0]
    steps = [s.strip() for s in first.split("&&")]
    assert steps[0].startswith("python3 -m venv .venv")
    assert steps[1].startswith(".venv/bin/pip install -e .")
    dreamd_steps = steps[2:]
    assert any("sync vault_example" in s for s in dreamd_steps)
    outputs = []
    for step in dreamd_steps:
        argv = shlex.split(step)
        assert argv[0] == ".venv/bin/dreamd"
        outputs.append(run(*argv[1:]).stdout)
    assert "Sourdough starter" in outputs[-1]


def test_readme_test_command_is_what_ci_runs() -> None:
    second = readme_commands()[1]
    assert "pytest" in second
    assert second in (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_errors_are_one_line_with_an_exit_code(tmp_path: Path) -> None:
    missing = run("search", "x", "--vault", str(tmp_path / "nope"), check=False)
    assert missing.returncode == 4
    assert missing.stderr.startswith("dreamd: search ") and "Traceback" not in missing.stderr

    bad = run("--set", "sync.chunk_max_chars=lots", "sync", str(tmp_path), check=False)
    assert bad.returncode == 3
    assert "sync.chunk_max_chars" in bad.stderr and "Traceback" not in bad.stderr

    no_vault = run("search", "x", check=False)
    assert no_vault.returncode == 3 and "no vault given" in no_vault.stderr


def test_init_writes_a_config_that_validates(tmp_path: Path, demo: Path) -> None:
    config = tmp_path / "dreamd.toml"
    run("--config", str(config), "init", str(demo))
    assert config.is_file()
    assert str(demo.resolve()) in run("--config", str(config), "config", "show").stdout
    assert run("--config", str(config), "config", "validate").stdout.startswith("ok:")
    again = run("--config", str(config), "init", str(demo), check=False)
    assert again.returncode == 3 and "--force" in again.stderr
    assert run("--config", str(config), "config", "path").stdout.strip() == str(config)


def test_config_show_names_the_source_of_every_value(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        "[default]\nembedding.batch_size = 16\n[production]\ncache.ttl_hours = 48\n",
        encoding="utf-8",
    )
    rows = json.loads(run("--config", str(config), "--env", "production",
                          "--set", "sync.debounce_ms=20", "config", "show", "--json").stdout)
    by_key = {row["key"]: row for row in rows}
    assert by_key["embedding.batch_size"]["value"] == 16
    assert by_key["embedding.batch_size"]["source"].endswith("[default]")
    assert by_key["cache.ttl_hours"]["source"].endswith("[production]")
    assert by_key["sync.debounce_ms"] == {"key": "sync.debounce_ms", "value": 20, "source": "cli"}
    assert by_key["fusion.max_tokens"]["source"] == "default"


def test_config_validate_names_key_and_file(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[default]\nfusion.max_tokens = -5\n", encoding="utf-8")
    done = run("--config", str(config), "config", "validate", check=False)
    assert done.returncode == 3
    assert "fusion.max_tokens" in done.stderr and str(config) in done.stderr

    missing = run("--config", str(config), "--env", "staging", "config", "validate", check=False)
    assert missing.returncode == 3 and "staging" in missing.stderr


def test_bad_arguments_are_refused_before_any_work(tmp_path: Path) -> None:
    empty = run("search", "   ", check=False)
    assert empty.returncode == 2 and "the query is empty" in empty.stderr
    bogus = run("search", "x", "--type", "bogus", check=False)
    assert bogus.returncode == 2 and "not a memory type" in bogus.stderr
    note = tmp_path / "a-file.md"
    note.write_text("# not a vault\n", encoding="utf-8")
    status = run("status", "--vault", str(note), check=False)
    assert status.returncode == 4 and "not a folder" in status.stderr


def test_piped_status_is_one_whole_line_per_row() -> None:
    import io

    from rich.console import Console

    from daemon import render
    from daemon.status import StatusReport

    buffer = io.StringIO()
    long_store = "/very/long/path/" + "x" * 120 + "/lancedb"
    render.print_status(Console(file=buffer, width=80), StatusReport(
        vault="/v", store=long_store, state_dir="/s", last_sync=None,
        last_sync_duration_s=None, counts={"unresolved_links": 3},
        dream={"last": None, "due": True, "reason": "forced: never dreamed", "auto": True,
               "sessions": {"mcp": 1, "transcripts": 0, "edit_bursts": 2}}), UTC)
    lines = buffer.getvalue().splitlines()
    assert f"index: {long_store}" in lines
    assert "unresolved links: 3" in lines
    assert any(line.startswith("next dream: due: forced: never dreamed") for line in lines)


def test_remember_into_a_mistyped_vault_path_creates_nothing(tmp_path: Path) -> None:
    """A typo in --vault is an error (exit 4, one line), never a new vault (found by a
    new-user trial: the folder, its memory and its MEMORY.md were created)."""
    missing = tmp_path / "Notse"
    done = run("remember", "--vault", str(missing), "hello", check=False)
    assert done.returncode == 4, done.stderr
    assert "vault folder is missing" in done.stderr and "Traceback" not in done.stderr
    assert not missing.exists()


def test_ctrl_c_while_the_daemon_answers_is_a_line_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from daemon import entry

    def interrupted(_argv: object) -> tuple[int | None, str | None]:
        raise KeyboardInterrupt

    monkeypatch.setattr(entry, "ask_daemon", interrupted)
    monkeypatch.setattr(sys, "argv", ["dreamd", "sync"])
    with pytest.raises(SystemExit) as stopped:
        entry.main()
    assert stopped.value.code == 130
    assert capsys.readouterr().err.startswith("dreamd: interrupted")


@pytest.mark.slow
def test_a_credential_written_by_hand_never_leaves_dreamd(demo: Path) -> None:
    """Hand-written passwords (English and Chinese) in a memory and a note → sync → search,
    --json, check, doctor show file and line, never the secret; nothing in the state folder
    holds it but the version history (the files' bytes, kept for rollback)."""
    secrets = ["S3cr3t-Passw0rd-xyz", "Abc12345xyz!"]
    (demo / "Memory" / "staging-login.md").write_text(
        "---\nname: Staging login\ndescription: How to log in to the staging server\n"
        f"type: user\n---\nThe staging server is staging.example.org, user deploy.\n\n"
        f"password: {secrets[0]}\n", encoding="utf-8")
    (demo / "仓库数据库.md").write_text(
        f"# 仓库数据库\n\n仓库的数据库在地下室的旧机架上。\n数据库密码：{secrets[1]}\n",
        encoding="utf-8")

    def clean(text: str) -> str:
        assert not [s for s in secrets if s in text], text
        return text

    synced = clean(run("sync", str(demo)).stdout)
    assert "Memory/staging-login.md: credential:" in synced and "line 8 (password=…)" in synced
    found = clean(run("search", "staging server password", "--vault", str(demo)).stdout)
    assert "staging-login.md" in found and "[credential withheld]" in found
    hits = json.loads(clean(run("search", "数据库密码", "--json", "--vault", str(demo)).stdout))
    assert any(h["path"] == "仓库数据库.md" and "[credential withheld]" in h["snippet"]
               for h in hits)
    for query in secrets:
        clean(run("search", query, "--json", "--vault", str(demo)).stdout)

    check = run("check", "--vault", str(demo), check=False)
    assert check.returncode == 1
    clean(check.stdout + check.stderr)
    assert "credential: Memory/staging-login.md" in check.stdout
    assert "line 4 (密码 …)" in check.stdout and "secret manager" in check.stdout
    items = json.loads(run("check", "--json", "--vault", str(demo), check=False).stdout)["items"]
    credentials = [i for i in items if i["kind"] == "credential"]
    assert {i["drift"]["path"] for i in credentials} == {"Memory/staging-login.md", "仓库数据库.md"}
    assert {"line": 8, "kind": "password", "preview": "password=…"} in \
        credentials[0]["drift"]["found"] + credentials[1]["drift"]["found"]

    doctor = run("doctor", "--vault", str(demo))
    assert "warn credentials: 2 files have a credential written by hand" in clean(doctor.stdout)

    data_dir = Path(os.environ["DREAMD_STORAGE__DATA_DIR"])
    holding = [p.relative_to(data_dir).as_posix() for p in data_dir.rglob("*") if p.is_file()
               and any(s.encode() in p.read_bytes() for s in secrets)]
    assert holding, "the version history keeps the memory's bytes"
    assert all("/versions/" in p or "/versions.lance/" in p for p in holding), holding


def test_forget_finishes_a_memory_whose_file_is_already_gone(demo: Path) -> None:
    """A forget killed after the file went (a crash, kill -9), or a memory file deleted by
    hand: `dreamd forget` run again erases what dreamd still holds of it (found by
    ``bench/soak.py``: the second run said "no memory has that id or name")."""
    marker = "tangerine-halyard-4471"
    made = json.loads(run("remember", "--vault", str(demo), "--type", "reference", "--json",
                          f"The dinghy's halyard is labelled {marker}.").stdout)
    (demo / made["path"]).unlink()  # as a killed forget leaves it
    run("sync", str(demo))  # the deletion seen and recorded
    done = run("forget", "--vault", str(demo), "--yes", made["memory_id"])
    assert made["path"] in done.stdout and "version history" in done.stdout
    asked = run("forget", "--vault", str(demo), made["memory_id"], check=False)
    assert asked.returncode != 0 and "no memory has that id or name" in asked.stderr
    assert "Traceback" not in asked.stderr
    left = [p for root in (demo, Path(os.environ["DREAMD_STORAGE__DATA_DIR"]))
            for p in root.rglob("*")
            if p.is_file() and marker.encode() in p.read_bytes()]
    assert left == []


def test_check_fix_names_a_possible_pair_it_leaves_once_and_does_not_check_again(
        demo: Path) -> None:
    """A possible pair is the user's to settle: `check --fix` says so in one line, instead of
    listing the pair three times (report, "left", and a second check after no fix)."""
    run("sync", str(demo))
    run("remember", "--vault", str(demo), "--type", "user", "Swims on Tuesday, Thursday and "
        "Saturday.")
    run("remember", "--vault", str(demo), "--type", "user", "Swims on Tuesday and Thursday.")
    done = run("check", "--vault", str(demo), "--fix", check=False)
    assert done.returncode == 1
    assert "after the fix" not in done.stdout
    assert done.stdout.count("left for you: possible pair") == 1
    assert done.stdout.count("dreamd conflicts resolve") == 1


def test_status_and_check_take_the_vault_as_sync_does(demo: Path) -> None:
    """``dreamd status VAULT`` and ``dreamd check VAULT`` (what a new user types after
    ``dreamd sync VAULT``) are the same as with ``--vault``; two different vaults are
    refused without a traceback."""
    run("sync", str(demo))
    for command in ("status", "check"):
        plain = run(command, str(demo), "--json", check=False)
        named = run(command, "--vault", str(demo), "--json", check=False)
        assert plain.returncode == named.returncode == 0, (command, plain.stderr)
        assert json.loads(plain.stdout).keys() == json.loads(named.stdout).keys()
        refused = run(command, str(demo), "--vault", str(demo.parent), check=False)
        assert refused.returncode != 0 and "two vaults given" in refused.stderr, command
        assert "Traceback" not in refused.stderr
    assert str(demo.resolve()) in run("status", str(demo)).stdout


def test_sync_takes_the_vault_as_the_other_commands_do(demo: Path) -> None:
    """``sync --vault PATH`` is ``sync PATH`` (``run`` too); two different vaults are refused,
    nothing synced or started."""
    other = demo.parent / "other"
    other.mkdir()
    for command in ("sync", "run"):
        refused = run(command, str(demo), "--vault", str(other), check=False)
        assert refused.returncode != 0 and "two vaults given" in refused.stderr, command
        assert "Traceback" not in refused.stderr
    report = json.loads(run("sync", "--vault", str(demo), "--json").stdout)
    assert report["added"] == report["files_total"] > 10


@pytest.mark.slow
def test_search_prints_control_and_bidi_characters_as_escapes(tmp_path: Path) -> None:
    # a note and file names the terminal would act on: clear the screen, recolour, reorder
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "glaze.md").write_text(
        "# Glaze\nThe glaze recipe \x1b[2J\x1b[31m uses [red]cobalt[/red] oxide.\n",
        encoding="utf-8")
    (vault / "kiln\u202egpj.md").write_text("# Kiln\nThe kiln glaze log.\n", encoding="utf-8")
    (vault / "two\nlines glaze.md").write_text("# Line\nglaze line two\n", encoding="utf-8")
    run("sync", str(vault))
    printed = run("search", "glaze", "--vault", str(vault)).stdout
    assert "\x1b" not in printed and "\u202e" not in printed
    assert "\\x1b[2J\\x1b[31m uses [red]cobalt[/red] oxide." in printed  # markup kept as text
    kiln = run("search", "kiln", "--vault", str(vault)).stdout
    assert "\u202e" not in kiln and "kiln\\u202egpj.md" in kiln
    assert "two\\x0alines glaze.md" in printed and "two\nlines" not in printed


#: Numbers in the README's session that the calendar and the machine change (a sync's
#: seconds; a hit's score and recency, which count days back from today): any value there.
_DRIFTING = re.compile(r"(?<=in )\d+\.\d+(?= s:)|(?<=score )\d\.\d{4}|(?<=recency )\d\.\d\d")


def _readme_session() -> list[tuple[str, list[str]]]:
    """The README's "A session (real output, trimmed)" block as ``[(command, shown lines)]``."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("A session (real output, trimmed)", 1)[1]
    block = block.split("```console\n", 1)[1].split("\n```", 1)[0]
    session: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            session.append((line[2:], []))
        else:
            session[-1][1].append(line)
    return session


def _shown_in(shown: list[str], printed: list[str]) -> str | None:
    """``None`` when every line ``shown`` is among ``printed``, each a line of its own, in
    any order (hits of about equal relevance trade places as their recency fades with the
    calendar, and the test runs on the day it runs; a line ``…`` or ``...`` stands for lines
    left out; one ending in ``…`` for the rest of its line; :data:`_DRIFTING` numbers match
    any value), else the first line that is not."""
    pattern: list[re.Pattern[str] | None] = []
    for line in shown:
        cut = line.endswith("…") and line.strip() != "…"
        text = line[:-1].rstrip() if cut else line
        pattern.append(None if line.strip() in {"…", "..."} else re.compile(
            "".join(r"[\d.]+" if part is None else re.escape(part) for part in _split(text))
            + ("" if cut else "$")))
    left = list(printed)
    for line, wanted in zip(shown, pattern, strict=True):
        if wanted is None:
            continue
        at = next((i for i, out in enumerate(left) if wanted.match(out)), None)
        if at is None:
            return line
        del left[at]
    return None


def _split(line: str) -> list[str | None]:
    """``line`` cut at its :data:`_DRIFTING` numbers (``None`` where one was)."""
    parts: list[str | None] = []
    last = 0
    for found in _DRIFTING.finditer(line):
        parts += [line[last:found.start()], None]
        last = found.end()
    return [*parts, line[last:]]


def _files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` by its relative path, with its bytes."""
    return {path.relative_to(folder).as_posix(): path.read_bytes()
            for path in sorted(folder.rglob("*")) if path.is_file()}


@pytest.mark.slow
def test_the_readme_session_prints_what_the_readme_shows(tmp_path: Path) -> None:
    """Every command of the README's session, run as written by a shell in a fresh copy of
    the checkout's demo vault with a fresh home and state folder, prints every line the
    README shows for it; the memories it keeps land in the user's copy, and the checkout's
    ``vault_example/`` (which the tests read) is left as cloned."""
    checkout, home = tmp_path / "checkout", tmp_path / "home"
    shutil.copytree(REPO / "vault_example", checkout / "vault_example", symlinks=True)
    home.mkdir()
    cloned = _files(checkout / "vault_example")
    env = {**os.environ, "HOME": str(home),
           "PATH": f"{DREAMD.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    session = _readme_session()
    assert [command.split()[1] for command, _ in session if command.startswith("dreamd ")] \
        == ["sync", "search", "context", "remember", "remember"]
    assert session[0][0] == ". .venv/bin/activate"  # (PATH above stands for it)
    for command, shown in session[1:]:
        assert command.split()[0] in {"mkdir", "dreamd"}
        done = subprocess.run(["sh", "-c", command], cwd=checkout, env=env, capture_output=True,
                              text=True, timeout=300, check=False)
        assert done.returncode == 0, f"$ {command}\n{done.stderr}"
        printed = (done.stderr + done.stdout).splitlines()
        missing = _shown_in(shown, printed)
        assert missing is None, f"$ {command}\nREADME shows: {missing}\nprinted:\n" + \
            "\n".join(printed)
    assert _files(checkout / "vault_example") == cloned
    kept = home / "dreamd-demo" / "Memory" / "use-npm-not-pnpm-for-every-javascript-project.md"
    assert kept.is_file()
    # the session run a second time leaves the user's demo as it is (no copy over its
    # MEMORY.md, no second vault nested in it)
    demo = _files(home / "dreamd-demo")
    again = subprocess.run(["sh", "-c", session[1][0]], cwd=checkout, env=env,
                           capture_output=True, text=True, timeout=60, check=False)
    assert again.returncode != 0 and _files(home / "dreamd-demo") == demo


def _help_pages(width: int) -> dict[str, str]:
    """``dreamd --help`` and every command's and group's ``--help`` at ``width`` columns
    (typer's rich help sizes itself by ``COLUMNS``), by command path."""
    import typer
    from typer.testing import CliRunner

    from daemon.cli import app

    pages: dict[str, str] = {}

    def walk(command: Any, path: tuple[str, ...]) -> None:
        done = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": str(width)})
        assert done.exit_code == 0, (path, done.output)
        pages[" ".join(("dreamd", *path))] = done.output
        # (typer's own click: a group is what has commands)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*path, name))

    walk(typer.main.get_command(app), ())
    return pages


#: Where a cell of a help line starts: after the frame and its padding, or after the two or
#: more spaces between cells.
_CELL = re.compile(r"(?:^[│ ]*| {2,})(\S)")


def _broken_early(page: str, width: int) -> list[str]:
    """Lines of a help ``page`` that end a phrase early: the next line goes on with the text
    of this line's last cell (it starts in that cell's column, blank before it), and its
    first word would have fitted on this line, so the break is not the terminal's wrapping
    but a newline of the source."""
    lines = page.splitlines()
    early = []
    for line, after in itertools.pairwise(lines):
        text = line.rstrip().removesuffix("│").rstrip()
        starts = [found.start(1) for found in _CELL.finditer(text)]
        going_on = after.rstrip(" │")
        if not starts or not going_on:
            continue
        column = starts[-1]
        if len(going_on) - len(going_on.lstrip(" │")) != column:
            continue  # a new row, a new paragraph
        word = going_on.lstrip(" │").split()[0]
        if word.startswith("["):
            continue  # typer's own line: [required], [default: …]
        edge = width - 2 if line.startswith("│") else width - 1
        if len(text) - column + 1 + len(word) < edge - column:
            early.append(f"{text[column:]!r} / {word!r}")
    return early


@pytest.mark.parametrize("width", [80, 120])
def test_the_help_reads_as_whole_sentences(width: int) -> None:
    """A command's help was its docstring's lines as the source wraps them: at 80 columns
    ``dreamd --help`` broke "hybrid search (vector + full" / "text), graph neighbours"
    mid-phrase, and an option's name was cut (``--no-allow-mass-del…``). Every page, the
    list of commands and each command's own, wraps only where the terminal ends."""
    pages = _help_pages(width)
    assert {"dreamd", "dreamd search", "dreamd config show", "dreamd service install"} \
        <= set(pages)
    for name, page in pages.items():
        assert not _broken_early(page, width), (name, _broken_early(page, width), page)
        assert "…" not in page, (name, page)
    said = " ".join(pages["dreamd"].replace("│", " ").split())
    assert "search Search the indexed vault by names and titles, by meaning and by words, " \
           "and along the links of the notes found;" in said
