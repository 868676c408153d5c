import { randomUUID } from "node:crypto";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import mongoose, { type Connection } from "mongoose";
import { inject } from "vitest";
import "./provided";
import { inboxPrefix } from "@agentnet/contracts";
import { isBusService, isolatedNats } from "./isolated-nats";

/** URLs of the backends the global setup made sure of. */
export const testBackends = () => ({ mongoUrl: inject("mongoUrl") });

/**
 * A connection to this test file's own NATS server (see `isolatedNats`): as that service, with its
 * permissions, when `name` is a service's; else as the test's operator, allowed everything.
 */
export async function connectTestBus(name = "test"): Promise<NatsConnection> {
  const nats = await isolatedNats();
  if (isBusService(name)) {
    return connect({
      servers: nats.url,
      name,
      user: name,
      pass: nats.credentials[name],
      inboxPrefix: inboxPrefix(name),
    });
  }
  return connect({ servers: nats.url, name, user: nats.operator.user, pass: nats.operator.password });
}

export const connectTestMongo = (database?: string): Promise<Connection> => {
  const url = new URL(testBackends().mongoUrl);
  if (database) url.pathname = `/${database}`;
  return mongoose.createConnection(url.toString(), { serverSelectionTimeoutMS: 10_000 }).asPromise();
};

/** A fresh id per test: tests share backends and never see each other's data. */
export const uniqueId = (prefix = "t") => `${prefix}_${randomUUID().replaceAll("-", "").slice(0, 16)}`;

/** A unique NATS subject prefix, for tests that serve their own endpoints. */
export const uniqueSubject = (base: string) => `${base}.${uniqueId("s")}`;

/**
 * The sealing key of every test run. Fixed on purpose: the test database outlives a run, and the
 * control-plane refuses to start with a key that cannot open what the database already holds.
 */
export const TEST_SEALING_KEY = "dGVzdC1vbmx5LXNlYWxpbmcta2V5LTMyLWJ5dGVzISE=";

/** Polls `probe` until it holds (events are handled asynchronously); throws after `timeoutMs`. */
export async function eventually(probe: () => boolean | Promise<boolean>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
