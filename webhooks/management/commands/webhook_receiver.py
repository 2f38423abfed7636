"""`manage.py webhook_receiver`: a local HTTPS webhook receiver that verifies and prints each event.

The local webhook recipe of docs/webhooks.md: with `scripts/demo` running (which trusts this receiver's
certificate authority through WEBHOOK_CA_BUNDLE), run this in a second terminal and give sessions
`"notification_url": "https://127.0.0.1:8443/webhooks"`. Each request is verified as a partner's
receiver would (Standard Webhooks signature with the tenant's live or test secret, timestamp within
5 minutes), printed, and answered 204; anything else is printed as refused and answered 401.
"""

import json
import ssl
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from tenants.models import ApiKey, Tenant
from tenants.selectors import webhook_signing_secrets

from ...local_tls import tls_files_current, trust_bundle_write
from ...signing import SignatureInvalid, signature_verify

DEMO_TENANT = "Demo Shop"


def local_tls_directory():
    return settings.VAR_DIR / "local-tls"


def local_trust_bundle():
    """The CA bundle the demo's sender uses: the system's authorities and this receiver's."""
    files = tls_files_current(local_tls_directory())
    return trust_bundle_write(files.ca_bundle, local_tls_directory() / "trust.pem")


class Command(BaseCommand):
    help = "Run a local HTTPS webhook receiver that verifies each event with the tenant's secrets and prints it."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=8443)
        parser.add_argument("--bind", default="127.0.0.1", help="Address to listen on (default 127.0.0.1).")
        parser.add_argument("--tenant", help=f"Tenant ID whose secrets verify the events (default: {DEMO_TENANT!r}).")
        parser.add_argument(
            "--secret",
            action="append",
            default=[],
            help="Verify with this whsec_ secret instead of the tenant's (repeatable).",
        )
        parser.add_argument(
            "--trust-bundle-only",
            action="store_true",
            help="Write the certificates and the sender's trust bundle, print its path and exit.",
        )

    def handle(self, *args, port, bind, tenant, secret, trust_bundle_only, **options):
        bundle = local_trust_bundle()
        if trust_bundle_only:
            self.stdout.write(str(bundle))
            return
        secrets = self._secrets(tenant, secret)
        files = tls_files_current(local_tls_directory())
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(files.cert_chain, files.key)
        server = ThreadingHTTPServer((bind, port), self._handler(secrets))
        server.daemon_threads = True
        server.socket = context.wrap_socket(server.socket, server_side=True)
        host = f"[{bind}]" if ":" in bind else bind
        self._say(f"Receiving webhooks at https://{host}:{server.server_port}/webhooks")
        self._say(f"  certificate {files.cert_chain}; the sender trusts it with WEBHOOK_CA_BUNDLE={bundle}")
        self._say("  (scripts/demo sets that, and WEBHOOK_ALLOW_PRIVATE_TARGETS=1). Ctrl-C stops.")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()

    def _say(self, line: str) -> None:
        self.stdout.write(line)
        self.stdout.flush()

    def _secrets(self, tenant_id, explicit) -> dict[str, str]:
        """secret -> the mode it signs ("live", "test", or "given")."""
        if explicit:
            return {value: "given" for value in explicit}
        tenant = (Tenant.objects.filter(pk=tenant_id) if tenant_id else Tenant.objects.filter(name=DEMO_TENANT)).first()
        if tenant is None:
            raise CommandError(f"No tenant {tenant_id or DEMO_TENANT!r}: pass --tenant ten_... or --secret whsec_...")
        return {
            value: mode
            for mode in (ApiKey.Mode.LIVE, ApiKey.Mode.TEST)
            for value in webhook_signing_secrets(tenant, mode)
        }

    def _handler(self, secrets: dict[str, str]):
        command = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                headers = {name.lower(): value for name, value in self.headers.items()}
                try:
                    mode = secrets[signature_verify(secrets=list(secrets), headers=headers, body=body, now=time.time())]
                except SignatureInvalid as refusal:
                    command._say(f"REFUSED {headers.get('webhook-id', '(no webhook-id)')}: {refusal}")
                    return self._answer(401)
                try:
                    event = json.loads(body)
                except ValueError:
                    event = None
                data = event.get("data", {}) if isinstance(event, dict) else {}
                claimed = data.get("mode") if isinstance(data, dict) else None
                warning = "" if claimed in (None, mode) or mode == "given" else f" (claims mode {claimed}!)"
                kind = f"{mode} " if mode != "given" else ""
                command._say(f"verified {kind}event {headers['webhook-id']}: {body.decode(errors='replace')}{warning}")
                self._answer(204)

            def _answer(self, status: int):
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.send_header("Connection", "close")
                self.end_headers()

            def log_message(self, *args):
                pass

        return Handler
