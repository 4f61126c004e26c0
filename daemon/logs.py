"""Logging set-up for the entry points (the CLI and the daemon), and nowhere else.

Libraries (``ccb``, ``magma``, ``consistency``) only emit through ``structlog.get_logger()``;
this module decides where it goes: a readable console renderer on a terminal, one JSON object
per line otherwise (journald, launchd log files, pipes). Records of the standard ``logging``
module (LanceDB, watchfiles) are routed through the same processors.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Literal, TextIO

import structlog

__all__ = ["configure_logging"]

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
           "error": logging.ERROR}


def configure_logging(
    level: Literal["debug", "info", "warning", "error"] = "info",
    fmt: Literal["auto", "console", "json"] = "auto",
    stream: TextIO | None = None,
) -> None:
    """Configure structlog and stdlib logging once for this process.

    ``fmt="auto"`` renders for humans when ``stream`` is a TTY and JSON lines otherwise.
    Logs go to ``stream`` (default stderr) so that command output on stdout stays parseable.
    """
    out = stream if stream is not None else sys.stderr
    as_json = fmt == "json" or (fmt == "auto" and not out.isatty())
    # LanceDB's Rust core logs a warning per query unless told otherwise (DESIGN.md).
    os.environ.setdefault("LANCEDB_LOG", "error")

    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: structlog.types.Processor = (
        structlog.processors.JSONRenderer(ensure_ascii=False)
        if as_json
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


def _identity(
    logger: object, method: str, event_dict: structlog.types.EventDict
) -> structlog.types.EventDict:
    return event_dict
