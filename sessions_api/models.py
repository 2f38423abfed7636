"""VerificationSession, its check results (numbers only, never images), its history, idempotency records.

Also the daily counts kept after the retention purge.
"""

from django.db import models

from core.identifiers import prefixed_ulid
from tenants.models import Tenant

from .choices import Mode, ProofAge, Reason, Status, Step
from .return_urls import return_url


def new_session_id() -> str:
    return prefixed_ulid("ses")


class VerificationSession(models.Model):
    id = models.CharField(primary_key=True, max_length=30, default=new_session_id, editable=False)
    # No index of its own: session_tenant_created_idx leads with tenant_id (every insert paid for both).
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="sessions", db_index=False)
    mode = models.CharField(max_length=4, choices=Mode.choices)
    subject = models.CharField(max_length=255)
    age_limit = models.PositiveSmallIntegerField()
    callback_url = models.CharField(max_length=2048, blank=True)
    cancel_url = models.CharField(max_length=2048, blank=True)
    notification_url = models.CharField(max_length=2048, blank=True)
    # The partner's own references (string keys and values, API-validated); erased by a redaction.
    metadata = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.INITIATED)
    # Selfie until the session is sent to the document step; only the state machine changes it.
    step = models.CharField(max_length=8, choices=Step.choices, default=Step.SELFIE)
    reason = models.CharField(max_length=20, choices=Reason.choices, blank=True)
    token_hash = models.CharField(max_length=64)
    expires_at = models.DateTimeField()
    selfie_attempts = models.PositiveSmallIntegerField(default=0)
    document_attempts = models.PositiveSmallIntegerField(default=0)
    # Uploads refused before analysis (not a picture, too large, frames missing); bounded per session
    # (sessions_api.submission.MAX_REFUSED_UPLOADS) so a refusal cannot be repeated for ever.
    refused_uploads = models.PositiveSmallIntegerField(default=0)
    # Wallet answers that proved nothing (wallets.digital_id); past its maximum the step is withdrawn.
    digital_id_attempts = models.PositiveSmallIntegerField(default=0)
    # The active liveness challenge shown to the user (e.g. ["left", "right", "center"]); not biometric.
    liveness_challenge = models.JSONField(default=list, blank=True)
    # While the session is open: the passed half of the document step's holder check, so the user re-does only
    # the half that failed (128 numbers of a face, never an image), sealed; erased when the session ends.
    # See sessions_api.evidence and docs/adult-path.md.
    evidence_seal = models.TextField(blank=True, default="")
    # The step durations (ms) issued with it: the page follows them, the liveness check holds frames to them.
    liveness_timing = models.JSONField(default=list, blank=True)
    # The screen colours (one per frame) issued with it: the page shows them, the face must reflect them
    # (checks.flash). Not biometric; empty for a challenge issued before the colour flash existed.
    liveness_flash = models.JSONField(default=list, blank=True)
    # The broker epoch (core.broker_epoch) its last analysis was queued in: another one now means that message,
    # and the pictures in it, went with a Redis that came back empty (sessions_api.watchdog). Empty: none queued.
    analysis_epoch = models.CharField(max_length=32, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finalized_at = models.DateTimeField(null=True, blank=True)
    # When the user first opened the flow (its consent page); null until then (verification.started).
    opened_at = models.DateTimeField(null=True, blank=True)
    # When the user first went past the consent page ("I agree"); null until then (the dashboard's funnel).
    consented_at = models.DateTimeField(null=True, blank=True)
    # When the partner erased its personal data (sessions_api.retention.session_redact); null until then.
    redacted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "verification session"
        indexes = [
            models.Index(fields=["tenant", "-created_at"], name="session_tenant_created_idx"),
            models.Index(fields=["status", "expires_at"], name="session_open_expiry_idx"),
            # The few sessions holding a seal, for the retention purge's sweep (sessions_api.retention).
            models.Index(fields=["id"], condition=~models.Q(evidence_seal=""), name="session_evidence_sealed_idx"),
        ]

    def __str__(self):
        return self.id

    @property
    def is_final(self) -> bool:
        return self.status in (Status.APPROVED, Status.DENIED)

    @property
    def callback_return_url(self) -> str:
        """Where the browser of an approved user goes: `callback_url` with `session_id` added."""
        return return_url(self.callback_url, self.id)

    @property
    def cancel_return_url(self) -> str:
        """Where the browser of a user not approved goes: `cancel_url` with `session_id` added."""
        return return_url(self.cancel_url, self.id)


class AgeEstimationResult(models.Model):
    session = models.OneToOneField(VerificationSession, on_delete=models.CASCADE, related_name="age_estimation")
    estimated_age = models.FloatField()
    age_confidence = models.FloatField()
    created_at = models.DateTimeField(auto_now_add=True)


class LivenessResult(models.Model):
    session = models.OneToOneField(VerificationSession, on_delete=models.CASCADE, related_name="liveness")
    is_live = models.BooleanField()
    liveness_score = models.FloatField()
    # The attack signals that fired (checks.liveness.SIGNALS), e.g. ["replay"]; no picture, no biometric data.
    signals = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)


class DocumentResult(models.Model):
    session = models.OneToOneField(VerificationSession, on_delete=models.CASCADE, related_name="document")
    document_kind = models.CharField(max_length=20)
    birthdate = models.DateField()
    true_age = models.PositiveSmallIntegerField()
    expiry_date = models.DateField(null=True, blank=True)
    # Whether a passed liveness capture of this session came with the document (the presence policy), and
    # how alike the live face and the document's portrait were: a number only, never a face or a template.
    liveness_checked = models.BooleanField(default=False)
    holder_match_score = models.FloatField(null=True, blank=True)
    holder_match_passed = models.BooleanField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)


class AgeCredentialResult(models.Model):
    """What a verified wallet credential proved (`ageCredential`): one boolean and where it came from.

    Never the presentation.
    """

    session = models.OneToOneField(VerificationSession, on_delete=models.CASCADE, related_name="age_credential")
    kind = models.CharField(max_length=10)  # "mdoc"
    doc_type = models.CharField(max_length=60)
    claim = models.CharField(max_length=20)  # the element that settled it, e.g. "age_over_18"
    value = models.BooleanField()
    issuer_country = models.CharField(max_length=3, blank=True)
    trust_source = models.CharField(max_length=100)
    created_at = models.DateTimeField(auto_now_add=True)  # verifiedAt


class AgePassResult(models.Model):
    """What an age pass showed when it approved the session (`agePass`): only what the tenant asked.

    The session's own limit (not every limit a document proved: the holder's age in years) and the proof's
    age in coarse buckets; no day of the proof or expiry, which would be the same at every tenant the pass
    is used at and so join the sessions (and the expiry would tell the saving tenant's lifetime setting).
    """

    session = models.OneToOneField(VerificationSession, on_delete=models.CASCADE, related_name="age_pass")
    method = models.CharField(max_length=20)  # "face", "document" or "digital_id"
    thresholds = models.JSONField(default=list)  # the session's age limit, which the pass proved: [18]
    proof_age = models.CharField(max_length=14, choices=ProofAge.choices)
    created_at = models.DateTimeField(auto_now_add=True)


class DigitalIdRequest(models.Model):
    """A single-use presentation request of the digital-ID step; its key material is wiped when consumed."""

    id = models.CharField(primary_key=True, max_length=40)
    session = models.ForeignKey(VerificationSession, on_delete=models.CASCADE, related_name="+")
    state = models.JSONField(default=dict)  # checks.digital_id.request.wallet_request_dump: nonce, ephemeral key
    expires_at = models.DateTimeField()
    consumed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)


class TrustAnchorRecord(models.Model):
    """An issuer root (IACA) the operator trusts, for some doc types, from a PEM file or a trusted list."""

    certificate_pem = models.TextField()
    fingerprint = models.CharField(max_length=64)  # SHA-256 of the DER
    doc_types = models.JSONField(default=list)
    sandbox = models.BooleanField(default=False, help_text="A test issuer: never approves a live session.")
    source = models.CharField(max_length=100, help_text='"pem:<name>", "vical:<provider>", ...')
    subject = models.CharField(max_length=300, blank=True)
    not_after = models.DateTimeField()
    loaded_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "fingerprint"], name="trust_anchor_unique_source_fingerprint"),
        ]

    def __str__(self):
        return f"{self.subject} ({self.source})"


class SessionEvent(models.Model):
    """One row per status change: the session's history, with its time and cause."""

    session = models.ForeignKey(VerificationSession, on_delete=models.CASCADE, related_name="events")
    from_status = models.CharField(max_length=12, choices=Status.choices)
    to_status = models.CharField(max_length=12, choices=Status.choices)
    reason = models.CharField(max_length=20, choices=Reason.choices, blank=True)
    cause = models.CharField(max_length=200)  # for operators: why the status changed
    # For the user: why they are asked again (a retake), shown on the page of the step they are sent back to.
    message = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]


class IdempotencyRecord(models.Model):
    """The first response to a POST carrying an `Idempotency-Key`, replayed for 24 h (CONTRACT 2)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    # Live and test keys of one tenant have separate key spaces (CONTRACT 2: per tenant and mode).
    mode = models.CharField(max_length=4, choices=Mode.choices)
    key = models.CharField(max_length=255)
    request_fingerprint = models.CharField(max_length=64)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)  # null while in progress
    response_body = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "mode", "key"], name="idempotency_unique_tenant_mode_key")
        ]


class SessionDailyCount(models.Model):
    """Sessions of one tenant, mode, creation day (UTC) and final status that the retention purge deleted.

    The usage chart adds these to the sessions still stored, so purging changes none of its numbers.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="purged_session_counts")
    mode = models.CharField(max_length=4, choices=Mode.choices)
    day = models.DateField()
    status = models.CharField(max_length=12, choices=Status.choices)
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "mode", "day", "status"], name="session_daily_count_unique"),
        ]


class LaunchCode(models.Model):
    """A one-time code that opens a session's flow in a top-level browser or an in-app browser tab (SDK mode).

    Lives 60 seconds, stored hashed, used once: the address that carries it holds no long-lived secret.
    `return_url` is one of the publishable key's registered return URLs, copied when the code was made.
    """

    code_hash = models.CharField(max_length=64, unique=True)
    session = models.ForeignKey(VerificationSession, on_delete=models.CASCADE, related_name="launch_codes")
    return_url = models.CharField(max_length=2048, blank=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
