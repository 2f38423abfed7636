"""A partner's web page on another site (127.0.0.1) embedding the SDK served by the service (localhost).

The page has a strict CSP: scripts from itself and the service, frames from the service only; every
CSP violation is recorded in `window.partnerLog.violations`. Its own script `partner.js` calls the SDK
and records what the SDK reports, as a partner's page would.
"""

import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PARTNER_JS = """
window.partnerLog = { events: [], completed: null, cancelled: null, errors: [], violations: [], markers: 0 };
document.addEventListener("securitypolicyviolation", function (event) {
  window.partnerLog.violations.push(event.violatedDirective + " " + event.blockedURI);
});
// A test posts MARKER after messages it wants handled: messages from one window arrive in order.
window.addEventListener("message", function (event) {
  if (event.data === "partner-test-marker") { window.partnerLog.markers += 1; }
});
window.partnerStart = function (key, options, mountSelector) {
  var log = window.partnerLog;
  options.onEvent = function (event) { log.events.push(event.type); };
  options.onComplete = function (outcome) { log.completed = outcome; };
  options.onCancel = function (outcome) { log.cancelled = outcome; };
  options.onError = function (error) { log.errors.push(error.code); };
  var sdk = AgeVerify(key);
  window.partnerHandle = mountSelector
    ? sdk.mount(document.querySelector(mountSelector), options) : sdk.verify(options);
};
"""

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Partner shop</title>
<script src="{service}/sdk/v1/ageverify.js"></script>
<script src="/partner.js"></script></head>
<body><h1>Partner shop</h1><button id="buy">Buy</button><div id="inline"></div>{extra}</body></html>
"""


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        site = self.server.site
        path = self.path.split("?")[0]
        if path == "/partner.js":
            body, content_type = PARTNER_JS, "text/javascript"
        elif path in site.pages:
            body, content_type = site.pages[path], "text/html"
        else:
            self.send_error(404)
            return
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", f"{content_type}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Content-Security-Policy", site.csp)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        self.server.site.requests.append(self.path)


class PartnerSite:
    def __init__(self, server, service_origin: str):
        self.server = server
        self.service_origin = service_origin
        self.origin = f"http://127.0.0.1:{server.server_address[1]}"
        self.csp = (
            f"default-src 'self'; script-src 'self' {service_origin}; frame-src {service_origin}; "
            "object-src 'none'; base-uri 'none'"
        )
        self.pages = {"/": PAGE.format(service=service_origin, extra="")}
        self.requests: list[str] = []

    def add_page(self, path: str, extra_html: str) -> str:
        self.pages[path] = PAGE.format(service=self.service_origin, extra=extra_html)
        return self.origin + path


@contextmanager
def partner_site(service_origin: str):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    site = PartnerSite(server, service_origin)
    server.site = site
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()
