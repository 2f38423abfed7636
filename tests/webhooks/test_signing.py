"""Standard Webhooks signatures, checked with the `standardwebhooks` package as partners will."""

import base64
import time
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

import webhooks.delivery
from tenants.services import tenant_webhook_secret_rotate, webhook_secret_new
from tests.factories import SETUP, delivery_due_now
from tests.support.receiver import Reply
from tests.support.webhooks import delivery_of, finalize_with_webhook
from webhooks.delivery import webhook_delivery_attempt
from webhooks.signing import signature, signature_header


def test_signature_matches_the_standard_webhooks_reference_implementation():
    secret = webhook_secret_new()
    body = b'{"event":"verification.completed"}'

    ours = signature(secret=secret, msg_id="msg_1", timestamp=1_700_000_000, body=body)

    reference = Webhook(secret).sign("msg_1", datetime.fromtimestamp(1_700_000_000, tz=UTC), body.decode())
    assert ours == reference


def test_secret_is_whsec_and_32_random_bytes():
    secret = webhook_secret_new()
    assert secret.startswith("whsec_") and len(base64.b64decode(secret.removeprefix("whsec_"))) == 32


def test_signature_header_lists_one_signature_per_secret():
    old, new = webhook_secret_new(), webhook_secret_new()
    header = signature_header(secrets=[new, old], msg_id="msg_1", timestamp=1, body=b"{}")
    assert header.split(" ") == [
        signature(secret=new, msg_id="msg_1", timestamp=1, body=b"{}"),
        signature(secret=old, msg_id="msg_1", timestamp=1, body=b"{}"),
    ]


@pytest.mark.usefixtures("celery_worker")
def test_during_a_secret_rotation_both_secrets_verify_the_same_webhook(api, onboarded, receiver):
    old_secret = onboarded.tenant.webhook_secret
    tenant = tenant_webhook_secret_rotate(tenant=onboarded.tenant, actor=SETUP)
    assert tenant.webhook_secret != old_secret

    finalize_with_webhook(api, receiver.url())

    [request] = receiver.wait_for(1)
    assert len(request.headers["webhook-signature"].split(" ")) == 2
    Webhook(old_secret).verify(request.body, request.headers)
    Webhook(tenant.webhook_secret).verify(request.body, request.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(webhook_secret_new()).verify(request.body, request.headers)


@pytest.mark.usefixtures("celery_worker")
def test_after_the_rotation_overlap_only_the_new_secret_signs(api, onboarded, receiver):
    old_secret = onboarded.tenant.webhook_secret
    tenant = tenant_webhook_secret_rotate(tenant=onboarded.tenant, overlap=timedelta(0), actor=SETUP)

    finalize_with_webhook(api, receiver.url())

    [request] = receiver.wait_for(1)
    assert len(request.headers["webhook-signature"].split(" ")) == 1
    Webhook(tenant.webhook_secret).verify(request.body, request.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(old_secret).verify(request.body, request.headers)


def test_each_attempt_carries_its_own_timestamp_and_a_signature_over_it(api, onboarded, receiver, monkeypatch):
    receiver.script(Reply(status=500))
    delivery = delivery_of(finalize_with_webhook(api, receiver.url()))
    webhook_delivery_attempt(delivery_id=delivery.id)
    later = int(time.time()) + 120  # the retry happens two minutes later
    monkeypatch.setattr(webhooks.delivery, "time", SimpleNamespace(time=lambda: later))
    delivery_due_now(delivery)
    webhook_delivery_attempt(delivery_id=delivery.id)

    first, retry = receiver.wait_for(2)
    assert int(retry.headers["webhook-timestamp"]) == later > int(first.headers["webhook-timestamp"])
    assert retry.body == first.body and retry.headers["webhook-id"] == first.headers["webhook-id"]
    assert retry.headers["webhook-signature"] != first.headers["webhook-signature"]
    Webhook(onboarded.tenant.webhook_secret).verify(retry.body, retry.headers)
