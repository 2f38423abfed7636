"""A plain-HTTP server on loopback that answers from a script, as a flaky API or proxy would.

Each request takes the next scripted answer: a status with headers and a JSON body, `RESET` (the
connection is dropped with a TCP reset after the request was read) or `TRUNCATED` (a 200 whose body
stops half-way). It records every request.
"""

import json
import socket
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Answer:
    status: int = 200
    body: object = None  # JSON-serialisable, or bytes sent as they are
    headers: dict = field(default_factory=dict)


RESET = object()
TRUNCATED = object()


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    headers: dict  # lower-case names
    body: bytes
    arrived_at: float  # time.monotonic()


class ScriptedServer:
    def __init__(self):
        self.requests: list[Seen] = []
        self._script: deque = deque()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with server._lock:
                    headers = {name.lower(): value for name, value in self.headers.items()}
                    server.requests.append(Seen(self.command, self.path, headers, body, time.monotonic()))
                    answer = server._script.popleft() if server._script else Answer(500, {"title": "unscripted"})
                if answer is TRUNCATED:
                    self.send_response(200)
                    self.send_header("Content-Length", "1000")
                    self.end_headers()
                    self.wfile.write(b'{"session": {')
                    self.wfile.flush()
                if answer is RESET or answer is TRUNCATED:
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                    self.close_connection = True
                    return
                payload = answer.body if isinstance(answer.body, bytes) else json.dumps(answer.body).encode()
                self.send_response(answer.status)
                headers = {"Content-Type": "application/json", **answer.headers}
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _serve  # noqa: N815 (http.server's naming)

            def log_message(self, *args):
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):
                pass  # writing to a connection this server reset on purpose

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    def script(self, *answers) -> None:
        with self._lock:
            self._script.extend(answers)

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self.requests.clear()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
