"""Retention: final sessions past their tenant's retention_days are purged; the usage chart still counts them."""

import io
import re
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.utils import timezone

from sessions_api.models import AgeEstimationResult, SessionEvent, VerificationSession
from tests.factories import SETUP, finished_session
from tests.support.api_client import ApiClient
from tests.support.receiver import Reply
from webhooks.delivery import webhook_delivery_attempt
from webhooks.models import WebhookAttempt, WebhookDelivery
from webhooks.services import delivery_resend


def _aged(session, *, created_days_ago: float, finalized_days_ago: float | None = None):
    now = timezone.now()
    VerificationSession.objects.filter(pk=session.pk).update(
        created_at=now - timedelta(days=created_days_ago),
        finalized_at=None if finalized_days_ago is None else now - timedelta(days=finalized_days_ago),
    )
    return session


def purge() -> str:
    out = io.StringIO()
    call_command("purge_sessions", stdout=out)
    return out.getvalue().strip()


def usage_rows(page: str) -> list[tuple[str, str, str]]:
    table = page.split('id="usage-table"', 1)[1].split("</table>", 1)[0]
    return re.findall(r"<tr><th scope=\"row\">[^<]+</th><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td>", table)


def test_purged_sessions_are_gone_and_the_usage_chart_still_counts_them(dashboard, onboarded):
    onboarded.tenant.retention_days = 1
    onboarded.tenant.save()
    old = [
        _aged(
            finished_session(onboarded.tenant, status="approved", notification_url="https://hooks.partner.test/a"),
            created_days_ago=3,
            finalized_days_ago=2,
        ),
        _aged(finished_session(onboarded.tenant, status="approved"), created_days_ago=3, finalized_days_ago=2),
        _aged(finished_session(onboarded.tenant, status="denied"), created_days_ago=3, finalized_days_ago=2),
    ]
    recent = _aged(finished_session(onboarded.tenant, status="approved"), created_days_ago=3, finalized_days_ago=0.5)
    still_open = _aged(finished_session(onboarded.tenant, status="initiated"), created_days_ago=3)
    delivery = WebhookDelivery.objects.get(subject_ref=old[0].pk)
    WebhookAttempt.objects.create(delivery=delivery, number=1, status_code=200, latency_ms=80)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(status="delivered", delivered_at=timezone.now())
    before = dashboard.get("/dashboard/").content.decode()

    assert purge() == "purged 3 final session(s)"

    api = ApiClient(onboarded.live_key)
    for session in old:
        assert api.get(f"/v1/sessions/{session.pk}").status_code == 404
    assert not VerificationSession.objects.filter(pk__in=[s.pk for s in old]).exists()
    assert not SessionEvent.objects.filter(session_id__in=[s.pk for s in old]).exists()
    assert not AgeEstimationResult.objects.filter(session_id__in=[s.pk for s in old]).exists()
    assert not WebhookDelivery.objects.filter(subject_ref=old[0].pk).exists()
    assert not WebhookAttempt.objects.filter(delivery_id=delivery.pk).exists()
    assert api.get(f"/v1/sessions/{recent.pk}").status_code == 200
    assert api.get(f"/v1/sessions/{still_open.pk}").status_code == 200
    after = dashboard.get("/dashboard/").content.decode()
    assert usage_rows(after) == usage_rows(before)
    assert usage_rows(after)[3] == ("3", "1", "1")  # three days ago: 3 approved, 1 denied, 1 open
    assert '<dd id="usage-total">5</dd>' in after and '<dd id="approval-rate">75.0 %</dd>' in after

    assert purge() == "purged 0 final session(s)"  # counted once, not again
    assert usage_rows(dashboard.get("/dashboard/").content.decode()) == usage_rows(before)


def test_by_default_final_sessions_are_kept_90_days(onboarded, db):
    kept = _aged(finished_session(onboarded.tenant), created_days_ago=89.5, finalized_days_ago=89.5)
    gone = _aged(finished_session(onboarded.tenant, mode="test"), created_days_ago=91, finalized_days_ago=90.5)

    assert onboarded.tenant.retention_days == 90
    assert purge() == "purged 1 final session(s)"
    assert VerificationSession.objects.filter(pk=kept.pk).exists()
    assert not VerificationSession.objects.filter(pk=gone.pk).exists()


@pytest.mark.parametrize("days", [0, 366])
def test_retention_is_bounded_from_one_day_to_a_year(onboarded, days):
    onboarded.tenant.retention_days = days
    with pytest.raises(ValidationError, match="retention_days"):
        onboarded.tenant.full_clean()


def test_beat_purges_every_hour():
    from django.conf import settings

    entry = settings.CELERY_BEAT_SCHEDULE["final-sessions-purge"]
    assert entry["task"] == "sessions_api.tasks.final_sessions_purge" and entry["schedule"] == timedelta(hours=1)


def _due_now(delivery_ids):
    """The retry wait has passed (the test does not wait 5 minutes for it)."""
    WebhookDelivery.objects.filter(pk__in=delivery_ids).update(next_attempt_at=timezone.now())


@pytest.mark.parametrize("last_reply", [200, 500], ids=["then-delivered", "then-failed"])
def test_a_session_whose_webhook_is_still_being_retried_is_kept_until_the_delivery_ends(
    onboarded, receiver, settings, last_reply
):
    settings.WEBHOOK_RETRY_SCHEDULE = [0, 300]  # one retry, 5 minutes after the first failure
    onboarded.tenant.retention_days = 1
    onboarded.tenant.save()
    sessions = [finished_session(onboarded.tenant, notification_url=receiver.url()) for _ in range(10)]
    deliveries = [WebhookDelivery.objects.get(subject_ref=s.pk).pk for s in sessions]
    receiver.script(*[Reply(status=500)] * 10)
    for delivery_id in deliveries:
        assert webhook_delivery_attempt(delivery_id=delivery_id).status_code == 500
    for session in sessions:
        _aged(session, created_days_ago=3, finalized_days_ago=2)

    assert purge() == "purged 0 final session(s)"  # their retry is due in about 5 minutes: kept

    api = ApiClient(onboarded.live_key)
    assert all(api.get(f"/v1/sessions/{s.pk}").status_code == 200 for s in sessions)
    assert WebhookDelivery.objects.filter(pk__in=deliveries, status="pending").count() == 10
    receiver.script(*[Reply(status=last_reply)] * 10)
    _due_now(deliveries)
    for delivery_id in deliveries:
        webhook_delivery_attempt(delivery_id=delivery_id)
    assert len(receiver.received) == 20  # every event was sent again, none dropped

    assert purge() == "purged 10 final session(s)"  # the deliveries ended: the purge takes them now
    assert not WebhookDelivery.objects.filter(pk__in=deliveries).exists()


def test_a_re_sent_webhook_keeps_its_session_past_retention_until_it_is_sent(onboarded, receiver):
    onboarded.tenant.retention_days = 1
    onboarded.tenant.save()
    session = finished_session(onboarded.tenant, notification_url=receiver.url())
    delivery = WebhookDelivery.objects.get(subject_ref=session.pk)
    webhook_delivery_attempt(delivery_id=delivery.pk)
    delivery.refresh_from_db()
    assert delivery.status == "delivered"
    _aged(session, created_days_ago=3, finalized_days_ago=2)
    delivery_resend(delivery=delivery, actor=SETUP)  # a re-send near the end of retention

    assert purge() == "purged 0 final session(s)"
    webhook_delivery_attempt(delivery_id=delivery.pk)
    assert len(receiver.received) == 2
    assert purge() == "purged 1 final session(s)"
