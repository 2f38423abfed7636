"""AgeVerify's Python partner client.

from ageverify_client import AgeVerify
av = AgeVerify("av_live_...", base_url="https://verify.example.com", webhook_secret="whsec_...")
created = av.sessions.create(subject="user-42", age_limit=18, callback_url=..., cancel_url=...)
result = av.sessions.wait(created.session_id)
"""

from .client import AgeVerify, Sandbox, Sessions, Webhooks, __version__
from .errors import (
    AgeVerifyError,
    ApiConnectionError,
    ApiError,
    AuthenticationError,
    BadRequestError,
    ConfirmationError,
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    UnprocessableError,
    WaitTimeout,
    WebhookVerificationError,
)
from .models import (
    FINAL_STATUSES,
    AgeCredential,
    AgeEstimation,
    AgePass,
    CreatedSession,
    CredentialIssuer,
    HolderMatch,
    Liveness,
    Session,
    SessionPage,
    SessionResult,
    Status,
    ValidateDoc,
)
from .webhooks import WebhookEvent, WebhookEventData, WebhookVerifier

__all__ = [
    "AgeCredential",
    "AgePass",
    "AgeEstimation",
    "AgeVerify",
    "AgeVerifyError",
    "ApiConnectionError",
    "ApiError",
    "AuthenticationError",
    "BadRequestError",
    "ConfirmationError",
    "ConflictError",
    "CreatedSession",
    "CredentialIssuer",
    "FINAL_STATUSES",
    "HolderMatch",
    "Liveness",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitError",
    "Sandbox",
    "ServerError",
    "Session",
    "SessionPage",
    "SessionResult",
    "Sessions",
    "Status",
    "UnprocessableError",
    "ValidateDoc",
    "WaitTimeout",
    "WebhookEvent",
    "WebhookEventData",
    "WebhookVerificationError",
    "WebhookVerifier",
    "Webhooks",
    "__version__",
]
