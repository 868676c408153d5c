import type { NatsConnection } from "@agentnet/bus";
import type { Caller, CreateProviderBody } from "@agentnet/contracts";
import { startVerifier, type VerifierOptions, verifierEndpoints } from "@agentnet/provider-verifier/app";
import { parseSealingKeys, type SealingKeys } from "@agentnet/sealing";
import { createLogger, newId } from "@agentnet/service-kit";
import { connectTestBus, connectTestMongo, TEST_SEALING_KEY, uniqueId } from "@agentnet/testkit";
import type { Connection } from "mongoose";
import { startControlPlane } from "../app";

export interface ControlPlaneHarness {
  connection: Connection;
  /** The bus connection requests are sent on, as the api-gateway sends them. */
  api: NatsConnection;
  sealingKey: SealingKeys;
  stop: () => Promise<void>;
}

/**
 * A control-plane on the test bus and MongoDB, sealing with the test key, and a provider-verifier
 * of its own on a test-unique subject prefix (taking `verifier` as its options).
 */
export async function startControlPlaneHarness(
  verifier: Omit<VerifierOptions, "subjectPrefix"> = {},
): Promise<ControlPlaneHarness> {
  const sealingKey = parseSealingKeys(TEST_SEALING_KEY);
  const connection = await connectTestMongo();
  const controlPlane = await connectTestBus("control-plane-test");
  const verifierBus = await connectTestBus("provider-verifier-test");
  const api = await connectTestBus("api-gateway-test");
  const prefix = uniqueId("verifier");
  const verifierApp = await startVerifier({
    nc: verifierBus,
    logger: createLogger("provider-verifier", "silent"),
    options: { ...verifier, subjectPrefix: prefix },
  });
  await startControlPlane({
    nc: controlPlane,
    connection,
    logger: createLogger("control-plane", "silent"),
    sealingKey,
    verifier: verifierEndpoints(prefix),
  });
  return {
    connection,
    api,
    sealingKey,
    async stop() {
      verifierApp.stop();
      await Promise.all([controlPlane.drain(), verifierBus.drain(), api.drain()]);
      await connection.close();
    },
  };
}

/** The owner of a fresh account. */
export const makeOwner = (): Caller => ({
  account_id: uniqueId("acc"),
  user_id: newId(),
  role: "owner",
  group_ids: [],
  email: "owner@example.com",
  name: "Owner",
});

/**
 * A complete provider body: a Vertex provider holding a bare access token. Its loopback upstream
 * is stored unverified (a private address), which is all a test of the stored fields needs.
 */
export const makeProviderBody = (overrides: Partial<CreateProviderBody> = {}): CreateProviderBody => ({
  provider_id: "vertex_api",
  name: uniqueId("p"),
  upstream_url: "http://127.0.0.1:9/v1/projects/p/locations/us-central1",
  api_key: "ya29.test-access-token",
  models: [],
  extra_values: {},
  identity_header_user_id: "",
  identity_header_groups: "",
  enabled: true,
  skip_tls_verification: false,
  metadata_disabled: false,
  ...overrides,
});
