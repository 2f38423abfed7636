// Back-off against a scripted local server: what is retried, with which Idempotency-Key, and what is not.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";

import { AgeVerify, ConnectionError, RateLimitError, ServerError } from "@ageverify/client";

const SESSION = {
  session: { sessionId: "ses_01K8ZJ3Q4T9V2N6XH5C7WYRB3D", status: "initiated", metadata: {} },
};

async function scripted(...replies) {
  const seen = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method, url: req.url, key: req.headers["idempotency-key"] });
    const [status, headers = {}] = replies.shift() ?? [500];
    res.writeHead(status, { "Content-Type": "application/json", ...headers });
    res.end(JSON.stringify(status < 300 ? SESSION : { status, code: status === 409 ? "idempotency_key_in_use" : "x" }));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const client = new AgeVerify("av_test_x", {
    baseUrl: `http://127.0.0.1:${server.address().port}`,
    retry: { backoffBase: 0.01, maxRetries: 3 },
  });
  return { client, seen, close: () => server.close() };
}

test("a create is retried on 503, 409 in progress and 429 with one Idempotency-Key", async () => {
  const { client, seen, close } = await scripted([503], [409], [429, { "Retry-After": "0" }], [201]);
  try {
    const created = await client.sessions.create({ subject: "u", ageLimit: 18 });
    assert.equal(created.sessionId, SESSION.session.sessionId);
    assert.equal(seen.length, 4);
    assert.equal(new Set(seen.map((request) => request.key)).size, 1);
    assert.ok(seen[0].key);
  } finally {
    close();
  }
});

test("retries stop at maxRetries with the typed error", async () => {
  const { client, seen, close } = await scripted([503], [503], [503], [503], [201]);
  try {
    await assert.rejects(client.sessions.get("ses_x"), ServerError);
    assert.equal(seen.length, 4);
  } finally {
    close();
  }
});

test("a wait longer than allowed is not slept through", async () => {
  const { client, seen, close } = await scripted([429, { "Retry-After": "3600" }]);
  try {
    const error = await client.sessions.get("ses_x").catch((e) => e);
    assert.ok(error instanceof RateLimitError);
    assert.equal(error.retryAfter, 3600);
    assert.equal(seen.length, 1);
  } finally {
    close();
  }
});

test("a sandbox advance is repeated after a 429 but not after a 503", async () => {
  const { client, seen, close } = await scripted([429, { "Retry-After": "0" }], [200], [503], [200]);
  try {
    assert.equal((await client.sandbox.advance("ses_x", "approved")).session.sessionId, SESSION.session.sessionId);
    await assert.rejects(client.sandbox.advance("ses_x", "denied", { reason: "expired" }), ServerError);
    assert.equal(seen.length, 3);
    assert.deepEqual(
      seen.map((request) => [request.method, request.url, request.key]),
      Array(3).fill(["POST", "/v1/test/sessions/ses_x/advance", undefined]),
    );
  } finally {
    close();
  }
});

test("a refused connection is retried, then a ConnectionError", async () => {
  const { client, close } = await scripted();
  close(); // nothing listens there any more
  await new Promise((resolve) => setTimeout(resolve, 50));
  const error = await client.sessions.get("ses_x").catch((e) => e);
  assert.ok(error instanceof ConnectionError);
  assert.match(error.message, /after 4 attempt/);
});
