"""The partner's `metadata` (issue 29): validated on creation, echoed by GET, by the list and in webhook events."""

import pytest
from standardwebhooks.webhooks import Webhook

from sessions_api.models import VerificationSession
from tests.support.webhooks import finalize_with_webhook

METADATA = {"orderId": "A-1042", "customer": "cus_77", "note": "Zoë's second try", "empty": ""}


def test_metadata_round_trips_through_create_get_and_list(api):
    created = api.create_session(metadata=METADATA)
    assert created["metadata"] == METADATA

    read = api.get(f"/v1/sessions/{created['sessionId']}").json()
    assert read["session"]["metadata"] == METADATA

    [row] = api.get("/v1/sessions").json()["data"]
    assert row["session"]["sessionId"] == created["sessionId"]
    assert row["session"]["metadata"] == METADATA


def test_a_session_created_without_metadata_shows_an_empty_object(api):
    created = api.create_session()
    assert created["metadata"] == {}
    assert api.get(f"/v1/sessions/{created['sessionId']}").json()["session"]["metadata"] == {}


def test_metadata_at_the_limits_is_accepted(api):
    # 50 keys of 40 characters; 500-character values (within the API's 16 KB body limit).
    metadata = {f"k{i:02d}" + "x" * 37: ("v" * 500 if i < 20 else str(i)) for i in range(50)}
    assert all(len(key) == 40 for key in metadata)
    assert api.create_session(metadata=metadata)["metadata"] == metadata


@pytest.mark.parametrize(
    "metadata, field, code",
    [
        ("A-1042", "metadata", "invalid_type"),
        (["A-1042"], "metadata", "invalid_type"),
        ({f"k{i}": "v" for i in range(51)}, "metadata", "out_of_range"),
        ({"k" * 41: "v"}, "metadata." + "k" * 41, "out_of_range"),
        ({"": "v"}, "metadata", "out_of_range"),
        ({"orderId": "v" * 501}, "metadata.orderId", "out_of_range"),
        ({"orderId": 1042}, "metadata.orderId", "invalid_type"),
        ({"orderId": None}, "metadata.orderId", "invalid_type"),
        ({"orderId": {"nested": "no"}}, "metadata.orderId", "invalid_type"),
        ({"orderId": "A\u0000B"}, "metadata.orderId", "invalid_value"),
        ({"order\u202eId": "v"}, "metadata.order\u202eId", "invalid_value"),
        (None, "metadata", "invalid_type"),
    ],
    ids=[
        "a string",
        "a list",
        "51 keys",
        "a 41-character key",
        "an empty key",
        "a 501-character value",
        "a number",
        "a null value",
        "a nested object",
        "a NUL",
        "a bidi override in a key",
        "null",
    ],
)
def test_bad_metadata_is_refused_as_a_validation_problem_and_nothing_is_stored(api, metadata, field, code):
    response = api.post("/v1/sessions", {"subject": "user-42", "age_limit": 18, "metadata": metadata})

    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["code"] == "validation_error"
    assert [(error["field"], error["code"]) for error in problem["errors"]] == [(field, code)]
    assert not VerificationSession.objects.exists()


def test_every_bad_key_is_named_in_one_answer(api):
    response = api.post(
        "/v1/sessions", {"subject": "u", "age_limit": 18, "metadata": {"ok": "fine", "a": 1, "b": "x" * 501}}
    )
    assert sorted((error["field"], error["code"]) for error in response.json()["errors"]) == [
        ("metadata.a", "invalid_type"),
        ("metadata.b", "out_of_range"),
    ]


@pytest.mark.usefixtures("celery_worker")
def test_the_completed_event_carries_the_metadata(api, onboarded, receiver):
    session = finalize_with_webhook(api, receiver.url(), metadata={"orderId": "A-1042"})

    [request] = receiver.wait_for(1)
    payload = Webhook(onboarded.tenant.webhook_secret).verify(request.body, request.headers)
    assert payload["data"]["sessionId"] == session["sessionId"]
    assert payload["data"]["metadata"] == {"orderId": "A-1042"}
