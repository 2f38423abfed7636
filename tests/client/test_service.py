"""The Python client against the running service: gunicorn, PostgreSQL, Redis, a Celery worker, a receiver.

A partner's backend does exactly this: create a session, send the user to the flow (here the sandbox
endpoint plays the user), wait for the final state, verify the webhook, confirm with GET.
"""

import threading
import time

import pytest
import requests

from ageverify_client import (
    AgeVerify,
    AuthenticationError,
    BadRequestError,
    ConfirmationError,
    ConflictError,
    NotFoundError,
    WaitTimeout,
    WebhookVerificationError,
    WebhookVerifier,
)
from tenants.models import Tenant
from tenants.services import publishable_key_generate
from tests.factories import SETUP

pytestmark = pytest.mark.django_db(transaction=True)


def _later(seconds: float, action) -> threading.Thread:
    def run():
        time.sleep(seconds)
        action()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_create_wait_verify_and_confirm_round_trip(service, tenant, sandbox, celery_worker, receiver):
    created = sandbox.sessions.create(
        subject="user-42",
        age_limit=18,
        notification_url=receiver.url(),
        callback_url="http://127.0.0.1:3000/verified",
        cancel_url="http://127.0.0.1:3000/cancelled",
    )
    assert created.session_id.startswith("ses_") and created.status == "initiated"
    assert (created.subject, created.age_limit, created.mode) == ("user-42", 18, "test")
    assert created.verification_url.startswith(f"{service}/flow/start?") and created.session_token
    assert created.expires_at > created.created_at

    # The user finishes in the hosted flow a moment later (the sandbox endpoint plays the user).
    user = AgeVerify(tenant.test_key, base_url=service)
    finishing = _later(0.6, lambda: user.sandbox.advance(created.session_id, "approved"))
    result = sandbox.sessions.wait(created.session_id, timeout=15, interval=0.2)
    finishing.join()

    assert result.approved and result.session.is_final
    assert result.reason in {"age_estimation", "document"}
    if result.reason == "document":
        assert result.validate_doc.true_age >= 18 and result.validate_doc.birthdate.year < 2010
    else:
        assert result.age_estimation.estimated_age >= 18 and result.liveness.is_live

    [delivered] = receiver.wait_for(1, timeout=15)
    event = sandbox.webhooks.verify(delivered.body, delivered.headers)
    assert event.event == "verification.completed" and event.webhook_id == delivered.headers["webhook-id"]
    assert (event.data.session_id, event.data.status, event.data.subject, event.data.age_limit, event.data.mode) == (
        created.session_id,
        "approved",
        "user-42",
        18,
        "test",
    )
    assert event.data.approved and event.timestamp is not None

    confirmed = sandbox.sessions.confirm(created.session_id, subject="user-42", age_limit=18, mode="test")
    assert confirmed.session_id == created.session_id


def test_a_webhook_does_not_verify_with_the_live_secret_nor_when_tampered(sandbox, tenant, celery_worker, receiver):
    created = sandbox.sessions.create(subject="user-7", age_limit=16, notification_url=receiver.url())
    sandbox.sandbox.advance(created.session_id, "denied")
    [delivered] = receiver.wait_for(1, timeout=15)

    with pytest.raises(WebhookVerificationError):
        WebhookVerifier(tenant.tenant.webhook_secret).verify(delivered.body, delivered.headers)
    with pytest.raises(WebhookVerificationError):
        sandbox.webhooks.verify(delivered.body.replace(b"denied", b"approved"), delivered.headers)
    with pytest.raises(WebhookVerificationError, match="test event, expected live"):
        WebhookVerifier(tenant.tenant.test_webhook_secret, mode="live").verify(delivered.body, delivered.headers)
    assert sandbox.webhooks.verify(delivered.body, delivered.headers).data.status == "denied"


def test_wait_gives_up_after_its_timeout_with_the_last_reading(sandbox):
    created = sandbox.sessions.create(subject="user-42", age_limit=18)

    started = time.monotonic()
    with pytest.raises(WaitTimeout) as raised:
        sandbox.sessions.wait(created.session_id, timeout=0.5, interval=0.2)

    assert 0.5 <= time.monotonic() - started < 3
    assert raised.value.last.status == "initiated"


def test_confirm_refuses_a_denied_session_and_one_for_another_user(sandbox):
    denied = sandbox.sessions.create(subject="user-42", age_limit=18)
    sandbox.sandbox.advance(denied.session_id, "denied")
    approved = sandbox.sessions.create(subject="user-42", age_limit=18)
    sandbox.sandbox.advance(approved.session_id, "approved")

    with pytest.raises(ConfirmationError, match="denied") as raised:
        sandbox.sessions.confirm(denied.session_id, subject="user-42")
    assert raised.value.result.reason == "liveness_failed"
    with pytest.raises(ConfirmationError, match="subject"):
        sandbox.sessions.confirm(approved.session_id, subject="user-43")
    with pytest.raises(ConfirmationError, match="age_limit"):
        sandbox.sessions.confirm(approved.session_id, age_limit=21)
    with pytest.raises(ConfirmationError, match="mode"):
        sandbox.sessions.confirm(approved.session_id, mode="live")


def test_the_same_idempotency_key_gives_back_the_same_session(sandbox):
    first = sandbox.sessions.create(subject="user-42", age_limit=18, idempotency_key="order-1234")
    again = sandbox.sessions.create(subject="user-42", age_limit=18, idempotency_key="order-1234")
    other = sandbox.sessions.create(subject="user-42", age_limit=18)

    assert again.session_id == first.session_id and again.session_token == first.session_token
    assert other.session_id != first.session_id


def test_errors_carry_the_problem_details(service, sandbox):
    with pytest.raises(BadRequestError) as raised:
        sandbox.sessions.create(subject="user-42", age_limit=25)
    error = raised.value
    assert (error.status, error.code, error.title) == (400, "validation_error", "Invalid request")
    assert error.type == "https://docs.ageverify.dev/errors/validation_error"
    assert error.detail == "age_limit must be between 10 and 21"
    assert error.errors == [{"field": "age_limit", "code": "out_of_range", "message": "must be between 10 and 21"}]
    assert error.request_id.startswith("req_") and error.extra["requestId"] == error.request_id
    assert "age_limit must be between 10 and 21" in str(error)

    with pytest.raises(NotFoundError) as raised:
        sandbox.sessions.get("ses_01KNOSUCHSESSION0000000000")
    assert raised.value.code == "session_not_found"
    with pytest.raises(AuthenticationError) as raised:
        AgeVerify("av_test_" + "x" * 40, base_url=service).sessions.get("ses_x")
    assert raised.value.code == "invalid_api_key"


def test_a_rate_limited_client_waits_as_the_service_asks_and_gets_through(sandbox, tenant):
    tenant.tenant.rate_limit_per_second = 1
    tenant.tenant.rate_limit_burst = 2
    tenant.tenant.save()
    created = sandbox.sessions.create(subject="user-42", age_limit=18)  # one of the burst

    started = time.monotonic()
    reads = [sandbox.sessions.get(created.session_id).status for _ in range(3)]

    assert reads == ["initiated"] * 3
    assert time.monotonic() - started >= 1.5  # two of the reads waited out a 429's Retry-After: 1


def test_list_pages_newest_first_with_filters_and_cancel_ends_a_session(sandbox):
    made = [sandbox.sessions.create(subject="lister", age_limit=18).session_id for _ in range(3)]
    sandbox.sessions.create(subject="someone-else", age_limit=18)

    cancelled = sandbox.sessions.cancel(made[0])
    assert (cancelled.status, cancelled.reason) == ("denied", "cancelled")
    assert sandbox.sessions.cancel(made[0]).session.updated_at == cancelled.session.updated_at  # answered again

    first = sandbox.sessions.list(subject="lister", limit=2)
    assert [r.session_id for r in first.data] == made[:0:-1] and first.has_more and first.next_cursor
    second = sandbox.sessions.list(subject="lister", limit=2, cursor=first.next_cursor)
    assert [r.session_id for r in second.data] == [made[0]] and not second.has_more
    assert [r.session_id for r in sandbox.sessions.iterate(subject="lister", limit=1)] == made[::-1]
    denied = sandbox.sessions.list(status=["denied"], created_from=cancelled.session.created_at)
    assert [(r.session_id, r.reason) for r in denied.data] == [(made[0], "cancelled")]


def test_cancelling_a_session_that_ended_otherwise_is_a_conflict(sandbox):
    created = sandbox.sessions.create(subject="user-42", age_limit=18)
    sandbox.sandbox.advance(created.session_id, "denied", reason="document_expired")

    with pytest.raises(ConflictError) as raised:
        sandbox.sessions.cancel(created.session_id)
    assert raised.value.code == "session_final" and "document_expired" in raised.value.detail


def test_a_digital_id_approval_reads_as_a_typed_age_credential(sandbox):
    created = sandbox.sessions.create(subject="user-42", age_limit=18)
    sandbox.sandbox.advance(created.session_id, "approved", reason="digital_id")

    result = sandbox.sessions.get(created.session_id)

    credential = result.age_credential
    assert (result.reason, result.validate_doc, result.extra) == ("digital_id", None, {})
    assert (credential.kind, credential.value, credential.age_limit) == ("mdoc", True, 18)
    assert credential.claim and credential.doc_type and credential.verified_at.tzinfo is not None
    assert (credential.issuer.country, credential.issuer.trust_source) == ("UT", "sandbox")


def test_the_client_secret_is_the_browser_s_hand_off_and_the_backend_confirms_with_get(service, tenant, sandbox):
    """The partner backend creates; the page holds only client_secret (status, never the result); GET decides."""
    shop = "https://shop.example"
    pk = publishable_key_generate(tenant=tenant.tenant, mode="test", allowed_origins=[shop], actor=SETUP)
    created = sandbox.sessions.create(subject="user-42", age_limit=18)
    assert created.client_secret and created.client_secret != created.session_token
    assert "clientSecret" not in sandbox.sessions.get(created.session_id).session.raw  # creation only

    def browser_reads_status() -> dict:
        response = requests.get(
            f"{service}/v1/client/session",
            params={"key": pk.key},
            timeout=10,
            headers={"Origin": shop, "Authorization": f"Bearer {created.client_secret}"},
        )
        assert response.status_code == 200, response.text
        return response.json()

    assert browser_reads_status()["status"] == "initiated"
    sandbox.sandbox.advance(created.session_id, "approved")
    assert browser_reads_status()["status"] == "approved"  # the UI signal
    assert sandbox.sessions.confirm(created.session_id, subject="user-42", age_limit=18, mode="test").approved


def test_a_document_approval_reads_its_holder_match_and_liveness_check_typed(sandbox):
    created = sandbox.sessions.create(subject="user-42", age_limit=18)
    sandbox.sandbox.advance(created.session_id, "approved", reason="document")

    document = sandbox.sessions.get(created.session_id).validate_doc

    assert (document.liveness_checked, document.holder_match.passed, document.extra) == (True, True, {})
    assert 0 < document.holder_match.score <= 1 and document.holder_match.extra == {}
    assert document.true_age >= 18 and document.birthdate.tzinfo is not None


def test_a_document_read_without_a_live_capture_says_so(sandbox, tenant):
    Tenant.objects.filter(pk=tenant.tenant.pk).update(document_presence_required=False)
    created = sandbox.sessions.create(subject="user-42", age_limit=18)
    sandbox.sandbox.advance(created.session_id, "approved", reason="document")

    document = sandbox.sessions.get(created.session_id).validate_doc

    assert (document.liveness_checked, document.holder_match, document.extra) == (False, None, {})


def test_the_dashboards_test_event_verifies_as_a_test_event(sandbox, tenant, celery_worker, receiver):
    from webhooks.services import webhook_test_send

    webhook_test_send(tenant=tenant.tenant, mode="test", url=receiver.url(), actor=SETUP)
    [delivered] = receiver.wait_for(1, timeout=15)

    event = sandbox.webhooks.verify(delivered.body, delivered.headers)

    assert event.is_test and event.event == "webhook.test"
    assert (event.data.session_id, event.data.status, event.data.mode) == ("", "", "test")
    assert event.data.extra["test"] is True and not event.data.approved
    with pytest.raises(WebhookVerificationError):
        sandbox.webhooks.verify(delivered.body.replace(b"true", b"false"), delivered.headers)


def test_a_created_sessions_printout_hides_its_token_and_hand_off_values(sandbox):
    created = sandbox.sessions.create(subject="user-42", age_limit=18)

    printed = repr(created) + str(created)
    assert created.session_token and created.session_token not in printed
    assert created.signature not in printed and created.client_secret not in printed
    assert created.session_id in printed and "user-42" in printed


def test_metadata_round_trips_and_redact_erases_it(sandbox):
    created = sandbox.sessions.create(subject="user-42", age_limit=18, metadata={"orderId": "A-1042"})
    assert created.metadata == {"orderId": "A-1042"}
    assert sandbox.sessions.get(created.session_id).session.metadata == {"orderId": "A-1042"}
    with pytest.raises(ConflictError) as raised:
        sandbox.sessions.redact(created.session_id)
    assert raised.value.code == "session_not_final"

    sandbox.sessions.cancel(created.session_id)
    redacted = sandbox.sessions.redact(created.session_id)

    assert (redacted.session.subject, redacted.session.metadata) == ("", {})
    assert redacted.session.redacted_at is not None and redacted.status == "denied"
    assert sandbox.sessions.redact(created.session_id).session.redacted_at == redacted.session.redacted_at
