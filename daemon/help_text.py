"""The commands' help as whole sentences, at any terminal width.

A command's help is its docstring, wrapped at 88 columns in the source. typer's rich help
keeps those line breaks: in the list of commands (``dreamd --help``) and in every paragraph
but the first of a command's own help, so at 80 columns a line broke mid-phrase ("hybrid
search (vector + full" / "text), graph neighbours") and at 120 the source's breaks showed as
short lines. :func:`reflow_help` joins each paragraph's lines into one, which the terminal
then wraps at its own width; paragraphs stay apart, and a paragraph that starts with ``\\b``
(click's mark for a block kept as written) is kept as it is.
"""

from __future__ import annotations

import inspect

import typer

__all__ = ["reflow_help", "reflowed"]


def reflowed(text: str) -> str:
    """``text`` (a docstring) dedented, each paragraph on one line with single spaces;
    paragraphs (blank-line separated) kept apart, a ``\\b`` paragraph kept as written."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(p if p.startswith("\b") else " ".join(p.split()) for p in paragraphs)


def reflow_help(app: typer.Typer) -> None:
    """Set every command's and group's help of ``app`` (its sub-apps too) to its text
    :func:`reflowed`; a command without a help of its own takes its docstring, as typer
    would. Call once every command is registered."""
    if isinstance(app.info.help, str):
        app.info.help = reflowed(app.info.help)
    for command in app.registered_commands:
        text = command.help if command.help is not None else inspect.getdoc(command.callback)
        if text:
            command.help = reflowed(text)
    for group in app.registered_groups:
        if isinstance(group.help, str):
            group.help = reflowed(group.help)
        if group.typer_instance is not None:
            reflow_help(group.typer_instance)
