"""factory_boy factories for the domain's models."""
from datetime import timedelta

import factory
from django.contrib.auth import get_user_model
from django.utils import timezone

from sessions_api.models import Mode, VerificationSession
from sessions_api.services import session_token_hash
from tenants.models import Membership, Tenant
from tenants.services import webhook_secret_new


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
    password = factory.django.Password("correct horse battery staple")


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
