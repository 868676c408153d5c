import { connectTestMongo, uniqueId } from "@agentnet/testkit";
import type { Connection, Model } from "mongoose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentCredentialModels, createAgentCredentialModels } from "../store/agent-credential-models";
import { createSignInModels, type SignInModels } from "../store/sign-in-models";
import { dropExpiredSignIns } from "./expiry";

let connection: Connection;
let models: SignInModels & AgentCredentialModels;
beforeAll(async () => {
  connection = await connectTestMongo();
  models = { ...(await createSignInModels(connection)), ...(await createAgentCredentialModels(connection)) };
});
afterAll(async () => {
  await connection.close();
});

describe("dropping expired sign-in state", () => {
  it("drops expired attempts, device codes, sessions, agent credentials and proxy tokens, and keeps live ones", async () => {
    const owner = { account_id: uniqueId("acc"), user_id: uniqueId("usr") };
    const now = new Date();
    /** What was stored: an expired and a live document of each collection. */
    const created: { count(id: string): Promise<number>; expired: string; live: string }[] = [];
    const both = async <T extends { _id: string }>(
      model: Model<T>,
      fields: (expires_at: Date) => Omit<T, "_id">,
    ) => {
      const [expired, live] = [uniqueId("expired"), uniqueId("live")];
      await model.create({ _id: expired, ...fields(new Date(now.getTime() - 60_000)) });
      await model.create({ _id: live, ...fields(new Date(now.getTime() + 600_000)) });
      created.push({ count: (id) => model.countDocuments({ _id: id }), expired, live });
    };
    await both(models.SignInAttempt, (expires_at) => ({
      account_id: owner.account_id,
      code_verifier: "v",
      nonce: "n",
      redirect_uri: "https://agentnet.example/api/auth/oidc/callback",
      expires_at,
    }));
    await both(models.DeviceAuthorization, (expires_at) => ({
      user_code: uniqueId("code"),
      status: "pending" as const,
      expires_at,
    }));
    await both(models.Session, (expires_at) => ({
      ...owner,
      hash: uniqueId("h"),
      created_at: now,
      expires_at,
    }));
    await both(models.AgentCredential, (expires_at) => ({
      ...owner,
      refresh_hash: uniqueId("h"),
      previous_hashes: [],
      created_at: now,
      expires_at,
    }));
    await both(models.AgentAccessToken, (expires_at) => ({
      ...owner,
      credential_id: "c",
      hash: uniqueId("h"),
      expires_at,
    }));

    expect(await dropExpiredSignIns(models, now)).toBeGreaterThanOrEqual(created.length);
    for (const { count, expired, live } of created) {
      expect(await count(expired)).toBe(0);
      expect(await count(live)).toBe(1);
    }
  });
});
