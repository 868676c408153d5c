import { type AppError, MCP_VERIFY_REFUSALS, unprocessable } from "@agentnet/contracts";
import { type DialFailure, TLS_HINT, UNREACHABLE_HINT } from "./outcomes";

/** The result of the answer to request `id`, from a JSON body or an event stream; undefined when absent. */
export function mcpResult(
  contentType: string,
  text: string,
  id: number,
): Record<string, unknown> | undefined {
  const messages = contentType.includes("text/event-stream")
    ? text
        .split(/\r?\n\r?\n/)
        .map((event) =>
          event
            .split(/\r?\n/)
            .filter((line) => line.startsWith("data:"))
            .map((line) => line.slice(5).trimStart())
            .join("\n"),
        )
        .filter((data) => data !== "")
    : [text];
  for (const data of messages) {
    let message: unknown;
    try {
      message = JSON.parse(data);
    } catch {
      continue;
    }
    if (typeof message !== "object" || message === null) continue;
    const { id: answered, result } = message as { id?: unknown; result?: unknown };
    if (answered === id && typeof result === "object" && result !== null && !Array.isArray(result)) {
      return result as Record<string, unknown>;
    }
  }
  return undefined;
}

/** The 422 for a dial that failed, in an MCP server's words. */
export function mcpRefusalForFailure(failure: DialFailure): AppError {
  switch (failure.kind) {
    case "unresolvable":
      return unprocessable(
        MCP_VERIFY_REFUSALS.unresolvable,
        `the MCP server's host ${failure.host} does not resolve (${failure.code})`,
      );
    case "unreachable":
      return unprocessable(
        MCP_VERIFY_REFUSALS.unreachable,
        `the MCP server at ${failure.host} ${UNREACHABLE_HINT[failure.code] ?? "did not answer"} (${failure.code})`,
      );
    case "tls":
      return unprocessable(
        MCP_VERIFY_REFUSALS.unreachable,
        `TLS with ${failure.host} failed: ${TLS_HINT[failure.code] ?? "the handshake or certificate check failed"} (${failure.code})`,
      );
    case "timeout":
      return unprocessable(
        MCP_VERIFY_REFUSALS.timeout,
        failure.phase === "resolve"
          ? `resolving ${failure.host} took longer than ${failure.timeoutMs} ms`
          : `the MCP server at ${failure.host} did not answer within ${failure.timeoutMs} ms`,
      );
    case "too_large":
      return unprocessable(
        MCP_VERIFY_REFUSALS.badResponse,
        `the MCP server at ${failure.host} answered more than ${failure.limitBytes} bytes`,
      );
    case "not_json":
    case "bad_shape":
      return unprocessable(
        MCP_VERIFY_REFUSALS.badResponse,
        `the MCP server at ${failure.host} did not answer as an MCP server${failure.kind === "bad_shape" ? `: ${failure.why}` : ""}`,
      );
  }
}

/** The 422 for an answer that is not a 2xx, in an MCP server's words; undefined for a 2xx. */
export function mcpRefusalForStatus(status: number, host: string): AppError | undefined {
  if (status >= 200 && status < 300) return undefined;
  if (status === 401 || status === 403) {
    return unprocessable(
      MCP_VERIFY_REFUSALS.rejectedCredential,
      `the MCP server rejected the credential (HTTP ${status})`,
    );
  }
  if (status >= 500) {
    return unprocessable(
      MCP_VERIFY_REFUSALS.outage,
      `the MCP server at ${host} is failing (HTTP ${status}); try again later`,
    );
  }
  return unprocessable(
    MCP_VERIFY_REFUSALS.badResponse,
    `the MCP server at ${host} answered HTTP ${status}${status >= 300 && status < 400 ? " (redirects are not followed)" : ""}`,
  );
}
