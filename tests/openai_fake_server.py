"""A real HTTP server process speaking the OpenAI chat-completions API with scripted answers (tests only).

Run: python tests/openai_fake_server.py; it prints its loopback port on stdout. Control endpoints:
POST /script  a JSON list of replies, served in order to POST /v1/chat/completions; each reply is
              {"status": 200, "json": {...}}, {"status": 200, "text": "raw body"} or {"base64": "..."} (bytes as
              sent), optionally with
              "headers" and "delay" (seconds to wait before answering).
GET  /requests the JSON bodies of every chat-completions request received so far.
A completion asked for when no reply is left gets HTTP 599, so a test sees it at once.
"""
from __future__ import annotations

import base64
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

STATE: dict[str, Any] = {"replies": [], "requests": []}
LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None,
              content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path == "/requests":
            with LOCK:
                self._send(200, json.dumps(STATE["requests"]).encode())
        else:
            self._send(404, b'{"error": "not found"}')

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/script":
            with LOCK:
                STATE["replies"] = json.loads(body)
                STATE["requests"] = []
            self._send(200, b"{}")
            return
        if self.path != "/v1/chat/completions":
            self._send(404, b'{"error": "not found"}')
            return
        with LOCK:
            STATE["requests"].append(json.loads(body))
            reply = STATE["replies"].pop(0) if STATE["replies"] else None
        if reply is None:
            self._send(599, b'{"error": "no scripted reply left"}')
            return
        time.sleep(float(reply.get("delay", 0)))
        if "base64" in reply:  # bytes as sent, e.g. a gzip body
            raw = base64.b64decode(reply["base64"])
        else:
            raw = reply["text"].encode() if "text" in reply else json.dumps(reply.get("json", {})).encode()
        try:
            self._send(int(reply.get("status", 200)), raw, reply.get("headers"))
        except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
            pass


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()


if __name__ == "__main__":
    sys.exit(main())
