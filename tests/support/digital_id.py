"""A trusted test issuer's wallet answering the flow's digital-ID request, as a phone's wallet would."""

import json
from urllib.parse import urlsplit

from django.conf import settings
from django.utils import timezone

from checks.digital_id.request import PROTOCOL_ANNEX_C
from checks.digital_id.sandbox_wallet import issuer_create, wallet_present
from checks.digital_id.trust import EU_AGE_ATTESTATION
from wallets.trust_anchors import trust_anchors_replace


def trusted_issuer():
    """A live (not sandbox) issuer of age attestations, trusted from now on."""
    issuer = issuer_create(name="Utopia AV issuer", country="UT")
    trust_anchors_replace(source="pem:utopia", issuers=[(issuer.root, [EU_AGE_ATTESTATION])], sandbox=False)
    return issuer


def wallet_answer(visitor, issuer, *, over: bool = True):
    """Ask for a request at the digital-ID step, answer it with the issuer's attestation; (status, JSON)."""
    asked = visitor.client.post("/flow/digital-id/request", "{}", content_type="application/json").json()
    parts = urlsplit(settings.PUBLIC_BASE_URL)
    data = wallet_present(
        asked["digital"],
        issuer=issuer,
        protocol=PROTOCOL_ANNEX_C,
        origin=f"{parts.scheme}://{parts.netloc}",
        doc_type=EU_AGE_ATTESTATION,
        elements={"age_over_18": over},
        now=timezone.now(),
    )
    body = {"requestId": asked["requestId"], "protocol": PROTOCOL_ANNEX_C, "data": data}
    response = visitor.client.post("/flow/digital-id/response", json.dumps(body), content_type="application/json")
    return response.status_code, response.json()
