/** HTTP with retries and back-off.
 *
 * Retried, with exponential back-off and jitter, up to `maxRetries` times:
 * - a 429, waiting what `Retry-After` (else `RateLimit-Reset`) asks;
 * - a 409 `idempotency_key_in_use` (the same create is still running on the server);
 * - a connection error and a 500/502/503/504 when repeating is safe: a GET, a POST with an
 *   `Idempotency-Key` (the service replays the first answer) or a POST idempotent by nature
 *   (cancel, redact).
 */

import { apiErrorFor, ApiError, ConnectionError, type Problem } from "./errors.js";

export interface RetryPolicy {
  maxRetries: number;
  backoffBase: number; // seconds before the first retry, doubled each time, jittered
  backoffMax: number;
  maxRetryWait: number; // a server asking to wait longer than this gets an error instead
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 3, backoffBase: 0.5, backoffMax: 8, maxRetryWait: 60 };
const RETRYABLE_SERVER_STATUSES = new Set([500, 502, 503, 504]);
const IN_PROGRESS_CODE = "idempotency_key_in_use";

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string>;
  idempotencyKey?: string;
  idempotent?: boolean; // safe to repeat without a key (GET, cancel, redact)
}

export interface Answer {
  status: number;
  body: unknown;
  headers: Headers;
}

const sleep = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

export function serverRequestedWait(headers: Headers): number | null {
  const retryAfter = headers.get("retry-after");
  if (retryAfter) {
    if (/^\d+(\.\d+)?$/.test(retryAfter)) return Number(retryAfter);
    const moment = Date.parse(retryAfter);
    if (!Number.isNaN(moment)) return Math.max(0, (moment - Date.now()) / 1000);
  }
  const reset = headers.get("ratelimit-reset");
  return reset && /^\d+$/.test(reset) ? Number(reset) : null;
}

export class Transport {
  constructor(
    private readonly apiKey: string,
    private readonly baseUrl: string,
    private readonly policy: RetryPolicy,
    private readonly timeoutMs: number,
  ) {}

  backoff(retry: number): number {
    const ceiling = Math.min(this.policy.backoffMax, this.policy.backoffBase * 2 ** retry);
    return ceiling / 2 + (Math.random() * ceiling) / 2;
  }

  async request(method: "GET" | "POST", path: string, options: RequestOptions = {}): Promise<Answer> {
    const url = new URL(this.baseUrl.replace(/\/+$/, "") + path);
    for (const [name, value] of Object.entries(options.query ?? {})) url.searchParams.set(name, value);
    const headers: Record<string, string> = { "X-API-Key": this.apiKey, Accept: "application/json" };
    if (options.body !== undefined) headers["Content-Type"] = "application/json";
    if (options.idempotencyKey) headers["Idempotency-Key"] = options.idempotencyKey;
    const safe = method === "GET" || Boolean(options.idempotencyKey) || Boolean(options.idempotent);
    for (let retry = 0; ; retry++) {
      let response: Response;
      try {
        response = await fetch(url, {
          method,
          headers,
          body: options.body === undefined ? undefined : JSON.stringify(options.body),
          signal: AbortSignal.timeout(this.timeoutMs),
        });
      } catch (error) {
        if (safe && retry < this.policy.maxRetries) {
          await sleep(this.backoff(retry));
          continue;
        }
        throw new ConnectionError(`${method} ${url} failed after ${retry + 1} attempt(s): ${String(error)}`, {
          cause: error,
        });
      }
      const text = await response.text();
      if (response.ok) {
        return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers };
      }
      const error = this.errorFrom(response, text);
      const wait = this.retryWait(error, response.headers, safe, retry);
      if (wait === null) throw error;
      await sleep(wait);
    }
  }

  private errorFrom(response: Response, text: string): ApiError {
    let problem: Problem;
    try {
      const parsed = JSON.parse(text);
      problem = parsed && typeof parsed === "object" ? parsed : { detail: text };
    } catch {
      problem = { status: response.status, detail: text.slice(0, 500) || response.statusText };
    }
    return apiErrorFor(response.status, problem, serverRequestedWait(response.headers));
  }

  private retryWait(error: ApiError, headers: Headers, safe: boolean, retry: number): number | null {
    if (retry >= this.policy.maxRetries) return null;
    const retryable =
      error.status === 429 ||
      (error.status === 409 && error.code === IN_PROGRESS_CODE) ||
      (safe && RETRYABLE_SERVER_STATUSES.has(error.status));
    if (!retryable) return null;
    const asked = serverRequestedWait(headers);
    if (asked === null) return this.backoff(retry);
    return asked > this.policy.maxRetryWait ? null : asked;
  }
}
