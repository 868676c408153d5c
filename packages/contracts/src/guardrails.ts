import { z } from "zod";
import { Description, Id, ModelName, ResourceName, ResourceTimestamps } from "./common";
import { McpToolPattern } from "./mcp-servers";
import { MAX_MCP_TOOL_PATTERNS, MAX_MODELS } from "./sizes";

/**
 * Only the listed catalog model ids may be requested. Enabled with an empty list denies
 * every model; that is allowed because it is a legitimate way to freeze a group's access.
 */
export const ModelAllowlistCheck = z.object({
  enabled: z.boolean(),
  models: z.array(z.string().min(1)),
});
export type ModelAllowlistCheck = z.infer<typeof ModelAllowlistCheck>;

export const PromptCaptureCheck = z.object({
  enabled: z.boolean(),
  redact_pii: z.boolean(),
});
export type PromptCaptureCheck = z.infer<typeof PromptCaptureCheck>;

/**
 * Not in the spec: MCP tools the policy's grants never let through, by patterns of the tool's name
 * as `/mcp` names it, `{server}__{tool}`, where `*` stands for any run of characters (`*delete*`,
 * `github__create_*`). Blocked tools are not listed and their calls are refused.
 */
export const ToolBlocklistCheck = z.object({
  enabled: z.boolean(),
  patterns: z.array(z.string()),
});
export type ToolBlocklistCheck = z.infer<typeof ToolBlocklistCheck>;

/**
 * The spec's two checks are always present; a disabled one is inert. `tool_blocklist` is optional:
 * guardrails stored before it, and bodies of clients that follow the spec, have none.
 */
export const GuardrailChecks = z.object({
  model_allowlist: ModelAllowlistCheck,
  prompt_capture: PromptCaptureCheck,
  tool_blocklist: ToolBlocklistCheck.optional(),
});
export type GuardrailChecks = z.infer<typeof GuardrailChecks>;

export const Guardrail = z.object({
  id: Id,
  name: z.string(),
  description: z.string(),
  checks: GuardrailChecks,
  ...ResourceTimestamps.shape,
});
export type Guardrail = z.infer<typeof Guardrail>;

/** Checks as a body writes them: the allowlist holds at most MAX_MODELS bounded model names. */
const GuardrailChecksBody = GuardrailChecks.extend({
  model_allowlist: ModelAllowlistCheck.extend({
    models: z.array(ModelName).max(MAX_MODELS, `at most ${MAX_MODELS} models`),
  }),
  tool_blocklist: ToolBlocklistCheck.extend({
    patterns: z.array(McpToolPattern).max(MAX_MCP_TOOL_PATTERNS, `at most ${MAX_MCP_TOOL_PATTERNS} patterns`),
  }).optional(),
});

/** POST and PUT body (PUT replaces the whole guardrail). */
export const GuardrailBody = z.object({
  name: ResourceName,
  description: Description.default(""),
  checks: GuardrailChecksBody,
});
export type GuardrailBody = z.infer<typeof GuardrailBody>;
