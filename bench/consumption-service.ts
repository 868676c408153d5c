/**
 * The consumption service as bench:proxy runs it for its "+ cap" rows: its own process, as in
 * production (apart from the proxy and from autocannon), reading the benchmark's database, with a
 * durable consumer that starts at the stream's end so earlier runs' events are not replayed.
 * Logs a line with "ready":true once it leads; stops on SIGTERM.
 */
import { MONGO_CONNECTION_OPTIONS, startConsumption } from "@agentnet/consumption/app";
import { createLogger } from "@agentnet/service-kit";
import mongoose from "mongoose";
import { connectFromEnv } from "./bus";

const { BENCH_MONGO_URL, BENCH_DURABLE } = process.env;
if (!BENCH_MONGO_URL || !BENCH_DURABLE) {
  throw new Error("BENCH_MONGO_URL and BENCH_DURABLE are set by bench/gateway-proxy.ts");
}
const connection = await mongoose.createConnection(BENCH_MONGO_URL, MONGO_CONNECTION_OPTIONS).asPromise();
const nc = await connectFromEnv("consumption");
const service = await startConsumption({
  nc,
  connection,
  logger: createLogger("bench-consumption", "warn"),
  options: { durable: BENCH_DURABLE, deliverNew: true },
});
console.log(JSON.stringify({ ready: true }));
process.once("SIGTERM", async () => {
  await service.stop();
  await nc.drain();
  await connection.close();
  process.exit(0);
});
