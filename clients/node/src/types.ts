/** The API's shapes, as it sends them (camelCase). */

export type Status = "initiated" | "processing" | "requires_doc" | "approved" | "denied";
export type Mode = "live" | "test";

/** Why a session ended approved, and why denied (`session.reason`). */
export type ApprovedReason = "age_estimation" | "document" | "digital_id" | "age_pass";
export type DeniedReason =
  | "liveness_failed"
  | "underage_document"
  | "document_invalid"
  | "document_expired"
  | "document_mismatch"
  | "underage_digital_id"
  | "attempts_exceeded"
  | "cancelled"
  | "expired";

export interface Session {
  sessionId: string;
  status: Status;
  subject: string;
  ageLimit: number;
  mode: Mode;
  reason: string | null;
  expiresAt: string;
  callbackUrl: string | null;
  cancelUrl: string | null;
  notificationUrl: string | null;
  createdAt: string;
  updatedAt: string;
  metadata: Record<string, string>;
  redactedAt: string | null;
}

/** The session as POST /v1/sessions returns it, once. Keep `sessionToken` and `signature` on your server. */
export interface CreatedSession extends Session {
  sessionToken: string;
  signature: string;
  verificationUrl: string;
  clientSecret: string;
}

export interface SessionResult {
  session: Session;
  ageEstimation: { ageLimit: number; estimatedAge: number; ageConfidence: number } | null;
  liveness: { isLive: boolean; livenessScore: number } | null;
  validateDoc: {
    trueAge: number;
    birthdate: string;
    holderMatch: { score: number; passed: boolean } | null;
    livenessChecked: boolean;
  } | null;
  ageCredential: {
    kind: "mdoc";
    docType: string;
    claim: string;
    value: boolean;
    ageLimit: number;
    issuer: { country: string | null; trustSource: string };
    verifiedAt: string;
  } | null;
  /** What an age pass proved (reason `age_pass`): days (UTC midnight), not times. */
  agePass: {
    method: "face" | "document" | "digital_id";
    provedAt: string;
    expiresAt: string;
    thresholds: number[];
  } | null;
}

export interface SessionPage {
  data: SessionResult[];
  hasMore: boolean;
  nextCursor: string | null;
}

export interface CreateSessionParams {
  subject: string;
  ageLimit: number;
  callbackUrl?: string;
  cancelUrl?: string;
  notificationUrl?: string;
  metadata?: Record<string, string>;
  /** Sent as Idempotency-Key; a new UUID when not given, reused on every retry of the call. */
  idempotencyKey?: string;
}

export interface ListSessionsParams {
  status?: Status | Status[];
  subject?: string;
  createdFrom?: Date | string;
  createdBefore?: Date | string;
  limit?: number;
  cursor?: string;
}

export const FINAL_STATUSES: readonly Status[] = ["approved", "denied"];

/** The statuses `sandbox.advance` moves a session to, and the reasons each may end with. */
export interface SandboxReasons {
  processing: never;
  requires_doc: never;
  approved: ApprovedReason;
  denied: DeniedReason;
}
export type SandboxTarget = keyof SandboxReasons;
