"""dreamd: consistency package — pure decisions between the two engines.

Every function here is a function of typed values (and ``now`` where time matters); nothing
reads the clock, the disk or the store. The daemon applies the answers.

Modules:

- :mod:`consistency.duplicates` — write-time duplicate handling: ``decide(draft, existing)``
  answers ``Duplicate | Update | Supersede | New``; ``merge_bodies`` for updates.
- :mod:`consistency.secrets` — credential detection: ``find_secrets`` and ``refuse_secrets``
  (raises ``config.errors.SecretRefusedError``), called on every write path.
- :mod:`consistency.statements` — the user's sentences that carry a rule, a preference or a
  decision (English and Chinese): what ``dreamd flush`` keeps in the diary.
- :mod:`consistency.snippet_cut` — light sleep's cut of a daily note into snippets.
- :mod:`consistency.promotion` — REM themes and the deep-sleep score and gates: when a line
  of the diary has earned a memory.

Submodules are imported by name; this package re-exports nothing.
"""

__all__: list[str] = []
