"""Reference memories' links: which of them no longer lead anywhere.

Vault wikilinks are checked against the index (the targets it could not resolve); URLs only
when ``lifecycle.check_urls`` is on, with an HTTP ``HEAD`` each. An unreachable link is
recorded in the memory's ``broken_links`` by the dream; the memory is not archived for it.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

import structlog

from config.errors import DreamdError
from daemon.dream_records import MemoryRecord

__all__ = ["URL_CHECK_WORKERS", "check_links", "url_ok"]

log = structlog.get_logger("dreamd.dream")

#: Most URL checks run at once when ``lifecycle.check_urls`` is on.
URL_CHECK_WORKERS = 8


def check_links(
    references: Sequence[MemoryRecord],
    unresolved_links: Callable[[Sequence[str]], Mapping[str, Sequence[str]]] | None, *,
    check_urls: bool, url_timeout_s: float,
) -> dict[str, tuple[str, ...]]:
    """Unreachable link targets per reference memory path; nothing is checked when there is
    no index to resolve the wikilinks (``unresolved_links`` is ``None``) or it fails."""
    if not references or unresolved_links is None:
        return {}
    try:
        unresolved = unresolved_links([r.path for r in references])
    except DreamdError as error:
        log.warning("dream.links_unchecked", error=str(error))
        return {}
    broken_urls: set[str] = set()
    if check_urls:
        urls = sorted({u for r in references for u in r.urls})
        with ThreadPoolExecutor(max_workers=URL_CHECK_WORKERS) as pool:
            oks = pool.map(lambda url: url_ok(url, url_timeout_s), urls)
            broken_urls = {url for url, ok in zip(urls, oks, strict=True) if not ok}
    return {r.path: tuple(sorted({*unresolved.get(r.path, ()),
                                  *(u for u in r.urls if u in broken_urls)}))
            for r in references}


def url_ok(url: str, timeout_s: float) -> bool:
    """HTTP HEAD: reachable unless the server answers 404/410 or cannot be reached. Other
    errors (401, 403, 405, 5xx) say the server is there: not broken."""
    request = urllib.request.Request(url, method="HEAD",
                                     headers={"User-Agent": "dreamd link check"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s):
            return True
    except urllib.error.HTTPError as error:
        return error.code not in {404, 410}
    except (urllib.error.URLError, OSError, ValueError):
        return False
