"""The cross-device request (OpenID4VP 1.0 by reference): the wallet link, the request object's claims, the answer.

A desktop without the Digital Credentials API shows a QR code of `openid4vp://?client_id=..&request_uri=..
&request_uri_method=post`; the phone's wallet fetches the signed request object there (once), and posts its
answer as `direct_post.jwt` (a JWE to the request's ephemeral key, holding `vp_token` and `state`) to the
request's own `response_uri`. The presentation is then verified like any other (verifier.py), with the
OpenID4VP handover as its session transcript (transcript.py).
"""

from __future__ import annotations

import datetime
from urllib.parse import parse_qsl, urlencode

from .envelope import MAX_TEXT
from .refusals import RequestUriRefusal
from .request import REQUEST_LIFETIME_SECONDS, WalletRequest, _openid4vp_data

WALLET_SCHEME = "openid4vp://"
REQUEST_OBJECT_MEDIA_TYPE = "application/oauth-authz-req+jwt"
RESPONSE_MODE = "direct_post.jwt"
REQUEST_URI_METHOD = "post"  # so the wallet may send its nonce and metadata (OpenID4VP 1.0, 5.10)
AUDIENCE = "https://self-issued.me/v2"  # a request object's `aud` for a wallet whose issuer is not known (5.8)
MAX_WALLET_NONCE = 128
MAX_WALLET_BODY = 16 * 1024  # wallet_metadata and wallet_nonce, form-encoded
MAX_RESPONSE_BODY = MAX_TEXT + 1024  # `response=<JWE>`, form-encoded


class RequestUriRefused(Exception):
    """The wallet's fetch or post is refused; `code` is ours, `error` the OpenID4VP error code the wallet reads."""

    def __init__(self, code: str, error: str = "invalid_request", status: int = 400):
        super().__init__(code)
        self.code = code
        self.error = error
        self.status = status


def wallet_link(*, client_id: str, request_uri: str) -> str:
    """The link a QR code carries, and a phone's browser opens in its wallet (same device)."""
    query = urlencode({"client_id": client_id, "request_uri": request_uri, "request_uri_method": REQUEST_URI_METHOD})
    return f"{WALLET_SCHEME}?{query}"


def request_object_claims(request: WalletRequest, *, now: datetime.datetime, wallet_nonce: str | None) -> dict:
    """What the signed request object says (the client identifier and `iat` are the signer's to add)."""
    asked = _openid4vp_data(request)
    claims = {
        "aud": AUDIENCE,
        "response_type": "vp_token",
        "response_mode": RESPONSE_MODE,
        "response_uri": request.response_uri,
        "nonce": request.nonce_text,
        "state": request.state,
        "dcql_query": asked["dcql_query"],
        "client_metadata": asked["client_metadata"],
        "exp": int(now.timestamp()) + REQUEST_LIFETIME_SECONDS,
    }
    if wallet_nonce is not None:
        claims["wallet_nonce"] = wallet_nonce
    return claims


def wallet_nonce_read(body: bytes) -> str | None:
    """The `wallet_nonce` of a request-URI POST (form-encoded, capped), or None; refused if malformed."""
    if len(body) > MAX_WALLET_BODY:
        raise RequestUriRefused(RequestUriRefusal.MALFORMED, status=413)
    try:
        fields = parse_qsl(body.decode("ascii"), keep_blank_values=True, strict_parsing=bool(body))
    except (UnicodeDecodeError, ValueError):
        raise RequestUriRefused(RequestUriRefusal.MALFORMED) from None
    nonces = [value for name, value in fields if name == "wallet_nonce"]
    if len(nonces) > 1 or (nonces and not 0 < len(nonces[0]) <= MAX_WALLET_NONCE):
        raise RequestUriRefused(RequestUriRefusal.MALFORMED)
    return nonces[0] if nonces else None


def direct_post_read(body: bytes) -> dict:
    """The `response` of a direct_post.jwt body as the verifier takes it: {"response": "<compact JWE>"}."""
    if len(body) > MAX_RESPONSE_BODY:
        raise RequestUriRefused(RequestUriRefusal.MALFORMED, status=413)
    try:
        fields = parse_qsl(body.decode("ascii"), keep_blank_values=True, strict_parsing=True)
    except (UnicodeDecodeError, ValueError):
        raise RequestUriRefused(RequestUriRefusal.MALFORMED) from None
    responses = [value for name, value in fields if name == "response"]
    if len(responses) != 1:
        raise RequestUriRefused(RequestUriRefusal.MALFORMED)
    return {"response": responses[0]}
