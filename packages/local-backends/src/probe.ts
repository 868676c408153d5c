import { connect, errors } from "@nats-io/transport-node";
import mongoose from "mongoose";

export interface NatsProbeOptions {
  timeoutMs?: number;
  /** Credentials to present; without them the probe connects anonymously. */
  auth?: { user: string; password: string };
}

/**
 * What answers at `url`: `answers` (connected, with `auth` if given), `refused` (a server that
 * wants other credentials), or `down` (nothing, within `timeoutMs`). Throws for a server without
 * JetStream, which no part of agentnet can use.
 */
export async function probeNats(
  url: string,
  options: NatsProbeOptions = {},
): Promise<"answers" | "refused" | "down"> {
  try {
    const nc = await connect({
      servers: url,
      timeout: options.timeoutMs ?? 1_500,
      maxReconnectAttempts: 0,
      reconnect: false,
      ...(options.auth ? { user: options.auth.user, pass: options.auth.password } : {}),
    });
    const jetStreamOn = nc.info?.jetstream === true;
    await nc.close();
    if (!jetStreamOn) throw new Error(`NATS at ${url} answers but has JetStream disabled; start it with -js`);
    return "answers";
  } catch (error) {
    if (error instanceof Error && error.message.includes("JetStream disabled")) throw error;
    if (error instanceof errors.AuthorizationError || /authoriz|authenticat/i.test(String(error))) {
      return "refused";
    }
    return "down";
  }
}

/** True when a NATS server answers at `url` (with `auth` if given) within the timeout. */
export const natsAnswers = async (url: string, options: NatsProbeOptions = {}) =>
  (await probeNats(url, options)) === "answers";

/** Error codes of a MongoDB-wire server that wants another login: Unauthorized, AuthenticationFailed. */
const MONGO_LOGIN_REFUSED = new Set([13, 18]);

export const isMongoLoginRefused = (error: unknown) =>
  error instanceof mongoose.mongo.MongoServerError && MONGO_LOGIN_REFUSED.has(Number(error.code));

/**
 * What answers at `url`: `answers` (admits this client: as the user `url` names, or anonymously
 * when it names none), `refused` (wants a login `url` lacks, or refuses the one it has), or `down`
 * (nothing, within `timeoutMs`). `hello` and `ping` answer anyone, so the probe lists the
 * database's collections, which a server with authentication allows only after a login.
 */
export async function probeMongo(url: string, timeoutMs = 1_500): Promise<"answers" | "refused" | "down"> {
  const client = new mongoose.mongo.MongoClient(url, { serverSelectionTimeoutMS: timeoutMs });
  try {
    await client.connect();
    await client.db().listCollections({}, { nameOnly: true }).toArray();
    return "answers";
  } catch (error) {
    return isMongoLoginRefused(error) ? "refused" : "down";
  } finally {
    await client.close().catch(() => undefined);
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
