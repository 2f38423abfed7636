"""The digital-ID step on another device: a request by reference for a phone's wallet, and its answer.

The desktop page asks for a cross-device request (`cross_device_request_create`): a single-use request of
the session (nonce, ephemeral key, state) whose link the page shows as a QR code. The wallet fetches the
signed request object once (`cross_device_request_fetch`, within the request's five minutes), then posts
its encrypted answer to the request's own response URI (`cross_device_answer`): the request is consumed
by that one answer, which the same verifier and decision as the browser's answer judge
(`digital_id.presentation_decide`). The desktop page follows the request (`cross_device_progress`) and
moves on when the session is decided. Every refusal before verification has its code
(`RequestUriRefusal`) and the OpenID4VP error the wallet expects.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from checks.digital_id.cross_device import RequestUriRefused, request_object_claims, wallet_link
from checks.digital_id.reader import ReaderCertificateRefused
from checks.digital_id.refusals import RequestUriRefusal
from checks.digital_id.request import (
    PROTOCOL_OPENID4VP_CROSS_DEVICE,
    REQUEST_LIFETIME_SECONDS,
    wallet_request_dump,
    wallet_request_load,
    wallet_request_new,
)
from sessions_api.models import DigitalIdRequest, Mode, VerificationSession

from .digital_id import (
    MESSAGE_REQUEST_GONE,
    DigitalIdUnavailable,
    digital_id_offered,
    presentation_decide,
    service_origin,
)
from .reader_certificate import (
    ReaderNotConfigured,
    reader_certificate_status,
    reader_client_id,
    reader_identity,
    request_object_sign,
)
from .trust_anchors import trusted_doc_types

logger = logging.getLogger(__name__)

READER_UNUSABLE = "reader_certificate_unusable"  # the request cannot be signed now (the operator's to fix)
TRANSPORT = "cross_device"  # marks the request's state: only such a request is fetched and answered by a phone


@dataclass(frozen=True)
class CrossDeviceRequest:
    request_id: str
    link: str  # openid4vp://?client_id=..&request_uri=..&request_uri_method=post
    expires_at: object


@dataclass(frozen=True)
class CrossDeviceProgress:
    # "waiting" (not fetched), "fetched" (a wallet has it), "checking" (its answer is being verified),
    # "answered" (refused: `message` says why), "gone" (expired or replaced)
    state: str
    message: str = ""  # for the user, when an answer did not decide the session


def cross_device_offered(session: VerificationSession) -> bool:
    """A phone may answer: a live session offering the digital ID, and a reader certificate that can sign now."""
    return session.mode == Mode.LIVE and digital_id_offered(session) and reader_certificate_status().can_sign


def _absolute(path: str) -> str:
    return settings.PUBLIC_BASE_URL.rstrip("/") + path


def cross_device_request_create(*, session: VerificationSession) -> CrossDeviceRequest:
    """A new single-use request by reference for this session (any earlier request of it is dropped)."""
    if not cross_device_offered(session):
        raise DigitalIdUnavailable(session.id)
    request_id = "dcr_" + secrets.token_urlsafe(24)
    client_id = reader_client_id(reader_identity())
    request = wallet_request_new(
        origin=service_origin(),
        doc_types=trusted_doc_types(live=session.mode == Mode.LIVE),
        age_limit=session.age_limit,
        client_id=client_id,
        response_uri=_absolute(reverse("wallet-response", args=[request_id])),
    )
    expires_at = timezone.now() + timedelta(seconds=REQUEST_LIFETIME_SECONDS)
    with transaction.atomic():
        DigitalIdRequest.objects.filter(Q(session=session) | Q(expires_at__lt=timezone.now())).delete()
        DigitalIdRequest.objects.create(
            id=request_id,
            session=session,
            state={**wallet_request_dump(request), "transport": TRANSPORT, "fetched": False},
            expires_at=expires_at,
        )
    link = wallet_link(client_id=client_id, request_uri=_absolute(reverse("wallet-request", args=[request_id])))
    return CrossDeviceRequest(request_id, link, expires_at)


def _locked_row(request_id: str) -> DigitalIdRequest:
    row = DigitalIdRequest.objects.select_for_update().filter(pk=request_id).first()
    if row is None or row.state.get("transport") != TRANSPORT:
        raise RequestUriRefused(RequestUriRefusal.UNKNOWN)
    return row


def cross_device_request_fetch(*, request_id: str, wallet_nonce: str | None) -> str:
    """The signed request object, once: a second fetch, or one after the request's time, is refused."""
    now = timezone.now()
    with transaction.atomic():
        row = _locked_row(request_id)
        if row.consumed_at is not None or row.state.get("fetched"):
            raise RequestUriRefused(RequestUriRefusal.USED)
        if row.expires_at <= now:
            raise RequestUriRefused(RequestUriRefusal.EXPIRED)
        DigitalIdRequest.objects.filter(pk=row.pk).update(state={**row.state, "fetched": True})
    request = wallet_request_load(row.state)
    claims = request_object_claims(request, now=now, wallet_nonce=wallet_nonce)
    try:
        client_id, signed = request_object_sign(claims, now=now)
    except (ReaderCertificateRefused, ReaderNotConfigured) as cannot:  # expired or removed since the code was shown
        logger.warning("cross-device request %s not signed: %s", request_id, cannot)
        raise RequestUriRefused(READER_UNUSABLE, error="temporarily_unavailable", status=503) from None
    if client_id != request.client_id:  # the chain was replaced since the code was shown: its link names another
        raise RequestUriRefused(RequestUriRefusal.EXPIRED)
    return signed


def _consume(request_id: str):
    """The request and its session, once: claimed and its key wiped, or refused with why not."""
    with transaction.atomic():
        row = _locked_row(request_id)
        if row.consumed_at is not None:
            raise RequestUriRefused(RequestUriRefusal.REPLAYED)
        if row.expires_at <= timezone.now():
            raise RequestUriRefused(RequestUriRefusal.EXPIRED)
        if not row.state.get("fetched"):
            raise RequestUriRefused(RequestUriRefusal.NOT_FETCHED)
        DigitalIdRequest.objects.filter(pk=row.pk).update(
            consumed_at=timezone.now(), state={"transport": TRANSPORT, "answered": True}
        )
    return wallet_request_load(row.state), row.session_id


def cross_device_answer(*, request_id: str, data: dict) -> str:
    """Judge a wallet's direct_post.jwt answer to the request; the session's status afterwards, or refused."""
    request, session_id = _consume(request_id)
    session = VerificationSession.objects.select_related("tenant").get(pk=session_id)
    if not digital_id_offered(session):
        _answered_without_decision(request_id, MESSAGE_REQUEST_GONE)
        raise RequestUriRefused(RequestUriRefusal.NOT_OFFERED)
    outcome = presentation_decide(session=session, request=request, protocol=PROTOCOL_OPENID4VP_CROSS_DEVICE, data=data)
    if outcome.message:
        _answered_without_decision(request_id, outcome.message)
        raise RequestUriRefused(outcome.refusal or "presentation_refused")
    return outcome.status


def _answered_without_decision(request_id: str, message: str) -> None:
    """What the desktop page then says (cross_device_progress), in its own language; until then it waits."""
    DigitalIdRequest.objects.filter(pk=request_id).update(
        state={"transport": TRANSPORT, "answered": True, "message": message}
    )


def cross_device_progress(*, session: VerificationSession, request_id: str) -> CrossDeviceProgress:
    """How far the session's cross-device request has come, for the desktop page that shows its code."""
    row = DigitalIdRequest.objects.filter(pk=request_id, session=session).first()
    if row is None or row.state.get("transport") != TRANSPORT:
        return CrossDeviceProgress("gone")
    if row.consumed_at is not None:
        # Answered: refused (with what to say), or still being verified and decided (the page keeps asking).
        message = row.state.get("message", "")
        return CrossDeviceProgress("answered", message) if message else CrossDeviceProgress("checking")
    if row.expires_at <= timezone.now():
        return CrossDeviceProgress("gone")
    return CrossDeviceProgress("fetched" if row.state.get("fetched") else "waiting")
