"""The line ``dreamd sync`` prints: one of a thing is singular, none or several plural."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from ccb.model import ConflictCopy, Problem
from daemon.render import print_sync_report
from daemon.sync import SyncReport


def _printed(report: SyncReport) -> str:
    buffer = io.StringIO()
    print_sync_report(Console(file=buffer, width=300, no_color=True), report)
    return buffer.getvalue()


@pytest.mark.parametrize(("count", "files", "chunks", "copies", "problems"), [
    (1, "1 file in", "1 chunk embedded", "1 sync-conflict copy left", "1 problem file (indexed"),
    (0, "0 files in", "0 chunks embedded", None, None),
    (2, "2 files in", "2 chunks embedded", "2 sync-conflict copies left",
     "2 problem files (indexed"),
])
def test_counts_agree_with_their_nouns(count: int, files: str, chunks: str,
                                       copies: str | None, problems: str | None) -> None:
    said = _printed(SyncReport(
        files_total=count, chunks_embedded=count, added=count,
        conflict_copies=tuple(ConflictCopy(f"笔记 ({n}).sync-conflict-1.md", "笔记.md")
                              for n in range(count)),
        problems=tuple(Problem(f"Bad {n}.md", "yaml", "frontmatter does not parse")
                       for n in range(count))))
    assert said.startswith(f"synced {files} ") and f"; {chunks}, " in said
    for wanted in (copies, problems):
        if wanted is not None:
            assert wanted in said
    # a skipped file says "file" too, and the words the counts stand beside stay as they are
    skipped = _printed(SyncReport(problems=(Problem("link.md", "symlink", "loop"),)))
    assert "1 file skipped (not indexed; left as it is):" in skipped
