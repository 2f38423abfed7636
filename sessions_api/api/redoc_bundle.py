"""Redoc's bundle as /v1/redoc serves it: drf-spectacular-sidecar's copy, less the one address it would fetch
from another host.

Redoc draws "API docs by Redocly" in its sidebar with an image from cdn.redoc.ly, unconditionally. The
reference pages load nothing from another host, so the page gets this copy of the pinned bundle, whose
image is an empty inline SVG (the link and its words stay). A sidecar whose bundle no longer holds that
address exactly once stops this view, so a new Redoc is looked at rather than served blind.
"""

from functools import lru_cache

from django.contrib.staticfiles import finders
from django.http import HttpResponse

BUNDLE = "drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js"
LOGO = b"https://cdn.redoc.ly/redoc/logo-mini.svg"
EMPTY_IMAGE = b"data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='1' height='1'/%3E"


@lru_cache(maxsize=1)
def bundle() -> bytes:
    with open(finders.find(BUNDLE), "rb") as source:
        code = source.read()
    if code.count(LOGO) != 1:
        raise RuntimeError(f"{BUNDLE} no longer loads its logo from {LOGO.decode()}: look at the new Redoc")
    return code.replace(LOGO, EMPTY_IMAGE)


def redoc_bundle(request):
    response = HttpResponse(bundle(), content_type="text/javascript; charset=utf-8")
    response["Cache-Control"] = "public, max-age=86400"
    return response
