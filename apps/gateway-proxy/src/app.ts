import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  DEFAULT_REQUEST_STREAM_LIMITS,
  ensureRequestStream,
  followCallerRevocations,
  jsonOrUndefined,
  maxPayloadOf,
  type NatsConnection,
  publishEvent,
  publishOrReport,
  type RequestStreamLimits,
  request,
  requestPaged,
} from "@agentnet/bus";
import { answerCensus, LeaseTable } from "@agentnet/caps";
import {
  AppError,
  ConfigChangedEvent,
  Consumption,
  ControlPlane,
  Events,
  type GatewayRequestEvent,
  TelemetryIngest,
} from "@agentnet/contracts";
import type { SealingKeys } from "@agentnet/sealing";
import {
  createDualHttpServer,
  createHealth,
  DEFAULT_HTTP_SERVER_LIMITS,
  type Health,
  type HttpServerLimits,
  type Logger,
  type MetricsRegistry,
  newId,
  tokenResolveRequest,
} from "@agentnet/service-kit";
import { VendorCredentials, type VendorCredentialsOptions } from "@agentnet/vendor-auth";
import type { ProxyContext } from "./context";
import type { CooldownOptions } from "./domain/cooldown";
import { AdmissionAnnouncer } from "./events/admission";
import { CredentialRejections } from "./events/credential-rejections";
import { fitEvent } from "./events/fit";
import { heartbeatMessages, ServedEndpoints } from "./events/heartbeat";
import { BufferedPublisher, type PublishFn } from "./events/publisher";
import { createRequestHandler, InFlight } from "./http/router";
import { countLeaseAsks, ProxyMetrics } from "./metrics";
import { ProviderRouting } from "./request/routing";
import { SnapshotCache } from "./snapshot/cache";
import { CallerCache } from "./snapshot/callers";
import { ConsumptionLeader } from "./snapshot/consumption-leader";
import { tokenEndpointAllowance } from "./upstream/credential";
import { reportOpenFileLimit } from "./upstream/open-files";
import { privateAllowanceOf, UpstreamPools } from "./upstream/pools";

export interface GatewayProxyOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** Endpoints always announced in the heartbeat. */
  endpoints: string[];
  trustProxy: boolean;
  bodyLimitBytes: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  /** Requests in flight to one upstream origin at most, and its pool's connections. */
  connectionsPerOrigin: number;
  /** How long a request past that bound waits for a slot before it is refused (503, Anthropic's 529). */
  upstreamWaitMs: number;
  /** Offer HTTP/2 to upstreams over TLS. */
  upstreamHttp2: boolean;
  /** What one client may hold of the listener: time to send a request, idle time, connections. */
  httpLimits: HttpServerLimits;
  /** The request stream's limits (every service ensuring the stream must agree on them). */
  requestStream: RequestStreamLimits;
  /**
   * Refuse upstreams that are, or resolve to, non-public addresses (loopback, private, link-local,
   * CGNAT, ...) but those `allowedPrivateUpstreams` names (self-hosted models).
   */
  refusePrivateUpstreams: boolean;
  /** Ranges, `address:port` and `name:port` entries (`packages/gateway-rules/src/private-allowance.ts`). */
  allowedPrivateUpstreams: string[];
  eventBufferMax: number;
  authCacheMs: number;
  snapshotMaxAgeMs: number;
  /** How long a failed snapshot load is answered again (503) instead of loaded again. */
  snapshotFailureMs: number;
  /**
   * How long known callers and accounts keep being served from their last good answer while the
   * control-plane (or MongoDB, or NATS) cannot answer. A revocation made during an outage takes
   * effect when the control-plane answers again.
   */
  staleServeMs: number;
  /** How long a request waits for the consumption leader when its leases lack room. */
  leaseTimeoutMs: number;
  /** A lease unused this long gives back what it has not committed. */
  leaseIdleMs: number;
  /** How often leases are renewed, shrunk and forgotten, off the request path. */
  leaseMaintainMs: number;
  /** While NATS is gone, a lease stays usable this long after the leader last confirmed it. */
  leaseOutageGraceMs: number;
  heartbeatMs: number;
  /** When a provider that keeps failing is tried last (`Cooldowns`, src/domain/cooldown.ts). */
  cooldown: CooldownOptions;
  /** How long a clean shutdown waits for buffered events to reach JetStream. */
  shutdownFlushMs: number;
  /**
   * How long a clean shutdown lets requests in flight (streams) finish before it cuts them: a cut
   * request is charged as an interrupted one and its event published before the process exits.
   */
  shutdownDrainMs: number;
  /**
   * Minting tokens from provider keys (`VendorCredentials`): refresh timing and, for tests, the CA
   * of a local Entra ID authority. Which token endpoints a key may name follows the private-upstream rule.
   */
  vendorCredentials?: Omit<VendorCredentialsOptions, "isTokenEndpointAllowed" | "onRefreshFailure">;
  /** Tests replace how events are published (e.g. to exercise the buffer). */
  publish?: PublishFn;
}

export const DEFAULT_OPTIONS: GatewayProxyOptions = {
  host: "127.0.0.1",
  port: 8090,
  endpoints: [],
  trustProxy: false,
  bodyLimitBytes: 10 * 1024 * 1024,
  headersTimeoutMs: 300_000,
  bodyTimeoutMs: 300_000,
  connectionsPerOrigin: 4_096,
  upstreamWaitMs: 5_000,
  upstreamHttp2: true,
  httpLimits: DEFAULT_HTTP_SERVER_LIMITS,
  refusePrivateUpstreams: true,
  allowedPrivateUpstreams: [],
  requestStream: DEFAULT_REQUEST_STREAM_LIMITS,
  eventBufferMax: 50_000,
  authCacheMs: 5_000,
  snapshotMaxAgeMs: 60_000,
  snapshotFailureMs: 5_000,
  staleServeMs: 600_000,
  leaseTimeoutMs: 2_000,
  leaseIdleMs: 2_000,
  leaseMaintainMs: 500,
  leaseOutageGraceMs: 75_000,
  heartbeatMs: 10_000,
  cooldown: { failures: 3, windowMs: 30_000, cooldownMs: 30_000 },
  shutdownFlushMs: 10_000,
  shutdownDrainMs: 5_000,
};

/**
 * Starts the data plane on a bus connection: HTTP listener, snapshot and token caches kept fresh
 * by config and revocation events, the buffered event publisher and the heartbeat. `stop()` stops
 * accepting, lets requests in flight finish, flushes events; the caller drains NATS afterwards.
 */
export async function startGatewayProxy(deps: {
  nc: NatsConnection;
  logger: Logger;
  sealingKey: SealingKeys;
  health?: Health;
  /** The service's metrics registry; undefined keeps no metrics (nothing is counted per request). */
  metrics?: MetricsRegistry | undefined;
  options?: Partial<GatewayProxyOptions>;
}) {
  const options = { ...DEFAULT_OPTIONS, ...deps.options };
  const { nc, logger } = deps;
  const health = deps.health ?? createHealth();
  const proxyId = newId();
  const metrics = deps.metrics ? new ProxyMetrics(deps.metrics) : undefined;

  const snapshots = new SnapshotCache(
    (accountId, fresh) => requestPaged(nc, ControlPlane.gatewaySnapshot, { account_id: accountId, fresh }),
    options.snapshotMaxAgeMs,
    options.staleServeMs,
    options.snapshotFailureMs,
  );
  const callers = new CallerCache(
    async (token) => {
      const resolve = tokenResolveRequest(token);
      if (!resolve) return undefined;
      try {
        return await request(nc, ControlPlane.authResolve, resolve);
      } catch (error) {
        if (error instanceof AppError && error.status === 401) return undefined;
        throw error;
      }
    },
    options.authCacheMs,
    options.staleServeMs,
  );
  // The request id is the Nats-Msg-Id, so a retried publish is stored once.
  const publisher = new BufferedPublisher<GatewayRequestEvent>({
    publish:
      options.publish ?? ((subject, event, msgId, trace) => publishEvent(nc, subject, event, msgId, trace)),
    storedCheck: async (events) => {
      const reply = await request(nc, TelemetryIngest.storedRequests, {
        requests: events.map(({ account_id, id, timestamp }) => ({ account_id, id, timestamp })),
      });
      return reply.decided ? new Set(reply.stored) : undefined;
    },
    shrink: fitEvent,
    logger,
    maxBuffered: options.eventBufferMax,
    duplicateWindowMs: options.requestStream.duplicateWindowMs,
  });
  const consumptionLeader = new ConsumptionLeader(nc);
  const leases = new LeaseTable(
    countLeaseAsks(metrics, (ask) =>
      request(nc, { ...Consumption.lease, subject: consumptionLeader.leaseSubject() }, ask, {
        timeoutMs: options.leaseTimeoutMs,
      }),
    ),
    {
      proxyId,
      clock: Date.now,
      idleMs: options.leaseIdleMs,
      outageGraceMs: options.leaseOutageGraceMs,
      busAnswers: () => nc.flush(),
    },
  );
  consumptionLeader.onReclaim((counterIds) => void leases.reclaim(counterIds));
  consumptionLeader.onCensus(() => answerCensus(leases, proxyId, () => publisher.pending));
  const privateAllowance = privateAllowanceOf(
    options.refusePrivateUpstreams,
    options.allowedPrivateUpstreams,
    logger,
  );
  const ctx: ProxyContext = {
    nc,
    admissions: new AdmissionAnnouncer(nc, proxyId, logger),
    credentialRejections: new CredentialRejections(nc),
    logger,
    sealingKey: deps.sealingKey,
    callers,
    snapshots,
    leases,
    pools: new UpstreamPools({
      headersTimeoutMs: options.headersTimeoutMs,
      bodyTimeoutMs: options.bodyTimeoutMs,
      connectionsPerOrigin: options.connectionsPerOrigin,
      waitMs: options.upstreamWaitMs,
      http2: options.upstreamHttp2,
      privateAllowance,
    }),
    credentials: new VendorCredentials({
      ...options.vendorCredentials,
      isTokenEndpointAllowed: tokenEndpointAllowance(privateAllowance),
      // The token in hand is still served; the next request retries. The message holds no secret.
      onRefreshFailure: (providerId, error) =>
        logger.warn({ provider_id: providerId, reason: error.message }, "provider token refresh failed"),
    }),
    routing: new ProviderRouting(options.cooldown),
    publisher,
    served: new ServedEndpoints(),
    metrics,
    options: {
      trustProxy: options.trustProxy,
      bodyLimitBytes: options.bodyLimitBytes,
    },
  };

  metrics?.follow(publisher, ctx.admissions);
  metrics?.followCooldowns(ctx.routing.cooldowns);
  metrics?.upstream.follow(ctx.pools);
  reportOpenFileLimit(logger, options.connectionsPerOrigin, options.httpLimits.maxConnections);

  // The stream must exist for JetStream to ack events; whoever starts first creates it.
  await ensureRequestStream(nc, [Events.requestsAll], options.requestStream).catch((err: unknown) =>
    logger.warn({ err }, "cannot make sure the request stream exists; events stay buffered until it does"),
  );
  const configEvents = nc.subscribe(Events.configChangedAll, {
    callback: (error, msg) => {
      if (error) return;
      const accountId = msg.subject.slice(Events.configChanged("").length);
      const parsed = ConfigChangedEvent.safeParse(jsonOrUndefined(msg.string()));
      snapshots.invalidate(parsed.success ? parsed.data.account_id : accountId);
    },
  });
  const deletions = nc.subscribe(Events.accountDeleted, {
    callback: (error, msg) => {
      const accountId = error
        ? undefined
        : (jsonOrUndefined(msg.string()) as { account_id?: unknown } | undefined)?.account_id;
      if (typeof accountId === "string") snapshots.invalidate(accountId);
    },
  });
  const revocations = followCallerRevocations(nc, callers, (issues) =>
    logger.warn({ issues }, "unreadable caller revocation: every cached caller is looked up again"),
  );
  watchConnection(nc, { publisher, snapshots, leases });

  const beat = () => {
    const [limit, cooling] = [maxPayloadOf(nc), ctx.routing.cooldowns.list()];
    const messages = heartbeatMessages(proxyId, options.endpoints, ctx.served, Date.now(), limit, cooling);
    for (const message of messages) {
      publishOrReport(nc, Events.proxyHeartbeat, message, (err) =>
        logger.warn({ reason: err.message }, "cannot publish the heartbeat"),
      );
    }
  };
  beat();
  const heartbeatTimer = setInterval(beat, options.heartbeatMs);
  heartbeatTimer.unref();
  let maintaining = false;
  const leaseTimer = setInterval(() => {
    if (maintaining) return;
    maintaining = true;
    void leases.maintain().finally(() => {
      maintaining = false;
    });
  }, options.leaseMaintainMs);
  leaseTimer.unref();

  // HTTP/1.1 and h2c (the AWS SDK's default) on one port, under the same bounds. The request timeout
  // bounds receiving the request only: streamed answers may run for minutes.
  const inFlight = new InFlight();
  const server: Server = createDualHttpServer(
    createRequestHandler(ctx, health, inFlight),
    options.httpLimits,
    logger,
  );
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    // Clients connecting together (agents starting at once) wait in the accept queue while the
    // event loop is busy: Node's default of 511 dropped some of 2,000 at once, which then failed
    // on their connect timeout. The kernel caps it at net.core.somaxconn.
    server.listen(
      { port: options.port, host: options.host, backlog: options.httpLimits.maxConnections },
      () => resolve(),
    );
  });
  await nc.flush();
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
  health.setReady(true);

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      health.setReady(false);
      clearInterval(heartbeatTimer);
      await new Promise<void>((resolve) => {
        // HTTP/2 sessions get GOAWAY: their open streams finish, new ones go elsewhere.
        server.close(() => resolve());
        server.closeIdleConnections();
        // Streams still running after the drain bound are cut; their handlers then charge and
        // publish them (the wait below), so nothing a vendor billed goes unrecorded.
        setTimeout(() => server.closeAllConnections(), options.shutdownDrainMs).unref();
      });
      await inFlight.settled(options.shutdownFlushMs);
      clearInterval(leaseTimer);
      await leases.releaseAll();
      configEvents.unsubscribe();
      consumptionLeader.stop();
      deletions.unsubscribe();
      revocations.stop();
      const flushed = await publisher.flush(options.shutdownFlushMs);
      if (!flushed)
        logger.warn({ pending: publisher.pending }, "request events still unpublished at shutdown");
      publisher.stop();
      await ctx.pools.close();
    })();
    return stopping;
  };

  return { url, port: address.port, server, proxyId, publisher, snapshots, leases, stop };
}

export type GatewayProxy = Awaited<ReturnType<typeof startGatewayProxy>>;

/**
 * On a lost connection leases ride out the outage (and nothing waits on asks that cannot leave);
 * on reconnect: ask the leader again, publish buffered events now, and refresh snapshots (config
 * events may have been missed).
 */
function watchConnection(
  nc: NatsConnection,
  {
    publisher,
    snapshots,
    leases,
  }: { publisher: BufferedPublisher<GatewayRequestEvent>; snapshots: SnapshotCache; leases: LeaseTable },
) {
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect") leases.busLost();
      if (status.type === "reconnect") {
        leases.busReconnected();
        publisher.resume();
        snapshots.markStale();
      }
    }
  })().catch(() => undefined);
}
