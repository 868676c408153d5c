import { type NatsConnection, request, requestPaged } from "@agentnet/bus";
import { AppError, ControlPlane } from "@agentnet/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ControlPlaneHarness,
  makeOwner,
  makeProviderBody,
  startControlPlaneHarness,
} from "../test-support/harness";

/**
 * A provider's `anthropic_betas` (docs/API.md, "Claude betas per upstream"): stored as written,
 * kept by a PUT that omits it, cleared back to the catalog's by null, and carried to the proxies
 * in the gateway snapshot.
 */
describe("a provider's anthropic_betas", () => {
  let harness: ControlPlaneHarness;
  let api: NatsConnection;
  const caller = makeOwner();

  beforeAll(async () => {
    harness = await startControlPlaneHarness();
    api = harness.api;
  });
  afterAll(async () => {
    await harness?.stop();
  });

  const betas = ["context-1m-2025-08-07", "my-new-beta-2026-12-01"];
  const get = (id: string) => request(api, ControlPlane.providersGet, { caller, provider_id: id });
  const update = (id: string, extra: Record<string, unknown>) =>
    request(api, ControlPlane.providersUpdate, {
      caller,
      provider_id: id,
      body: {
        provider_id: "vertex_api",
        name: "renamed",
        upstream_url: "http://127.0.0.1:9/v1/projects/p/locations/us-central1",
        ...extra,
      },
    });
  const snapshotOf = async (id: string) => {
    const snapshot = await requestPaged(api, ControlPlane.gatewaySnapshot, { account_id: caller.account_id });
    return snapshot.providers.find((provider) => provider.id === id);
  };

  it("is stored as written, read back, and carried in the gateway snapshot", async () => {
    const created = await request(api, ControlPlane.providersCreate, {
      caller,
      body: makeProviderBody({ anthropic_betas: betas }),
    });
    expect(created.anthropic_betas).toEqual(betas);
    expect((await get(created.id)).anthropic_betas).toEqual(betas);
    expect((await snapshotOf(created.id))?.anthropic_betas).toEqual(betas);
  });

  it("is kept by a PUT that omits it, replaced by one that sends it, and cleared by null", async () => {
    const created = await request(api, ControlPlane.providersCreate, {
      caller,
      body: makeProviderBody({ anthropic_betas: betas }),
    });
    const renamed = await update(created.id, {});
    expect(renamed.name).toBe("renamed");
    expect(renamed.anthropic_betas).toEqual(betas);

    expect(
      (await update(created.id, { anthropic_betas: ["context-1m-2025-08-07"] })).anthropic_betas,
    ).toEqual(["context-1m-2025-08-07"]);
    // An empty list is a list: no beta passes.
    expect((await update(created.id, { anthropic_betas: [] })).anthropic_betas).toEqual([]);

    const cleared = await update(created.id, { anthropic_betas: null });
    expect(cleared).not.toHaveProperty("anthropic_betas");
    expect(await get(created.id)).not.toHaveProperty("anthropic_betas");
    expect(await snapshotOf(created.id)).not.toHaveProperty("anthropic_betas");
  });

  it("is absent when created without one: the catalog's list applies", async () => {
    const created = await request(api, ControlPlane.providersCreate, { caller, body: makeProviderBody() });
    expect(created).not.toHaveProperty("anthropic_betas");
    expect(await get(created.id)).not.toHaveProperty("anthropic_betas");
  });

  it("refuses a value that is not a header token, naming it", async () => {
    const created = await request(api, ControlPlane.providersCreate, { caller, body: makeProviderBody() });
    const error = await update(created.id, { anthropic_betas: ["ok-beta", "a,b"] }).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).status).toBe(400);
    expect(JSON.stringify((error as AppError).details)).toContain("anthropic_betas.1");
  });
});
