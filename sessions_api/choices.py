"""The session's vocabulary: its statuses, reasons, modes and steps, the choices of its model fields.

Apart from the models so that the web pages can speak of a session without importing a model.
"""

from django.db import models


class Status(models.TextChoices):
    INITIATED = "initiated", "Initiated"
    PROCESSING = "processing", "Processing"
    REQUIRES_DOC = "requires_doc", "Requires document"
    APPROVED = "approved", "Approved"
    DENIED = "denied", "Denied"


class Reason(models.TextChoices):
    AGE_ESTIMATION = "age_estimation", "Approved by age estimation"
    DOCUMENT = "document", "Approved by document"
    DIGITAL_ID = "digital_id", "Approved by digital ID"
    AGE_PASS = "age_pass", "Approved by an age pass"
    LIVENESS_FAILED = "liveness_failed", "Liveness failed"
    DOCUMENT_INVALID = "document_invalid", "Document invalid"
    DOCUMENT_EXPIRED = "document_expired", "Document expired"
    UNDERAGE_DOCUMENT = "underage_document", "Underage (document)"
    DOCUMENT_MISMATCH = "document_mismatch", "Document holder not matched"
    UNDERAGE_DIGITAL_ID = "underage_digital_id", "Underage (digital ID)"
    ATTEMPTS_EXCEEDED = "attempts_exceeded", "Attempts exceeded"
    CANCELLED = "cancelled", "Cancelled by the user"
    EXPIRED = "expired", "Expired"


class ProofAge(models.TextChoices):
    """How long ago an age pass's proof was made, in buckets that many passes share (`agePass.proofAge`):
    an exact day, the same at every tenant, would join the sessions a pass approved."""

    UNDER_1_MONTH = "under_1_month", "Less than a month"
    UNDER_3_MONTHS = "under_3_months", "Less than three months"
    UNDER_1_YEAR = "under_1_year", "Less than a year"
    OVER_1_YEAR = "over_1_year", "A year or more"

    @classmethod
    def of(cls, days: int) -> "ProofAge":
        for bucket, below in ((cls.UNDER_1_MONTH, 31), (cls.UNDER_3_MONTHS, 92), (cls.UNDER_1_YEAR, 366)):
            if days < below:
                return bucket
        return cls.OVER_1_YEAR


class Mode(models.TextChoices):
    LIVE = "live", "Live"
    TEST = "test", "Test (sandbox)"


class Step(models.TextChoices):
    """The step the user is on; `processing` keeps the step being analysed."""

    SELFIE = "selfie", "Selfie"
    DOCUMENT = "document", "Document"
