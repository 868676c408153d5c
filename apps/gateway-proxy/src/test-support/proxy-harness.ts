import { pageBookOn, type Subscription, serve } from "@agentnet/bus";
import {
  type Caller,
  ControlPlane,
  type GatewayProvider,
  type GatewaySnapshot,
  type PolicyRouting,
} from "@agentnet/contracts";
import { parseSealingKeys, providerCredentialAad, seal } from "@agentnet/sealing";
import { createLogger, hashToken, type MetricsRegistry } from "@agentnet/service-kit";
import { connectTestBus, TEST_SEALING_KEY, uniqueId } from "@agentnet/testkit";
import { type GatewayProxy, type GatewayProxyOptions, startGatewayProxy } from "../app";
import { makeCaller, makePolicy, makeProvider, makeSettings } from "./factories";

/** One provider of a test account: its fields (an id and name made up when absent) and its key. */
export type AccountProvider = Partial<GatewayProvider> & {
  key: string;
  /** Seals the key for this provider id instead of its own: a key the proxy cannot open. */
  keySealedFor?: string;
};

export interface ProxyHarness {
  proxy: GatewayProxy;
  /**
   * Registers an account whose one policy grants `providers` in order (each key sealed as the
   * control-plane seals it), and answers its caller's agentnet token.
   */
  accountWith(
    providers: AccountProvider[],
    options?: { accountId?: string; routing?: PolicyRouting },
  ): { accountId: string; token: string; providers: GatewayProvider[] };
  /**
   * Registers an account from parts of its snapshot (settings made up when absent, nothing else)
   * and one caller per entry of `callers`, and answers their agentnet tokens in that order.
   */
  accountOf(
    parts: Partial<Omit<GatewaySnapshot, "account_id">>,
    callers: Partial<Caller>[],
    accountId?: string,
  ): { accountId: string; tokens: string[] };
  stop(): Promise<void>;
}

/**
 * The control-plane's side, shared by the harnesses of a test file: every harness alive answers
 * each request a proxy sends (the subjects are the control-plane's), so they all know every token
 * and account, or whichever answered first would decide at random.
 */
const played = { callers: new Map<string, Caller>(), snapshots: new Map<string, GatewaySnapshot>() };

/**
 * A gateway proxy on the test bus, with the control-plane's side played from memory: it resolves
 * the tokens and serves the snapshots of the accounts `accountWith` registers. Upstreams may be
 * on loopback; events go to `options.publish` (dropped unless given); metrics are kept in `metrics`
 * when given.
 */
export async function startProxyHarness(
  name: string,
  options: Partial<GatewayProxyOptions> = {},
  metrics?: MetricsRegistry,
): Promise<ProxyHarness> {
  const sealingKey = parseSealingKeys(TEST_SEALING_KEY);
  const { callers, snapshots } = played;
  const proxyBus = await connectTestBus("gateway-proxy");
  const controlPlane = await connectTestBus("control-plane");
  const book = pageBookOn(controlPlane);
  const served: Subscription[] = [
    serve(
      controlPlane,
      ControlPlane.authResolve,
      ({ token_hash }) => {
        const caller = callers.get(token_hash);
        if (!caller) throw new Error("unknown token");
        return caller;
      },
      { queue: name },
    ),
    serve(
      controlPlane,
      ControlPlane.gatewaySnapshot,
      ({ account_id, page, version }) =>
        book.page(account_id, { page, version }, async () => {
          const snapshot = snapshots.get(account_id);
          if (!snapshot) throw new Error("unknown account");
          return JSON.stringify(snapshot);
        }),
      { queue: name },
    ),
  ];
  await controlPlane.flush();
  const proxy = await startGatewayProxy({
    nc: proxyBus,
    logger: createLogger(name, "silent"),
    sealingKey,
    metrics,
    options: { port: 0, refusePrivateUpstreams: false, publish: async () => undefined, ...options },
  });

  const accountWith: ProxyHarness["accountWith"] = (specs, { accountId = uniqueId("acc"), routing } = {}) => {
    const providers = specs.map(({ key, keySealedFor, ...fields }) => {
      const id = fields.id ?? uniqueId("prov");
      return makeProvider({
        name: `p-${id}`,
        ...fields,
        id,
        sealed_api_key: seal(sealingKey, key, providerCredentialAad(accountId, keySealedFor ?? id)),
      });
    });
    snapshots.set(accountId, {
      account_id: accountId,
      settings: makeSettings(),
      providers,
      policies: [
        makePolicy({
          id: uniqueId("pol"),
          destination_provider_ids: providers.map((provider) => provider.id),
          ...(routing ? { routing } : {}),
        }),
      ],
      guardrails: [],
      budget_rules: [],
      mcp_servers: [],
      generated_at: new Date().toISOString(),
    });
    return { accountId, token: tokenFor(makeCaller({ account_id: accountId })), providers };
  };

  const tokenFor = (caller: Caller) => {
    const token = `agn_${uniqueId("t").padEnd(40, "x").slice(0, 40)}`;
    callers.set(hashToken(token), caller);
    return token;
  };

  const accountOf: ProxyHarness["accountOf"] = (parts, accountCallers, accountId = uniqueId("acc")) => {
    snapshots.set(accountId, {
      account_id: accountId,
      settings: makeSettings(),
      providers: [],
      policies: [],
      guardrails: [],
      budget_rules: [],
      mcp_servers: [],
      generated_at: new Date().toISOString(),
      ...parts,
    });
    const tokens = accountCallers.map((caller) =>
      tokenFor(makeCaller({ user_id: uniqueId("usr"), ...caller, account_id: accountId })),
    );
    return { accountId, tokens };
  };

  return {
    proxy,
    accountWith,
    accountOf,
    async stop() {
      await proxy.stop();
      for (const subscription of served) subscription.unsubscribe();
      await proxyBus.drain();
      await controlPlane.drain();
    },
  };
}
