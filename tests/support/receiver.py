"""A real HTTPS webhook receiver on loopback, with its own CA and certificate, answering as a test scripts it."""
import datetime
import ipaddress
import ssl
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


# A receiver name outside ASCII (`bücher.example`) and the A-label its certificate and DNS use.
IDN_HOST = "b\u00fccher.example"
IDN_HOST_ASCII = "xn--bcher-kva.example"


@dataclass(frozen=True)
class TlsFiles:
    ca_bundle: Path  # what the sender trusts (WEBHOOK_CA_BUNDLE)
    cert_chain: Path
    key: Path


def make_tls_files(directory: Path) -> TlsFiles:
    """A throwaway CA and a server certificate for 127.0.0.1, localhost and an IDN name, signed by it."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "AgeVerify test CA")])
    ca_cert = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
        .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(
            digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False, key_encipherment=False,
            data_encipherment=False, key_agreement=False, encipher_only=False, decipher_only=False,
        ), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.SubjectAlternativeName([
            x509.DNSName("localhost"), x509.DNSName(IDN_HOST_ASCII), x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        ]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    files = TlsFiles(directory / "ca.pem", directory / "server.pem", directory / "server.key")
    files.ca_bundle.write_bytes(ca_cert.public_bytes(pem))
    files.cert_chain.write_bytes(cert.public_bytes(pem) + ca_cert.public_bytes(pem))
    files.key.write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return files


@dataclass(frozen=True)
class Reply:
    """One scripted answer: wait `delay` seconds, then answer `status` with `body` (trickled if `trickle`)."""

    status: int = 200
    body: bytes = b"ok"
    headers: dict = field(default_factory=dict)
    delay: float = 0.0
    trickle: float = 0.0  # seconds between single bytes of the status line, to test a total deadline
    hold: threading.Event | None = None  # wait for this before answering (a receiver that hangs on)


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict  # lower-case names
    body: bytes
    arrived_at: float  # time.time()


class WebhookReceiver:
    """Records every request, answers from a script (then 200 "ok"); `url()` is its HTTPS address."""

    def __init__(self, tls: TlsFiles, host: str = "127.0.0.1"):
        self.received: list[Received] = []
        self.server_names: list[str | None] = []  # the SNI of each TLS handshake, in order
        self._script: deque[Reply] = deque()
        self._lock = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self):
                self.request.do_handshake()  # in this request's thread, not the accept loop's
                super().setup()

            def do_POST(self):  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                headers = {name.lower(): value for name, value in self.headers.items()}
                with receiver._lock:
                    receiver.received.append(Received(self.path, headers, body, time.time()))
                    reply = receiver._script.popleft() if receiver._script else Reply()
                    receiver._lock.notify_all()
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
                    self.wfile.write(status_line)
                headers = {**reply.headers, "Content-Length": str(len(reply.body)), "Connection": "close"}
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, *args):
                pass

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(tls.cert_chain, tls.key)
        context.sni_callback = lambda _socket, server_name, _context: self.server_names.append(server_name)

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def get_request(self):
                sock, address = self.socket.accept()
                return context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address

            def handle_error(self, request, client_address):
                pass  # a sender that hangs up on a slow answer is expected here

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
            self._script.clear()

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        """Block until at least `count` requests arrived; fail loudly otherwise."""
        with self._lock:
            if not self._lock.wait_for(lambda: len(self.received) >= count, timeout):
                raise AssertionError(f"receiver got {len(self.received)} requests, expected {count} within {timeout} s")
            return list(self.received)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
