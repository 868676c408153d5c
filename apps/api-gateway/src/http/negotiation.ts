import { AppError } from "@agentnet/contracts";
import type { RequestHandler } from "express";

/** The API speaks JSON only: a body must say so, and a client must accept it. */
export const jsonOnly: RequestHandler = (req, _res, next) => {
  if (!req.accepts("application/json")) {
    next(new AppError(406, "not_acceptable", "this API answers application/json only"));
    return;
  }
  const hasBody =
    Number(req.headers["content-length"] ?? 0) > 0 || req.headers["transfer-encoding"] !== undefined;
  if (hasBody && !req.is("application/json")) {
    next(new AppError(415, "unsupported_media_type", "send request bodies as application/json"));
    return;
  }
  next();
};
