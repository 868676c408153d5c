import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { AccessLogPage, McpServer } from "@agentnet/contracts";
import { freePort } from "@agentnet/local-backends";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  type Progress,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configure, readUntil } from "../setup";
import { type Stack, startStack } from "../stack";

/**
 * The MCP gateway in front of a server we did not write: the MCP project's own reference server,
 * `@modelcontextprotocol/server-everything`, in its Streamable HTTP mode, reached by the MCP SDK's
 * client through the stack's proxy, on `/mcp/everything` and joined on `/mcp`; and in its HTTP+SSE
 * mode, bridged.
 */

/**
 * server-everything in a process of its own, on the Streamable HTTP transport or the older
 * HTTP+SSE one (its stream at `/sse`); resolves once it listens.
 */
async function startEverything(
  transport: "streamableHttp" | "sse" = "streamableHttp",
): Promise<{ url: string; stop: () => Promise<void> }> {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve("@modelcontextprotocol/server-everything/package.json");
  const bin = join(dirname(manifest), "dist", "index.js");
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [bin, transport], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("server-everything did not listen in 15 s")), 15_000);
    child.once("exit", (code) => reject(new Error(`server-everything exited with ${code}`)));
    child.stderr?.on("data", (chunk: Buffer) => {
      if (/listening on port|running on port/.test(chunk.toString())) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return {
    url: `http://127.0.0.1:${port}/${transport === "sse" ? "sse" : "mcp"}`,
    async stop() {
      process.removeListener("exit", killOnExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

let stack: Stack;
let everything: Awaited<ReturnType<typeof startEverything>>;
let everythingOverSse: Awaited<ReturnType<typeof startEverything>>;
beforeAll(async () => {
  everything = await startEverything();
  everythingOverSse = await startEverything("sse");
  stack = await startStack({
    telemetry: true,
    proxy: {
      allowedPrivateUpstreams: [everything.url, everythingOverSse.url].map((url) => new URL(url).host),
    },
  });
});
afterAll(async () => {
  await stack?.stop();
  await everything?.stop();
  await everythingOverSse?.stop();
});

/** Tools a grant keeps from callers: one that shows the server's environment, one that fetches URLs. */
const EXCLUDED = ["get-env", "gzip-*"];

/** An account with server-everything registered as `everything`, granted to everyone but `EXCLUDED`. */
async function accountWithEverything() {
  const account = await stack.newAccount({ enable_log_collection: true });
  const server = await account.must(
    stack.api<McpServer>("POST", "/agent-network/mcp-servers", account.token, {
      name: "everything",
      url: everything.url,
    }),
  );
  await configure(stack, account).policy([], {
    mcp_servers: [{ server_id: server.id, exclude_tools: EXCLUDED }],
  });
  return { account, server };
}

/** The ids of the server's requests the client answered, as the client saw them. */
interface Answered {
  ids: RequestId[];
}

/**
 * An MCP client able to sample and elicit (so server-everything offers its tools that ask the
 * client), connected to `path` on the proxy: sampling answers a canned completion, elicitation
 * accepts with a name.
 */
async function connect(token: string, path: string, answered: Answered = { ids: [] }) {
  const client = new Client(
    { name: "e2e", version: "1.0.0" },
    { capabilities: { sampling: {}, elicitation: {} } },
  );
  client.setRequestHandler(CreateMessageRequestSchema, (request, extra) => {
    answered.ids.push(extra.requestId);
    const asked = request.params.messages[0]?.content;
    return {
      role: "assistant",
      model: "e2e-model",
      content: { type: "text", text: `sampled: ${asked && "text" in asked ? asked.text : ""}` },
    };
  });
  client.setRequestHandler(ElicitRequestSchema, (_request, extra) => {
    answered.ids.push(extra.requestId);
    return { action: "accept", content: { name: "Ada Lovelace" } };
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.proxy.url}${path}`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

/** The text blocks of a tool's answer, one a line. */
const texts = (answer: unknown): string =>
  CallToolResultSchema.parse(answer)
    .content.flatMap((block) => (block.type === "text" ? [block.text] : []))
    .join("\n");

describe("server-everything on /mcp/everything", () => {
  let client: Client;
  const answered: Answered = { ids: [] };
  beforeAll(async () => {
    const { account } = await accountWithEverything();
    client = await connect(account.token, "/mcp/everything", answered);
  });
  afterAll(() => client?.close());

  it("initializes as the server itself, with its instructions", () => {
    expect(client.getServerVersion()?.name).toBe("mcp-servers/everything");
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, resources: {}, prompts: {} });
    expect(client.getInstructions()).toContain("Everything Server");
  });

  it("lists only the granted tools, and refuses an excluded one as an unknown tool", async () => {
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "echo",
        "get-structured-content",
        "trigger-sampling-request",
        "trigger-elicitation-request",
        "trigger-long-running-operation",
      ]),
    );
    expect(names).not.toContain("get-env");
    expect(names).not.toContain("gzip-file-as-resource");
    await expect(client.callTool({ name: "get-env", arguments: {} })).rejects.toThrow(
      /Unknown tool: get-env: no policy grants it to you on everything/,
    );
  });

  it("calls echo, and a tool with structured output checked against its output schema", async () => {
    expect(await client.callTool({ name: "echo", arguments: { message: "hello" } })).toMatchObject({
      content: [{ type: "text", text: "Echo: hello" }],
    });
    const weather = await client.callTool({
      name: "get-structured-content",
      arguments: { location: "Chicago" },
    });
    expect(weather.structuredContent).toEqual({
      temperature: 36,
      conditions: "Light rain / drizzle",
      humidity: 82,
    });
  });

  it("lists and reads resources, a static one and one from a template", async () => {
    const { resources } = await client.listResources();
    const instructions = "demo://resource/static/document/instructions.md";
    expect(resources.map((resource) => resource.uri)).toContain(instructions);
    const read = await client.readResource({ uri: instructions });
    expect(read.contents[0]).toMatchObject({ uri: instructions, mimeType: "text/markdown" });
    expect(read.contents[0] && "text" in read.contents[0] ? read.contents[0].text : "").toContain(
      "# Everything Server",
    );
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate)).toContain(
      "demo://resource/dynamic/text/{resourceId}",
    );
    const dynamic = await client.readResource({ uri: "demo://resource/dynamic/text/7" });
    expect(dynamic.contents[0] && "text" in dynamic.contents[0] ? dynamic.contents[0].text : "").toMatch(
      /^Resource 7: This is a plaintext resource/,
    );
  });

  it("lists prompts and gets one with arguments", async () => {
    const { prompts } = await client.listPrompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual(
      expect.arrayContaining(["simple-prompt", "args-prompt"]),
    );
    const prompt = await client.getPrompt({
      name: "args-prompt",
      arguments: { city: "Paris", state: "Texas" },
    });
    expect(prompt.messages).toEqual([
      { role: "user", content: { type: "text", text: "What's weather in Paris, Texas?" } },
    ]);
  });

  it("carries the server's sampling request inside a tool call to the client, and its answer back", async () => {
    const before = answered.ids.length;
    const answer = await client.callTool({
      name: "trigger-sampling-request",
      arguments: { prompt: "a haiku", maxTokens: 20 },
    });
    // On /mcp/{server} the server's own request id reaches the client as it is (a number from the SDK).
    expect(answered.ids.slice(before)).toEqual([expect.any(Number)]);
    expect(texts(answer)).toContain("sampled: Resource trigger-sampling-request context: a haiku");
    expect(texts(answer)).toContain('"model": "e2e-model"');
  });

  it("relays a long-running tool's progress notifications to the caller", async () => {
    const progress: Progress[] = [];
    const answer = await client.callTool(
      { name: "trigger-long-running-operation", arguments: { duration: 0.6, steps: 3 } },
      undefined,
      { onprogress: (update) => progress.push(update) },
    );
    expect(progress).toEqual([
      { progress: 1, total: 3 },
      { progress: 2, total: 3 },
      { progress: 3, total: 3 },
    ]);
    expect(texts(answer)).toBe("Long running operation completed. Duration: 0.6 seconds, Steps: 3.");
  });
});

describe("server-everything joined on /mcp", () => {
  let client: Client;
  const answered: Answered = { ids: [] };
  beforeAll(async () => {
    const { account } = await accountWithEverything();
    client = await connect(account.token, "/mcp", answered);
  });
  afterAll(() => client?.close());

  it("names its granted tools everything__<tool> and calls one", async () => {
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining(["everything__echo", "everything__trigger-elicitation-request"]),
    );
    expect(names.every((name) => name.startsWith("everything__"))).toBe(true);
    expect(names).not.toContain("everything__get-env");
    expect(
      await client.callTool({ name: "everything__echo", arguments: { message: "joined" } }),
    ).toMatchObject({ content: [{ type: "text", text: "Echo: joined" }] });
  });

  it("carries the server's elicitation request inside a tool call with an id naming the server", async () => {
    const before = answered.ids.length;
    const answer = await client.callTool({ name: "everything__trigger-elicitation-request", arguments: {} });
    expect(answered.ids.slice(before)).toEqual([expect.stringMatching(/^agn~0~/)]);
    expect(texts(answer)).toContain("- Name: Ada Lovelace");
  });
});

describe("server-everything's tool calls in the access logs", () => {
  it("logs each tools/call, relayed or refused, as one mcp row named everything__<tool>", async () => {
    const { account, server } = await accountWithEverything();
    const single = await connect(account.token, "/mcp/everything");
    await single.callTool({ name: "echo", arguments: { message: "logged" } });
    await expect(single.callTool({ name: "get-env", arguments: {} })).rejects.toThrow(/Unknown tool/);
    await single.listTools(); // no row: only tools/call is logged
    await single.close();
    const joined = await connect(account.token, "/mcp");
    await joined.callTool({ name: "everything__trigger-sampling-request", arguments: { prompt: "hi" } });
    await joined.close();

    const logs = await readUntil(
      async () => (await stack.api<AccessLogPage>("GET", "/agent-network/access-logs", account.token)).body,
      (page) => page.total_records >= 3,
    );
    expect(logs.total_records).toBe(3);
    const rows = logs.data.map((entry) => [entry.provider, entry.model, entry.decision, entry.deny_reason]);
    expect(rows.sort()).toEqual([
      ["mcp", "everything__echo", "allow", ""],
      ["mcp", "everything__get-env", "deny", "mcp.tool_not_granted"],
      ["mcp", "everything__trigger-sampling-request", "allow", ""],
    ]);
    for (const entry of logs.data)
      expect(entry).toMatchObject({ resolved_provider_id: server.id, tool_call: { server: "everything" } });
  });
});

describe("server-everything on the HTTP+SSE transport, bridged", () => {
  it("initializes, lists granted tools, calls one and reads a resource, each request on a session of its own", async () => {
    const account = await stack.newAccount({ enable_log_collection: true });
    const server = await account.must(
      stack.api<McpServer>("POST", "/agent-network/mcp-servers", account.token, {
        name: "legacy",
        url: everythingOverSse.url,
        transport: "sse",
      }),
    );
    await configure(stack, account).policy([], {
      mcp_servers: [{ server_id: server.id, exclude_tools: EXCLUDED }],
    });
    const client = await connect(account.token, "/mcp/legacy");
    expect(client.getServerVersion()?.name).toContain("everything");
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain("echo");
    expect(names).not.toContain("get-env");
    expect(
      texts(await client.callTool({ name: "echo", arguments: { message: "over the bridge" } })),
    ).toContain("over the bridge");
    const [resource] = (await client.listResources()).resources;
    if (!resource) throw new Error("no resource listed");
    expect((await client.readResource({ uri: resource.uri })).contents[0]?.uri).toBe(resource.uri);
    await client.close();
    const [row] = await account.events.waitFor(1);
    expect(row).toMatchObject({
      provider: "mcp",
      model: "legacy__echo",
      decision: "allow",
      status_code: 200,
    });
  });
});
