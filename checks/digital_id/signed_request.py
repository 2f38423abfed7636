"""The Digital Credentials API request signed with the operator's reader certificate (reader.py).

OpenID4VP 1.0 Appendix A.3.2 (`openid4vp-v1-signed`): the `request` parameter carries the signed request
object, with the response key, nonce and DCQL query of the unsigned variant plus `client_id` and
`expected_origins` (the flow's origin: a wallet refuses the request on any other page). ISO 18013-7
Annex C (`org-iso-mdoc`): each doc request carries `readerAuth` over the Annex C session transcript.
The answer to either is the unsigned variant's: same envelope, same session transcript.
"""

from __future__ import annotations

import datetime

from .reader import ReaderIdentity, reader_auth_sign, request_object_sign
from .request import PROTOCOL_ANNEX_C, PROTOCOL_OPENID4VP, WalletRequest, _annex_c_data, _openid4vp_data
from .transcript import session_transcript

PROTOCOL_OPENID4VP_SIGNED = "openid4vp-v1-signed"
# OpenID4VP 1.0 5.8: the audience of a request object sent without the wallet's metadata.
STATIC_AUDIENCE = "https://self-issued.me/v2"


def browser_request_signed(
    request: WalletRequest,
    *,
    identity: ReaderIdentity,
    client_id: str,
    now: datetime.datetime,
    unsigned_too: bool = False,
) -> dict:
    """The `digital` member of `navigator.credentials.get`: signed OpenID4VP and Annex C with readerAuth.

    `unsigned_too` adds the unsigned OpenID4VP variant (a tenant testing with wallets that take it)."""
    claims = {**_openid4vp_data(request), "expected_origins": [request.origin], "aud": STATIC_AUDIENCE}
    jar = request_object_sign(claims, identity=identity, client_id=client_id, now=now)
    transcript = session_transcript(request, PROTOCOL_ANNEX_C)

    def reader_auth(items_bytes: bytes) -> list:
        return reader_auth_sign(
            identity=identity, session_transcript=transcript, items_request_bytes=items_bytes, now=now
        )

    requests = [{"protocol": PROTOCOL_OPENID4VP_SIGNED, "data": {"request": jar}}]
    if unsigned_too:
        requests.append({"protocol": PROTOCOL_OPENID4VP, "data": _openid4vp_data(request)})
    requests.append({"protocol": PROTOCOL_ANNEX_C, "data": _annex_c_data(request, reader_auth)})
    return {"requests": requests}
