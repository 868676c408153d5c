import { z } from "zod";

/**
 * JSON-RPC 2.0 as MCP uses it (the message shapes of the MCP schema, 2025-11-25): requests carry
 * an id and a method, notifications a method and no id, responses an id and a result or an error.
 * Params and results stay opaque here: the gateway reads only what its grants need.
 */
export const JsonRpcId = z.union([z.string(), z.number().int()]);
export type JsonRpcId = z.infer<typeof JsonRpcId>;

const Params = z.record(z.string(), z.unknown());

export const JsonRpcRequest = z.object({
  jsonrpc: z.literal("2.0"),
  id: JsonRpcId,
  method: z.string().min(1),
  params: Params.optional(),
});
export type JsonRpcRequest = z.infer<typeof JsonRpcRequest>;

export const JsonRpcNotification = z.object({
  jsonrpc: z.literal("2.0"),
  method: z.string().min(1),
  params: Params.optional(),
});
export type JsonRpcNotification = z.infer<typeof JsonRpcNotification>;

export const JsonRpcResponse = z.union([
  z.object({ jsonrpc: z.literal("2.0"), id: JsonRpcId, result: z.record(z.string(), z.unknown()) }),
  z.object({
    jsonrpc: z.literal("2.0"),
    id: JsonRpcId.nullable(),
    error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }),
  }),
]);
export type JsonRpcResponse = z.infer<typeof JsonRpcResponse>;

/** JSON-RPC's own error codes, and the ones MCP adds. */
export const JSON_RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** Implementation-defined (-32000 to -32099): the gateway's own refusals. */
  gatewayRefusal: -32001,
} as const;

/** One message a client POSTs, as the gateway tells them apart. */
export type ClientMessage =
  | { kind: "request"; message: JsonRpcRequest }
  | { kind: "notification"; message: JsonRpcNotification }
  | { kind: "response"; message: JsonRpcResponse };

/** What is wrong with a POST body, as a JSON-RPC error to answer: the id is null when none can be read. */
export interface MessageProblem {
  id: JsonRpcId | null;
  code: number;
  message: string;
}

/**
 * Reads one POSTed message. Batches (JSON arrays, allowed only by the 2025-03-26 revision and
 * sent by none of today's clients) are refused: each message of one would need its own grant
 * decision and row, and an answer the size of the whole batch.
 */
export function parseClientMessage(text: string): ClientMessage | MessageProblem {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { id: null, code: JSON_RPC.parseError, message: "the body is not JSON" };
  }
  if (Array.isArray(body)) {
    return {
      id: null,
      code: JSON_RPC.invalidRequest,
      message: "JSON-RPC batches are not supported: send one message per POST",
    };
  }
  const request = JsonRpcRequest.safeParse(body);
  if (request.success) return { kind: "request", message: request.data };
  const response = JsonRpcResponse.safeParse(body);
  if (response.success) return { kind: "response", message: response.data };
  const notification = JsonRpcNotification.safeParse(body);
  if (notification.success && !(typeof body === "object" && body !== null && "id" in body)) {
    return { kind: "notification", message: notification.data };
  }
  const id = JsonRpcId.safeParse((body as { id?: unknown } | null)?.id);
  return {
    id: id.success ? id.data : null,
    code: JSON_RPC.invalidRequest,
    message: "not a JSON-RPC 2.0 request, notification or response",
  };
}

export const errorResponse = (id: JsonRpcId | null, code: number, message: string, data?: unknown) => ({
  jsonrpc: "2.0" as const,
  id,
  error: { code, message, ...(data === undefined ? {} : { data }) },
});

/**
 * On `/mcp`, a server's request to the client (sampling, elicitation, roots) travels with an id
 * naming the server's place in the client's session and its own id, so the client's answer, which
 * may reach any proxy, goes back to that server with the id it knows.
 */
export const joinedRequestId = (index: number, id: JsonRpcId): string => `agn~${index}~${JSON.stringify(id)}`;

/** The server's place and its own id in a `joinedRequestId`, or undefined for any other id. */
export function splitJoinedRequestId(id: JsonRpcId | null): { index: number; id: JsonRpcId } | undefined {
  if (typeof id !== "string") return undefined;
  const match = /^agn~(\d{1,4})~(.+)$/s.exec(id);
  if (!match?.[1] || match[2] === undefined) return undefined;
  try {
    const own = JsonRpcId.safeParse(JSON.parse(match[2]));
    return own.success ? { index: Number(match[1]), id: own.data } : undefined;
  } catch {
    return undefined;
  }
}
