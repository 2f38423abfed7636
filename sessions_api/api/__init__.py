"""The partner HTTP edge of sessions: DRF views, serializers, problem details, parsing, rate limit, idempotency."""
