/**
 * The consumption service as bench:proxy and bench:cluster run it for their "+ cap" rows: its own
 * process, as in production (apart from the proxy and from autocannon), reading the benchmark's
 * database, with a durable consumer that starts at the stream's end so earlier runs' events are not
 * replayed. Logs a line with "ready":true once it leads, or once started with `BENCH_STANDBY` set
 * (a second replica, which stands by while the first leads); stops on SIGTERM.
 */
import { MONGO_CONNECTION_OPTIONS, startConsumption } from "@agentnet/consumption/app";
import { createLogger } from "@agentnet/service-kit";
import mongoose from "mongoose";
import { connectFromEnv } from "./bus";

const { BENCH_MONGO_URL, BENCH_DURABLE, BENCH_STANDBY } = process.env;
if (!BENCH_MONGO_URL || !BENCH_DURABLE) {
  throw new Error("BENCH_MONGO_URL and BENCH_DURABLE are set by bench/proxy-stack.ts");
}
const connection = await mongoose.createConnection(BENCH_MONGO_URL, MONGO_CONNECTION_OPTIONS).asPromise();
const nc = await connectFromEnv("consumption");
const service = await startConsumption({
  nc,
  connection,
  logger: createLogger("bench-consumption", "warn"),
  options: { durable: BENCH_DURABLE, deliverNew: true },
});
const leaderBy = Date.now() + 30_000;
while (!BENCH_STANDBY && !service.isLeader()) {
  if (Date.now() > leaderBy) throw new Error("this consumption replica was not elected within 30 s");
  await new Promise((resolve) => setTimeout(resolve, 100));
}
console.log(JSON.stringify({ ready: true, leading: service.isLeader() }));
process.once("SIGTERM", async () => {
  await service.stop();
  await nc.drain();
  await connection.close();
  process.exit(0);
});
