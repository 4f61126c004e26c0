"""What a command's user reads on stderr: one plain line per event (``fmt="human"``), from
structlog and from the standard ``logging`` module alike; the daemon's JSON stays JSON."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
import structlog

from daemon.logs import configure_logging


@pytest.fixture(autouse=True)
def _logging_put_back() -> Iterator[None]:
    """This process's logging as it was before the test (other tests share the process)."""
    config, root = structlog.get_config(), logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    structlog.configure(**config)
    root.handlers[:] = handlers
    root.setLevel(level)


def _lines(fmt: str, level: str = "warning") -> tuple[list[str], io.StringIO]:
    stream = io.StringIO()
    configure_logging(level=level, fmt=fmt, stream=stream)  # type: ignore[arg-type]
    log = structlog.get_logger("dreamd.test")
    log.info("sync.applied", added=3)
    log.warning("search.note_bm25_unreadable", folder="/s/笔记/index-1",
                error="ValueError: bad\nbounds", hint="the index is built again")
    log.warning("store.stats_failed", error="")
    try:
        raise OSError(28, "No space left on device")
    except OSError:
        log.exception("batch.crashed", paths=2)
    logging.getLogger("lancedb").warning("table %s is behind", "chunks")
    return stream.getvalue().splitlines(), stream


def test_a_commands_warnings_are_one_plain_line_each() -> None:
    lines, _ = _lines("human")
    assert lines == [
        "dreamd: warning: search.note_bm25_unreadable: ValueError: bad bounds "
        "(folder /s/笔记/index-1); the index is built again",
        "dreamd: warning: store.stats_failed",
        "dreamd: error: batch.crashed: OSError: [Errno 28] No space left on device (paths 2)",
        "dreamd: warning: table chunks is behind",
    ]
    # -v: the info lines too, in the same form; -vv: tracebacks under their line
    verbose, _ = _lines("human", "info")
    assert verbose[0] == "dreamd: info: sync.applied (added 3)"
    debug, _ = _lines("human", "debug")
    at = debug.index("dreamd: error: batch.crashed: OSError: [Errno 28] No space left on "
                     "device (paths 2)")
    assert debug[at + 1] == "Traceback (most recent call last):"


def test_the_daemons_json_lines_keep_every_field() -> None:
    lines, _ = _lines("json")
    events = [json.loads(line) for line in lines]
    unreadable = next(e for e in events if e["event"] == "search.note_bm25_unreadable")
    assert unreadable["error"] == "ValueError: bad\nbounds" and unreadable["timestamp"]
    crashed = next(e for e in events if e["event"] == "batch.crashed")
    assert "Traceback" in crashed["exception"]


@pytest.mark.parametrize(("value", "written"), [
    ("Daily/\x1b[2J\x1b]0;owned\x07.md", "Daily/\\x1b[2J\\x1b]0;owned\\x07.md"),
    ("exe.\u202etxt.md", "exe.\\u202etxt.md"),  # a bidi override shows another order
    ("会议\u2066记录\u2069.md", "会议\\u2066记录\\u2069.md"),
    ("\x9b31mred.md", "\\x9b31mred.md"),  # a one-byte CSI
    ("Notes/plain 笔记 — ok.md", "Notes/plain 笔记 — ok.md"),  # look-alike: nothing to escape
])
def test_a_file_name_in_a_warning_is_shown_never_acted_on(value: str, written: str) -> None:
    stream = io.StringIO()
    configure_logging(level="warning", fmt="human", stream=stream)
    log = structlog.get_logger("dreamd.test")
    log.warning("sync.read_failed", path=value, error=f"cannot read {value}\nat all")
    assert stream.getvalue() == (f"dreamd: warning: sync.read_failed: cannot read {written} "
                                 f"at all (path {written})\n")
    logging.getLogger("lancedb").warning("table %s is behind", value)
    assert stream.getvalue().splitlines()[-1] == f"dreamd: warning: table {written} is behind"


def test_a_traceback_under_vv_shows_a_file_names_escapes_too() -> None:
    stream = io.StringIO()
    configure_logging(level="debug", fmt="human", stream=stream)
    try:
        raise ValueError("bad frontmatter in Daily/\x1b[2J.md")
    except ValueError:
        structlog.get_logger("dreamd.test").exception("batch.crashed")
    written = stream.getvalue()
    assert "\x1b" not in written and "Traceback (most recent call last):" in written
    assert written.splitlines()[-1] == "ValueError: bad frontmatter in Daily/\\x1b[2J.md"
