import { join } from "node:path";
import { type Backend, ensureMongo, ensureNats, findRepoRoot } from "@agentnet/local-backends";
import type { TestProject } from "vitest/node";
import { dockerAnswers, startContainerBackends } from "./containers";
import "./provided";

/**
 * Makes sure the backends tests talk to answer, once per test run: `NATS_URL` / `MONGO_URL` when
 * set; else containers when a Docker engine answers; else the local ones (starting nats-server and
 * FerretDB or mongod under `.data/test` when nothing answers). A missing backend fails the run
 * loudly; no test is skipped for lack of one.
 */
export default async function setup(project: TestProject) {
  const env = process.env;
  const started: Backend[] = [];
  let natsUrl = env.NATS_URL;
  let mongoUrl = env.MONGO_URL;
  if ((!natsUrl || !mongoUrl) && (await dockerAnswers())) {
    const containers = await startContainerBackends();
    natsUrl ??= containers.natsUrl;
    mongoUrl ??= containers.mongoUrl;
    started.push(containers.backend);
  }
  const dataDir = join(findRepoRoot(), ".data", "test");
  const nats = await ensureNats({ url: natsUrl ?? "nats://127.0.0.1:4222", dataDir });
  const mongo = await ensureMongo({ url: mongoUrl ?? "mongodb://127.0.0.1:27017/agentnet_test", dataDir });
  started.push(nats, mongo);
  project.provide("natsUrl", nats.url);
  project.provide("mongoUrl", withDatabase(mongo.url, "agentnet_test"));
  return async () => {
    for (const backend of started.reverse()) await backend.stop();
  };
}

/** Tests share one database; isolation comes from fresh random account ids, not truncation. */
function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  if (parsed.pathname === "" || parsed.pathname === "/") parsed.pathname = `/${database}`;
  return parsed.toString();
}
