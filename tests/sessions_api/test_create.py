"""POST /v1/sessions: 201 with the spec's session object, its token, signature and flow link (spec 2.2, CONTRACT 2)."""

import base64
import hashlib
import hmac
import re
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from django.conf import settings
from ulid import ULID

from sessions_api.models import VerificationSession
from tests.factories import ApiKeyFactory
from tests.support.api_client import ApiClient

ISO_MS_Z = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
SESSION_ID = re.compile(r"^ses_[0-9A-HJKMNP-TV-Z]{26}$")
CREATED_SESSION_KEYS = {
    # spec 2.2
    "sessionId",
    "status",
    "subject",
    "sessionToken",
    "signature",
    "expiresAt",
    "callbackUrl",
    "cancelUrl",
    "notificationUrl",
    # CONTRACT 2 extras
    "createdAt",
    "updatedAt",
    "ageLimit",
    "reason",
    "verificationUrl",
    "mode",
    # CONTRACT 8 (SDK mode)
    "clientSecret",
    # issue 29
    "metadata",
    "redactedAt",
}
FULL_BODY = {
    "subject": "user-42",
    "age_limit": 18,
    "callback_url": "https://shop.example.com/verified",
    "cancel_url": "https://shop.example.com/cancelled",
    "notification_url": "https://shop.example.com/hooks/ageverify",
}


def _parse_iso_ms(value: str) -> datetime:
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def test_creating_a_session_answers_201_with_the_session_object_only(api):
    response = api.post("/v1/sessions", FULL_BODY)

    assert response.status_code == 201
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert set(body) == {"session"}
    session = body["session"]
    assert set(session) == CREATED_SESSION_KEYS
    assert SESSION_ID.match(session["sessionId"])
    assert session["status"] == "initiated"
    assert session["subject"] == "user-42"
    assert session["ageLimit"] == 18
    assert session["callbackUrl"] == FULL_BODY["callback_url"]
    assert session["cancelUrl"] == FULL_BODY["cancel_url"]
    assert session["notificationUrl"] == FULL_BODY["notification_url"]
    assert session["reason"] is None
    assert session["mode"] == "live"


def test_the_session_is_stored_for_the_calling_tenant(api, onboarded):
    session = api.create_session(**{k: v for k, v in FULL_BODY.items() if k not in ("subject", "age_limit")})

    stored = VerificationSession.objects.get(pk=session["sessionId"])
    assert stored.tenant_id == onboarded.tenant.id
    assert stored.status == "initiated"
    assert stored.notification_url == FULL_BODY["notification_url"]


def test_timestamps_are_utc_with_milliseconds_and_z(api):
    session = api.create_session()

    for name in ("expiresAt", "createdAt", "updatedAt"):
        assert ISO_MS_Z.match(session[name]), (name, session[name])


def test_expires_at_is_creation_plus_the_tenant_session_ttl(api, onboarded):
    onboarded.tenant.session_ttl_seconds = 600
    onboarded.tenant.save()

    session = api.create_session()

    lifetime = _parse_iso_ms(session["expiresAt"]) - _parse_iso_ms(session["createdAt"])
    assert timedelta(seconds=599) <= lifetime <= timedelta(seconds=601)


def test_default_session_lifetime_is_sixty_minutes(api):
    session = api.create_session()

    remaining = _parse_iso_ms(session["expiresAt"]) - datetime.now(UTC)
    assert timedelta(minutes=59) < remaining <= timedelta(minutes=60)


def test_session_token_is_43_url_safe_characters_and_only_its_hash_is_stored(api):
    session = api.create_session()

    token = session["sessionToken"]
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", token)
    stored = VerificationSession.objects.get(pk=session["sessionId"])
    assert stored.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert token not in {str(value) for value in stored.__dict__.values()}


def test_signature_is_base64url_hmac_sha256_of_id_token_expiry_and_tenant(api, onboarded):
    session = api.create_session()

    message = f"{session['sessionId']}.{session['sessionToken']}.{session['expiresAt']}.{onboarded.tenant.id}"
    digest = hmac.new(settings.FLOW_SIGNING_KEY.encode(), message.encode(), hashlib.sha256).digest()
    assert session["signature"] == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", session["signature"])


def test_verification_url_is_the_signed_flow_start_link(api, onboarded):
    session = api.create_session()

    url = urlsplit(session["verificationUrl"])
    assert f"{url.scheme}://{url.netloc}" == settings.PUBLIC_BASE_URL
    assert url.path == "/flow/start"
    query = {name: values[0] for name, values in parse_qs(url.query, strict_parsing=True).items()}
    assert query == {
        "tenant_id": onboarded.tenant.id,
        "session_id": session["sessionId"],
        "token": session["sessionToken"],
        "signature": session["signature"],
    }


def test_every_session_gets_its_own_id_and_token(api):
    first, second = api.create_session(), api.create_session()

    assert first["sessionId"] != second["sessionId"]
    assert first["sessionToken"] != second["sessionToken"]
    assert first["signature"] != second["signature"]


def _random_part(prefixed_id: str) -> int:
    """The 80 random bits of a prefixed ULID: the 10 bytes after its 6 bytes of milliseconds."""
    return int.from_bytes(ULID.from_str(prefixed_id.split("_", 1)[1]).bytes[6:], "big")


def test_a_session_id_is_not_derivable_from_the_ids_made_just_before_it(api):
    # CONTRACT 1: the random part is unguessable. A monotonic ULID generator makes an id in the same
    # millisecond as the previous one of its process by adding 1 to that one's random part: the
    # request id (X-Request-Id, which every caller sees) and the session id made right after it.
    answers = [api.post("/v1/sessions", {"subject": "user-42", "age_limit": 18}) for _ in range(50)]
    request_ids = [_random_part(answer["X-Request-Id"]) for answer in answers]
    session_ids = [_random_part(answer.json()["session"]["sessionId"]) for answer in answers]

    assert all(answer.status_code == 201 for answer in answers)
    derived = [(request, session) for request, session in zip(request_ids, session_ids) if 0 < session - request < 4]
    assert not derived
    assert not [pair for pair in zip(session_ids, session_ids[1:]) if 0 < pair[1] - pair[0] < 4]


def test_optional_urls_absent_or_null_are_echoed_as_null(api):
    absent = api.create_session()
    explicit_null = api.create_session(callback_url=None, cancel_url=None, notification_url=None)

    for session in (absent, explicit_null):
        assert session["callbackUrl"] is None
        assert session["cancelUrl"] is None
        assert session["notificationUrl"] is None


@pytest.mark.parametrize("age_limit", [10, 21, 18.0])
def test_age_limit_accepts_integral_numbers_from_10_to_21(api, age_limit):
    session = api.create_session(age_limit=age_limit)

    assert session["ageLimit"] == int(age_limit)
    assert isinstance(session["ageLimit"], int)


def test_subject_of_255_characters_is_accepted(api):
    subject = "ü" * 255

    assert api.create_session(subject=subject)["subject"] == subject


def test_a_test_key_creates_a_sandbox_session(sandbox_api):
    assert sandbox_api.create_session()["mode"] == "test"


def test_json_with_a_charset_parameter_is_accepted(api):
    response = api.post(
        "/v1/sessions", raw='{"subject": "u", "age_limit": 18}', content_type="application/json; charset=utf-8"
    )

    assert response.status_code == 201


@pytest.mark.parametrize("url", ["http://localhost:3000/done", "http://127.0.0.1:8080/done", "http://[::1]/done"])
def test_plain_http_callback_to_loopback_is_accepted_with_debug_off(api, url):
    session = api.create_session(callback_url=url, cancel_url=url)

    assert session["callbackUrl"] == url
    assert session["cancelUrl"] == url


def test_plain_http_callback_to_any_host_is_accepted_with_debug_on(api, settings):
    settings.DEBUG = True

    session = api.create_session(callback_url="http://shop.example.com/done")

    assert session["callbackUrl"] == "http://shop.example.com/done"


@pytest.mark.parametrize(
    "url", ["https://10.0.0.1/hook", "https://127.0.0.1:8443/hook", "https://localhost/hook", "https://[::1]/hook"]
)
def test_private_notification_targets_are_accepted_when_settings_allow_them(api, settings, url):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True

    assert api.create_session(notification_url=url)["notificationUrl"] == url


def test_a_new_key_of_the_same_tenant_creates_sessions_for_that_tenant(onboarded):
    second_key = ApiKeyFactory(tenant=onboarded.tenant, label="rotation").raw_key

    session = ApiClient(second_key).create_session()

    assert VerificationSession.objects.get(pk=session["sessionId"]).tenant_id == onboarded.tenant.id


# POST /v1/sessions writes the row with one prepared INSERT of every column (core.hot_sql.insert_row),
# not Model.save(): whatever save() would add on the way is skipped. What it would add today, the
# automatic timestamps, session_create sets itself; anything more must fail here, not go missing.
TIMESTAMPS_SET_BY_SESSION_CREATE = {"created_at", "updated_at"}


def test_a_session_insert_skips_nothing_that_saving_the_model_would_do():
    from django.db.models import DateField, DateTimeField, Field, Model, signals
    from django.db.models.fields import NOT_PROVIDED

    # Field.pre_save returns the value as set; the date fields' compute one only with auto_now(_add).
    plain_pre_saves = (Field.pre_save, DateField.pre_save, DateTimeField.pre_save)

    assert VerificationSession.save is Model.save, "save() overridden: insert_row would skip it"
    for signal in (signals.pre_save, signals.post_save):
        assert not signal.has_listeners(VerificationSession), f"a {signal} receiver: insert_row sends none"
    for field in VerificationSession._meta.concrete_fields:
        assert field.db_default is NOT_PROVIDED, f"{field.name}: a database default, but insert_row sets every column"
        computed_on_save = (
            getattr(field, "auto_now", False)
            or getattr(field, "auto_now_add", False)
            or type(field).pre_save not in plain_pre_saves
        )
        if computed_on_save:
            assert field.attname in TIMESTAMPS_SET_BY_SESSION_CREATE, f"{field.name} is computed by save()"


def test_a_created_session_has_the_timestamps_save_would_have_given_it(api):
    before = datetime.now(UTC)
    created = api.create_session()

    session = VerificationSession.objects.get(pk=created["sessionId"])
    assert before <= session.created_at == session.updated_at <= datetime.now(UTC)
