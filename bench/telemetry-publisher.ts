/**
 * The end-to-end phase's publisher, in its own process as the gateway proxy is: publishes
 * BENCH_COUNT events of BENCH_ACCOUNT with acks, BENCH_WINDOW in flight, printing
 * `{"published": n}` each time another PROGRESS_EVERY are acked, then the time it took as
 * `{"publishMs": …}`, and exits. Started by telemetry-ingest.ts.
 */
import { connectFromEnv } from "./bus";
import { publishEvents } from "./telemetry-events";

const required = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const PROGRESS_EVERY = 10_000;
let nextReport = PROGRESS_EVERY;

// Publishes as the gateway proxy does, with its credentials.
const nc = await connectFromEnv("gateway-proxy");
const publishMs = await publishEvents(
  nc,
  required("BENCH_ACCOUNT"),
  Number(required("BENCH_COUNT")),
  Number(required("BENCH_WINDOW")),
  (acked) => {
    if (acked < nextReport) return;
    console.log(JSON.stringify({ published: acked }));
    nextReport += PROGRESS_EVERY;
  },
);
await nc.drain();
console.log(JSON.stringify({ publishMs }));
