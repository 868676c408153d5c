import { connect } from "@nats-io/transport-node";
import mongoose from "mongoose";

/** True when a NATS server answers at `url` within `timeoutMs`. */
export async function natsAnswers(url: string, timeoutMs = 1_500): Promise<boolean> {
  try {
    const nc = await connect({ servers: url, timeout: timeoutMs, maxReconnectAttempts: 0, reconnect: false });
    const jetStreamOn = nc.info?.jetstream === true;
    await nc.close();
    if (!jetStreamOn) throw new Error(`NATS at ${url} answers but has JetStream disabled; start it with -js`);
    return true;
  } catch (error) {
    if (error instanceof Error && error.message.includes("JetStream disabled")) throw error;
    return false;
  }
}

/** True when a MongoDB-wire server answers a ping at `url` within `timeoutMs`. */
export async function mongoAnswers(url: string, timeoutMs = 1_500): Promise<boolean> {
  const connection = mongoose.createConnection(url, { serverSelectionTimeoutMS: timeoutMs });
  try {
    await connection.asPromise();
    await connection.db?.admin().ping();
    return true;
  } catch {
    return false;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

export async function waitUntil(
  check: () => Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what} did not come up within ${timeoutMs} ms`);
}
