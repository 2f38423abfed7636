/** AgeVerify's server-side client: sessions (create, get, list, iterate, cancel, redact, wait), sandbox, webhooks. */

import { randomUUID } from "node:crypto";

import { WaitTimeoutError } from "./errors.js";
import { DEFAULT_RETRY_POLICY, type RetryPolicy, Transport } from "./transport.js";
import {
  type CreatedSession,
  type CreateSessionParams,
  FINAL_STATUSES,
  type ListSessionsParams,
  type SandboxReasons,
  type SandboxTarget,
  type SessionPage,
  type SessionResult,
} from "./types.js";
import { type WebhookEvent, WebhookVerifier } from "./webhooks.js";

export * from "./errors.js";
export * from "./types.js";
export { TEST_EVENT, type WebhookEvent, WebhookVerifier } from "./webhooks.js";
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./transport.js";

export interface AgeVerifyOptions {
  baseUrl: string;
  /** The `whsec_...` of the key's mode, for `webhooks.verify`. */
  webhookSecret?: string;
  retry?: Partial<RetryPolicy>;
  timeoutMs?: number;
}

const sessionPath = (sessionId: string) => `/v1/sessions/${encodeURIComponent(sessionId)}`;
const isFinal = (result: SessionResult) => FINAL_STATUSES.includes(result.session.status);

export class Sessions {
  constructor(private readonly transport: Transport) {}

  /** POST /v1/sessions, with an Idempotency-Key (yours or a new UUID) reused on every retry. */
  async create(params: CreateSessionParams): Promise<CreatedSession> {
    const body: Record<string, unknown> = { subject: params.subject, age_limit: params.ageLimit };
    if (params.callbackUrl !== undefined) body.callback_url = params.callbackUrl;
    if (params.cancelUrl !== undefined) body.cancel_url = params.cancelUrl;
    if (params.notificationUrl !== undefined) body.notification_url = params.notificationUrl;
    if (params.metadata !== undefined) body.metadata = params.metadata;
    const answer = await this.transport.request("POST", "/v1/sessions", {
      body,
      idempotencyKey: params.idempotencyKey ?? randomUUID(),
    });
    return (answer.body as { session: CreatedSession }).session;
  }

  /** The session and its results: the official answer (not a browser callback). */
  async get(sessionId: string): Promise<SessionResult> {
    return (await this.transport.request("GET", sessionPath(sessionId))).body as SessionResult;
  }

  /** One page of GET /v1/sessions (the key's mode only), newest first; the filters combine. */
  async list(params: ListSessionsParams = {}): Promise<SessionPage> {
    const query: Record<string, string> = {};
    if (params.status !== undefined) query.status = [params.status].flat().join(",");
    if (params.subject !== undefined) query.subject = params.subject;
    for (const [name, moment] of [
      ["created_from", params.createdFrom],
      ["created_before", params.createdBefore],
    ] as const) {
      if (moment !== undefined) query[name] = moment instanceof Date ? moment.toISOString() : moment;
    }
    if (params.limit !== undefined) query.limit = String(params.limit);
    if (params.cursor !== undefined) query.cursor = params.cursor;
    return (await this.transport.request("GET", "/v1/sessions", { query })).body as SessionPage;
  }

  /** Every session the filters select, following the pages. */
  async *iterate(params: Omit<ListSessionsParams, "cursor"> = {}): AsyncGenerator<SessionResult> {
    let cursor: string | undefined;
    do {
      const page = await this.list({ ...params, cursor });
      yield* page.data;
      cursor = page.hasMore && page.nextCursor ? page.nextCursor : undefined;
    } while (cursor);
  }

  /** End an open session as denied / cancelled; a session that ended otherwise throws ConflictError. */
  async cancel(sessionId: string): Promise<SessionResult> {
    return (await this.transport.request("POST", `${sessionPath(sessionId)}/cancel`, { idempotent: true }))
      .body as SessionResult;
  }

  /** Erase a final session's subject, metadata and results; an open one throws ConflictError (session_not_final). */
  async redact(sessionId: string): Promise<SessionResult> {
    return (await this.transport.request("POST", `${sessionPath(sessionId)}/redact`, { idempotent: true }))
      .body as SessionResult;
  }

  /** Poll `get` until the session is final; WaitTimeoutError (with `.last`) after `timeoutMs`. */
  async wait(sessionId: string, options: { timeoutMs?: number; intervalMs?: number } = {}): Promise<SessionResult> {
    const { timeoutMs = 300_000, intervalMs = 2_000 } = options;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const result = await this.get(sessionId);
      if (isFinal(result)) return result;
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        throw new WaitTimeoutError(`${sessionId} is still ${result.session.status} after ${timeoutMs} ms`, result);
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, remaining)));
    }
  }
}

/** Test keys only (`av_test_...`): drive a sandbox session to an outcome without a user. */
export class Sandbox {
  constructor(private readonly transport: Transport) {}

  /**
   * POST /v1/test/sessions/{id}/advance: to `processing`, `requires_doc`, `approved` or `denied`, and for a
   * final `to` optionally the `reason` it ends with. A move the state machine refuses throws ConflictError
   * (`invalid_transition`), a live key NotFoundError. Not idempotent: not repeated once it may have arrived.
   */
  async advance<To extends SandboxTarget>(
    sessionId: string,
    to: To,
    options: { reason?: SandboxReasons[To] } = {},
  ): Promise<SessionResult> {
    const body: Record<string, unknown> = { to };
    if (options.reason !== undefined) body.reason = options.reason;
    const path = `/v1/test/sessions/${encodeURIComponent(sessionId)}/advance`;
    return (await this.transport.request("POST", path, { body })).body as SessionResult;
  }
}

export class Webhooks {
  constructor(private readonly verifier: WebhookVerifier | null) {}

  verify(body: string | Buffer, headers: Record<string, string | string[] | undefined> | Headers): WebhookEvent {
    if (!this.verifier) throw new TypeError("pass webhookSecret to AgeVerify to verify webhooks");
    return this.verifier.verify(body, headers);
  }
}

export class AgeVerify {
  readonly sessions: Sessions;
  readonly sandbox: Sandbox;
  readonly webhooks: Webhooks;

  constructor(apiKey: string, options: AgeVerifyOptions) {
    if (!apiKey) throw new TypeError("an API key (av_live_... or av_test_...) is required");
    const mode = apiKey.startsWith("av_test_") ? "test" : "live";
    const transport = new Transport(
      apiKey,
      options.baseUrl,
      { ...DEFAULT_RETRY_POLICY, ...options.retry },
      options.timeoutMs ?? 30_000,
    );
    this.sessions = new Sessions(transport);
    this.sandbox = new Sandbox(transport);
    this.webhooks = new Webhooks(options.webhookSecret ? new WebhookVerifier(options.webhookSecret, mode) : null);
  }
}
