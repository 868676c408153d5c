import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { findRepoRoot, freePorts } from "@agentnet/local-backends";
import { TEST_SEALING_KEY } from "@agentnet/testkit";

const ROOT = findRepoRoot();
const CLI = join(ROOT, "apps", "cli", "bin", "agentnet.mjs");

/** A process as /proc shows it: enough to start the same one again. */
interface ProcessInfo {
  pid: number;
  argv: string[];
  env: Record<string, string>;
  cwd: string;
}

function processInfo(pid: number): ProcessInfo {
  const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  const env: Record<string, string> = {};
  for (const entry of readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")) {
    const eq = entry.indexOf("=");
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return { pid, argv, env, cwd: readlinkSync(`/proc/${pid}/cwd`) };
}

/** Every process below `ancestor` (the CLI's bin starts the CLI, which starts the stack). */
function descendantsOf(ancestor: number): ProcessInfo[] {
  const parents = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // The command may hold spaces and parentheses: the fields after its closing one are fixed.
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const below = (pid: number): boolean => {
    const parent = parents.get(pid);
    return parent === ancestor || (parent !== undefined && parent > 1 && below(parent));
  };
  const found: ProcessInfo[] = [];
  for (const pid of parents.keys()) {
    if (!below(pid)) continue;
    try {
      found.push(processInfo(pid));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

export type StackPart = "nats" | "ferretdb" | "control-plane" | "telemetry" | "consumption" | "gateway-proxy";

const matches = (part: StackPart, argv: string[]) =>
  part === "nats" || part === "ferretdb"
    ? argv[0]?.endsWith(part === "nats" ? "nats-server" : "ferretdb")
    : argv.some((arg) => arg.endsWith(join("apps", part, "src", "main.ts")));

/**
 * A whole stack as an operator runs it: `agentnet up` in a process of its own with its own data
 * directory, NATS, FerretDB and ports, supervising every service. Parts can be killed as a crash
 * would, and backends (which `up` does not restart) started again as an operator would.
 */
export async function startUpStack(extraEnv: Record<string, string> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), "agn-faults-"));
  // Distinct ports: a port freed by one probe may be handed out again by the next.
  const [apiPort, proxyPort, demoPort, natsPort, mongoPort] = await freePorts(5);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AGN_DATA_DIR: dataDir,
    AGN_SEALING_KEY: TEST_SEALING_KEY,
    AGN_API_PORT: String(apiPort),
    AGN_PROXY_PORT: String(proxyPort),
    AGN_DEMO_UPSTREAM_PORT: String(demoPort),
    NATS_URL: `nats://127.0.0.1:${natsPort}`,
    MONGO_URL: `mongodb://127.0.0.1:${mongoPort}/agentnet`,
    LOG_LEVEL: "info",
    ...extraEnv,
  };
  const up: ChildProcess = spawn(process.execPath, [CLI, "up"], { env, stdio: ["ignore", "pipe", "pipe"] });
  const printed: string[] = [];
  up.stderr?.on("data", (chunk: Buffer) => printed.push(chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: up.stdout as NonNullable<ChildProcess["stdout"]> }).on("line", (line) => {
      printed.push(line);
      if (line.startsWith("ready:")) resolve();
    });
    up.once("exit", (code) => reject(new Error(`agentnet up exited with ${code}: ${printed.join("\n")}`)));
  });
  const restarted: ChildProcess[] = [];
  const frozen = new Set<number>();

  // A backend started again by hand runs under this process, not under `up`.
  const find = (part: StackPart): ProcessInfo => {
    const running = restarted.flatMap((child) =>
      child.pid !== undefined && child.exitCode === null && child.signalCode === null
        ? [processInfo(child.pid)]
        : [],
    );
    const found = [...descendantsOf(up.pid ?? 0), ...running].find((child) => matches(part, child.argv));
    if (!found) throw new Error(`no ${part} under agentnet up (pid ${up.pid})`);
    return found;
  };

  return {
    env,
    dataDir,
    printed,
    apiUrl: `http://127.0.0.1:${apiPort}`,
    proxyUrl: `http://127.0.0.1:${proxyPort}`,
    find,
    /** `kill -9` of one part; resolves with what it takes to start it again. */
    kill(part: StackPart): ProcessInfo {
      const info = find(part);
      process.kill(info.pid, "SIGKILL");
      return info;
    },
    /**
     * Stops one part where it stands (SIGSTOP), as a hung process, a paused VM or a partition that
     * leaves connections open looks from outside: it holds its sockets and answers nothing.
     */
    freeze(part: StackPart): ProcessInfo {
      const info = find(part);
      process.kill(info.pid, "SIGSTOP");
      frozen.add(info.pid);
      return info;
    },
    /** Lets a frozen part run on (SIGCONT). */
    thaw(info: ProcessInfo) {
      process.kill(info.pid, "SIGCONT");
      frozen.delete(info.pid);
    },
    /** Starts a killed backend again with its own command line, environment and directory. */
    startAgain(info: ProcessInfo) {
      const log = createWriteStream(join(dataDir, "logs", `restarted-${info.pid}.log`), { flags: "a" });
      const child = spawn(info.argv[0] as string, info.argv.slice(1), {
        cwd: info.cwd,
        env: info.env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      child.stdout?.pipe(log);
      child.stderr?.pipe(log);
      restarted.push(child);
    },
    /** `agentnet <args>` against this stack. */
    async cli(args: string[]): Promise<string> {
      const { stdout } = await promisify(execFile)(process.execPath, [CLI, ...args], { env });
      return stdout;
    },
    async stop() {
      // A part still frozen (a test that failed mid-fault) could not stop when told to.
      for (const pid of frozen) process.kill(pid, "SIGCONT");
      if (up.exitCode === null) {
        const exited = new Promise((resolve) => up.once("exit", resolve));
        up.kill("SIGTERM");
        await exited;
      }
      for (const child of restarted) child.kill("SIGKILL");
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export type UpStack = Awaited<ReturnType<typeof startUpStack>>;
