"""Every JSON answer of the API checked against its OpenAPI document (/v1/openapi.json), as a partner's
generated client would read it.

The document is generated from the API's serializers (the one declaration of each answer's fields); the
API builds its hot answers by hand (sessions_api/api/serializers/representations.py), and this is what holds the two
together: tests/conftest.py passes every response of Django's test client under /v1/ through
`assert_matches_openapi`. The check is strict: an object may hold no property it does not declare
(and must hold those it declares required, as the serializers' fields are), so a field added or
dropped on one side only fails too.
"""

import json
from functools import lru_cache

import jsonschema
from openapi_core import Config, OpenAPI
from openapi_core.templating.paths.exceptions import OperationNotFound, PathNotFound
from openapi_core.templating.responses.exceptions import ResponseNotFound
from openapi_core.testing import MockRequest, MockResponse

_NOT_CHECKED = ("/v1/openapi.json", "/v1/docs", "/v1/redoc")


@lru_cache(maxsize=1)
def _document() -> dict:
    from drf_spectacular.generators import SchemaGenerator

    document = SchemaGenerator(patterns=None).get_schema(request=None, public=True)
    return json.loads(json.dumps(document, default=str))  # lazy strings and the like, as served


@lru_cache(maxsize=1)
def _problem_validator() -> jsonschema.Draft202012Validator:
    """The document's Problem object (RFC 9457), for error answers the document lists under no operation."""
    document = _document()
    return jsonschema.Draft202012Validator(
        {"$ref": "#/components/schemas/Problem", "components": document["components"]}
    )


@lru_cache(maxsize=1)
def api_document() -> OpenAPI:
    document = _document()
    strict = Config(
        additional_properties_default_policy="forbid",
        extra_media_type_deserializers={"application/problem+json": json.loads},
    )
    return OpenAPI.from_dict(document, config=strict)


def assert_matches_openapi(response) -> None:
    """Fail unless `response` (a JSON answer under /v1/) is one the document declares, body and all."""
    request = response.wsgi_request
    if not request.path.startswith("/v1/") or request.path.startswith(_NOT_CHECKED):
        return
    content_type = response.get("Content-Type", "")
    if "json" not in content_type:
        return
    # Only the operation (method and path) is read from the request: its body was consumed by the view.
    asked = MockRequest("http://testserver", request.method.lower(), request.path)
    answered = MockResponse(
        response.content,
        status_code=response.status_code,
        headers=dict(response.headers),
        content_type=content_type.split(";")[0].strip(),
    )
    try:
        api_document().validate_response(asked, answered)
    except PathNotFound:
        return  # not a path of the API (an unknown path's 404): nothing declared to hold it to
    except (OperationNotFound, ResponseNotFound):
        # A method the path does not have (405, a CORS preflight) or a status no operation lists (406,
        # 500): an error is still a problem document of the declared shape.
        if answered.content_type == "application/problem+json":
            _problem_validator().validate(json.loads(response.content))
