"""Age passes: a proved age kept with a passkey on the user's device, and the single-use challenges that use it.

A pass holds what was proved and the passkey's public half, never who: no subject, tenant, name, birth
date or image (docs/age-pass.md).
"""

from django.core.validators import MinValueValidator
from django.db import models

from tenants.models import Tenant


class Method(models.TextChoices):
    """How the age was proved; ordered from the weakest to the strongest evidence (a tenant's minimum)."""

    FACE = "face", "Face (age estimation with liveness)"
    DIGITAL_ID = "digital_id", "Digital ID (wallet credential)"
    DOCUMENT = "document", "Identity document"


METHOD_RANK = {Method.FACE: 0, Method.DIGITAL_ID: 1, Method.DOCUMENT: 2}


class AgePass(models.Model):
    credential_id = models.BinaryField(max_length=1023, unique=True)
    public_key = models.BinaryField()  # COSE, as the authenticator gave it at registration
    sign_count = models.PositiveBigIntegerField(default=0)
    method = models.CharField(max_length=20, choices=Method.choices)
    thresholds = models.JSONField(default=list)  # the age limits proved, e.g. [18] or [10, ..., 19]
    proved_on = models.DateField()
    expires_on = models.DateField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    # The assurance the approval was proved under, held against each accepting tenant's own settings (None:
    # not checked, or a pass saved before it was recorded, which counts as the weakest).
    liveness_checked = models.BooleanField(null=True)  # a document: the head turns of the presence policy passed
    holder_matched = models.BooleanField(null=True)  # a document: the face matched the document's portrait
    extra_years = models.SmallIntegerField(null=True)  # a face: the approving tenant's age_extra_years
    age_confidence = models.FloatField(null=True)  # a face: the calibrated confidence the approval reached
    flagged_signals = models.JSONField(default=list)  # liveness attack signals that only flagged at the approval
    # No creation time: an instant beside the approving session's finalized_at would tell the operator whose
    # pass this is. The day of the proof is shared with every pass saved that day.

    class Meta:
        verbose_name = "age pass"
        verbose_name_plural = "age passes"
        indexes = [models.Index(fields=["expires_on"], name="age_pass_expiry_idx")]

    def __str__(self):
        return f"age pass #{self.pk} ({self.method}, until {self.expires_on})"


class Purpose(models.TextChoices):
    SAVE = "save", "Save a pass after an approval"
    USE = "use", "Use a pass in a session"
    MANAGE = "manage", "Show or delete a pass"


class AgePassChallenge(models.Model):
    """A WebAuthn challenge, used once; `save` and `use` ones are bound to a session, `manage` ones to a browser."""

    challenge = models.BinaryField(max_length=64, unique=True)
    purpose = models.CharField(max_length=6, choices=Purpose.choices)
    session_id = models.CharField(max_length=30, blank=True, db_index=True)
    expires_at = models.DateTimeField()
    consumed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)


class AgePassSaveRight(models.Model):
    """The right to save one pass after a session's approval, held by the browser whose request completed the
    approving step: that request set a secret in an HttpOnly cookie, and only its digest is kept here.

    Another browser that opened the same link (the partner's backend has it from creation) holds no secret,
    so it cannot save the user's approval on its own authenticator. Spent by one conditional UPDATE: one
    pass per approval, however many saves arrive at once.
    """

    session_id = models.CharField(max_length=30, unique=True)
    secret_digest = models.CharField(max_length=64)  # SHA-256 of the cookie's secret, hex
    issued_at = models.DateTimeField()
    spent_at = models.DateTimeField(null=True, blank=True)


class AgePassPolicy(models.Model):
    """A tenant's use of age passes; a tenant without one neither offers nor accepts passes."""

    tenant = models.OneToOneField(Tenant, on_delete=models.CASCADE, related_name="age_pass_policy")
    offer_saving = models.BooleanField(
        default=False, help_text='After an approval in a live session, offer "Save an age pass on this device".'
    )
    accept_passes = models.BooleanField(default=False, help_text='Offer "Use my age pass" on the first page.')
    minimum_method = models.CharField(
        max_length=20,
        choices=Method.choices,
        default=Method.FACE,
        help_text="Accept only passes proved this way or by stronger evidence (face < digital ID < document).",
    )
    max_proof_age_days = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Accept only passes proved at most this many days ago (empty: any).",
    )
    lifetime_days = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="Passes saved after this tenant's sessions last this many days, if less than the deployment's.",
    )

    class Meta:
        verbose_name = "age pass policy"
        verbose_name_plural = "age pass policies"

    def __str__(self):
        return f"age pass policy of {self.tenant_id}"
