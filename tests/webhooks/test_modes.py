"""Webhooks per mode: a sandbox event is signed only with the test secret and says `data.mode`."""

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

pytestmark = pytest.mark.usefixtures("celery_worker")


def _advance(client, session_id, to):
    response = client.post(f"/v1/test/sessions/{session_id}/advance", {"to": to})
    assert response.status_code == 200, response.content


def test_a_sandbox_approval_does_not_verify_with_the_live_secret(sandbox_api, onboarded, receiver):
    session = sandbox_api.create_session(subject="real-user-1", notification_url=receiver.url())
    _advance(sandbox_api, session["sessionId"], "approved")

    [request] = receiver.wait_for(1)
    with pytest.raises(WebhookVerificationError):
        Webhook(onboarded.tenant.webhook_secret).verify(request.body, request.headers)
    payload = Webhook(onboarded.tenant.test_webhook_secret).verify(request.body, request.headers)
    assert payload["data"]["status"] == "approved"
    assert payload["data"]["mode"] == "test"


def test_a_live_event_verifies_with_the_live_secret_only_and_says_live(api, onboarded, receiver):
    session = api.create_session(notification_url=receiver.url())
    from sessions_api.state_machine import session_cancel

    session_cancel(session_id=session["sessionId"])

    [request] = receiver.wait_for(1)
    assert Webhook(onboarded.tenant.webhook_secret).verify(request.body, request.headers)["data"]["mode"] == "live"
    with pytest.raises(WebhookVerificationError):
        Webhook(onboarded.tenant.test_webhook_secret).verify(request.body, request.headers)


def test_the_two_secrets_differ(onboarded):
    assert onboarded.tenant.test_webhook_secret.startswith("whsec_")
    assert onboarded.tenant.test_webhook_secret != onboarded.tenant.webhook_secret
