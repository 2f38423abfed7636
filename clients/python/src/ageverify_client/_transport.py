"""HTTP with retries: what is retried, how long to wait, and how an error answer becomes an exception.

Retried, with exponential back-off and jitter, up to `max_retries` times:
- a 429, waiting what `Retry-After` (or else `RateLimit-Reset` / `RateLimit: ...;t=`) asks;
- a 409 `idempotency_key_in_use` (the same create is still running on the server);
- a connection error, a timeout and a 500/502/503/504 only when repeating is safe: a GET, a POST
  that carries an `Idempotency-Key` (the service replays the first answer), or a POST idempotent by
  nature (cancel). Any other POST is retried only when the connection could not be opened at all
  (the request was never sent).
"""

from __future__ import annotations

import email.utils
import json
import logging
import random
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import requests
from urllib3.exceptions import NewConnectionError

from .errors import ApiConnectionError, ApiError, RateLimitError, error_class_for

logger = logging.getLogger("ageverify_client")

RETRYABLE_SERVER_STATUSES = frozenset({500, 502, 503, 504})
IN_PROGRESS_CODE = "idempotency_key_in_use"


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 3
    backoff_base: float = 0.5  # seconds before the first retry (doubled each time, jittered)
    backoff_max: float = 8.0
    max_retry_wait: float = 60.0  # a server asking to wait longer than this gets an exception instead

    def backoff(self, retry_number: int) -> float:
        ceiling = min(self.backoff_max, self.backoff_base * (2**retry_number))
        return random.uniform(ceiling / 2, ceiling)


@dataclass(frozen=True)
class Answer:
    status: int
    headers: Mapping[str, str]
    body: Any  # parsed JSON


def _header(headers: Mapping[str, str], name: str) -> str | None:
    wanted = name.lower()
    value = next((v for k, v in headers.items() if k.lower() == wanted), None)
    return value.strip() if isinstance(value, str) else None


def server_requested_wait(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asked us to wait: Retry-After (seconds or HTTP date), then the RateLimit headers."""
    retry_after = _header(headers, "Retry-After")
    if retry_after:
        if re.fullmatch(r"\d+(\.\d+)?", retry_after):
            return float(retry_after)
        try:
            moment = email.utils.parsedate_to_datetime(retry_after)
        except (TypeError, ValueError):
            moment = None
        if moment is not None:
            return max(0.0, moment.timestamp() - time.time())
    remaining = _header(headers, "RateLimit-Remaining")
    reset = _header(headers, "RateLimit-Reset")
    if reset and re.fullmatch(r"\d+(\.\d+)?", reset) and (remaining is None or remaining == "0"):
        return float(reset)
    structured = _header(headers, "RateLimit")  # draft-ietf-httpapi-ratelimit-headers: "default";r=0;t=3
    if structured:
        match = re.search(r"(?:^|;)\s*t=(\d+)", structured)
        if match:
            return float(match.group(1))
    return None


def _never_sent(error: requests.RequestException) -> bool:
    """The connection was refused or timed out while opening: the server saw nothing."""
    if isinstance(error, requests.ConnectTimeout):
        return True
    reason = getattr(error.args[0], "reason", None) if error.args else None
    return isinstance(reason, NewConnectionError)


def _problem_from(response: requests.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        return body
    text = response.text[:500].strip()
    return {"title": response.reason or "error", "status": response.status_code, **({"detail": text} if text else {})}


def _error_from(response: requests.Response) -> ApiError:
    problem = _problem_from(response)
    cls = error_class_for(response.status_code)
    headers = dict(response.headers)
    if cls is RateLimitError:
        return RateLimitError(
            problem, status=response.status_code, headers=headers, retry_after=server_requested_wait(response.headers)
        )
    return cls(problem, status=response.status_code, headers=headers)


class Transport:
    def __init__(
        self,
        *,
        api_key: str,
        base_url: str,
        timeout: float | tuple[float, float],
        policy: RetryPolicy,
        user_agent: str,
        http: requests.Session | None = None,
    ):
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.policy = policy
        self.http = http or requests.Session()
        self._headers = {"X-API-Key": api_key, "Accept": "application/json", "User-Agent": user_agent}

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        idempotent: bool = False,
    ) -> Answer:
        """`idempotent`: repeating this request has the same effect as making it once (like a GET)."""
        headers = {**self._headers, **(headers or {})}
        safe = idempotent or method == "GET" or "Idempotency-Key" in headers
        data = None
        if body is not None:
            data = json.dumps(body, separators=(",", ":")).encode()
            headers["Content-Type"] = "application/json"
        url = self.base_url + path
        retry = 0
        while True:
            try:
                response = self.http.request(
                    method, url, params=params, data=data, headers=headers, timeout=self.timeout, allow_redirects=False
                )
            except (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError) as error:
                if retry < self.policy.max_retries and (safe or _never_sent(error)):
                    pause = self.policy.backoff(retry)
                    logger.info("%s %s: %s; retry %d in %.2f s", method, path, error, retry + 1, pause)
                    time.sleep(pause)
                    retry += 1
                    continue
                raise ApiConnectionError(f"{method} {url} failed after {retry + 1} attempt(s): {error}") from error
            if 200 <= response.status_code < 300:
                try:
                    parsed = response.json() if response.content else None
                except ValueError as error:
                    raise ApiConnectionError(f"{method} {url}: the answer is not JSON") from error
                return Answer(response.status_code, response.headers, parsed)
            error_answer = _error_from(response)
            wait = self._retry_wait(error_answer, safe, retry)
            if wait is None:
                raise error_answer
            logger.info("%s %s: %s; retry %d in %.2f s", method, path, error_answer, retry + 1, wait)
            time.sleep(wait)
            retry += 1

    def _retry_wait(self, error: ApiError, safe: bool, retry: int) -> float | None:
        """How long to wait before retrying this error answer, or None to raise it."""
        if retry >= self.policy.max_retries:
            return None
        retryable = (
            error.status == 429
            or (error.status == 409 and error.code == IN_PROGRESS_CODE)
            or (safe and error.status in RETRYABLE_SERVER_STATUSES)
        )
        if not retryable:
            return None
        asked = server_requested_wait(error.headers)
        if asked is None:
            return self.policy.backoff(retry)
        if asked > self.policy.max_retry_wait:
            return None
        return asked
