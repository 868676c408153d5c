import { z } from "zod";

/**
 * The one error envelope. It travels across every NATS hop unchanged; only the api-gateway
 * turns it into HTTP (`{message, code: status, reason?, details?}`).
 */
export const ErrorDetail = z.object({ path: z.string(), message: z.string() });
export type ErrorDetail = z.infer<typeof ErrorDetail>;

export const ErrorEnvelope = z.object({
  status: z.number().int().min(400).max(599),
  /** Machine-readable reason, e.g. `settings.exists` or `llm_policy.token_cap_exceeded`. */
  code: z.string(),
  message: z.string(),
  details: z.array(ErrorDetail).optional(),
});
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>;

/** The HTTP error body of the public API. `code` repeats the HTTP status, as the spec's clients expect. */
export const HttpErrorBody = z.object({
  message: z.string(),
  code: z.number().int(),
  reason: z.string().optional(),
  details: z.array(ErrorDetail).optional(),
  error_id: z.string().optional(),
});
export type HttpErrorBody = z.infer<typeof HttpErrorBody>;

export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: ErrorDetail[] | undefined;

  constructor(status: number, code: string, message: string, details?: ErrorDetail[]) {
    super(message);
    this.name = "AppError";
    this.status = status;
    this.code = code;
    this.details = details;
  }

  toEnvelope(): ErrorEnvelope {
    return {
      status: this.status,
      code: this.code,
      message: this.message,
      ...(this.details ? { details: this.details } : {}),
    };
  }

  static fromEnvelope(envelope: ErrorEnvelope): AppError {
    return new AppError(envelope.status, envelope.code, envelope.message, envelope.details);
  }
}

export const badRequest = (message: string, details?: ErrorDetail[]) =>
  new AppError(400, "bad_request", message, details);
export const unauthenticated = (message = "missing or invalid API token") =>
  new AppError(401, "unauthenticated", message);
export const forbidden = (message = "your role may not do this") => new AppError(403, "forbidden", message);
export const notFound = (what: string) => new AppError(404, "not_found", `${what} not found`);
export const conflict = (code: string, message: string) => new AppError(409, code, message);
export const preconditionFailed = (code: string, message: string) => new AppError(412, code, message);
export const unprocessable = (code: string, message: string, details?: ErrorDetail[]) =>
  new AppError(422, code, message, details);

/** Turns zod issues into the envelope's field-level details. */
export const detailsFromZod = (error: z.ZodError): ErrorDetail[] =>
  error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message }));

export const invalidInput = (error: z.ZodError, what = "request") =>
  badRequest(
    `invalid ${what}: ${error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}`,
    detailsFromZod(error),
  );
