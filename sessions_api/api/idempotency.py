"""`Idempotency-Key` on POST (CONTRACT 2): replay the first response for 24 h, per tenant and key mode.

A request that fails is not remembered: its in-progress record is deleted. When it failed because the
database went away, that delete cannot run either; the record's release is then noted in Redis (the
request's transaction is known to have rolled back), and the next request with the key takes it over at
once instead of answering 409 until IDEMPOTENCY_LOCK_TIMEOUT has passed.

The stored response holds the session token and the flow link, which are otherwise kept only as a
hash. It is sealed (sessions_api.sealing: AES-GCM under a key derived from SECRET_KEY), bound to its tenant and key:
a database dump or backup alone does not give anyone a usable flow link. (Re-deriving the token at
replay is impossible by design: it is random and only its hash is stored.)
"""

import hashlib
import json
import logging
from collections.abc import Callable
from decimal import Decimal

import redis
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.response import Response

from core.outages import is_backend_outage
from core.redis_client import redis_request_client
from tenants.models import Tenant

from ..models import IdempotencyRecord
from ..sealing import SealBroken, is_sealed, seal, unseal
from .problems import ApiProblem

HEADER = "Idempotency-Key"
META_KEY = "HTTP_IDEMPOTENCY_KEY"  # the header as request.META holds it: a plain dict lookup on the hot path
REPLAYED_HEADER = "Idempotent-Replayed"
KEY_MAX_LENGTH = 255
_SEAL_PURPOSE = b"ageverify idempotency response v1"
logger = logging.getLogger(__name__)


def _release_mark(record: IdempotencyRecord) -> str:
    # The record's id and claim time: a later claim of the same row (a take-over) is not released by this mark.
    return f"idempotency:released:{record.pk}:{record.created_at.timestamp()}"


def _release(record: IdempotencyRecord) -> None:
    """Free the key of a request that failed: delete its record, or, with the database gone, mark it released."""
    try:
        IdempotencyRecord.objects.filter(pk=record.pk).delete()
        return
    except Exception as error:
        if not is_backend_outage(error):
            raise
    try:
        timeout = int(settings.IDEMPOTENCY_LOCK_TIMEOUT.total_seconds()) + 1
        redis_request_client().set(_release_mark(record), 1, ex=timeout)
    except (redis.RedisError, OSError) as error:  # both stores down: the lock timeout frees it
        logger.warning("idempotency record %s could not be released: %s", record.pk, error)


def _released(record: IdempotencyRecord) -> bool:
    try:
        return bool(redis_request_client().exists(_release_mark(record)))
    except (redis.RedisError, OSError):
        return False


def _exact_number(value: Decimal):
    # The parser reads fractions as Decimals. One a float holds exactly hashes as that float (as before
    # Decimals); any other keeps all its digits, so 18.00000000000000001 is not the body 18.0 was.
    as_float = float(value)
    return as_float if Decimal(repr(as_float)) == value else f"decimal:{value}"


def request_fingerprint(method: str, path: str, data, mode: str = "") -> str:
    # ASCII escapes keep a body with lone surrogates (valid JSON escapes, not valid UTF-8) hashable. The
    # key's mode is part of it so a sandbox call never replays a live session, or the other way round.
    canonical = json.dumps([method, path, mode, data], sort_keys=True, separators=(",", ":"), default=_exact_number)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _validate_key(key: str) -> None:
    if not 1 <= len(key) <= KEY_MAX_LENGTH or not key.isprintable():
        message = f"must be 1 to {KEY_MAX_LENGTH} printable characters"
        raise ApiProblem(
            status_code=400,
            code="validation_error",
            detail=f"{HEADER} {message}",
            errors=[{"field": HEADER, "code": "out_of_range", "message": message}],
        )


def _claim(tenant: Tenant, mode: str, key: str, fingerprint: str) -> IdempotencyRecord | Response:
    """Insert the in-progress record, or answer from the one already there."""
    now = timezone.now()
    for _ in range(2):
        try:
            with transaction.atomic():
                return IdempotencyRecord.objects.create(
                    tenant=tenant, mode=mode, key=key, request_fingerprint=fingerprint
                )
        except IntegrityError:
            record = IdempotencyRecord.objects.filter(tenant=tenant, mode=mode, key=key).first()
        if record is None:
            continue  # deleted between our insert and our read: try again
        if record.created_at < now - settings.IDEMPOTENCY_TTL:
            IdempotencyRecord.objects.filter(pk=record.pk, created_at=record.created_at).delete()
            continue
        if record.request_fingerprint != fingerprint:
            raise ApiProblem(
                status_code=422,
                code="idempotency_key_reused",
                detail=f"This {HEADER} was already used with a different request body.",
            )
        if record.response_status is not None:
            return Response(_stored_body(record), status=record.response_status, headers={REPLAYED_HEADER: "true"})
        if record.created_at < now - settings.IDEMPOTENCY_LOCK_TIMEOUT or _released(record):
            # The first request died mid-way (its process, or its database connection); its transaction
            # rolled back, so redo the work.
            taken = IdempotencyRecord.objects.filter(pk=record.pk, created_at=record.created_at).update(created_at=now)
            if taken:
                record.created_at = now
                return record
        raise ApiProblem(
            status_code=409,
            code="idempotency_key_in_use",
            detail=f"A request with this {HEADER} is still being processed. Retry shortly.",
        )
    raise ApiProblem(status_code=409, code="idempotency_key_in_use", detail="Retry shortly.")


def _bound_to(tenant_id: str, mode: str, key: str) -> bytes:
    return json.dumps([tenant_id, mode, key]).encode()


def _stored_body(record: IdempotencyRecord):
    body = record.response_body
    if not is_sealed(body):
        return json.loads(body) if isinstance(body, str) else body  # stored before sealing (gone after 24 h)
    try:
        return unseal(body, purpose=_SEAL_PURPOSE, bound_to=_bound_to(record.tenant_id, record.mode, record.key))
    except SealBroken:  # SECRET_KEY changed since: the response cannot be given back, and must not be redone
        raise ApiProblem(
            status_code=422,
            code="idempotency_key_reused",
            detail=f"The first response to this {HEADER} can no longer be replayed; send the request with a new key.",
        )


def idempotent(request, tenant: Tenant, handler: Callable[[], Response]) -> Response:
    """Run `handler` at most once per key; its effects and the stored response commit together."""
    key = request.META.get(META_KEY)
    if key is None:
        return handler()
    _validate_key(key)
    mode = request.auth.mode
    claimed = _claim(tenant, mode, key, request_fingerprint(request.method, request.path, request.data, mode))
    if isinstance(claimed, Response):
        return claimed
    try:
        with transaction.atomic():
            response = handler()
            if 200 <= response.status_code < 300:
                # Kept as sealed JSON text: a jsonb object would come back with its keys reordered.
                IdempotencyRecord.objects.filter(pk=claimed.pk).update(
                    response_status=response.status_code,
                    response_body=seal(response.data, purpose=_SEAL_PURPOSE, bound_to=_bound_to(tenant.pk, mode, key)),
                )
                return response
    except BaseException:
        _release(claimed)
        raise
    # Errors are not remembered: the same key may be used again once the request is corrected.
    IdempotencyRecord.objects.filter(pk=claimed.pk).delete()
    return response
