"""Walk a vault: which files dreamd keeps, which it ignores, and reading one note safely.

:meth:`VaultFilter.is_ignored` is the one pure rule set for "is this path part of the
vault?"; the scan uses it, and the watcher reuses it on event paths. The walk itself uses
``os.scandir`` (one ``stat`` per kept file, none per ignored one, no file contents read).
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path

import structlog

from ccb.model import ConflictCopy, FileEntry, FileKind, Note, Problem, ScanResult
from ccb.parse import detect_conflict_copy, parse_note
from config.errors import NoteParseError, VaultError

__all__ = [
    "NOTE_SUFFIX",
    "VaultFilter",
    "is_temp_file_name",
    "load_user_ignore_filters",
    "read_note",
    "read_note_bytes",
    "scan_paths",
    "scan_vault",
    "special_file_reason",
    "walked_path",
]

log = structlog.get_logger(__name__)

#: Files with this suffix (any case) are notes; everything else is an attachment.
NOTE_SUFFIX = ".md"
#: The sort key of the walk's entries (a C getter, no lambda call per file).
_PATH = attrgetter("path")

# Editor and sync-tool temporary names (vim: ``4913``, ``*~``, ``*.swp``/``*.swo``/``*.swx``;
# GNOME/GIO: ``.goutputstream-*``; browsers: ``*.part``, ``*.crdownload``; Syncthing:
# ``.syncthing.*.tmp``; iCloud placeholders ``.X.md.icloud``; generic ``*.tmp``/``*.new``) and
# dreamd's own atomic-write temp files (``*.dreamd-tmp``). Dot-names are ignored anyway.
_TEMP_SUFFIXES = (
    "~",
    ".tmp",
    ".new",
    ".swp",
    ".swo",
    ".swx",
    ".part",
    ".crdownload",
    ".dreamd-tmp",
)
_IGNORED_DIR_NAMES = frozenset({"node_modules", "__pycache__"})
_IGNORED_FILE_NAMES = frozenset({"4913", "Thumbs.db", "desktop.ini"})


def is_temp_file_name(name: str) -> bool:
    """True when the base ``name`` is an editor/sync/dreamd temporary file (see above)."""
    return (
        name in _IGNORED_FILE_NAMES
        or name.lower().endswith(_TEMP_SUFFIXES)
        or name.startswith(".goutputstream-")
    )


def _glob_to_regex(pattern: str) -> re.Pattern[str]:
    """``**`` crosses folders, ``*``/``?`` do not, ``[...]`` is a class; anchored."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif ch == "*":
            out.append("[^/]*")
            i += 1
        elif ch == "?":
            out.append("[^/]")
            i += 1
        elif ch == "[":
            end = pattern.find("]", i + 2)
            if end < 0:
                out.append(re.escape(ch))
                i += 1
            else:
                body = pattern[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end + 1
        else:
            out.append(re.escape(ch))
            i += 1
    return re.compile("".join(out) + r"\Z", re.S)


@dataclass(frozen=True, slots=True)
class _Glob:
    regex: re.Pattern[str]
    anchored: bool  # pattern has a "/": matched against the path and its leading folders
    literal: str | None = None  # an anchored pattern without wildcards, e.g. Memory/MEMORY.md

    def matches(self, rel_path: str) -> bool:
        if self.literal is not None:  # the same answer as the regex, without splitting
            return rel_path == self.literal or rel_path.startswith(self.literal + "/")
        parts = rel_path.split("/")
        if self.anchored:
            return any(self.regex.match("/".join(parts[: n + 1])) for n in range(len(parts)))
        return any(self.regex.match(part) for part in parts)


def _compile_globs(patterns: Iterable[str]) -> tuple[_Glob, ...]:
    globs = []
    for pattern in patterns:
        cleaned = pattern.strip().strip("/")
        if cleaned:
            anchored = "/" in cleaned
            plain = anchored and not any(ch in cleaned for ch in "*?[]\\")
            globs.append(_Glob(_glob_to_regex(cleaned), anchored, cleaned if plain else None))
    return tuple(globs)


def _compile_user_filter(entry: str) -> re.Pattern[str] | str | None:
    """Obsidian "Excluded files": ``/regex/`` or a plain path prefix; a bad regex → None."""
    if len(entry) >= 2 and entry.startswith("/") and entry.endswith("/"):
        try:
            return re.compile(entry[1:-1])
        except re.error:
            return None
    return entry or None


@dataclass(frozen=True, slots=True)
class VaultFilter:
    """The vault's ignore rules (pure).

    ``config_folder`` is Obsidian's config folder (default ``.obsidian``). ``exclude`` and
    ``include`` are globs (``**`` crosses folders; a pattern without ``/`` matches any one path
    component, one with ``/`` is anchored at the vault root and also matches leading folders).
    ``ignore_filters`` are Obsidian's ``userIgnoreFilters`` (``app.json``): plain prefixes of
    the vault path, or ``/regex/`` entries searched in the path.
    """

    config_folder: str = ".obsidian"
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    ignore_filters: tuple[str, ...] = ()
    _exclude_globs: tuple[_Glob, ...] = field(init=False, repr=False, compare=False)
    _include_globs: tuple[_Glob, ...] = field(init=False, repr=False, compare=False)
    _user_filters: tuple[re.Pattern[str] | str, ...] = field(init=False, repr=False, compare=False)
    #: the ``exclude`` globs without wildcards as ``(path, path + "/")`` (e.g. dreamd's own
    #: ``Memory/MEMORY.md``), asked of every file of a walk without a call per glob, and the
    #: other globs
    _exclude_literals: tuple[tuple[str, str], ...] = field(init=False, repr=False, compare=False)
    _exclude_wild: tuple[_Glob, ...] = field(init=False, repr=False, compare=False)
    _has_patterns: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        excluded = _compile_globs(self.exclude)
        object.__setattr__(self, "_exclude_globs", excluded)
        object.__setattr__(self, "_exclude_literals", tuple(
            (g.literal, g.literal + "/") for g in excluded if g.literal is not None))
        object.__setattr__(self, "_exclude_wild", tuple(g for g in excluded if g.literal is None))
        object.__setattr__(self, "_include_globs", _compile_globs(self.include))
        compiled = (_compile_user_filter(entry) for entry in self.ignore_filters)
        object.__setattr__(self, "_user_filters", tuple(f for f in compiled if f is not None))
        object.__setattr__(self, "_has_patterns", bool(
            self._exclude_globs or self._include_globs or self._user_filters))

    @classmethod
    def for_vault(
        cls,
        root: Path,
        *,
        config_folder: str = ".obsidian",
        include: Iterable[str] = (),
        exclude: Iterable[str] = (),
    ) -> VaultFilter:
        """A filter with the vault's own excluded files from ``<root>/<config_folder>/app.json``.

        A missing or unreadable ``app.json`` gives no extra filters (logged, never raised).
        """
        return cls(
            config_folder=config_folder,
            include=tuple(include),
            exclude=tuple(exclude),
            ignore_filters=load_user_ignore_filters(root, config_folder),
        )

    def is_ignored_by_rules(self, rel_path: str, is_dir: bool = False) -> bool:
        """Like :meth:`is_ignored` but without the conflict-copy rule."""
        path = rel_path.strip("/")
        if not path:
            return False
        config = self.config_folder.strip("/")
        if config and (path == config or path.startswith(config + "/")):
            return True
        parts = path.split("/")
        for part in parts[:-1]:
            if part.startswith(".") or part in _IGNORED_DIR_NAMES:
                return True
        return self._ignores_name(parts[-1], is_dir) or self._ignores_by_patterns(path, is_dir)

    def _ignores_name(self, name: str, is_dir: bool) -> bool:
        """Rules on the base name alone (the walk has already checked the parents)."""
        if name.startswith("."):
            return True
        if is_dir:
            return name in _IGNORED_DIR_NAMES
        return is_temp_file_name(name)

    def _ignores_by_patterns(self, path: str, is_dir: bool) -> bool:
        """``exclude`` globs, the vault's ``userIgnoreFilters``, and ``include`` (files only)."""
        for literal, folder in self._exclude_literals:  # _Glob.matches of a literal
            if path == literal or path.startswith(folder):
                return True
        if self._exclude_wild and any(glob.matches(path) for glob in self._exclude_wild):
            return True
        if self._user_filters and self._matches_user_filter(path, is_dir):
            return True
        return (
            not is_dir
            and bool(self._include_globs)
            and not any(glob.matches(path) for glob in self._include_globs)
        )

    def _walk_ignores(self, name: str, rel_path: str, is_dir: bool) -> bool:
        """:meth:`is_ignored_by_rules` for a child of a folder that is itself kept."""
        if self._ignores_name(name, is_dir):
            return True
        if rel_path == self.config_folder:
            return True
        return self._has_patterns and self._ignores_by_patterns(rel_path, is_dir)

    def _matches_user_filter(self, path: str, is_dir: bool) -> bool:
        probe = path + "/" if is_dir else path
        for user_filter in self._user_filters:
            if isinstance(user_filter, str):
                if probe.startswith(user_filter):
                    return True
            elif user_filter.search(path):
                return True
        return False

    def is_ignored(self, rel_path: str, is_dir: bool = False) -> bool:
        """True when vault-relative POSIX ``rel_path`` is not part of the vault for dreamd.

        Ignored: the config folder, every dot-folder/dot-file (``.trash``, ``.git``,
        ``.stfolder``, ``.stversions``, ``.syncthing.*.tmp``, iCloud ``.X.md.icloud``),
        ``node_modules``, editor/sync/dreamd temp files (:func:`is_temp_file_name`), sync
        conflict copies (:func:`ccb.parse.detect_conflict_copy`), ``exclude`` globs, the
        vault's ``userIgnoreFilters``; when ``include`` is set, files matching none of it.
        ``include`` never hides a folder (``is_dir=True``).
        """
        if self.is_ignored_by_rules(rel_path, is_dir):
            return True
        return not is_dir and detect_conflict_copy(rel_path.strip("/")) is not None


def load_user_ignore_filters(root: Path, config_folder: str = ".obsidian") -> tuple[str, ...]:
    """``userIgnoreFilters`` of ``<root>/<config_folder>/app.json`` (Obsidian "Excluded files").

    Returns the entries as written; ``()`` when the file is missing, unreadable or malformed
    (logged as ``vault.app_json_unreadable``).
    """
    app_json = root / config_folder / "app.json"
    try:
        data = json.loads(app_json.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        return ()
    except (OSError, ValueError, RecursionError) as exc:
        log.warning("vault.app_json_unreadable", path=str(app_json), reason=str(exc))
        return ()
    filters = data.get("userIgnoreFilters") if isinstance(data, dict) else None
    if not isinstance(filters, list):
        return ()
    return tuple(entry for entry in filters if isinstance(entry, str) and entry)


# --------------------------------------------------------------------------- walk


def realpath_under(real_root: str, rel_path: str) -> str:
    """``os.path.realpath`` of vault-relative POSIX ``rel_path`` under ``real_root`` (a path
    with no symlink in it: ``os.path.realpath`` of the vault), looking only at the components
    of ``rel_path``: one ``lstat`` each when none is a symlink, ``.``, ``..``, empty or missing
    (else ``os.path.realpath(os.path.join(real_root, rel_path))``, as before: an absolute
    ``rel_path`` is itself). A dream over 10,000
    memories resolves some 50,000 paths, each ``lstat``-ing every folder above the vault too
    (≈4 of 7 components of a vault path; 13 s of a profiled dream's 340)."""
    parts = rel_path.split("/")
    path = real_root.rstrip(os.sep)
    for part in parts:
        path = f"{path}{os.sep}{part}"
        try:
            plain = part not in ("", ".", "..") and not stat.S_ISLNK(os.lstat(path).st_mode)
        except (OSError, ValueError):
            plain = False
        if not plain:
            return os.path.realpath(os.path.join(real_root, rel_path))  # noqa: PTH118
    return path


def _inside(real_root: str, real_path: str) -> bool:
    return real_path == real_root or real_path.startswith(real_root.rstrip(os.sep) + os.sep)


@dataclass(slots=True)
class _Walk:
    real_root: str
    vfilter: VaultFilter
    entries: list[FileEntry] = field(default_factory=list)
    conflicts: list[ConflictCopy] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def run(self, root_path: str, root_id: tuple[int, int]) -> None:
        self.run_prefix(root_path, "", frozenset({root_id}))

    def run_prefix(
        self, folder_path: str, prefix: str, ancestors: frozenset[tuple[int, int]]
    ) -> None:
        """Walk ``folder_path`` whose vault-relative path is ``prefix`` (``""`` or ``"a/b/"``)."""
        # Stack of (absolute folder, vault-relative prefix, ancestor folder ids).
        stack: list[tuple[str, str, frozenset[tuple[int, int]]]] = [
            (folder_path, prefix, ancestors)
        ]
        while stack:
            folder, prefix, ancestors = stack.pop()
            try:
                with os.scandir(folder) as listing:
                    children = list(listing)
            except OSError as exc:
                self.problems.append(
                    Problem(path=prefix.rstrip("/") or ".", kind="read", reason=_os_reason(exc))
                )
                continue
            for child in children:
                name = child.name
                rel = prefix + name
                if not (name.isascii() or _utf8_name(name)):
                    # a name in another encoding ("caf\xe9.md" from an old archive): no link
                    # can name it and no index row can hold it; reported, left alone
                    self.problems.append(Problem(
                        path=os.fsencode(rel).decode("utf-8", "backslashreplace"),
                        kind="decode", reason="file name is not valid UTF-8; not indexed"))
                    continue
                try:
                    if child.is_file(follow_symlinks=False):  # most children: no other test
                        self._keep_file(name, rel, None, child)
                    else:
                        self._visit(child, rel, ancestors, stack)
                except OSError as exc:
                    self.problems.append(Problem(path=rel, kind="read", reason=_os_reason(exc)))

    def _visit(
        self,
        child: os.DirEntry[str],
        rel: str,
        ancestors: frozenset[tuple[int, int]],
        stack: list[tuple[str, str, frozenset[tuple[int, int]]]],
    ) -> None:
        if child.is_symlink():
            self._visit_symlink(child, rel, ancestors, stack)
            return
        if child.is_dir(follow_symlinks=False):
            if not self.vfilter._walk_ignores(child.name, rel, is_dir=True):
                st = child.stat(follow_symlinks=False)
                stack.append((child.path, rel + "/", ancestors | {(st.st_dev, st.st_ino)}))
            return
        if not child.is_file(follow_symlinks=False):
            # a FIFO, socket or device: never opened (reading a FIFO blocks); said, not indexed
            if not self.vfilter._walk_ignores(child.name, rel, is_dir=False):
                mode = child.stat(follow_symlinks=False).st_mode
                self.problems.append(Problem(path=rel, kind="skipped",
                                             reason=special_file_reason(mode)))
            return
        self._keep_file(child.name, rel, None, child)

    def _visit_symlink(
        self,
        child: os.DirEntry[str],
        rel: str,
        ancestors: frozenset[tuple[int, int]],
        stack: list[tuple[str, str, frozenset[tuple[int, int]]]],
    ) -> None:
        # Decide on the link's own name first: an ignored name is never resolved.
        if child.name.startswith("."):
            return
        target = os.path.realpath(child.path)
        if not _inside(self.real_root, target):
            self.problems.append(
                Problem(path=rel, kind="symlink", reason=f"points outside the vault ({target})")
            )
            return
        try:
            st = Path(child.path).stat()
        except OSError as exc:
            self.problems.append(
                Problem(path=rel, kind="symlink", reason=f"broken link: {_os_reason(exc)}")
            )
            return
        is_dir = stat.S_ISDIR(st.st_mode)
        if self.vfilter._walk_ignores(child.name, rel, is_dir=is_dir):
            return
        if is_dir and (st.st_dev, st.st_ino) in ancestors:
            self.problems.append(
                Problem(path=rel, kind="symlink", reason="loop: points to a parent folder")
            )
            return
        named = walked_path(self.real_root, self.vfilter, target, is_dir=is_dir)
        if named is not None:
            # a second name for a file or folder the walk reaches under its own: indexed once
            self.problems.append(Problem(path=rel, kind="symlink", reason=f"link to {named}"))
        elif is_dir:
            stack.append((child.path, rel + "/", ancestors | {(st.st_dev, st.st_ino)}))
        elif stat.S_ISREG(st.st_mode):
            self._keep_file(child.name, rel, st, None)
        else:
            self.problems.append(Problem(path=rel, kind="skipped",
                                         reason=special_file_reason(st.st_mode)))

    def look_at(self, rel: str, root_id: tuple[int, int]) -> None:
        """Keep or walk the one vault path ``rel`` (its name and folders not ignored), as the
        walk of its folder would: :func:`scan_paths`."""
        absolute = str(Path(self.real_root).joinpath(*rel.split("/")))
        try:
            st = os.lstat(absolute)
        except OSError:
            return  # gone: the caller treats it as deleted
        target = os.path.realpath(absolute)
        if not _inside(self.real_root, target):  # the path or one of its folders links out
            self.problems.append(
                Problem(path=rel, kind="symlink", reason=f"points outside the vault ({target})")
            )
            return
        if target != absolute:  # a link, or a path through a linked folder
            try:
                st = Path(target).stat()
            except OSError:
                return  # broken link
            named = walked_path(self.real_root, self.vfilter, target,
                                is_dir=stat.S_ISDIR(st.st_mode))
            if named is not None:
                self.problems.append(Problem(path=rel, kind="symlink", reason=f"link to {named}"))
                return
        if stat.S_ISDIR(st.st_mode):
            self.run_prefix(absolute, rel + "/", frozenset({root_id, (st.st_dev, st.st_ino)}))
        elif stat.S_ISREG(st.st_mode):
            self._keep_file(rel.rsplit("/", 1)[-1], rel, st, None)
        else:
            self.problems.append(Problem(path=rel, kind="skipped",
                                         reason=special_file_reason(st.st_mode)))

    def _keep_file(
        self, name: str, rel: str, st: os.stat_result | None, child: os.DirEntry[str] | None
    ) -> None:
        vfilter = self.vfilter  # VaultFilter._walk_ignores of a file, without two calls a file
        if name.startswith(".") or is_temp_file_name(name) or rel == vfilter.config_folder or (
                vfilter._has_patterns and vfilter._ignores_by_patterns(rel, False)):
            return
        original = detect_conflict_copy(rel) if "onflict" in name else None
        if original is not None:
            self.conflicts.append(ConflictCopy(path=rel, conflict_of=original))
            return
        if st is None:
            assert child is not None
            st = child.stat(follow_symlinks=False)
        kind: FileKind = "note" if name[-3:].lower() == NOTE_SUFFIX else "attachment"
        self.entries.append(
            FileEntry(rel, st.st_size, st.st_mtime_ns, kind)
        )


def walked_path(real_root: str, vfilter: VaultFilter, target: str, *,
                is_dir: bool = False) -> str | None:
    """The vault-relative path (``"Real.md"``, ``"Notes/"`` for a folder) under which the
    walk of ``real_root`` reaches ``target`` (an absolute path with no symlinks in it,
    ``os.path.realpath``), or ``None`` when the walk never reaches it there: outside the
    vault, the vault itself, or ignored by ``vfilter``. A symlink naming such a path is a
    second name for a note (or folder) indexed under its own: the walk skips the link."""
    if not _inside(real_root, target) or target == real_root:
        return None
    rel = os.path.relpath(target, real_root).replace(os.sep, "/")
    if vfilter.is_ignored(rel, is_dir=is_dir):
        return None
    return rel + "/" if is_dir else rel


def special_file_reason(mode: int) -> str:
    """Why a file that is neither a regular file nor a folder (``st_mode``) is skipped."""
    if stat.S_ISFIFO(mode):
        what = "a FIFO (named pipe)"
    elif stat.S_ISSOCK(mode):
        what = "a socket"
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        what = "a device"
    else:
        what = "something else"
    return f"{what}, not a regular file: never opened"


def _utf8_name(name: str) -> bool:
    """Can ``name`` (as ``os.scandir`` decoded it, undecodable bytes as surrogates) be
    written as UTF-8?"""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _os_reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def scan_vault(root: Path, vfilter: VaultFilter) -> ScanResult:
    """Walk the vault at ``root`` and return the files dreamd keeps, sorted by path.

    ``.md`` files are ``"note"``, others ``"attachment"``; ignored folders are pruned
    before they are listed. A symlink to a file or folder the walk reaches under its own
    path is a second name for it: skipped, ``Problem(kind="symlink", reason="link to
    Real.md")``, so a note is indexed once, under its real path. Other symlinks are
    followed only when their target stays inside the vault (``Problem(kind="symlink")``
    otherwise, and for loops and broken links). A FIFO, socket or device is never opened
    (``Problem(kind="skipped")``). An unreadable subfolder gives ``Problem(kind="read")``
    and the walk goes on. Conflict copies go to ``conflict_copies``, not ``entries``.
    Reads no file contents.

    Raises ``VaultError`` when ``root`` is missing, unreadable or not a folder.
    """
    try:
        real_root = os.path.realpath(root)
        root_stat = Path(real_root).stat()
    except OSError as exc:
        raise VaultError(f"ccb: scan {root}: vault folder not found ({_os_reason(exc)})") from exc
    if not stat.S_ISDIR(root_stat.st_mode):
        raise VaultError(f"ccb: scan {root}: not a folder")
    try:
        os.scandir(real_root).close()
    except OSError as exc:
        raise VaultError(f"ccb: scan {root}: cannot list the vault ({_os_reason(exc)})") from exc
    walk = _Walk(real_root=real_root, vfilter=vfilter)
    walk.run(real_root, (root_stat.st_dev, root_stat.st_ino))
    return ScanResult(
        entries=tuple(sorted(walk.entries, key=_PATH)),
        conflict_copies=tuple(sorted(walk.conflicts, key=lambda copy: copy.path)),
        problems=tuple(sorted(walk.problems, key=lambda problem: problem.path)),
    )


def scan_paths(root: Path, vfilter: VaultFilter, rel_paths: Iterable[str]) -> ScanResult:
    """Look at some paths of the vault only, with the same rules as :func:`scan_vault`.

    For the watcher: each vault-relative path that exists is kept (a file) or walked (a
    folder, e.g. one renamed into place, whose children arrive without events); ignored and
    missing paths yield nothing. Entries are sorted and unique. Raises ``VaultError`` when
    ``root`` itself is missing or unreadable (never "everything was deleted").
    """
    try:
        real_root = os.path.realpath(root)
        root_stat = Path(real_root).stat()
        os.scandir(real_root).close()
    except OSError as exc:
        raise VaultError(f"ccb: scan {root}: cannot list the vault ({_os_reason(exc)})") from exc
    walk = _Walk(real_root=real_root, vfilter=vfilter)
    root_id = (root_stat.st_dev, root_stat.st_ino)
    for rel in sorted(set(rel_paths)):
        rel = rel.strip("/")
        if not rel or rel.startswith("../") or vfilter.is_ignored_by_rules(rel):
            continue
        if not _utf8_name(rel):
            walk.problems.append(Problem(
                path=os.fsencode(rel).decode("utf-8", "backslashreplace"), kind="decode",
                reason="file name is not valid UTF-8; not indexed"))
            continue
        if any(vfilter.is_ignored_by_rules(parent, is_dir=True) for parent in _parents(rel)):
            continue
        walk.look_at(rel, root_id)
    unique = {entry.path: entry for entry in walk.entries}
    return ScanResult(
        entries=tuple(sorted(unique.values(), key=lambda entry: entry.path)),
        conflict_copies=tuple(sorted(walk.conflicts, key=lambda copy: copy.path)),
        problems=tuple(sorted(walk.problems, key=lambda problem: problem.path)),
    )


def _parents(rel: str) -> Iterator[str]:
    parts = rel.split("/")[:-1]
    for i in range(1, len(parts) + 1):
        yield "/".join(parts[:i])


def read_note(root: Path, rel_path: str) -> Note:
    """Read and parse the note at vault-relative POSIX ``rel_path`` under ``root``.

    Raises ``VaultError`` when the path (after resolving symlinks) leaves the vault, and
    ``NoteParseError`` (with path and reason) when the file cannot be read.
    """
    return read_note_bytes(root, rel_path)[0]


#: ``Path(p).is_absolute()``: on POSIX a path that starts with ``/`` (``posixpath.isabs``,
#: without building a path object for each of the 13,000 files a dream reads).
_is_absolute: Callable[[str], bool] = os.path.isabs if os.name == "posix" \
    else (lambda rel_path: Path(rel_path).is_absolute())


def read_note_bytes(root: Path, rel_path: str, *, real_root: str | None = None,
                    markdown: bool = True,
                    parse: Callable[[str, bytes], Note] | None = None) -> tuple[Note, bytes]:
    """:func:`read_note` and the exact bytes it parsed (the version history keeps them).
    ``real_root``: ``os.path.realpath(root)`` when the caller has it (one reader of
    thousands of files resolves the vault once); ``markdown``: as
    :func:`ccb.parse.parse_note`'s; ``parse``: what parses ``(rel_path, bytes)`` instead of
    :func:`ccb.parse.parse_note` (a reader that has parsed the same bytes before).
    Raises like :func:`read_note`."""
    real_root = real_root or os.path.realpath(root)
    target = realpath_under(real_root, rel_path)
    if _is_absolute(rel_path) or not _inside(real_root, target) or target == real_root:
        raise VaultError(f"ccb: read {rel_path}: path leaves the vault {root}")
    data = _read_regular(target, rel_path)
    if parse is not None:
        return parse(rel_path, data), data
    return parse_note(rel_path, data, markdown=markdown), data


#: Flags of the open of a note (:func:`_read_regular`); 0 where the platform has none.
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) \
    | getattr(os, "O_BINARY", 0)


def _read_regular(target: str, rel_path: str) -> bytes:
    """The bytes of the regular file at ``target`` (``os.path.realpath`` of the vault path
    ``rel_path``). The file may have changed since the walk listed it (a cold index reads a
    note up to an hour after the walk): one replaced by a symlink after ``target`` was
    resolved is not followed (it may point out of the vault), and one replaced by a FIFO,
    socket or device is not read (a FIFO would block the read, and the sync, until some
    process writes to it). Raises :class:`NoteParseError` for those and any ``OSError``."""
    try:
        fd = os.open(target, _READ_FLAGS)
    except OSError as exc:
        reason = "a symlink now (put there while it was read): never followed" \
            if exc.errno == errno.ELOOP and Path(target).is_symlink() else _os_reason(exc)
        raise NoteParseError(f"ccb: read {rel_path}: {reason}") from exc
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise NoteParseError(f"ccb: read {rel_path}: {os.strerror(errno.EISDIR)}")
        if not stat.S_ISREG(mode):
            raise NoteParseError(f"ccb: read {rel_path}: {special_file_reason(mode)}")
        with os.fdopen(fd, "rb") as handle:
            fd = -1  # (closed with the handle)
            return handle.read()
    except OSError as exc:
        raise NoteParseError(f"ccb: read {rel_path}: {_os_reason(exc)}") from exc
    finally:
        if fd >= 0:
            os.close(fd)
