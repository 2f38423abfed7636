/** Verifying AgeVerify's webhooks (Standard Webhooks signatures, through the official `standardwebhooks`). */

import { Webhook } from "standardwebhooks";

import { WebhookVerificationError } from "./errors.js";
import type { Mode } from "./types.js";

export const TEST_EVENT = "webhook.test";

export interface WebhookEvent {
  /** The `webhook-id` header: the same on every attempt and re-send; de-duplicate on it. */
  webhookId: string;
  event: string;
  timestamp: string | null;
  /** True for the dashboard's "Send test webhook" (`webhook.test`): about no session, acknowledge it. */
  isTest: boolean;
  data: {
    sessionId?: string;
    subject?: string;
    status?: string;
    ageLimit?: number;
    mode?: Mode;
    metadata?: Record<string, string>;
    [member: string]: unknown;
  };
}

export class WebhookVerifier {
  private readonly webhook: Webhook;

  /** `secret`: the `whsec_...` of one mode. `mode`, when given, also refuses an event of the other mode. */
  constructor(
    secret: string,
    private readonly mode?: Mode,
  ) {
    if (!secret) throw new TypeError("a webhook signing secret (whsec_...) is required");
    this.webhook = new Webhook(secret);
  }

  /** Verify the raw body (exactly as received) and its headers; throws WebhookVerificationError. */
  verify(body: string | Buffer, headers: Record<string, string | string[] | undefined> | Headers): WebhookEvent {
    const lowered: Record<string, string> = {};
    if (headers instanceof Headers) {
      headers.forEach((value, name) => {
        lowered[name.toLowerCase()] = value;
      });
    } else {
      for (const [name, value] of Object.entries(headers)) {
        if (value !== undefined) lowered[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
      }
    }
    let payload: unknown;
    try {
      payload = this.webhook.verify(body, lowered);
    } catch (error) {
      throw new WebhookVerificationError(`webhook not verified: ${(error as Error).message}`, { cause: error });
    }
    const event = eventFrom(payload, lowered["webhook-id"]);
    if (this.mode !== undefined && event.data.mode !== this.mode) {
      throw new WebhookVerificationError(`a ${event.data.mode} event, expected ${this.mode}`);
    }
    return event;
  }
}

function eventFrom(payload: unknown, webhookId: string): WebhookEvent {
  const body = payload as { event?: unknown; timestamp?: unknown; data?: unknown };
  if (!body || typeof body !== "object" || !body.data || typeof body.data !== "object") {
    throw new WebhookVerificationError("the webhook body is not an AgeVerify event");
  }
  const event = String(body.event);
  const data = body.data as WebhookEvent["data"];
  const isTest = event === TEST_EVENT;
  if (!isTest && (typeof data.sessionId !== "string" || typeof data.status !== "string")) {
    throw new WebhookVerificationError("the webhook body has no sessionId or status");
  }
  return {
    webhookId,
    event,
    timestamp: typeof body.timestamp === "string" ? body.timestamp : null,
    isTest,
    data,
  };
}
