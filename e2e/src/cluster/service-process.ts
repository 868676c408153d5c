import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, readdirSync, readFileSync, readlinkSync, type WriteStream } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { findRepoRoot } from "@agentnet/local-backends";

const ROOT = findRepoRoot();
const TSX = createRequire(import.meta.url).resolve("tsx");

/** How long a service may take to log its ready line (twelve start at once on two cores). */
const READY_TIMEOUT_MS = 90_000;

/** Starts of a process that exits before it is ready, as a supervisor with a small budget would. */
const START_ATTEMPTS = 3;

/** Every child still running: killed when the test process exits, whatever happened to the test. */
const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/** A JSON log line of a service, as pino writes it. */
export type LogLine = Record<string, unknown>;

/**
 * One service of the cluster as its own process (TypeScript through tsx, as `agentnet up` runs it),
 * started again with the same command line, environment and ports after a kill, as a supervisor
 * (`agentnet up`, Kubernetes) would. Its log lines are kept in memory (for what it says: who leads)
 * and appended to `<logDir>/<name>.log`.
 */
export class ServiceProcess {
  private child: ChildProcess | undefined;
  private log: WriteStream;
  private readonly listeners = new Set<(line: LogLine) => void>();
  private frozen = false;
  /** The fields of its last ready line (a proxy's `url`). */
  ready: LogLine = {};

  constructor(
    readonly name: string,
    private readonly app: string,
    private readonly env: Record<string, string>,
    logDir: string,
  ) {
    this.log = createWriteStream(join(logDir, `${name}.log`), { flags: "a" });
  }

  get pid(): number | undefined {
    return this.running ? this.child?.pid : undefined;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /**
   * Starts the process and resolves with its ready line; one that exits before it is ready is
   * started again after a second, twice at most, as `agentnet up` or Kubernetes would.
   */
  async start(): Promise<LogLine> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.startOnce();
      } catch (error) {
        if (attempt === START_ATTEMPTS || this.running) throw error;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
  }

  private async startOnce(): Promise<LogLine> {
    const child = spawn(process.execPath, ["--import", TSX, join(ROOT, "apps", this.app, "src", "main.ts")], {
      cwd: ROOT,
      env: { ...process.env, ...this.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    running.add(child);
    child.once("exit", () => running.delete(child));
    child.stderr?.pipe(this.log, { end: false });
    createInterface({ input: child.stdout as NonNullable<ChildProcess["stdout"]> }).on("line", (text) => {
      this.log.write(`${text}\n`);
      const line = parseLine(text);
      if (line) for (const listener of this.listeners) listener(line);
    });
    this.ready = await this.waitFor((line) => line.ready === true, READY_TIMEOUT_MS, `${this.name} ready`);
    return this.ready;
  }

  /** Resolves with the first log line from now on that `matches`; rejects on exit or timeout. */
  waitFor(matches: (line: LogLine) => boolean, timeoutMs: number, what: string): Promise<LogLine> {
    const child = this.child;
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(listener);
        child?.removeListener("exit", onExit);
      };
      const listener = (line: LogLine) => {
        if (!matches(line)) return;
        done();
        resolve(line);
      };
      const onExit = (code: number | null) => {
        done();
        reject(new Error(`${this.name} exited (${code}) while waiting for: ${what}`));
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${this.name}: no "${what}" within ${timeoutMs} ms`));
      }, timeoutMs);
      this.listeners.add(listener);
      child?.once("exit", onExit);
    });
  }

  /** Calls `listener` with every log line from now on. */
  onLine(listener: (line: LogLine) => void): void {
    this.listeners.add(listener);
  }

  /** `kill -9`: no drain, no flush, no goodbye. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    if (this.frozen) this.thaw();
    child.kill("SIGKILL");
    await exited;
  }

  /** SIGSTOP: it keeps its sockets and answers nothing. */
  freeze(): void {
    if (this.child?.pid === undefined) return;
    process.kill(this.child.pid, "SIGSTOP");
    this.frozen = true;
  }

  thaw(): void {
    if (this.child?.pid === undefined || !this.frozen) return;
    process.kill(this.child.pid, "SIGCONT");
    this.frozen = false;
  }

  /** SIGTERM and wait (SIGKILL after 10 s). */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    if (this.frozen) this.thaw();
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  }

  /**
   * The local ports this process's open TCP connections go to (from /proc): which NATS node it is
   * on right now, whatever its URL list said and wherever it failed over to.
   */
  remotePorts(): number[] {
    const pid = this.pid;
    if (pid === undefined) return [];
    const inodes = new Set<string>();
    for (const fd of safeReaddir(`/proc/${pid}/fd`)) {
      try {
        const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
        if (inode) inodes.add(inode);
      } catch {
        // closed meanwhile
      }
    }
    const ports: number[] = [];
    for (const table of ["tcp", "tcp6"]) {
      let text = "";
      try {
        text = readFileSync(`/proc/${pid}/net/${table}`, "utf8");
      } catch {
        continue;
      }
      for (const row of text.split("\n").slice(1)) {
        const fields = row.trim().split(/\s+/);
        // local_address rem_address st ... inode (the 10th field); 01 = ESTABLISHED.
        const [, , remote, state] = fields;
        const inode = fields[9];
        if (!remote || state !== "01" || !inode || !inodes.has(inode)) continue;
        ports.push(Number.parseInt(remote.split(":")[1] ?? "0", 16));
      }
    }
    return ports;
  }
}

function safeReaddir(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

function parseLine(text: string): LogLine | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null ? (parsed as LogLine) : undefined;
  } catch {
    return undefined;
  }
}
