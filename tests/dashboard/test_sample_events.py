""" "Send test webhook" with any event the service sends: the OpenAPI example of that event, signed, throttled like
webhook.test."""

import json

import jsonschema
import pytest
from django.test import Client
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from tenants.models import AuditLogEntry
from webhooks.delivery import webhook_delivery_attempt
from webhooks.models import WebhookDelivery

OPT_IN_EVENTS = ["verification.started", "verification.requires_input", "verification.redacted"]
# Every event the service sends, as the OpenAPI document's `webhooks` lists them (webhook.test is the dashboard's).
SAMPLE_EVENTS = ["verification.completed", *OPT_IN_EVENTS]


@pytest.fixture
def openapi(db):
    return json.loads(Client().get("/v1/openapi.json").content)


def send(dashboard, mode, event):
    return dashboard.post("/dashboard/webhooks/test/", {"mode": mode, "event": event}, follow=True)


@pytest.mark.parametrize("event", SAMPLE_EVENTS)
@pytest.mark.parametrize("mode", ["test", "live"])
def test_each_event_is_sent_as_its_documented_example_signed_with_the_modes_secret(
    dashboard, onboarded, receiver, openapi, staff_user, event, mode
):
    dashboard.post("/dashboard/webhooks/address/", {"mode": mode, "url": receiver.url("/hooks")})
    page = send(dashboard, mode, event).content.decode()

    delivery = WebhookDelivery.objects.get()
    assert f"Sample {event} (the documented example) {delivery.pk} queued" in page
    webhook_delivery_attempt(delivery_id=delivery.pk)
    (received,) = receiver.received
    secrets = {"live": onboarded.tenant.webhook_secret, "test": onboarded.tenant.test_webhook_secret}
    body = Webhook(secrets[mode]).verify(received.body, received.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(secrets["test" if mode == "live" else "live"]).verify(received.body, received.headers)
    documented = openapi["webhooks"][event]["post"]["requestBody"]["content"]["application/json"]
    jsonschema.validate(body, documented["schema"])
    example = documented["example"]
    assert body["event"] == event and body["timestamp"] != example["timestamp"]  # sent now
    assert body["data"] == {**example["data"], "mode": mode}
    assert received.headers["webhook-id"] == delivery.pk
    entry = AuditLogEntry.objects.get(action="webhook.test_sent")
    assert (entry.actor_id, entry.target_label) == (staff_user.pk, event)


def test_every_documented_example_validates_against_its_own_schema(openapi):
    for name, webhook in openapi["webhooks"].items():
        content = webhook["post"]["requestBody"]["content"]["application/json"]
        jsonschema.validate(content["example"], content["schema"])
        assert content["example"]["event"] == name


def test_samples_and_webhook_test_share_the_per_tenant_throttle(dashboard, onboarded, receiver):
    from dashboard.webhook_addresses import TEST_WEBHOOK_BURST

    dashboard.post("/dashboard/webhooks/address/", {"mode": "live", "url": receiver.url()})
    events = ["webhook.test", *OPT_IN_EVENTS] * TEST_WEBHOOK_BURST
    pages = [send(dashboard, "live", event).content.decode() for event in events[: TEST_WEBHOOK_BURST + 2]]

    assert WebhookDelivery.objects.count() == TEST_WEBHOOK_BURST
    assert "Too many test webhooks" in pages[-1]


@pytest.mark.parametrize("event", ["session.deleted", "verification.Completed", ""])
def test_only_webhook_test_and_the_documented_events_can_be_sent(dashboard, onboarded, receiver, event):
    dashboard.post("/dashboard/webhooks/address/", {"mode": "live", "url": receiver.url()})

    page = send(dashboard, "live", event).content.decode()

    if event == "":  # the form without a choice: webhook.test, as before
        assert WebhookDelivery.objects.get().event_type == "webhook.test"
    else:
        assert "Choose a test event among: webhook.test, verification.completed, verification.started" in page
        assert not WebhookDelivery.objects.exists()


def test_the_webhooks_page_offers_every_event_the_service_documents(dashboard, onboarded, openapi):
    page = dashboard.get("/dashboard/webhooks/").content.decode()
    for mode in ("live", "test"):
        form = page.split(f'id="test-event-{mode}"')[1].split("</select>")[0]
        offered = [option.split('"')[0] for option in form.split('value="')[1:]]
        assert offered == ["webhook.test", *SAMPLE_EVENTS]
        assert sorted(offered) == sorted(openapi["webhooks"])
