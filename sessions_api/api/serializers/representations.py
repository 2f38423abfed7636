"""The answers' bodies built by hand (a session, a created session, a read), as declared in outputs.py.

DRF's per-field machinery was a large share of a read's time. The output serializers are the one
declaration of the answers' fields (the OpenAPI document is generated from them), and the tests hold
every answer to that document, no field more or less (tests/support/openapi.py).
"""

from ...client_access import client_secret_for
from ...flow_link import flow_signature_for, verification_url
from ...models import VerificationSession
from ...timestamps import iso_ms


def _related_or_none(session, name: str):
    try:
        return getattr(session, name)
    except VerificationSession._meta.get_field(name).related_model.DoesNotExist:
        return None


def session_representation(session) -> dict:
    """The `session` object; `session` is a VerificationSession or a selectors.SessionRead."""
    created_at = iso_ms(session.created_at)
    return {
        "sessionId": session.id,
        "status": session.status,
        "subject": session.subject,
        "ageLimit": session.age_limit,
        "mode": session.mode,
        "reason": session.reason or None,
        "expiresAt": iso_ms(session.expires_at),
        "callbackUrl": session.callback_url or None,
        "cancelUrl": session.cancel_url or None,
        "notificationUrl": session.notification_url or None,
        "createdAt": created_at,
        "updatedAt": created_at if session.updated_at == session.created_at else iso_ms(session.updated_at),
        "metadata": session.metadata or {},
        "redactedAt": iso_ms(session.redacted_at) if session.redacted_at else None,
    }


def session_created_representation(session, token: str) -> dict:
    """At creation only: the session plus the flow token, its signature and the hosted flow's link.

    `session` is a VerificationSession or the new row's services.SessionRow.
    """
    representation = session_representation(session)
    signature = flow_signature_for(session, token, representation["expiresAt"])
    return {
        **representation,
        "sessionToken": token,
        "signature": signature,
        "verificationUrl": verification_url(session, token, signature),
        "clientSecret": client_secret_for(session, token),
    }


def session_read_representation(session) -> dict:
    """The answer of GET /v1/sessions/{id}; `session` is a VerificationSession or a selectors.SessionRead."""
    age = _related_or_none(session, "age_estimation")
    liveness = _related_or_none(session, "liveness")
    document = _related_or_none(session, "document")
    credential = _related_or_none(session, "age_credential")
    age_pass = _related_or_none(session, "age_pass")
    return {
        "session": session_representation(session),
        "ageEstimation": None
        if age is None
        else {
            "ageLimit": session.age_limit,
            "estimatedAge": round(age.estimated_age, 1),
            "ageConfidence": round(age.age_confidence, 3),
        },
        "liveness": None
        if liveness is None
        else {
            "isLive": liveness.is_live,
            "livenessScore": round(liveness.liveness_score, 3),
            "signals": list(liveness.signals or []),
        },
        # isoformat() pads the year to four digits, which strftime("%Y") does not on Linux.
        "validateDoc": None
        if document is None
        else {
            "trueAge": document.true_age,
            "birthdate": f"{document.birthdate.isoformat()}T00:00:00.000Z",
            "holderMatch": None
            if document.holder_match_score is None
            else {
                "score": round(document.holder_match_score, 3),
                "passed": bool(document.holder_match_passed),
            },
            "livenessChecked": document.liveness_checked,
        },
        "ageCredential": None
        if credential is None
        else {
            "kind": credential.kind,
            "docType": credential.doc_type,
            "claim": credential.claim,
            "value": credential.value,
            "ageLimit": session.age_limit,
            "issuer": {"country": credential.issuer_country or None, "trustSource": credential.trust_source},
            "verifiedAt": iso_ms(credential.created_at),
        },
        "agePass": None
        if age_pass is None
        else {
            "method": age_pass.method,
            "thresholds": list(age_pass.thresholds),
            "proofAge": age_pass.proof_age,
        },
    }
