import type { AskLeader } from "@agentnet/caps";
import { findCatalogModel } from "@agentnet/catalog";
import { CapDenyReason, type GatewayProvider, type LeaseRequest } from "@agentnet/contracts";
import {
  BoundCounter,
  BoundHistogram,
  type CounterSeries,
  countedElsewhere,
  gaugeOf,
  type HistogramSeries,
  type HttpAnswer,
  type MetricsRegistry,
} from "@agentnet/service-kit";
import type { Cooldowns } from "./domain/cooldown";
import type { AdmissionAnnouncer } from "./events/admission";
import type { RequestRecord } from "./events/build";
import type { BufferedPublisher } from "./events/publisher";
import { UpstreamMetrics } from "./metrics-upstream";
import type { ForwardResult } from "./upstream/forward";
import type { UsageCounts, Wire } from "./wires";

/*
 * The proxy's metrics (docs/OPERATIONS.md, "Metrics"). Labels stay bounded whatever tenants
 * configure or callers send: the provider is its catalog type (`openai_api`), never a tenant's
 * provider id; the model is the catalog's id for it (a dated alias counts as its model), anything
 * else "other"; no account, user, token or session id anywhere. The request path binds its series
 * once per combination and then only adds to plain numbers (`BoundCounter`, `BoundHistogram`).
 */

/** The provider label of a request no provider was resolved for (refused before routing, or by policy). */
const NO_PROVIDER = "none";
/** The model label of a model its provider's catalog entry does not know. */
const OTHER_MODEL = "other";

/** From a cached answer on loopback to the longest generations (the upstream timeouts are 300 s). */
const UPSTREAM_SECONDS_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300];

const CAP_REASONS: ReadonlySet<string> = new Set([...CapDenyReason.options, "consumption.unavailable"]);

type TokenType = "input" | "cached_input" | "cache_creation" | "output";

/** What every request to one (provider type, catalog model) adds to. */
class ModelSeries {
  readonly tokens: Record<TokenType, CounterSeries>;
  readonly costUsd: CounterSeries;
  private timings: { stream: UpstreamTimings | undefined; whole: UpstreamTimings | undefined } = {
    stream: undefined,
    whole: undefined,
  };

  constructor(
    private readonly metrics: ProxyMetrics,
    readonly provider: string,
    readonly model: string,
  ) {
    const bind = (type: TokenType) => metrics.tokens.bind({ provider, model, type });
    this.tokens = {
      input: bind("input"),
      cached_input: bind("cached_input"),
      cache_creation: bind("cache_creation"),
      output: bind("output"),
    };
    this.costUsd = metrics.costUsd.bind({ provider, model });
  }

  /**
   * Adds a request's tokens so that the four types sum to every token the upstream processed (the
   * access log's total_tokens): OpenAI counts cached input inside its input, Anthropic beside it.
   */
  used(usage: UsageCounts, wire: Wire): void {
    this.tokens.input.value += wire.uncachedInput(usage);
    this.tokens.cached_input.value += usage.cached_input_tokens;
    this.tokens.cache_creation.value += usage.cache_creation_tokens;
    this.tokens.output.value += usage.output_tokens;
  }

  upstream(stream: boolean): UpstreamTimings {
    const key = stream ? "stream" : "whole";
    let timings = this.timings[key];
    if (!timings) {
      const labels = { provider: this.provider, model: this.model, stream: String(stream) };
      timings = {
        duration: this.metrics.upstreamSeconds.bind(labels),
        firstByte: this.metrics.firstByteSeconds.bind(labels),
      };
      this.timings[key] = timings;
    }
    return timings;
  }
}

interface UpstreamTimings {
  duration: HistogramSeries;
  firstByte: HistogramSeries;
}

/** The series of one (route, provider type, model): a request's `RequestRecord.series`. */
export class RequestSeries {
  /** By `status * 2 + allowed`: a number, so counting builds no key. */
  private readonly outcomes = new Map<number, CounterSeries>();

  constructor(
    private readonly metrics: ProxyMetrics,
    private readonly route: string,
    private readonly model: ModelSeries | undefined,
  ) {}

  /** The request ended (its event is published now): its outcome, tokens, cost and cap refusal. */
  ended(record: RequestRecord): void {
    const allowed = record.decision === "allow";
    const key = record.status * 2 + (allowed ? 1 : 0);
    let outcome = this.outcomes.get(key);
    if (!outcome) {
      outcome = this.metrics.requests.bind({
        route: this.route,
        provider: this.model?.provider ?? NO_PROVIDER,
        model: this.model?.model ?? OTHER_MODEL,
        decision: record.decision,
        code: String(record.status),
      });
      this.outcomes.set(key, outcome);
    }
    outcome.value++;
    if (this.model && record.usage) this.model.used(record.usage, record.wire);
    if (this.model && record.cost) this.model.costUsd.value += record.cost.cost_usd;
    if (CAP_REASONS.has(record.denyReason)) this.metrics.capRefused(record.denyReason, allowed);
  }

  /** The upstream answered (or was cut off): how long it took, and until its headers came. */
  forwarded(result: ForwardResult, sentAt: number): void {
    if (!this.model || result.outcome === "unreachable" || result.outcome === "retryable") return;
    const timings = this.model.upstream(result.stream);
    timings.duration.observe((performance.now() - sentAt) / 1000);
    if (result.headersAt > 0) timings.firstByte.observe((result.headersAt - sentAt) / 1000);
  }
}

/** The series of one route: requests no provider was resolved for, and by provider type and model. */
interface RouteSeries {
  unrouted: RequestSeries;
  byProvider: Map<string, { known: Map<string, RequestSeries>; other: RequestSeries }>;
}

type LeaseAskKind = "grow" | "renew" | "shrink";
type LeaseAskOutcome = "granted" | "refused" | "unanswered";

export class ProxyMetrics {
  readonly requests: BoundCounter<"route" | "provider" | "model" | "decision" | "code">;
  readonly tokens: BoundCounter<"provider" | "model" | "type">;
  readonly costUsd: BoundCounter<"provider" | "model">;
  readonly upstreamSeconds: BoundHistogram<"provider" | "model" | "stream">;
  readonly firstByteSeconds: BoundHistogram<"provider" | "model" | "stream">;
  /** The upstream origins' bound: waits, refusals, requests in flight (src/metrics-upstream.ts). */
  readonly upstream: UpstreamMetrics;
  private readonly responses: BoundCounter<"route" | "code">;
  private readonly capRefusals: BoundCounter<"reason" | "stage">;
  private readonly leaseAsks: BoundCounter<"kind" | "outcome">;
  private readonly routes = new Map<string, RouteSeries>();
  /** By provider type, then by the catalog model's label. */
  private readonly models = new Map<string, Map<string, ModelSeries>>();
  private readonly answerListeners = new Map<string, (this: HttpAnswer) => void>();
  private readonly refusedByStage = {
    admission: new Map<string, CounterSeries>(),
    stream: new Map<string, CounterSeries>(),
  };
  private readonly askSeries = new Map<string, CounterSeries>();
  private readonly toolCalls: BoundCounter<"decision" | "code">;
  private readonly toolCallSeconds: BoundHistogram<"decision">;
  private readonly toolCallSeries = new Map<string, { count: CounterSeries; seconds: HistogramSeries }>();

  constructor(private readonly registry: MetricsRegistry) {
    this.upstream = new UpstreamMetrics(registry);
    this.requests = new BoundCounter(registry, {
      name: "agentnet_proxy_requests_total",
      help: "Inference requests of configured accounts (one per request event), by route, provider type, catalog model, decision and status",
      labelNames: ["route", "provider", "model", "decision", "code"],
    });
    this.responses = new BoundCounter(registry, {
      name: "agentnet_proxy_http_responses_total",
      help: "Every answer on the proxy's inference and model-list routes by status, refusals before the account is known (401, 413, ...) included",
      labelNames: ["route", "code"],
    });
    this.tokens = new BoundCounter(registry, {
      name: "agentnet_proxy_tokens_total",
      help: "Tokens the upstreams processed, by provider type, catalog model and type (input excludes cached_input; the four sum to total_tokens)",
      labelNames: ["provider", "model", "type"],
    });
    this.costUsd = new BoundCounter(registry, {
      name: "agentnet_proxy_cost_usd_total",
      help: "What requests cost, in USD at the configured rates, by provider type and catalog model",
      labelNames: ["provider", "model"],
    });
    this.upstreamSeconds = new BoundHistogram(registry, {
      name: "agentnet_proxy_upstream_duration_seconds",
      help: "From sending a request upstream to the end of its answer (a stream's last event), by provider type, catalog model and streaming",
      labelNames: ["provider", "model", "stream"],
      buckets: UPSTREAM_SECONDS_BUCKETS,
    });
    this.firstByteSeconds = new BoundHistogram(registry, {
      name: "agentnet_proxy_upstream_first_byte_seconds",
      help: "From sending a request upstream to its answer's headers (a stream's first byte), by provider type, catalog model and streaming",
      labelNames: ["provider", "model", "stream"],
      buckets: UPSTREAM_SECONDS_BUCKETS,
    });
    this.capRefusals = new BoundCounter(registry, {
      name: "agentnet_proxy_cap_refusals_total",
      help: "Requests refused at a usage cap (stage admission: 429 or 503 consumption.unavailable) or streams cut at one (stage stream), by reason",
      labelNames: ["reason", "stage"],
    });
    this.toolCalls = new BoundCounter(registry, {
      name: "agentnet_proxy_mcp_tool_calls_total",
      help: "MCP tool calls (tools/call on /mcp and /mcp/{server}), by decision and the status their row records (403 not granted, 429 capped, 499 client gone, 502 server unreachable or cut, 504 no answer in time)",
      labelNames: ["decision", "code"],
    });
    this.toolCallSeconds = new BoundHistogram(registry, {
      name: "agentnet_proxy_mcp_tool_call_duration_seconds",
      help: "From a tools/call's arrival to the end of its answer, by decision",
      labelNames: ["decision"],
      buckets: UPSTREAM_SECONDS_BUCKETS,
    });
    this.leaseAsks = new BoundCounter(registry, {
      name: "agentnet_proxy_lease_asks_total",
      help: "Asks to the consumption leader for cap headroom (grow: for a request, renew, shrink), by outcome (granted: every counter fits)",
      labelNames: ["kind", "outcome"],
    });
  }

  /** The series of a request on `route` before (or without) a provider. */
  unrouted(route: string): RequestSeries {
    return this.routeSeries(route).unrouted;
  }

  /** The series of a request on `route` that resolved to `provider` and `model` (allowed or not). */
  routed(route: string, provider: GatewayProvider | undefined, model: string): RequestSeries {
    const series = this.routeSeries(route);
    if (!provider) return series.unrouted;
    const type = provider.provider_id;
    let byModel = series.byProvider.get(type);
    if (!byModel) {
      byModel = {
        known: new Map(),
        other: new RequestSeries(this, route, this.modelSeries(type, OTHER_MODEL)),
      };
      series.byProvider.set(type, byModel);
    }
    const known = byModel.known.get(model);
    if (known) return known;
    const catalogModel = findCatalogModel(type, model)?.id;
    // Only catalog ids and their aliases are kept by name: what callers send is unbounded.
    if (catalogModel === undefined) return byModel.other;
    const request = new RequestSeries(this, route, this.modelSeries(type, catalogModel));
    byModel.known.set(model, request);
    return request;
  }

  /**
   * Counts the answer `res` gives on `route` (an inference or the model-list route) once its
   * connection is done with it, whatever ended it. One listener per route, made once: counting
   * allocates nothing per request.
   */
  countAnswer(route: string, res: HttpAnswer): void {
    let listener = this.answerListeners.get(route);
    if (!listener) {
      const responses = this.responses;
      const byStatus = new Map<number, CounterSeries>();
      listener = function (this: HttpAnswer) {
        let series = byStatus.get(this.statusCode);
        if (!series) {
          series = responses.bind({ route, code: String(this.statusCode) });
          byStatus.set(this.statusCode, series);
        }
        series.value++;
      };
      this.answerListeners.set(route, listener);
    }
    res.on("close", listener);
  }

  /** Counts one MCP tool call as its row records it; one refused at a cap counts as a cap refusal too. */
  toolCalled(
    { decision, status, denyReason }: { decision: string; status: number; denyReason: string },
    seconds: number,
  ): void {
    if (CAP_REASONS.has(denyReason)) this.capRefused(denyReason, false);
    const key = `${decision} ${status}`;
    let series = this.toolCallSeries.get(key);
    if (!series) {
      series = {
        count: this.toolCalls.bind({ decision, code: String(status) }),
        seconds: this.toolCallSeconds.bind({ decision }),
      };
      this.toolCallSeries.set(key, series);
    }
    series.count.value++;
    series.seconds.observe(seconds);
  }

  capRefused(reason: string, cutStream: boolean): void {
    const stage = cutStream ? "stream" : "admission";
    const byReason = this.refusedByStage[stage];
    let series = byReason.get(reason);
    if (!series) {
      series = this.capRefusals.bind({ reason, stage });
      byReason.set(reason, series);
    }
    series.value++;
  }

  /** Counts each ask `ask` sends to the leader, by kind and outcome. */
  countingLeaseAsks(ask: AskLeader): AskLeader {
    return (request) => {
      const kind = leaseAskKind(request);
      return ask(request).then(
        (reply) => {
          this.leaseAsked(kind, reply.grants.every((grant) => grant.fits) ? "granted" : "refused");
          return reply;
        },
        (error: unknown) => {
          this.leaseAsked(kind, "unanswered");
          throw error;
        },
      );
    };
  }

  /** Providers this proxy tries last for now (they kept failing), read at each scrape. */
  followCooldowns(cooldowns: Cooldowns): void {
    gaugeOf(
      this.registry,
      {
        name: "agentnet_proxy_providers_cooling_down",
        help: "Providers this proxy tries last because they kept failing (GET /status names them), cooling down or awaiting their probe",
      },
      () => cooldowns.list().length,
    );
  }

  /** The event publisher's and the admission announcer's own counts, read at each scrape. */
  follow<Event>(publisher: BufferedPublisher<Event>, admissions: AdmissionAnnouncer): void {
    const registry = this.registry;
    gaugeOf(
      registry,
      {
        name: "agentnet_proxy_events_buffered",
        help: "Request events waiting to be published (buffered or awaiting JetStream's ack)",
      },
      () => publisher.pending,
    );
    gaugeOf(
      registry,
      {
        name: "agentnet_proxy_events_buffer_limit",
        help: "Events the buffer holds at most (AGN_EVENT_BUFFER_MAX); beyond it the oldest are dropped",
      },
      () => publisher.status().buffer_bound,
    );
    gaugeOf(
      registry,
      {
        name: "agentnet_proxy_events_publish_failing",
        help: "1 while publishing request events fails (NATS or JetStream unavailable), else 0",
      },
      () => (publisher.status().publishing ? 0 : 1),
    );
    countedElsewhere(
      registry,
      { name: "agentnet_proxy_events_published_total", help: "Request events JetStream acknowledged" },
      () => publisher.published,
    );
    countedElsewhere(
      registry,
      {
        name: "agentnet_proxy_events_dropped_total",
        help: "Request events dropped because the buffer was full (a long NATS outage)",
      },
      () => publisher.dropped,
    );
    countedElsewhere(
      registry,
      {
        name: "agentnet_proxy_events_unpublishable_total",
        help: "Request events the bus could never carry, even cut to fit: dropped",
      },
      () => publisher.unpublishable,
    );
    countedElsewhere(
      registry,
      {
        name: "agentnet_proxy_events_truncated_total",
        help: "Request events too large for the bus, published with their long fields cut",
      },
      () => publisher.truncated,
    );
    countedElsewhere(
      registry,
      {
        name: "agentnet_proxy_admissions_dropped_total",
        help: "Admissions the bus could not carry: dropped",
      },
      () => admissions.status().dropped,
    );
  }

  private leaseAsked(kind: LeaseAskKind, outcome: LeaseAskOutcome): void {
    const key = `${kind} ${outcome}`;
    let series = this.askSeries.get(key);
    if (!series) {
      series = this.leaseAsks.bind({ kind, outcome });
      this.askSeries.set(key, series);
    }
    series.value++;
  }

  private routeSeries(route: string): RouteSeries {
    let series = this.routes.get(route);
    if (!series) {
      series = { unrouted: new RequestSeries(this, route, undefined), byProvider: new Map() };
      this.routes.set(route, series);
    }
    return series;
  }

  private modelSeries(provider: string, model: string): ModelSeries {
    let byModel = this.models.get(provider);
    if (!byModel) {
      byModel = new Map();
      this.models.set(provider, byModel);
    }
    let series = byModel.get(model);
    if (!series) {
      series = new ModelSeries(this, provider, model);
      byModel.set(model, series);
    }
    return series;
  }
}

/** A shrink gives back, a renewal asks for nothing more, anything else grows a lease for requests. */
function leaseAskKind(request: LeaseRequest): LeaseAskKind {
  if (request.asks.some((ask) => ask.shrink === true)) return "shrink";
  return request.asks.every(
    (ask) => ask.need.tokens === 0 && ask.need.cost_nanos === 0 && ask.need.calls === 0,
  )
    ? "renew"
    : "grow";
}

/** The lease asks of a proxy with metrics counted, or `ask` itself without. */
export const countLeaseAsks = (metrics: ProxyMetrics | undefined, ask: AskLeader): AskLeader =>
  metrics ? metrics.countingLeaseAsks(ask) : ask;
