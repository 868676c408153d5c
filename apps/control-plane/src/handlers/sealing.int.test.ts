import { type NatsConnection, request } from "@agentnet/bus";
import { ControlPlane } from "@agentnet/contracts";
import {
  generateSealingKey,
  mcpServerCredentialAad,
  parseSealingKeys,
  providerCredentialAad,
  seal,
  unseal,
} from "@agentnet/sealing";
import { createLogger, newId } from "@agentnet/service-kit";
import { connectTestBus, connectTestMongo, uniqueId } from "@agentnet/testkit";
import type { Connection } from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startControlPlane } from "../app";
import { signingSecretAad } from "../domain/webhooks";
import { createAgentModels } from "../store/agent-models";
import { createNotificationModels } from "../store/notification-models";
import { verifySealingKey } from "../store/sealing-canary";

const oldText = generateSealingKey();
const newText = generateSealingKey();

describe("rotating the sealing key", () => {
  let connection: Connection;
  let database: Connection;
  let controlPlane: NatsConnection;
  let cli: NatsConnection;
  let models: Awaited<ReturnType<typeof createAgentModels>>;
  const accountId = uniqueId("acc");

  const storeProvider = async (keysText: string, apiKey: string) => {
    const id = newId();
    await models.Provider.create({
      _id: id,
      account_id: accountId,
      provider_id: "openai_api",
      name: `p-${id}`,
      upstream_url: "https://api.openai.com/v1",
      sealed_api_key: seal(parseSealingKeys(keysText), apiKey, providerCredentialAad(accountId, id)),
      models: [],
      extra_values: {},
      identity_header_user_id: "",
      identity_header_groups: "",
      enabled: true,
      skip_tls_verification: false,
      metadata_disabled: false,
      verification: "verified",
    });
    return id;
  };

  beforeAll(async () => {
    connection = await connectTestMongo();
    // A database of its own: the shared test database's canary must stay sealed with the test key.
    database = connection.useDb(uniqueId("reseal"));
    models = await createAgentModels(database);
    controlPlane = await connectTestBus("control-plane");
    cli = await connectTestBus("cli");
  });
  afterAll(async () => {
    await controlPlane.drain();
    await cli.drain();
    await database.dropDatabase();
    await connection.close();
  });

  it("re-seals every credential with the newest key of the ring, so the old key can be dropped", async () => {
    const first = await storeProvider(oldText, "sk-first");
    const second = await storeProvider(oldText, "sk-second");
    const ring = parseSealingKeys(`${newText},${oldText}`);
    await startControlPlane({
      nc: controlPlane,
      connection: database,
      logger: createLogger("t", "silent"),
      sealingKey: ring,
    });

    const result = await request(cli, ControlPlane.sealingReseal, {});
    expect(result).toEqual({ current_key: ring.current.kid, resealed: 2, already_current: 0, unopened: 0 });

    const onlyNew = parseSealingKeys(newText);
    for (const [id, apiKey] of [
      [first, "sk-first"],
      [second, "sk-second"],
    ] as const) {
      const doc = await models.Provider.findById(id).lean();
      expect(doc?.sealed_api_key.kid).toBe(onlyNew.current.kid);
      expect(
        unseal(onlyNew, doc?.sealed_api_key ?? ({} as never), providerCredentialAad(accountId, id)),
      ).toBe(apiKey);
    }
    // The new key alone now starts the control-plane; the old one alone does not.
    await expect(verifySealingKey(models, onlyNew)).resolves.toBeUndefined();
    await expect(verifySealingKey(models, parseSealingKeys(oldText))).rejects.toThrow(/does not open/);

    // Run again: nothing left to do.
    await expect(request(cli, ControlPlane.sealingReseal, {})).resolves.toMatchObject({
      resealed: 0,
      already_current: 2,
    });
  });

  it("leaves a credential sealed with a key outside the ring as it is, and says so", async () => {
    const foreign = await storeProvider(generateSealingKey(), "sk-foreign");
    const before = (await models.Provider.findById(foreign).lean())?.sealed_api_key;
    await expect(request(cli, ControlPlane.sealingReseal, {})).resolves.toMatchObject({
      resealed: 0,
      unopened: 1,
    });
    expect((await models.Provider.findById(foreign).lean())?.sealed_api_key).toEqual(before);
    await models.Provider.deleteOne({ _id: foreign });
  });

  it("re-seals webhook signing secrets too: the secret stays, sealed with the newest key", async () => {
    const notifications = await createNotificationModels(database);
    const aad = signingSecretAad(accountId);
    await notifications.NotificationSettings.create({
      _id: accountId,
      account_id: accountId,
      url: "https://hooks.example.com/agentnet",
      enabled: true,
      events: ["budget.threshold_crossed"],
      thresholds: [80],
      budget_rule_ids: [],
      policy_ids: [],
      sealed_secret: seal(parseSealingKeys(oldText), "whsec_kept", aad),
    });
    await expect(request(cli, ControlPlane.sealingReseal, {})).resolves.toMatchObject({
      resealed: 1,
      already_current: 2,
      unopened: 0,
    });
    const onlyNew = parseSealingKeys(newText);
    const doc = await notifications.NotificationSettings.findById(accountId).lean();
    expect(doc?.sealed_secret.kid).toBe(onlyNew.current.kid);
    expect(unseal(onlyNew, doc?.sealed_secret ?? ({} as never), aad)).toBe("whsec_kept");
  });

  it("re-seals MCP server credentials, and passes over servers without one", async () => {
    const serverWith = async (id: string, sealed: object) =>
      models.McpServer.create({
        _id: id,
        account_id: accountId,
        name: id,
        description: "",
        url: "https://mcp.example.com/mcp",
        transport: "streamable_http",
        enabled: true,
        skip_tls_verification: false,
        price_per_call: 0,
        ...sealed,
      });
    const aad = mcpServerCredentialAad(accountId, "issues");
    await serverWith("issues", {
      credential_kind: "header",
      credential_header: "Authorization",
      sealed_credential: seal(parseSealingKeys(oldText), "Bearer kept", aad),
    });
    await serverWith("open", { credential_kind: "none" });
    await expect(request(cli, ControlPlane.sealingReseal, {})).resolves.toMatchObject({
      resealed: 1,
      already_current: 3,
      unopened: 0,
    });
    const onlyNew = parseSealingKeys(newText);
    const doc = await models.McpServer.findById("issues").lean();
    expect(doc?.sealed_credential?.kid).toBe(onlyNew.current.kid);
    expect(unseal(onlyNew, doc?.sealed_credential ?? ({} as never), aad)).toBe("Bearer kept");
    expect((await models.McpServer.findById("open").lean())?.sealed_credential).toBeUndefined();
  });

  it("is refused to the other services' bus users", async () => {
    const proxy = await connectTestBus("gateway-proxy");
    await expect(request(proxy, ControlPlane.sealingReseal, {}, { timeoutMs: 1_000 })).rejects.toThrow(
      /permission/i,
    );
    await proxy.close();
  });
});
