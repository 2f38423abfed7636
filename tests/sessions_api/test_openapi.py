"""OpenAPI 3 at /v1/openapi.json matches what the API really answers; Swagger UI and Redoc use local assets only."""

import json
import re

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders
from drf_spectacular.validation import validate_schema

from sessions_api.state_machine import Results, session_transition
from tests.factories import SETUP

SPEC_SESSION_FIELDS = {
    "sessionId",
    "status",
    "subject",
    "sessionToken",
    "signature",
    "expiresAt",
    "callbackUrl",
    "cancelUrl",
    "notificationUrl",
}


@pytest.fixture
def schema(anonymous_api):
    response = anonymous_api.client.get("/v1/openapi.json")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/vnd.oai.openapi+json")
    return json.loads(response.content)


def _resolve(schema: dict, node: dict) -> dict:
    """Follow `$ref`, and the `allOf: [$ref]` (3.0) or `oneOf: [$ref, null]` (3.1) of a nullable reference."""
    while True:
        if "$ref" in node:
            node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[1]]
        elif "allOf" in node and len(node["allOf"]) == 1:
            node = node["allOf"][0]
        elif (
            "oneOf" in node
            and len(
                not_null := [
                    choice
                    for choice in node["oneOf"]
                    if choice != {"type": "null"} and not choice.get("$ref", "").endswith("/NullEnum")
                ]
            )
            == 1
        ):
            node = not_null[0]
        else:
            return node


def _nullable(schema: dict, node: dict) -> bool:
    """Whether `node` admits null, as OpenAPI 3.1 writes it (a `null` type or a `oneOf` choice of it)."""
    types = node.get("type")
    choices = [_resolve(schema, choice) if "$ref" in choice else choice for choice in node.get("oneOf", [])]
    return "null" in (types if isinstance(types, list) else [types]) or {"type": "null"} in choices


def _response_schema(schema, path, method, status, media_type="application/json") -> dict:
    content = schema["paths"][path][method]["responses"][str(status)]["content"]
    return _resolve(schema, content[media_type]["schema"])


def _properties(schema, node) -> dict:
    return _resolve(schema, node)["properties"]


def _with_all_results(session_id):
    session_transition(
        session_id=session_id,
        to="processing",
        cause="selfie",
        results=Results(
            liveness={"is_live": True, "liveness_score": 0.9},
            age_estimation={"estimated_age": 30.0, "age_confidence": 0.9},
        ),
    )
    session_transition(session_id=session_id, to="requires_doc", cause="unsure")
    session_transition(session_id=session_id, to="processing", cause="document")
    session_transition(
        session_id=session_id,
        to="approved",
        reason="document",
        cause="document valid",
        results=Results(
            document={"document_kind": "passport", "birthdate": "2000-01-31", "true_age": 26},
            # Not a combination a session reaches; here to show every key's shape.
            age_credential={
                "kind": "mdoc",
                "doc_type": "eu.europa.ec.av.1",
                "claim": "age_over_18",
                "value": True,
                "issuer_country": "UT",
                "trust_source": "sandbox",
            },
            age_pass={"method": "document", "thresholds": [18], "proof_age": "under_3_months"},
        ),
    )


def test_the_schema_is_valid_openapi_3(schema):
    assert schema["openapi"].startswith("3.")
    validate_schema(schema)


def test_the_schema_documents_both_endpoints(schema):
    assert {"/v1/sessions", "/v1/sessions/{session_id}"} <= set(schema["paths"])
    assert "post" in schema["paths"]["/v1/sessions"]
    assert "get" in schema["paths"]["/v1/sessions/{session_id}"]
    assert not {"/v1/openapi.json", "/v1/docs", "/v1/redoc"} & set(schema["paths"])


def test_the_schema_documents_the_x_api_key_header(schema):
    schemes = schema["components"]["securitySchemes"]
    ((name, scheme),) = schemes.items()
    assert scheme == {**scheme, "type": "apiKey", "in": "header", "name": "X-API-Key"}
    for path, method in (("/v1/sessions", "post"), ("/v1/sessions/{session_id}", "get")):
        assert schema["paths"][path][method]["security"] == [{name: []}]


def test_the_request_schema_is_the_spec_input(schema):
    body = schema["paths"]["/v1/sessions"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    request = _resolve(schema, body)

    spec = {"subject", "age_limit", "callback_url", "cancel_url", "notification_url"}
    assert set(request["properties"]) == spec | {"metadata"}  # issue 29: the partner's own references
    assert set(request["required"]) == {"subject", "age_limit"}
    assert request["properties"]["metadata"]["type"] == "object"
    assert request["properties"]["metadata"]["maxProperties"] == 50
    assert request["properties"]["age_limit"] == {"type": "integer", "minimum": 10, "maximum": 21}
    assert request["properties"]["subject"]["type"] == "string"
    assert request["properties"]["notification_url"]["format"] == "uri"


def test_the_201_schema_has_exactly_the_keys_a_real_creation_returns(schema, api):
    created = api.post("/v1/sessions", {"subject": "u", "age_limit": 18}).json()
    response = _response_schema(schema, "/v1/sessions", "post", 201)

    assert set(response["properties"]) == set(created) == {"session"}
    session = _resolve(schema, response["properties"]["session"])
    assert set(session["properties"]) == set(created["session"])
    assert SPEC_SESSION_FIELDS <= set(session["required"])


def test_the_200_schema_has_exactly_the_keys_a_real_read_returns(schema, api):
    session_id = api.create_session()["sessionId"]
    _with_all_results(session_id)
    read = api.get(f"/v1/sessions/{session_id}").json()
    response = _response_schema(schema, "/v1/sessions/{session_id}", "get", 200)

    assert (
        set(response["properties"])
        == set(read)
        == {"session", "ageEstimation", "liveness", "validateDoc", "ageCredential", "agePass"}
    )
    assert set(response["required"]) == set(read)
    for key in read:
        assert set(_properties(schema, response["properties"][key])) == set(read[key]), key
    for key in ("ageEstimation", "liveness", "validateDoc", "ageCredential", "agePass"):
        assert _nullable(schema, response["properties"][key]), key
    assert read["validateDoc"]["birthdate"] == "2000-01-31T00:00:00.000Z"
    # The session's own limit and a bucket: no day of proof or expiry, the same for a pass at every tenant.
    assert read["agePass"] == {"method": "document", "thresholds": [18], "proofAge": "under_3_months"}


def test_the_spec_types_of_the_result_fields_are_documented(schema):
    response = _response_schema(schema, "/v1/sessions/{session_id}", "get", 200)
    types = {
        key: {
            name: _resolve(schema, field).get("type")
            for name, field in _properties(schema, response["properties"][key]).items()
        }
        for key in ("ageEstimation", "liveness", "validateDoc")
    }

    assert types == {
        "ageEstimation": {"ageLimit": "integer", "estimatedAge": "number", "ageConfidence": "number"},
        "liveness": {"isLive": "boolean", "livenessScore": "number", "signals": "array"},
        "validateDoc": {
            "trueAge": "integer",
            "birthdate": "string",
            "holderMatch": "object",
            "livenessChecked": "boolean",
        },
    }


def test_the_session_status_enum_is_the_spec_states(schema):
    response = _response_schema(schema, "/v1/sessions/{session_id}", "get", 200)
    status = _resolve(schema, _properties(schema, response["properties"]["session"])["status"])

    assert set(status["enum"]) == {"initiated", "processing", "requires_doc", "approved", "denied"}


def test_errors_are_documented_as_problem_details_with_the_keys_really_sent(schema, api):
    real = api.post("/v1/sessions", {"age_limit": 9}).json()
    post = schema["paths"]["/v1/sessions"]["post"]["responses"]
    get = schema["paths"]["/v1/sessions/{session_id}"]["get"]["responses"]

    for status in ("400", "401", "403", "409", "413", "415", "422", "429", "503"):
        assert list(post[status]["content"]) == ["application/problem+json"], status
    for status in ("401", "404", "429"):
        assert list(get[status]["content"]) == ["application/problem+json"], status
    problem = _response_schema(schema, "/v1/sessions", "post", 400, "application/problem+json")
    assert set(problem["properties"]) == set(real)
    error_item = _resolve(schema, problem["properties"]["errors"]["items"])
    assert set(error_item["properties"]) == set(real["errors"][0])
    assert "Retry-After" in post["429"]["headers"]


def _asset_urls(html: str) -> list[str]:
    return re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)["']""", html)


@pytest.mark.parametrize("path", ["/v1/docs", "/v1/redoc"])
def test_the_docs_pages_load_only_assets_served_by_the_service(anonymous_api, path):
    response = anonymous_api.client.get(path)

    assert response.status_code == 200
    html = response.content.decode()
    urls = _asset_urls(html)
    assert any(url.endswith(".js") for url in urls)
    for url in urls:
        assert not re.match(r"^(?:[a-z]+:)?//", url, re.IGNORECASE), url
        if url.startswith(settings.STATIC_URL):
            assert finders.find(url[len(settings.STATIC_URL) :]), f"{url} is not a static file of the service"
    assert not re.search(r"""@import\s+url\(\s*["']?(?:https?:)?//""", html)
    assert "fonts.googleapis.com" not in html
    assert "/v1/openapi.json" in html


def test_the_client_endpoints_of_sdk_mode_are_documented_without_the_secret_key(schema):
    operations = {
        ("/v1/client/config", "get"),
        ("/v1/client/session", "get"),
        ("/v1/client/sessions", "post"),
        ("/v1/client/launch", "post"),
    }
    for path, method in operations:
        operation = schema["paths"][path][method]
        assert operation.get("security") in (None, [], [{}]), path  # never the X-API-Key scheme
        assert any(parameter["name"] == "key" for parameter in operation["parameters"]), path
        assert "application/problem+json" in operation["responses"]["401"]["content"], path
    status = _response_schema(schema, "/v1/client/session", "get", 200)
    assert set(status["properties"]) == {"sessionId", "status", "reason", "mode", "expiresAt"}


def test_the_schema_documents_list_and_cancel_as_they_answer(schema, api):
    session_id = api.create_session()["sessionId"]
    listed = api.get("/v1/sessions").json()
    cancelled = api.post(f"/v1/sessions/{session_id}/cancel").json()

    list_schema = _response_schema(schema, "/v1/sessions", "get", 200)
    cancel_schema = _response_schema(schema, "/v1/sessions/{session_id}/cancel", "post", 200)
    item = _resolve(schema, list_schema["properties"]["data"]["items"])

    assert set(list_schema["properties"]) == set(listed)
    assert set(item["properties"]) == set(listed["data"][0])
    assert set(cancel_schema["properties"]) == set(cancelled)
    parameters = {parameter["name"] for parameter in schema["paths"]["/v1/sessions"]["get"]["parameters"]}
    assert {"status", "subject", "created_from", "created_before", "limit", "cursor"} <= parameters


def test_every_request_example_of_the_schema_is_accepted_as_is(schema, sandbox_api):
    answered = []
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            content = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
            for name, example in content.get("examples", {}).items():
                if "{session_id}" in path:
                    path_now = path.replace("{session_id}", sandbox_api.create_session()["sessionId"])
                else:
                    path_now = path
                response = getattr(sandbox_api, method)(path_now, example["value"])
                assert 200 <= response.status_code < 300, (path, name, response.content)
                answered.append(name)
    assert len(answered) >= 3


def test_the_webhooks_are_described_with_their_headers_and_the_payloads_really_sent(schema, sandbox_api, onboarded):
    import jsonschema

    from sessions_api.models import VerificationSession
    from sessions_api.state_machine import session_opened, session_transition
    from webhooks.models import WebhookDelivery
    from webhooks.services import webhook_test_send

    assert schema["openapi"].startswith("3.1")
    session_id = sandbox_api.create_session(notification_url="https://partner.example/hooks")["sessionId"]
    onboarded.tenant.webhook_extra_events = {
        "test": ["verification.redacted", "verification.started", "verification.requires_input"]
    }
    onboarded.tenant.save(update_fields=["webhook_extra_events"])
    session_opened(VerificationSession.objects.select_related("tenant").get(pk=session_id))
    session_transition(session_id=session_id, to="processing", cause="selfie submitted")
    session_transition(session_id=session_id, to="requires_doc", cause="face too close to the limit")
    sandbox_api.post(f"/v1/sessions/{session_id}/cancel")
    sandbox_api.post(f"/v1/sessions/{session_id}/redact")

    def sent_of(event):
        return WebhookDelivery.objects.get(subject_ref=session_id, event_type=event).payload

    sent = {
        "verification.completed": sent_of("verification.completed"),
        "verification.started": sent_of("verification.started"),
        "verification.requires_input": sent_of("verification.requires_input"),
        "verification.redacted": WebhookDelivery.objects.get(
            subject_ref=session_id, event_type="verification.redacted"
        ).payload,
        "webhook.test": webhook_test_send(
            tenant=onboarded.tenant, mode="test", url="https://p.example/h", actor=SETUP
        ).payload,
    }

    assert set(schema["webhooks"]) == set(sent)
    for name, payload in sent.items():
        operation = schema["webhooks"][name]["post"]
        headers = {parameter["name"] for parameter in operation["parameters"] if parameter["in"] == "header"}
        assert {"webhook-id", "webhook-timestamp", "webhook-signature"} <= headers
        body_schema = operation["requestBody"]["content"]["application/json"]["schema"]
        jsonschema.validate(json.loads(payload), body_schema)
        assert set(body_schema["properties"]["data"]["properties"]) == set(json.loads(payload)["data"])
