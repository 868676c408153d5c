import type { AccessLogPage, McpServer } from "@agentnet/contracts";
import { startTestMcpServer, type TestMcpServer } from "@agentnet/gateway-proxy/test-support/mcp-server";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Account, configure, readUntil } from "../setup";
import { type Stack, startStack } from "../stack";
import { runClaude } from "./claude-code";
import { runCodex } from "./codex";
import {
  claudeToolResult,
  claudeTurns,
  codexListed,
  codexToolOutput,
  codexTurns,
  mentionedTools,
  toolNames,
} from "./mcp-turns";

/** A team's tool server as the account registers it, and the test server standing in for it. */
interface ToolServer {
  /** Its name in the account: its path on the proxy (`/mcp/issues`) and its tools' prefix on `/mcp`. */
  name: string;
  /** The credential header it takes, which only the gateway holds. */
  header: { name: string; value: string };
  /** The policy's tool filter for it, and what that lets through of the tools the test server lists. */
  grant: { include_tools?: string[]; exclude_tools?: string[] };
  granted: string[];
  tools: TestMcpServer;
}

/** One tool an agent calls, with what it sends and what the server answers. */
interface ToolCall {
  server: ToolServer;
  tool: string;
  text: string;
  answer: string;
}

/**
 * A gateway endpoint as a user adds it to the agent: its name there, and whether it is `/mcp`,
 * where every granted server's tools are joined as `{server}__{tool}`, or one server's `/mcp/{server}`.
 */
interface Endpoint {
  name: string;
  path: string;
  joined: boolean;
}

/** A server's tool as the endpoint lists it. */
const listedName = (endpoint: Endpoint, server: ToolServer, tool: string) =>
  endpoint.joined ? `${server.name}__${tool}` : tool;

/** What the agent asks the echo tool to say back: found again in the tool result the vendor gets. */
const ECHOED = "ping 7f3a through the gateway";
/** The gateway's name in the agent when added as `/mcp`. */
const GATEWAY = "agentnet";

let stack: Stack;
let issues: ToolServer;
let docs: ToolServer;
beforeAll(async () => {
  const start = async (server: Omit<ToolServer, "tools">): Promise<ToolServer> => ({
    ...server,
    tools: await startTestMcpServer({ requiredHeader: server.header }),
  });
  issues = await start({
    name: "issues",
    header: { name: "X-Api-Key", value: "srv-key-mcp-e2e-4c1d" },
    grant: { exclude_tools: ["delete_*"] },
    granted: ["echo", "get_issue", "summarize"],
  });
  // A second team's server takes a bearer token: the header the agent sends its agentnet token in.
  docs = await start({
    name: "docs",
    header: { name: "Authorization", value: "Bearer srv-docs-e2e-91b7" },
    grant: { include_tools: ["get_*"] },
    granted: ["get_issue"],
  });
  stack = await startStack({
    telemetry: true,
    // The tool servers listen on loopback, refused unless allowed by address and port.
    proxy: { allowedPrivateUpstreams: [issues, docs].map((server) => new URL(server.tools.url).host) },
  });
});
afterEach(() => {
  stack.anthropic.turns = undefined;
  stack.openai.turns = undefined;
});
afterAll(async () => {
  await stack?.stop();
  await issues?.tools.stop();
  await docs?.tools.stop();
});

const echo = (): ToolCall => ({ server: issues, tool: "echo", text: ECHOED, answer: ECHOED });
const getIssue = (): ToolCall => ({ server: docs, tool: "get_issue", text: "42", answer: "issue 42: open" });
const oneServer = (server: ToolServer): Endpoint => ({
  name: server.name,
  path: `/mcp/${server.name}`,
  joined: false,
});
const allServers: Endpoint = { name: GATEWAY, path: "/mcp", joined: true };

/** An agent's run against `endpoint`, calling `calls` of the tools granted by `servers`. */
interface Scenario {
  endpoint: Endpoint;
  servers: ToolServer[];
  calls: ToolCall[];
  /** The policy's cap on the caller's tool calls in the hour: calls past it are refused. */
  callCap?: number;
}

/** What an agent's tool result holds for a call refused by the tool-call cap. */
const CAPPED = "llm_policy.tool_call_cap_exceeded";

/** The calls the servers run: those within the scenario's cap. */
const servedCalls = ({ calls, callCap }: Scenario) => calls.slice(0, callCap ?? calls.length);

/**
 * An account configured as an operator would: each server with its key as a header credential, and
 * a policy granting the All group the vendor's provider and the servers with their tool filters.
 */
async function withToolServers(
  providerOf: (account: Account) => string,
  servers: ToolServer[],
  callCap?: number,
) {
  const account = await stack.newAccount();
  const registered: McpServer[] = [];
  const grants: Record<string, unknown>[] = [];
  for (const server of servers) {
    const stored = await account.must(
      stack.api<McpServer>("POST", "/agent-network/mcp-servers", account.token, {
        name: server.name,
        url: server.tools.url,
        credential: { kind: "header", header_name: server.header.name, value: server.header.value },
      }),
    );
    registered.push(stored);
    grants.push({ server_id: stored.id, ...server.grant });
  }
  const limits =
    callCap === undefined
      ? {}
      : {
          limits: {
            token_limit: { enabled: false, group_cap: 0, user_cap: 0, window_seconds: 3600 },
            budget_limit: { enabled: false, group_cap_usd: 0, user_cap_usd: 0, window_seconds: 3600 },
            tool_call_limit: { enabled: true, group_cap: 0, user_cap: callCap, window_seconds: 3600 },
          },
        };
  const policy = await configure(stack, account).policy([providerOf(account)], {
    mcp_servers: grants,
    ...limits,
  });
  return { account, registered, policy };
}
type Configured = Awaited<ReturnType<typeof withToolServers>>;

/** What every test server got from now on, to check once the agent is done. */
function watchServers() {
  const from = [issues, docs].map((server) => ({
    server,
    received: server.tools.received.length,
    called: server.tools.called.length,
  }));
  return {
    /**
     * Each server ran exactly the calls meant for it, and every request it got carried its own
     * credential and never the caller's token.
     */
    expectServed(calls: ToolCall[], token: string) {
      for (const { server, received, called } of from) {
        const meant = calls.filter((call) => call.server === server).map((call) => call.tool);
        expect(server.tools.called.slice(called), server.name).toEqual(meant);
        const requests = server.tools.received.slice(received);
        if (meant.length > 0) expect(requests.length).toBeGreaterThan(0);
        for (const headers of requests) {
          expect(headers[server.header.name.toLowerCase()]).toBe(server.header.value);
          expect(JSON.stringify(headers)).not.toContain(token);
        }
      }
    },
  };
}

/** The tools the endpoint lists to the caller: each server's granted ones, never delete_issue. */
const expectedListing = ({ endpoint, servers }: Scenario) =>
  servers.flatMap((server) => server.granted.map((tool) => listedName(endpoint, server, tool))).sort();

/**
 * The row a granted call leaves: provider `mcp`, model `{server}__{tool}` whichever endpoint it came
 * through, what was called, in the MCP session's own session (neither agent sends its
 * conversation's id to an MCP server).
 */
const toolRow = ({ registered, policy }: Configured, call: ToolCall) => {
  const server = registered.find((entry) => entry.name === call.server.name);
  return {
    provider: "mcp",
    model: `${call.server.name}__${call.tool}`,
    session_id: expect.stringMatching(/^mcp-/),
    decision: "allow",
    deny_reason: "",
    status_code: 200,
    resolved_provider_id: server?.id,
    selected_policy_id: policy.id,
    tool_call: {
      server_id: server?.id,
      server: call.server.name,
      tool: call.tool,
      request_bytes: expect.any(Number),
      response_bytes: expect.any(Number),
    },
  };
};

/**
 * One access-log row per call, read through the API once telemetry has them all: those within the
 * cap allowed, those past it denied by the cap with 429.
 */
async function expectToolCallRows(configured: Configured, scenario: Scenario) {
  const { calls } = scenario;
  const served = servedCalls(scenario);
  const { account } = configured;
  const mcpRows = (page: AccessLogPage) => page.data.filter((entry) => entry.provider === "mcp");
  const page = await readUntil(
    () => account.must(stack.api<AccessLogPage>("GET", "/agent-network/access-logs", account.token)),
    (logs) => mcpRows(logs).length >= calls.length,
  );
  const rows = mcpRows(page);
  expect(rows).toHaveLength(calls.length);
  expect(rows).toEqual(
    expect.arrayContaining(served.map((call) => expect.objectContaining(toolRow(configured, call)))),
  );
  const refused = rows.filter((row) => row.decision === "deny");
  expect(refused.map((row) => [row.deny_reason, row.status_code])).toEqual(
    calls.slice(served.length).map(() => [CAPPED, 429]),
  );
  for (const row of rows) {
    expect(row.tool_call?.request_bytes).toBeGreaterThan(0);
    expect(row.tool_call?.response_bytes).toBeGreaterThan(0);
  }
  // The calls of one run share the agent's one MCP session.
  expect(new Set(rows.map((row) => row.session_id)).size).toBe(1);
}

/** What every agent's run must show once it is done, whichever agent and endpoint. */
async function expectCallsThrough(
  scenario: Scenario,
  configured: Configured,
  run: { listed: string[] | undefined; answerOf: (index: number) => unknown },
  watched: ReturnType<typeof watchServers>,
) {
  expect(run.listed).toEqual(expectedListing(scenario));
  const served = servedCalls(scenario);
  watched.expectServed(served, configured.account.token);
  // Each tool's answer went back to the vendor as its call's result; a refused call's, the cap's reason.
  scenario.calls.forEach((call, index) => {
    const expected = index < served.length ? call.answer : CAPPED;
    expect(JSON.stringify(run.answerOf(index)), call.tool).toContain(expected);
  });
  await expectToolCallRows(configured, scenario);
}

/**
 * Claude Code with the gateway's endpoint added as a user adds it, asked (by its scripted vendor)
 * to make the scenario's calls; -p runs no tool it was not allowed. It names an MCP tool
 * mcp__{its name for the server}__{the tool as the endpoint lists it}.
 */
async function expectClaudeCalls(scenario: Scenario) {
  const { endpoint, servers, calls } = scenario;
  const configured = await withToolServers((a) => a.anthropicProvider.id, servers, scenario.callCap);
  const token = configured.account.token;
  const prefix = `mcp__${endpoint.name}__`;
  const scripted = calls.map((call, index) => ({
    id: `toolu_${index}`,
    name: `${prefix}${listedName(endpoint, call.server, call.tool)}`,
    input: { text: call.text },
  }));
  stack.anthropic.reply = "The tools said it back.";
  stack.anthropic.turns = claudeTurns(scripted);
  const seenBefore = stack.anthropic.seen.length;
  const watched = watchServers();

  const run = await runClaude({
    baseUrl: stack.proxy.url,
    token,
    prompt: "call the tools through the gateway",
    model: "claude-sonnet-4-5",
    mcpServers: [
      {
        name: endpoint.name,
        url: stack.proxy.url + endpoint.path,
        headers: { Authorization: `Bearer ${token}` },
      },
    ],
    args: ["--allowedTools", scripted.map((call) => call.name).join(",")],
    timeoutMs: 120_000,
  });
  expect(run.json, run.stderr || run.stdout).toMatchObject({
    is_error: false,
    result: stack.anthropic.reply,
  });

  const seen = stack.anthropic.seen.slice(seenBefore);
  // The tools its first turn was shown, by name (deferred: listed in a reminder, not loaded).
  const first = seen.find((request) => toolNames(request.body).length > 0);
  await expectCallsThrough(
    scenario,
    configured,
    {
      listed: mentionedTools(first, prefix),
      answerOf: (index) => claudeToolResult(seen, `toolu_${index}`),
    },
    watched,
  );
}

/**
 * Codex with the gateway's endpoint in its config.toml, the agentnet token from the environment;
 * `codex exec` runs under approval policy "never", which refuses an MCP call unless the tool is
 * pre-approved. Codex 0.171 lists an MCP server's tools as one Responses API namespace,
 * mcp__{its name for the server}, each function named as the endpoint lists the tool.
 */
async function expectCodexCalls(scenario: Scenario) {
  const { endpoint, servers, calls } = scenario;
  const configured = await withToolServers((a) => a.openaiProvider.id, servers, scenario.callCap);
  const token = configured.account.token;
  const namespace = `mcp__${endpoint.name}`;
  const scripted = calls.map((call, index) => ({
    id: `call_${index}`,
    name: listedName(endpoint, call.server, call.tool),
    input: { text: call.text },
  }));
  stack.openai.reply = "The tools said it back.";
  stack.openai.turns = codexTurns(namespace, scripted);
  const seenBefore = stack.openai.seen.length;
  const watched = watchServers();

  const run = await runCodex({
    baseUrl: stack.proxy.url,
    token,
    prompt: "call the tools through the gateway",
    model: "gpt-5",
    config: [
      `[mcp_servers.${endpoint.name}]`,
      `url = "${stack.proxy.url}${endpoint.path}"`,
      `bearer_token_env_var = "AGN_MCP_TOKEN"`,
      // Each tool approved once, however often it is called.
      ...[...new Set(scripted.map((call) => call.name))].flatMap((name) => [
        `[mcp_servers.${endpoint.name}.tools.${name}]`,
        `approval_mode = "approve"`,
      ]),
      "",
    ].join("\n"),
    env: { AGN_MCP_TOKEN: token },
    timeoutMs: 120_000,
  });
  expect(run.exitCode, run.stderr).toBe(0);
  expect(run.stdout).toContain(stack.openai.reply);

  const seen = stack.openai.seen.slice(seenBefore);
  await expectCallsThrough(
    scenario,
    configured,
    {
      listed: codexListed(seen, namespace),
      answerOf: (index) => codexToolOutput(seen, `call_${index}`),
    },
    watched,
  );
}

describe("Claude Code calls granted MCP tools through the gateway (the real CLI)", () => {
  it("through /mcp/{server}: lists only granted tools, runs echo with the server's key, and logs the call as a row", async () => {
    await expectClaudeCalls({ endpoint: oneServer(issues), servers: [issues], calls: [echo()] });
  });

  it("through /mcp: lists two servers' granted tools as {server}__{tool}, runs each on its own server with its own key, and logs each call", async () => {
    await expectClaudeCalls({ endpoint: allServers, servers: [issues, docs], calls: [echo(), getIssue()] });
  });

  it("under a cap of two tool calls an hour: the first two answer, the third is refused with the cap's reason", async () => {
    await expectClaudeCalls({
      endpoint: oneServer(issues),
      servers: [issues],
      calls: [echo(), echo(), echo()],
      callCap: 2,
    });
  });
});

describe("Codex calls granted MCP tools through the gateway (the real CLI)", () => {
  it("through /mcp/{server}: lists only granted tools, runs echo with the server's key, and logs the call as a row", async () => {
    await expectCodexCalls({ endpoint: oneServer(issues), servers: [issues], calls: [echo()] });
  });

  it("through /mcp: lists two servers' granted tools as {server}__{tool}, runs each on its own server with its own key, and logs each call", async () => {
    await expectCodexCalls({ endpoint: allServers, servers: [issues, docs], calls: [echo(), getIssue()] });
  });

  it("under a cap of two tool calls an hour: the first two answer, the third is refused with the cap's reason", async () => {
    await expectCodexCalls({
      endpoint: oneServer(issues),
      servers: [issues],
      calls: [echo(), echo(), echo()],
      callCap: 2,
    });
  });
});
