// The Node client against the running service (started by tests/client/test_node_client.py, which sets the
// environment below): create / wait / verify, typed errors, idempotency, list / iterate / cancel / redact, sandbox.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:https";
import { test } from "node:test";

import {
  AgeVerify,
  BadRequestError,
  ConflictError,
  NotFoundError,
  WaitTimeoutError,
  WebhookVerificationError,
} from "@ageverify/client";

const env = process.env;
const baseUrl = env.AGEVERIFY_BASE_URL;
const key = env.AGEVERIFY_TEST_KEY;
const av = new AgeVerify(key, { baseUrl, webhookSecret: env.AGEVERIFY_WEBHOOK_SECRET, retry: { backoffBase: 0.05 } });

/** An HTTPS webhook receiver with the test CA's certificate, which the service's worker trusts. */
async function receiver() {
  const received = [];
  let notify;
  const arrived = new Promise((resolve) => (notify = resolve));
  const server = createServer({ cert: readFileSync(env.TLS_CERT), key: readFileSync(env.TLS_KEY) }, (req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      received.push({ body: Buffer.concat(chunks).toString("utf8"), headers: req.headers });
      res.end("ok");
      notify();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `https://127.0.0.1:${server.address().port}/hooks`, received, arrived, close: () => server.close() };
}

test("create, wait and verify the webhook round trip", async () => {
  const hooks = await receiver();
  try {
    const created = await av.sessions.create({
      subject: "user-42",
      ageLimit: 18,
      notificationUrl: hooks.url,
      metadata: { orderId: "A-1042" },
    });
    assert.match(created.sessionId, /^ses_/);
    assert.equal(created.status, "initiated");
    assert.deepEqual(created.metadata, { orderId: "A-1042" });
    assert.ok(created.verificationUrl.startsWith(`${baseUrl}/flow/start?`));

    setTimeout(() => av.sandbox.advance(created.sessionId, "approved"), 300);
    const result = await av.sessions.wait(created.sessionId, { timeoutMs: 15_000, intervalMs: 100 });
    assert.equal(result.session.status, "approved");

    await hooks.arrived;
    const [delivered] = hooks.received;
    const event = av.webhooks.verify(delivered.body, delivered.headers);
    assert.equal(event.event, "verification.completed");
    assert.equal(event.isTest, false);
    assert.equal(event.webhookId, delivered.headers["webhook-id"]);
    assert.deepEqual(
      [event.data.sessionId, event.data.status, event.data.subject, event.data.mode, event.data.metadata],
      [created.sessionId, "approved", "user-42", "test", { orderId: "A-1042" }],
    );
    assert.throws(
      () => av.webhooks.verify(delivered.body.replace("approved", "denied"), delivered.headers),
      WebhookVerificationError,
    );
  } finally {
    hooks.close();
  }
});

test("the dashboard's test event verifies as a test event", () => {
  const recorded = JSON.parse(readFileSync(env.AGEVERIFY_TEST_EVENT, "utf8"));
  const event = av.webhooks.verify(recorded.body, recorded.headers);
  assert.equal(event.isTest, true);
  assert.equal(event.event, "webhook.test");
  assert.equal(event.data.mode, "test");
});

test("errors are typed and carry the problem details", async () => {
  const refused = await av.sessions.create({ subject: "user-42", ageLimit: 99 }).catch((error) => error);
  assert.ok(refused instanceof BadRequestError);
  assert.equal(refused.status, 400);
  assert.equal(refused.code, "validation_error");
  assert.deepEqual(
    refused.errors.map((error) => [error.field, error.code]),
    [["age_limit", "out_of_range"]],
  );
  assert.match(refused.requestId, /^req_/);

  const unknown = await av.sessions.get("ses_01K8ZJ3Q4T9V2N6XH5C7WYRB3D").catch((error) => error);
  assert.ok(unknown instanceof NotFoundError);
  assert.equal(unknown.code, "session_not_found");
});

test("the same idempotency key gives back the same session", async () => {
  const first = await av.sessions.create({ subject: "user-7", ageLimit: 18, idempotencyKey: "order-7" });
  const again = await av.sessions.create({ subject: "user-7", ageLimit: 18, idempotencyKey: "order-7" });
  assert.equal(again.sessionId, first.sessionId);
});

test("list, iterate, cancel and redact", async () => {
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push((await av.sessions.create({ subject: "lister", ageLimit: 18 })).sessionId);

  const page = await av.sessions.list({ subject: "lister", limit: 2 });
  assert.equal(page.data.length, 2);
  assert.equal(page.hasMore, true);
  const all = [];
  for await (const result of av.sessions.iterate({ subject: "lister", limit: 2 })) all.push(result.session.sessionId);
  assert.deepEqual(all, [...ids].reverse());

  const open = await av.sessions.redact(ids[0]).catch((error) => error);
  assert.ok(open instanceof ConflictError);
  assert.equal(open.code, "session_not_final");

  const cancelled = await av.sessions.cancel(ids[0]);
  assert.deepEqual([cancelled.session.status, cancelled.session.reason], ["denied", "cancelled"]);
  const redacted = await av.sessions.redact(ids[0]);
  assert.equal(redacted.session.subject, "");
  assert.ok(redacted.session.redactedAt);
  assert.deepEqual(await av.sessions.redact(ids[0]), redacted);
});

test("wait gives up with the last reading", async () => {
  const created = await av.sessions.create({ subject: "user-9", ageLimit: 18 });
  const error = await av.sessions.wait(created.sessionId, { timeoutMs: 300, intervalMs: 100 }).catch((e) => e);
  assert.ok(error instanceof WaitTimeoutError);
  assert.equal(error.last.session.status, "initiated");
});

test("the sandbox advances a session, and the result reads back", async () => {
  const created = await av.sessions.create({ subject: "user-11", ageLimit: 18 });
  const approved = await av.sandbox.advance(created.sessionId, "approved", { reason: "age_pass" });
  assert.deepEqual([approved.session.status, approved.session.reason], ["approved", "age_pass"]);
  assert.equal(approved.agePass.method, "document");
  assert.ok(approved.agePass.thresholds.includes(18));
  assert.deepEqual(await av.sessions.get(created.sessionId), approved);

  const other = await av.sessions.create({ subject: "user-12", ageLimit: 21 });
  assert.equal((await av.sandbox.advance(other.sessionId, "requires_doc")).session.status, "requires_doc");
  const expired = await av.sandbox.advance(other.sessionId, "denied", { reason: "document_expired" });
  assert.deepEqual([expired.session.status, expired.session.reason], ["denied", "document_expired"]);
  assert.deepEqual(await av.sessions.get(other.sessionId), expired);
});

test("the sandbox refuses a move the state machine refuses, and a reason that does not fit", async () => {
  const created = await av.sessions.create({ subject: "user-13", ageLimit: 18 });
  const unfit = await av.sandbox.advance(created.sessionId, "approved", { reason: "expired" }).catch((e) => e);
  assert.ok(unfit instanceof BadRequestError);
  assert.deepEqual(
    unfit.errors.map((error) => error.field),
    ["reason"],
  );

  await av.sandbox.advance(created.sessionId, "denied");
  const final = await av.sandbox.advance(created.sessionId, "approved").catch((e) => e);
  assert.ok(final instanceof ConflictError);
  assert.equal(final.code, "invalid_transition");
  assert.equal((await av.sessions.get(created.sessionId)).session.status, "denied");
});
