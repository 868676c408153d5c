import type { AccessLogPage, McpServer } from "@agentnet/contracts";
import { startTestMcpServer, type TestMcpServer } from "@agentnet/gateway-proxy/test-support/mcp-server";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Account, configure, readUntil } from "../setup";
import { type Stack, startStack } from "../stack";
import type { SeenRequest } from "../upstream";
import { runClaude } from "./claude-code";
import { runCodex } from "./codex";

/** The team's tool server takes an API key of its own, which only the gateway holds. */
const SERVER_KEY = "srv-key-mcp-e2e-4c1d";
/** The server's name in the account: its path on the proxy (`/mcp/issues`) and its tools' prefix. */
const SERVER = "issues";
/** What the agent asks the echo tool to say back: found again in the tool result the vendor gets. */
const ECHOED = "ping 7f3a through the gateway";
/** Every tool the test server lists; the policy leaves delete_issue out (`delete_*`). */
const GRANTED = ["echo", "get_issue", "summarize"];

let stack: Stack;
let tools: TestMcpServer;
beforeAll(async () => {
  tools = await startTestMcpServer({ requiredHeader: { name: "X-Api-Key", value: SERVER_KEY } });
  stack = await startStack({
    telemetry: true,
    // The tool server listens on loopback, refused unless allowed by address and port.
    proxy: { allowedPrivateUpstreams: [new URL(tools.url).host] },
  });
});
afterEach(() => {
  stack.anthropic.turns = undefined;
  stack.openai.turns = undefined;
});
afterAll(async () => {
  await stack?.stop();
  await tools?.stop();
});

/**
 * An account configured as an operator would: the tool server with its key as a header
 * credential, and a policy granting the All group the vendor's provider and the server but no
 * delete_* tool.
 */
async function withToolServer(providerOf: (account: Account) => string) {
  const account = await stack.newAccount();
  const server = await account.must(
    stack.api<McpServer>("POST", "/agent-network/mcp-servers", account.token, {
      name: SERVER,
      url: tools.url,
      credential: { kind: "header", header_name: "X-Api-Key", value: SERVER_KEY },
    }),
  );
  const policy = await configure(stack, account).policy([providerOf(account)], {
    mcp_servers: [{ server_id: server.id, exclude_tools: ["delete_*"] }],
  });
  return { account, server, policy, endpoint: `${stack.proxy.url}/mcp/${SERVER}` };
}

/** Every request the tool server got since `from`: each with its own key, never the caller's token. */
function expectServerCredentialOnly(from: number, token: string) {
  const received = tools.received.slice(from);
  expect(received.length).toBeGreaterThan(0);
  for (const headers of received) {
    expect(headers["x-api-key"]).toBe(SERVER_KEY);
    expect(JSON.stringify(headers)).not.toContain(token);
  }
}

/** The tool call's access-log row, read through the API once telemetry has it. */
async function toolCallRows(account: Account) {
  const page = await readUntil(
    () => account.must(stack.api<AccessLogPage>("GET", "/agent-network/access-logs", account.token)),
    (logs) => logs.data.some((entry) => entry.provider === "mcp"),
  );
  return page.data.filter((entry) => entry.provider === "mcp");
}

/**
 * The row a granted echo call leaves: provider `mcp`, model `{server}__{tool}`, what was called, in
 * the MCP session's own session (neither agent sends its conversation's id to an MCP server).
 */
const echoRow = (server: McpServer, policyId: string) => ({
  provider: "mcp",
  model: `${SERVER}__echo`,
  session_id: expect.stringMatching(/^mcp-/),
  decision: "allow",
  deny_reason: "",
  status_code: 200,
  resolved_provider_id: server.id,
  selected_policy_id: policyId,
  tool_call: {
    server_id: server.id,
    server: SERVER,
    tool: "echo",
    request_bytes: expect.any(Number),
    response_bytes: expect.any(Number),
  },
});

/** The server's tool names a request body mentions anywhere (its tools, or a list of deferred ones). */
const mentionedTools = (request: SeenRequest | undefined, prefix: string) =>
  [...new Set(request?.text.match(new RegExp(`${prefix}[A-Za-z0-9_-]+`, "g")) ?? [])]
    .map((name) => name.slice(prefix.length))
    .sort();

type Block = { type?: string; tool_use_id?: string; content?: unknown };

/** The content of the tool_result answering `id` in an Anthropic request, if it holds one. */
function toolResultOf(body: Record<string, unknown>, id: string): unknown {
  for (const message of (body.messages as { content?: unknown }[] | undefined) ?? []) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content as Block[])
      if (block.type === "tool_result" && block.tool_use_id === id) return block.content;
  }
  return undefined;
}

const toolNames = (body: Record<string, unknown>) =>
  ((body.tools as { name?: string }[] | undefined) ?? []).map((tool) => tool.name);

describe("Claude Code calls a granted MCP tool through /mcp/{server} (the real CLI)", () => {
  it("lists only granted tools, runs echo with the server's key, and logs the call as a row", async () => {
    const { account, server, policy, endpoint } = await withToolServer((a) => a.anthropicProvider.id);
    // Claude Code names an MCP tool mcp__{its name for the server}__{tool}.
    const echo = `mcp__${SERVER}__echo`;
    stack.anthropic.reply = "The tool said it back.";
    // Claude Code 2.1.331 defers MCP tools even with a custom base URL: its first request lists
    // them by name in a system reminder and offers ToolSearch, which loads a tool's schema (the tool
    // then appears in `tools`, deferred). So: search for echo unless it is loaded, call it, answer.
    stack.anthropic.turns = (body) => {
      const names = toolNames(body);
      if (names.length === 0 || toolResultOf(body, "toolu_echo") !== undefined) return undefined;
      if (names.includes(echo)) return { id: "toolu_echo", name: echo, input: { text: ECHOED } };
      if (names.includes("ToolSearch"))
        return { id: "toolu_search", name: "ToolSearch", input: { query: `select:${echo}`, max_results: 5 } };
      return undefined;
    };
    const seenBefore = stack.anthropic.seen.length;
    const receivedBefore = tools.received.length;
    const calledBefore = tools.called.length;

    const run = await runClaude({
      baseUrl: stack.proxy.url,
      token: account.token,
      prompt: "echo something through the issues server",
      model: "claude-sonnet-4-5",
      // As a user adds the gateway's server; -p runs no tool it was not allowed.
      mcpServers: [{ name: SERVER, url: endpoint, headers: { Authorization: `Bearer ${account.token}` } }],
      args: ["--allowedTools", echo],
      timeoutMs: 120_000,
    });
    expect(run.json, run.stderr || run.stdout).toMatchObject({
      is_error: false,
      result: stack.anthropic.reply,
    });

    const seen = stack.anthropic.seen.slice(seenBefore);
    // The tools its first turn was shown: the granted ones, never delete_issue.
    const first = seen.find((request) => toolNames(request.body).length > 0);
    expect(mentionedTools(first, `mcp__${SERVER}__`)).toEqual(GRANTED);
    expect(tools.called.slice(calledBefore)).toEqual(["echo"]);
    expectServerCredentialOnly(receivedBefore, account.token);
    // The tool's answer went back to the vendor as the echo call's result.
    const answered = seen.find((request) => toolResultOf(request.body, "toolu_echo") !== undefined);
    expect(JSON.stringify(toolResultOf(answered?.body ?? {}, "toolu_echo"))).toContain(ECHOED);

    const rows = await toolCallRows(account);
    expect(rows).toEqual([expect.objectContaining(echoRow(server, policy.id))]);
    expect(rows[0]?.tool_call?.request_bytes).toBeGreaterThan(0);
    expect(rows[0]?.tool_call?.response_bytes).toBeGreaterThan(0);
  });
});

describe("Codex calls a granted MCP tool through /mcp/{server} (the real CLI)", () => {
  it("lists only granted tools, runs echo with the server's key, and logs the call as a row", async () => {
    const { account, server, policy, endpoint } = await withToolServer((a) => a.openaiProvider.id);
    // Codex 0.169 lists each MCP server's tools as one Responses API namespace, mcp__{its name}.
    const namespace = `mcp__${SERVER}`;
    stack.openai.reply = "The tool said it back.";
    stack.openai.turns = (body) => {
      const input = (body.input as { type?: string; call_id?: string }[] | undefined) ?? [];
      if (!toolNames(body).includes(namespace)) return undefined;
      if (input.some((item) => item.type === "function_call_output" && item.call_id === "call_echo"))
        return undefined;
      return { id: "call_echo", name: "echo", namespace, input: { text: ECHOED } };
    };
    const seenBefore = stack.openai.seen.length;
    const receivedBefore = tools.received.length;
    const calledBefore = tools.called.length;

    const run = await runCodex({
      baseUrl: stack.proxy.url,
      token: account.token,
      prompt: "echo something through the issues server",
      model: "gpt-5",
      // The gateway's server with the agentnet token from the environment; `codex exec` runs
      // under approval policy "never", which refuses an MCP call unless the tool is pre-approved.
      config: [
        `[mcp_servers.${SERVER}]`,
        `url = "${endpoint}"`,
        `bearer_token_env_var = "AGN_MCP_TOKEN"`,
        `[mcp_servers.${SERVER}.tools.echo]`,
        `approval_mode = "approve"`,
        "",
      ].join("\n"),
      env: { AGN_MCP_TOKEN: account.token },
      timeoutMs: 120_000,
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toContain(stack.openai.reply);

    const seen = stack.openai.seen.slice(seenBefore);
    // The tools its first turn was shown: the granted ones, never delete_issue.
    const first = seen.find((request) => toolNames(request.body).includes(namespace));
    const listed = (first?.body.tools as { name?: string; tools?: { name: string }[] }[] | undefined)?.find(
      (tool) => tool.name === namespace,
    );
    expect(listed?.tools?.map((tool) => tool.name).sort()).toEqual(GRANTED);
    expect(tools.called.slice(calledBefore)).toEqual(["echo"]);
    expectServerCredentialOnly(receivedBefore, account.token);
    // The tool's answer went back to the vendor as the function call's output.
    const outputs = seen.flatMap((request) =>
      (
        (request.body.input as { type?: string; call_id?: string; output?: unknown }[] | undefined) ?? []
      ).filter((item) => item.type === "function_call_output" && item.call_id === "call_echo"),
    );
    expect(JSON.stringify(outputs[0]?.output)).toContain(ECHOED);

    const rows = await toolCallRows(account);
    expect(rows).toEqual([expect.objectContaining(echoRow(server, policy.id))]);
    expect(rows[0]?.tool_call?.request_bytes).toBeGreaterThan(0);
    expect(rows[0]?.tool_call?.response_bytes).toBeGreaterThan(0);
  });
});
