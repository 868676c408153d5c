import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { identify, type ProcessIdentity, stillRuns } from "@agentnet/cli/processes";
import { RunningStack, type StopStage } from "@agentnet/cli/stack-file";
import { findRepoRoot } from "@agentnet/local-backends";
import { expect } from "vitest";

// A terminal sends SIGINT to its whole foreground process group: the shell's job (pnpm, the CLI,
// whatever they run in that group), not one pid. These helpers press Ctrl-C in a real one (tmux
// with an interactive bash) and check what of a stack is left.

export const ROOT = findRepoRoot();

const terminals: Terminal[] = [];

/** Closes every terminal opened (a failed test leaves none behind). */
export function closeTerminals() {
  for (const terminal of terminals) terminal.close();
}

/** tmux running an interactive bash in the repo root, with what it shows copied to a file. */
export class Terminal {
  private readonly tmux: (...args: string[]) => string;
  private readonly transcript: string;

  constructor(env: NodeJS.ProcessEnv) {
    const socket = `agentnet-ctrl-c-${process.pid}-${terminals.length}`;
    this.transcript = join(env.AGN_DATA_DIR ?? tmpdir(), `terminal-${terminals.length}.txt`);
    // The tmux server this starts keeps this environment for its shells.
    this.tmux = (...args) =>
      execFileSync("tmux", ["-L", socket, "-f", "/dev/null", ...args], { env }).toString();
    this.tmux("new-session", "-d", "-s", "t", "-x", "250", "-y", "50", "-c", ROOT, "bash --norc --noprofile");
    writeFileSync(this.transcript, "");
    this.tmux("pipe-pane", "-t", "t", "-o", `cat >> '${this.transcript}'`);
    terminals.push(this);
  }

  type(line: string) {
    this.tmux("send-keys", "-t", "t", "-l", line);
    this.tmux("send-keys", "-t", "t", "Enter");
  }

  ctrlC() {
    this.tmux("send-keys", "-t", "t", "C-c");
  }

  shown(): string {
    // Without the carriage returns and the escape sequences bash writes around a command line.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: an escape sequence starts with ESC
    return readFileSync(this.transcript, "utf8").replace(/\r|\x1b\[[0-9;?]*[a-zA-Z]/g, "");
  }

  async waitFor(pattern: RegExp, timeoutMs = 90_000): Promise<RegExpMatchArray> {
    let match: RegExpMatchArray | null = null;
    await expect
      .poll(() => (match = pattern.exec(this.shown())), { timeout: timeoutMs, interval: 100 })
      .not.toBeNull();
    return match as unknown as RegExpMatchArray;
  }

  /** The processes the shell runs in the foreground: what was typed (pnpm, or the CLI itself). */
  job(): ProcessIdentity[] {
    return childrenOf(Number(this.tmux("display", "-p", "-t", "t", "#{pane_pid}").trim()));
  }

  close() {
    this.tmux("kill-server");
  }
}

function childrenOf(pid: number): ProcessIdentity[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  return tasks
    .flatMap((task) => readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(" "))
    .filter(Boolean)
    .map((child) => identify(Number(child)))
    .filter((child) => child !== undefined);
}

/** Every process below `pid`: the stack's parts and what they run in turn (tsx's esbuild). */
export const descendantsOf = (pid: number): ProcessIdentity[] =>
  childrenOf(pid).flatMap((child) => [child, ...descendantsOf(child.pid)]);

/** The stack file of the data directory `dataDir`, if any. */
export const readStack = (dataDir: string | undefined) => {
  const file = join(dataDir ?? "", "stack.json");
  return existsSync(file) ? RunningStack.parse(JSON.parse(readFileSync(file, "utf8"))) : undefined;
};

/** The stack on `env`'s data once stack.json records every process `parts` names. */
export async function recordedStack(env: NodeJS.ProcessEnv, parts: string[]): Promise<RunningStack> {
  let stack: RunningStack | undefined;
  await expect
    .poll(
      () => {
        stack = readStack(env.AGN_DATA_DIR);
        return parts.filter((part) => !stack?.processes.some((recorded) => recorded.name === part));
      },
      { timeout: 90_000, interval: 50 },
    )
    .toEqual([]);
  return stack as RunningStack;
}

/**
 * Polls until every process given is gone (30 s at most), and says in which poll each went: a
 * process gone in an earlier poll stopped before one gone in a later one.
 */
export async function pollUntilGone(processes: ProcessIdentity[]): Promise<Map<number, number>> {
  const goneAt = new Map<number, number>();
  for (let poll = 0; goneAt.size < processes.length && poll < 1_500; poll++) {
    for (const recorded of processes) {
      if (!goneAt.has(recorded.pid) && !stillRuns(recorded)) goneAt.set(recorded.pid, poll);
    }
    await new Promise((wake) => setTimeout(wake, 20));
  }
  return goneAt;
}

/** Each stage stopped only once the one before it had: edges, services, backends. */
export function expectStoppedInOrder(stack: RunningStack, goneAt: Map<number, number>) {
  const polls = (stage: StopStage) =>
    stack.processes
      .filter((recorded) => recorded.stage === stage)
      .map((recorded) => goneAt.get(recorded.pid) ?? -1);
  expect(Math.max(...polls("edge"))).toBeLessThanOrEqual(Math.min(...polls("service")));
  expect(Math.max(...polls("service"))).toBeLessThanOrEqual(Math.min(...polls("backend")));
}

export const running = (processes: ProcessIdentity[]) =>
  processes.filter(stillRuns).map((recorded) => `${recorded.pid} ${recorded.command}`);

/** None of `processes` runs, allowing a moment for those that exit once their parent has (esbuild). */
export const expectAllGone = (processes: ProcessIdentity[]) =>
  expect.poll(() => running(processes), { timeout: 3_000 }).toEqual([]);

/**
 * Presses Ctrl-C in `terminal`, where `up` runs the stack `stack` records: `up` exits 0 after
 * every process of the stack is gone, stage by stage.
 */
export async function expectCtrlCStopsInOrder(terminal: Terminal, stack: RunningStack) {
  const cli = identify(stack.pid) as ProcessIdentity;
  const parts = descendantsOf(stack.pid);
  terminal.ctrlC();
  const goneAt = await pollUntilGone([cli, ...stack.processes]);

  expect((await terminal.waitFor(/exit=(\d+)/))[1]).toBe("0");
  await expectAllGone([cli, ...parts]);
  expectStoppedInOrder(stack, goneAt);
  expect(goneAt.get(cli.pid)).toBeGreaterThanOrEqual(Math.max(...goneAt.values()));
}
