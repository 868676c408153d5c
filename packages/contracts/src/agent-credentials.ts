import { z } from "zod";
import { Id, RequestOrigin, Timestamp } from "./common";
import { displayText } from "./text";

/**
 * Short-lived credentials for coding agents (docs/API.md "Agent credentials"): `agentnet login`
 * runs a device authorization (RFC 8628) that a member approves in the dashboard, and keeps the
 * refresh credential it gets; `agentnet token` trades it for a proxy token that lives minutes.
 */

/** A refresh credential: `agr_` and 40 base62 characters, stored only as its hash. */
export const REFRESH_PREFIX = "agr_";

/** How an agent names itself when it asks (shown to the member who approves it). */
export const DeviceCodeBody = z.object({
  client_name: z.string().trim().min(1).max(128).superRefine(displayText("client_name")).optional(),
});
export type DeviceCodeBody = z.infer<typeof DeviceCodeBody>;

/** RFC 8628 §3.2: the device authorization answer. */
export const DeviceAuthorization = z.object({
  device_code: z.string(),
  /** What the member confirms in the dashboard: 8 letters as XXXX-XXXX. */
  user_code: z.string(),
  verification_uri: z.string(),
  verification_uri_complete: z.string(),
  expires_in: z.number().int(),
  /** Seconds between polls. */
  interval: z.number().int(),
});
export type DeviceAuthorization = z.infer<typeof DeviceAuthorization>;

export const DeviceTokenBody = z.object({ device_code: z.string().min(1).max(256) });
export type DeviceTokenBody = z.infer<typeof DeviceTokenBody>;

export const RefreshBody = z.object({ refresh_token: z.string().min(1).max(256) });
export type RefreshBody = z.infer<typeof RefreshBody>;

/**
 * The agent's tokens: a proxy token (`agn_`, as any API token, answered at the proxy and the API)
 * that expires in `expires_in` seconds, and the refresh credential to ask for the next one, which
 * replaces the one used (each works once).
 */
export const AgentTokens = z.object({
  access_token: z.string(),
  token_type: z.literal("Bearer"),
  expires_in: z.number().int(),
  refresh_token: z.string(),
});
export type AgentTokens = z.infer<typeof AgentTokens>;

/**
 * A pending device code as the member sees it before confirming it (RFC 8628 §5.4): which client
 * asked, from which address and agent, and when; a code someone else sent them shows a stranger's.
 */
export const DevicePreview = z.object({
  user_code: z.string(),
  client_name: z.string().optional(),
  ...RequestOrigin.shape,
  requested_at: Timestamp,
  expires_at: Timestamp,
});
export type DevicePreview = z.infer<typeof DevicePreview>;

export const DevicePreviewQuery = z.object({ user_code: z.string().min(1).max(32) });
export type DevicePreviewQuery = z.infer<typeof DevicePreviewQuery>;

/** A member's approval (or refusal) of the device code they were shown. */
export const DeviceApprovalBody = z.object({
  user_code: z.string().min(1).max(32),
  approve: z.boolean().default(true),
});
export type DeviceApprovalBody = z.infer<typeof DeviceApprovalBody>;

export const DeviceApproval = z.object({
  client_name: z.string().optional(),
  approved: z.boolean(),
});
export type DeviceApproval = z.infer<typeof DeviceApproval>;

/** One agent credential of a member (never its secret). */
export const AgentCredential = z.object({
  id: Id,
  user_id: Id,
  client_name: z.string().optional(),
  created_at: Timestamp,
  last_used: Timestamp.optional(),
  /** Unused this long, it stops working; each use moves it on. */
  expires_at: Timestamp,
});
export type AgentCredential = z.infer<typeof AgentCredential>;
