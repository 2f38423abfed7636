"""One HTTPS POST to a webhook URL: checked egress, a hard total deadline, no redirects, 1 KiB read at most.

Transport knows nothing of deliveries or signing; it takes bytes and headers and reports what happened.
The host is resolved once, every address is checked (webhooks.egress), and the socket connects to a
checked address, while TLS still verifies the certificate for the hostname (SNI included): there is
no second lookup an attacker's DNS could answer differently (no rebinding window).
"""
import http.client
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
    if not private_targets_allowed():
        for *_, sockaddr in infos:
            address = sockaddr[0]
            try:
                public = ip_is_public(address)
            except ValueError:
                public = False
            if not public:
                where = host if address == host else f"{host} resolves to {address}, which"
                raise DeliveryRefused(f"{where} is not a public address")
    return [(family, sockaddr) for family, _, _, _, sockaddr in infos]


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


def https_post(
    url: str, *, body: bytes, headers: dict[str, str], connect_timeout: float, total_timeout: float,
    ca_bundle: str | None = None,
) -> PostResult:
    """POST `body` once; never raises for network trouble, it reports it in the result instead."""
    started = time.monotonic()
    deadline = started + total_timeout

    def elapsed_ms() -> int:
        return int((time.monotonic() - started) * 1000)

    connection = None
    try:
        host, port, path = _split_target(url)
        addresses = _checked_addresses(host, port, deadline=deadline)
        raw = _connect(addresses, connect_timeout=connect_timeout, deadline=deadline)
        try:
            tls = _tls_context(ca_bundle).wrap_socket(raw, server_hostname=host, do_handshake_on_connect=False)
        except BaseException:
            raw.close()
            raise
        tls.deadline = deadline
        # http.client does not connect when given a socket, so it can never follow a name to another address.
        connection = http.client.HTTPSConnection(host, port, context=_tls_context(ca_bundle))
        connection.sock = tls
        tls.do_handshake()
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        excerpt = response.read(RESPONSE_EXCERPT_BYTES)
        return PostResult(
            status_code=response.status,
            latency_ms=elapsed_ms(),
            # PostgreSQL text cannot hold NUL; the excerpt is for people to read, not a byte-exact copy.
            response_excerpt=excerpt.decode("utf-8", errors="replace").replace("\x00", "\ufffd"),
        )
    except Exception as exc:
        return PostResult(status_code=None, latency_ms=elapsed_ms(), error=_describe(exc, total_timeout))
    finally:
        if connection is not None:
            connection.close()
