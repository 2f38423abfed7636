"""Tenant, ApiKey and Membership: who may call the API and who may see a tenant's dashboard."""

import secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from core.identifiers import prefixed_ulid

SESSION_TTL_MIN_SECONDS = 5 * 60
SESSION_TTL_MAX_SECONDS = 7 * 24 * 3600
RETENTION_DEFAULT_DAYS = 90
RETENTION_MIN_DAYS = 1
RETENTION_MAX_DAYS = 365
# The calibrated age policy (assurance) never approves a face that its error model finds
# more likely under the age limit than over it; a tenant may ask for more, never for less.
AGE_CONFIDENCE_FLOOR = 0.5
AGE_EXTRA_YEARS_MAX = 15
STRICTER_ONLY = "Tenants may make the calibrated age policy stricter, never looser"


def new_tenant_id() -> str:
    return prefixed_ulid("ten")


# The liveness check's attack signals (checks.liveness.SIGNALS; tests/tenants hold the two to the same list).
LIVENESS_SIGNALS = ("virtualCamera", "timing", "replay", "flash", "passive")


def _liveness_signals_valid(value) -> None:
    if not isinstance(value, list) or any(signal not in LIVENESS_SIGNALS for signal in value):
        raise ValidationError(f"A list of liveness signals among: {', '.join(LIVENESS_SIGNALS)}.")


class Tenant(models.Model):
    id = models.CharField(primary_key=True, max_length=30, default=new_tenant_id, editable=False)
    name = models.CharField(max_length=200)
    contact_email = models.EmailField(blank=True)
    enabled = models.BooleanField(default=True, help_text="A disabled tenant's keys get 403 tenant_disabled.")
    digital_id_enabled = models.BooleanField(
        default=False,
        help_text=(
            'Offer "Use a digital ID" (a wallet credential through the browser) beside the selfie and the document.'
        ),
    )
    digital_id_unsigned_requests = models.BooleanField(
        default=False,
        help_text=(
            "For testing only: also send unsigned wallet requests (production wallets answer signed ones only), "
            "and offer the digital ID without a reader certificate."
        ),
    )
    webhooks_enabled = models.BooleanField(
        default=False, help_text="Set by the operator at onboarding: sends verification.completed webhooks."
    )
    # Events sent besides verification.completed, per mode: {"live": ["verification.redacted"], "test": [...]}.
    # Empty by default: the spec's one event is the only one a tenant gets until it opts in (issue 29).
    webhook_extra_events = models.JSONField(default=dict, blank=True)
    session_ttl_seconds = models.PositiveIntegerField(
        default=3600,
        validators=[MinValueValidator(SESSION_TTL_MIN_SECONDS), MaxValueValidator(SESSION_TTL_MAX_SECONDS)],
    )
    retention_days = models.PositiveSmallIntegerField(
        default=RETENTION_DEFAULT_DAYS,
        validators=[MinValueValidator(RETENTION_MIN_DAYS), MaxValueValidator(RETENTION_MAX_DAYS)],
        help_text="Final sessions (subject, results, history, webhook deliveries) are deleted this many days "
        "after their decision; only the daily counts of the usage chart are kept.",
    )
    age_extra_years = models.SmallIntegerField(
        default=0,
        validators=[
            MinValueValidator(0, message=f"{STRICTER_ONLY}: extra years cannot be negative."),
            MaxValueValidator(AGE_EXTRA_YEARS_MAX),
        ],
        help_text="Years added to the calibrated policy's threshold for every age limit (0: the policy as is).",
    )
    min_age_confidence = models.FloatField(
        default=AGE_CONFIDENCE_FLOOR,
        validators=[
            MinValueValidator(
                AGE_CONFIDENCE_FLOOR,
                message=f"{STRICTER_ONLY}: the minimum age confidence must be at least {AGE_CONFIDENCE_FLOOR}.",
            ),
            MaxValueValidator(1.0),
        ],
        help_text="A face passes only when ageConfidence, the calibrated probability that the person is at "
        f"least the age limit, reaches this too ({AGE_CONFIDENCE_FLOOR}: the policy's own floor).",
    )
    document_presence_required = models.BooleanField(
        default=True,
        help_text="Live sessions: a document is accepted only with a passed head-turn (liveness) capture of the "
        "same session whose face matches the document's portrait. Off: a document alone can approve, "
        "and the result shows liveness null and livenessChecked false.",
    )
    liveness_flag_only = models.JSONField(
        default=list,
        blank=True,
        validators=[_liveness_signals_valid],
        help_text="Liveness attack signals that only flag (shown in the result's liveness.signals) instead of "
        'refusing, e.g. ["virtualCamera"]. Empty: every signal refuses. Signals: '
        + ", ".join(LIVENESS_SIGNALS)
        + " (docs/pad.md).",
    )
    rate_limit_per_second = models.PositiveIntegerField(
        null=True, blank=True, help_text="Per API key; empty means the service default."
    )
    rate_limit_burst = models.PositiveIntegerField(null=True, blank=True)
    # Standard Webhooks secret (`whsec_...`). During a rotation the previous one keeps signing until
    # `webhook_secret_previous_expires_at`, so receivers can switch without dropping an event.
    webhook_secret = models.CharField(max_length=80, blank=True)
    webhook_secret_previous = models.CharField(max_length=80, blank=True)
    webhook_secret_previous_expires_at = models.DateTimeField(null=True, blank=True)
    # The same three for sandbox (test-mode) events: a separate secret, so that an event a test key
    # produced never verifies with the live secret a partner's production receiver trusts.
    test_webhook_secret = models.CharField(max_length=80, blank=True)
    test_webhook_secret_previous = models.CharField(max_length=80, blank=True)
    test_webhook_secret_previous_expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        # The stricter-only rule holds in the database too, whatever path writes a tenant.
        constraints = [
            models.CheckConstraint(
                condition=models.Q(age_extra_years__gte=0, age_extra_years__lte=AGE_EXTRA_YEARS_MAX),
                name="tenant_age_extra_years_stricter_only",
            ),
            models.CheckConstraint(
                condition=models.Q(min_age_confidence__gte=AGE_CONFIDENCE_FLOOR, min_age_confidence__lte=1.0),
                name="tenant_min_age_confidence_stricter_only",
            ),
        ]

    def __str__(self):
        return f"{self.name} ({self.id})"


class WebhookSecretFields:
    """The names of the current, previous and previous-expiry fields that hold one mode's signing secret."""

    def __init__(self, prefix: str):
        self.current = f"{prefix}webhook_secret"
        self.previous = f"{prefix}webhook_secret_previous"
        self.previous_expires_at = f"{prefix}webhook_secret_previous_expires_at"

    @classmethod
    def of(cls, mode: str) -> "WebhookSecretFields":
        if mode not in ("live", "test"):
            raise ValueError(f"unknown mode {mode!r}")
        return cls("" if mode == "live" else "test_")

    @property
    def names(self) -> list[str]:
        return [self.current, self.previous, self.previous_expires_at]


class ApiKey(models.Model):
    class Mode(models.TextChoices):
        LIVE = "live", "Live"
        TEST = "test", "Test"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="api_keys")
    mode = models.CharField(max_length=4, choices=Mode.choices)
    # The first 12 characters after `av_live_`/`av_test_`: public, indexed, shown in the dashboard.
    prefix = models.CharField(max_length=12, unique=True)
    # SHA-256 of the whole key; the key itself is shown once, at generation, and never stored.
    key_hash = models.CharField(max_length=64)
    label = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Set when the key was sent to a client (browser/app) endpoint: it is public now, and the
    # dashboard asks the tenant to rotate it.
    exposed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API key"

    def __str__(self):
        return self.display_prefix

    @property
    def display_prefix(self) -> str:
        return f"av_{self.mode}_{self.prefix}…"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class PublishableKey(models.Model):
    """A key that may live in a browser or an app (SDK mode, CONTRACT 8): public, per mode, revocable.

    It never reads a session's data nor calls the secret-key endpoints. Where it may be used is fixed
    here by the tenant, never by a request: the web origins that may frame the flow and call the
    client endpoints, and the return URLs (https or an app's own scheme) a mobile hand-off may go back to.
    """

    Mode = ApiKey.Mode

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="publishable_keys")
    mode = models.CharField(max_length=4, choices=Mode.choices)
    # Public by design (it sits in the partner's page), so stored as is and shown in the dashboard.
    key = models.CharField(max_length=64, unique=True)
    label = models.CharField(max_length=100, blank=True)
    allowed_origins = models.JSONField(
        default=list,
        blank=True,
        help_text="Exact web origins (scheme://host[:port]) that may frame the flow and call the client endpoints.",
    )
    return_urls = models.JSONField(
        "return URLs",
        default=list,
        blank=True,
        help_text="Exact URLs a mobile hand-off may return to: https, or your app's own scheme (myapp://verified).",
    )
    client_sessions_enabled = models.BooleanField(
        default=False,
        help_text="Let a browser or app create sessions with this key (off: only your backend creates them).",
    )
    client_age_limit = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(10), MaxValueValidator(21)],
        help_text="The age limit of every session created with this key from a browser or app.",
    )
    client_notification_url = models.CharField(
        "client notification URL",
        max_length=2048,
        blank=True,
        help_text="notification_url of sessions created with this key (optional).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "publishable key"

    def __str__(self):
        return self.key

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    @staticmethod
    def new_key(mode: str) -> str:
        return f"av_pk_{mode}_{secrets.token_urlsafe(24)}"


class Role(models.TextChoices):
    """What a member may do in the tenant's dashboard (dashboard.roles says it capability by capability)."""

    OWNER = "owner", "Owner"
    ADMIN = "admin", "Admin"
    DEVELOPER = "developer", "Developer"
    VIEWER = "viewer", "Viewer"


class Membership(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="tenant_memberships")
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="memberships")
    # The operator adds a tenant's first people at onboarding: they are its owners. Invitations name a role.
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.OWNER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "tenant"], name="membership_unique_user_tenant")]

    def __str__(self):
        return f"{self.user} in {self.tenant.name}"


class Invitation(models.Model):
    """An invitation to join a tenant with a role, sent by email: single use, expiring, revocable.

    Only the SHA-256 of the link's token is stored; the token itself is in the email and nowhere else.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(max_length=10, choices=Role.choices)
    token_hash = models.CharField(max_length=64, unique=True)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.email} as {self.role} of {self.tenant_id}"


class TenantBranding(models.Model):
    """How the hosted flow presents a tenant to its users (tenants.branding checks and writes it)."""

    tenant = models.OneToOneField(Tenant, primary_key=True, on_delete=models.CASCADE, related_name="branding")
    display_name = models.CharField(
        max_length=100, blank=True, help_text="Shown to users in the flow instead of the tenant's name."
    )
    # "#rrggbb", checked for WCAG AA contrast against the flow's background and button text.
    accent_color = models.CharField(max_length=7, blank=True)
    privacy_notice_url = models.URLField("privacy notice URL", max_length=500, blank=True)
    # The uploaded logo, decoded and re-encoded as PNG (never the uploaded bytes), at most LOGO_MAX_BOX pixels.
    logo_png = models.BinaryField(null=True, blank=True, editable=False)
    logo_sha256 = models.CharField(max_length=64, blank=True, editable=False)
    logo_width = models.PositiveSmallIntegerField(null=True, blank=True, editable=False)
    logo_height = models.PositiveSmallIntegerField(null=True, blank=True, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "tenant brandings"

    def __str__(self):
        return f"Branding of {self.tenant_id}"
