import { randomUUID } from "node:crypto";
import { AppError, type HttpErrorBody, invalidInput } from "@agentnet/contracts";
import type { Logger } from "@agentnet/service-kit";
import type { ErrorRequestHandler, RequestHandler } from "express";
import { ZodError } from "zod";

const body = (error: AppError): HttpErrorBody => ({
  message: error.message,
  code: error.status,
  reason: error.code,
  ...(error.details ? { details: error.details } : {}),
});

/** Express's own body-parser errors carry a `type` and a `status`. */
interface ParserError {
  type: string;
  status: number;
}
const isParserError = (error: unknown): error is ParserError =>
  typeof error === "object" && error !== null && "type" in error && "status" in error;

/** The client's error or the service's refusal an error stands for; undefined for a failure of ours (500). */
export function toAppError(error: unknown): AppError | undefined {
  if (error instanceof AppError) return error;
  if (error instanceof ZodError) return invalidInput(error);
  // Express decodes `:id` parameters; a malformed escape (`/providers/%ff`) is the client's error.
  if (error instanceof URIError) {
    return new AppError(400, "bad_request", "the request path has a malformed percent-encoding");
  }
  if (!isParserError(error)) return undefined;
  if (error.type === "entity.parse.failed") {
    return new AppError(400, "bad_request", "request body is not valid JSON");
  }
  if (error.type === "entity.verify.failed") {
    return new AppError(400, "bad_request", "request body is not valid UTF-8");
  }
  if (error.type === "entity.too.large") {
    return new AppError(413, "payload_too_large", "request body is too large");
  }
  if (error.status < 500) return new AppError(error.status, "bad_request", "request body could not be read");
  return undefined;
}

/**
 * The one place errors become HTTP: AppError keeps its status, a ZodError is 400 with the issues,
 * body-parser failures keep theirs, anything else is 500 with an id that is also logged.
 */
export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    const appError = toAppError(error);
    if (!appError) {
      const errorId = randomUUID();
      logger.error({ err: error, error_id: errorId, method: req.method, path: req.path }, "unhandled error");
      res
        .status(500)
        .json({ message: "internal error", code: 500, error_id: errorId } satisfies HttpErrorBody);
      return;
    }
    if (appError.status >= 500)
      logger.warn({ status: appError.status, reason: appError.code, path: req.path }, appError.message);
    res.status(appError.status).json(body(appError));
  };
}

export const notFoundRoute: RequestHandler = (req, _res, next) => {
  next(new AppError(404, "not_found", `no route for ${req.method} ${req.path}`));
};
