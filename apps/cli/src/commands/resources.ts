import type { CliEnv } from "../env";

/** The API collections the CLI manages, by the name the command takes. */
export const RESOURCES = {
  providers: {
    path: "/agent-network/providers",
    columns: ["id", "name", "provider_id", "upstream_url", "enabled"],
  },
  policies: {
    path: "/agent-network/policies",
    columns: ["id", "name", "enabled", "destination_provider_ids"],
  },
  guardrails: { path: "/agent-network/guardrails", columns: ["id", "name"] },
  "budget-rules": { path: "/agent-network/budget-rules", columns: ["id", "name", "enabled"] },
  users: { path: "/users", columns: ["id", "email", "role", "status"] },
  groups: { path: "/groups", columns: ["id", "name", "users_count"] },
  tokens: { path: "/users/{user}/tokens", columns: ["id", "name", "expiration_date", "last_used"] },
} as const;
export type ResourceName = keyof typeof RESOURCES;

export interface ResourceCall {
  resource: ResourceName;
  action: "list" | "create" | "delete";
  /** The API token to act with (`--token` or AGN_TOKEN). */
  token: string;
  /** tokens only: whose tokens. */
  user?: string | undefined;
  /** create: the JSON body, as the API takes it (docs/API.md, /api/openapi.json). */
  body?: string | undefined;
  /** delete: the id. */
  id?: string | undefined;
}

/** One call of `agentnet <resource> list|create|delete` against the API; returns what it answered. */
export async function callResource(env: CliEnv, call: ResourceCall): Promise<unknown> {
  const spec = RESOURCES[call.resource];
  if (spec.path.includes("{user}") && !call.user) throw new Error(`${call.resource} needs --user <user id>`);
  const collection = `http://${env.AGN_API_HOST}:${env.AGN_API_PORT}/api${spec.path.replace("{user}", call.user ?? "")}`;
  const url = call.action === "delete" ? `${collection}/${encodeURIComponent(call.id ?? "")}` : collection;
  const method = { list: "GET", create: "POST", delete: "DELETE" }[call.action];
  const response = await fetch(url, {
    method,
    headers: {
      authorization: `Token ${call.token}`,
      accept: "application/json",
      "content-type": "application/json",
    },
    ...(call.action === "create" ? { body: call.body ?? "{}" } : {}),
  });
  const text = await response.text();
  const answer: unknown = text ? JSON.parse(text) : undefined;
  if (!response.ok) {
    const message = (answer as { message?: string } | undefined)?.message ?? text;
    throw new Error(`${method} ${new URL(url).pathname} answered ${response.status}: ${message}`);
  }
  return answer;
}

/** Rows as an aligned text table of `columns`; arrays are joined, missing values are "-". */
export function table(rows: readonly Record<string, unknown>[], columns: readonly string[]): string[] {
  const cell = (value: unknown) =>
    value === undefined || value === null || value === ""
      ? "-"
      : Array.isArray(value)
        ? value.join(",")
        : String(value);
  const cells = rows.map((row) => columns.map((column) => cell(row[column])));
  const widths = columns.map((column, index) =>
    Math.max(column.length, ...cells.map((row) => row[index]?.length ?? 0)),
  );
  const line = (values: readonly string[]) =>
    values
      .map((value, index) => value.padEnd(widths[index] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(columns.map((column) => column.toUpperCase())), ...cells.map(line)];
}
