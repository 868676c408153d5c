/**
 * The consumption service as the reservation benchmark runs it: its own process (as in production,
 * apart from the proxy that calls it), reading from the benchmark's database, with a durable
 * consumer that starts at the stream's end so earlier runs' events are not replayed. It also echoes
 * BENCH_FLOOR_SUBJECT, which measures the bare NATS round trip between the same two processes.
 * Prints "consumption ready" once it leads; stops on SIGTERM.
 */
import { connectBus } from "@agentnet/bus";
import { startConsumption } from "@agentnet/consumption/app";
import { createLogger } from "@agentnet/service-kit";
import mongoose from "mongoose";

const { BENCH_MONGO_URL, BENCH_NATS_URL, BENCH_DURABLE, BENCH_FLOOR_SUBJECT } = process.env;
if (!BENCH_MONGO_URL || !BENCH_NATS_URL || !BENCH_DURABLE || !BENCH_FLOOR_SUBJECT) {
  throw new Error(
    "BENCH_MONGO_URL, BENCH_NATS_URL, BENCH_DURABLE and BENCH_FLOOR_SUBJECT are set by bench/consumption-reserve.ts",
  );
}
const connection = await mongoose.createConnection(BENCH_MONGO_URL).asPromise();
const nc = await connectBus({ url: BENCH_NATS_URL, name: "bench-consumption" });
const service = await startConsumption({
  nc,
  connection,
  logger: createLogger("bench-consumption", "warn"),
  options: { durable: BENCH_DURABLE, deliverNew: true },
});
// The floor: the same round trip with nothing decided, in this process, to compare against.
nc.subscribe(BENCH_FLOOR_SUBJECT, { callback: (_error, msg) => void msg.respond(msg.data) });
await nc.flush();
console.log("consumption ready");
process.once("SIGTERM", async () => {
  await service.stop();
  await nc.drain();
  await connection.close();
  process.exit(0);
});
