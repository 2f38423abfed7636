"""A tenant's logo and accent colour, served by the service itself (the flow's CSP allows only its own origin).

Both are public (a logo and a colour are no secret) and addressed by tenant id with a version in the
query; the pages link the current version, which is cached for a year, any other for a minute.
"""

from django.http import Http404, HttpResponse
from django.views.decorators.http import require_GET

from tenants.branding import tenant_accent, tenant_logo

from .navigation import outage_safe

_FOR_A_YEAR = "public, max-age=31536000, immutable"
_FOR_A_MINUTE = "public, max-age=60"


def _cached(response, *, current: bool):
    response["Cache-Control"] = _FOR_A_YEAR if current else _FOR_A_MINUTE
    response["Content-Security-Policy"] = "default-src 'none'"
    return response


@require_GET
@outage_safe
def logo(request, tenant_id: str):
    found = tenant_logo(tenant_id)
    if found is None:
        raise Http404("no logo")
    png, sha256 = found
    response = HttpResponse(png, content_type="image/png")
    response["ETag"] = f'"{sha256[:32]}"'
    return _cached(response, current=request.GET.get("v") == sha256[:16])


@require_GET
@outage_safe
def theme(request, tenant_id: str):
    accent = tenant_accent(tenant_id)
    if accent is None:
        raise Http404("no accent colour")
    colour, dark, light = accent
    css = f":root {{ --brand: {colour}; --brand-dark: {dark}; --brand-light: {light}; }}\n"
    return _cached(
        HttpResponse(css, content_type="text/css; charset=utf-8"), current=request.GET.get("v") == colour[1:]
    )
