import { type NatsConnection, request } from "@agentnet/bus";
import { AppError, ControlPlane } from "@agentnet/contracts";
import { providerCredentialAad, unseal } from "@agentnet/sealing";
import {
  type EntraTokenServer,
  type GoogleTokenServer,
  startEntraTokenServer,
  startGoogleTokenServer,
} from "@agentnet/testkit/oauth-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgentModels } from "../store/agent-models";
import {
  type ControlPlaneHarness,
  makeOwner,
  makeProviderBody,
  startControlPlaneHarness,
} from "../test-support/harness";

/**
 * A provider's key may be a credential the proxy exchanges for tokens (packages/vendor-auth): the
 * control-plane takes it where the catalog entry does, refuses a malformed one with a 400, keeps
 * it sealed and write-only, and says which kind it stored.
 */
describe("provider keys of each kind", () => {
  let harness: ControlPlaneHarness;
  let api: NatsConnection;
  let google: GoogleTokenServer;
  let entra: EntraTokenServer;
  const caller = makeOwner();

  beforeAll(async () => {
    google = await startGoogleTokenServer();
    entra = await startEntraTokenServer();
    harness = await startControlPlaneHarness({
      tokenEndpoints: [new URL(google.tokenUri).origin, entra.authorityHost],
      extraCa: [entra.ca],
    });
    api = harness.api;
  });
  afterAll(async () => {
    await harness?.stop();
    await google?.close();
    await entra?.close();
  });

  // A loopback upstream is stored unverified (private address), with no grant sent for it; the
  // key's form and its token endpoint are still checked first.
  const create = (provider_id: string, api_key: string, skip_tls_verification = false) =>
    request(api, ControlPlane.providersCreate, {
      caller,
      body: makeProviderBody({
        provider_id,
        api_key,
        skip_tls_verification,
        ...(provider_id === "vertex_api" ? {} : { upstream_url: "http://127.0.0.1:9/openai/v1" }),
      }),
    });
  const refusal = (reply: Promise<unknown>) =>
    reply.then(
      () => undefined,
      (error: unknown) => error,
    );

  it("takes a Google service-account key file for Vertex, sealed, write-only, read back as its kind", async () => {
    const account = google.serviceAccount();
    // A real key file is about 2.4 KB: well inside the api_key bound.
    expect(account.json.length).toBeGreaterThan(2_000);
    const created = await create("vertex_api", account.json);
    expect(created.credential_kind).toBe("service_account");
    expect(JSON.stringify(created)).not.toContain("PRIVATE KEY");
    // Stored unverified for its private upstream: the verifier sent no grant for it.
    expect(google.mints).not.toContain(account.email);
    const models = await createAgentModels(harness.connection);
    const doc = await models.Provider.findById(created.id).lean();
    expect(
      doc &&
        unseal(harness.sealingKey, doc.sealed_api_key, providerCredentialAad(caller.account_id, doc._id)),
    ).toBe(account.json);
    const read = await request(api, ControlPlane.providersGet, { caller, provider_id: created.id });
    expect(read.credential_kind).toBe("service_account");
  });

  it("a bare Vertex access token is stored as one, so the dashboard can say it expires", async () => {
    const created = await create("vertex_api", "ya29.a0-bare-token");
    expect(created.credential_kind).toBe("access_token");
  });

  it("refuses a malformed service-account key with a 400 that names the problem, not the key", async () => {
    const account = google.serviceAccount();
    const { private_key: _dropped, ...incomplete } = account.key;
    const error = await refusal(create("vertex_api", JSON.stringify(incomplete)));
    expect(error).toBeInstanceOf(AppError);
    expect({ status: (error as AppError).status, message: (error as AppError).message }).toEqual({
      status: 400,
      message: "api_key: the service-account key lacks private_key",
    });
    const broken = await refusal(
      create("vertex_api", `{"type": "service_account", "private_key": "-----BEGIN`),
    );
    expect((broken as AppError).message).toBe("api_key: api_key looks like JSON but is not: not valid JSON");
  });

  it("a key naming a token endpoint the gateway sends no grants to is 422 even with skip_tls_verification, and nothing is stored", async () => {
    const account = google.serviceAccount();
    const key = JSON.stringify({ ...account.key, token_uri: "http://127.0.0.1:8080/token" });
    const models = await createAgentModels(harness.connection);
    const before = await models.Provider.countDocuments();
    for (const skipTls of [false, true]) {
      const error = await refusal(create("vertex_api", key, skipTls));
      expect({ status: (error as AppError).status, code: (error as AppError).code }).toEqual({
        status: 422,
        code: "provider.credential_rejected",
      });
    }
    expect(await models.Provider.countDocuments()).toBe(before);
  });

  it("takes Entra ID client credentials for Azure and refuses JSON where the entry takes only API keys", async () => {
    const app = entra.client();
    const created = await create("azure_api", app.json);
    expect(created.credential_kind).toBe("entra_client_secret");
    expect(entra.mints).not.toContain(app.credentials.client_id);
    const plain = await create("azure_api", "azure-api-key");
    expect(plain.credential_kind).toBe("api_key");
    const error = await refusal(create("openai_api", app.json));
    expect({ status: (error as AppError).status, message: (error as AppError).message }).toEqual({
      status: 400,
      message: "api_key: openai_api takes an API key, not a JSON credential",
    });
  });

  it("takes a Bedrock API key or IAM access keys for Bedrock; access keys need a region to sign for", async () => {
    const keys = {
      access_key_id: "AKIAIOSFODNN7EXAMPLE",
      secret_access_key: "wJalrXUtnFEMI/K7MDENG/EXAMPLEKEY",
    };
    const signed = await create("bedrock_api", JSON.stringify({ ...keys, region: "eu-west-3" }));
    expect(signed.credential_kind).toBe("aws_access_key");
    expect(JSON.stringify(signed)).not.toContain(keys.secret_access_key);
    expect((await create("bedrock_api", "ABSKexample-bedrock-api-key")).credential_kind).toBe("api_key");
    // The loopback upstream names no region, and the keys none either: they could never sign.
    const regionless = await refusal(create("bedrock_api", JSON.stringify(keys)));
    expect({ status: (regionless as AppError).status, code: (regionless as AppError).code }).toEqual({
      status: 422,
      code: "provider.credential_rejected",
    });
    expect((regionless as AppError).message).toMatch(/add "region" to the access keys/);
    const malformed = await refusal(create("bedrock_api", JSON.stringify({ access_key_id: "AKIA" })));
    expect({ status: (malformed as AppError).status, message: (malformed as AppError).message }).toEqual({
      status: 400,
      message:
        'api_key: AWS access keys are {"access_key_id", "secret_access_key"} and optionally "session_token", "region"; missing secret_access_key',
    });
  });

  it("an update with a new key records its kind; moving a key to an entry that does not take it is refused", async () => {
    const created = await create("vertex_api", "ya29.first");
    const account = google.serviceAccount();
    const { id, credential_kind: _kind, created_at: _c, updated_at: _u, ...rest } = created;
    const updated = await request(api, ControlPlane.providersUpdate, {
      caller,
      provider_id: id,
      body: { ...rest, api_key: account.json },
    });
    expect(updated.credential_kind).toBe("service_account");
    const moved = await refusal(
      request(api, ControlPlane.providersUpdate, {
        caller,
        provider_id: id,
        body: { ...rest, provider_id: "mistral_api", upstream_url: "http://127.0.0.1:9/v1" },
      }),
    );
    expect((moved as AppError).status).toBe(400);
  });
});
