import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "@agentnet/bus";
import { type BusService, ControlPlane } from "@agentnet/contracts";
import { type BusCredentials, freePort, type OperatorUser } from "@agentnet/local-backends";
import { TEST_SEALING_KEY, testBackends, uniqueId } from "@agentnet/testkit";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { type LogLine, ServiceProcess } from "./service-process";

/** The NATS cluster the services join: its nodes' client URLs in node order, and who may log in. */
export interface ClusterBus {
  urls: string[];
  credentials: BusCredentials;
  operator: OperatorUser;
}

/** Settings every service of the suite runs with: fast heartbeats, as the single-node fault suite. */
export interface ClusterSettings {
  /** The fake vendors' `host:port`, which the proxies refuse on loopback unless allowed. */
  allowedUpstreams: string[];
  /** Extra environment for every service (e.g. the replicas of streams). */
  env?: Record<string, string>;
}

/**
 * The replicas of each service, and the NATS node each one's URL list starts with (then the others
 * in order): node i for the i-th proxy, the two replicas of every other service on two different
 * nodes. Where the bus picks the first node of a list at random, `spreadOverNodes` makes sure.
 * Started in the order `agentnet up` starts them.
 */
const LAYOUT: { service: BusService; app: string; nodes: number[] }[] = [
  { service: "control-plane", app: "control-plane", nodes: [1, 2] },
  { service: "provider-verifier", app: "provider-verifier", nodes: [2, 0] },
  { service: "telemetry", app: "telemetry", nodes: [2] },
  { service: "consumption", app: "consumption", nodes: [0, 1] },
  { service: "gateway-proxy", app: "gateway-proxy", nodes: [0, 1, 2] },
  { service: "api-gateway", app: "api-gateway", nodes: [0, 1] },
];

/**
 * Faster than the defaults (10 s, 30 s), so that a killed proxy's unfinished requests are charged
 * within the suite's wait; but longer than a proxy takes to fail over to another NATS node (a frozen
 * node is declared lost after 3 to 4 s, and a dial to it times out after 3 s), or the leader would
 * take a proxy that is failing over for dead and publish its admissions in place of its events.
 */
const HEARTBEAT_SECONDS = 1;
const LOST_AFTER_SECONDS = 10;

/** The URL list of a process that prefers `node`: that one first, then the others in order. */
export const urlsPreferring = (urls: string[], node: number) =>
  [...urls.slice(node), ...urls.slice(0, node)].join(",");

/**
 * Every service of agentnet as real processes on one NATS cluster and one MongoDB-wire database of
 * the suite's own (a fresh database: consumption's journal is per database), replicas on different
 * nodes (`LAYOUT`). Services start in dependency order, each set of replicas at once.
 */
export async function startClusterStack(bus: ClusterBus, settings: ClusterSettings) {
  const workDir = mkdtempSync(join(tmpdir(), "agn-cluster-"));
  const keepLogs = process.env.AGN_KEEP_CLUSTER_LOGS === "1";
  let failed = false;
  const mongo = new URL(testBackends().mongoUrl);
  mongo.pathname = `/${uniqueId("cluster")}`;
  const processes = new Map<BusService, ServiceProcess[]>();
  const envOf = async (service: BusService, node: number, index: number): Promise<Record<string, string>> => {
    const common = {
      NATS_URL: urlsPreferring(bus.urls, node),
      NATS_USER: service,
      NATS_PASSWORD: bus.credentials[service],
      LOG_LEVEL: "info",
      ...settings.env,
    };
    switch (service) {
      case "gateway-proxy":
        return {
          ...common,
          AGN_SEALING_KEY: TEST_SEALING_KEY,
          AGN_PROXY_PORT: String(await freePort()),
          AGN_ALLOWED_PRIVATE_UPSTREAMS: settings.allowedUpstreams.join(","),
          AGN_PROXY_HEARTBEAT_SECONDS: String(HEARTBEAT_SECONDS),
        };
      case "api-gateway":
        return { ...common, AGN_API_PORT: String(await freePort()) };
      case "control-plane":
        return { ...common, MONGO_URL: mongo.toString(), AGN_SEALING_KEY: TEST_SEALING_KEY };
      case "consumption":
        return {
          ...common,
          MONGO_URL: mongo.toString(),
          AGN_PROXY_LOST_AFTER_SECONDS: String(LOST_AFTER_SECONDS),
        };
      case "telemetry":
        return { ...common, CHDB_DATA_DIR: join(workDir, `chdb-${index}`) };
      default:
        return common;
    }
  };
  for (const { service, app, nodes } of LAYOUT) {
    const replicas = await Promise.all(
      nodes.map(
        async (node, index) =>
          new ServiceProcess(`${service}-${index}`, app, await envOf(service, node, index), workDir),
      ),
    );
    processes.set(service, replicas);
  }
  const replicasOf = (service: BusService): ServiceProcess[] => processes.get(service) ?? [];
  // Watched from their first line: the first leader says so while starting.
  const leaderWatch = new LeaderWatch(replicasOf("consumption"));
  const nodeOf = (service: ServiceProcess): number | undefined => {
    const ports = new Set(service.remotePorts());
    const index = bus.urls.findIndex((url) => ports.has(Number(new URL(url).port)));
    return index < 0 ? undefined : index;
  };
  try {
    for (const { service } of LAYOUT) {
      await Promise.all(replicasOf(service).map((replica) => replica.start()));
      await spreadOverNodes(replicasOf(service), nodeOf);
    }
  } catch (error) {
    await Promise.all([...processes.values()].flat().map((replica) => replica.kill()));
    throw new Error(`the cluster's services did not start (logs in ${workDir})`, { cause: error });
  }
  const operatorBus: NatsConnection = await connect({
    servers: bus.urls,
    user: bus.operator.user,
    pass: bus.operator.password,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
  });

  return {
    workDir,
    replicasOf,
    proxyUrls: () => replicasOf("gateway-proxy").map((proxy) => String(proxy.ready.url)),
    apiUrls: () => replicasOf("api-gateway").map((api) => `http://127.0.0.1:${api.ready.port}`),
    /** A new account and its owner's token (the CLI's `bootstrap`, on the bus). */
    bootstrap: async () =>
      (
        await request(operatorBus, ControlPlane.accountsBootstrap, {
          email: `${uniqueId("owner")}@example.com`,
        })
      ).token,
    /**
     * The consumption replica that leads, by its own word: the last "leading consumption" line
     * without a later "no longer leading" one, within `timeoutMs`.
     */
    leader: (timeoutMs = 30_000) => leaderWatch.next(timeoutMs),
    /** Which NATS node (index into `bus.urls`) a process is connected to right now. */
    nodeOf,
    /** A test failed: `stop` keeps the services' logs and prints what they warned about. */
    failed() {
      failed = true;
    },
    async stop() {
      await operatorBus.close();
      // Edges first, as `agentnet up` stops them; then the rest.
      for (const service of [...LAYOUT].reverse()) {
        await Promise.all(replicasOf(service.service).map((replica) => replica.stop()));
      }
      if (failed) process.stderr.write(noteworthyLines(workDir));
      if (keepLogs || failed) process.stderr.write(`\nthe cluster's logs are kept in ${workDir}\n`);
      else rmSync(workDir, { recursive: true, force: true });
    },
  };
}

/** Lines of each service's log printed when a test failed: the latest. */
const PRINTED_LINES = 60;

/**
 * What a failed run's services said beyond the routine: warnings, errors and leadership changes,
 * the latest of each log, so that a CI run whose work directory is gone still shows them.
 */
function noteworthyLines(workDir: string): string {
  const noteworthy = (line: string) =>
    /"level":[4-6]0/.test(line) || /leading consumption|shutting down/.test(line);
  return readdirSync(workDir)
    .filter((file) => file.endsWith(".log"))
    .map((file) => {
      const lines = readFileSync(join(workDir, file), "utf8").split("\n").filter(noteworthy);
      const shown = lines.slice(-PRINTED_LINES).map((line) => line.slice(0, 400));
      return `\n== ${file}: ${lines.length} warnings, errors and leadership changes, the last ${shown.length}\n${shown.join("\n")}\n`;
    })
    .join("");
}

/** Starts at most this many times more a replica that landed on a sibling's node. */
const PLACEMENT_TRIES = 4;

/**
 * Puts the replicas of one service on different NATS nodes: a service's first connection goes to a
 * node of its list at random (so that a cluster's load spreads), so a replica that landed where a
 * sibling is is started again, a bounded number of times.
 */
async function spreadOverNodes(
  replicas: ServiceProcess[],
  nodeOf: (service: ServiceProcess) => number | undefined,
) {
  for (const [index, replica] of replicas.entries()) {
    const taken = new Set(replicas.slice(0, index).map(nodeOf));
    for (let tries = 0; tries < PLACEMENT_TRIES && taken.has(nodeOf(replica)); tries++) {
      await replica.kill();
      await replica.start();
    }
  }
}

export type ClusterStack = Awaited<ReturnType<typeof startClusterStack>>;

/** Who leads consumption, as the replicas log it. */
export class LeaderWatch {
  private current: ServiceProcess | undefined;
  constructor(replicas: ServiceProcess[]) {
    for (const replica of replicas) {
      replica.onLine((line: LogLine) => {
        const msg = String(line.msg ?? "");
        if (msg.startsWith("leading consumption")) this.current = replica;
        else if (msg === "no longer leading consumption" && this.current === replica)
          this.current = undefined;
      });
    }
  }

  get leader(): ServiceProcess | undefined {
    return this.current?.running ? this.current : undefined;
  }

  /** The leader, once one leads (within `timeoutMs`). */
  async next(timeoutMs: number): Promise<ServiceProcess> {
    for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
      if (this.leader) return this.leader;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(`no consumption replica led within ${timeoutMs} ms`);
  }
}
