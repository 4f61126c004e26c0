"""Logging set-up for the entry points (the CLI and the daemon), and nowhere else.

Libraries (``ccb``, ``magma``, ``consistency``) only emit through ``structlog.get_logger()``;
this module decides where it goes. The daemon (``dreamd run``): a readable console renderer on
a terminal, one JSON object per line otherwise (journald, launchd log files, pipes). A
one-shot command (``fmt="human"``): one plain line per event on stderr, terminal or not,
for the person who typed it — ``dreamd: warning: search.note_bm25_unreadable: ValueError: …;
the index is built again`` — with no timestamp, no JSON and no traceback (an exception is its
one-line message; ``-vv`` adds the traceback). Records of the standard ``logging`` module
(LanceDB, watchfiles) are routed through the same processors.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Literal, TextIO

import structlog

from daemon.terminal_text import visible

__all__ = ["configure_logging", "human_line"]

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
           "error": logging.ERROR}


def configure_logging(
    level: Literal["debug", "info", "warning", "error"] = "info",
    fmt: Literal["auto", "console", "json", "human"] = "auto",
    stream: TextIO | None = None,
) -> None:
    """Configure structlog and stdlib logging once for this process.

    ``fmt="auto"`` renders for humans when ``stream`` is a TTY and JSON lines otherwise;
    ``"human"`` is one plain line per event (:func:`human_line`), for a command's user.
    Logs go to ``stream`` (default stderr) so that command output on stdout stays parseable.
    """
    out = stream if stream is not None else sys.stderr
    as_json = fmt == "json" or (fmt == "auto" and not out.isatty())
    human = fmt == "human"
    # LanceDB's Rust core logs a warning per query unless told otherwise (DESIGN.md).
    os.environ.setdefault("LANCEDB_LOG", "error")

    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        *([] if human else [structlog.processors.TimeStamper(fmt="iso", utc=True)]),
    ]
    renderer: structlog.types.Processor = (
        (_human_traced if level == "debug" else human_line) if human
        else structlog.processors.JSONRenderer(ensure_ascii=False) if as_json
        else structlog.dev.ConsoleRenderer(colors=out.isatty())
    )
    structlog.configure(
        processors=[
            *shared,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info if as_json else _identity,
            renderer,
        ],
    )
    handler = logging.StreamHandler(out)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(_LEVELS[level])
    # watchfiles logs every batch at info ("3 changes detected"); dreamd logs its own event.
    logging.getLogger("watchfiles").setLevel(max(_LEVELS[level], logging.WARNING))


def human_line(logger: object, method: str, event_dict: structlog.types.EventDict) -> str:
    """One event as one line for the person at the command line: ``dreamd: LEVEL: EVENT:
    ERROR (KEY VALUE, …); HINT``. An exception (``exc_info``) is its type and message only;
    line breaks in values become spaces, so an event is always one line, and control and
    bidi characters are written as escapes (``\x1b``, ``\u202e``)."""
    event = dict(event_dict)
    level = str(event.pop("level", method))
    name = str(event.pop("event", ""))
    for key in ("timestamp", "logger", "logger_name", "stack_info", "_record", "_from_structlog"):
        event.pop(key, None)
    exc = event.pop("exc_info", None)
    error = event.pop("error", None)
    hint = event.pop("hint", None)
    if error is None and exc:
        error = _exception_text(exc)
    line = f"dreamd: {level}: {name}"
    if error not in (None, ""):
        line += f": {error}"
    if event:
        line += " (" + ", ".join(f"{key} {value}" for key, value in event.items()) + ")"
    if hint:
        line += f"; {hint}"
    # a file name or a message may hold an escape sequence (``\x1b[2J``) or a bidi override:
    # written as escapes, never acted on by the terminal (daemon.terminal_text)
    return visible(" ".join(line.split()))


def _human_traced(logger: object, method: str, event_dict: structlog.types.EventDict) -> str:
    """:func:`human_line`, then the traceback of an exception (``-vv``), as structlog's
    ``format_exc_info`` writes it."""
    traced = structlog.processors.format_exc_info(logger, method, dict(event_dict))
    trace = traced.get("exception")
    line = human_line(logger, method, event_dict)
    return line + "\n" + visible(str(trace).rstrip()) if trace else line


def _exception_text(exc: object) -> str | None:
    """``Type: message`` of a log call's ``exc_info`` (``True``: the one being handled)."""
    error: object = sys.exc_info()[1] if exc is True else exc
    if isinstance(error, tuple):
        error = error[1] if len(error) > 1 else None
    if not isinstance(error, BaseException):
        return None
    return f"{type(error).__name__}: {error}"


def _identity(
    logger: object, method: str, event_dict: structlog.types.EventDict
) -> structlog.types.EventDict:
    return event_dict
