import { ALERTS_STREAM, AlertSubjects, Notifications } from "./notifications";
import { CONSUMPTION_CENSUS_SUBJECT, CONSUMPTION_LEADER_SUBJECT, Consumption } from "./reservations";
import { ACCOUNT_EVENTS_STREAM, ControlPlane, Events, REQUESTS_STREAM } from "./subjects";
import { Telemetry, TelemetryIngest } from "./telemetry";
import { Verifier } from "./verifier";

/**
 * Who may do what on the bus. Every service connects as its own NATS user and gets only the
 * subjects it needs: a service's credentials cannot call another's endpoints, read its requests or
 * its replies. The control-plane trusts the `caller` a message carries because only the api-gateway
 * may send `caller`-bearing requests. The local stack's nats-server configuration, the compose
 * file's and the tests' are all generated from this table.
 */
export const BUS_SERVICES = [
  "control-plane",
  "provider-verifier",
  "telemetry",
  "consumption",
  "gateway-proxy",
  "api-gateway",
  "cli",
] as const;
export type BusService = (typeof BUS_SERVICES)[number];

export interface BusPermissions {
  publish: string[];
  subscribe: string[];
}

/**
 * Replies come back on the requester's own inbox prefix, which only it may subscribe to; a service
 * may publish into the inboxes of the services that call it (`ANSWERS`), nowhere else.
 */
export const inboxPrefix = (service: BusService) => `_INBOX_${service}`;

/**
 * Whose requests each service answers. Answering is granted as publishing into those callers'
 * inboxes rather than NATS `allow_responses`: with it, nats-server 2.9 (Debian 12's) records the
 * reply subject of every message it delivers to the service, JetStream deliveries included (their
 * ack subject), keeps each for 2 minutes, and past 4,096 of them walks the whole record on every
 * delivery — 84 % of the server's CPU under 1,200 requests/s, more than the proxy itself used.
 */
const ANSWERS: Record<BusService, BusService[]> = {
  "control-plane": ["api-gateway", "gateway-proxy", "telemetry", "consumption", "cli"],
  "provider-verifier": ["control-plane"],
  telemetry: ["api-gateway", "gateway-proxy"],
  consumption: ["gateway-proxy", "api-gateway"],
  // A new consumption leader's census of lease holders.
  "gateway-proxy": ["consumption"],
  "api-gateway": [],
  cli: [],
};

const KV_LEASES = "KV_agn_leases";

/** Creating or updating a stream the service depends on (each service ensures what it uses). */
const manageStream = (stream: string) => [
  "$JS.API.INFO",
  `$JS.API.STREAM.INFO.${stream}`,
  `$JS.API.STREAM.CREATE.${stream}`,
  `$JS.API.STREAM.UPDATE.${stream}`,
];

/** A durable pull consumer on `stream`: create, look up, pull, ack. */
const consume = (stream: string) => [
  `$JS.API.CONSUMER.CREATE.${stream}.>`,
  `$JS.API.CONSUMER.DURABLE.CREATE.${stream}.>`,
  `$JS.API.CONSUMER.INFO.${stream}.>`,
  `$JS.API.CONSUMER.MSG.NEXT.${stream}.>`,
  `$JS.ACK.${stream}.>`,
];

/** A lease key in the leadership bucket (JetStream KV). */
const leadership = [
  ...manageStream(KV_LEASES),
  `$JS.API.DIRECT.GET.${KV_LEASES}.>`,
  `$JS.API.STREAM.MSG.GET.${KV_LEASES}`,
  "$KV.agn_leases.>",
];

const subjects = (endpoints: Record<string, { subject: string }>) =>
  Object.values(endpoints).map((endpoint) => endpoint.subject);

/** Control-plane endpoints that carry a `caller`: the api-gateway's alone. */
const callerEndpoints = "agn.ctl.>";

const PERMISSIONS: Record<BusService, BusPermissions> = {
  "api-gateway": {
    publish: [callerEndpoints, ...subjects(Telemetry), Consumption.list.subject, Consumption.caps.subject],
    subscribe: [Events.proxyHeartbeat, Events.callersRevoked],
  },
  "control-plane": {
    publish: [
      Events.configChangedAll,
      Events.accountDeleted,
      Events.callersRevoked,
      ...subjects(Verifier),
      ...manageStream(ACCOUNT_EVENTS_STREAM),
      // Alerts: it turns proxies' credential notices into alerts and delivers every alert.
      AlertSubjects.providerAll,
      ...manageStream(ALERTS_STREAM),
      ...consume(ALERTS_STREAM),
    ],
    // Config changes through other replicas drop the snapshots this one rendered.
    subscribe: [
      callerEndpoints,
      Events.proxyHeartbeat,
      AlertSubjects.credentialRejected,
      Events.configChangedAll,
    ],
  },
  "provider-verifier": { publish: [], subscribe: subjects(Verifier) },
  telemetry: {
    publish: [
      ControlPlane.settingsOfAccount.subject,
      ControlPlane.retentionList.subject,
      ...manageStream(REQUESTS_STREAM),
      ...consume(REQUESTS_STREAM),
      ...manageStream(ACCOUNT_EVENTS_STREAM),
      ...consume(ACCOUNT_EVENTS_STREAM),
    ],
    subscribe: [...subjects(Telemetry), ...subjects(TelemetryIngest)],
  },
  consumption: {
    publish: [
      ControlPlane.gatewaySnapshot.subject,
      ...manageStream(REQUESTS_STREAM),
      ...consume(REQUESTS_STREAM),
      ...manageStream(ACCOUNT_EVENTS_STREAM),
      ...consume(ACCOUNT_EVENTS_STREAM),
      // Budget alerts: what to watch per account, and the crossings it sees as it settles.
      Notifications.watch.subject,
      AlertSubjects.budgetAll,
      ...leadership,
      CONSUMPTION_LEADER_SUBJECT,
      CONSUMPTION_CENSUS_SUBJECT,
      // The admission event of a request whose proxy died, published in its place.
      Events.requestsAll,
    ],
    subscribe: [
      ...subjects(Consumption),
      `${Consumption.lease.subject}.*`,
      Events.proxyAdmittedAll,
      Events.proxyHeartbeat,
      // An account's watched caps change with its configuration.
      Events.configChangedAll,
    ],
  },
  "gateway-proxy": {
    publish: [
      ControlPlane.authResolve.subject,
      ControlPlane.gatewaySnapshot.subject,
      ControlPlane.mcpUserCredentialOf.subject,
      Consumption.lease.subject,
      `${Consumption.lease.subject}.*`,
      Events.requestsAll,
      Events.proxyHeartbeat,
      Events.proxyAdmittedAll,
      ...manageStream(REQUESTS_STREAM),
      TelemetryIngest.storedRequests.subject,
      AlertSubjects.credentialRejected,
    ],
    subscribe: [
      Events.configChangedAll,
      Events.accountDeleted,
      Events.callersRevoked,
      CONSUMPTION_LEADER_SUBJECT,
      CONSUMPTION_CENSUS_SUBJECT,
    ],
  },
  cli: {
    publish: [ControlPlane.accountsBootstrap.subject, ControlPlane.sealingReseal.subject],
    subscribe: [],
  },
};

/** What `service` may publish (its callers' inboxes included) and subscribe to (its own inbox included). */
export function busPermissions(service: BusService): BusPermissions {
  const own = PERMISSIONS[service];
  return {
    publish: [...own.publish, ...ANSWERS[service].map((caller) => `${inboxPrefix(caller)}.>`)],
    subscribe: [...own.subscribe, `${inboxPrefix(service)}.>`],
  };
}

/** The inbox prefix of connections without a service's (tests and benchmarks driving the bus as operators). */
export const OPERATOR_INBOX_PREFIX = "_INBOX";
