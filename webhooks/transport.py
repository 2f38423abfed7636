"""One HTTPS POST to a webhook URL: checked egress, a hard total deadline, no redirects, 1 KiB read at most.

Transport knows nothing of deliveries or signing; it takes bytes and headers and reports what happened.
The host is resolved once, every address is checked (webhooks.egress), and the socket connects to a
checked address, while TLS still verifies the certificate for the hostname (SNI included): there is
no second lookup an attacker's DNS could answer differently (no rebinding window).

A connection whose exchange ended cleanly is kept for the next POST to the same host, port and CA
bundle (HTTP/1.1 keep-alive, see `_IdleConnections`): a TLS handshake costs more CPU than the rest of
a delivery. It was connected to an address checked when it was opened, so reusing it makes no DNS
lookup at all, and the address is checked again against the egress policy of the moment. A reused
connection that the receiver had closed while it was idle fails before any byte of an answer arrives;
the POST is then made once more on a new connection. That receiver may, rarely, have read the first
request before closing: it then gets the same `webhook-id` twice, which delivery allows anyway (it is
at-least-once and receivers de-duplicate).
"""

import http.client
import os
import select
import socket
import ssl
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

from .egress import ip_is_public, private_targets_allowed

RESPONSE_EXCERPT_BYTES = 1024
_ERROR_MAX = 500


class DeliveryRefused(Exception):
    """The URL may not be sent to at all (not HTTPS, or a non-public address)."""


@dataclass(frozen=True)
class PostResult:
    status_code: int | None
    latency_ms: int
    error: str = ""
    response_excerpt: str = ""

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


class _DeadlineSSLSocket(ssl.SSLSocket):
    """A TLS socket whose every blocking call ends by one absolute deadline.

    A socket timeout alone bounds each read; a receiver trickling one byte a second would never hit it.
    """

    deadline: float = float("inf")

    def _arm(self) -> None:
        if self.deadline == float("inf"):
            # Not armed yet: wrap_socket itself reads from a socket the peer already reset (to tell a
            # connected one), before https_post sets the deadline; settimeout(inf) would overflow.
            return
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("total timeout")
        self.settimeout(remaining)

    def do_handshake(self, *args, **kwargs):
        self._arm()
        return super().do_handshake(*args, **kwargs)

    def send(self, *args, **kwargs):
        self._arm()
        return super().send(*args, **kwargs)

    def sendall(self, *args, **kwargs):
        self._arm()
        return super().sendall(*args, **kwargs)

    def recv(self, *args, **kwargs):
        self._arm()
        return super().recv(*args, **kwargs)

    def recv_into(self, *args, **kwargs):
        self._arm()
        return super().recv_into(*args, **kwargs)


@lru_cache(maxsize=8)
def _tls_context(ca_bundle: str | None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=ca_bundle) if ca_bundle else ssl.create_default_context()
    context.sslsocket_class = _DeadlineSSLSocket
    return context


def _split_target(url: str) -> tuple[str, int, str]:
    parts = urlsplit(url)
    if parts.scheme != "https":
        raise DeliveryRefused("only https:// URLs are delivered")
    try:
        port = parts.port or 443
    except ValueError as exc:
        raise DeliveryRefused(f"invalid port in URL: {exc}") from None
    if not parts.hostname:
        raise DeliveryRefused("the URL has no host")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.hostname, port, path


_resolver: ThreadPoolExecutor | None = None
_resolver_lock = threading.Lock()
# Lookups run beside a delivery worker's thread pool: enough that a slow name server of one tenant
# does not queue everyone else's lookups behind it.
_RESOLVER_THREADS = 16


def _resolve(host: str, port: int, *, deadline: float) -> list[tuple]:
    """getaddrinfo has no timeout of its own; a thread lets the attempt's deadline cover DNS too."""
    global _resolver
    with _resolver_lock:  # attempts run in many threads at once
        if _resolver is None:  # created lazily, so a forked worker process builds its own
            _resolver = ThreadPoolExecutor(max_workers=_RESOLVER_THREADS, thread_name_prefix="webhook-dns")
    lookup = _resolver.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    try:
        return lookup.result(timeout=max(0.001, deadline - time.monotonic()))
    except FutureTimeout:
        raise TimeoutError("DNS lookup did not finish in time") from None


def _checked_addresses(host: str, port: int, *, deadline: float) -> list[tuple]:
    """Resolve once; refuse the whole target if any address is not public (a mixed answer is a red flag)."""
    infos = _resolve(host, port, deadline=deadline)
    for *_, sockaddr in infos:
        _refuse_unless_allowed(host, sockaddr[0])
    return [(family, sockaddr) for family, _, _, _, sockaddr in infos]


def _refuse_unless_allowed(host: str, address: str) -> None:
    if private_targets_allowed():
        return
    try:
        public = ip_is_public(address)
    except ValueError:
        public = False
    if not public:
        where = host if address == host else f"{host} resolves to {address}, which"
        raise DeliveryRefused(f"{where} is not a public address")


def _connect(addresses: list[tuple], *, connect_timeout: float, deadline: float) -> socket.socket:
    last_error: OSError = OSError("no address to connect to")
    for family, sockaddr in addresses:
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.settimeout(max(0.001, min(connect_timeout, deadline - time.monotonic())))
        try:
            sock.connect(sockaddr)
            return sock
        except OSError as exc:
            sock.close()
            last_error = exc
    if isinstance(last_error, TimeoutError):
        raise TimeoutError(f"connect timeout ({connect_timeout:g} s)")
    raise last_error


def _describe(exc: BaseException, total_timeout: float) -> str:
    if isinstance(exc, DeliveryRefused):
        text = f"refused: {exc}"
    elif isinstance(exc, socket.gaierror):
        text = f"DNS: cannot resolve host ({exc.strerror})"
    elif isinstance(exc, ssl.SSLCertVerificationError):
        text = f"TLS certificate not trusted: {exc.verify_message or exc}"
    elif isinstance(exc, ssl.SSLError):
        text = f"TLS error: {exc.reason or exc}"
    elif isinstance(exc, TimeoutError):
        detail = str(exc)
        if detail.startswith(("connect", "DNS")):
            text = f"timeout: {detail}"
        else:
            text = f"timeout: no complete answer within {total_timeout:g} s"
    elif isinstance(exc, http.client.HTTPException):
        text = f"invalid HTTP response: {type(exc).__name__} {exc}"
    elif isinstance(exc, OSError):
        text = f"connection error: {exc.strerror or exc}"
    else:
        text = f"{type(exc).__name__}: {exc}"
    return text[:_ERROR_MAX]


@dataclass
class _Connection:
    """An HTTPS connection made by this module: its TLS socket (for the deadline) and the checked address."""

    http: http.client.HTTPSConnection
    tls: _DeadlineSSLSocket
    address: str
    idle_since: float = 0.0


# Idle connections are dropped after this long: below the keep-alive timeout of common servers
# (nginx 75 s, Apache 5 s is the exception: its closes are caught by the one retry), so a reused
# one is rarely already closed at the other end.
IDLE_SECONDS = 30.0
IDLE_PER_TARGET = 32  # as many as a worker's threads may send to one receiver at once
IDLE_TOTAL = 256


class _IdleConnections:
    """Per process, thread-safe: the idle keep-alive connections by (host, port, CA bundle).

    The CA bundle is part of the key: a connection whose certificate was trusted under one bundle is
    never used for a POST that trusts another.
    """

    def __init__(self):
        self.forget_all()

    def take(self, key: tuple) -> _Connection | None:
        """The most recently used idle connection to `key` still open, or None."""
        now = time.monotonic()
        while True:
            with self._lock:
                stack = self._idle.get(key)
                if not stack:
                    return None
                connection = stack.pop()
                self._count -= 1
            if now - connection.idle_since < IDLE_SECONDS and _still_open(connection.tls):
                return connection
            connection.http.close()

    def give(self, key: tuple, connection: _Connection) -> None:
        """Keep `connection` for the next POST to `key`, unless as many are kept already (then it is closed)."""
        now = connection.idle_since = time.monotonic()
        with self._lock:
            expired = []
            if now >= self._next_expiry:  # now and then, so connections no POST asks for again are closed too
                expired = self._drop_expired(now)
                self._next_expiry = now + IDLE_SECONDS
            stack = self._idle.setdefault(key, [])
            kept = len(stack) < IDLE_PER_TARGET and self._count < IDLE_TOTAL
            if kept:
                stack.append(connection)
                self._count += 1
        for closing in expired if kept else [*expired, connection]:
            closing.http.close()

    def _drop_expired(self, now: float) -> list[_Connection]:
        expired = []
        for key, stack in list(self._idle.items()):
            fresh = [c for c in stack if now - c.idle_since < IDLE_SECONDS]
            expired += [c for c in stack if now - c.idle_since >= IDLE_SECONDS]
            if fresh:
                self._idle[key] = fresh
            else:
                del self._idle[key]
        self._count -= len(expired)
        return expired

    def forget_all(self) -> None:
        """Start empty; after a fork too: the parent's sockets are not this process's to use."""
        self._lock = threading.Lock()
        self._idle: dict[tuple, list[_Connection]] = {}
        self._count = 0
        self._next_expiry = time.monotonic() + IDLE_SECONDS


_idle_connections = _IdleConnections()
os.register_at_fork(after_in_child=_idle_connections.forget_all)


def _still_open(tls: ssl.SSLSocket) -> bool:
    """An idle connection has nothing to read; if it has, the receiver closed it (or sent garbage)."""
    poller = select.poll()  # not select(): a busy process may have descriptors past its 1024 limit
    try:
        poller.register(tls, select.POLLIN)
        readable = poller.poll(0)
    except (OSError, ValueError):
        return False
    return not readable and not tls.pending()


def _open(host: str, port: int, *, ca_bundle: str | None, connect_timeout: float, deadline: float) -> _Connection:
    addresses = _checked_addresses(host, port, deadline=deadline)
    raw = _connect(addresses, connect_timeout=connect_timeout, deadline=deadline)
    # http.client writes a request's headers and body separately; on a kept connection Nagle's algorithm
    # would hold the body back until the receiver's delayed ACK (tens of ms). HTTPConnection.connect sets
    # this too, but it is not called here.
    raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    address = raw.getpeername()[0]
    try:
        tls = _tls_context(ca_bundle).wrap_socket(raw, server_hostname=host, do_handshake_on_connect=False)
    except BaseException:
        raw.close()
        raise
    tls.deadline = deadline
    # http.client does not connect when given a socket, so it can never follow a name to another address;
    # without auto_open it does not reconnect by name either once the socket is gone.
    connection = http.client.HTTPSConnection(host, port, context=_tls_context(ca_bundle))
    connection.auto_open = 0
    connection.sock = tls
    try:
        tls.do_handshake()
    except BaseException:
        connection.close()
        raise
    return _Connection(http=connection, tls=tls, address=address)


# How a kept connection the receiver has closed fails before any answer: on sending, or at the status line.
_CLOSED_WHILE_IDLE = (ConnectionError, ssl.SSLEOFError, ssl.SSLZeroReturnError)


def https_post(
    url: str,
    *,
    body: bytes,
    headers: dict[str, str],
    connect_timeout: float,
    total_timeout: float,
    ca_bundle: str | None = None,
) -> PostResult:
    """POST `body` once; never raises for network trouble, it reports it in the result instead."""
    started = time.monotonic()
    deadline = started + total_timeout

    def elapsed_ms() -> int:
        return int((time.monotonic() - started) * 1000)

    try:
        host, port, path = _split_target(url)
        key = (host, port, ca_bundle)
        kept = _idle_connections.take(key)
        if kept is not None:
            try:
                _refuse_unless_allowed(host, kept.address)  # the egress policy of now, not of when it was opened
            except DeliveryRefused:
                kept.http.close()
                raise
            try:
                return _exchange(kept, key, path, body=body, headers=headers, deadline=deadline, elapsed_ms=elapsed_ms)
            except _ClosedWhileIdle:
                pass  # once more below, on a new connection
        connection = _open(host, port, ca_bundle=ca_bundle, connect_timeout=connect_timeout, deadline=deadline)
        try:
            return _exchange(
                connection, key, path, body=body, headers=headers, deadline=deadline, elapsed_ms=elapsed_ms
            )
        except _ClosedWhileIdle as exc:
            raise exc.__cause__ from None  # a new connection is not "idle": the error is the receiver's
    except Exception as exc:
        return PostResult(status_code=None, latency_ms=elapsed_ms(), error=_describe(exc, total_timeout))


class _ClosedWhileIdle(Exception):
    """The connection failed before any byte of an answer: for a kept one, the receiver had closed it."""


def _exchange(
    connection: _Connection, key: tuple, path: str, *, body: bytes, headers: dict[str, str], deadline: float, elapsed_ms
) -> PostResult:
    """One request and its answer on `connection`, which is kept only if the exchange ended cleanly."""
    connection.tls.deadline = deadline  # each request has its own total deadline, from its own start
    keep = False
    try:
        try:
            connection.http.request("POST", path, body=body, headers=headers)
            response = connection.http.getresponse()
        except _CLOSED_WHILE_IDLE as exc:
            raise _ClosedWhileIdle() from exc
        excerpt = response.read(RESPONSE_EXCERPT_BYTES)
        # Kept only if the whole body fit in what is read and the receiver keeps the connection open
        # (http.client gives up the socket itself on `Connection: close` or an HTTP/1.0 answer).
        keep = response.isclosed() and not response.will_close and connection.http.sock is not None
        return PostResult(
            status_code=response.status,
            latency_ms=elapsed_ms(),
            # PostgreSQL text cannot hold NUL; the excerpt is for people to read, not a byte-exact copy.
            response_excerpt=excerpt.decode("utf-8", errors="replace").replace("\x00", "\ufffd"),
        )
    finally:
        if keep:
            _idle_connections.give(key, connection)
        else:
            connection.http.close()
