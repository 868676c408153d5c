import type { HttpErrorBody } from "@agentnet/contracts";

/** An answer of the API that is not 2xx, with the body's message and field-level details. */
export class ApiError extends Error {
  readonly status: number;
  readonly reason: string | undefined;
  readonly details: { path: string; message: string }[];

  constructor(status: number, body: Partial<HttpErrorBody> | undefined, fallback: string) {
    super(body?.message ?? fallback);
    this.name = "ApiError";
    this.status = status;
    this.reason = body?.reason;
    this.details = body?.details ?? [];
  }

  /** The message of the detail at `path` (or below it), e.g. "limits.token_limit.window_seconds". */
  fieldMessage(path: string): string | undefined {
    const hit = this.details.find((d) => {
      const p = normalisePath(d.path);
      return p === path || p.startsWith(`${path}.`);
    });
    return hit?.message;
  }
}

// Some services nest the body under "body." in their paths; the form fields do not.
const normalisePath = (path: string) => path.replace(/^body\./, "");

export type Query = Record<string, string | number | readonly string[] | undefined>;

export const toSearch = (query: Query): string => {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === "") continue;
    if (Array.isArray(value)) for (const item of value) params.append(key, String(item));
    else params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
};

/** Said on `window` when the API refuses the token (revoked, expired, blocked user): the app signs out. */
export const UNAUTHORIZED_EVENT = "agentnet:unauthorized";

/** One API call with the caller's token; throws ApiError for any non-2xx answer. */
export async function apiFetch<T>(
  token: string,
  method: "GET" | "POST" | "PUT" | "DELETE",
  path: string,
  body?: unknown,
): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json", authorization: `Token ${token}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  } catch {
    throw new ApiError(0, undefined, "The API did not answer. Is the stack running?");
  }
  const text = await response.text();
  const parsed: unknown = text ? safeJson(text) : undefined;
  if (!response.ok) {
    if (response.status === 401) window.dispatchEvent(new Event(UNAUTHORIZED_EVENT));
    const errorBody = isObject(parsed) ? (parsed as Partial<HttpErrorBody>) : undefined;
    throw new ApiError(response.status, errorBody, `${method} ${path} answered ${response.status}`);
  }
  return parsed as T;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
