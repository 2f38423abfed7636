"""Typed views of the API's JSON objects.

Every object keeps the JSON it was read from (`raw`) and the members this version of the client does
not know (`extra`), so a field the service adds later is never lost: read it from `extra` until the
client grows an attribute for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar, TypeVar

__all__ = [
    "AgeCredential",
    "AgeEstimation",
    "CreatedSession",
    "CredentialIssuer",
    "FINAL_STATUSES",
    "HolderMatch",
    "Liveness",
    "Session",
    "SessionPage",
    "SessionResult",
    "Status",
    "ValidateDoc",
]


class Status:
    """The session statuses the service documents (plain strings, so an unknown future one still reads)."""

    INITIATED = "initiated"
    PROCESSING = "processing"
    REQUIRES_DOC = "requires_doc"
    APPROVED = "approved"
    DENIED = "denied"


FINAL_STATUSES = frozenset({Status.APPROVED, Status.DENIED})


def parse_timestamp(value: Any) -> datetime | None:
    """`2026-11-22T10:15:30.123Z` as an aware datetime (None stays None)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"not a timestamp: {value!r}")
    text = value[:-1] + "+00:00" if value.endswith("Z") else value
    return datetime.fromisoformat(text)


def _split(data: Mapping[str, Any], known: tuple[str, ...]) -> dict[str, Any]:
    return {name: value for name, value in data.items() if name not in known}


def _object(data: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise ValueError(f"{what} is not a JSON object: {data!r}")
    return data


_SESSION_FIELDS = (
    "sessionId",
    "status",
    "subject",
    "ageLimit",
    "mode",
    "reason",
    "expiresAt",
    "callbackUrl",
    "cancelUrl",
    "notificationUrl",
    "createdAt",
    "updatedAt",
    "metadata",
    "redactedAt",
)
_CREATED_FIELDS = ("sessionToken", "signature", "verificationUrl", "clientSecret")


@dataclass(frozen=True)
class Session:
    """The `session` object of the API (`GET` and `POST /v1/sessions`)."""

    session_id: str
    status: str
    subject: str | None
    age_limit: int | None
    mode: str | None
    reason: str | None
    expires_at: datetime | None
    callback_url: str | None
    cancel_url: str | None
    notification_url: str | None
    created_at: datetime | None
    updated_at: datetime | None
    metadata: dict[str, str] = field(default_factory=dict)
    redacted_at: datetime | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def is_final(self) -> bool:
        """True once the session is `approved` or `denied` (final states never change again)."""
        return self.status in FINAL_STATUSES

    @property
    def approved(self) -> bool:
        return self.status == Status.APPROVED

    @classmethod
    def _fields_from(cls, data: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "session_id": data["sessionId"],
            "status": data["status"],
            "subject": data.get("subject"),
            "age_limit": data.get("ageLimit"),
            "mode": data.get("mode"),
            "reason": data.get("reason"),
            "expires_at": parse_timestamp(data.get("expiresAt")),
            "callback_url": data.get("callbackUrl"),
            "cancel_url": data.get("cancelUrl"),
            "notification_url": data.get("notificationUrl"),
            "created_at": parse_timestamp(data.get("createdAt")),
            "updated_at": parse_timestamp(data.get("updatedAt")),
            "metadata": dict(data.get("metadata") or {}),
            "redacted_at": parse_timestamp(data.get("redactedAt")),
            "raw": dict(data),
        }

    @classmethod
    def from_json(cls, data: Any) -> Session:
        data = _object(data, "session")
        return cls(**cls._fields_from(data), extra=_split(data, _SESSION_FIELDS))


@dataclass(frozen=True)
class CreatedSession(Session):
    """The session as `POST /v1/sessions` returns it once: with its flow token and hand-off values.

    `verification_url` is where to send the user (web mode). `client_secret` is the one value a
    browser or app may hold for this session (SDK mode); it is None when the service does not issue
    one. `session_token` and `signature` belong to the partner backend: never send them to a browser.
    """

    # Left out of the printout: a log line of the object must not hand the session to whoever reads it.
    session_token: str | None = field(default=None, repr=False)
    signature: str | None = field(default=None, repr=False)
    verification_url: str | None = field(default=None, repr=False)
    client_secret: str | None = field(default=None, repr=False)

    @classmethod
    def from_json(cls, data: Any) -> CreatedSession:
        data = _object(data, "session")
        return cls(
            **cls._fields_from(data),
            session_token=data.get("sessionToken"),
            signature=data.get("signature"),
            verification_url=data.get("verificationUrl"),
            client_secret=data.get("clientSecret"),
            extra=_split(data, _SESSION_FIELDS + _CREATED_FIELDS),
        )


_Check = TypeVar("_Check", bound="_CheckResult")


class _CheckResult:
    """A check's result object: JSON member -> attribute, read by `from_json` (None stays None)."""

    _MEMBERS: ClassVar[dict[str, str]] = {}
    _TIMESTAMPS: ClassVar[frozenset[str]] = frozenset()
    _NESTED: ClassVar[dict[str, type[_CheckResult]]] = {}

    @classmethod
    def from_json(cls: type[_Check], data: Any) -> _Check | None:
        if data is None:
            return None
        data = _object(data, cls.__name__)
        values = {attribute: data.get(member) for member, attribute in cls._MEMBERS.items()}
        for attribute in cls._TIMESTAMPS:
            values[attribute] = parse_timestamp(values[attribute])
        for attribute, nested in cls._NESTED.items():
            values[attribute] = nested.from_json(values[attribute])
        return cls(**values, extra=_split(data, tuple(cls._MEMBERS)))  # type: ignore[call-arg]


@dataclass(frozen=True)
class AgeEstimation(_CheckResult):
    age_limit: int | None
    estimated_age: float | None
    age_confidence: float | None
    extra: dict[str, Any] = field(default_factory=dict)

    _MEMBERS = {"ageLimit": "age_limit", "estimatedAge": "estimated_age", "ageConfidence": "age_confidence"}


@dataclass(frozen=True)
class Liveness(_CheckResult):
    is_live: bool | None
    liveness_score: float | None
    extra: dict[str, Any] = field(default_factory=dict)

    _MEMBERS = {"isLive": "is_live", "livenessScore": "liveness_score"}


@dataclass(frozen=True)
class HolderMatch(_CheckResult):
    """The live face against the document's portrait: `score` from 0 to 1, `passed` at the service's threshold."""

    score: float | None
    passed: bool | None
    extra: dict[str, Any] = field(default_factory=dict)

    _MEMBERS = {"score": "score", "passed": "passed"}


@dataclass(frozen=True)
class ValidateDoc(_CheckResult):
    """The identity document's result. `liveness_checked` is False when the document was read without a live
    person in front of the camera (the tenant turned the presence policy off): check it before relying on it."""

    true_age: int | None
    birthdate: datetime | None
    holder_match: HolderMatch | None
    liveness_checked: bool | None
    extra: dict[str, Any] = field(default_factory=dict)

    _MEMBERS = {
        "trueAge": "true_age",
        "birthdate": "birthdate",
        "holderMatch": "holder_match",
        "livenessChecked": "liveness_checked",
    }
    _TIMESTAMPS = frozenset({"birthdate"})
    _NESTED = {"holder_match": HolderMatch}


@dataclass(frozen=True)
class CredentialIssuer(_CheckResult):
    country: str | None
    trust_source: str | None
    extra: dict[str, Any] = field(default_factory=dict)

    _MEMBERS = {"country": "country", "trustSource": "trust_source"}


@dataclass(frozen=True)
class AgeCredential(_CheckResult):
    """A digital ID's age proof (a wallet credential): one boolean claim, never a birth date."""

    kind: str | None
    doc_type: str | None
    claim: str | None
    value: bool | None
    age_limit: int | None
    issuer: CredentialIssuer | None
    verified_at: datetime | None
    extra: dict[str, Any] = field(default_factory=dict)

    _MEMBERS = {
        "kind": "kind",
        "docType": "doc_type",
        "claim": "claim",
        "value": "value",
        "ageLimit": "age_limit",
        "issuer": "issuer",
        "verifiedAt": "verified_at",
    }
    _TIMESTAMPS = frozenset({"verified_at"})
    _NESTED = {"issuer": CredentialIssuer}


@dataclass(frozen=True)
class AgePass(_CheckResult):
    """What an age pass the user saved earlier proved (reason `age_pass`): the session's limit and the proof's
    age in buckets ("under_1_month", "under_3_months", "under_1_year", "over_1_year")."""

    method: str | None
    thresholds: list[int] | None
    proof_age: str | None
    extra: dict[str, Any] = field(default_factory=dict)

    _MEMBERS = {"method": "method", "thresholds": "thresholds", "proofAge": "proof_age"}


_RESULT_FIELDS = ("session", "ageEstimation", "liveness", "validateDoc", "ageCredential", "agePass")


@dataclass(frozen=True)
class SessionResult:
    """`GET /v1/sessions/{id}`: the session and the result of each check (None until it has one).

    Result objects the service adds later are in `extra` as JSON.
    """

    session: Session
    age_estimation: AgeEstimation | None
    liveness: Liveness | None
    validate_doc: ValidateDoc | None
    age_credential: AgeCredential | None = None
    age_pass: AgePass | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def session_id(self) -> str:
        return self.session.session_id

    @property
    def status(self) -> str:
        return self.session.status

    @property
    def reason(self) -> str | None:
        return self.session.reason

    @property
    def is_final(self) -> bool:
        return self.session.is_final

    @property
    def approved(self) -> bool:
        return self.session.approved

    @classmethod
    def from_json(cls, data: Any) -> SessionResult:
        data = _object(data, "response")
        return cls(
            session=Session.from_json(data.get("session")),
            age_estimation=AgeEstimation.from_json(data.get("ageEstimation")),
            liveness=Liveness.from_json(data.get("liveness")),
            validate_doc=ValidateDoc.from_json(data.get("validateDoc")),
            age_credential=AgeCredential.from_json(data.get("ageCredential")),
            age_pass=AgePass.from_json(data.get("agePass")),
            extra=_split(data, _RESULT_FIELDS),
            raw=dict(data),
        )


@dataclass(frozen=True)
class SessionPage:
    """One page of `GET /v1/sessions`, newest first; pass `next_cursor` as `cursor` for the next one."""

    data: list[SessionResult]
    has_more: bool
    next_cursor: str | None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Any) -> SessionPage:
        data = _object(data, "page")
        items = data.get("data")
        if not isinstance(items, list):
            raise ValueError(f"page data is not a list: {items!r}")
        return cls(
            [SessionResult.from_json(item) for item in items],
            bool(data.get("hasMore")),
            data.get("nextCursor"),
            _split(data, ("data", "hasMore", "nextCursor")),
        )
