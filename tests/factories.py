"""factory_boy factories for the domain's rows, and sessions, keys and deliveries put in named states.

A state that the service reaches only with time (an expiry passed, an analysis lost for minutes, a
session created days ago, a retry that is due) is set here, by name, rather than by raw `.update()`
calls in the tests. States the service reaches by itself go through its real code (the state machine).
"""

from datetime import datetime, timedelta

import factory
from django.contrib.auth import get_user_model
from django.utils import timezone

from sessions_api.models import Mode, VerificationSession
from sessions_api.services import session_token_hash
from sessions_api.state_machine import Results, session_transition
from tenants.audit import Actor
from tenants.models import ApiKey, Membership, Tenant
from tenants.services import api_key_generate, webhook_secret_new
from webhooks.models import WebhookAttempt, WebhookDelivery

PASSWORD = "correct horse battery staple"


# Who a test's own setup is in the audit log: every tenant-changing service asks for an actor.
SETUP = Actor(name="test setup")


class TenantFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Tenant

    name = factory.Sequence(lambda n: f"Shop {n}")
    webhook_secret = factory.LazyFunction(webhook_secret_new)
    test_webhook_secret = factory.LazyFunction(webhook_secret_new)


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"staff{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    password = factory.django.Password(PASSWORD)


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    user = factory.SubFactory(UserFactory)
    tenant = factory.SubFactory(TenantFactory)


class VerificationSessionFactory(factory.django.DjangoModelFactory):
    """A session as `session_create` makes it; its flow token is `token` (default "token-<n>")."""

    class Meta:
        model = VerificationSession
        exclude = ("token",)

    tenant = factory.SubFactory(TenantFactory)
    mode = Mode.LIVE
    subject = factory.Sequence(lambda n: f"user-{n}")
    age_limit = 18
    token = factory.Sequence(lambda n: f"token-{n}")
    token_hash = factory.LazyAttribute(lambda o: session_token_hash(o.token))
    expires_at = factory.LazyFunction(lambda: (timezone.now() + timedelta(hours=1)).replace(microsecond=0))


class ApiKeyFactory(factory.django.DjangoModelFactory):
    """A key made by `api_key_generate`, as onboarding and the dashboard make them; the whole key is `.raw_key`."""

    class Meta:
        model = ApiKey

    tenant = factory.SubFactory(TenantFactory)
    mode = ApiKey.Mode.LIVE
    label = ""

    @classmethod
    def _create(cls, model_class, *, tenant, mode, label):
        generated = api_key_generate(tenant=tenant, mode=mode, label=label, actor=SETUP)
        generated.api_key.raw_key = generated.raw_key
        return generated.api_key


class WebhookAttemptFactory(factory.django.DjangoModelFactory):
    """One logged attempt of a delivery, as the sender records it (the delivery's count follows)."""

    class Meta:
        model = WebhookAttempt
        skip_postgeneration_save = True

    number = factory.LazyAttribute(lambda attempt: attempt.delivery.attempts.count() + 1)
    status_code = 500
    latency_ms = 120

    @factory.post_generation
    def counted(attempt, create, extracted, **kwargs):
        if create:
            WebhookDelivery.objects.filter(pk=attempt.delivery_id).update(attempt_count=attempt.number)


# --- sessions in named states ---------------------------------------------------------------------


def finished_session(tenant, *, status="approved", notification_url="", subject=None, mode="live"):
    """A session of `tenant` taken through the real state machine to `status`, as the flow would."""
    extra = {"subject": subject} if subject else {}
    session = VerificationSessionFactory(tenant=tenant, notification_url=notification_url, mode=mode, **extra)
    if status == "initiated":
        return session
    session_transition(session_id=session.id, to="processing", cause="selfie submitted", count_attempt=True)
    if status == "approved":
        session_transition(
            session_id=session.id,
            to="approved",
            reason="age_estimation",
            cause="estimated age above the limit",
            results=Results(
                age_estimation={"estimated_age": 31.5, "age_confidence": 0.87},
                liveness={"is_live": True, "liveness_score": 0.96},
            ),
        )
    elif status == "denied":
        session_transition(
            session_id=session.id,
            to="denied",
            reason="liveness_failed",
            cause="liveness failed",
            results=Results(liveness={"is_live": False, "liveness_score": 0.08}),
        )
    session.refresh_from_db()
    return session


def delivery_with_attempt(tenant, *, status_code=500):
    """A finished session's webhook delivery with one logged attempt, as the sender leaves it."""
    session = finished_session(tenant, notification_url="https://hooks.partner.test/av")
    delivery = WebhookDelivery.objects.get(subject_ref=session.id)
    WebhookAttemptFactory(delivery=delivery, status_code=status_code, response_excerpt="upstream down")
    delivery.refresh_from_db()
    return session, delivery


def session_past_expiry(session_id: str, *, ago: timedelta = timedelta(seconds=1), at: datetime | None = None) -> None:
    """The session's time is up (`ago` before now, or `at`), and nothing has read or swept it since."""
    VerificationSession.objects.filter(pk=session_id).update(expires_at=at or timezone.now() - ago)


def session_processing_for(session_id: str, duration: timedelta) -> None:
    """The session went to `processing` `duration` ago and nothing has happened to it since."""
    VerificationSession.objects.filter(pk=session_id).update(updated_at=timezone.now() - duration)


def session_created_days_ago(session_id: str, days: int) -> None:
    VerificationSession.objects.filter(pk=session_id).update(created_at=timezone.now() - timedelta(days=days))


def api_key_last_used(api_key: ApiKey, at: datetime) -> None:
    ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=at)


def delivery_due_now(delivery: WebhookDelivery) -> None:
    """Its next retry's time has come (the scheduled wait has passed)."""
    WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
