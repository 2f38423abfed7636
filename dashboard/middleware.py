"""Content-Security-Policy on the pages people sign in to: the tenant dashboard and the operators' admin.

Both serve only their own scripts and styles (no CDN, no inline script), so a strict policy costs
nothing and turns an escaping mistake into a blocked script rather than a stolen session.
Inline styles stay allowed: Django's admin sets a few `style` attributes of its own.
"""

PROTECTED_PREFIXES = ("/dashboard/", "/admin/")
POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if request.path.startswith(PROTECTED_PREFIXES):
            response.setdefault("Content-Security-Policy", POLICY)
        return response
