"""The signed link to the hosted flow: `signature` and `verificationUrl` (CONTRACT 1 and 4)."""
import base64
import hashlib
import hmac
from urllib.parse import urlencode

from django.conf import settings

from .models import VerificationSession
from .timestamps import iso_ms


def flow_signature(*, session_id: str, token: str, expires_at: str, tenant_id: str) -> str:
    message = f"{session_id}.{token}.{expires_at}.{tenant_id}".encode()
    digest = hmac.new(settings.FLOW_SIGNING_KEY.encode(), message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def flow_signature_for(session: VerificationSession, token: str) -> str:
    return flow_signature(
        session_id=session.id, token=token, expires_at=iso_ms(session.expires_at), tenant_id=session.tenant_id
    )


def verification_url(session: VerificationSession, token: str) -> str:
    query = urlencode(
        {
            "tenant_id": session.tenant_id,
            "session_id": session.id,
            "token": token,
            "signature": flow_signature_for(session, token),
        }
    )
    return f"{settings.PUBLIC_BASE_URL}/flow/start?{query}"
