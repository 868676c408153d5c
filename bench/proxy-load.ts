/**
 * How bench:proxy and bench:cluster load a gateway: latency as sequential requests on one
 * keep-alive connection, throughput with autocannon at 64 connections, and the run's knobs.
 */
import autocannon from "autocannon";
import { Pool } from "undici";
import { percentile } from "./percentile";

export const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
export const LATENCY_REQUESTS = Number(process.env.BENCH_LATENCY_REQUESTS ?? 1500);
export const CONNECTIONS = 64;
/** Each target is measured this many times, interleaved with the others; rows report medians. */
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** Load each target takes, per mode, before the first round: its first round is then not its JIT warm-up. */
export const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
/** agentnet's targets run a round's throughput phase in this many slices each, taking turns. */
export const SLICES = Number(process.env.BENCH_SLICES ?? 8);
export const MODES = process.env.BENCH_MODES?.split(",") ?? ["non-streaming", "streaming"];

export interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  /** The process whose CPU a request costs (agentnet's targets; its proxy when unset). */
  pid?: number;
}

/**
 * `BENCH_PROMPT_KB`: the conversation each request carries, in KiB (0, the default: one short
 * message). Coding agents send 50–300 KB a request (their system prompt, the conversation so far,
 * tool results), which a gateway reads, parses, estimates and forwards on every turn.
 */
export const PROMPT_KB = Number(process.env.BENCH_PROMPT_KB ?? 0);

/** A coding agent's conversation of about `kib` KiB of JSON: tool results of code, short replies. */
function conversation(kib: number): { role: string; content: string }[] {
  if (kib <= 0) return [{ role: "user", content: "Say hello" }];
  const messages = [
    { role: "system", content: "You are a coding agent in the user's repository. ".repeat(40) },
  ];
  const code = "  const value = compute(input, options); // one line of the file read\n".repeat(25);
  let bytes = JSON.stringify(messages).length;
  for (let turn = 0; bytes < kib * 1024; turn++) {
    const message =
      turn % 2 === 0
        ? { role: "user", content: `Tool result ${turn}, src/module-${turn}.ts:\n${code}` }
        : { role: "assistant", content: `I read src/module-${turn - 1}.ts; next I edit line ${turn}.` };
    messages.push(message);
    bytes += JSON.stringify(message).length + 1;
  }
  return messages;
}

const bodies = new Map<boolean, string>();

/** The chat completion every bench sends, streamed or not (the same text each time). */
export function requestBody(stream: boolean): string {
  let body = bodies.get(stream);
  if (body === undefined) {
    body = JSON.stringify({
      model: "gpt-4o-mini",
      messages: conversation(PROMPT_KB),
      max_tokens: 16,
      ...(stream ? { stream: true } : {}),
    });
    bodies.set(stream, body);
  }
  return body;
}

export interface Measured {
  p50: number;
  p99: number;
  /** Answers other than 200 after the warm-up. */
  failures: number;
  /** Answers 200, warm-up included: what the target served. */
  served: number;
}

/**
 * Sequential requests on one keep-alive connection per target, the targets taking turns request by
 * request (in a rotating order): a burst of work elsewhere on the machine (settling, GC, a flush)
 * then lands on every target alike, so their tails compare within the run.
 */
export async function latencies(targets: Target[], stream: boolean): Promise<Map<string, Measured>> {
  const clients = targets.map((target) => {
    const url = new URL(target.url);
    const pool = new Pool(url.origin, { connections: 1 });
    const client = {
      target,
      pool,
      failures: 0,
      served: 0,
      samples: [] as number[],
      send: async () => {
        const response = await pool.request({
          method: "POST",
          path: url.pathname,
          headers: { "content-type": "application/json", ...target.headers },
          body: requestBody(stream),
        });
        const text = await response.body.text();
        if (response.statusCode === 200) client.served++;
        else if (client.failures++ === 0) {
          process.stderr.write(`${target.name}: status ${response.statusCode}: ${text.slice(0, 300)}\n`);
        }
      },
    };
    return client;
  });
  for (let i = 0; i < 200; i++) for (const client of clients) await client.send();
  for (const client of clients) client.failures = 0;
  for (let i = 0; i < LATENCY_REQUESTS; i++) {
    for (let turn = 0; turn < clients.length; turn++) {
      const client = clients[(i + turn) % clients.length] as (typeof clients)[number];
      const start = process.hrtime.bigint();
      await client.send();
      client.samples.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  }
  const measured = new Map<string, Measured>();
  for (const client of clients) {
    await client.pool.close();
    const samples = client.samples.sort((a, b) => a - b);
    measured.set(client.target.name, {
      p50: percentile(samples, 0.5),
      p99: percentile(samples, 0.99),
      failures: client.failures,
      served: client.served,
    });
  }
  return measured;
}

/**
 * How long a throughput phase runs: a duration (autocannon then drops the requests in flight when
 * it ends, which the gateway may still have served), or a number of requests, all answered before
 * it ends, so what the gateway served is exactly what was counted.
 */
export type LoadLength = { seconds: number } | { requests: number };

export interface Throughput {
  /** Responses received. */
  requests: number;
  /** Of which 2xx. */
  served: number;
  /** From the start to the end, or to the last response when `requests` were asked. */
  seconds: number;
  non2xx: number;
  errors: number;
}

export function throughput(
  target: Target,
  stream: boolean,
  length: LoadLength,
  connections = CONNECTIONS,
): Promise<Throughput> {
  const started = performance.now();
  let lastResponse = started;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: target.url,
        method: "POST",
        headers: { "content-type": "application/json", ...target.headers },
        body: requestBody(stream),
        connections,
        ...("seconds" in length
          ? { duration: length.seconds }
          : // A request that timed out would be dropped in flight: no answer here takes a minute.
            { amount: length.requests, timeout: 60 }),
      },
      (error, result) => {
        if (error) return reject(error);
        resolve({
          requests: result.requests.total,
          served: result["2xx"],
          // autocannon reports on its next 1 s tick: the requests' own end is the last answer.
          seconds: "seconds" in length ? result.duration : (lastResponse - started) / 1000,
          non2xx: result.non2xx,
          errors: result.errors,
        });
      },
    );
    if ("requests" in length) {
      instance.on("response", () => {
        lastResponse = performance.now();
      });
    }
  });
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

/** A target's rounds as one row: the medians of its latency and req/s, its failures summed. */
export const summarizeRounds = (runs: { lat: Measured; rps: number; failed: number }[]) => ({
  p50: median(runs.map((run) => run.lat.p50)),
  p99: median(runs.map((run) => run.lat.p99)),
  rps: median(runs.map((run) => run.rps)),
  failed: runs.reduce((total, run) => total + run.failed, 0),
});

const range = (values: number[], digits: number) =>
  `${Math.min(...values).toFixed(digits)} to ${Math.max(...values).toFixed(digits)}`;

/**
 * A target against another, round by round: the median of the per-round req/s ratios and p99
 * differences, with their ranges. A round's targets ran back to back, so a shift of the machine's
 * speed between rounds cancels out of the ratio instead of landing on whichever target it hit.
 */
export function compareRounds(
  runs: { rps: number; p50: number; p99: number }[],
  baseRuns: { rps: number; p50: number; p99: number }[],
) {
  const ratios = runs.map((run, i) => (run.rps / (baseRuns[i]?.rps ?? Number.NaN)) * 100);
  const difference = (quantile: "p50" | "p99") => {
    const differences = runs.map((run, i) => run[quantile] - (baseRuns[i]?.[quantile] ?? Number.NaN));
    return `${median(differences).toFixed(2)} ms (${range(differences, 2)})`;
  };
  return {
    ratio: `${median(ratios).toFixed(0)} % (median of ${ratios.length} rounds, ${range(ratios, 0)} %)`,
    p50: difference("p50"),
    p99: difference("p99"),
  };
}
