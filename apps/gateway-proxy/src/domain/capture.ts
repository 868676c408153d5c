import type { Guardrail, Policy, Settings } from "@agentnet/contracts";
import { redactPii } from "./redaction";

/** Longest prompt or completion kept per request: an event is one NATS message, not an archive. */
export const MAX_CAPTURE_CHARS = 32_768;

export type CapturePlan = { capture: false } | { capture: true; redact: boolean };

/**
 * Prompts are captured only when the account turned prompt collection on, log collection is on
 * (nothing would keep them otherwise), and a guardrail of the authorising policy asks for capture.
 * Redaction applies when the settings or that guardrail ask for it.
 */
export function capturePlan(
  settings: Pick<Settings, "enable_prompt_collection" | "enable_log_collection" | "redact_pii">,
  policy: Pick<Policy, "guardrail_ids"> | undefined,
  guardrails: ReadonlyMap<string, Pick<Guardrail, "checks">>,
): CapturePlan {
  if (!settings.enable_prompt_collection || !settings.enable_log_collection || !policy) {
    return { capture: false };
  }
  const capturing = policy.guardrail_ids
    .map((id) => guardrails.get(id)?.checks.prompt_capture)
    .filter((check) => check?.enabled === true);
  if (capturing.length === 0) return { capture: false };
  return { capture: true, redact: settings.redact_pii || capturing.some((check) => check?.redact_pii) };
}

/** The text as it may leave the proxy: cut to the cap, then redacted when asked. */
export function captured(text: string, plan: CapturePlan): string | undefined {
  if (!plan.capture) return undefined;
  const cut = text.length > MAX_CAPTURE_CHARS ? text.slice(0, MAX_CAPTURE_CHARS) : text;
  return plan.redact ? redactPii(cut) : cut;
}
