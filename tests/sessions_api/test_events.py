"""The webhook events' one declaration (sessions_api.events): what is documented, sampled, sent and scrubbed agrees."""

import json

import pytest
from django.test import Client

from sessions_api.events import EVENT_DATA_FIELDS, event_example, payload_without_personal_data
from webhooks import services as webhook_services
from webhooks.services import TEST_EVENT


@pytest.fixture
def documented_webhooks(db):
    return json.loads(Client().get("/v1/openapi.json").content)["webhooks"]


def test_the_openapi_document_lists_each_events_fields_in_the_order_they_are_sent(documented_webhooks):
    for name, fields in EVENT_DATA_FIELDS.items():
        body = documented_webhooks[name]["post"]["requestBody"]["content"]["application/json"]
        data = body["schema"]["properties"]["data"]
        assert list(data["properties"]) == list(fields), name
        assert data["required"] == list(fields), name
        assert list(body["example"]["data"]) == list(fields), name


def test_the_test_event_sent_by_the_dashboard_has_its_declared_fields():
    sent = json.loads(webhook_services.test_event_payload(mode="live"))

    assert list(sent["data"]) == list(EVENT_DATA_FIELDS[TEST_EVENT])
    assert event_example(TEST_EVENT, mode="live")["data"] == sent["data"]


@pytest.mark.parametrize("name", ["verification.completed", "verification.started", "verification.requires_input"])
def test_a_redaction_erases_the_subject_and_metadata_of_a_queued_event_and_nothing_else(name):
    example = event_example(name)
    scrubbed = json.loads(payload_without_personal_data(json.dumps(example)))

    assert scrubbed["data"] == {**example["data"], "subject": "", "metadata": {}}
    assert {key: scrubbed[key] for key in ("event", "timestamp")} == {"event": name, "timestamp": example["timestamp"]}
