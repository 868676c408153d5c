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

/**
 * How the dashboard proves who it is: an API token it holds, or the session cookie of a sign-in
 * with the identity provider, which the browser sends by itself (scripts never see it) and whose
 * changes carry the CSRF token `GET /api/auth/session` gave.
 */
export type Credentials = { token: string } | { csrfToken: string };

type Method = "GET" | "POST" | "PUT" | "DELETE";

const authHeaders = (credentials: Credentials, method: Method): Record<string, string> => {
  if ("token" in credentials) return { authorization: `Token ${credentials.token}` };
  return method === "GET" ? {} : { "x-csrf-token": credentials.csrfToken };
};

/** One API call as the caller; throws ApiError for any non-2xx answer. */
export async function apiFetch<T>(
  credentials: Credentials,
  method: Method,
  path: string,
  body?: unknown,
): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json", ...authHeaders(credentials, method) };
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
  if (!response.ok) throw refusal(response.status, parsed, `${method} ${path} answered ${response.status}`);
  return parsed as T;
}

/** The ApiError of a non-2xx answer; a 401 also tells the app to sign out. */
function refusal(status: number, parsed: unknown, fallback: string): ApiError {
  if (status === 401) window.dispatchEvent(new Event(UNAUTHORIZED_EVENT));
  return new ApiError(status, isObject(parsed) ? (parsed as Partial<HttpErrorBody>) : undefined, fallback);
}

/** A file the API answers (an export) and the name it gives it. */
export interface Download {
  blob: Blob;
  name: string;
}

/**
 * A file read as the caller, whole, to be saved from the page: a plain link cannot send
 * the Authorization header. The name is the answer's `Content-Disposition` filename, else `fallbackName`.
 */
export async function apiDownload(
  credentials: Credentials,
  path: string,
  fallbackName: string,
): Promise<Download> {
  let response: Response;
  try {
    response = await fetch(path, { headers: authHeaders(credentials, "GET") });
  } catch {
    throw new ApiError(0, undefined, "The API did not answer. Is the stack running?");
  }
  if (!response.ok) {
    const text = await response.text();
    throw refusal(
      response.status,
      text ? safeJson(text) : undefined,
      `GET ${path} answered ${response.status}`,
    );
  }
  try {
    const blob = await response.blob();
    return { blob, name: attachmentName(response.headers.get("content-disposition")) ?? fallbackName };
  } catch {
    // A stream the API cut midway (its store failed after the first rows) is no file to keep.
    throw new ApiError(0, undefined, "The download stopped before its end; nothing was saved. Try again.");
  }
}

/** The filename of a `Content-Disposition: attachment; filename="..."` header, when it names one. */
export function attachmentName(header: string | null): string | undefined {
  const match = header ? /filename="?([^";]+)"?/i.exec(header) : null;
  return match?.[1]?.trim() || undefined;
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
