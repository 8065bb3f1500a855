"""A real HTTP server on localhost that keeps every JSON body POSTed to it: the other end of the
alerts' webhooks in the tests."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any


class Receiver:
    """Listens on 127.0.0.1 (a free port) until ``close()``; ``bodies`` are the JSON bodies
    received, with the request's path and content type; answers ``status`` (200 by default)."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.status = 200
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with outer.lock:
                    outer.bodies.append(
                        {"path": self.path, "type": self.headers["Content-Type"], **json.loads(body)}
                    )
                self.send_response(outer.status)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hooks/lagassign"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def received(self) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.bodies)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)
