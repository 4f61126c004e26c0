"""The one error tree of dreamd.

Every error dreamd raises on purpose derives from :class:`DreamdError`, and every message
carries its context (engine, action, path, what was expected and found), e.g.
``ccb: write Memory/tests.md: stale hash (expected 3f2a…, found 91bc…)``.

The CLI maps each class to an exit code (``EXIT_CODES``) and prints one readable line, never
a traceback. The tree lives in ``config`` because every package may import ``config``.

Tree::

    DreamdError
    ├── ConfigError            invalid or unreadable configuration (names key and file)
    │   └── ProfileNotFoundError   DREAMD_ENV names a profile the file does not define
    ├── VaultError             the vault root is missing, unreadable or not a folder
    │   ├── MassDeleteError    a sync would remove more of the index than allowed
    │   ├── VaultNotWritableError  a vault folder refuses writes (permissions, read-only
    │   │                      mount, full disk); nothing was written
    │   └── ObsidianCliError   the Obsidian CLI failed, timed out or is missing (ccb.obsidian_cli)
    ├── NoteParseError         a note cannot be decoded at all (reported, never modified)
    ├── FrontmatterEditError   a frontmatter edit was refused (unreadable block); nothing written
    ├── EntryEditError         an edit of an entry file was refused (no such entry, not a list
    │                          item, a bad field name); nothing written
    ├── StaleWriteError        a file an edit was based on changed or vanished meanwhile
    ├── StoreError             the MAGMA store cannot be opened, read or written
    │   └── StoreMismatchError the store was built for another vault or embedding model
    ├── EmbeddingError         the embedding model failed to load or to embed
    ├── LockError              another process holds the lock (names the holder)
    ├── SecretRefusedError     a write carried a credential (names kind and place, never the secret)
    ├── InvalidOwnerError      an owner that is not ``user`` or ``user/agent``
    ├── MemoryTextError        a memory's text was refused (nothing written):
    │   ├── EmptyMemoryError       no text at all
    │   ├── WordlessMemoryError    no word (only emoji, punctuation, symbols)
    │   ├── MemoryTooLargeError    longer than ``memory.max_chars``
    │   └── MemoryEncodingError    not valid Unicode (bytes that are not UTF-8)
    ├── MemoryNotFoundError    no memory (visible to the caller) has that id or name
    ├── VersionNotFoundError   a memory has no version with that number
    ├── ConflictNotFoundError  no open conflict for that memory
    ├── LlmError               the LLM endpoint failed; the caller falls back
    ├── HookInputError         a hook's input is not its event (not JSON, no transcript)
    └── DreamGuardError        a dream would change too many memories; nothing changed
"""

from __future__ import annotations

__all__ = [
    "EXIT_CODES",
    "ConfigError",
    "ConflictNotFoundError",
    "DreamGuardError",
    "DreamdError",
    "EmbeddingError",
    "EmptyMemoryError",
    "EntryEditError",
    "FrontmatterEditError",
    "HookInputError",
    "InvalidOwnerError",
    "LlmError",
    "LockError",
    "MassDeleteError",
    "MemoryEncodingError",
    "MemoryNotFoundError",
    "MemoryTextError",
    "MemoryTooLargeError",
    "NoteParseError",
    "ProfileNotFoundError",
    "SecretRefusedError",
    "StaleWriteError",
    "StoreError",
    "StoreMismatchError",
    "VaultError",
    "VaultNotWritableError",
    "VersionNotFoundError",
    "WordlessMemoryError",
    "exit_code_for",
]


class DreamdError(Exception):
    """Root of every error dreamd raises on purpose."""


class ConfigError(DreamdError):
    """Configuration is invalid or unreadable; the message names the key and the file."""


class ProfileNotFoundError(ConfigError):
    """``DREAMD_ENV`` (or ``--env``) names a profile that no config source defines."""


class VaultError(DreamdError):
    """The vault root is missing, unreadable or not a folder."""


class MassDeleteError(VaultError):
    """A sync would remove more than ``sync.max_delete_share`` of the index; nothing was removed."""


class VaultNotWritableError(VaultError):
    """A folder of the vault refuses writes: no permission, a read-only mount, a full disk.
    Nothing was written (a temp file that could be made is removed); the message names the
    folder and what to do."""


class NoteParseError(DreamdError):
    """A note cannot be decoded at all; it is reported as a problem and never modified."""


class StaleWriteError(DreamdError):
    """A file an edit was based on was deleted (or changed beyond merging) meanwhile."""


class FrontmatterEditError(DreamdError):
    """A frontmatter edit was refused: the block is not a readable mapping, a key is not
    written as ``key: value``, or the edit would not read back as intended. Nothing was
    written; the message names the note."""


class EntryEditError(DreamdError):
    """An edit of an entry file (:mod:`ccb.entries`) was refused: no entry has that key, the
    line is not a list item, the text is not one line, or a field name is not a plain word.
    Nothing was written; the message names the file."""


class StoreError(DreamdError):
    """The MAGMA store cannot be opened, read or written."""


class StoreMismatchError(StoreError):
    """The store at this URI was built for another vault or another embedding model."""


class EmbeddingError(DreamdError):
    """The embedding model failed to load or to embed a batch."""


class LockError(DreamdError):
    """Another process holds the lock; the message names its pid."""


class SecretRefusedError(DreamdError):
    """A write was refused because its text holds a credential (API key, token, password,
    private key); the message names the kind and where, never the secret itself."""


class InvalidOwnerError(DreamdError):
    """An owner that is not ``user`` or ``user/agent`` of the allowed characters."""


class MemoryTextError(DreamdError):
    """The text of a memory to write was refused (:mod:`ccb.memory_text`); nothing is written.
    The message names the field and what to change."""


class EmptyMemoryError(MemoryTextError):
    """A memory to write has no text after trimming (blank, or only invisible characters);
    nothing is written."""


class WordlessMemoryError(MemoryTextError):
    """A memory to write has no word: not one letter or digit in any script (only emoji,
    punctuation, symbols); nothing is written."""


class MemoryTooLargeError(MemoryTextError):
    """A memory to write is longer than ``memory.max_chars``; refused before anything is
    embedded or written."""


class MemoryEncodingError(MemoryTextError):
    """A memory to write holds bytes that are not UTF-8 (they reach Python as lone
    surrogates); nothing is written."""


class MemoryNotFoundError(DreamdError):
    """No memory visible to the caller has that id, name or file name."""


class VersionNotFoundError(DreamdError):
    """A memory has no version with that number (``dreamd rollback``, ``diff``)."""


class ConflictNotFoundError(DreamdError):
    """No open conflict for that memory (``dreamd conflicts resolve``)."""


class LlmError(DreamdError):
    """The configured LLM endpoint failed (unreachable, timeout, HTTP error, malformed
    reply); callers fall back to the path without an LLM."""


class HookInputError(DreamdError):
    """A hook command's stdin is not the event Claude Code sends (not a JSON object, no
    ``transcript_path``), or the transcript it names cannot be read; nothing was written."""


class DreamGuardError(DreamdError):
    """A dream would change more than ``dream.max_change_share`` of the memories; nothing
    was changed (``dreamd dream --force`` proceeds)."""


#: Exit codes of the CLI, by error class (most specific first). 1 is reserved for
#: "ran fine, found something" answers such as ``dreamd check`` finding drift.
EXIT_CODES: tuple[tuple[type[DreamdError], int], ...] = (
    (ProfileNotFoundError, 3),
    (ConfigError, 3),
    (MassDeleteError, 4),
    (VaultError, 4),
    (StoreMismatchError, 5),
    (StoreError, 5),
    (EmbeddingError, 6),
    (LockError, 7),
    (NoteParseError, 8),
    (SecretRefusedError, 9),
    (FrontmatterEditError, 8),
    (StaleWriteError, 10),
    (DreamGuardError, 11),
    (LlmError, 12),
    (MemoryTextError, 2),  # bad input, as a usage error of the command line
    (DreamdError, 2),
)


def exit_code_for(error: DreamdError) -> int:
    """Return the CLI exit code for ``error`` (2 for any unlisted ``DreamdError``)."""
    for cls, code in EXIT_CODES:
        if isinstance(error, cls):
            return code
    return 2
