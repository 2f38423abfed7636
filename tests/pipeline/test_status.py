"""GET /ops/pipeline and the admin's front page: heartbeats per queue, oldest due delivery, oldest waiting analysis."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from sessions_api.models import VerificationSession
from tests.support.waiting import wait_until
from webhooks.models import WebhookDelivery

TOKEN = "ops-monitoring-token"


@pytest.fixture
def monitoring(settings):
    settings.PIPELINE_STATUS_TOKEN = TOKEN
    return Client(headers={"Authorization": f"Bearer {TOKEN}"})


def send_heartbeats_as_beat_does():
    from ageverify.celery import app

    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        if entry["task"] == "pipeline.tasks.worker_heartbeat":
            app.tasks[entry["task"]].apply_async(args=entry["args"], **entry["options"])


def test_the_status_is_hidden_from_anyone_without_the_token_or_an_operator_login(db, settings):
    settings.PIPELINE_STATUS_TOKEN = TOKEN

    assert Client().get("/ops/pipeline").status_code == 404
    assert Client(headers={"Authorization": "Bearer wrong"}).get("/ops/pipeline").status_code == 404
    settings.PIPELINE_STATUS_TOKEN = ""
    assert Client(headers={"Authorization": "Bearer "}).get("/ops/pipeline").status_code == 404


def test_queues_that_never_answered_a_heartbeat_fail(db, monitoring):
    response = monitoring.get("/ops/pipeline")

    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "failing"
    assert body["checks"]["heartbeat:analysis"] == {"seconds": None, "limit": 120.0, "status": "failing"}
    assert body["checks"]["heartbeat:webhooks"]["status"] == "failing"
    assert body["checks"]["oldest_due_delivery"]["status"] == "ok"


def test_workers_on_both_queues_answering_beats_heartbeats_make_it_ok(celery_worker, monitoring):
    send_heartbeats_as_beat_does()

    response = wait_until(lambda: (r := monitoring.get("/ops/pipeline")).status_code == 200 and r, timeout=15)

    checks = response.json()["checks"]
    assert checks["heartbeat:analysis"]["seconds"] < 15 and checks["heartbeat:webhooks"]["seconds"] < 15


def test_a_delivery_overdue_and_an_analysis_waiting_too_long_fail_their_checks(celery_worker, monitoring, onboarded):
    send_heartbeats_as_beat_does()
    wait_until(lambda: monitoring.get("/ops/pipeline").status_code == 200, timeout=15)
    long_ago = timezone.now() - timedelta(minutes=10)
    WebhookDelivery.objects.create(
        tenant=onboarded.tenant, url="https://example.com/h", event_type="e", payload="{}", next_attempt_at=long_ago
    )
    session = VerificationSession.objects.create(
        tenant=onboarded.tenant,
        mode="live",
        subject="u",
        age_limit=18,
        status="processing",
        token_hash="x",
        expires_at=timezone.now(),
    )
    VerificationSession.objects.filter(pk=session.pk).update(updated_at=long_ago)

    response = monitoring.get("/ops/pipeline")

    assert response.status_code == 503
    checks = response.json()["checks"]
    assert checks["oldest_due_delivery"]["status"] == "failing" and checks["oldest_due_delivery"]["seconds"] >= 600
    assert checks["oldest_waiting_analysis"]["status"] == "failing"
    assert checks["heartbeat:webhooks"]["status"] == "ok"


def test_an_operator_sees_the_pipeline_on_the_admin_front_page_and_at_the_endpoint(db):
    operator = User.objects.create_user("ops", password="pw-long-enough-1", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(operator)

    page = client.get("/admin/").content.decode()

    assert "Pipeline: failing" in page and "heartbeat:analysis" in page
    assert client.get("/ops/pipeline").status_code == 503


def test_readyz_stays_about_the_web_process_when_no_worker_runs(db):
    assert Client().get("/readyz").status_code == 200


def test_deliveries_late_but_not_yet_failing_make_it_degraded(celery_worker, monitoring, onboarded):
    # Issue 45: after a webhooks worker crash deliveries were a minute late while the status said `ok`.
    send_heartbeats_as_beat_does()
    wait_until(lambda: monitoring.get("/ops/pipeline").status_code == 200, timeout=15)
    WebhookDelivery.objects.create(
        tenant=onboarded.tenant,
        url="https://example.com/h",
        event_type="e",
        payload="{}",
        next_attempt_at=timezone.now() - timedelta(seconds=settings.PIPELINE_DELIVERY_LATE_AFTER + 10),
    )

    response = monitoring.get("/ops/pipeline")

    assert response.status_code == 200  # late, still going: a warning to look at, not a page at night
    assert response.json()["status"] == "degraded"
    assert response.json()["checks"]["oldest_due_delivery"]["status"] == "late"
