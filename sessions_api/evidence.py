"""What an open live session keeps, sealed, of the half of the holder check that passed (docs/adult-path.md).

CONTRACT 3 keeps only result numbers. The one exception is for the document step's holder check (is the
face in front of the camera the face on the document's portrait?), so that the user re-does only the half
that failed. Under the presence policy (`session_presence_required`) an open session may keep, in
`evidence_seal`:
  * `live_face`: the 128 numbers of dlib's descriptor of the face of a head-turn capture that passed
    liveness and the face's estimated age (checks.face_match reads them together), and its liveness score:
    the selfie's, when the face was not enough for the age limit (the document step then asks for no second
    capture), or the one sent with a document that failed;
  * `document`: what a document that passed its own checks gave (kind, dates) and the 128 numbers and the
    estimated age of its portrait, when the head turns sent with it failed (the retake asks only for the
    head turns).
Never an image. The record is sealed (sessions_api.sealing, bound to the session id); the state machine
erases it in the UPDATE that makes the session final, a holder mismatch erases it (both halves are asked
again), and the retention purge erases any left on a final session.
"""

from __future__ import annotations

import base64
import datetime
import logging
import struct
from dataclasses import dataclass

from .choices import Status
from .models import VerificationSession
from .sealing import SealBroken, seal, unseal

logger = logging.getLogger(__name__)

_SEAL_PURPOSE = b"ageverify session evidence v1"


@dataclass(frozen=True)
class LiveFace:
    """The face of a head-turn capture of this session that passed liveness."""

    descriptor: tuple[float, ...]  # dlib's 128 numbers and the face's age (checks.face_match.FaceDescriptor)
    liveness_score: float


@dataclass(frozen=True)
class KeptDocument:
    """What a document that passed its own checks (check digits, printed dates, expiry) gave, and its portrait."""

    kind: str
    birthdate: datetime.date
    expiry_date: datetime.date | None
    zones_agree: bool | None
    portrait: tuple[float, ...]  # the same of the portrait's face


@dataclass(frozen=True)
class Evidence:
    live_face: LiveFace | None = None
    document: KeptDocument | None = None

    def __bool__(self) -> bool:
        return self.live_face is not None or self.document is not None


def _pack(values: tuple[float, ...]) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode("ascii")


def _unpack(text: str) -> tuple[float, ...]:
    raw = base64.b64decode(text)
    return struct.unpack(f"<{len(raw) // 4}f", raw)


def _date(text: str | None) -> datetime.date | None:
    return datetime.date.fromisoformat(text) if text else None


def _dump(evidence: Evidence) -> dict:
    record = {}
    if evidence.live_face is not None:
        face = evidence.live_face
        record["live_face"] = {"descriptor": _pack(face.descriptor), "liveness_score": face.liveness_score}
    if evidence.document is not None:
        document = evidence.document
        record["document"] = {
            "kind": document.kind,
            "birthdate": document.birthdate.isoformat(),
            "expiry_date": document.expiry_date.isoformat() if document.expiry_date else None,
            "zones_agree": document.zones_agree,
            "portrait": _pack(document.portrait),
        }
    return record


def _load(record: dict) -> Evidence:
    face, document = record.get("live_face"), record.get("document")
    return Evidence(
        live_face=LiveFace(_unpack(face["descriptor"]), float(face["liveness_score"])) if face else None,
        document=KeptDocument(
            kind=document["kind"],
            birthdate=_date(document["birthdate"]),
            expiry_date=_date(document["expiry_date"]),
            zones_agree=document["zones_agree"],
            portrait=_unpack(document["portrait"]),
        )
        if document
        else None,
    )


def _bound_to(session_id: str) -> bytes:
    return session_id.encode()


def session_evidence(session: VerificationSession) -> Evidence:
    """What the session keeps now (read from the database, not from the instance); empty when nothing."""
    sealed = VerificationSession.objects.filter(pk=session.pk).values_list("evidence_seal", flat=True).first()
    if not sealed:
        return Evidence()
    try:
        return _load(unseal(sealed, purpose=_SEAL_PURPOSE, bound_to=_bound_to(session.pk)))
    except SealBroken:  # SECRET_KEY changed since: as if nothing were kept, the user re-does both halves
        logger.warning("the evidence kept on %s cannot be opened; it is ignored", session.pk)
        return Evidence()


def evidence_keep(*, session_id: str, evidence: Evidence) -> None:
    """Replace what an open session keeps (nothing, when `evidence` is empty); a final session keeps nothing."""
    sealed = seal(_dump(evidence), purpose=_SEAL_PURPOSE, bound_to=_bound_to(session_id)) if evidence else ""
    VerificationSession.objects.filter(pk=session_id, status__in=(Status.INITIATED, Status.REQUIRES_DOC)).update(
        evidence_seal=sealed
    )


def final_sessions_evidence_erase() -> int:
    """Erase any evidence a final session still holds (the state machine erases it on the way; this is the sweep)."""
    return (
        VerificationSession.objects.filter(status__in=(Status.APPROVED, Status.DENIED))
        .exclude(evidence_seal="")
        .update(evidence_seal="")
    )
