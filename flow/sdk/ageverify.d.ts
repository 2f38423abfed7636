// Types of the AgeVerify SDK v1, served at /sdk/v1/ageverify.d.ts (hand-written, no build step).

export type AgeVerifyErrorCode =
  | "origin_not_allowed"
  | "invalid_client_secret"
  | "session_expired"
  | "session_finished"
  | "mode_mismatch"
  | "camera_blocked"
  | "storage_blocked"
  | "invalid_publishable_key"
  | "client_sessions_disabled"
  | "invalid_options"
  | "network_error"
  | "unsupported_environment";

export interface AgeVerifyError extends Error {
  name: "AgeVerifyError";
  code: AgeVerifyErrorCode | string;
}

export type AgeVerifyEventType =
  | "ready" | "started" | "step" | "camera" | "complete" | "cancel" | "close" | "error";

export interface AgeVerifyEvent {
  type: AgeVerifyEventType;
  data: Record<string, unknown>;
}

/** A UI signal only: confirm with GET /v1/sessions/{id} on your backend (or the webhook). */
export interface AgeVerifyOutcome {
  sessionId: string;
  status: "approved" | "denied";
  reason: string | null;
}

export interface AgeVerifyResult {
  type: "complete" | "cancel" | "close" | "error";
  sessionId?: string;
  status?: string;
  reason?: string | null;
  error?: AgeVerifyError;
}

interface CommonOptions {
  /** Passed to the flow as its `locale` parameter; also the language of the SDK's own words on your page (the
   * dialog's name, its close button, the new-window fallback). Defaults to your page's `lang`, then the browser's. */
  locale?: string;
  /** For the top-level fallback: one of the key's registered return URLs. */
  returnUrl?: string;
  onEvent?: (event: AgeVerifyEvent) => void;
  onComplete?: (outcome: AgeVerifyOutcome) => void;
  onCancel?: (outcome: AgeVerifyOutcome) => void;
  /** When given, errors come here and the promise resolves with {type: "error"}; otherwise it rejects. */
  onError?: (error: AgeVerifyError) => void;
}

export type VerifyOptions = CommonOptions & (
  | { clientSecret: string; session?: never }
  /** Only when the key allows client sessions; the age limit is the key's. */
  | { session: { subject: string }; clientSecret?: never }
) & { presentation?: "modal" | "popup" };

export interface AgeVerifyHandle extends Promise<AgeVerifyResult> {
  close(): void;
}

export interface AgeVerifyInstance {
  verify(options: VerifyOptions): AgeVerifyHandle;
  /** Inline: inside `element`, or in your own iframe (give it allow="camera; fullscreen; publickey-credentials-get; publickey-credentials-create"). */
  mount(element: HTMLElement, options: VerifyOptions): AgeVerifyHandle;
}

export interface AgeVerifyFactory {
  (publishableKey: string, settings?: { origin?: string }): AgeVerifyInstance;
  readonly version: 1;
}

declare const AgeVerify: AgeVerifyFactory;
export default AgeVerify;
export { AgeVerify };
