"""The partner API as a partner backend calls it: JSON bodies and an X-API-Key header."""

import json

from django.test import Client


class ApiClient:
    """Calls the partner API the way a partner backend does: JSON bodies, an X-API-Key header."""

    def __init__(self, api_key: str | None):
        self.api_key = api_key
        self.client = Client()

    def _headers(self, extra):
        headers = {}
        if self.api_key is not None:
            headers["X-API-Key"] = self.api_key
        headers.update(extra or {})
        return headers

    def post(self, path, body=None, *, raw: bytes | str | None = None, content_type="application/json", headers=None):
        data = raw if raw is not None else json.dumps(body if body is not None else {})
        return self.client.post(path, data=data, content_type=content_type, headers=self._headers(headers))

    def get(self, path, headers=None):
        return self.client.get(path, headers=self._headers(headers))

    def create_session(self, **fields):
        body = {"subject": "user-42", "age_limit": 18, **fields}
        response = self.post("/v1/sessions", body)
        assert response.status_code == 201, response.content
        return response.json()["session"]
