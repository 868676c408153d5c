import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { findRepoRoot, freePorts, probeMongo } from "@agentnet/local-backends";
import { isolatedNatsUrl, TEST_SEALING_KEY } from "@agentnet/testkit";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const cli = join(findRepoRoot(), "apps", "cli", "bin", "agentnet.mjs");

describe("agentnet up, end to end", () => {
  let stack: ChildProcess;
  let env: NodeJS.ProcessEnv;
  let apiUrl: string;
  let proxyPort: number;
  /** Where the test's own upstream will listen: an operator allows it, as a self-hosted model. */
  let upstreamPort: number;
  let takenNatsUrl: string;
  let dataDir: string;
  let mongoUrl: string;
  const printed: string[] = [];

  beforeAll(async () => {
    // Distinct ports: a port freed by one probe may be handed out again by the next.
    const [port = 0, proxy = 0, upstream = 0, mongo = 0, demo = 0] = await freePorts(5);
    proxyPort = proxy;
    upstreamPort = upstream;
    // Nothing answers there: `up` starts its own FerretDB, with a login.
    mongoUrl = `mongodb://127.0.0.1:${mongo}/agentnet`;
    // NATS_URL names a server that is not the stack's (this file's own, which refuses the stack's
    // credentials): `up` must start its own authenticated nats-server on another port and say so.
    takenNatsUrl = await isolatedNatsUrl();
    dataDir = mkdtempSync(join(tmpdir(), "agentnet-e2e-"));
    env = {
      ...process.env,
      NATS_URL: takenNatsUrl,
      MONGO_URL: mongoUrl,
      AGN_SEALING_KEY: TEST_SEALING_KEY,
      AGN_API_PORT: String(port),
      AGN_PROXY_PORT: String(proxyPort),
      AGN_DEMO_UPSTREAM_PORT: String(demo),
      AGN_ALLOWED_PRIVATE_UPSTREAMS: `127.0.0.1:${upstreamPort}`,
      AGN_DATA_DIR: dataDir,
    };
    apiUrl = `http://127.0.0.1:${port}`;
    stack = spawn(process.execPath, [cli, "up"], { env, stdio: ["ignore", "pipe", "pipe"] });
    const errors: string[] = [];
    stack.stderr?.on("data", (chunk: Buffer) => errors.push(chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: stack.stdout ?? process.stdin }).on("line", (line) => {
        printed.push(line);
        if (line.startsWith("ready:")) resolve();
      });
      stack.once("exit", (code) =>
        reject(new Error(`agentnet up exited with ${code}: ${[...printed, ...errors].join("\n")}`)),
      );
    });
  }, 120_000);

  afterAll(async () => {
    if (stack.exitCode === null) {
      const exited = new Promise((resolve) => stack.once("exit", resolve));
      stack.kill("SIGTERM");
      await exited;
    }
  });

  it("prints one line per part with its address", () => {
    expect(printed.some((line) => /^nats\s+nats:\/\//.test(line))).toBe(true);
    expect(printed.some((line) => /^mongodb\s+mongodb:\/\//.test(line))).toBe(true);
    expect(printed.some((line) => /^control-plane\s/.test(line))).toBe(true);
    expect(printed.some((line) => /^provider-verifier\s/.test(line))).toBe(true);
    expect(printed.some((line) => /^telemetry\s+chdb /.test(line))).toBe(true);
    expect(printed.some((line) => /^consumption\s/.test(line))).toBe(true);
    expect(printed).toContain(`${"gateway-proxy".padEnd(20)}http://127.0.0.1:${proxyPort}`);
    expect(printed).toContain(`${"api-gateway".padEnd(20)}${apiUrl}`);
  });

  it("starts its own NATS, which admits no client without the stack's credentials", async () => {
    const natsLine = printed.find((line) => line.startsWith("nats "));
    expect(natsLine).toMatch(/held by another NATS server; started ours on port \d+/);
    const stackUrl = /^nats\s+(\S+)/.exec(natsLine ?? "")?.[1] ?? "";
    expect(stackUrl).not.toBe(takenNatsUrl);
    await expect(connect({ servers: stackUrl, reconnect: false })).rejects.toThrow(/authoriz/i);
    // Nobody else on the host reads the stack's data: the directory is 0700, secrets 0600, and the
    // backends' files are created under a 0077 umask.
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    for (const file of ["nats-credentials.json", "nats/nats-server.conf"]) {
      expect(statSync(join(dataDir, file)).mode & 0o777, file).toBe(0o600);
    }
    expect(statSync(join(dataDir, "chdb")).mode & 0o077).toBe(0);
    const credentials = JSON.parse(readFileSync(join(dataDir, "nats-credentials.json"), "utf8")) as Record<
      string,
      string
    >;
    // The proxy's own credentials cannot mint a token for anyone (only the api-gateway calls agn.ctl.*).
    const proxy = await connect({
      servers: stackUrl,
      user: "gateway-proxy",
      pass: credentials["gateway-proxy"],
      inboxPrefix: "_INBOX_gateway-proxy",
    });
    await expect(
      proxy.request("agn.ctl.tokens.create", JSON.stringify({}), { timeout: 2_000 }),
    ).rejects.toThrow(/permission/i);
    await proxy.close();
  });

  it("starts its own FerretDB, which admits no client without the stack's login, and shows that login nowhere", async () => {
    const mongoLine = printed.find((line) => line.startsWith("mongodb "));
    expect(mongoLine).toMatch(
      /^mongodb\s+mongodb:\/\/agentnet:\*\*\*@127\.0\.0\.1:\d+\/agentnet\?authSource=admin \(started ferretdb \(sqlite\)\)$/,
    );
    expect(await probeMongo(mongoUrl)).toBe("refused");
    const credentialsFile = join(dataDir, "mongo-credentials.json");
    expect(statSync(credentialsFile).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, "ferretdb")).mode & 0o777).toBe(0o700);
    const { password } = JSON.parse(readFileSync(credentialsFile, "utf8")) as { password: string };
    const logs = readdirSync(join(dataDir, "logs")).map((file) =>
      readFileSync(join(dataDir, "logs", file), "utf8"),
    );
    for (const shown of [printed.join("\n"), readFileSync(join(dataDir, "stack.json"), "utf8"), ...logs]) {
      expect(shown).not.toContain(password);
    }
  });

  it("bootstraps an account whose token reads it, and refuses a call without a token", async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [cli, "bootstrap", "--email", "e2e@example.com", "--json"],
      { env },
    );
    const created = JSON.parse(stdout) as Record<string, string>;
    expect(Object.keys(created).sort()).toEqual(["account_id", "token", "user_id"]);

    const withToken = await fetch(`${apiUrl}/api/accounts`, {
      headers: { authorization: `Token ${created.token}` },
    });
    expect(withToken.status).toBe(200);
    const accounts = (await withToken.json()) as { id: string }[];
    expect(accounts).toHaveLength(1);
    expect(accounts[0]?.id).toBe(created.account_id);

    const without = await fetch(`${apiUrl}/api/accounts`);
    expect(without.status).toBe(401);
    expect(await without.json()).toMatchObject({ code: 401 });
  });

  it("carries a request through the gateway proxy and shows it in the access log", async () => {
    // The outside world: an OpenAI-style upstream on loopback.
    const upstream = createServer((req, res) => {
      req.resume().on("end", () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            id: "chatcmpl-1",
            object: "chat.completion",
            model: "gpt-4o",
            choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }],
            usage: { prompt_tokens: 1_000, completion_tokens: 100, total_tokens: 1_100 },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => upstream.listen(upstreamPort, "127.0.0.1", resolve));
    const upstreamUrl = `http://127.0.0.1:${upstreamPort}/v1`;
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [cli, "bootstrap", "--email", "traffic@example.com", "--json"],
        {
          env,
        },
      );
      const { token } = JSON.parse(stdout) as { token: string };
      const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
        const response = await fetch(`${apiUrl}/api${path}`, {
          method,
          headers: { authorization: `Token ${token}`, "content-type": "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        expect(response.status, `${method} ${path}`).toBeLessThan(300);
        return (await response.json()) as T;
      };
      await api("POST", "/agent-network/settings", { proxy_address: "gw.example.com" });
      const provider = await api<{ id: string }>("POST", "/agent-network/providers", {
        provider_id: "custom",
        name: "Local",
        upstream_url: upstreamUrl,
        api_key: "sk-local",
      });
      const [all] = await api<{ id: string }[]>("GET", "/groups");
      await api("POST", "/agent-network/policies", {
        name: "all",
        source_groups: [all?.id],
        destination_provider_ids: [provider.id],
      });

      const completion = await fetch(`http://127.0.0.1:${proxyPort}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: "hello" }] }),
      });
      expect(completion.status).toBe(200);

      let logs = {
        total_records: 0,
        data: [] as { model: string; decision: string; total_tokens: number }[],
      };
      for (let attempt = 0; attempt < 100 && logs.total_records === 0; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        logs = await api("GET", "/agent-network/access-logs");
      }
      expect(logs.data[0]).toMatchObject({ model: "gpt-4o", decision: "allow", total_tokens: 1_100 });
    } finally {
      upstream.close();
    }
  });

  it("quickstart: from an empty account to a member token that gets answers in both formats", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [cli, "quickstart", "--json"], { env });
    const result = JSON.parse(stdout) as { member_token: string; provider_ids: string[]; proxy_url: string };
    expect(result.provider_ids).toHaveLength(2);
    expect(result.proxy_url).toBe(`http://127.0.0.1:${proxyPort}`);
    const chat = await fetch(`${result.proxy_url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${result.member_token}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "demo-chat", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(chat.status).toBe(200);
    expect(JSON.stringify(await chat.json())).toContain("agentnet demo upstream");
    const message = await fetch(`${result.proxy_url}/v1/messages`, {
      method: "POST",
      headers: {
        "x-api-key": result.member_token,
        "anthropic-version": "2023-06-01",
        "content-type": "application/json",
      },
      body: JSON.stringify({
        model: "claude-demo",
        max_tokens: 100,
        messages: [{ role: "user", content: "hi" }],
      }),
    });
    expect(message.status).toBe(200);
    expect(JSON.stringify(await message.json())).toContain("agentnet demo upstream");
  });

  it("status says what runs and that it is healthy; resource commands list, create and delete", async () => {
    const run = (args: string[], extra: Record<string, string> = {}) =>
      promisify(execFile)(process.execPath, [cli, ...args], { env: { ...env, ...extra } });
    const status = JSON.parse((await run(["status", "--json"])).stdout) as {
      running: boolean;
      parts: { part: string; healthy: boolean }[];
    };
    expect(status.running).toBe(true);
    expect(status.parts.every((part) => part.healthy)).toBe(true);

    const { stdout } = await run(["bootstrap", "--email", "cli-resources@example.com", "--json"]);
    const { token } = JSON.parse(stdout) as { token: string };
    const created = JSON.parse(
      (await run(["groups", "create", "--body", '{"name":"platform"}'], { AGN_TOKEN: token })).stdout,
    ) as {
      id: string;
    };
    const listed = (await run(["groups", "list"], { AGN_TOKEN: token })).stdout;
    expect(listed.split("\n")[0]).toMatch(/^ID\s+NAME\s+USERS_COUNT$/);
    expect(listed).toContain("platform");
    expect((await run(["groups", "delete", created.id], { AGN_TOKEN: token })).stdout).toBe(
      `deleted ${created.id}\n`,
    );
    const refused = await run(["groups", "list"]).catch((error: { code: number; stderr: string }) => error);
    expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining("an API token is needed") });
  });

  it("refuses a second agentnet up on the same data while this one runs, starting nothing", async () => {
    const second = await promisify(execFile)(process.execPath, [cli, "up"], { env, timeout: 30_000 }).then(
      () => ({ code: 0, stderr: "" }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/a stack is already running on .* \(agentnet up, pid \d+, NATS nats:\/\//);
    // The first stack still answers.
    expect((await fetch(`${apiUrl}/healthz`)).status).toBe(200);
  });

  it("restarts a service that dies, and keeps the others running", async () => {
    const telemetry = descendants(stack.pid ?? 0).find((pid) =>
      readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(join("apps", "telemetry", "src", "main.ts")),
    );
    expect(telemetry).toBeDefined();
    process.kill(telemetry ?? 0, "SIGKILL");
    await expect
      .poll(() => printed.some((line) => /^telemetry\s+restarted: /.test(line)), { timeout: 60_000 })
      .toBe(true);
    expect(printed.some((line) => /^telemetry\s+exited \(code null\); restarting in 1 s/.test(line))).toBe(
      true,
    );
    expect((await fetch(`${apiUrl}/healthz`)).status).toBe(200);
  });

  it("stops every service on SIGTERM and exits 0", async () => {
    const exited = new Promise<number | null>((resolve) => stack.once("exit", resolve));
    stack.kill("SIGTERM");
    expect(await exited).toBe(0);
    await expect(fetch(`${apiUrl}/healthz`)).rejects.toThrow();
  });
});

/** Every process below `pid` (the CLI wrapper, the CLI, its services), read from /proc. */
function descendants(pid: number): number[] {
  const children = readdirSync(`/proc/${pid}/task`).flatMap((task) => {
    const text = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
    return text === "" ? [] : text.split(" ").map(Number);
  });
  return children.flatMap((child) => [child, ...descendants(child)]);
}
