"""The API's hot path: a request served without DRF's per-request machinery, with the same answers.

DRF builds, for every request, a Request with its parsers, authenticators and negotiator, negotiates
the renderer, checks permissions and throttles through generic hooks and renders through its renderer
classes: on GET /v1/sessions/{id} that was about as much CPU as the rest of the request. An ApiView
method listed in `lean_methods` is served here instead when the request asks for JSON in the usual way
(no `Accept`, `*/*` or `application/json`, no `?format=`); anything else goes through DRF as before.

The same steps run in the same order with the same code: the cached key authentication, the view's
permission classes (DRF's own check_permissions), the per-key rate limit (a read's Redis answer is
read after its database read), the view's own handler, DRF's exception handling (the API's problem
details) and the view's `finalize_response` (rate-limit headers, `Cache-Control`, `Allow`). What is
left out is only the generic machinery: `LeanRequest` is the part of DRF's Request the handlers use,
and JSON answers are rendered as DRF's JSONRenderer renders them.

So lean dispatch honours one authentication, one throttle, one parser and one renderer, and the
permission classes that read only what LeanRequest has: `lean_view_check` refuses, when the class is
defined, a view with `lean_methods` that asks for anything else (ApiView calls it for every subclass).
"""

from functools import cached_property, lru_cache

from django.core.exceptions import ImproperlyConfigured
from django.http import HttpResponse
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.utils.encoders import JSONEncoder

from .authentication import CachedApiKeyAuthentication
from .parsers import StrictJSONParser
from .throttle import ApiKeyRateThrottle

JSON = "application/json"
# What partners send; anything else (another type, a quality list) is negotiated by DRF, 406 included.
_PLAIN_ACCEPTS = frozenset(("", "*/*", JSON))
_authentication = CachedApiKeyAuthentication()
_throttle = ApiKeyRateThrottle()
_parser = StrictJSONParser()
_renderer = JSONRenderer()
# What lean_dispatch runs in place of DRF's per-request choice of classes.
_HONOURED = {
    "authentication_classes": (CachedApiKeyAuthentication,),
    "throttle_classes": (ApiKeyRateThrottle,),
    "parser_classes": (StrictJSONParser,),
    "renderer_classes": (JSONRenderer,),
}
# Run by DRF's check_permissions on the LeanRequest: they read request.user only.
_HONOURED_PERMISSIONS = (IsAuthenticated, AllowAny)


def _names(classes) -> str:
    return ", ".join(getattr(cls, "__name__", repr(cls)) for cls in classes) or "none"


def lean_view_check(view_class) -> None:
    """Refuse a view with `lean_methods` whose classes lean dispatch would not honour (ImproperlyConfigured)."""
    if not view_class.lean_methods:
        return
    where = f"{view_class.__module__}.{view_class.__qualname__} (lean_methods {sorted(view_class.lean_methods)})"
    for attribute, honoured in _HONOURED.items():
        if tuple(getattr(view_class, attribute)) != honoured:
            raise ImproperlyConfigured(
                f"{where}: lean dispatch runs {attribute} = [{_names(honoured)}] only, "
                f"not [{_names(getattr(view_class, attribute))}]; leave the method to DRF (drop it from lean_methods)"
            )
    unknown = [cls for cls in view_class.permission_classes if cls not in _HONOURED_PERMISSIONS]
    if unknown:
        raise ImproperlyConfigured(
            f"{where}: lean dispatch runs the permission classes {_names(_HONOURED_PERMISSIONS)} only, "
            f"not {_names(unknown)}; leave the method to DRF (drop it from lean_methods)"
        )


def lean_acceptable(request) -> bool:
    """Whether the request can take the hot path: it accepts JSON as partners ask for it."""
    meta = request.META
    return meta.get("HTTP_ACCEPT", "") in _PLAIN_ACCEPTS and (
        not meta.get("QUERY_STRING") or api_settings.URL_FORMAT_OVERRIDE not in request.GET
    )


class LeanRequest:
    """DRF's Request as the API's handlers use it (`user`, `auth`, `data`, `stream`), over Django's request."""

    def __init__(self, request):
        self._request = request
        self.user = None
        self.auth = None
        self.authenticators = (_authentication,)  # DRF's handle_exception asks them for WWW-Authenticate
        self.accepted_media_type = JSON
        self.accepted_renderer = _renderer  # what DRF's negotiation picks for these requests

    def __getattr__(self, name):
        return getattr(self._request, name)

    @property
    def stream(self):
        """None for a request without a body, as DRF's Request.stream."""
        meta = self._request.META
        try:
            length = int(meta.get("CONTENT_LENGTH", meta.get("HTTP_CONTENT_LENGTH", 0)))
        except (ValueError, TypeError):
            length = 0
        return None if length == 0 else self._request

    @cached_property
    def data(self):
        """The parsed JSON body: the views check its media type first (415 otherwise)."""
        if self.stream is None:
            return {}
        return _parser.parse(self._request, JSON, {"request": self._request})

    @property
    def query_params(self):
        return self._request.GET

    @property
    def successful_authenticator(self):
        """What DRF's permission_denied asks to choose between 401 and 403."""
        return _authentication if self.user is not None else None


@lru_cache(maxsize=1)
def _json_encoder() -> JSONEncoder:
    """One encoder for every answer, with the project's settings: json.dumps would build one per call."""
    return JSONEncoder(
        ensure_ascii=not api_settings.UNICODE_JSON,
        allow_nan=not api_settings.STRICT_JSON,
        separators=(",", ":") if api_settings.COMPACT_JSON else (", ", ": "),
    )


def render_json(data) -> bytes:
    """What DRF's JSONRenderer writes with the project's settings (compact, UTF-8, no NaN)."""
    text = _json_encoder().encode(data)
    # The two line separators JSON allows unescaped but JavaScript does not: escaped, as DRF does.
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").encode()


class JsonAnswer(HttpResponse):
    """A handler's answer on the hot path: rendered at once, as DRF's JSONRenderer renders it, `data` kept.

    A DRF Response is a template response rendered later: building one, then rendering it, cost about
    twice this (SimpleTemplateResponse's setup, the content set twice, the type header set twice).
    """

    def __init__(self, data, status: int = 200):
        super().__init__(render_json(data), content_type=JSON, status=status)
        self.data = data


def json_answer(request, data, status: int = 200):
    """What a hot handler returns: a JsonAnswer on the hot path, else a DRF Response for DRF to render."""
    if isinstance(request, LeanRequest):
        return JsonAnswer(data, status)
    return Response(data, status=status)


def rendered(response):
    """A handler's DRF Response rendered as DRF would have rendered it; any other response as it is."""
    if isinstance(response, Response):
        response.content = b"" if response.data is None else render_json(response.data)  # marks it rendered
        response["Content-Type"] = JSON
    return response


_default_headers: dict[type, dict] = {}


def lean_dispatch(view, request, *args, **kwargs):
    """`view`'s handler for `request.method`, with DRF's authentication, throttle, errors and headers."""
    lean = LeanRequest(request)
    view.args, view.kwargs, view.request = args, kwargs, lean
    defaults = _default_headers.get(type(view))
    if defaults is None:  # `Allow`: the same for every request to the view
        defaults = _default_headers[type(view)] = dict(view.default_response_headers)
    view.headers = dict(defaults)
    try:
        lean.user, lean.auth = _authentication.authenticate(lean)
        view.check_permissions(lean)
        if not _throttle.allow_request(lean, view):
            view.throttled(lean, None)
        response = getattr(view, request.method.lower())(lean, *args, **kwargs)
    except Exception as exc:
        response = view.handle_exception(exc)
    # What APIView.finalize_response does, but for the renderer: the answer is rendered here.
    response = rendered(view.rate_limit_decided(lean, response))
    for name, value in view.headers.items():  # `Allow`, and `WWW-Authenticate` or `Retry-After` of an error
        response[name] = value
    return view.with_api_headers(lean, response)
