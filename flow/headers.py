"""Response headers every flow page carries: no caching, a strict content security policy, camera for us only."""

CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'self'",
    "img-src 'self' data: blob:",
    "media-src 'self' blob: mediastream:",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
])


def flow_headers(response):
    # Pages show a person's verification state: never cached, never framed, no referrer to partners.
    # ("same-origin", not "no-referrer": with the latter browsers send `Origin: null` on our own
    # form posts, which Django's CSRF origin check rightly refuses.)
    response["Cache-Control"] = "no-store"
    response["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response["Referrer-Policy"] = "same-origin"
    response["Permissions-Policy"] = "camera=(self), microphone=(), geolocation=()"
    return response
