"""A real HTTPS webhook receiver on loopback, with its own CA and certificate, answering as a test scripts it.

It speaks HTTP/1.1 keep-alive like a production server: many requests per connection (the sender
reuses them), unless a reply says `close`; `idle_timeout` makes it close connections left idle that
long, as servers do.
"""

import socket
import ssl
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from webhooks.local_tls import TlsFiles, tls_files_make

# A receiver name outside ASCII (`bücher.example`) and the A-label its certificate and DNS use.
IDN_HOST = "b\u00fccher.example"
IDN_HOST_ASCII = "xn--bcher-kva.example"


def make_tls_files(directory: Path) -> TlsFiles:
    """A throwaway CA and a server certificate for 127.0.0.1, localhost and an IDN name, signed by it."""
    return tls_files_make(directory, dns_names=("localhost", IDN_HOST_ASCII), ca_name="AgeVerify test CA")


@dataclass(frozen=True)
class Reply:
    """One scripted answer: wait `delay` seconds, then answer `status` with `body` (trickled if `trickle`)."""

    status: int = 200
    body: bytes = b"ok"
    headers: dict = field(default_factory=dict)
    delay: float = 0.0
    trickle: float = 0.0  # seconds between single bytes of the status line, to test a total deadline
    hold: threading.Event | None = None  # wait for this before answering (a receiver that hangs on)
    close: bool = False  # answer with `Connection: close` and close the connection
    drop: bool = False  # close the connection without answering (as a server closing it while idle)


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict  # lower-case names
    body: bytes
    arrived_at: float  # time.time()


class WebhookReceiver:
    """Records every request, answers from a script (then 200 "ok"); `url()` is its HTTPS address."""

    def __init__(self, tls: TlsFiles, host: str = "127.0.0.1", idle_timeout: float | None = None):
        self.received: list[Received] = []
        self.connections = 0  # TCP connections accepted since the last reset
        self._open: set[socket.socket] = set()
        self.server_names: list[str | None] = []  # the SNI of each TLS handshake, in order
        self._script: deque[Reply] = deque()
        self._lock = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # a trickled status line goes out byte by byte, as scripted
            timeout = idle_timeout  # also bounds the handshake and each read, which are quick here

            def setup(self):
                super().setup()  # sets the timeout
                self.request.do_handshake()  # in this connection's thread, not the accept loop's

            def do_POST(self):  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                headers = {name.lower(): value for name, value in self.headers.items()}
                with receiver._lock:
                    receiver.received.append(Received(self.path, headers, body, time.time()))
                    reply = receiver._script.popleft() if receiver._script else Reply()
                    receiver._lock.notify_all()
                if reply.drop:
                    self.close_connection = True
                    return
                if reply.hold is not None:
                    reply.hold.wait(30)
                time.sleep(reply.delay)
                status_line = f"HTTP/1.1 {reply.status} Scripted\r\n".encode()
                if reply.trickle:
                    for byte in status_line:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(reply.trickle)
                else:
                    self._headers_buffer = [status_line]  # sent with the headers, in one TLS record
                headers = {**reply.headers, "Content-Length": str(len(reply.body))}
                if reply.close:
                    headers["Connection"] = "close"  # send_header also ends this connection's loop
                for name, value in headers.items():
                    self.send_header(name, value)
                self._headers_buffer.append(b"\r\n" + reply.body)
                self.flush_headers()

            def log_message(self, *args):
                pass

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(tls.cert_chain, tls.key)
        context.sni_callback = lambda _socket, server_name, _context: self.server_names.append(server_name)

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def get_request(self):
                sock, address = self.socket.accept()
                tls = context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
                with receiver._lock:
                    receiver.connections += 1
                    receiver._open.add(tls)
                return tls, address

            def handle_error(self, request, client_address):
                pass  # a sender that hangs up on a slow answer is expected here

            def shutdown_request(self, request):
                try:
                    super().shutdown_request(request)
                finally:  # counted as open until its socket is closed
                    with receiver._lock:
                        receiver._open.discard(request)

        self.server = Server((host, 0), Handler)
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def url(self, path: str = "/hooks/ageverify", host: str = "127.0.0.1") -> str:
        return f"https://{host}:{self.port}{path}"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def reset(self) -> None:
        with self._lock:
            self.received.clear()
            self.server_names.clear()
            self.connections = 0
            self._script.clear()

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        """Block until at least `count` requests arrived; fail loudly otherwise."""
        with self._lock:
            if not self._lock.wait_for(lambda: len(self.received) >= count, timeout):
                raise AssertionError(f"receiver got {len(self.received)} requests, expected {count} within {timeout} s")
            return list(self.received)

    @property
    def open_connections(self) -> int:
        """Connections accepted and not yet closed by this side."""
        with self._lock:
            return len(self._open)

    def close_connections(self) -> None:
        """Close every open connection, as a server restarting (or dropping idle ones) does."""
        with self._lock:
            open_now = list(self._open)
        for sock in open_now:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.close_connections()
