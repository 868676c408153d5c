import { type Logger, pino } from "pino";

export type { Logger };

/** JSON logs on stdout; secrets never reach them because these paths are redacted. */
export function createLogger(service: string, level: string): Logger {
  return pino({
    name: service,
    level,
    base: { service },
    redact: {
      paths: [
        "api_key",
        "*.api_key",
        "token",
        "*.token",
        "authorization",
        "*.authorization",
        "req.headers.authorization",
      ],
      censor: "[redacted]",
    },
  });
}
