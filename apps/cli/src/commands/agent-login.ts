import {
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { homedir, hostname } from "node:os";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { AgentTokens, DeviceAuthorization } from "@agentnet/contracts";
import { z } from "zod";

/**
 * `agentnet login` and `agentnet token` (docs/API.md "Agent credentials"): a device authorization
 * a member approves in the dashboard, the refresh credential it gives kept in a file only its user
 * reads, and short-lived proxy tokens printed from it for coding agents (Claude Code's
 * `apiKeyHelper`, a shell's `$(agentnet token)`).
 */

/** What is kept between runs: where the API is, the refresh credential, the current proxy token. */
const Stored = z.object({
  api_url: z.string(),
  refresh_token: z.string(),
  access_token: z.string(),
  /** Epoch milliseconds. */
  expires_at: z.number(),
});
type Stored = z.infer<typeof Stored>;

/** A token with less than this left is renewed first: an agent never gets one that expires in its request. */
const RENEW_BEFORE_MS = 120_000;
/** How long `token` waits for another `token` run that is renewing (they share one refresh credential). */
const LOCK_WAIT_MS = 15_000;

/** `$AGN_CONFIG_DIR`, else `$XDG_CONFIG_HOME/agentnet`, else `~/.config/agentnet`. */
export function credentialsFile(env: NodeJS.ProcessEnv): string {
  const dir = env.AGN_CONFIG_DIR ?? join(env.XDG_CONFIG_HOME ?? join(homedir(), ".config"), "agentnet");
  return join(dir, "credentials.json");
}

class SignInNeeded extends Error {
  constructor(reason: string) {
    super(`${reason}: run agentnet login`);
  }
}

/** An OAuth-style refusal of the API's public agent endpoints. */
const Refusal = z.object({ error: z.string(), error_description: z.string().optional() });

async function post(apiUrl: string, path: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${apiUrl}/api${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = { error: "server_error", error_description: text.slice(0, 200) };
  }
  return { status: response.status, json };
}

/**
 * Runs a device authorization against `apiUrl`: tells the member where to approve the code, waits
 * for it, and keeps the credential. Resolves with who to tell what (`say`) as it goes.
 */
export async function login(
  env: NodeJS.ProcessEnv,
  apiUrl: string,
  say: (line: string) => void,
): Promise<void> {
  const started = await post(apiUrl, "/auth/device/code", { client_name: `agentnet CLI on ${hostname()}` });
  if (started.status !== 200)
    throw new Error(`the API at ${apiUrl} refused a device code: ${describe(started.json)}`);
  const device = DeviceAuthorization.parse(started.json);
  say(`Open ${device.verification_uri_complete}`);
  say(
    `and confirm the code ${device.user_code} (it expires in ${Math.round(device.expires_in / 60)} minutes).`,
  );
  let interval = device.interval * 1000;
  const deadline = Date.now() + device.expires_in * 1000;
  while (Date.now() < deadline) {
    await sleep(interval);
    const polled = await post(apiUrl, "/auth/device/token", { device_code: device.device_code });
    if (polled.status === 200) {
      save(env, apiUrl, AgentTokens.parse(polled.json));
      say(
        `Signed in. \`agentnet token\` prints a proxy token (it renews itself; kept in ${credentialsFile(env)}).`,
      );
      return;
    }
    const refusal = Refusal.safeParse(polled.json);
    if (refusal.success && refusal.data.error === "authorization_pending") continue;
    if (refusal.success && refusal.data.error === "slow_down") {
      interval += 5_000;
      continue;
    }
    throw new Error(`sign-in failed: ${describe(polled.json)}`);
  }
  throw new Error("the code expired before it was confirmed: run agentnet login again");
}

/**
 * A proxy token with at least two minutes left: the kept one, else a new one for the kept refresh
 * credential (which is replaced: each works once). Concurrent runs renew once: the first takes a
 * lock file, the others wait for it and read what it kept.
 */
export async function currentToken(env: NodeJS.ProcessEnv): Promise<string> {
  const file = credentialsFile(env);
  const fresh = (stored: Stored | undefined) =>
    stored && stored.expires_at - Date.now() > RENEW_BEFORE_MS ? stored.access_token : undefined;
  const kept = read(file);
  if (!kept) throw new SignInNeeded("not signed in");
  const now = fresh(kept);
  if (now) return now;
  const release = await lock(`${file}.lock`);
  try {
    const stored = read(file);
    if (!stored) throw new SignInNeeded("not signed in");
    const renewedMeanwhile = fresh(stored);
    if (renewedMeanwhile) return renewedMeanwhile;
    const renewed = await post(stored.api_url, "/auth/token", { refresh_token: stored.refresh_token });
    if (renewed.status === 401 || renewed.status === 400) {
      rmSync(file, { force: true });
      throw new SignInNeeded(`the gateway refused the credential (${describe(renewed.json)})`);
    }
    if (renewed.status !== 200)
      throw new Error(`the API answered ${renewed.status}: ${describe(renewed.json)}`);
    const tokens = AgentTokens.parse(renewed.json);
    save(env, stored.api_url, tokens);
    return tokens.access_token;
  } finally {
    release();
  }
}

function read(file: string): Stored | undefined {
  try {
    return Stored.parse(JSON.parse(readFileSync(file, "utf8")));
  } catch {
    return undefined;
  }
}

/** Written whole and renamed into place, readable by its user alone. */
function save(env: NodeJS.ProcessEnv, apiUrl: string, tokens: AgentTokens): void {
  const file = credentialsFile(env);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const stored: Stored = {
    api_url: apiUrl,
    refresh_token: tokens.refresh_token,
    access_token: tokens.access_token,
    expires_at: Date.now() + tokens.expires_in * 1000,
  };
  const partial = `${file}.${process.pid}.tmp`;
  writeFileSync(partial, JSON.stringify(stored), { mode: 0o600 });
  renameSync(partial, file);
}

/**
 * Takes `path` as a lock file (created exclusively, holding this process's pid). A lock whose
 * process is gone is taken over; one held by a live run is waited for, never taken: two renewals
 * with one refresh token would revoke the credential.
 */
async function lock(path: string): Promise<() => void> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const fd = openSync(path, "wx", 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      if (!holderAlive(path)) rmSync(path, { force: true });
      else if (Date.now() > deadline) {
        throw new Error(`another agentnet token has been renewing for ${LOCK_WAIT_MS / 1000} s (${path})`);
      } else await sleep(100);
    }
  }
}

/** Whether the process named in the lock file runs (one still being written counts as alive). */
function holderAlive(path: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(path, "utf8"));
  } catch {
    return true;
  }
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

const describe = (json: unknown): string => {
  const refusal = Refusal.safeParse(json);
  if (refusal.success) return refusal.data.error_description ?? refusal.data.error;
  const message = (json as { message?: unknown } | null)?.message;
  return typeof message === "string" ? message : JSON.stringify(json).slice(0, 200);
};
