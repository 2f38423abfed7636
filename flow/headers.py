"""Response headers every flow page carries: no caching, a strict content security policy, camera for us only."""

from functools import wraps

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "img-src 'self' data: blob:",
        "media-src 'self' blob: mediastream:",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    ]
)


def flow_headers(response):
    # Pages show a person's verification state: never cached, never framed, no referrer to partners.
    # ("same-origin", not "no-referrer": with the latter browsers send `Origin: null` on our own
    # form posts, which Django's CSRF origin check rightly refuses.)
    response["Cache-Control"] = "no-store"
    response["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response["Referrer-Policy"] = "same-origin"
    response["Permissions-Policy"] = "camera=(self), microphone=(), geolocation=()"
    return response


def no_referrer(view):
    """For a view whose own address holds a secret (the start link's token): no answer of it passes that on.

    Its pages have no forms, so the reason the other pages keep "same-origin" does not apply; the
    stylesheet and icon of a refusal page would otherwise be fetched with the whole link as Referer.
    """

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        response = view(request, *args, **kwargs)
        response["Referrer-Policy"] = "no-referrer"
        return response

    return wrapper
