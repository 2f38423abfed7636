"""The one-time right to save a pass, held by the browser whose request completed the approving step.

That request gives its browser a random secret (flow/age_pass.py sets it in an HttpOnly cookie); only its
SHA-256 is stored, beside the session id. Saving spends it by one conditional UPDATE, so of saves sent at
once exactly one finds it unspent.
"""

import hashlib
import hmac
import secrets

from django.utils import timezone

from .models import AgePassSaveRight


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def save_right_issue(*, session_id: str) -> str:
    """A new secret for the session, replacing any earlier one (the last submitting browser holds it)."""
    secret = secrets.token_urlsafe(32)
    AgePassSaveRight.objects.update_or_create(
        session_id=session_id,
        defaults={"secret_digest": _digest(secret), "issued_at": timezone.now(), "spent_at": None},
    )
    return secret


def save_right_held(*, session_id: str, secret: str | None) -> bool | None:
    """True: `secret` is the session's unspent right; False: it is, but spent; None: it is not the session's."""
    right = AgePassSaveRight.objects.filter(session_id=session_id).first()
    if right is None or not secret or not hmac.compare_digest(right.secret_digest, _digest(secret)):
        return None
    return right.spent_at is None


def save_right_spend(*, session_id: str, secret: str, now) -> bool:
    """Spend the right, once: False when another save spent it first (or it is not this secret)."""
    return bool(
        AgePassSaveRight.objects.filter(
            session_id=session_id, secret_digest=_digest(secret), spent_at__isnull=True
        ).update(spent_at=now)
    )
