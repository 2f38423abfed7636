"""Load balancer probes: /healthz (the process answers) and /readyz (database and broker reachable).

/readyz also carries `warnings` for what needs an operator soon but leaves the process fit to serve:
a reader certificate near its expiry, or one that cannot sign (the digital ID alone is then withheld).
"""

from django.db import connection
from django.http import JsonResponse

from wallets.reader_certificate import reader_certificate_status

from .celery import app as celery_app


def healthz(request):
    return JsonResponse({"status": "ok"})


def readyz(request):
    checks = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
    except Exception as error:  # any failure means not ready; the reason is shown to the prober
        checks["database"] = f"unavailable: {error.__class__.__name__}"
    try:
        with celery_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=2)
        checks["broker"] = "ok"
    except Exception as error:
        checks["broker"] = f"unavailable: {error.__class__.__name__}"
    ready = all(value == "ok" for value in checks.values())
    body = {"status": "ready" if ready else "unavailable", "checks": checks}
    reader = reader_certificate_status()
    if reader.state in ("expiring", "refused"):
        body["warnings"] = {"readerCertificate": f"{reader.state}: {reader.detail}"}
    return JsonResponse(body, status=200 if ready else 503)
