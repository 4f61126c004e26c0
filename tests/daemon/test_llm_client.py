"""The OpenAI-compatible chat client against loopback FAKES of an endpoint (the one external,
non-deterministic part): a reply dripped a byte at a time, and one without end."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from config.errors import LlmError
from daemon.llm import MAX_REPLY_BYTES, ChatClient

REPLY = json.dumps({"choices": [{"message": {"role": "assistant",
                                             "content": '{"relevant": true}'}}]}).encode()


@pytest.fixture
def endpoint() -> Iterator[tuple[str, dict[str, str]]]:
    mode = {"how": "drip"}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if mode["how"] == "drip":
                    self.send_header("Content-Length", str(len(REPLY)))
                    self.end_headers()
                    for byte in REPLY:  # about 12 s for the whole reply
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(0.2)
                else:  # endless
                    self.end_headers()
                    block = b" " * 65_536
                    for _ in range(MAX_REPLY_BYTES // len(block) + 10):
                        self.wfile.write(block)
            except OSError:
                pass  # the client gave up

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", mode
    server.shutdown()


def test_a_dripped_reply_ends_at_the_timeout(endpoint: tuple[str, dict[str, str]]) -> None:
    url, mode = endpoint
    mode["how"] = "drip"
    with pytest.raises(LlmError, match="did not answer within 1 s"):
        ChatClient(url, "m", timeout_s=1).chat([{"role": "user", "content": "hi"}])


def test_a_reply_without_end_is_refused(endpoint: tuple[str, dict[str, str]]) -> None:
    url, mode = endpoint
    mode["how"] = "endless"
    with pytest.raises(LlmError, match="larger than 4 MB"):
        ChatClient(url, "m", timeout_s=60).chat([{"role": "user", "content": "hi"}])
