"""The ``dreamd`` command line: a thin typer layer over :mod:`daemon.app`.

Every command loads settings once (defaults < config file < ``DREAMD_*`` < flags), builds the
application, calls one method, and renders the answer with rich. Errors of the
``DreamdError`` tree become one readable line on stderr and the exit code of
``config.errors.EXIT_CODES``; nothing prints a traceback at a user.
"""

from __future__ import annotations

import functools
import importlib
import io
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import typer
from rich.console import Console
from rich.table import Table

from ccb.entry_notes import is_entry_path
from ccb.memory_text import checked_memory_text
from ccb.model import MEMORY_TYPES
from ccb.owner import Owner
from config.errors import (
    DreamdError,
    EmptyMemoryError,
    InvalidOwnerError,
    LockError,
    MemoryNotFoundError,
    VaultError,
    exit_code_for,
)
from daemon import client
from daemon.help_text import reflow_help
from daemon.owners import checked_owner
from daemon.terminal_text import shown

if TYPE_CHECKING:
    from daemon import entry_exchange, entry_writes, render
    from daemon import lineage as lineage_views
    from daemon import status as status_files
    from daemon.app import App
    from daemon.check import not_indexed_yet
    from daemon.forget_entry import forget_entry
    from daemon.forget_journal import ForgetJournal
    from daemon.history import forget_remains
    from daemon.logs import configure_logging
    from daemon.vault_folder import load
else:
    class _Deferred:
        """A module, or one of its names, imported on first use: ``dreamd --help`` and the
        commands that never open the store do not import LanceDB, numpy or the model."""

        def __init__(self, module: str, name: str | None = None) -> None:
            self._where = (module, name)

        def _target(self) -> Any:
            module, name = self._where
            found = importlib.import_module(module)
            return getattr(found, name) if name else found

        def __getattr__(self, attr: str) -> Any:
            return getattr(self._target(), attr)

        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return self._target()(*args, **kwargs)

    render = _Deferred("daemon.render")
    status_files = _Deferred("daemon.status")
    entry_exchange = _Deferred("daemon.entry_exchange")
    entry_writes = _Deferred("daemon.entry_writes")
    lineage_views = _Deferred("daemon.lineage")
    App = _Deferred("daemon.app", "App")
    not_indexed_yet = _Deferred("daemon.check", "not_indexed_yet")
    load = _Deferred("daemon.vault_folder", "load")
    forget_remains = _Deferred("daemon.history", "forget_remains")
    forget_entry = _Deferred("daemon.forget_entry", "forget_entry")
    ForgetJournal = _Deferred("daemon.forget_journal", "ForgetJournal")

    def configure_logging(**kwargs: Any) -> None:
        from daemon.logs import configure_logging as configure

        configure(**kwargs)

__all__ = ["app", "main", "run_here", "serve_command"]

app = typer.Typer(
    name="dreamd",
    help="Long-term memory for an Obsidian vault: index notes and memories, search them.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
config_app = typer.Typer(help="Show, validate and locate the configuration.", no_args_is_help=True)
app.add_typer(config_app, name="config")
service_app = typer.Typer(help="Run dreamd as a systemd user service or launchd agent.",
                          no_args_is_help=True)
app.add_typer(service_app, name="service")


def _vault_folder(text: str) -> Path:
    """A vault folder as typed (``--vault`` or VAULT). An empty or blank one is refused
    (``VaultError``, exit 4): ``Path("")`` is the working folder, so ``--vault "$VAULT"``
    with the variable unset indexed and wrote notes into whatever folder the shell was in."""
    if not text.strip():
        raise VaultError(f"the vault's folder is empty ({text!r}); give the folder that holds "
                         "your notes (an unset shell variable?); nothing was created")
    return Path(text)


#: Options many commands share.
VaultOption = Annotated[Path | None, typer.Option("--vault", help="Vault folder.",
                                                  parser=_vault_folder)]
#: The vault as the command's argument (``dreamd status ~/Notes``), as ``sync`` and ``run``
#: take it: the same as ``--vault``.
VaultArgument = Annotated[Path | None, typer.Argument(
    help="Vault folder (the same as --vault; default: vault.path).", parser=_vault_folder,
    metavar="VAULT", show_default=False)]
OwnerOption = Annotated[
    str | None, typer.Option("--owner", help="Act for this owner (user or user/agent).")
]

@dataclass(slots=True)
class _Served:
    """A command the daemon runs for a client (:func:`serve_command`): its application, the
    client's stdin, and consoles writing into the answer."""

    app: App
    stdin: str | None
    out: Console
    err: Console
    stdout: TextIO


_served: ContextVar[_Served | None] = ContextVar("dreamd_served", default=None)


class _ConsoleSlot:
    """``out`` / ``err``: this process's console, or the client's while the daemon serves
    one (:func:`serve_command`)."""

    def __init__(self, *, stderr: bool) -> None:
        self._stderr = stderr
        self._own: Console | None = None

    def _console(self) -> Console:
        served = _served.get()
        if served is not None:
            return served.err if self._stderr else served.out
        if self._own is None:
            self._own = Console(stderr=self._stderr, soft_wrap=True)
        return self._own

    def __getattr__(self, name: str) -> Any:
        return getattr(self._console(), name)


out: Console = _ConsoleSlot(stderr=False)  # type: ignore[assignment]
err: Console = _ConsoleSlot(stderr=True)  # type: ignore[assignment]


def _stdout() -> TextIO:
    served = _served.get()
    return served.stdout if served is not None else sys.stdout


def _stdin_text(*, as_bytes: bool = False) -> str:
    """What the command reads on stdin: the client's (served, or read before it fell back
    to this process), else this process's when it is not a terminal. ``as_bytes``: read
    as bytes, those that are not UTF-8 kept as surrogates (PEP 383) for the command to
    name."""
    served = _served.get()
    if served is not None:
        return served.stdin or ""
    if client.served_stdin is not None:
        return client.served_stdin
    if sys.stdin is None or sys.stdin.isatty():
        return ""
    if as_bytes and hasattr(sys.stdin, "buffer"):
        return sys.stdin.buffer.read().decode("utf-8", "surrogateescape")
    return sys.stdin.read()


@dataclass
class _Options:
    config_path: Path | None = None
    env_name: str | None = None
    overrides: dict[str, object] = field(default_factory=dict)


def _parse_set(values: list[str]) -> dict[str, object]:
    pairs: dict[str, object] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"--set expects KEY=VALUE, got {item!r}")
        pairs[key.strip()] = value
    return pairs


@app.callback()
def _global(
    ctx: typer.Context,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="Config file (default: DREAMD_CONFIG "
                                  "or the user config folder).")
    ] = None,
    env: Annotated[
        str | None, typer.Option("--env", help="Profile of the config file (default: DREAMD_ENV).")
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override one setting, e.g. --set embedding.batch_size=32."),
    ] = None,
    verbose: Annotated[
        int, typer.Option("--verbose", "-v", count=True, help="Log more (-v info, -vv debug).")
    ] = 0,
    version: Annotated[
        bool, typer.Option("--version", is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    if version:
        from daemon.entry import version_line

        _stdout().write(version_line() + "\n")
        raise typer.Exit(0)
    # Commands print their answer on stdout; logs go to stderr as one plain line each
    # (never JSON: ``dreamd run`` configures its own), warnings only unless -v.
    if _served.get() is None:  # the daemon keeps its own logging
        configure_logging(level=("warning", "info", "debug")[min(verbose, 2)], fmt="human")
    ctx.obj = _Options(config_path=config, env_name=env, overrides=_parse_set(set_ or []))


def _options(ctx: typer.Context) -> _Options:
    obj = ctx.find_object(_Options)
    return obj if obj is not None else _Options()


@contextmanager
def _app(ctx: typer.Context, **flags: Any) -> Iterator[App]:
    """The application of the command's vault (the daemon's own when it serves the command),
    ``flags`` overriding its settings."""
    with _checked_app(ctx, None, flags) as application:
        yield application


@contextmanager
def _checked_app(ctx: typer.Context, _first: Callable[[Any], object] | None,
                 flags: dict[str, Any]) -> Iterator[App]:
    """:func:`_app`, ``_first(settings)`` run before the application is built (a check that
    needs no index nor model: a refusal comes before LanceDB and numpy are imported)."""
    served = _served.get()
    if served is not None:  # the daemon's own application, warm and shared
        if _first is not None:
            _first(served.app.settings)
        yield served.app
        return
    opts = _options(ctx)
    overrides = {**opts.overrides, **{k: v for k, v in flags.items() if v is not None}}
    loaded = load(opts.config_path, opts.env_name, overrides)
    if _first is not None:
        _first(loaded.settings)
    application = _created(loaded, _command_name(ctx))
    _note_resolution(application, loaded.config_path)
    try:
        yield application
    finally:
        application.close()


def _created(loaded: Any, action: str | None) -> App:
    """:meth:`App.create`, saying on stderr which vault it chose when the choice may surprise
    (:attr:`daemon.vault_choice.VaultChoice.note`; never in a hook's output). A vault that is
    not a folder is refused before the application (LanceDB, numpy, the model) is imported."""
    from daemon.vault_folder import require_vault_folder, resolve_vault

    root, choice = resolve_vault(loaded)
    if action is not None:
        require_vault_folder(root, action)
    application = App.create(loaded, action=action)
    note = choice.note if choice is not None else None
    if note and not (_invocation is not None and _invocation.hook):
        err.print(shown(note), highlight=False)
    return application


def _command_name(ctx: typer.Context) -> str:
    """The command as typed after the program's name: ``search``, ``conflicts resolve``."""
    names: list[str] = []
    level: Any = ctx
    while level.parent is not None:
        names.insert(0, level.info_name or "")
        level = level.parent
    return " ".join(names)


#: The command line of this process, as :mod:`daemon.client` reads it (its settings are
#: recorded for the next run to find the daemon).
_invocation: client.Invocation | None = None


def _note_resolution(application: App, config_file: Path, *, implicit: bool = False) -> None:
    """Record where this command line's settings led, so its next run can ask the daemon:
    for every working folder when no path among the settings is relative, else for this
    folder only. ``implicit``: neither the command line nor the settings name the vault
    (the client checks at each run that it still means this one)."""
    if _invocation is None or (application.settings.vault.path is None
                               and _invocation.vault is None and not implicit):
        return  # an implicit vault depends on more than the inputs: only the daemon says so
    try:
        resolution = client.Resolution(
            application.state_dir, application.settings_fingerprint,
            str(application.vault_root), application.settings.daemon.autostart,
            implicit=implicit)
    except DreamdError:
        return  # no vault: nothing a daemon could serve
    settings = application.settings
    paths = [settings.vault.path, settings.storage.data_dir, config_file,
             *(root.path for root in settings.vault.extra_roots)]
    given = [_invocation.vault, _invocation.config]  # as typed: --vault . is made absolute
    relative = any(not Path(p).expanduser().is_absolute()
                   for p in [*paths, *given] if p is not None) \
        or (settings.storage.uri is not None and "://" not in settings.storage.uri
            and not Path(settings.storage.uri).expanduser().is_absolute())
    key = client.resolution_key(_invocation, os.environ, str(Path.cwd()) if relative else None)
    client.write_resolution(key, resolution, config_file)


def _owner(text: str | None) -> Owner | None:
    if text is None:
        return None
    try:
        return checked_owner(text)
    except InvalidOwnerError as error:
        raise typer.BadParameter(str(error), param_hint="--owner") from error


# --------------------------------------------------------------------------- commands


@app.command()
def init(
    ctx: typer.Context,
    vault: Annotated[
        Path | None,
        typer.Argument(help="The Obsidian vault folder (default: pick one of the vaults "
                            "Obsidian knows).", parser=_vault_folder),
    ] = None,
    force: Annotated[bool, typer.Option("--force",
                                        help="Overwrite an existing config file.")] = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Without VAULT: take the only vault Obsidian "
                           "knows without asking.")
    ] = False,
) -> None:
    """Write a commented config file for VAULT (the config path: see `dreamd config path`).

    Without VAULT, list the vaults Obsidian knows (from its obsidian.json) and ask which one.
    """
    from rich.cells import cell_len
    from rich.prompt import Confirm, IntPrompt

    from ccb.obsidian_vaults import (
        ObsidianJsonMissing,
        ObsidianJsonRead,
        ObsidianVault,
        discover_vaults,
    )
    from config.errors import VaultError

    opts = _options(ctx)
    if vault is None:
        App.init_target(opts.config_path, force=force)  # refuse before asking anything
        found = discover_vaults()
        for bad in found.unreadable:
            err.print(f"dreamd: init: skipped {shown(str(bad.file))}: {shown(bad.reason)}",
                      highlight=False)
        if not found.vaults:
            looked = "".join(
                f"\n  {shown(str(f.file))} (" + (
                    "not found" if isinstance(f, ObsidianJsonMissing)
                    else "lists no vaults" if isinstance(f, ObsidianJsonRead)
                    else shown(f.reason)
                ) + ")"
                for f in found.files
            )
            err.print(f"dreamd: init: found no Obsidian vaults. Looked in:{looked}\n"
                      "Run `dreamd init <path>` with your vault's folder.", highlight=False)
            raise typer.Exit(2)

        out.print("Vaults Obsidian knows:")
        width = max(cell_len(known.name) for known in found.vaults)
        for number, known in enumerate(found.vaults, 1):
            when = ("open" if known.is_open
                    else f"last opened {known.last_opened.astimezone():%Y-%m-%d %H:%M}"
                    if known.last_opened else "last opened: unknown")
            missing = "" if known.exists else "  [red]folder missing[/]"
            pad = " " * (width - cell_len(known.name))
            out.print(f"{number:>3}. [bold]{shown(known.name)}[/]{pad}  {shown(str(known.path))}"
                      f"  ({when}){missing}", highlight=False)
        existing = [known for known in found.vaults if known.exists]
        if not existing:
            err.print("dreamd: init: none of these folders exists any more; run "
                      "`dreamd init <path>` with your vault's folder.", highlight=False)
            raise typer.Exit(2)

        picked: ObsidianVault
        only = len(existing) == 1
        if only and yes:
            picked = existing[0]
        elif not sys.stdin.isatty():
            err.print("dreamd: init: no VAULT given and no terminal to ask on; run "
                      "`dreamd init <path>` with one of these"
                      + (", or `dreamd init --yes` to take the only one." if only else "."),
                      highlight=False)
            raise typer.Exit(2)
        else:
            try:
                if only:
                    picked = existing[0]
                    if not Confirm.ask(f"Use [bold]{shown(picked.name)}[/] "
                                       f"({shown(str(picked.path))})?",
                                       default=True, console=out):
                        err.print("dreamd: init: nothing written; run `dreamd init <path>` "
                                  "with your vault's folder.", highlight=False)
                        raise typer.Exit(1)
                else:
                    while True:
                        number = IntPrompt.ask(
                            f"Vault number (1-{len(found.vaults)})", console=out,
                            choices=[str(n) for n in range(1, len(found.vaults) + 1)],
                            show_choices=False,
                        )
                        picked = found.vaults[number - 1]
                        if picked.exists:
                            break
                        err.print(f"{shown(str(picked.path))} no longer exists (Obsidian "
                                  "still lists it); pick another one.", highlight=False)
            except EOFError:
                err.print("\ndreamd: init: no answer; nothing written.", highlight=False)
                raise typer.Exit(1) from None
        if not picked.exists:
            raise VaultError(
                f"init: vault {picked.name!r} at {picked.path} no longer exists (Obsidian "
                "still lists it); pick another one or run `dreamd init <path>`"
            )
        vault = picked.path

    path = App.init_config(vault, config_path=opts.config_path, force=force)
    out.print(f"wrote {shown(str(path))}")
    out.print("next: [bold]dreamd sync[/] then [bold]dreamd search \"your question\"[/]")
    _offer_service(ctx, vault)


def _offer_service(ctx: typer.Context, vault: Path) -> None:
    """After ``init`` at a terminal: offer to keep the vault in step as a service (the
    daemon that also answers hooks and MCP sessions in a tenth of a second)."""
    from rich.prompt import Confirm

    from daemon import service

    managed = sys.platform.startswith("linux") or sys.platform == "darwin"
    if not managed or not sys.stdin.isatty():
        return
    try:
        wanted = Confirm.ask("Run dreamd in the background as a service (it keeps the index "
                             "in step and answers hooks and MCP at once)?", console=out,
                             default=False)
    except EOFError:
        return
    if wanted:
        try:
            _print_lines(service.install(_service_plan(ctx, vault), dry_run=False).lines())
        except DreamdError as error:
            err.print(f"dreamd: {shown(str(error), one_line=True)}", highlight=False)
    else:
        out.print("later: [bold]dreamd service install[/], or [bold]dreamd run[/] in a "
                  "terminal")


@app.command()
def sync(
    ctx: typer.Context,
    vault: Annotated[
        Path | None, typer.Argument(help="Vault folder (default: vault.path).",
                                   parser=_vault_folder)
    ] = None,
    allow_mass_delete: Annotated[
        bool,
        typer.Option("--allow-mass-delete",
                     help="Apply a sync that would remove more than sync.max_delete_share of "
                          "the index (e.g. after deleting most of a vault on purpose)."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    vault_option: Annotated[
        Path | None, typer.Option("--vault", parser=_vault_folder,
                                 help="Vault folder (as the other commands take it; "
                                                  "the same as VAULT).")
    ] = None,
) -> None:
    """Reconcile the index with the vault once: new, changed, deleted and renamed files."""
    vault = _one_vault(vault, vault_option)
    with _app(ctx, **{"vault.path": vault}) as application:
        # (a relative path is the client's: the resolution that sent it here read its folder)
        if vault is not None and _served.get() is not None and vault.expanduser().is_absolute() \
                and vault.expanduser().resolve() != application.vault_root:
            raise VaultError(f"sync {vault}: the running daemon keeps "
                             f"{application.vault_root}, not this vault; nothing was synced")
        try:
            with render.SyncProgress(err, enabled=not as_json and err.is_terminal) as progress:
                report = application.sync(progress=progress,
                                          allow_mass_delete=allow_mass_delete)
        except LockError:
            # a daemon keeps this vault: it reconciles (with the user's allowance of a mass
            # delete it waits for); this run recorded where the daemon is
            code = None if _invocation is None else client.run_served(sys.argv[1:])[0]
            if code is None:
                raise
            raise typer.Exit(code) from None
        if as_json:
            out.print_json(json.dumps(render.sync_report_json(report), ensure_ascii=False))
        else:
            render.print_sync_report(out, report)


@app.command()
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for (any language).")],
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=200)] = 10,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print the hits as a JSON list; when nothing was found because "
                       "searches ran out of time, an object whose hits is that empty list and "
                       "whose out_of_time names those searches; while the daemon is at the "
                       "vault's first index, an object whose index says how many files of "
                       "how many are indexed so far.")] = False,
    type_: Annotated[
        list[str] | None,
        typer.Option("--type", help="Only memories of this type (user, feedback, project, "
                                    "reference); repeatable."),
    ] = None,
    path: Annotated[
        str | None, typer.Option("--path", help="Only notes under this vault folder.")
    ] = None,
    owner: OwnerOption = None,
    vault: VaultOption = None,
    all_: Annotated[bool, typer.Option("--all", help="Also archived, superseded and expired "
                                       "memories.")] = False,
    as_of: Annotated[
        str | None, typer.Option("--as-of", help="What was current on this day (YYYY-MM-DD).")
    ] = None,
    layer: Annotated[
        list[int] | None,
        typer.Option("--layer", min=1, max=5, help="Only this layer: 1 identity and "
                     "preferences, 2 rules, 3 facts, 4 events, 5 procedures; repeatable."),
    ] = None,
    explain: Annotated[bool, typer.Option("--explain", help="Also say what the question was "
                                          "read to ask for, which searches ran and how long "
                                          "each took.")] = False,
) -> None:
    """Search the indexed vault by names and titles, by meaning and by words, and along the
    links of the notes found; hits are ranked by relevance, importance and recency.
    Statements from assistant sessions that match follow the vault's hits, marked as raw
    (not memories; retrieval.transcript_hits, 0 for none)."""
    if not query.strip():
        raise typer.BadParameter("the query is empty", param_hint="QUERY")
    unknown = sorted(set(type_ or ()) - set(MEMORY_TYPES))
    if unknown:
        raise typer.BadParameter(
            f"{', '.join(unknown)}: not a memory type (use {', '.join(MEMORY_TYPES)})",
            param_hint="--type",
        )
    day = _day(as_of, "--as-of")
    with _app(ctx, **{"vault.path": vault}) as application:
        hits = application.search(query, limit=limit, memory_types=type_, path_prefix=path,
                                  owner=_owner(owner), include_hidden=all_, as_of=day,
                                  layers=layer or None, transcripts=True)
        trace = application.last_search_trace
        partial = application.indexing.partial()  # the daemon at the first index
        if as_json:
            out.print_json(json.dumps(render.search_json(hits, trace, explain=explain,
                                                         partial=partial),
                                      ensure_ascii=False))
        else:
            render.print_hits(out, query, hits, trace, partial)
            if explain and trace is not None:
                render.print_trace(out, trace)
            elif trace is not None and trace.verifier_dropped:
                out.print(f"[dim]{trace.verifier_dropped} more judged irrelevant by the "
                          "verifier (llm.verifier); --explain lists them[/]", highlight=False)


def _day(text: str | None, hint: str) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text.strip())
    except ValueError as error:
        raise typer.BadParameter(f"{text!r} is not a date (YYYY-MM-DD)", param_hint=hint) \
            from error


@app.command()
def context(
    ctx: typer.Context,
    query: Annotated[
        str | None, typer.Option("--query", "-q", help="What the assistant is working on.")
    ] = None,
    budget: Annotated[
        int | None, typer.Option("--budget", min=100, help="Token budget (default: "
                                 "fusion.max_tokens).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the context and its entries "
                                          "as JSON.")] = False,
    hook: Annotated[bool, typer.Option("--hook", help="Run as a Claude Code hook: read the "
                                       "hook's JSON on stdin (the prompt is the query), print "
                                       "the context, and never fail the prompt.")] = False,
    owner: OwnerOption = None,
    vault: VaultOption = None,
) -> None:
    """Background for an assistant: the user's identity, preferences and rules (always),
    then what the query finds, then a catalogue of how-to notes, within a token budget."""
    if hook:
        _context_hook(ctx, budget, owner, vault)
        return
    with _app(ctx, **{"vault.path": vault}) as application:
        from daemon.context import build_context

        application.require_vault("context")
        result = build_context(application, query or "", budget_tokens=budget,
                               owner=_owner(owner))
        if as_json:
            out.print_json(json.dumps(render.context_json(result), ensure_ascii=False))
        else:
            _stdout().write(result.text + "\n")


def _context_hook(ctx: typer.Context, budget: int | None, owner: str | None,
                  vault: Path | None) -> None:
    """``dreamd context --hook``: Claude Code adds a SessionStart or UserPromptSubmit hook's
    stdout to the conversation; a non-zero exit would show an error (exit 2 even blocks the
    prompt), so every failure is one line on stderr and exit 0."""
    from daemon.active_recall import ActiveRecall, render_raw
    from daemon.app import embedder_in_memory
    from daemon.context import build_context, keep_session_start

    try:
        text = _stdin_text()
        event = json.loads(text) if text.strip() else {}
        prompt = event.get("prompt") if isinstance(event, dict) else None
        query = (prompt.encode("utf-8", "replace").decode("utf-8")
                 if isinstance(prompt, str) else "")  # a lone surrogate cannot be embedded
        with _app(ctx, **{"vault.path": vault}) as application:
            application.require_vault("context")
            result = build_context(application, query, budget_tokens=budget,
                                   owner=_owner(owner))
            if not query.strip():  # a session start: kept for the next one (no daemon)
                keep_session_start(application, result.text, budget=budget, owner=owner)
            raw = render_raw(ActiveRecall(
                lambda: application.snippet_recaller.store, application.state_dir,
                embedder=lambda: embedder_in_memory(application)).recall(query))
        _stdout().write(result.text + "\n" + (raw + "\n" if raw else ""))
    except (DreamdError, ValueError, OSError, RecursionError, typer.BadParameter) as error:
        err.print(f"dreamd context: {shown(str(error)[:500])}", highlight=False)


@app.command()
def remember(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(
        help="The fact, rule or preference to keep; - reads it from stdin "
             "(echo 'the fact' | dreamd remember -).")],
    type_: Annotated[
        str, typer.Option("--type", "-t", help="user, feedback, project or reference.")
    ] = "project",
    name: Annotated[str | None, typer.Option(help="Short title (default: from the text).")]
    = None,
    description: Annotated[str | None, typer.Option(help="One line for MEMORY.md.")] = None,
    subject: Annotated[
        str | None, typer.Option(help="What the fact is about, e.g. testing.database.")
    ] = None,
    pin: Annotated[bool, typer.Option("--pin", help="Always include it in context.")] = False,
    owner: OwnerOption = None,
    vault: VaultOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    explain: Annotated[bool, typer.Option(
        "--explain", help="Say which stored memory it was judged against, and why.")] = False,
) -> None:
    """Keep a memory: the same fact twice is stored once, a changed fact supersedes the old.
    A memory needs words, and at most memory.max_chars characters (65,536 by default)."""
    if type_ not in MEMORY_TYPES:
        raise typer.BadParameter(f"--type must be one of {', '.join(MEMORY_TYPES)}")
    if text == client.STDIN_TEXT:
        text = _stdin_text(as_bytes=True)
        if not text.strip():
            raise EmptyMemoryError("remember -: nothing on stdin; pipe the memory's text in "
                                   "(echo 'the fact' | dreamd remember -)")
    def checked(settings: Any) -> None:  # (refused before the index or the model is loaded)
        checked_memory_text(text, max_chars=settings.memory.max_chars)

    with _checked_app(ctx, checked, {"vault.path": vault}) as application:
        result = application.memories(_owner(owner)).remember(
            text, type=type_, name=name, description=description, subject=subject, pinned=pin,
            source="user",
        )
    if as_json:
        out.print_json(json.dumps(render.remember_json(result), ensure_ascii=False))
    else:
        render.print_remember(out, result, explain=explain)


#: Seconds a ``flush --hook`` may take before it gives up (one line on stderr, exit 0): a
#: hook must never hold up Claude Code's compaction (its own ``timeout`` is 60 s by default,
#: 30 s in the README's recipe).
FLUSH_HOOK_TIMEOUT_S = 10.0


@app.command()
def note(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(
        help="The line to write; - reads it from stdin (echo 'the line' | dreamd note -).")],
    section: Annotated[str | None, typer.Option(
        "--section", "-s", help="The ## heading to write under (default: Notes); made at "
        "the end of the note when it is missing.")] = None,
    vault: VaultOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Append a line to today's daily note (the diary): a decision, a preference, unfinished
    work, the cause of an incident. Append only: nothing already in the note changes."""
    from daemon.diary import section_name

    heading = section_name(section)
    if text == client.STDIN_TEXT:
        text = _stdin_text(as_bytes=True)
        if not text.strip():
            raise EmptyMemoryError("note -: nothing on stdin; pipe the line in "
                                   "(echo 'the line' | dreamd note -)")
    with _app(ctx, **{"vault.path": vault}) as application:
        from daemon.app import diary_of

        result = diary_of(application).note(text, section=heading)
    if as_json:
        out.print_json(json.dumps(render.note_json(result), ensure_ascii=False))
    else:
        render.print_note(out, result)


@app.command()
def flush(
    ctx: typer.Context,
    hook: Annotated[bool, typer.Option("--hook", help="Run as a Claude Code PreCompact or "
                                       "SessionEnd hook: print nothing, never fail (exit 0, "
                                       "one line on stderr on any problem).")] = False,
    section: Annotated[str | None, typer.Option(
        "--section", "-s", help="The ## heading to write under (default: Sessions).")] = None,
    timeout: Annotated[float, typer.Option(
        "--timeout", min=0.1, help="With --hook: seconds before giving up.")]
    = FLUSH_HOOK_TIMEOUT_S,
    vault: VaultOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Append the rules, preferences and decisions the user stated in a Claude Code session
    to today's daily note, with the session as their source. Reads the hook's JSON on stdin
    (session_id, transcript_path); a second run adds nothing new. With an LLM configured
    (llm.enabled), the Extractor chooses them; if it fails, the rules do."""
    if hook:
        _flush_hook(ctx, section, vault, timeout)
        return
    report = _flush_once(ctx, section, vault, timeout)
    if report.fallback:
        err.print(f"dreamd flush: {shown(report.fallback[:500])}", highlight=False)
    if as_json:
        out.print_json(json.dumps(render.flush_json(report), ensure_ascii=False))
    else:
        render.print_flush(out, report)


def _flush_once(ctx: typer.Context, section: str | None, vault: Path | None,
                timeout_s: float) -> Any:
    """One flush of the hook event on stdin (:func:`daemon.flush.flush`); with the Extractor
    configured (``llm.enabled``) it chooses, within a share of ``timeout_s``
    (:data:`daemon.flush.EXTRACTOR_SHARE`)."""
    from daemon.diary import section_name
    from daemon.flush import (
        DEFAULT_FLUSH_SECTION,
        EXTRACTOR_SHARE,
        FlushCursors,
        extractor,
        parse_hook_event,
    )
    from daemon.flush import flush as flush_session

    heading = section_name(section) if section is not None else DEFAULT_FLUSH_SECTION
    event = parse_hook_event(_stdin_text())  # refused before the application is loaded
    from daemon.app import diary_of

    with _app(ctx, **{"vault.path": vault}) as application:
        client = application.chat_client()
        extract = extractor(client, timeout_s * EXTRACTOR_SHARE) if client else None
        return flush_session(event, diary_of(application),
                             FlushCursors(application.state_dir), section=heading,
                             extract=extract)


def _flush_hook(ctx: typer.Context, section: str | None, vault: Path | None,
                timeout_s: float) -> None:
    """``dreamd flush --hook``: the flush in a worker thread, waited for ``timeout_s``.
    Whatever happens — input that is not JSON, a missing transcript, a vault whose writer
    is busy past the time — the exit code is 0 and a problem is one line on stderr. A
    flush still running at the time is left to finish or die with the process: its note is
    written atomically and its cursor only after the note, so the next flush adds what it
    did not."""
    import contextvars
    import threading

    failure: list[str] = []

    def work() -> None:
        try:
            report = _flush_once(ctx, section, vault, timeout_s)
            if report.fallback:
                failure.append(report.fallback)
        except (DreamdError, typer.BadParameter) as error:
            failure.append(str(error))
        except Exception as error:  # a hook never fails the session it runs in
            failure.append(f"{type(error).__name__}: {error}")

    worker = threading.Thread(target=contextvars.copy_context().run, args=(work,),
                              name="dreamd-flush", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        failure.append(f"flush: not done within {timeout_s:g} s (the vault's writer is busy, "
                       "or the transcript is very long); the next flush adds what this one "
                       "did not")
    if failure:
        err.print(f"dreamd flush: {shown(failure[0].removeprefix('flush: ')[:500])}",
                  highlight=False)


@app.command()
def show(
    ctx: typer.Context,
    memory: Annotated[str, typer.Argument(help="Memory id, name or file.")],
    owner: OwnerOption = None,
    vault: VaultOption = None,
) -> None:
    """Print one memory file as it is on disk (an entry, ``file.md#key``: its line)."""
    with _app(ctx, **{"vault.path": vault}) as application:
        service = application.memories(_owner(owner))
        try:
            stored = service.find(memory)
            text = stored.data.decode("utf-8", errors="replace")
        except MemoryNotFoundError:
            entry = next((s for s in application.memory_pool.entries() if "#" in memory
                          and s.path == memory.strip() and s.note.memory is not None and (
                              service.owner is None
                              or service.owner.sees(s.note.memory.owner))), None)
            if entry is None:
                raise
            stored, text = entry, _entry_line(entry)
    out.print(f"[dim]{shown(stored.path)}[/]")
    out.print(text, markup=False, highlight=False)


def _entry_line(stored: Any) -> str:
    """The line of an entry (``file.md#key``) as its file holds it."""
    from ccb.entries import parse_entry_file

    path, key = stored.path.split("#", 1)
    found = parse_entry_file(path, stored.data).entry(key)
    return _found_line(stored.data, found.line) if found is not None else stored.note.body


def _found_line(data: bytes, number: int) -> str:
    """Line ``number`` (0-based) of ``data``, decoded."""
    lines = data.decode("utf-8", errors="replace").splitlines()
    return lines[number] if 0 <= number < len(lines) else ""


@app.command()
def forget(
    ctx: typer.Context,
    memory: Annotated[str, typer.Argument(help="Memory id, name or file.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
    owner: OwnerOption = None,
    vault: VaultOption = None,
) -> None:
    """Delete a memory for good: the file and everything the index holds of it."""
    if is_entry_path(memory):  # one line of an entry file (file.md#key)
        _forget_entry(ctx, memory, yes=yes, owner=owner, vault=vault)
        return
    with _app(ctx, **{"vault.path": vault}) as application:
        service = application.memories(_owner(owner))
        # a memory whose file is gone: what dreamd still holds of it
        remains = forget_remains(service, application.history(_owner(owner)), memory)
        path = remains[1] if remains else service.find(memory).path
        if not yes and _served.get() is not None:
            # the question is the client's to ask, on its terminal: it runs in-process
            raise typer.BadParameter("forget asks first; the client's own CLI asks it")
        what = f"what dreamd still holds of {path} (its file is gone)" if remains else path
        if not yes and not _confirmed(f"Forget {what} for good?"):
            err.print(f"dreamd: {path} is not forgotten (--yes forgets without asking)")
            raise typer.Exit(1)
        report = service.forget(memory, remains=remains)
    named = ", ".join(x for x in (report.name, report.memory_id and f"id {report.memory_id}")
                      if x)
    out.print(f"forgot {shown(report.path)}" + (f" ({shown(named)})" if named else "")
              + "; removed:", highlight=False)
    for item in report.removed:
        out.print(f"  - {shown(item)}", highlight=False)


def _forget_entry(ctx: typer.Context, ref: str, *, yes: bool, owner: str | None,
                  vault: Path | None) -> None:
    """``dreamd forget file.md#key``: the entry's line goes, the rest of the file stays."""
    if not yes and _served.get() is not None:
        raise typer.BadParameter("forget asks first; the client's own CLI asks it")
    if not yes and not _confirmed(f"Forget the entry {ref} for good?"):
        err.print(f"dreamd: {ref} is not forgotten (--yes forgets without asking)")
        raise typer.Exit(1)
    with _app(ctx, **{"vault.path": vault}) as application:
        # written down first: a forget cut short is finished by the same command again
        done = forget_entry(application.memories(_owner(owner)),
                            ForgetJournal(application.state_dir), application.versions,
                            application.recorder, ref, owner=_owner(owner))
    line = "its line is gone from" if done.write is not None else \
        "finished the forget cut short: its line was gone already from"
    out.print(f"forgot {shown(done.ref)}: {line} {shown(done.file_path)}"
              + (f" and its {done.versions} versions from the history" if done.versions
                 else ""), highlight=False)


def _confirmed(question: str) -> bool:
    """The user's yes to ``question``; no answer (end of input, Ctrl-C) is a no."""
    try:
        return typer.confirm(question)
    except typer.Abort:
        err.print()  # the prompt's line ends
        return False


@app.command(name="export")
def export_(
    ctx: typer.Context,
    format_: Annotated[str, typer.Option(
        "--format", help="files: entry files as memory files; entries: memory files as "
                         "entry files.")],
    to: Annotated[Path, typer.Option("--to", help="Folder to write into (created).")],
    with_hits: Annotated[bool, typer.Option(
        "--with-hits", help="With --format entries: each line's recall count (kept in the "
                            "index, never in your files) as hc=.")] = False,
    vault: VaultOption = None,
) -> None:
    """Write the memory folder in the other format, losslessly for what dreamd wrote
    (dreamd export --format files --to ~/export)."""
    fmt = _exchange_format(format_, "--format")
    if with_hits and fmt != "entries":
        raise typer.BadParameter("--with-hits goes with --format entries (hc= is an entry "
                                 "field)", param_hint="--with-hits")
    with _app(ctx, **{"vault.path": vault}) as application:
        converted = entry_exchange.export_folder(application, fmt, with_hits=with_hits)
    written = entry_exchange.write_export(converted, to.expanduser())
    out.print(f"exported {len(converted.files)} file(s) as {fmt} to {shown(str(to))} "
              f"({len(written)} new)", highlight=False)
    _print_lossy(converted.lossy)


@app.command(name="import")
def import_(
    ctx: typer.Context,
    folder: Annotated[Path, typer.Argument(help="A folder of entry files or memory files.")],
    as_: Annotated[str, typer.Option(
        "--as", help="files: write memory files; entries: write entry files.")] = "files",
    vault: VaultOption = None,
) -> None:
    """Bring entry files and memory files into the memory folder, as one format."""
    fmt = _exchange_format(as_, "--as")
    with _app(ctx, **{"vault.path": vault}) as application:
        report = entry_exchange.import_folder(application, folder.expanduser(), fmt)
    out.print(f"imported {len(report.written)} file(s) as {fmt}; the running daemon indexes "
              "them, else run: dreamd sync", highlight=False)
    for copy in report.conflicts:
        err.print(f"dreamd: kept beside a file with other content: {shown(copy)}")
    _print_lossy(report.lossy)


def _exchange_format(value: str, option: str) -> entry_exchange.Format:
    if value not in ("entries", "files"):
        raise typer.BadParameter(f"{option} must be entries or files, got {value!r}")
    return "entries" if value == "entries" else "files"


def _print_lossy(lossy: tuple[tuple[str, str], ...]) -> None:
    for path, reason in lossy:
        err.print(f"dreamd: {shown(path)}: {shown(reason)}", highlight=False)


@app.command()
def history(
    ctx: typer.Context,
    memory: Annotated[str, typer.Argument(help="Memory id, name or file (also a deleted one).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print versions as JSON.")] = False,
    owner: OwnerOption = None,
    vault: VaultOption = None,
) -> None:
    """List every version of a memory: number, time, origin and what changed."""
    with _app(ctx, **{"vault.path": vault}) as application:
        versions = application.history(_owner(owner)).history(memory)
    if as_json:
        out.print_json(json.dumps(render.history_json(versions), ensure_ascii=False))
    else:
        render.print_history(out, versions)


def _lineage_service(application: App, owner: Owner | None) -> lineage_views.LineageService:
    service = application.memories(owner)
    return lineage_views.LineageService(
        memories=service.memories, find=service.find, versions=application.versions,
        writer=application.writer, memory_folder=application.settings.vault.memory_folder)


@app.command()
def lineage(
    ctx: typer.Context,
    memory: Annotated[str, typer.Argument(help="Memory id, name or file.")],
    canvas: Annotated[bool, typer.Option(
        "--canvas", help="Also draw it as an Obsidian canvas in the memory folder.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the lineage as JSON.")] = False,
    owner: OwnerOption = None,
    vault: VaultOption = None,
) -> None:
    """Show a memory's chain: what it superseded, what was merged into it, what it derives
    from and what derives from it, with dates and versions."""
    with _app(ctx, **{"vault.path": vault}) as application:
        application.require_vault("lineage")
        service = _lineage_service(application, _owner(owner))
        report = service.lineage(memory)
        drawn = service.write_canvas(report) if canvas else None
        if drawn is not None:  # indexed as any vault file (a check finds it in step)
            application.indexing.index_now([drawn.path])
    if as_json:
        out.print_json(json.dumps(lineage_views.lineage_json(report, drawn), ensure_ascii=False))
    else:
        lineage_views.print_lineage(out, report, drawn)


@app.command()
def diff(
    ctx: typer.Context,
    memory: Annotated[str, typer.Argument(help="Memory id, name or file.")],
    a: Annotated[int, typer.Argument(help="Version to compare from.", min=1)],
    b: Annotated[
        int | None, typer.Argument(help="Version to compare to (default: the file now).", min=1)
    ] = None,
    owner: OwnerOption = None,
    vault: VaultOption = None,
) -> None:
    """Show what changed between two versions of a memory (unified diff)."""
    with _app(ctx, **{"vault.path": vault}) as application:
        text = application.history(_owner(owner)).diff(memory, a, b)
    out.print(text or "no difference", markup=False, highlight=False, end="" if text else "\n")


@app.command()
def rollback(
    ctx: typer.Context,
    memory: Annotated[str, typer.Argument(help="Memory id, name or file (also a deleted one).")],
    to: Annotated[int, typer.Option("--to", help="The version to restore.", min=1)],
    owner: OwnerOption = None,
    vault: VaultOption = None,
) -> None:
    """Restore an old version of a memory as its newest version (reversible)."""
    with _app(ctx, **{"vault.path": vault}) as application:
        result = application.history(_owner(owner)).rollback(memory, to)
    render.print_rollback(out, result)


@app.command()
def check(
    ctx: typer.Context,
    vault_argument: VaultArgument = None,
    fix: Annotated[bool, typer.Option("--fix", help="Apply the arbiter's decisions.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    vault: VaultOption = None,
) -> None:
    """Compare the vault, the index and the memories' history; exit 1 when they drifted."""
    vault = _one_vault(vault_argument, vault)
    with _app(ctx, **{"vault.path": vault}) as application:
        application.indexing.require_indexed("check")
        service = application.consistency()
        report = service.check()
        partial = application.indexing.partial()  # the daemon at the first index
        waiting: tuple[str, ...] = ()
        if partial is not None:  # what it has not indexed yet is not drift to fix
            report, waiting = not_indexed_yet(report, application.store.file_index())
        repaired = service.fix(report, automatic_only=False) if fix and not report.clean \
            else None
        after = service.check() if repaired is not None and repaired.applied \
            and not repaired.deferred else None  # nothing applied: the report stands
    indexing = (partial, waiting) if partial is not None and waiting else None
    if as_json:
        data = render.check_json(report, repaired)
        if indexing is not None:
            data["indexing"] = {**indexing[0].as_json(), "not_indexed_yet": list(waiting)}
        if after is not None:
            data["after"] = render.check_json(after)
        out.print_json(json.dumps(data, ensure_ascii=False, default=str))
    else:
        render.print_check(out, report, indexing)
        if repaired is not None:
            render.print_fix(out, repaired)
            if after is not None:
                out.print("after the fix:")
                render.print_check(out, after)
    final = after if after is not None else report
    if repaired is not None and repaired.deferred:
        final = report if repaired.left else final
    # what `dreamd status` says of the last check: this one (contradictions are the
    # dream's to settle, as for the daemon's own checks)
    done = [f for f, _ in repaired.applied] if repaired is not None and final is report else []
    status_files.write_last_check(application.state_dir, status_files.check_record(
        reason="dreamd check", drift=report.counts(),
        fixed=len(repaired.applied) if repaired is not None else 0,
        left=[f.kind for f in final.findings if f not in done and f.kind != "contradiction"]))
    if not final.clean and (repaired is None or repaired.left or after is not None):
        raise typer.Exit(1)


DryRunOption = Annotated[bool, typer.Option("--dry-run", help="Show the plan as a diff; "
                                            "change nothing.")]
ForceOption = Annotated[bool, typer.Option("--force", help="Go ahead even when the plan changes "
                                           "more than dream.max_change_share of the memories.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]


def _dream(ctx: typer.Context, vault: Path | None, *, dry_run: bool, force: bool,
           as_json: bool, consolidate: bool, canvas: bool = False) -> None:
    what = "dream" if consolidate else "expire"
    drawn = None
    with _app(ctx, **{"vault.path": vault}) as application:
        application.indexing.require_indexed(what)
        report = application.dreamer().dream(dry_run=dry_run, force=force,
                                             consolidate=consolidate)
        if canvas and report.applied:
            drawn = _lineage_service(application, None).write_dream_canvas(
                report.plan.consolidation, report.plan.lifecycle, application.clock(),
                report.written)
            if drawn is not None:  # indexed as any vault file (a check finds it in step)
                application.indexing.index_now([drawn.path])
    if as_json:
        data = render.dream_json(report)
        if canvas:
            data["canvas"] = drawn.path if drawn is not None else None
            data["canvas_left"] = drawn.left if drawn is not None else None
        out.print_json(json.dumps(data, ensure_ascii=False))
    else:
        render.print_dream(out, report, what=what)
        if drawn is not None:
            out.print(shown(drawn.said()), highlight=False)
        elif canvas:
            out.print("nothing drawn: " + ("a dry run changes nothing" if dry_run
                                           else "the dream changed no memory"))


@app.command()
def dream(
    ctx: typer.Context, dry_run: DryRunOption = False, force: ForceOption = False,
    as_json: JsonOption = False, vault: VaultOption = None,
    canvas: Annotated[bool, typer.Option(
        "--canvas", help="Draw what the dream changed as an Obsidian canvas in the memory "
        "folder.")] = False,
) -> None:
    """Consolidate memories now: merge duplicates, supersede contradictions, archive and
    promote, rebuild MEMORY.md, write the diary. Nothing is ever deleted."""
    _dream(ctx, vault, dry_run=dry_run, force=force, as_json=as_json, consolidate=True,
           canvas=canvas)


graph_app = typer.Typer(help="The vault graph: notes, memories, tags and their links.",
                        no_args_is_help=True)
app.add_typer(graph_app, name="graph")


@graph_app.command("export")
def graph_export(
    ctx: typer.Context,
    fmt: Annotated[str, typer.Option(
        "--format", help="graphml (Gephi, yEd, Cytoscape) or json (networkx node-link).")
    ] = "graphml",
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Write to this file (default, or '-': standard output); "
        "never a file inside the vault, never over an existing file without --force.")
    ] = None,
    force: Annotated[bool, typer.Option(
        "--force", help="Replace the --output file when it exists.")] = False,
    vault: VaultOption = None,
) -> None:
    """Export the vault graph: notes, attachments, tags and memories with typed edges
    (links_to, embeds, tagged, supersedes, merged_into, derived_from)."""
    if fmt not in ("graphml", "json"):
        raise typer.BadParameter(f"{fmt!r} is not graphml or json", param_hint="--format")
    if output is not None and str(output) == "-":
        output = None  # '-' is standard output, as for every command-line tool
    with _app(ctx, **{"vault.path": vault}) as application:
        if output is not None:
            _safe_output(output, application.settings.vault.path, force=force)
        application.indexing.require_indexed("graph export")
        text = lineage_views.export_graph(application.store, fmt)  # type: ignore[arg-type]
    if output is None:
        _stdout().write(text)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as error:
        raise typer.BadParameter(f"cannot write {output}: {error.strerror or error}",
                                 param_hint="--output") from error
    out.print(f"wrote {shown(str(output))} ({len(text.encode('utf-8')):,} bytes)",
              highlight=False)


def _safe_output(output: Path, vault: Path | None, *, force: bool) -> None:
    """Refuse an export's ``output`` inside ``vault`` (dreamd never writes over what the
    user wrote there) or over an existing file without ``force``. Raises
    ``typer.BadParameter``."""
    where = output.expanduser().resolve()
    if vault is not None and where.is_relative_to(Path(vault).expanduser().resolve()):
        raise typer.BadParameter(f"{output} is inside the vault; write the export elsewhere",
                                 param_hint="--output")
    if where.exists() and not force:
        raise typer.BadParameter(f"{output} exists; add --force to replace it",
                                 param_hint="--output")


@app.command()
def promote(
    ctx: typer.Context,
    explain: Annotated[str, typer.Option(
        "--explain", metavar="KEY", help="The diary snippet's key (its first 4 characters or "
        "more, as DREAMS.md and dreamd status show them).")],
    vault: VaultOption = None,
) -> None:
    """Why a line of the diary was or was not promoted to a memory: each deep-sleep signal,
    the phase boost, the score and every gate, as the next dream would score it."""
    from daemon.app import sleep_cycle

    with _app(ctx, **{"vault.path": vault}) as application:
        found = sleep_cycle(application).explain(explain.strip())
    if found is None:
        raise MemoryNotFoundError(
            f"promote --explain {explain}: no diary snippet has a key starting so (give 4 "
            "characters or more; a dream's light sleep cuts the last days' daily notes)")
    render.print_explanation(out, found)


@app.command()
def expire(
    ctx: typer.Context, dry_run: DryRunOption = False, force: ForceOption = False,
    as_json: JsonOption = False, vault: VaultOption = None,
) -> None:
    """Apply expiration and lifecycle rules only (archive, broken links, promotion): what a
    dream does after merging."""
    _dream(ctx, vault, dry_run=dry_run, force=force, as_json=as_json, consolidate=False)


@app.command()
def restore(
    ctx: typer.Context,
    memory: Annotated[str, typer.Argument(help="Memory id, name or file.")],
    owner: OwnerOption = None,
    vault: VaultOption = None,
) -> None:
    """Bring an archived memory back (undo a dream's merge, supersession or archive)."""
    with _app(ctx, **{"vault.path": vault}) as application:
        service = application.memories(_owner(owner))
        stored = service.find(memory)
        taken = application.dreamer().restore(stored.path)
        if taken is None:
            meta = stored.note.memory
            why = ""
            if meta is not None and meta.expires is not None:
                why = (f" (it is hidden because its expires date, {meta.expires}, has passed: "
                       "edit or remove `expires` to bring it back)")
            out.print(f"{shown(stored.path)} is not archived; nothing to restore{shown(why)}")
            return
        service.after_change([stored.path, *(edit[0] for edit in taken.edits)])
    out.print(f"restored {shown(stored.path)}: it is live again "
              f"(dreamd history {shown(stored.path)} shows every version)")
    for path in taken.superseded:
        out.print(f"it is the current memory again: it supersedes {shown(path)} in turn "
                  "(valid_to today, every version kept; a dream archives that one as "
                  "superseded and leaves this one as restored)")
    for path in taken.unlinked:
        out.print(f"{shown(path)} (superseded itself) no longer names it in supersedes")


conflicts_app = typer.Typer(help="Conflicts the arbiter left for you to settle.",
                            invoke_without_command=True)
app.add_typer(conflicts_app, name="conflicts")


@conflicts_app.callback()
def conflicts(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print them as JSON.")] = False,
    vault: VaultOption = None,
) -> None:
    """List open conflicts, other conflict copies in the vault, and the memory pairs
    remember kept apart on a guess (possible duplicates and contradictions)."""
    if ctx.invoked_subcommand is not None:
        return
    with _app(ctx, **{"vault.path": vault}) as application:
        records = application.consistency().conflicts()
        copies = application.conflict_copies()
        pairs = application.memories().possible_pairs()
    if as_json:
        out.print_json(json.dumps(render.conflicts_json(records, copies, pairs),
                                  ensure_ascii=False))
    else:
        render.print_conflicts(out, records, copies, pairs)


@conflicts_app.command("resolve")
def conflicts_resolve(
    ctx: typer.Context,
    memory: Annotated[str, typer.Argument(help="Memory id (or the note's path).")],
    keep: Annotated[str | None, typer.Option(
        "--keep", help="A conflict copy: file, magma (the store's version, as in the "
        "conflict copy) or both.")] = None,
    as_: Annotated[str | None, typer.Option(
        "--as", help="A possible pair (dreamd check): same (merge them), changed (the newer "
        "supersedes the older) or different (two facts).")] = None,
    other: Annotated[str | None, typer.Option(
        "--with", help="The other memory of the pair, when it has several.")] = None,
    owner: OwnerOption = None,
    vault: VaultOption = None,
) -> None:
    """Settle a conflict (keep the file, the store's version, or both) or a possible pair
    that remember kept apart (same, changed or different)."""
    if (keep is None) == (as_ is None):
        raise typer.BadParameter("give --keep for a conflict copy or --as for a possible pair",
                                 param_hint="--keep/--as")
    if keep is not None and keep not in ("file", "magma", "both"):
        raise typer.BadParameter("must be file, magma or both", param_hint="--keep")
    if as_ is not None and as_ not in ("same", "changed", "different"):
        raise typer.BadParameter("must be same, changed or different", param_hint="--as")
    with _app(ctx, **{"vault.path": vault}) as application:
        if as_ is not None:
            message = application.memories(_owner(owner)).settle_pair(
                memory, as_, other=other)  # type: ignore[arg-type]
        else:
            message = application.consistency().resolve(memory, keep)  # type: ignore[arg-type]
    out.print(shown(message), highlight=False)


@app.command()
def mcp(
    ctx: typer.Context,
    vault: VaultOption = None,
    http: Annotated[
        bool, typer.Option("--http", help="Serve streamable HTTP on 127.0.0.1 with a bearer "
                                          "token instead of stdio.")
    ] = False,
    port: Annotated[
        int | None, typer.Option("--port", min=0, max=65535,
                                 help="HTTP port (default: mcp.port, 8765; 0 picks a free one).")
    ] = None,
    host: Annotated[
        str | None, typer.Option("--host", help="HTTP listen address; only 127.0.0.1 is "
                                                "accepted (loopback only).")
    ] = None,
    show_token: Annotated[
        bool, typer.Option("--show-token", help="Also print the HTTP bearer token on stderr.")
    ] = False,
    owner: Annotated[
        str | None, typer.Option("--owner", help="Serve this owner (user or user/agent): "
                                                 "others' memories stay invisible.")
    ] = None,
) -> None:
    """Serve the vault's memories to AI assistants over MCP (stdio, or --http on loopback).

    With --http, stderr shows the URL and where the bearer token is (see README, MCP).
    """
    if not http:
        given = [flag for flag, value in (("--port", port), ("--host", host)) if value is not None]
        given += ["--show-token"] if show_token else []
        if given:
            raise typer.BadParameter(f"{', '.join(given)} only applies with --http")
    with _app(ctx, **{"vault.path": vault, "mcp.port": port, "mcp.host": host}) as application:
        # (the SDK loads in seconds: a refusal first)
        from daemon.mcp_server import build_server, serve_stdio

        server = build_server(application, _owner(owner))
        sessions = application.sessions

        def session_started() -> None:  # the dream gate counts client sessions
            try:
                sessions.record("mcp")
            except OSError as error:
                err.print(f"dreamd: could not count the MCP session: {error}", markup=False)

        if not http:
            session_started()  # over stdio, one process serves one client session
            serve_stdio(server)
            return
        from daemon.mcp_http import TOKEN_FILE_NAME, load_or_create_token, serve_http

        token = load_or_create_token(os.environ, application.state_dir / TOKEN_FILE_NAME)

        def ready(url: str) -> None:  # the URL line comes last: it says "listening now"
            made = " (created just now, mode 0600)" if token.created else ""
            err.print(f"dreamd: bearer token: {token.source}{made}; clients send "
                      '"Authorization: Bearer <token>"', highlight=False, markup=False)
            if show_token:
                err.print(f"dreamd: token: {token.value}", highlight=False, markup=False)
            err.print(f"dreamd: MCP over HTTP at {url} (loopback only; Ctrl-C stops)",
                      highlight=False, markup=False)

        cfg = application.settings.mcp
        serve_http(server, host=cfg.host, port=cfg.port, token=token.value, on_ready=ready,
                   on_session=session_started)


@app.command()
def status(
    ctx: typer.Context,
    vault_argument: VaultArgument = None,
    vault: VaultOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print status as JSON.")] = False,
) -> None:
    """Vault, store location, counts, last sync and problem files."""
    vault = _one_vault(vault_argument, vault)
    with _app(ctx, **{"vault.path": vault}) as application:
        report = application.status()
        if as_json:
            out.print_json(json.dumps(render.status_json(report), ensure_ascii=False))
        else:
            render.print_status(out, report, application.zone)


@app.command()
def run(
    ctx: typer.Context,
    vault: Annotated[
        Path | None, typer.Argument(help="Vault folder (default: vault.path).",
                                   parser=_vault_folder)
    ] = None,
    vault_option: Annotated[
        Path | None, typer.Option("--vault", parser=_vault_folder,
                                 help="Vault folder (as the other commands take it; "
                                                  "the same as VAULT).")
    ] = None,
) -> None:
    """Run the daemon in the foreground: reconcile, then keep the index in step with the vault.

    Stop with Ctrl-C or SIGTERM (the current batch finishes first); SIGHUP reloads the config.
    """
    vault = _one_vault(vault, vault_option)
    opts = _options(ctx)
    overrides = {**opts.overrides, **({"vault.path": vault} if vault is not None else {})}
    loaded = load(opts.config_path, opts.env_name, overrides)
    configure_logging(level=loaded.settings.logging.level, fmt=loaded.settings.logging.format)
    application = _created(loaded, "run")
    from daemon.runner import Daemon
    from magma.gc_pause import bound_heap

    # a command line that names no vault may mean this one too when the settings name none
    # (the client checks the working folder and the vaults indexed at each run): served too
    implicit = load(opts.config_path, opts.env_name, opts.overrides).settings.vault.path is None
    _note_daemon_resolution(application, loaded.config_path, bare=vault is None or implicit,
                            implicit=implicit)
    # a person at a terminal gets a plain line beside the log events (a service's log, none)
    say = (lambda line: print(line, file=sys.stderr, flush=True)) \
        if sys.stderr.isatty() else None
    daemon = Daemon(application, reload=lambda: load(opts.config_path, opts.env_name, overrides),
                    say=say)
    bound_heap()  # a process of hours: the big blocks it frees go back (magma.gc_pause)
    raise typer.Exit(daemon.run())


@app.command()
def stop(
    ctx: typer.Context,
    vault_argument: VaultArgument = None,
    vault: VaultOption = None,
    wait: Annotated[float, typer.Option(
        "--wait", min=0.0, help="Seconds to wait for the daemon to exit.")] = 60.0,
) -> None:
    """Stop the daemon of a vault, as Ctrl-C in its terminal does (it finishes the commit it
    is writing first). Exit 0 when no daemon runs for the vault afterwards."""
    from config.settings import state_dir
    from daemon.stopping import stop_daemon
    from daemon.vault_folder import resolve_vault

    vault = _one_vault(vault_argument, vault)
    opts = _options(ctx)
    loaded = load(opts.config_path, opts.env_name,
                  {**opts.overrides, **({"vault.path": vault} if vault is not None else {})})
    root, _ = resolve_vault(loaded)
    settings = loaded.settings.model_copy(
        update={"vault": loaded.settings.vault.model_copy(update={"path": root})})
    outcome = stop_daemon(state_dir(settings), wait_s=wait)
    (out if outcome.exit_code == 0 else err).print(shown(outcome.line(root)), highlight=False)
    raise typer.Exit(outcome.exit_code)


def _one_vault(vault: Path | None, vault_option: Path | None) -> Path | None:
    """The vault given as VAULT or ``--vault`` (``sync``, ``run``, ``status`` and ``check``
    take both); two different ones are refused (``typer.BadParameter``)."""
    if vault is not None and vault_option is not None and vault != vault_option:
        raise typer.BadParameter(f"two vaults given: {vault} and --vault {vault_option}",
                                 param_hint="VAULT")
    return vault if vault is not None else vault_option


def _note_daemon_resolution(application: App, config_file: Path, *, bare: bool,
                            implicit: bool) -> None:
    """Record the daemon's own settings for the command lines that name its vault the way
    it was started (``--vault <its folder>``), and for those that name none when they may
    resolve to it (``bare``: its vault came from the settings, or the settings name none:
    ``implicit``, which the client checks against the working folder at each run), so their
    first run already asks it."""
    global _invocation
    started = _invocation
    if started is None:
        return
    shapes = [str(application.vault_root)] + ([None] if bare else [])
    for vault in shapes:
        _invocation = started._replace(command="", args=(), vault=vault)
        _note_resolution(application, config_file, implicit=implicit and vault is None)
    _invocation = started


@service_app.command("install")
def service_install(
    ctx: typer.Context,
    vault: Annotated[Path | None, typer.Argument(help="Vault folder (default: vault.path).",
                                   parser=_vault_folder)]
    = None,
    dry_run: Annotated[bool, typer.Option(help="Print the unit and commands only.")] = False,
) -> None:
    """Install and start dreamd as a systemd user service (Linux) or launchd agent (macOS)."""
    result = _service_plan(ctx, vault, action="service install")
    from daemon import service

    _print_lines(service.install(result, dry_run=dry_run).lines())


@service_app.command("uninstall")
def service_uninstall(
    ctx: typer.Context,
    vault: Annotated[Path | None, typer.Argument(help="Vault folder (default: vault.path).",
                                   parser=_vault_folder)]
    = None,
    dry_run: Annotated[bool, typer.Option(help="Print the commands only.")] = False,
) -> None:
    """Stop and remove the service of a vault."""
    from daemon import service

    _print_lines(service.uninstall(_service_plan(ctx, vault), dry_run=dry_run).lines())


@service_app.command("status")
def service_status(
    ctx: typer.Context,
    vault: Annotated[Path | None, typer.Argument(help="Vault folder (default: vault.path).",
                                   parser=_vault_folder)]
    = None,
) -> None:
    """Whether the service of a vault is installed and running."""
    from daemon import service

    _print_lines(service.service_status(_service_plan(ctx, vault)).lines())


def _service_plan(ctx: typer.Context, vault: Path | None, *, action: str | None = None) -> Any:
    """The service of a vault; ``action`` refuses a path that is not a vault folder (install),
    ``None`` plans it all the same (status and uninstall of a vault deleted since)."""
    from daemon import service

    opts = _options(ctx)
    loaded = load(opts.config_path, opts.env_name,
                  {**opts.overrides, **({"vault.path": vault} if vault else {})})
    application = _created(loaded, action)
    return service.plan_service(
        application.vault_root,
        config_path=loaded.config_path if loaded.config_exists else None,
        env_name=loaded.profile,
    )


def _print_lines(lines: list[str]) -> None:
    for line in lines:
        out.print(shown(line), highlight=False)


@app.command()
def doctor(
    ctx: typer.Context,
    vault: VaultOption = None,
) -> None:
    """Check the vault, the watch limit, the config, the store, disk space, the write mode
    (Obsidian CLI or direct, and why) and the service."""
    from ccb.obsidian_cli import WriteRouter
    from config.settings import Settings
    from daemon.app import make_write_router
    from daemon.doctor_checks import run_checks

    opts = _options(ctx)
    overrides = {**opts.overrides, **({"vault.path": vault} if vault else {})}

    def settings() -> Any:
        loaded = load(opts.config_path, opts.env_name, overrides)
        application = _created(loaded, None)  # a missing vault is a check that fails
        return application.settings_with_vault

    def write_router(resolved: Settings) -> WriteRouter:
        assert resolved.vault.path is not None  # run_checks asks only with a vault
        return make_write_router(resolved, resolved.vault.path)

    checks = run_checks(settings, config_path=opts.config_path, env_name=opts.env_name,
                        write_router=write_router)
    marks = {"ok": "[green]ok[/]", "warn": "[yellow]warn[/]", "fail": "[red]FAIL[/]"}
    for check in checks:
        out.print(f"{marks[check.status]:>6} {check.name}: {shown(check.detail)}",
                  highlight=False)
        if check.hint:
            out.print(f"       → {shown(check.hint)}", highlight=False)
    if any(check.status == "fail" for check in checks):
        raise typer.Exit(1)


@config_app.command("show")
def config_show(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Every setting with its value and the source it came from."""
    opts = _options(ctx)
    loaded = load(opts.config_path, opts.env_name, opts.overrides)
    rows = render.config_rows(loaded)
    if as_json:
        out.print_json(json.dumps([{"key": k, "value": v, "source": s} for k, v, s in rows],
                                  ensure_ascii=False, default=str))
        return
    title = f"{loaded.config_path} (profile: {loaded.profile or 'default'})"
    if not out.is_terminal:  # pipes and files get whole values, one setting per line
        out.print(f"# {title}", highlight=False)
        for key, value, source in rows:
            out.print(f"{key} = {render.display_value(value)}  # {source}",
                      highlight=False, markup=False)
        return
    table = Table(title=title)
    for column in ("key", "value", "source"):
        table.add_column(column)
    for key, value, source in rows:
        table.add_row(key, shown(render.display_value(value)), shown(source))
    out.print(table)


@config_app.command("validate")
def config_validate(ctx: typer.Context) -> None:
    """Load and validate the configuration; exit non-zero with the key and file on error."""
    opts = _options(ctx)
    loaded = load(opts.config_path, opts.env_name, opts.overrides)
    if loaded.config_exists:
        out.print(f"ok: {shown(str(loaded.config_path))}, "
                  f"profile {loaded.profile or 'default'}", highlight=False)
    else:
        out.print(f"ok: no config file at {shown(str(loaded.config_path))}; built-in "
                  "defaults apply (dreamd init VAULT writes one there)", highlight=False)
    for name in loaded.ignored_env_vars:
        err.print(f"warning: {shown(name)} names no setting and is ignored", highlight=False)


@config_app.command("path")
def config_path(ctx: typer.Context) -> None:
    """Print the config file dreamd reads (whether or not it exists)."""
    opts = _options(ctx)
    out.print(str(App.config_path(opts.config_path)), highlight=False)


def main() -> None:
    """Console-script entry point: the daemon answers when it serves this vault
    (:mod:`daemon.entry`), else :func:`run_here`."""
    from daemon.entry import main as entry

    entry()


def run_here(why: str | None = None) -> None:
    """Run the command line in this process, mapping dreamd errors to exit codes; ``why``
    (the daemon did not answer) is said first on stderr, except by a hook."""
    global _invocation
    invocation = _invocation = client.parse_invocation(sys.argv[1:])
    hook = invocation is not None and invocation.hook
    if why and not hook:
        err.print(f"dreamd: {shown(why)}; answering in-process", highlight=False)
    if hook:
        _run_hook(invocation)
        return
    try:
        app()  # standalone: typer prints usage errors itself and exits with code 2
    except DreamdError as error:
        err.print(f"dreamd: {shown(str(error), one_line=True)}", highlight=False)
        sys.exit(exit_code_for(error))
    except KeyboardInterrupt:
        err.print("dreamd: interrupted")
        sys.exit(130)


def _run_hook(invocation: client.Invocation | None = None) -> None:
    """``dreamd context --hook`` (or ``flush --hook``) as a Claude Code hook: whatever
    happens — a bad option, a broken store, input that is not JSON — the exit code is 0
    (Claude Code blocks the prompt on exit 2 and shows an error on others) and a failure is
    one line on stderr."""
    try:
        app(standalone_mode=False)
    except SystemExit:
        pass
    except Exception as error:
        text = str(error) if isinstance(error, DreamdError | typer.BadParameter) \
            else f"{type(error).__name__}: {error}"
        command = invocation.command if invocation is not None else "context"
        err.print(f"dreamd {command}: {shown(text[:500])}", highlight=False)
    sys.exit(0)


#: The click exceptions of the click typer runs on (typer ships its own copy; these are its
#: public ``BadParameter``'s bases).
_USAGE_ERROR: type[Any] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")
_CLICK_EXCEPTION: type[Any] = next(c for c in typer.BadParameter.__mro__
                                   if c.__name__ == "ClickException")


@functools.cache
def _click_command() -> Any:
    """The click command typer builds from :data:`app` (tens of ms each time typer does),
    built once per daemon."""
    return typer.main.get_command(app)


@dataclass(frozen=True, slots=True)
class ServedAnswer:
    """What a command run for a client printed, and its exit code."""

    exit_code: int
    stdout: str
    stderr: str


def _client_console(buffer: io.StringIO, terminal: dict[str, Any]) -> Console:
    """A console writing into ``buffer`` the way the client's own would write to its
    terminal (or pipe): width, colour and ``NO_COLOR`` as the client reported them."""
    tty = terminal.get("tty") is True
    columns = terminal.get("columns")
    given = terminal.get("vars")
    env: dict[str, Any] = given if isinstance(given, dict) else {}
    no_color = "NO_COLOR" in env
    color: Any = None
    if tty and not no_color:
        color = "truecolor" if env.get("COLORTERM") in ("truecolor", "24bit") else \
            "256" if "256" in str(env.get("TERM", "")) else "standard"
    if not (isinstance(columns, int) and columns > 0):
        given_columns = str(env.get("COLUMNS", ""))
        columns = int(given_columns) if given_columns.isdigit() and int(given_columns) else None
    return Console(file=buffer, force_terminal=tty, color_system=color, no_color=no_color,
                   width=columns,
                   soft_wrap=True, force_interactive=False)


def serve_command(application: App, argv: list[str], stdin: str | None,
                  terminal: dict[str, Any]) -> ServedAnswer | None:
    """Run one command line (``argv`` from the command name on) for a client of the
    daemon, against the daemon's ``application``, capturing what it prints.

    Returns ``None`` for a usage error (the client's own CLI prints typer's message, which
    costs it nothing to produce). Never raises: an unexpected error is one line on stderr and
    exit code 1 (0 for ``context --hook``, as in-process). Not re-entrant across threads
    with one ``application``: the daemon serialises calls."""
    out_buffer, err_buffer = io.StringIO(), io.StringIO()
    served = _Served(application, stdin, _client_console(out_buffer, terminal),
                     _client_console(err_buffer, terminal), out_buffer)
    hook = bool(argv) and argv[0] == "context" and "--hook" in argv
    token = _served.set(served)
    try:
        code = _click_command().main(args=argv, prog_name="dreamd", standalone_mode=False)
        code = code if isinstance(code, int) else 0
    except _USAGE_ERROR:
        if not hook:
            return None
        code = 0
    except _CLICK_EXCEPTION as error:
        served.err.print(shown(f"Error: {error.format_message()}"), highlight=False)
        code = error.exit_code
    except typer.Abort:
        served.err.print("Aborted!", highlight=False)
        code = 1
    except DreamdError as error:
        served.err.print(f"dreamd: {shown(str(error), one_line=True)}", highlight=False)
        code = exit_code_for(error)
    except SystemExit as error:
        code = error.code if isinstance(error.code, int) else 1
    except Exception as error:  # a bug must not take the daemon down with it
        served.err.print(f"dreamd: {shown(f'{type(error).__name__}: {error}'[:500])}",
                         highlight=False)
        code = 1
    finally:
        _served.reset(token)
    return ServedAnswer(0 if hook else code, out_buffer.getvalue(), err_buffer.getvalue())


# every command is registered above: their help as whole paragraphs (daemon.help_text)
reflow_help(app)
