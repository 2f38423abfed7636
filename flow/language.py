"""The hosted flow's language: chosen per request, changed by the start link's `locale` or the switch on each page.

Order: the `av_lang` cookie (set by the start link's `locale` parameter or the page's language switch),
then the browser's Accept-Language, then English. Only pages under /flow/ are translated: the API,
the dashboard and the admin stay in English whatever the browser asks for.
"""

from django.conf import settings
from django.utils import translation
from django.utils.cache import patch_vary_headers
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET

from .headers import flow_headers
from .navigation import SeeOther

FLOW_PREFIX = "/flow/"


def supported_language(code: str) -> str | None:
    """The shipped language for a code such as `de`, `de-AT` or `pt_BR`, or None."""
    try:
        return translation.get_supported_language_variant(code.strip().replace("_", "-")[:20])
    except LookupError:
        return None


def language_cookie_set(response, language: str) -> None:
    response.set_cookie(
        settings.LANGUAGE_COOKIE_NAME,
        language,
        max_age=settings.LANGUAGE_COOKIE_AGE,
        path=settings.LANGUAGE_COOKIE_PATH,
        secure=settings.LANGUAGE_COOKIE_SECURE,
        httponly=settings.LANGUAGE_COOKIE_HTTPONLY,
        samesite=settings.LANGUAGE_COOKIE_SAMESITE,
    )


class FlowLanguageMiddleware:
    """Activates the flow's language for requests under /flow/ and says which one answered."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not request.path.startswith(FLOW_PREFIX):
            return self.get_response(request)
        language = translation.get_language_from_request(request)
        translation.activate(language)
        request.LANGUAGE_CODE = language
        try:
            response = self.get_response(request)
        finally:
            translation.deactivate()
        patch_vary_headers(response, ("Accept-Language", "Cookie"))
        response.headers.setdefault("Content-Language", request.LANGUAGE_CODE)
        return response


def language_from_link(request) -> str | None:
    """The start link's optional `locale` (e.g. passed on by the partner's SDK): it wins over the browser's
    language from this answer on (the caller remembers it with `language_cookie_set`). None if absent or unknown."""
    language = supported_language(request.GET.get("locale", ""))
    if language:
        translation.activate(language)
        request.LANGUAGE_CODE = language
    return language


@require_GET
def set_language(request):
    """The page's language switch: remembers the choice and goes back to the page it was made on.

    A GET form, so that it needs no CSRF token: every page, error pages included, stays free of
    per-visitor content, and the worst a forged link can do is change the language of the pages.
    """
    language = supported_language(request.GET.get("language", ""))
    back = request.GET.get("next", "")
    if not (back.startswith(FLOW_PREFIX) and url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()})):
        back = FLOW_PREFIX
    response = SeeOther(back)
    if language:
        language_cookie_set(response, language)
    return flow_headers(response)
