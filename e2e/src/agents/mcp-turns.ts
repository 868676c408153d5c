import type { FakeToolCall, FakeTurns, SeenRequest } from "../upstream";

/**
 * The fake vendor's side of an agent's MCP tool calls: turns that call tools one after another, and
 * reading back from the agent's requests what it was shown and what the tools answered. Anthropic
 * Messages for Claude Code, the Responses API for Codex.
 */

type Body = Record<string, unknown>;
type Block = { type?: string; tool_use_id?: string; content?: unknown };
type InputItem = { type?: string; call_id?: string; output?: unknown };

/** The names of a request's tools (Codex: each MCP server is one namespace, named here). */
export const toolNames = (body: Body) =>
  ((body.tools as { name?: string }[] | undefined) ?? []).map((tool) => tool.name);

/** The tool names after `prefix` a request body mentions anywhere (its tools, or a list of deferred ones). */
export const mentionedTools = (request: SeenRequest | undefined, prefix: string) =>
  [...new Set(request?.text.match(new RegExp(`${prefix}[A-Za-z0-9_-]+`, "g")) ?? [])]
    .map((name) => name.slice(prefix.length))
    .sort();

/** The content of the tool_result answering `id` in an Anthropic request, if it holds one. */
export function toolResultOf(body: Body, id: string): unknown {
  for (const message of (body.messages as { content?: unknown }[] | undefined) ?? []) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content as Block[])
      if (block.type === "tool_result" && block.tool_use_id === id) return block.content;
  }
  return undefined;
}

/** The tool_result answering `id` in the first of `seen` that holds one. */
export const claudeToolResult = (seen: SeenRequest[], id: string) =>
  seen.map((request) => toolResultOf(request.body, id)).find((content) => content !== undefined);

/**
 * Claude Code's turns calling `calls` in order, then the text reply. Claude Code 2.1.332 defers MCP
 * tools even with a custom base URL: its first request lists them by name in a system reminder and
 * offers ToolSearch, which loads tools' schemas (they then appear in `tools`, deferred). So: one
 * search selecting every tool to call unless the next is loaded, then each call once the previous
 * one was answered. Requests without tools (its side requests) get the text reply.
 */
export const claudeTurns =
  (calls: FakeToolCall[]): FakeTurns =>
  (body) => {
    const names = toolNames(body);
    const next = calls.find((call) => toolResultOf(body, call.id) === undefined);
    if (names.length === 0 || !next) return undefined;
    if (names.includes(next.name)) return next;
    if (names.includes("ToolSearch") && toolResultOf(body, "toolu_search") === undefined) {
      const select = `select:${calls.map((call) => call.name).join(",")}`;
      return { id: "toolu_search", name: "ToolSearch", input: { query: select, max_results: 5 } };
    }
    return undefined;
  };

const inputItems = (body: Body) => (body.input as InputItem[] | undefined) ?? [];

/** The function_call_output answering `id` in the first of `seen` that holds one. */
export const codexToolOutput = (seen: SeenRequest[], id: string) =>
  seen
    .flatMap((request) => inputItems(request.body))
    .find((item) => item.type === "function_call_output" && item.call_id === id)?.output;

/**
 * Codex's turns calling `calls` in order in the Responses API namespace `namespace` (Codex 0.171
 * lists each MCP server's tools as one, `mcp__{its name for the server}`), then the text reply.
 * Requests that do not list the namespace get the text reply.
 */
export const codexTurns =
  (namespace: string, calls: FakeToolCall[]): FakeTurns =>
  (body) => {
    if (!toolNames(body).includes(namespace)) return undefined;
    const answered = new Set(
      inputItems(body).flatMap((item) => (item.type === "function_call_output" ? [item.call_id] : [])),
    );
    const next = calls.find((call) => !answered.has(call.id));
    return next && { ...next, namespace };
  };

/** The function names Codex listed in `namespace` in the first of `seen` that lists it, sorted. */
export function codexListed(seen: SeenRequest[], namespace: string): string[] | undefined {
  const first = seen.find((request) => toolNames(request.body).includes(namespace));
  const listed = (first?.body.tools as { name?: string; tools?: { name: string }[] }[] | undefined)?.find(
    (tool) => tool.name === namespace,
  );
  return listed?.tools?.map((tool) => tool.name).sort();
}
