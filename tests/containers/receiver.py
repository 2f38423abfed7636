"""The smoke test's webhook receiver, run in its own container on compose's network (compose.smoke.yaml).

An HTTPS endpoint on 8443 (the certificate in /smoke, for its alias `webhooks.receiver.test`) records every
request as it arrived, headers and raw body, and answers 204. A plain HTTP endpoint on 8080, published on
loopback for the test only, lists what arrived as JSON; the test verifies each signature there with
`standardwebhooks`, as a partner's receiver would. Standard library only: it runs in the AgeVerify image,
whose Python has nothing else that a receiver needs.
"""

import base64
import json
import signal
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

received = []
lock = threading.Lock()


class Webhooks(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):  # noqa: N802 (http.server's naming)
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with lock:
            received.append(
                {
                    "path": self.path,
                    "headers": {name.lower(): value for name, value in self.headers.items()},
                    "body": base64.b64encode(body).decode(),
                }
            )
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format, *args):
        print("webhook", self.address_string(), format % args, flush=True)


class Listing(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):  # noqa: N802
        with lock:
            body = json.dumps(received).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # process 1 of its container: stop at once when told
    webhooks = ThreadingHTTPServer(("0.0.0.0", 8443), Webhooks)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain("/smoke/server.pem", "/smoke/server.key")
    webhooks.socket = context.wrap_socket(webhooks.socket, server_side=True)
    webhooks.daemon_threads = True
    threading.Thread(target=webhooks.serve_forever, daemon=True).start()
    listing = ThreadingHTTPServer(("0.0.0.0", 8080), Listing)
    print("receiver: webhooks on https://webhooks.receiver.test:8443/webhooks, listing on :8080", flush=True)
    listing.serve_forever()


if __name__ == "__main__":
    main()
