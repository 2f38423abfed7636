"""The JS SDK, served by the service itself at a versioned path (no CDN, no build chain).

One source (flow/sdk/core.js) becomes a classic ES2017 script (`/sdk/v1/ageverify.js`, defines
`AgeVerify` on the global object) and an ES module (`/sdk/v1/ageverify.mjs`); the hand-written types
are `/sdk/v1/ageverify.d.ts`. The service's own origin is written in, so the SDK needs no setting.
"""

import base64
import hashlib
import json
from functools import cache, lru_cache
from pathlib import Path

from django.conf import settings
from django.http import Http404, HttpResponse
from django.views.decorators.http import require_GET

SDK_VERSION = 1
SOURCE = Path(__file__).resolve().parent / "sdk"
CONTENT_TYPES = {
    "ageverify.js": "text/javascript",
    "ageverify.mjs": "text/javascript",
    "ageverify.d.ts": "application/typescript",
}
CACHE_SECONDS = 300


@cache
def _read(name: str) -> str:
    return (SOURCE / name).read_text()


@lru_cache(maxsize=8)
def sdk_file(name: str, origin: str) -> bytes:
    core = _read("core.js")
    banner = f"/*! AgeVerify SDK v{SDK_VERSION}: {origin}/sdk/v{SDK_VERSION}/ */\n"
    if name == "ageverify.js":
        text = (
            f'{banner}(function (global) {{\n  "use strict";\n  var SERVICE_ORIGIN = {json.dumps(origin)};\n'
            f'{core}\n  global.AgeVerify = AgeVerify;\n}})(typeof globalThis !== "undefined" ? globalThis : this);\n'
        )
    elif name == "ageverify.mjs":
        text = (
            f"{banner}const SERVICE_ORIGIN = {json.dumps(origin)};\n{core}\n"
            "export { AgeVerify };\nexport default AgeVerify;\n"
        )
    elif name == "ageverify.d.ts":
        text = _read("ageverify.d.ts")
    else:
        raise KeyError(name)
    return text.encode()


def sdk_integrity(name: str = "ageverify.js") -> str:
    """The Subresource Integrity value of a served file, for the dashboard's snippet."""
    digest = hashlib.sha384(sdk_file(name, settings.PUBLIC_BASE_URL)).digest()
    return "sha384-" + base64.b64encode(digest).decode()


@require_GET
def sdk_view(request, name: str):
    if name not in CONTENT_TYPES:
        raise Http404("No such SDK file.")
    body = sdk_file(name, settings.PUBLIC_BASE_URL)
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    if request.headers.get("If-None-Match") == etag:
        response = HttpResponse(status=304)
    else:
        response = HttpResponse(body, content_type=f"{CONTENT_TYPES[name]}; charset=utf-8")
    response["ETag"] = etag
    response["Cache-Control"] = f"public, max-age={CACHE_SECONDS}"
    # Partner pages load it cross-origin (a module script, or with integrity=): readable by any page.
    response["Access-Control-Allow-Origin"] = "*"
    response["Cross-Origin-Resource-Policy"] = "cross-origin"
    return response
