"""The API key cache of each worker never outlives a revocation or a disabled tenant, in any process."""

import contextlib
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from unittest import mock

from django.utils import timezone

from core import rate_limit
from sessions_api.models import new_session_id
from tenants.models import ApiKey
from tenants.services import api_key_revoke
from tests.factories import SETUP
from tests.support.database import current_database_url

BODY = {"subject": "user-42", "age_limit": 18}
REPO = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def mock_clock(*, minutes: int):
    later = timezone.now() + timedelta(minutes=minutes)
    with mock.patch.object(timezone, "now", lambda: later):
        yield


def _warm(api) -> str:
    # The first use reads the key from the database, the second confirms it into the cache; from the
    # third on, authentication reads no key from the database. Returns a session id of the key.
    for _ in range(3):
        created = api.post("/v1/sessions", BODY)
        assert created.status_code == 201
    assert api.get(f"/v1/sessions/{created.json()['session']['sessionId']}").status_code == 200
    return created.json()["session"]["sessionId"]


def test_a_cached_key_is_authenticated_without_a_key_query(api, django_assert_num_queries):
    _warm(api)

    with django_assert_num_queries(1):  # the session's INSERT only
        assert api.post("/v1/sessions", BODY).status_code == 201


def test_a_key_revoked_in_another_process_is_refused_on_the_next_request(transactional_db, onboarded, api):
    session_id = _warm(api)
    key_id = ApiKey.objects.get(tenant=onboarded.tenant, mode="live").pk
    env = {**os.environ, "DATABASE_URL": current_database_url()}
    script = (
        "import django; django.setup(); from tenants.models import ApiKey; "
        "from tenants.audit import Actor; from tenants.services import api_key_revoke; "
        f"api_key_revoke(api_key=ApiKey.objects.get(pk={key_id}), actor=Actor(name='another process'))"
    )
    subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, check=True, timeout=120)

    assert api.get(f"/v1/sessions/{session_id}").status_code == 401  # a read, whose rate-limit answer comes last
    assert api.post("/v1/sessions", BODY).status_code == 401


def test_a_tenant_disabled_by_the_operators_action_is_refused_on_the_next_request(operator, api, onboarded):
    session_id = _warm(api)

    operator.post("/admin/tenants/tenant/", {"action": "disable_tenants", "_selected_action": [onboarded.tenant.pk]})

    assert api.get(f"/v1/sessions/{session_id}").status_code == 403
    assert api.post("/v1/sessions", BODY).status_code == 403
    operator.post("/admin/tenants/tenant/", {"action": "enable_tenants", "_selected_action": [onboarded.tenant.pk]})
    assert api.post("/v1/sessions", BODY).status_code == 201


def test_a_tenant_rate_limit_changed_in_the_admin_applies_from_the_next_request(operator, api, onboarded):
    _warm(api)
    onboarded.tenant.rate_limit_per_second = 1
    onboarded.tenant.rate_limit_burst = 1
    onboarded.tenant.save()  # as the admin's change form does

    api.post("/v1/sessions", BODY)  # its token was taken at the old limit; the key was read again
    answer = api.post("/v1/sessions", BODY)

    assert answer["RateLimit-Limit"] == "1"


def test_without_redis_every_request_reads_its_key_so_a_revocation_still_counts(api, onboarded, settings):
    _warm(api)
    rate_limit._redis_client.cache_clear()
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1: the limiter fails open
    try:
        assert api.post("/v1/sessions", BODY).status_code == 201
        ApiKey.objects.filter(tenant=onboarded.tenant, mode="live").update(revoked_at="2026-01-01T00:00:00Z")
        assert api.post("/v1/sessions", BODY).status_code == 401
    finally:
        rate_limit._redis_client.cache_clear()


def test_a_cached_key_revoked_since_is_not_marked_used(api, onboarded):
    _warm(api)
    api_key = ApiKey.objects.get(tenant=onboarded.tenant, mode="live")
    a_while_ago = timezone.now() - timedelta(minutes=5)
    ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=a_while_ago)
    api_key_revoke(api_key=api_key, actor=SETUP)

    for request in (lambda: api.post("/v1/sessions", BODY), lambda: api.get(f"/v1/sessions/{new_session_id()}")):
        with mock_clock(minutes=2):  # past the once-a-minute mark of the cached copy too
            assert request().status_code == 401

    api_key.refresh_from_db()
    assert api_key.last_used_at == a_while_ago
