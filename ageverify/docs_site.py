"""The documentation site at /docs/: the pages MkDocs built from docs/ (mkdocs.yml) into DOCS_SITE_DIR.

Setup builds it (scripts/setup-env.sh: `mkdocs build`), so the pages are files of the installation, as the
static assets are; this view hands them out as they are, beside the API reference at /v1/docs and /v1/redoc.
"""

from pathlib import Path

from django.conf import settings
from django.core.exceptions import SuspiciousFileOperation
from django.http import Http404, HttpResponseRedirect
from django.utils._os import safe_join
from django.views.static import serve

# The site is MkDocs' own HTML, scripts and styles; it may load them from the service, and nothing else.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self' 'unsafe-inline'",  # Material's page scripts set its palette and scope inline
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "frame-ancestors 'none'",
    ]
)


def docs_site(request, path=""):
    root = settings.DOCS_SITE_DIR
    if not (root / "index.html").is_file():
        raise Http404("The documentation site is not built: `.venv/bin/mkdocs build` (scripts/setup-env.sh) writes it.")
    try:
        target = Path(safe_join(root, path))
    except SuspiciousFileOperation:  # outside the site: nothing to say about it
        raise Http404(path)
    if target.is_dir():
        if path and not path.endswith("/"):
            return HttpResponseRedirect(request.path + "/")  # a page's address ends with a slash
        path += "index.html"
    response = serve(request, path, document_root=root)
    response["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    return response
