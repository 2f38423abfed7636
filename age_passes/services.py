"""Saving, using, showing, deleting and revoking age passes; every WebAuthn check is py_webauthn's.

A challenge is made for one purpose (and, to save or use, one session), lives five minutes and is
consumed by one conditional UPDATE before the answer is verified, so an answer cannot be replayed and
an answer made for one session is refused in another. The browser's answer is checked by
`webauthn.verify_registration_response` / `verify_authentication_response`: signature, counter, user
verification, origin and RP ID (the service's own, from PUBLIC_BASE_URL).
"""

from __future__ import annotations

import json
import logging
import secrets
from dataclasses import dataclass
from datetime import date, timedelta
from urllib.parse import urlsplit

import webauthn
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop
from webauthn.helpers import (
    parse_authentication_credential_json,
    parse_client_data_json,
    parse_registration_credential_json,
)
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from sessions_api.choices import ProofAge
from sessions_api.models import Mode, Reason, Status, VerificationSession
from sessions_api.state_machine import Results, TransitionNotAllowed, session_transition
from tenants.audit import Actor, changes_record
from tenants.models import AuditLogEntry, Tenant

from .assurance import assurance_proved, assurance_shortfall
from .models import METHOD_RANK, AgePass, AgePassChallenge, AgePassPolicy, AgePassSaveRight, Method, Purpose
from .save_rights import save_right_held, save_right_issue, save_right_spend

logger = logging.getLogger(__name__)

CHALLENGE_LIFETIME = timedelta(minutes=5)
SAVE_WINDOW = timedelta(minutes=10)  # after the approval: a pass is saved then, or not at all
CEREMONY_TIMEOUT_MS = 120_000
THRESHOLD_RANGE = range(10, 22)  # the limits a document's age can prove (the API's age limits)
METHOD_OF_REASON = {
    Reason.AGE_ESTIMATION: Method.FACE,
    Reason.DOCUMENT: Method.DOCUMENT,
    Reason.DIGITAL_ID: Method.DIGITAL_ID,
}

# In English here, translated where shown (flow/age_pass.py).
MESSAGE_NOT_VERIFIED = gettext_noop("Your age pass could not be checked. Please try again or use another way below.")
MESSAGE_UNKNOWN = gettext_noop("This age pass is not known here (it may have been deleted). Please use another way.")
MESSAGE_CHALLENGE_USED = gettext_noop("This confirmation was already used or has expired. Please try again.")
MESSAGE_OTHER_SESSION = gettext_noop("This confirmation was made for another verification. Please try again.")
MESSAGE_EXPIRED = gettext_noop("Your age pass has expired. Please use another way below.")
MESSAGE_REVOKED = gettext_noop("Your age pass was withdrawn by the service. Please use another way below.")
MESSAGE_TOO_YOUNG_PASS = gettext_noop(
    "Your age pass does not show that you are at least %(age_limit)s. Please use another way below."
)
MESSAGE_METHOD = gettext_noop(
    "This site needs a stronger proof than the one your age pass holds. Please use another way below."
)
MESSAGE_STRICTER_CHECK = gettext_noop(
    "This site asks for a stricter check than the one your age pass was saved after. Please use another way below."
)
MESSAGE_TOO_OLD_PROOF = gettext_noop("The proof in your age pass is too old for this site. Please use another way.")
MESSAGE_REDACTED = gettext_noop("This verification's results were erased, so no age pass can be saved from it.")
MESSAGE_NOT_THIS_BROWSER = gettext_noop(
    "An age pass can be saved only on the device and in the browser that completed this verification."
)
MESSAGE_RATE_LIMITED = gettext_noop("Too many tries from this network. Please wait a minute and try again.")
MESSAGE_ALREADY_SAVED = gettext_noop("An age pass was already saved after this verification.")
MESSAGE_SAVE_TOO_LATE = gettext_noop(
    "An age pass can be saved only in the first minutes after a verification. Verify again to save one."
)


class AgePassUnavailable(Exception):
    """Passes are not offered for this session (tenant policy, deployment setting, status, mode)."""


class AgePassRefused(Exception):
    """The browser's answer did not prove what it had to; `code` for programs, `message` for the user,
    `status` the HTTP status the flow answers with (400: the answer; 403: not this browser; 409: the session)."""

    def __init__(self, code: str, message: str, *, status: int = 400):
        super().__init__(code)
        self.code, self.message, self.status = code, message, status


@dataclass(frozen=True)
class PassUse:
    approved: bool
    code: str = ""
    message: str = ""


def rp_id() -> str:
    """The passkeys' scope: the host name of the service's own address (PUBLIC_BASE_URL)."""
    return urlsplit(settings.PUBLIC_BASE_URL).hostname or "localhost"


def expected_origin() -> str:
    parts = urlsplit(settings.PUBLIC_BASE_URL)
    return f"{parts.scheme}://{parts.netloc}"


def _policy(session: VerificationSession) -> AgePassPolicy | None:
    return AgePassPolicy.objects.filter(tenant_id=session.tenant_id).first()


def _new_challenge(*, purpose: str, session_id: str = "") -> bytes:
    challenge = secrets.token_bytes(32)
    AgePassChallenge.objects.create(
        challenge=challenge, purpose=purpose, session_id=session_id, expires_at=timezone.now() + CHALLENGE_LIFETIME
    )
    return challenge


def _challenge_consume(*, challenge: bytes, purpose: str, session_id: str = "") -> None:
    """Use the challenge the answer signed, once; refused if unknown, used, expired or another session's."""
    now = timezone.now()
    row = AgePassChallenge.objects.filter(challenge=challenge, purpose=purpose).first()
    if row is None:
        raise AgePassRefused("challenge_unknown", MESSAGE_CHALLENGE_USED)
    if row.session_id != session_id:
        raise AgePassRefused("other_session", MESSAGE_OTHER_SESSION)
    taken = AgePassChallenge.objects.filter(pk=row.pk, consumed_at__isnull=True, expires_at__gt=now).update(
        consumed_at=now
    )
    if not taken:
        raise AgePassRefused("challenge_used", MESSAGE_CHALLENGE_USED)


def _signed_challenge(credential) -> bytes:
    try:
        parsed = parse_authentication_credential_json(credential)
        return parse_client_data_json(parsed.response.client_data_json).challenge
    except (WebAuthnException, ValueError, TypeError, KeyError):
        raise AgePassRefused("malformed", MESSAGE_NOT_VERIFIED)


# --- a tenant's policy ---

POLICY_FIELDS = ("offer_saving", "accept_passes", "minimum_method", "max_proof_age_days", "lifetime_days")


def _policy_value(policy: AgePassPolicy, name: str) -> str:
    value = getattr(policy, name)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if name == "minimum_method":
        return policy.get_minimum_method_display()
    return "(deployment's)" if value is None and name == "lifetime_days" else str(value or "(any)")


@transaction.atomic
def age_pass_policy_set(
    *,
    tenant: Tenant,
    actor: Actor,
    offer_saving: bool,
    accept_passes: bool,
    minimum_method: str,
    max_proof_age_days: int | None,
    lifetime_days: int | None,
) -> AgePassPolicy:
    """Set the tenant's pass policy (the admin and the dashboard both come here); checked as the model declares.

    One audit row says what changed, old and new values (none when nothing did).
    """
    policy = AgePassPolicy.objects.select_for_update().filter(tenant=tenant).first() or AgePassPolicy(tenant=tenant)
    old = {name: _policy_value(policy, name) for name in POLICY_FIELDS}
    policy.offer_saving, policy.accept_passes = offer_saving, accept_passes
    policy.minimum_method = minimum_method
    policy.max_proof_age_days, policy.lifetime_days = max_proof_age_days, lifetime_days
    policy.full_clean()
    policy.save()
    changed = {
        name.replace("_", " "): f"{old[name]} → {_policy_value(policy, name)}"
        for name in POLICY_FIELDS
        if old[name] != _policy_value(policy, name)
    }
    changes_record(
        tenant=tenant,
        actor=actor,
        action=AuditLogEntry.Action.AGE_PASS_POLICY_CHANGED,
        target_type="age_pass_policy",
        changed=changed,
    )
    return policy


# --- saving a pass after an approval ---


def _save_method(session: VerificationSession) -> str | None:
    return METHOD_OF_REASON.get(session.reason)


def _save_available(session: VerificationSession) -> bool:
    """An approval by face, document or digital ID in a live session of a tenant that offers passes, by a
    method the deployment lets save one."""
    if session.mode != Mode.LIVE or session.status != Status.APPROVED:
        return False
    method = _save_method(session)
    policy = _policy(session)
    return method is not None and method in settings.AGE_PASS_METHODS and policy is not None and policy.offer_saving


def age_pass_save_right_issue(*, session: VerificationSession) -> str | None:
    """The secret of a new right to save a pass after this session's approval, for the browser whose request
    just completed a step that may approve it (it replaces any earlier one); None, storing nothing, where the
    session could never save a pass."""
    policy = _policy(session)
    if session.mode != Mode.LIVE or policy is None or not policy.offer_saving:
        return None
    return save_right_issue(session_id=session.id)


def _save_refusal(session: VerificationSession, save_right: str | None) -> Exception | None:
    """Why this browser (holding `save_right`, the secret of its cookie) cannot save a pass now, or None."""
    if session.redacted_at is not None:
        return AgePassRefused("session_redacted", MESSAGE_REDACTED, status=409)
    if not _save_available(session):
        return AgePassUnavailable(session.id)
    held = save_right_held(session_id=session.id, secret=save_right)
    if held is None:
        return AgePassRefused("not_this_browser", MESSAGE_NOT_THIS_BROWSER, status=403)
    if not held:
        return AgePassRefused("already_saved", MESSAGE_ALREADY_SAVED, status=409)
    if session.finalized_at is None or timezone.now() > session.finalized_at + SAVE_WINDOW:
        return AgePassRefused("save_too_late", MESSAGE_SAVE_TOO_LATE, status=409)
    return None


def age_pass_save_offered(session: VerificationSession, *, save_right: str | None) -> bool:
    """Whether the result page offers this browser to save a pass: it completed the approving step, the
    approval may be saved, is recent, not redacted and not saved already."""
    return _save_refusal(session, save_right) is None


def _save_allowed(session: VerificationSession, save_right: str | None) -> None:
    refusal = _save_refusal(session, save_right)
    if refusal is not None:
        raise refusal


def thresholds_proved(session: VerificationSession) -> list[int]:
    """A document's birth date proves every limit up to its age; a face or a digital ID only the session's."""
    if session.reason == Reason.DOCUMENT:
        true_age = session.document.true_age
        return [limit for limit in THRESHOLD_RANGE if limit <= true_age]
    return [session.age_limit]


def age_pass_registration_options(*, session: VerificationSession, save_right: str | None) -> dict:
    _save_allowed(session, save_right)
    limit = max(thresholds_proved(session))
    options = webauthn.generate_registration_options(
        rp_id=rp_id(),
        rp_name="Age pass",
        # A random user handle: the passkey names no one, and two passes share nothing.
        user_id=secrets.token_bytes(16),
        user_name=f"Age pass: {limit}+",
        user_display_name=f"Age pass: {limit}+",
        challenge=_new_challenge(purpose=Purpose.SAVE, session_id=session.id),
        timeout=CEREMONY_TIMEOUT_MS,
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED,
            require_resident_key=True,
            user_verification=UserVerificationRequirement.REQUIRED,
        ),
    )
    return _options_json(options)


def _options_json(options) -> dict:
    return json.loads(webauthn.options_to_json(options))


def _lifetime_days(session: VerificationSession) -> int:
    days = settings.AGE_PASS_LIFETIME_DAYS
    policy = _policy(session)
    if policy is not None and policy.lifetime_days:
        days = min(days, policy.lifetime_days)
    return days


def age_pass_save(*, session: VerificationSession, save_right: str | None, credential) -> AgePass:
    """Verify the new passkey and store the pass beside it: what was proved, how, when, until when.

    The browser's right is spent by one conditional UPDATE in the pass's transaction: of saves sent at once,
    the first to commit stores its pass and the others find the right spent.
    """
    _save_allowed(session, save_right)
    try:
        challenge = parse_client_data_json(
            parse_registration_credential_json(credential).response.client_data_json
        ).challenge
    except (WebAuthnException, ValueError, TypeError, KeyError):
        raise AgePassRefused("malformed", MESSAGE_NOT_VERIFIED)
    _challenge_consume(challenge=challenge, purpose=Purpose.SAVE, session_id=session.id)
    try:
        verified = webauthn.verify_registration_response(
            credential=credential,
            expected_challenge=challenge,
            expected_rp_id=rp_id(),
            expected_origin=expected_origin(),
            require_user_verification=True,
        )
    except (WebAuthnException, ValueError, TypeError, KeyError) as error:
        logger.info("age pass: registration refused for %s: %s", session.id, error)
        raise AgePassRefused("not_verified", MESSAGE_NOT_VERIFIED)
    now = timezone.now()
    today = now.date()
    with transaction.atomic():
        if not save_right_spend(session_id=session.id, secret=save_right, now=now):
            raise AgePassRefused("already_saved", MESSAGE_ALREADY_SAVED, status=409)
        return AgePass.objects.create(
            credential_id=verified.credential_id,
            public_key=verified.credential_public_key,
            sign_count=verified.sign_count,
            method=_save_method(session),
            thresholds=thresholds_proved(session),
            **assurance_proved(session),
            proved_on=today,
            expires_on=today + timedelta(days=_lifetime_days(session)),
        )


# --- using a pass in a session ---


def age_pass_use_offered(session: VerificationSession) -> bool:
    policy = _policy(session)
    return (
        session.mode == Mode.LIVE
        and session.status in (Status.INITIATED, Status.REQUIRES_DOC)
        and policy is not None
        and policy.accept_passes
    )


def age_pass_authentication_options(*, session: VerificationSession | None, purpose: str = Purpose.USE) -> dict:
    if purpose == Purpose.USE and (session is None or not age_pass_use_offered(session)):
        raise AgePassUnavailable(session.id if session else "")
    options = webauthn.generate_authentication_options(
        rp_id=rp_id(),
        challenge=_new_challenge(purpose=purpose, session_id=session.id if session else ""),
        timeout=CEREMONY_TIMEOUT_MS,
        user_verification=UserVerificationRequirement.REQUIRED,  # a lent phone or a shared computer
    )
    return _options_json(options)


def _verified_pass(*, credential, purpose: str, session_id: str = "") -> AgePass:
    """The pass whose passkey signed this answer, its counter moved on; AgePassRefused otherwise.

    The challenge is consumed in a transaction of its own, before anything else: a refused answer spends it too.
    """
    challenge = _signed_challenge(credential)
    _challenge_consume(challenge=challenge, purpose=purpose, session_id=session_id)
    with transaction.atomic():
        return _pass_verify(credential=credential, challenge=challenge)


def _pass_verify(*, credential, challenge: bytes) -> AgePass:
    parsed = parse_authentication_credential_json(credential)
    age_pass = AgePass.objects.select_for_update().filter(credential_id=parsed.raw_id).first()
    if age_pass is None:
        raise AgePassRefused("unknown_pass", MESSAGE_UNKNOWN)
    try:
        verified = webauthn.verify_authentication_response(
            credential=credential,
            expected_challenge=challenge,
            expected_rp_id=rp_id(),
            expected_origin=expected_origin(),
            credential_public_key=bytes(age_pass.public_key),
            credential_current_sign_count=age_pass.sign_count,
            require_user_verification=True,
        )
    except (WebAuthnException, ValueError, TypeError, KeyError) as error:
        logger.info("age pass: assertion refused: %s", error)
        raise AgePassRefused("not_verified", MESSAGE_NOT_VERIFIED)
    AgePass.objects.filter(pk=age_pass.pk).update(sign_count=verified.new_sign_count)
    return age_pass


def _refusal_for(age_pass: AgePass, session: VerificationSession, policy: AgePassPolicy, today: date):
    if age_pass.revoked_at is not None:
        return AgePassRefused("revoked", MESSAGE_REVOKED)
    if age_pass.expires_on <= today:
        return AgePassRefused("expired", MESSAGE_EXPIRED)
    if session.age_limit not in age_pass.thresholds:
        return AgePassRefused("limit_not_proved", MESSAGE_TOO_YOUNG_PASS)
    if METHOD_RANK[age_pass.method] < METHOD_RANK[policy.minimum_method]:
        return AgePassRefused("method_not_accepted", MESSAGE_METHOD)
    if shortfall := assurance_shortfall(age_pass, session.tenant):
        return AgePassRefused(shortfall, MESSAGE_STRICTER_CHECK)
    if policy.max_proof_age_days is not None and (today - age_pass.proved_on).days > policy.max_proof_age_days:
        return AgePassRefused("proof_too_old", MESSAGE_TOO_OLD_PROOF)
    return None


AGE_PASS_CAUSE = "age pass shown with a passkey"  # in the session's history (the dashboard's attempts read it)


def age_pass_use(*, session: VerificationSession, credential) -> PassUse:
    """Approve the session with reason `age_pass` if the signed answer names a valid pass proving its limit.

    A refusal leaves the session where it was (the flow continues as before) and says why; the challenge
    stays used either way, so the same answer never counts twice.
    """
    if not age_pass_use_offered(session):
        raise AgePassUnavailable(session.id)
    try:
        age_pass = _verified_pass(credential=credential, purpose=Purpose.USE, session_id=session.id)
    except AgePassRefused as refused:
        return PassUse(approved=False, code=refused.code, message=refused.message)
    refused = _refusal_for(age_pass, session, _policy(session), timezone.now().date())
    if refused is not None:
        return PassUse(approved=False, code=refused.code, message=refused.message)
    # Only what this tenant asked: its limit and the proof's age in buckets (docs/age-pass.md, linking).
    proof_days = (timezone.now().date() - age_pass.proved_on).days
    results = Results(
        age_pass={"method": age_pass.method, "thresholds": [session.age_limit], "proof_age": ProofAge.of(proof_days)}
    )
    cause = AGE_PASS_CAUSE
    try:
        with transaction.atomic():
            session_transition(
                session_id=session.id,
                to=Status.PROCESSING,
                expected_from=(Status.INITIATED, Status.REQUIRES_DOC),
                cause=cause,
            )
            session_transition(
                session_id=session.id,
                to=Status.APPROVED,
                reason=Reason.AGE_PASS,
                expected_from=(Status.PROCESSING,),
                cause=cause,
                results=results,
            )
    except TransitionNotAllowed:
        return PassUse(approved=False, code="session_moved_on", message=MESSAGE_CHALLENGE_USED)
    return PassUse(approved=True)


# --- the user's own page: show and delete a pass with the passkey itself ---


def age_pass_manage(*, credential, delete: bool) -> AgePass | None:
    """The pass the passkey opens (deleted when `delete`); AgePassRefused if the answer proves nothing."""
    age_pass = _verified_pass(credential=credential, purpose=Purpose.MANAGE)
    if delete:
        AgePass.objects.filter(pk=age_pass.pk).delete()
        return None
    return age_pass


# --- operators and tenants ---


def age_passes_revoke(*, method: str) -> int:
    """Withdraw every pass proved by `method` (a method found wanting); the number revoked."""
    if method not in Method.values:
        raise ValueError(f"unknown method {method!r}; one of {', '.join(Method.values)}")
    return AgePass.objects.filter(method=method, revoked_at__isnull=True).update(revoked_at=timezone.now())


def age_passes_purge(*, today: date | None = None) -> int:
    """Delete expired passes, spent challenges and rights to save (the retention purge); the number of passes
    deleted. A right is of no use a day after it was issued: its approval comes within minutes."""
    today = today or timezone.now().date()
    deleted, _ = AgePass.objects.filter(expires_on__lte=today).delete()
    AgePassChallenge.objects.filter(expires_at__lt=timezone.now() - timedelta(days=1)).delete()
    AgePassSaveRight.objects.filter(issued_at__lt=timezone.now() - timedelta(days=1)).delete()
    return deleted
