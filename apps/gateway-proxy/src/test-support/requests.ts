import type { GatewayRequestEvent } from "@agentnet/contracts";

/** A streamed request on the OpenAI wire (chat completions) or Anthropic's (messages). */
export function streamedRequest(proxyUrl: string, token: string, wire: "openai" | "anthropic") {
  const anthropic = wire === "anthropic";
  return fetch(`${proxyUrl}${anthropic ? "/v1/messages" : "/v1/chat/completions"}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      ...(anthropic ? { "anthropic-version": "2023-06-01" } : {}),
    },
    body: JSON.stringify({
      model: anthropic ? "claude-sonnet-4-5" : "gpt-4o",
      max_tokens: 64,
      messages: [{ role: "user", content: "hi" }],
      stream: true,
    }),
  });
}

/** The answer's status, `retry-after` and whole body. */
export async function answerOf(response: Promise<Response>) {
  const res = await response;
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.text() };
}

/** Keeps the events a proxy publishes, for its `publish` option. */
export function keptEvents() {
  const events: GatewayRequestEvent[] = [];
  return {
    events,
    publish: async (_subject: string, event: unknown) => {
      events.push(event as GatewayRequestEvent);
    },
    of: (accountId: string) => events.filter((event) => event.account_id === accountId),
  };
}
