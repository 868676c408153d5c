import { createLogger } from "@agentnet/service-kit";
import { connectTestBus } from "@agentnet/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApi } from "../testing";

interface Operation {
  operationId: string;
  tags?: string[];
  summary?: string;
  parameters: { name: string; in: string; schema?: unknown }[];
  requestBody?: { content: { "application/json": { schema: { properties?: Record<string, unknown> } } } };
  responses: Record<string, unknown>;
}

describe("the OpenAPI document", () => {
  let api: Awaited<ReturnType<typeof startTestApi>>;
  let stopBus: () => Promise<void>;
  beforeAll(async () => {
    const nc = await connectTestBus("api-gateway");
    stopBus = () => nc.drain();
    api = await startTestApi({ nc, logger: createLogger("test", "silent") });
  });
  afterAll(async () => {
    await api.stop();
    await stopBus();
  });

  it("is served without a token, as OpenAPI 3.1 generated from the routes and their contracts", async () => {
    const response = await fetch(`${api.url}/api/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as {
      openapi: string;
      paths: Record<string, Record<string, Operation>>;
    };
    expect(document.openapi).toBe("3.1.0");
    expect(Object.keys(document.paths).length).toBeGreaterThan(20);

    const createProvider = document.paths["/api/agent-network/providers"]?.post;
    expect(createProvider?.operationId).toBe("providers.create");
    expect(
      Object.keys(createProvider?.requestBody?.content["application/json"].schema.properties ?? {}),
    ).toEqual(expect.arrayContaining(["provider_id", "name", "upstream_url", "api_key"]));
    const createPolicy = document.paths["/api/agent-network/policies"]?.post;
    expect(createPolicy?.requestBody?.content["application/json"].schema.properties?.routing).toMatchObject({
      properties: {
        strategy: { default: "priority", enum: ["priority", "weighted", "least_busy"] },
        weights: { type: "object", additionalProperties: { type: "integer", minimum: 0 } },
        max_attempts: { default: 3 },
      },
    });
    const getUser = document.paths["/api/users/{userId}"]?.get;
    expect(getUser?.parameters).toEqual([expect.objectContaining({ name: "userId", in: "path" })]);
    const logs = document.paths["/api/agent-network/access-logs"]?.get;
    expect(logs?.parameters.map((parameter) => parameter.name)).toEqual(
      expect.arrayContaining(["page", "page_size"]),
    );
    expect(logs?.responses["200"]).toBeDefined();
    expect(logs?.responses["401"]).toBeDefined();
    const entry = document.paths["/api/agent-network/access-logs/{logId}"]?.get;
    expect(entry?.responses["200"]).toMatchObject({
      content: {
        "application/json": {
          schema: {
            properties: { attempts: { type: "array", maxItems: 5, items: { required: expect.any(Array) } } },
          },
        },
      },
    });
    expect(logs?.parameters.find((parameter) => parameter.name === "sort_order")?.schema).toMatchObject({
      enum: ["ascending", "descending"],
    });
  });

  it("describes the sign-in and device-flow routes the gateway serves itself, from their contracts", async () => {
    const document = (await (await fetch(`${api.url}/api/openapi.json`)).json()) as {
      paths: Record<string, Record<string, Operation & { security?: unknown[]; "x-access": string }>>;
    };
    const deviceCode = document.paths["/api/auth/device/code"]?.post;
    expect(deviceCode).toMatchObject({ operationId: "agent_credentials.device_code", security: [] });
    expect(Object.keys(deviceCode?.requestBody?.content["application/json"].schema.properties ?? {})).toEqual(
      ["client_name"],
    );
    expect(deviceCode?.responses.default).toMatchObject({
      content: { "application/json": { schema: { required: expect.arrayContaining(["error"]) } } },
    });
    expect(document.paths["/api/auth/oidc/start"]?.get?.parameters.map((p) => p.name)).toEqual([
      "email",
      "account_id",
    ]);
    expect(document.paths["/api/auth/oidc/callback"]?.get?.responses).toHaveProperty("303");
    const session = document.paths["/api/auth/session"]?.get;
    expect(session?.security).toEqual([{ token: [] }, { session: [] }]);
    expect(session?.responses["200"]).toMatchObject({
      content: { "application/json": { schema: { properties: { csrf_token: { type: "string" } } } } },
    });
    expect(document.paths["/api/agent-credentials/device"]?.get?.operationId).toBe(
      "agent_credentials.device_preview",
    );
  });

  it("groups every operation under a tag and says what it does in a summary", async () => {
    const document = (await (await fetch(`${api.url}/api/openapi.json`)).json()) as {
      paths: Record<string, Record<string, Operation>>;
    };
    const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods));
    for (const operation of operations) {
      expect(operation.tags?.length, operation.operationId).toBe(1);
      expect(operation.summary, operation.operationId).toMatch(/\w/);
    }
    expect(document.paths["/api/agent-network/budget-rules/{ruleId}"]?.delete).toMatchObject({
      tags: ["Budget rules"],
      summary: "Delete a budget rule",
    });
    expect(document.paths["/api/users/{userId}/tokens"]?.post?.tags).toEqual(["Users"]);
  });
});
