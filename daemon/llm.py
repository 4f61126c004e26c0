"""An OpenAI-compatible chat client (Ollama, llama.cpp server, vLLM, OpenAI …), standard library
only.

``POST {base_url}/chat/completions`` with ``{"model", "messages", "temperature": 0}`` and an
optional bearer key; the answer is ``choices[0].message.content``. ``timeout_s`` bounds the
whole call (a reply dripped a byte at a time too); a reply beyond :data:`MAX_REPLY_BYTES` is
refused. Every failure — refused
connection, timeout, HTTP error (429 included), a reply that is not that JSON shape — is one
:class:`config.errors.LlmError` naming the endpoint and what happened; callers degrade (the
dream skips its deep phase), they never crash.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass

from config.errors import LlmError

__all__ = ["MAX_REPLY_BYTES", "ChatClient"]

#: Largest reply read, in bytes (our choice: a chat completion is a few kilobytes; an endpoint
#: streaming without end must not fill the memory).
MAX_REPLY_BYTES = 4_000_000
READ_CHUNK_BYTES = 65_536


@dataclass(frozen=True, slots=True)
class ChatClient:
    """One endpoint and model. ``timeout_s`` bounds each call (connect and read)."""

    base_url: str
    model: str
    timeout_s: float = 30.0
    api_key: str | None = None

    def chat(self, messages: Sequence[dict[str, str]]) -> str:
        """The model's reply text to ``messages`` (``[{"role", "content"}, …]``).
        Raises :class:`LlmError`."""
        url = self.base_url.rstrip("/") + "/chat/completions"
        body = json.dumps({"model": self.model, "messages": list(messages),
                           "temperature": 0, "stream": False}).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        deadline = time.monotonic() + self.timeout_s
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                # urllib's timeout bounds each read, not the call: a reply dripped a byte at a
                # time would never end, so the whole body must arrive by the deadline
                parts: list[bytes] = []
                size = 0
                while chunk := response.read1(READ_CHUNK_BYTES):
                    size += len(chunk)
                    if size > MAX_REPLY_BYTES:
                        raise LlmError(f"llm: {url} sent a reply larger than "
                                       f"{MAX_REPLY_BYTES // 1_000_000} MB")
                    if time.monotonic() > deadline:
                        raise TimeoutError
                    parts.append(chunk)
                raw = b"".join(parts)
        except urllib.error.HTTPError as error:
            raise LlmError(f"llm: {url} answered HTTP {error.code} {error.reason}") from error
        except TimeoutError as error:
            raise LlmError(f"llm: {url} did not answer within {self.timeout_s:g} s") from error
        except http.client.HTTPException as error:  # a broken reply
            raise LlmError(f"llm: {url} sent a broken HTTP reply: "
                           f"{type(error).__name__}") from error
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            if isinstance(reason, TimeoutError | socket.timeout):
                raise LlmError(f"llm: {url} did not answer within {self.timeout_s:g} s") \
                    from error
            raise LlmError(f"llm: cannot reach {url}: {reason}") from error
        try:
            data = json.loads(raw)
            content = data["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError, RecursionError) as error:
            raise LlmError(f"llm: {url} sent a reply that is not an OpenAI chat completion") \
                from error
        if not isinstance(content, str):
            raise LlmError(f"llm: {url} sent a reply without text")
        return content
