"""The statement's section on the digital-ID path: what is verified and what is kept, from the code's own limits."""

from __future__ import annotations

from checks.digital_id.cbor import MAX_BYTES as MAX_CBOR_BYTES
from checks.digital_id.cbor import MAX_DEPTH as MAX_CBOR_DEPTH
from checks.digital_id.cbor import MAX_ITEMS as MAX_CBOR_ITEMS
from checks.digital_id.mso import CLOCK_SKEW
from checks.digital_id.request import REQUEST_LIFETIME_SECONDS
from wallets.digital_id import MAX_DIGITAL_ID_ATTEMPTS

CLOCK_SKEW_MINUTES = int(CLOCK_SKEW.total_seconds() // 60)


def digital_id_lines() -> list[str]:
    """The practice statement's section on the digital-ID path (no data: it states what is verified and kept)."""
    return [
        "## Digital ID: an age proof from a wallet credential",
        "",
        "Where a tenant enables it, the user may instead present a wallet credential through the browser's "
        "Digital Credentials API: the EU age verification attestation (`eu.europa.ec.av.1`, `age_over_18`) or a "
        "mobile driving licence (`org.iso.18013.5.1.mDL`, `age_over_NN`), requested with OpenID4VP "
        "(`dc_api.jwt`) and ISO/IEC 18013-7 Annex C. No picture is taken and no model runs. It is verified "
        "offline by the service's own code (`checks/digital_id`), which refuses at the first failed step:",
        "",
        f"1. A single-use request: 32 random bytes of nonce, an ephemeral P-256 key, the service's own origin, "
        f"the doc types some trust anchor vouches for, {REQUEST_LIFETIME_SECONDS // 60} minutes of life; the "
        "first answer consumes it and its key is wiped.",
        "2. The answer decrypts under that request's key (HPKE or JWE ECDH-ES); the session transcript "
        "(nonce, origin, key) is rebuilt from the service's state only, never read from the answer.",
        "3. Exactly one document, of a requested doc type; the issuer's signature (ECDSA with a pinned "
        "algorithm) by a document signer certificate (mdoc key usage, in its validity) that an IACA root "
        "configured for that doc type issued. Test issuers' roots never approve a live session.",
        f"4. The signed Mobile Security Object: its doc type, digest algorithm and validity (with {CLOCK_SKEW_MINUTES} "
        "minutes of clock skew); every returned element hashed against its signed digest.",
        "5. The holder's device signature over this request's transcript with the device key the issuer "
        "signed (a response relayed from another site, or replayed into another request, fails here or at "
        "step 2). MAC-based device authentication is refused.",
        "6. Age: `age_over_M` true with M at or above the limit approves (`digital_id`); false with M at or "
        "below the limit denies (`underage_digital_id`); anything else proves nothing and the user continues "
        "with the selfie or the document.",
        "",
        f"Every decoded structure is capped (size {MAX_CBOR_BYTES // 1024} KiB, nesting depth {MAX_CBOR_DEPTH}, "
        f"{MAX_CBOR_ITEMS} items). An answer that proves nothing costs one of {MAX_DIGITAL_ID_ATTEMPTS} tries; "
        "after that the option is withdrawn for the session. Declining in the wallet costs nothing.",
        "",
        "What it does not establish: that the person holding the phone is the credential's holder beyond "
        "the wallet's own device unlock, and nothing about a credential's revocation (no status list is "
        "checked; the attestation's short validity is what limits it). Accuracy is that of the issuer's "
        "record: there is no estimate, so the face path's bounds above do not apply.",
        "",
        "Stored: the outcome (the claim, e.g. `age_over_18`, and its boolean), the doc type, the issuer's "
        "country and the trust source (which configured anchor or list vouched for it), and the time. Never "
        "the presentation, the device key, any other element or a birth date.",
        "",
    ]
