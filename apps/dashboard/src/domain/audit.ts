import type {
  AuditActor,
  AuditOutcome,
  AuditQuery,
  AuditTargetType,
  AuditVerification,
} from "@agentnet/contracts";
import type { Query } from "../api/client";

/** One page of the Audit page's list (the API allows up to 1,000). */
export const AUDIT_PAGE_SIZE = 50;

/** The filters the page offers, by the API's names (docs/API.md "Audit trail"). */
export const AUDIT_FILTER_KEYS = [
  "actor",
  "action",
  "target_type",
  "target_id",
  "outcome",
  "from",
  "to",
] as const satisfies readonly (keyof AuditQuery)[];

/** The filters as the page keeps them: blank when unset; `from` and `to` RFC 3339. */
export type AuditFilters = Record<(typeof AUDIT_FILTER_KEYS)[number], string>;

export const NO_AUDIT_FILTERS: AuditFilters = {
  actor: "",
  action: "",
  target_type: "",
  target_id: "",
  outcome: "",
  from: "",
  to: "",
};

/**
 * Each outcome in words and the badge tone it shows with. A record over the contract's type, so
 * an outcome added there fails the typecheck here until it has words and a place in the filter.
 */
export const AUDIT_OUTCOMES: Record<AuditOutcome, { label: string; tone: "ok" | "bad" | "info" }> = {
  succeeded: { label: "Succeeded", tone: "ok" },
  refused: { label: "Refused", tone: "bad" },
  failed: { label: "Failed", tone: "bad" },
  interrupted: { label: "Interrupted", tone: "info" },
};

/** What entries name as targets, in words (complete for the same reason as AUDIT_OUTCOMES). */
export const AUDIT_TARGET_TYPES: Record<AuditTargetType, string> = {
  account: "Account",
  user: "User",
  group: "Group",
  token: "API key",
  settings: "Gateway settings",
  budget_rule: "Budget rule",
  provider: "Provider",
  policy: "Policy",
  guardrail: "Guardrail",
  mcp_server: "MCP server",
  mcp_user_credential: "A member's MCP credential",
  notification_settings: "Alert webhook",
  audit_settings: "Audit trail settings",
  agent_credential: "Agent credential",
  identity_provider: "Identity provider",
  session: "Sign-in session",
};

const isOutcome = (value: string): value is AuditOutcome => Object.hasOwn(AUDIT_OUTCOMES, value);
const isTargetType = (value: string): value is AuditTargetType => Object.hasOwn(AUDIT_TARGET_TYPES, value);

export const targetTypeLabel = (type: string): string =>
  isTargetType(type) ? AUDIT_TARGET_TYPES[type] : type;

export const outcomeOf = (outcome: string) =>
  isOutcome(outcome) ? AUDIT_OUTCOMES[outcome] : { label: outcome, tone: "muted" as const };

/**
 * What the Audit page shows, all of it in the URL so a view can be shared: the filters, the page
 * (entries before `before_seq`; none is the newest) and the entry whose details are open, by seq.
 */
export interface AuditView {
  filters: AuditFilters;
  before_seq: number | undefined;
  seq: number | undefined;
}

const seqParam = (text: string | null): number | undefined => {
  const n = Number(text);
  return text !== null && Number.isSafeInteger(n) && n >= 1 ? n : undefined;
};

const validTime = (text: string): string => (text !== "" && !Number.isNaN(Date.parse(text)) ? text : "");

/** The view a URL query asks for; values the API would refuse (an unknown outcome, a bad time) are left out. */
export function parseAuditView(params: URLSearchParams): AuditView {
  const filters = { ...NO_AUDIT_FILTERS };
  for (const key of AUDIT_FILTER_KEYS) filters[key] = params.get(key)?.trim() ?? "";
  if (!isOutcome(filters.outcome)) filters.outcome = "";
  if (!isTargetType(filters.target_type)) filters.target_type = "";
  filters.from = validTime(filters.from);
  filters.to = validTime(filters.to);
  return { filters, before_seq: seqParam(params.get("before_seq")), seq: seqParam(params.get("seq")) };
}

/** The URL query of a view: only what is set, in a stable order. */
export function auditViewParams(view: AuditView): URLSearchParams {
  const params = new URLSearchParams();
  for (const key of AUDIT_FILTER_KEYS) if (view.filters[key] !== "") params.set(key, view.filters[key]);
  if (view.before_seq !== undefined) params.set("before_seq", String(view.before_seq));
  if (view.seq !== undefined) params.set("seq", String(view.seq));
  return params;
}

/** The list's API query: the filters and the page (toSearch drops what is blank). */
export const auditListQuery = (view: AuditView): Query => ({
  ...view.filters,
  before_seq: view.before_seq,
  limit: AUDIT_PAGE_SIZE,
});

export type AuditExportFormat = "jsonl" | "csv";

/** The export's API query: the same filters, the whole filtered trail (not the page on screen). */
export const auditExportQuery = (filters: AuditFilters, format: AuditExportFormat): Query => ({
  format,
  ...filters,
});

/** Who made a change, as the list names them: their email, else their user id. */
export const actorLabel = (actor: AuditActor): string => actor.email || actor.user_id || "—";

type BrokenReason = NonNullable<AuditVerification["broken"]>["reason"];

/** How the chain breaks at an entry, in words (packages/audit README). */
export const BROKEN_REASONS: Record<BrokenReason, string> = {
  hash_mismatch: "this entry was edited",
  prev_hash_mismatch: "an entry before it was replaced",
  seq_gap: "an entry before it was removed",
};

const entries = (n: number) => `${n.toLocaleString("en-US")} ${n === 1 ? "entry" : "entries"}`;

/** What a verification found: "Intact: 6 entries checked (seq 1–6)", or the first broken link. */
export function verificationText(result: AuditVerification): string {
  if (result.broken) {
    const { seq, id, reason } = result.broken;
    return `Broken at seq ${seq} (entry ${id}): ${BROKEN_REASONS[reason]}. ${entries(result.checked)} before it verified.`;
  }
  const { first_seq: first, last_seq: last } = result;
  const range =
    first === undefined || last === undefined ? "" : ` (seq ${first === last ? first : `${first}–${last}`})`;
  return `Intact: ${entries(result.checked)} checked${range}`;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** JSON with object keys sorted, so two values compare equal whatever order their keys were stored in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (isRecord(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "undefined";
}

/**
 * The top-level fields a change touched: those whose value differs between `before` and `after`,
 * added or removed ones included. Only when both are objects: a create or a delete changes all of
 * it, which highlighting every line would not tell anyone.
 */
export function changedFields(before: unknown, after: unknown): string[] {
  if (!isRecord(before) || !isRecord(after)) return [];
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  return keys.filter((key) => canonical(before[key]) !== canonical(after[key]));
}

/** A line (or, for a nested value, several) of formatted JSON and whether its field changed. */
export interface JsonLine {
  text: string;
  changed: boolean;
}

/**
 * A value as indented JSON cut at its top-level fields, so each field's lines can be highlighted
 * when it is among `changed`. Anything but an object is one block.
 */
export function jsonLines(value: unknown, changed: readonly string[]): JsonLine[] {
  if (!isRecord(value)) return [{ text: JSON.stringify(value, null, 2) ?? "", changed: false }];
  const keys = Object.keys(value);
  if (keys.length === 0) return [{ text: "{}", changed: false }];
  const fields = keys.map((key, i) => {
    const json = (JSON.stringify(value[key], null, 2) ?? "null").replaceAll("\n", "\n  ");
    return {
      text: `  ${JSON.stringify(key)}: ${json}${i < keys.length - 1 ? "," : ""}`,
      changed: changed.includes(key),
    };
  });
  return [{ text: "{", changed: false }, ...fields, { text: "}", changed: false }];
}
