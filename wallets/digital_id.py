"""The digital-ID step: single-use presentation requests, and the decision on a wallet's answer.

A request is created when the page loads (random nonce, ephemeral key, the service's own origin, the
doc types the operator trusts, five minutes of life) and consumed atomically by the one answer that
names it; its key material is wiped at that moment. The answer is verified offline by
`checks.digital_id`; nothing of the presentation is stored, only the outcome the session shows as
`ageCredential`. A user who declines in the wallet sends nothing and loses nothing; an answer that
proves nothing counts one of MAX_DIGITAL_ID_ATTEMPTS, after which the step is no longer offered
(the selfie and document paths stay open).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Collection
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext_noop

from checks.digital_id.reader import ReaderCertificateRefused
from checks.digital_id.refusals import PresentationRefused
from checks.digital_id.request import (
    PROTOCOL_ANNEX_C,
    REQUEST_LIFETIME_SECONDS,
    WalletRequest,
    browser_request,
    wallet_request_dump,
    wallet_request_load,
    wallet_request_new,
)
from checks.digital_id.sandbox_wallet import sandbox_issuer, wallet_present
from checks.digital_id.signed_request import browser_request_signed
from checks.digital_id.verifier import presentation_verify
from checks.results import AgeCredential
from sessions_api.models import DigitalIdRequest, Mode, Reason, Status, VerificationSession
from sessions_api.state_machine import Results, TransitionNotAllowed, session_transition

from .reader_certificate import ReaderNotConfigured, reader_certificate_status, reader_client_id, reader_identity
from .trust_anchors import trust_anchors_for, trusted_doc_types

logger = logging.getLogger(__name__)

MAX_DIGITAL_ID_ATTEMPTS = 3
OFFERED_IN = (Status.INITIATED, Status.REQUIRES_DOC)
DIGITAL_ID_CAUSE_PREFIX = "digital ID: "  # the history's cause of a wallet answer (the dashboard's attempts read it)
KIND_MDOC = "mdoc"
OFFERED = "offered"  # the request state's list of the protocols the browser was asked for

# In English here, translated where shown (flow/digital_id.py); %(age_limit)s is filled in after translation.
MESSAGE_NOT_VERIFIED = gettext_noop("We could not verify this digital ID. You can try again or use another way below.")
MESSAGE_INCONCLUSIVE = gettext_noop(
    "Your digital ID does not show that you are at least %(age_limit)s. Please use another way below."
)
MESSAGE_REQUEST_GONE = gettext_noop("This request has expired. Please try again.")


class DigitalIdUnavailable(Exception):
    """The step is not offered for this session (tenant setting, status, attempts, or no trusted issuer)."""


@dataclass(frozen=True)
class DigitalIdOutcome:
    status: str  # the session's status afterwards
    message: str = ""  # for the user, when the session is still open
    refusal: str = ""  # the verifier's refusal code, when the answer proved nothing


def service_origin() -> str:
    """The origin the browser reports to the wallet: the hosted flow's own, from PUBLIC_BASE_URL."""
    parts = urlsplit(settings.PUBLIC_BASE_URL)
    return f"{parts.scheme}://{parts.netloc}"


def _answerable(session: VerificationSession) -> bool:
    """The step takes an answer (to a request made while it could be signed, whatever the certificate now)."""
    return (
        session.tenant.digital_id_enabled
        and session.status in OFFERED_IN
        and session.digital_id_attempts < MAX_DIGITAL_ID_ATTEMPTS
        and bool(trusted_doc_types(live=session.mode == Mode.LIVE))
    )


def digital_id_offered(session: VerificationSession) -> bool:
    """The step is shown: it takes answers, and a new request can be signed (or go unsigned, for a tenant testing)."""
    return _answerable(session) and (
        session.tenant.digital_id_unsigned_requests or reader_certificate_status().can_sign
    )


def _browser_request(session: VerificationSession, request: WalletRequest) -> dict:
    """Signed with the reader certificate when it can sign; unsigned only for a tenant testing without one."""
    unsigned = session.tenant.digital_id_unsigned_requests
    try:
        identity = reader_identity()
        return browser_request_signed(
            request,
            identity=identity,
            client_id=reader_client_id(identity),
            now=timezone.now(),
            unsigned_too=unsigned,
        )
    except (ReaderNotConfigured, ReaderCertificateRefused) as cannot:
        if not unsigned:
            logger.warning("digital ID request for %s not signed: %s", session.id, cannot)
            raise DigitalIdUnavailable(session.id) from None
    return browser_request(request)


def digital_id_request_create(*, session: VerificationSession) -> tuple[str, dict]:
    """A new single-use request for this session (any earlier one is dropped): its id and the browser's argument."""
    if not digital_id_offered(session):
        raise DigitalIdUnavailable(session.id)
    request = wallet_request_new(
        origin=service_origin(),
        doc_types=trusted_doc_types(live=session.mode == Mode.LIVE),
        age_limit=session.age_limit,
    )
    digital = _browser_request(session, request)
    request_id = "dcr_" + secrets.token_urlsafe(24)
    with transaction.atomic():
        # The session's earlier request goes, and so does every request past its time, key and all.
        DigitalIdRequest.objects.filter(Q(session=session) | Q(expires_at__lt=timezone.now())).delete()
        DigitalIdRequest.objects.create(
            id=request_id,
            session=session,
            # The protocols asked for, kept beside the request: an answer under any other is refused.
            state={**wallet_request_dump(request), OFFERED: [item["protocol"] for item in digital["requests"]]},
            expires_at=timezone.now() + timedelta(seconds=REQUEST_LIFETIME_SECONDS),
        )
    return request_id, digital


def _request_consume(session: VerificationSession, request_id: str):
    """The request's state, once: the row is claimed and its key wiped in one conditional UPDATE."""
    with transaction.atomic():
        row = (
            DigitalIdRequest.objects.select_for_update()
            .filter(pk=request_id, session=session, consumed_at__isnull=True, expires_at__gt=timezone.now())
            .first()
        )
        if row is None or row.state.get("transport") == "cross_device":  # a phone's is answered at its response URI
            return None
        DigitalIdRequest.objects.filter(pk=row.pk).update(consumed_at=timezone.now(), state={})
    return wallet_request_load(row.state), row.state.get(OFFERED)


def _count_failure(session: VerificationSession, cause: str) -> None:
    logger.info("digital ID for %s not accepted: %s", session.id, cause)
    VerificationSession.objects.filter(pk=session.id).update(digital_id_attempts=F("digital_id_attempts") + 1)


def _result(credential: AgeCredential) -> Results:
    return Results(
        age_credential={
            "kind": KIND_MDOC,
            "doc_type": credential.doc_type,
            "claim": credential.claim or "",
            "value": credential.value,
            "issuer_country": credential.issuer_country or "",
            "trust_source": credential.trust_source,
        }
    )


def _decide(session: VerificationSession, credential: AgeCredential) -> DigitalIdOutcome:
    to, reason = (
        (Status.APPROVED, Reason.DIGITAL_ID)
        if credential.outcome == "over"
        else (Status.DENIED, Reason.UNDERAGE_DIGITAL_ID)
    )
    claim = f"{credential.doc_type} {credential.claim}={credential.value} ({credential.trust_source})"
    cause = DIGITAL_ID_CAUSE_PREFIX + claim
    with transaction.atomic():
        session_transition(session_id=session.id, to=Status.PROCESSING, expected_from=OFFERED_IN, cause=cause)
        decided = session_transition(
            session_id=session.id,
            to=to,
            reason=reason,
            cause=cause,
            expected_from=(Status.PROCESSING,),
            results=_result(credential),
        )
    return DigitalIdOutcome(decided.status)


def digital_id_submit(
    *, session: VerificationSession, request_id: str, protocol: str, data: object
) -> DigitalIdOutcome:
    """Verify a wallet's answer to the session's request and decide, or say why not."""
    if not _answerable(session):
        raise DigitalIdUnavailable(session.id)
    consumed = _request_consume(session, request_id) if isinstance(request_id, str) else None
    if consumed is None:
        return DigitalIdOutcome(session.status, MESSAGE_REQUEST_GONE)
    request, offered = consumed
    return presentation_decide(session=session, request=request, protocol=protocol, data=data, offered=offered)


def presentation_decide(
    *,
    session: VerificationSession,
    request: WalletRequest,
    protocol: str,
    data: object,
    offered: Collection[str] | None = None,
) -> DigitalIdOutcome:
    """Verify an answer to a request already consumed for this session, and decide (the browser's and the phone's)."""
    live = session.mode == Mode.LIVE
    try:
        credential = presentation_verify(
            request=request,
            protocol=protocol,
            data=data,
            anchors=trust_anchors_for(live=live),
            live=live,
            now=timezone.now(),
            offered=offered,
        )
    except PresentationRefused as refused:
        _count_failure(session, refused.code)
        return DigitalIdOutcome(session.status, MESSAGE_NOT_VERIFIED, refused.code)
    if credential.outcome == "inconclusive":
        _count_failure(session, "inconclusive: no age_over element settles the limit")
        return DigitalIdOutcome(session.status, MESSAGE_INCONCLUSIVE, "age_inconclusive")
    try:
        return _decide(session, credential)
    except TransitionNotAllowed:  # decided, cancelled or expired meanwhile: what won stands
        return DigitalIdOutcome(VerificationSession.objects.get(pk=session.id).status)


def sandbox_wallet_answer(*, session: VerificationSession, request_id: str, over: bool) -> dict:
    """The "Test wallet": the built-in test issuer answers the session's open request (sandbox sessions only)."""
    if session.mode != Mode.TEST:
        raise DigitalIdUnavailable(session.id)
    row = DigitalIdRequest.objects.filter(pk=request_id, session=session, consumed_at__isnull=True).first()
    if row is None:
        raise DigitalIdUnavailable(session.id)
    request = wallet_request_load(row.state)
    doc_type = request.doc_types[0]
    data = wallet_present(
        browser_request(request),
        issuer=sandbox_issuer(settings.SECRET_KEY.encode()),
        protocol=PROTOCOL_ANNEX_C,
        origin=request.origin,
        doc_type=doc_type,
        elements={f"age_over_{session.age_limit:02d}": over},
        now=timezone.now(),
    )
    return {"protocol": PROTOCOL_ANNEX_C, "data": data}
