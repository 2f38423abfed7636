"""verification.completed reaches a real HTTPS receiver: signed, retried, timed out, never redirected."""

import json

import pytest
from standardwebhooks.webhooks import Webhook

from tests.support.receiver import Reply
from tests.support.waiting import wait_until
from tests.support.webhooks import delivery_of, finalize_with_webhook, wait_for_status
from webhooks.models import WebhookDelivery

pytestmark = pytest.mark.usefixtures("celery_worker")


def test_final_transition_delivers_a_body_and_headers_that_standardwebhooks_verifies(api, onboarded, receiver):
    session = finalize_with_webhook(api, receiver.url(), subject="player-7", age_limit=16)

    [request] = receiver.wait_for(1)
    payload = Webhook(onboarded.tenant.webhook_secret).verify(request.body, request.headers)
    assert payload["event"] == "verification.completed"
    assert payload["data"] == {
        "sessionId": session["sessionId"],
        "subject": "player-7",
        "status": "denied",
        "ageLimit": 16,
        "mode": "live",
        "metadata": {},
    }
    assert payload["timestamp"].endswith("Z") and len(payload["timestamp"]) == len("2026-11-22T10:15:30.123Z")
    assert set(json.loads(request.body)) == {"event", "timestamp", "data"}
    assert request.path == "/hooks/ageverify"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["user-agent"] == "ageverify-webhooks/1"
    delivery = delivery_of(session)
    assert request.headers["webhook-id"] == delivery.id and delivery.id.startswith("msg_")
    assert request.headers["webhook-signature"].startswith("v1,")
    wait_until(lambda: WebhookDelivery.objects.get(pk=delivery.pk).status == "delivered")
    [attempt] = delivery.attempts.all()
    assert (attempt.number, attempt.status_code, attempt.error, attempt.response_excerpt) == (1, 200, "", "ok")


def test_a_tampered_body_fails_verification(api, onboarded, receiver):
    finalize_with_webhook(api, receiver.url())
    [request] = receiver.wait_for(1)
    with pytest.raises(Exception, match="signature"):
        Webhook(onboarded.tenant.webhook_secret).verify(request.body.replace(b"denied", b"approved"), request.headers)


def test_receiver_answering_500_then_200_gets_the_same_event_again_and_it_is_delivered(api, onboarded, receiver):
    receiver.script(Reply(status=500, body=b"database is down"))
    session = finalize_with_webhook(api, receiver.url())

    first, second = receiver.wait_for(2)
    assert second.body == first.body
    assert second.headers["webhook-id"] == first.headers["webhook-id"]
    Webhook(onboarded.tenant.webhook_secret).verify(second.body, second.headers)
    delivery = wait_for_status(session, "delivered")
    assert [(a.number, a.status_code, a.response_excerpt) for a in delivery.attempts.all()] == [
        (1, 500, "database is down"),
        (2, 200, "ok"),
    ]
    assert delivery.attempt_count == 2 and delivery.delivered_at is not None and delivery.next_attempt_at is None


def test_a_receiver_that_never_succeeds_gets_eight_attempts_then_the_delivery_is_failed(api, receiver):
    receiver.script(*[Reply(status=503)] * 8)
    session = finalize_with_webhook(api, receiver.url())

    receiver.wait_for(8)
    delivery = wait_for_status(session, "failed")
    assert [a.status_code for a in delivery.attempts.all()] == [503] * 8
    assert delivery.next_attempt_at is None
    assert len({r.headers["webhook-id"] for r in receiver.received}) == 1


def test_a_receiver_slower_than_the_total_timeout_is_logged_as_a_timeout_and_retried(api, receiver, settings):
    settings.WEBHOOK_TOTAL_TIMEOUT = 0.5
    receiver.script(Reply(delay=2.0))
    session = finalize_with_webhook(api, receiver.url())

    receiver.wait_for(2, timeout=15)
    delivery = wait_for_status(session, "delivered")
    first, second = delivery.attempts.all()
    assert first.status_code is None and "timeout" in first.error
    assert 450 <= first.latency_ms < 1500
    assert second.status_code == 200


def test_a_receiver_trickling_its_answer_is_cut_off_at_the_total_timeout(api, receiver, settings):
    settings.WEBHOOK_TOTAL_TIMEOUT = 0.6
    # Every byte comes within any per-read timeout, but the whole status line takes over 2 s.
    receiver.script(Reply(trickle=0.1))
    session = finalize_with_webhook(api, receiver.url())

    attempt = wait_until(lambda: delivery_of(session).attempts.filter(error__contains="timeout").first(), timeout=15)
    assert attempt.latency_ms < 1500


def test_a_redirect_is_not_followed_and_counts_as_a_failed_attempt(api, receiver):
    receiver.script(Reply(status=302, headers={"Location": receiver.url("/elsewhere")}, body=b""))
    session = finalize_with_webhook(api, receiver.url())

    receiver.wait_for(2)
    delivery = wait_for_status(session, "delivered")
    assert [r.path for r in receiver.received] == ["/hooks/ageverify", "/hooks/ageverify"]
    assert [a.status_code for a in delivery.attempts.all()] == [302, 200]


def test_only_the_first_kibibyte_of_a_response_is_kept(api, receiver):
    receiver.script(Reply(status=500, body=b"x" * 5000))
    session = finalize_with_webhook(api, receiver.url())

    receiver.wait_for(2)
    attempt = wait_until(lambda: delivery_of(session).attempts.filter(number=1, status_code=500).first())
    assert attempt.response_excerpt == "x" * 1024
