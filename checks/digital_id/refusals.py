"""Why a wallet presentation was refused: one code per verification step, fail-closed."""

from __future__ import annotations


class Refusal:
    """The codes, in the order the verifier meets them."""

    PROTOCOL_NOT_REQUESTED = "protocol_not_requested"
    TOO_LARGE = "presentation_too_large"  # a size, nesting or count cap on decoded data
    ENVELOPE_MALFORMED = "envelope_malformed"
    NOT_FOR_THIS_REQUEST = "envelope_not_for_this_request"  # does not decrypt under this request's key
    RESPONSE_MALFORMED = "device_response_malformed"
    DOCUMENT_COUNT = "document_count"  # not exactly one document
    DOC_TYPE_NOT_ALLOWED = "doc_type_not_allowed"
    ISSUER_AUTH_MALFORMED = "issuer_auth_malformed"
    ISSUER_ALGORITHM = "issuer_algorithm_not_allowed"
    ISSUER_CHAIN_MISSING = "issuer_chain_missing"
    ISSUER_UNTRUSTED = "issuer_untrusted"
    SANDBOX_ISSUER_ON_LIVE = "sandbox_issuer_on_live_session"
    ISSUER_CERTIFICATE_INVALID = "issuer_certificate_invalid"
    ISSUER_SIGNATURE_INVALID = "issuer_signature_invalid"
    MSO_MALFORMED = "mso_malformed"
    MSO_DOC_TYPE_MISMATCH = "mso_doc_type_mismatch"
    DIGEST_ALGORITHM = "digest_algorithm_not_allowed"
    MSO_NOT_YET_VALID = "mso_not_yet_valid"
    MSO_EXPIRED = "mso_expired"
    ITEM_DIGEST_MISMATCH = "item_digest_mismatch"
    DEVICE_AUTH_MISSING = "device_auth_missing"
    DEVICE_MAC_UNSUPPORTED = "device_mac_unsupported"
    DEVICE_SIGNATURE_INVALID = "device_signature_invalid"


class RequestUriRefusal:
    """Why a cross-device request URI or response URI was refused before any presentation was verified."""

    UNKNOWN = "request_uri_unknown"  # no such request, or not a cross-device one
    EXPIRED = "request_uri_expired"
    USED = "request_uri_used"  # the signed request was already fetched once
    NOT_FETCHED = "request_not_fetched"  # an answer to a request no wallet has fetched
    REPLAYED = "response_replayed"  # a second answer to a request already answered
    NOT_OFFERED = "digital_id_not_offered"  # the session was decided, or ran out of tries, meanwhile
    MALFORMED = "response_body_malformed"  # not a form with one `response` of bounded size


class PresentationRefused(Exception):
    """The presentation proves nothing; `code` names the step that refused it."""

    def __init__(self, code: str, detail: str = ""):
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code
        self.detail = detail
